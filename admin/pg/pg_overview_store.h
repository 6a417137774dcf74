#pragma once

// OverviewStore (admin/model/stores.h) over PostgreSQL: admin_node and job_lock for the nodes,
// job_registry for registrations, and for the dashboard job_run_report (the finished runs,
// kept by the trigger of sql/0005_run_report.sql; docs/run-report.md) plus the small partial
// indexes of job_log (sending, triggered, pending, failed). No statement reads job_log beyond
// those indexes, so the dashboard's cost does not grow with the run history.
//
// Every statement has two prepared forms, for all groups and for a scope (`= ANY ($n)`), so
// neither is planned for the other's case. Thread-safe: each call takes a pooled connection.

#include <pqxx/pqxx>

#include "admin/pg/database.h"
#include "admin/model/stores.h"

namespace cronwheel::admin {

class PgOverviewStore final : public OverviewStore {
 public:
  explicit PgOverviewStore(Database& db) : db_(db) {}

  static void prepare(pqxx::connection& connection);

  NodesOverview nodes() override;
  std::vector<std::string> handlers(std::string_view app_name, std::int64_t dead_after_ms) override;
  Page<RegistryEntry> registrations(std::string_view app_name, std::int64_t dead_after_ms,
                                    const PageRequest& page) override;
  Dashboard dashboard(const DashboardQuery& query) override;

 private:
  Database& db_;
};

}  // namespace cronwheel::admin
