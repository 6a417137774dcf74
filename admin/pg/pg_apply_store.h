#pragma once

// ApplyStore (admin/model/apply_store.h) over PostgreSQL. An apply is one transaction that
// holds job_lock's 'apply_lock' row and the rows of the file's groups, of their workflows and of
// their jobs (FOR UPDATE, in that order), then every calendar's (FOR NO KEY UPDATE), from its
// first read to its commit. It writes the workflow tables as PgWorkflowStore does (graph and
// params in admin/model/workflow_json.h's spelling, workflow_job in step with the graph) and the
// calendar tables as PgCalendarStore does (its statements and pieces), without those stores' own
// audit entries: the apply's one entry holds the plan. Statements are prepared on each new
// connection: call PgApplyStore::prepare from the Database's Preparer beside PgStores::prepare,
// PgAlarmStore::prepare and PgCalendarStore::prepare (it uses theirs). Thread-safe.

#include <pqxx/pqxx>

#include "admin/model/apply_store.h"
#include "admin/pg/database.h"
#include "common/util/clock.h"

namespace cronwheel::admin {

class PgApplyStore final : public ApplyStore {
 public:
  // `clock` stamps the changes and the audit entry.
  PgApplyStore(Database& db, common::Clock& clock) : db_(db), clock_(clock) {}

  static void prepare(pqxx::connection& connection);

  ApplyOutcome apply(const std::vector<std::string>& app_names, const std::function<ApplyPlan(const JobsSnapshot&)>& plan,
                     bool dry_run, const Actor& actor) override;
  JobsSnapshot snapshot(const std::vector<std::string>& app_names) override;

 private:
  Database& db_;
  common::Clock& clock_;
};

}  // namespace cronwheel::admin
