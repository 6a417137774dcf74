#include "admin/server/schema_setup.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include <pqxx/connection>
#include <spdlog/spdlog.h>

#include "admin/pg/connection_string.h"
#include "admin/pg/migrator.h"

namespace cronwheel::admin {
namespace {

pqxx::connection connect_with_retry(const std::string& url, int wait_seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(wait_seconds);
  auto backoff = std::chrono::milliseconds(200);
  for (;;) {
    try {
      return pqxx::connection(with_connection_parameter(url, "connect_timeout", "5"));
    } catch (const pqxx::broken_connection& e) {
      if (std::chrono::steady_clock::now() + backoff >= deadline) throw;
      spdlog::warn("database not reachable yet, retrying in {} ms: {}", backoff.count(), e.what());
      std::this_thread::sleep_for(backoff);
      backoff = std::min(backoff * 2, std::chrono::milliseconds(5000));
    }
  }
}

}  // namespace

std::optional<std::string> db_url_problem(const std::string& db_url) { return connection_string_problem(db_url); }

void migrate_schema(const AdminConfig& config) {
  auto connection = connect_with_retry(config.db_url, config.db_wait_seconds);
  auto report = Migrator().migrate(connection);
  for (const auto& name : report.applied) spdlog::info("applied migration {}", name);
  spdlog::info("schema at version {}", report.current_version);
}

}  // namespace cronwheel::admin
