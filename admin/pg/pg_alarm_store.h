#pragma once

// AlarmStore (admin/model/alarm_store.h) over PostgreSQL: job_log's alarm_status and
// alarm_time, read through the job_log_alarm index of undecided and claimed runs, and the
// job_alarm row of each job, which a claim holds locked (FOR UPDATE SKIP LOCKED) so that two
// nodes never claim the same job at once. Statements are prepared on each new connection: call
// PgAlarmStore::prepare from the Database's Preparer. Thread-safe.

#include <pqxx/pqxx>

#include "admin/model/alarm_store.h"
#include "admin/pg/database.h"

namespace cronwheel::admin {

class PgAlarmStore final : public AlarmStore {
 public:
  explicit PgAlarmStore(Database& db) : db_(db) {}

  static void prepare(pqxx::connection& connection);

  std::vector<AlarmClaim> claim(const ClaimRequest& request) override;
  int finish(std::int64_t job_id, std::int64_t claimed_at, AlarmOutcome outcome, std::int64_t now) override;

 private:
  Database& db_;
};

}  // namespace cronwheel::admin
