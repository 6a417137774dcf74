#include "admin/server/health_check.h"

#include <pqxx/pqxx>
#include <spdlog/spdlog.h>

#include "admin/pg/connection_string.h"
#include "admin/pg/migrator.h"

namespace cronwheel::admin {

namespace {
constexpr int kConnectTimeoutSeconds = 3;
constexpr int kStatementTimeoutMs = 2000;
}  // namespace

HealthCheck::HealthCheck(std::string db_url, std::string node_id, std::string version)
    : db_url_(with_connection_parameter(db_url, "connect_timeout", std::to_string(kConnectTimeoutSeconds))),
      node_id_(std::move(node_id)),
      version_(std::move(version)) {}

HealthCheck::~HealthCheck() = default;

HealthCheck::Result HealthCheck::check() {
  std::lock_guard lock(mutex_);
  nlohmann::json body{{"node", node_id_}, {"version", version_}};
  try {
    if (!connection_ || !connection_->is_open()) {
      connection_ = std::make_unique<pqxx::connection>(db_url_);
      pqxx::nontransaction tx(*connection_);
      tx.exec("SET statement_timeout = " + std::to_string(kStatementTimeoutMs));
    }
    body["schemaVersion"] = Migrator::current_version(*connection_);
    body["status"] = "ok";
    if (reachable_ == false) spdlog::info("health check: the database is reachable again");
    reachable_ = true;
    return {true, body};
  } catch (const std::exception& e) {
    connection_.reset();
    std::string reason = e.what();
    // libpq's messages span lines; a log entry is one line.
    for (char& c : reason) c = (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
    while (!reason.empty() && reason.back() == ' ') reason.pop_back();
    if (reachable_ != false) {
      spdlog::warn("health check: the database is unavailable: {}", reason);
    } else {
      spdlog::debug("health check: the database is still unavailable: {}", reason);
    }
    reachable_ = false;
    body["status"] = "unavailable";
    body["error"] = "database unavailable";
    return {false, body};
  }
}

}  // namespace cronwheel::admin
