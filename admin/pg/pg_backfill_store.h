#pragma once

// BackfillStore (admin/model/backfill_store.h) over PostgreSQL (sql/0022_backfill.sql,
// sql/0024_workflow_backfill.sql).
//
// - A step locks the backfill's row with SELECT ... FOR NO KEY UPDATE SKIP LOCKED: another node
//   stepping it at the same moment skips it rather than wait, and the lock is not one that the
//   runs' foreign key (FOR KEY SHARE, taken by every run row written with the backfill's id, a
//   retry's too) waits for. It then takes a transaction-level advisory lock named after the
//   job, so the steps of one job's backfills follow one another and each reads the runs the
//   one before committed. Nothing else takes that advisory lock, and every path takes the row
//   lock first, so the two cannot deadlock.
// - A step takes its job's or workflow's row FOR KEY SHARE before any of that (the lock its runs'
//   foreign key takes anyway): deleting a job or workflow locks its row and then deletes its
//   backfills, so the other order would deadlock with it. A workflow's backfill then takes an
//   advisory lock per workflow, as per job; its runs are written by PgWorkflowStore's
//   write_backfill_runs (in the step's transaction, locks as every run creation takes them).
// - The runs a step writes are one INSERT ... SELECT from the job's row (its group, handler,
//   parameter and retry count as they are in the step's transaction), ON CONFLICT on
//   job_log_active_backfill_fire DO NOTHING and leaving out an instant the history holds a run
//   of (job_log_backfill): an instant the backfill has a run at already is not written twice,
//   whatever a caller asks.
// - Unfinished runs are counted through the partial index job_log_active_backfill (at most
//   max_concurrent rows, and retries), instants with a run through job_log_job_time.
// - Lists page by offset, newest first, the total exact: backfills are few.
//
// Statements are prepared on each new connection: call PgBackfillStore::prepare from the
// Database's Preparer, after PgStores::prepare (it uses the audit's). Thread-safe.

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include <pqxx/pqxx>

#include "admin/model/backfill_store.h"
#include "admin/pg/database.h"
#include "common/util/clock.h"

namespace cronwheel::admin {

class PgBackfillStore final : public BackfillStore {
 public:
  // `clock` stamps creations and their audit entries.
  PgBackfillStore(Database& db, common::Clock& clock) : db_(db), clock_(clock) {}

  static void prepare(pqxx::connection& connection);

  Page<Backfill> list(const Filter& filter) override;
  std::optional<Backfill> get(std::int64_t id) override;
  BackfillRuns runs(std::int64_t id) override;
  std::vector<std::int64_t> existing(std::int64_t job_id, const std::vector<std::int64_t>& instants) override;
  std::vector<std::int64_t> existing_workflow_runs(std::int64_t workflow_id,
                                                   const std::vector<std::int64_t>& instants) override;
  std::vector<Backfill> running(int limit) override;
  Backfill create(const Backfill& backfill, const Actor& actor) override;
  StepResult step(std::int64_t id, std::string_view node, std::int64_t now, const Decide& decide) override;
  std::optional<Cancelled> cancel(std::int64_t id, std::int64_t now, const Actor& actor,
                                  const FollowUpPlanner& plan) override;

 private:
  Database& db_;
  common::Clock& clock_;
};

}  // namespace cronwheel::admin
