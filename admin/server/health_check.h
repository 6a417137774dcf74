#pragma once

#include <memory>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>
#include <pqxx/connection>

namespace cronwheel::admin {

// Answers GET /healthz: whether this node can reach its database, and what schema it has.
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

  void set_node_id(std::string node_id);

 private:
  std::string db_url_;
  std::string node_id_;
  std::string version_;
  std::mutex mutex_;
  std::unique_ptr<pqxx::connection> connection_;
};

}  // namespace cronwheel::admin
