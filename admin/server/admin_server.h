#pragma once

#include <memory>
#include <string>

#include "admin/admin_config.h"
#include "admin/server/health_check.h"
#include "common/http/http_server.h"

namespace cronwheel::admin {

// The admin node's HTTP face: health now; the REST API, the executor-facing endpoints and the
// console are added to the same server.
//
// start() binds config.listen and returns once it accepts connections; stop() is idempotent
// and waits for requests in progress.
class AdminServer {
 public:
  AdminServer(const AdminConfig& config, std::string version);
  ~AdminServer();

  void start();
  void stop() noexcept;

  const std::string& host() const noexcept { return host_; }
  int port() const noexcept;
  // config.node_id, or <hostname>:<port> (the bound port, once started).
  const std::string& node_id() const noexcept { return node_id_; }

 private:
  void add_routes();

  AdminConfig config_;
  std::string version_;
  std::string host_;
  std::string node_id_;
  common::http::HttpServer http_;
  std::unique_ptr<HealthCheck> health_;
};

// Splits "host:port" (IPv4 or name; "[v6]:port" too). Throws std::invalid_argument naming
// the value on anything else.
std::pair<std::string, int> parse_listen_address(const std::string& listen);

}  // namespace cronwheel::admin
