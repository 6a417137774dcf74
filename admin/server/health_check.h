#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>
#include <pqxx/connection>

namespace cronwheel::admin {

// Answers GET /healthz: whether this node can reach its database, and what schema it has.
//
//   healthy:   {"node","version","status":"ok","schemaVersion"}
//   unhealthy: {"node","version","status":"unavailable","error":"database unavailable"}
//
// Anyone may ask, so the answer never carries the database's own error text (libpq's messages
// name hosts, ports, users and databases). That detail goes to the log instead, once per change
// of state: the first failed probe logs a warning with it, the first probe that succeeds again
// logs the recovery, and the probes in between (a load balancer asks every second or so) log
// nothing above debug level.
//
// Holds one connection of its own (re-opened after a failure) so a health probe never waits
// behind scheduling work for a connection. Thread-safe: concurrent probes take turns.
class HealthCheck {
 public:
  HealthCheck(std::string db_url, std::string node_id, std::string version);
  ~HealthCheck();

  struct Result {
    bool healthy;
    nlohmann::json body;
  };
  Result check();

 private:
  std::string db_url_;
  const std::string node_id_;
  const std::string version_;
  std::mutex mutex_;
  std::unique_ptr<pqxx::connection> connection_;
  std::optional<bool> reachable_;  // what the last probe found; none before the first one
};

}  // namespace cronwheel::admin
