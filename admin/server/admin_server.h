#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "admin/admin_config.h"
#include "admin/api/rest_api.h"
#include "admin/server/health_check.h"
#include "admin/store/database.h"
#include "admin/store/pg_stores.h"
#include "common/http/http_server.h"

namespace cronwheel::admin {

// The admin node: its database pool and stores, and its HTTP face: /healthz and the REST API
// under /api/v1 (the executor-facing endpoints and the console join the same server).
//
// Construction registers the routes but touches neither the network nor the database.
// start() creates the first admin user when there is none (the schema must be migrated by
// then), binds config.listen and returns once it accepts connections; stop() is idempotent and
// waits for requests in progress.
class AdminServer {
 public:
  AdminServer(const AdminConfig& config, std::string version);
  ~AdminServer();

  AdminServer(const AdminServer&) = delete;
  AdminServer& operator=(const AdminServer&) = delete;

  void start();
  void stop() noexcept;

  const std::string& host() const noexcept { return host_; }
  int port() const noexcept;
  // config.node_id, or <hostname>:<port> (the bound port, once started). For the thread that
  // calls start().
  const std::string& node_id() const noexcept { return node_id_; }

 private:
  void add_routes();

  // Declared in dependency order: members are destroyed in reverse, after stop() has waited
  // for every handler, so nothing a handler uses goes away under it.
  AdminConfig config_;
  std::string version_;
  std::string host_;
  mutable std::mutex node_id_mutex_;  // start() writes node_id_ while handlers may read it
  std::string node_id_;
  Database database_;
  PgStores stores_;
  common::http::HttpServer http_;
  std::unique_ptr<HealthCheck> health_;
  std::unique_ptr<RestApi> api_;
};

// Splits "host:port" (IPv4 or name; "[v6]:port" too). Throws std::invalid_argument naming
// the value on anything else.
std::pair<std::string, int> parse_listen_address(const std::string& listen);

}  // namespace cronwheel::admin
