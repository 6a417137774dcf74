#include "admin/pg/pg_completion_store.h"

#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "admin/model/fire.h"
#include "admin/pg/pg_follow_ups.h"
#include "admin/pg/pg_guard.h"
#include "admin/pg/pg_store_support.h"

namespace cronwheel::admin {

using namespace pg;

namespace {

// The run `alias` has no registration of its executor made within the last $n ms (database
// clock).
// Addresses are compared without trailing slashes: a hand-entered "http://host:9999" is the
// executor that registers "http://host:9999/".
std::string executor_gone(const std::string& param, const std::string& alias = "l") {
  return "NOT EXISTS (SELECT 1 FROM job_registry r WHERE r.registry_group = 'EXECUTOR'"
         " AND rtrim(r.registry_value, '/') = rtrim(" + alias + ".executor_address, '/')"
         " AND r.updated_at > now() - " + param + "::bigint * interval '1 millisecond')";
}

}  // namespace

void PgCompletionStore::prepare(pqxx::connection& c) {
  prepare_follow_ups(c);
  // A result finds its run by id alone; the guards compare with `guard` (pg_guard.h).
  c.prepare("completion_finish",
            end_runs(guard_cte("$1::bigint AS run_id, '{triggered,sending}'::text[] AS running"),
                     "USING guard WHERE a.id = guard.run_id AND a.state = ANY (guard.running)", "",
                     {{"state", "$2::text"},
                      {"handle_time", ts("$3")},
                      {"handle_code", "$4::integer"},
                      {"handle_msg", "$5::text"},
                      {"output", "$6::text"}}));
  // An operator's kill of a run its executor gave back before its instant: cancelled, no alarm.
  c.prepare("completion_cancel_killed",
            end_runs(guard_cte("$1::bigint AS run_id, '{triggered,sending}'::text[] AS running"),
                     "USING guard WHERE a.id = guard.run_id AND a.state = ANY (guard.running)", "",
                     {{"state", "'cancelled'"},
                      {"alarm_status", "1"},
                      {"handle_time", ts("$2")},
                      {"handle_code", "$3::integer"},
                      {"handle_msg", "$4::text"}}));
  const std::map<std::string, std::string> lost{
      {"state", "'lost'"}, {"handle_time", ts("$2")}, {"handle_code", "$3::integer"}, {"handle_msg", "$4::text"}};
  c.prepare("completion_lose",
            end_runs(guard_cte("$1::bigint AS run_id, 'triggered'::text AS run_state"),
                     "USING guard WHERE a.id = guard.run_id AND a.state = guard.run_state AND a.trigger_time <= " +
                         ts("$5") + " AND " + executor_gone("$6", "a"),
                     "", lost));
  // The executor, asked, has no trace of the run: its registration does not matter.
  c.prepare("completion_lose_forgotten",
            end_runs(guard_cte("$1::bigint AS run_id, 'triggered'::text AS run_state"),
                     "USING guard WHERE a.id = guard.run_id AND a.state = guard.run_state AND a.trigger_time <= " +
                         ts("$5"),
                     "", lost));
  c.prepare("completion_run", "SELECT " + kLogColumns + " FROM job_log WHERE id = $1");
  c.prepare("completion_held", "SELECT " + kLogColumns + " FROM job_log_active WHERE job_id = $1 AND " +
                                 held_run_condition("$2") + " ORDER BY id LIMIT $3");
  c.prepare("completion_not_started",
            "WITH " + guard_cte("$1::bigint AS run_id, '{triggered,sending}'::text[] AS running, $2::text AS owner") +
                " UPDATE job_log_active SET state = 'pending', admin_node = guard.owner, trigger_time = NULL,"
                " trigger_code = 0, trigger_msg = " + appended_trigger_msg("$3") +
                " FROM guard WHERE id = guard.run_id AND state = ANY (guard.running) RETURNING id");
  c.prepare("completion_cancel_not_started",
            end_runs(guard_cte("$1::bigint AS run_id, '{triggered,sending}'::text[] AS running"),
                     "USING guard WHERE a.id = guard.run_id AND a.state = ANY (guard.running)", "",
                     {{"state", "'cancelled'"}, {"alarm_status", "1"}, {"trigger_msg", appended_trigger_msg("$2")}}));
  // Results of many runs ($1, with their states, times, codes and messages), one statement.
  c.prepare("completion_finish_all",
            end_runs(guard_cte("'{triggered,sending}'::text[] AS running, $1::bigint[] AS ids, $2::text[] AS states,"
                               " $3::bigint[] AS times, $4::integer[] AS codes, $5::text[] AS messages,"
                               " $6::text[] AS outputs, $7::boolean[] AS has_outputs") + ", " +
                         batch_values_cte("result", "r", "unnest(guard.ids, guard.states, guard.times, guard.codes,"
                                          " guard.messages, guard.outputs, guard.has_outputs)"
                                          " AS r(run_id, new_state, at_ms, code, msg, out_text, has_out)"),
                     "USING guard, result WHERE a.id = result.run_id AND a.state = ANY (guard.running)",
                     "JOIN result ON result.run_id = ended.id",
                     {{"state", "result.new_state"},
                      {"handle_time", ts("result.at_ms")},
                      {"handle_code", "result.code"},
                      {"handle_msg", "result.msg"},
                      {"output", "CASE WHEN result.has_out THEN result.out_text END"}}));
  c.prepare("completion_runs", "WITH " + guard_cte("$1::bigint[] AS run_ids") + " SELECT " + kLogColumns +
                                  " FROM job_log, guard WHERE id = ANY (guard.run_ids)");
  c.prepare("completion_lost_candidates",
            "SELECT " + kLogColumns + " FROM job_log_active l WHERE l.state = 'triggered' AND l.trigger_time <= " +
                ts("$1") + " AND " + executor_gone("$2") + " ORDER BY l.trigger_time, l.id LIMIT $3");
  // By executor, then time. No index holds this order or the triggered runs alone (a run's state
  // changes in flight are HOT: sql/0030_active_runs_hot.sql): once a minute, the runs in flight
  // are read whole and the page's rows sorted. $2: from the first; else after ($3, $4, $5).
  c.prepare("completion_triggered_runs",
            "SELECT " + kLogColumns + " FROM job_log_active l WHERE l.state = 'triggered' AND l.trigger_time <= " +
                ts("$1") + " AND ($2::boolean OR (l.executor_address, l.trigger_time, l.id) > ($3::text, " + ts("$4") +
                ", $5::bigint)) ORDER BY l.executor_address, l.trigger_time, l.id LIMIT $6");
}

CompletionStore::Recorded PgCompletionStore::record(const RunResult& result, const Decide& decide) {
  const bool lost = result.state == FireState::kLost;
  return db_.transact([&](pqxx::work& tx) {
    Recorded out;
    auto moved = result.state == FireState::kCancelled
                     ? tx.exec_prepared("completion_cancel_killed", result.log_id, result.handle_time,
                                        result.handle_code, result.handle_msg)
                 : lost && result.lost_forgotten
                     ? tx.exec_prepared("completion_lose_forgotten", result.log_id, result.handle_time,
                                        result.handle_code, result.handle_msg, result.lost_triggered_before)
                 : lost ? tx.exec_prepared("completion_lose", result.log_id, result.handle_time, result.handle_code,
                                         result.handle_msg, result.lost_triggered_before, result.lost_dead_after_ms)
                      : tx.exec_prepared("completion_finish", result.log_id, text(result.state), result.handle_time,
                                         result.handle_code, result.handle_msg, result.output);
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

std::vector<CompletionStore::Recorded> PgCompletionStore::record_all(const std::vector<RunResult>& results,
                                                                    const Decide& decide) {
  // A run named twice in one batch moves by its first result only; the others find it final.
  // The rows are locked in id order, as every batch statement locks them (pg_trigger_store.cpp).
  std::vector<std::int64_t> ids, times;
  std::vector<std::string> states, codes, messages, outputs;
  std::string has_outputs = "{";
  std::map<std::int64_t, const RunResult*> first;
  for (const auto& r : results) {
    if (r.state != FireState::kSucceeded && r.state != FireState::kFailed) {
      throw std::invalid_argument("record_all takes executors' results (succeeded, failed), not " + text(r.state));
    }
    first.emplace(r.log_id, &r);
  }
  for (const auto& [id, result] : first) {
    const RunResult& r = *result;
    ids.push_back(r.log_id);
    states.push_back(text(r.state));
    times.push_back(r.handle_time);
    codes.push_back(std::to_string(r.handle_code));
    messages.push_back(r.handle_msg);
    outputs.push_back(r.output.value_or(""));
    has_outputs += std::string(has_outputs.size() > 1 ? "," : "") + (r.output ? "t" : "f");
  }
  has_outputs += "}";
  if (results.empty()) return {};
  return db_.transact([&](pqxx::work& tx) {
    std::vector<Recorded> out(results.size());
    std::vector<JobLog> moved = all_of<JobLog>(
        tx.exec_prepared("completion_finish_all", bigint_array(ids), text_array(states), bigint_array(times),
                         text_array(codes), text_array(messages), text_array(outputs), has_outputs),
        log_from);
    auto written = write_follow_ups(tx, moved, decide);
    std::map<std::int64_t, std::size_t> moved_at;
    for (std::size_t i = 0; i < moved.size(); ++i) moved_at[moved[i].id] = i;
    std::map<std::int64_t, JobLog> as_now;
    if (moved.size() < results.size()) {
      for (auto& run : all_of<JobLog>(tx.exec_prepared("completion_runs", bigint_array(ids)), log_from)) {
        as_now[run.id] = std::move(run);
      }
    }
    for (std::size_t i = 0; i < results.size(); ++i) {
      Recorded& r = out[i];
      auto m = moved_at.find(results[i].log_id);
      if (m != moved_at.end()) {
        r.status = Status::kRecorded;
        r.run = moved[m->second];
        r.fires = std::move(written[m->second].fires);
        r.next_time_set = written[m->second].next_time_set;
        moved_at.erase(m);  // a later result for the run finds it final
        continue;
      }
      auto now = as_now.find(results[i].log_id);
      if (now == as_now.end()) continue;  // kUnknownLog
      r.run = now->second;
      r.status = is_finished(now->second.state) ? Status::kAlreadyFinal : Status::kNotRunning;
    }
    return out;
  });
}

std::vector<JobLog> PgCompletionStore::held_runs(std::int64_t job_id, std::int64_t now, int limit) {
  return db_.transact([&](pqxx::work& tx) {
    std::vector<JobLog> out;
    for (const auto& r : tx.exec_prepared("completion_held", job_id, now, limit)) out.push_back(log_from(r));
    return out;
  });
}

bool PgCompletionStore::return_not_started(std::int64_t log_id, const std::string& node_id, const std::string& note) {
  return db_.transact([&](pqxx::work& tx) {
    return !tx.exec_prepared("completion_not_started", log_id, node_id, note).empty();
  });
}

bool PgCompletionStore::cancel_not_started(std::int64_t log_id, const std::string& note) {
  return db_.transact([&](pqxx::work& tx) {
    return !tx.exec_prepared("completion_cancel_not_started", log_id, note).empty();
  });
}

std::vector<JobLog> PgCompletionStore::lost_candidates(std::int64_t triggered_before, std::int64_t dead_after_ms,
                                                       int limit) {
  return db_.read([&](pqxx::read_transaction& tx) {
    return all_of<JobLog>(tx.exec_prepared("completion_lost_candidates", triggered_before, dead_after_ms, limit),
                          log_from);
  });
}

std::vector<JobLog> PgCompletionStore::triggered_runs(std::int64_t triggered_before,
                                                      const std::optional<RunCursor>& after, int limit) {
  return db_.read([&](pqxx::read_transaction& tx) {
    const RunCursor from = after.value_or(RunCursor{});
    return all_of<JobLog>(tx.exec_prepared("completion_triggered_runs", triggered_before, !after.has_value(),
                                           from.executor_address, from.trigger_time, from.id, limit),
                          log_from);
  });
}

}  // namespace cronwheel::admin
