#include "admin/pg/pg_completion_store.h"

#include <string>

#include "admin/model/fire.h"
#include "admin/pg/pg_follow_ups.h"
#include "admin/pg/pg_guard.h"
#include "admin/pg/pg_store_support.h"

namespace cronwheel::admin {

using namespace pg;

namespace {

// The run `l` has no registration of its executor made within the last $n ms (database clock).
// Addresses are compared without trailing slashes: a hand-entered "http://host:9999" is the
// executor that registers "http://host:9999/".
std::string executor_gone(const std::string& param) {
  return "NOT EXISTS (SELECT 1 FROM job_registry r WHERE r.registry_group = 'EXECUTOR'"
         " AND rtrim(r.registry_value, '/') = rtrim(l.executor_address, '/')"
         " AND r.updated_at > now() - " + param + "::bigint * interval '1 millisecond')";
}

}  // namespace

void PgCompletionStore::prepare(pqxx::connection& c) {
  prepare_follow_ups(c);
  // A result finds its run by id alone; the guards compare with `guard` (pg_guard.h).
  c.prepare("completion_finish",
            "WITH " + guard_cte("$1::bigint AS run_id, '{triggered,sending}'::text[] AS running") +
                " UPDATE job_log SET state = $2, handle_time = " + ts("$3") + ", handle_code = $4, handle_msg = $5"
                " FROM guard WHERE id = guard.run_id AND state = ANY (guard.running) RETURNING " + kLogColumns);
  c.prepare("completion_lose",
            "WITH " + guard_cte("$1::bigint AS run_id, 'triggered'::text AS run_state") +
                " UPDATE job_log l SET state = 'lost', handle_time = " + ts("$2") + ", handle_code = $3, handle_msg = $4"
                " FROM guard WHERE l.id = guard.run_id AND l.state = guard.run_state AND l.trigger_time <= " + ts("$5") +
                " AND " + executor_gone("$6") + " RETURNING " + kLogColumns);
  c.prepare("completion_run", "SELECT " + kLogColumns + " FROM job_log WHERE id = $1");
  c.prepare("completion_lost_candidates",
            "SELECT " + kLogColumns + " FROM job_log l WHERE l.state = 'triggered' AND l.trigger_time <= " + ts("$1") +
                " AND " + executor_gone("$2") + " ORDER BY l.trigger_time, l.id LIMIT $3");
}

CompletionStore::Recorded PgCompletionStore::record(const RunResult& result, const Decide& decide) {
  const bool lost = result.state == FireState::kLost;
  return db_.transact([&](pqxx::work& tx) {
    Recorded out;
    auto moved = lost ? tx.exec_prepared("completion_lose", result.log_id, result.handle_time, result.handle_code,
                                         result.handle_msg, result.lost_triggered_before, result.lost_dead_after_ms)
                      : tx.exec_prepared("completion_finish", result.log_id, text(result.state), result.handle_time,
                                         result.handle_code, result.handle_msg);
    if (moved.empty()) {
      out.run = first_of<JobLog>(tx.exec_prepared("completion_run", result.log_id), log_from);
      out.status = !out.run                 ? Status::kUnknownLog
                   : is_finished(out.run->state) ? Status::kAlreadyFinal
                                              : Status::kNotRunning;
      return out;
    }
    out.status = Status::kRecorded;
    out.run = log_from(moved[0]);
    auto written = write_follow_ups(tx, *out.run, decide);
    out.fires = std::move(written.fires);
    out.next_time_set = written.next_time_set;
    return out;
  });
}

std::vector<JobLog> PgCompletionStore::lost_candidates(std::int64_t triggered_before, std::int64_t dead_after_ms,
                                                       int limit) {
  return db_.read([&](pqxx::read_transaction& tx) {
    return all_of<JobLog>(tx.exec_prepared("completion_lost_candidates", triggered_before, dead_after_ms, limit),
                          log_from);
  });
}

}  // namespace cronwheel::admin
