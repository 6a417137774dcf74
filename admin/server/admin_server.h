#pragma once

#include <memory>
#include <string>
#include <utility>

#include "admin/admin_config.h"

namespace cronwheel::admin {

// The admin node: its database pool and stores, and its HTTP face: /healthz, /metrics, the REST
// API under /api/v1, the executor-facing endpoints, and the web console's files at every other
// path (console_files.h).
//
// Construction registers the routes but touches neither the network nor the database.
// start() creates the first admin user when there is none (the schema must be migrated by
// then), binds config.listen, then starts the scheduling core (admin/scheduler/scheduler.h)
// and returns once it accepts connections and schedules. stop() is idempotent: it stops the
// scheduling core cleanly (its pending fires go to the other nodes), then waits for requests
// in progress.
class AdminServer {
 public:
  AdminServer(const AdminConfig& config, std::string version);
  ~AdminServer();

  AdminServer(const AdminServer&) = delete;
  AdminServer& operator=(const AdminServer&) = delete;

  void start();
  void stop() noexcept;

  const std::string& host() const noexcept;
  int port() const noexcept;
  // config.node_id, or <hostname>:<port> (the bound port, once started). For the thread that
  // calls start().
  const std::string& node_id() const noexcept;

 private:
  // The node's parts (database, stores, adapters, rooms, HTTP server), in admin_server.cpp: only
  // the composition root's own file names the adapters.
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// Splits "host:port" (IPv4 or name; "[v6]:port" too). Throws std::invalid_argument naming
// the value on anything else.
std::pair<std::string, int> parse_listen_address(const std::string& listen);

}  // namespace cronwheel::admin
