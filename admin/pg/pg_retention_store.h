#pragma once

// RetentionStore (admin/model/retention_store.h) over PostgreSQL: batches of old job_log rows
// found through job_log_time (scheduled_time, id), locked FOR UPDATE SKIP LOCKED so that nodes
// deleting at once take different rows. Statements are prepared on each new connection: call
// PgRetentionStore::prepare from the Database's Preparer. Thread-safe.

#include <pqxx/pqxx>

#include "admin/model/retention_store.h"
#include "admin/pg/database.h"

namespace cronwheel::admin {

class PgRetentionStore final : public RetentionStore {
 public:
  explicit PgRetentionStore(Database& db) : db_(db) {}

  static void prepare(pqxx::connection& connection);

  std::int64_t delete_runs_before(std::int64_t before, int batch) override;
  std::int64_t delete_workflow_runs_before(std::int64_t before, int batch) override;

 private:
  Database& db_;
};

}  // namespace cronwheel::admin
