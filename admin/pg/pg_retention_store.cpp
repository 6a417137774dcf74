#include "admin/pg/pg_retention_store.h"

namespace cronwheel::admin {

void PgRetentionStore::prepare(pqxx::connection& c) {
  // $1 before, $2 batch. The oldest rows by job_log_time; a run that ended badly keeps its row
  // until its alarm is decided (0007_alarms.sql).
  c.prepare("retention_delete_runs",
            "DELETE FROM job_log_finished WHERE id IN ("
            " SELECT id FROM job_log_finished WHERE scheduled_time < $1"
            " AND state IN ('succeeded', 'failed', 'lost', 'cancelled')"
            " AND NOT (state IN ('failed', 'lost', 'cancelled') AND alarm_status IN (0, -1))"
            " ORDER BY scheduled_time, id LIMIT $2 FOR UPDATE SKIP LOCKED)");
  // A workflow run's nodes go with it (ON DELETE CASCADE).
  c.prepare("retention_delete_workflow_runs",
            "DELETE FROM workflow_run WHERE id IN ("
            " SELECT id FROM workflow_run WHERE scheduled_time < $1"
            " AND state IN ('succeeded', 'failed', 'cancelled', 'skipped', 'timed_out')"
            " AND NOT (state IN ('failed', 'timed_out') AND alarm_status IN (0, -1))"
            " ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED)");
}

std::int64_t PgRetentionStore::delete_workflow_runs_before(std::int64_t before, int batch) {
  return db_.transact([&](pqxx::work& tx) {
    return static_cast<std::int64_t>(tx.exec_prepared("retention_delete_workflow_runs", before, batch).affected_rows());
  });
}

std::int64_t PgRetentionStore::delete_runs_before(std::int64_t before, int batch) {
  return db_.transact([&](pqxx::work& tx) {
    return static_cast<std::int64_t>(tx.exec_prepared("retention_delete_runs", before, batch).affected_rows());
  });
}

}  // namespace cronwheel::admin
