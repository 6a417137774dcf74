#include "admin/pg/pg_schedule_store.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "admin/pg/pg_follow_ups.h"
#include "admin/pg/pg_guard.h"
#include "admin/pg/pg_store_support.h"

namespace cronwheel::admin {

using namespace pg;

namespace {

// The width of job_schedule.due_slot's slots (sql/0031_job_schedule_hot.sql).
constexpr std::int64_t kDueSlotMs = 10'000;

// Appends a line to a fire's trigger_msg (the claim may have written one).
const std::string kAppendMessage = appended_trigger_msg("$3");

PendingFire pending_from(const pqxx::row& r) {
  return {r["id"].as<std::int64_t>(), r["job_id"].as<std::int64_t>(), r["scheduled_time"].as<std::int64_t>()};
}

// The misfire strategy of the job of the run `l`, read by the job's id.
const std::string kMisfireStrategy =
    "(SELECT j.misfire_strategy FROM job_info j WHERE j.id = l.job_id) AS misfire_strategy";

// What a fire's row copies from its job when the scan writes it, read with the job's schedule.
struct RunCopy {
  std::int64_t job_group = 0;
  std::string executor_handler;
  std::string executor_param;
  std::int64_t executor_fail_retry_count = 0;
};

PendingFireRow pending_row_from(const pqxx::row& r) {
  return {pending_from(r), enum_of<TriggerType>(r["trigger_type"]), enum_of<MisfireStrategy>(r["misfire_strategy"])};
}

}  // namespace

void PgScheduleStore::prepare(pqxx::connection& c) {
  prepare_follow_ups(c);
  c.prepare("sched_lock", "SELECT lock_name FROM job_lock WHERE lock_name = 'schedule_lock' FOR UPDATE");
  // Who holds the scan, for the console (OverviewStore::nodes): written on the row this
  // transaction has just locked, so it waits for nothing; the time is the database's.
  c.prepare("sched_mark_scan",
            "UPDATE job_lock SET last_scan_node = $1, last_scan_at = clock_timestamp() WHERE lock_name = 'schedule_lock'");
  // The due jobs: job_schedule_due slot by slot (sql/0031_job_schedule_hot.sql: the index is keyed
  // on the next time's 10 s slot, so an advance within its slot is HOT), each slot's rows sorted by
  // their next time as the walk goes (an incremental sort), stopped at the limit.
  c.prepare("sched_due",
            "SELECT job_id, trigger_last_time, trigger_next_time FROM job_schedule"
            " WHERE trigger_status = 1 AND due_slot <= $1::bigint / " + std::to_string(kDueSlotMs) +
                " AND trigger_next_time <= $1 ORDER BY due_slot, trigger_next_time LIMIT $2");
  // Their schedules, from job_info by its primary key, the ids given through `guard` (pg_guard.h)
  // so that no statistics can make the planner read job_info whole; apart from the due read, as
  // a join of the two could not be planned well for both a few jobs and thousands.
  c.prepare("sched_due_jobs",
            "WITH " + guard_cte("$1::bigint[] AS job_ids") +
                " SELECT id, schedule_type, schedule_conf, timezone, misfire_strategy, calendar_id, calendar_mode,"
                " dst_gap, dst_repeat, priority, job_group, executor_handler, executor_param, executor_fail_retry_count"
                " FROM job_info, guard WHERE id = ANY (guard.job_ids)");
  // When none is due: the next one, among the rows of job_schedule_due's first slot.
  c.prepare("sched_next_due",
            "SELECT min(trigger_next_time) FROM job_schedule WHERE trigger_status = 1"
            " AND due_slot = (SELECT min(due_slot) FROM job_schedule WHERE trigger_status = 1)");
  // The versions of the calendars the jobs read name (a few rows by primary key): the scan
  // decides each job with that version of its calendar or not at all (decide_fires).
  c.prepare("sched_calendar_versions", kCalendarVersions);
  // The scan's writes, two statements in its transaction: the jobs' new times (job_schedule
  // alone: job_info is only read), guarded so that a job stopped, restarted or rescheduled since
  // the pre-read keeps what it has; then the fires of exactly the jobs that were advanced.
  //
  // Both find each row by its primary key alone, whatever the statistics (pg_guard.h): the
  // batch's values and the guard's status come from `guard`. With `trigger_status = 1` written as
  // a literal, the planner could prove that job_schedule_due holds the rows and, without
  // statistics, look each job up by its next time in that index; when thousands of jobs share
  // that time (every job firing each second, a top-of-the-minute cron), each lookup walked all of
  // them: 12,000 jobs took 7.5 s instead of 0.1 s. And written as one statement, the fires joined
  // to the advanced jobs' CTE, which the planner cannot count: taking it for a few rows, it
  // scanned it once per fire (12,000 jobs and 48,000 fires: 27 s). The plan tests
  // (tests/integration/fire_path_plans_pgtest.cpp) hold both.
  c.prepare("sched_advance",
            "WITH " + guard_cte("$1::bigint[] AS ids, $2::bigint[] AS read_nexts, $3::bigint[] AS lasts,"
                                " $4::bigint[] AS nexts, $5::smallint[] AS statuses, 1::smallint AS scheduled") + ", " +
                batch_values_cte("advance", "u", "unnest(guard.ids, guard.read_nexts, guard.lasts, guard.nexts,"
                                                 " guard.statuses) AS u(id, read_next, last, next, status)") +
                " UPDATE job_schedule s SET trigger_last_time = advance.last, trigger_next_time = advance.next,"
                " trigger_status = advance.status FROM guard, advance"
                " WHERE s.job_id = advance.id AND s.trigger_status = guard.scheduled"
                " AND s.trigger_next_time = advance.read_next"
                " RETURNING s.job_id");
  // The fires go into job_log_active, unless that fire is in flight already (its unique index)
  // or has run (the history); the records of skipped fires (cancelled MISFIRE rows) into the
  // history, since they are finished, unless a scheduled fire of that time exists in either.
  // Each row's copy of its job's columns comes with the fire, as the scan read them with the
  // job's schedule: a lookup of the job again for every fire was a fifth of the statement.
  c.prepare("sched_insert_fires",
            "WITH " + guard_cte("$1::bigint[] AS jobs, $2::bigint[] AS times, $3::text[] AS types, $4::text[] AS states,"
                                " $5::text[] AS messages, $7::bigint[] AS groups, $8::text[] AS handlers,"
                                " $9::text[] AS params, $10::integer[] AS retries") + ", " +
                batch_values_cte("fire", "f", "unnest(guard.jobs, guard.times, guard.types, guard.states, guard.messages,"
                                              " guard.groups, guard.handlers, guard.params, guard.retries)"
                                              " WITH ORDINALITY AS f(job_id, scheduled_time, trigger_type, state, message,"
                                              " job_group, handler, param, retries, ord)") +
                ", pending AS (INSERT INTO job_log_active (job_group, job_id, state, trigger_type, scheduled_time, admin_node,"
                "              executor_handler, executor_param, executor_fail_retry_count, trigger_msg)"
                " SELECT fire.job_group, fire.job_id, fire.state, fire.trigger_type, fire.scheduled_time, $6,"
                "        fire.handler, fire.param, fire.retries, fire.message"
                " FROM fire"
                " WHERE fire.state = 'pending' AND NOT " +
                scheduled_fire_finished("fire.job_id", "fire.scheduled_time", "0") +
                " ORDER BY fire.ord"
                " ON CONFLICT (job_id, scheduled_time, shard_index) WHERE trigger_type IN ('SCHEDULE', 'MISFIRE')"
                " DO NOTHING"
                " RETURNING id, job_id, scheduled_time, state, job_group),"
                " skipped AS (INSERT INTO job_log_finished (job_group, job_id, state, trigger_type, scheduled_time,"
                "             admin_node, executor_handler, executor_param, executor_fail_retry_count, trigger_msg)"
                " SELECT fire.job_group, fire.job_id, fire.state, fire.trigger_type, fire.scheduled_time, $6,"
                "        fire.handler, fire.param, fire.retries, fire.message"
                " FROM fire"
                " WHERE fire.state <> 'pending' AND NOT " +
                scheduled_fire_finished("fire.job_id", "fire.scheduled_time", "0") +
                " AND NOT EXISTS (SELECT 1 FROM job_log_active x WHERE x.job_id = fire.job_id"
                " AND x.scheduled_time = fire.scheduled_time AND x.shard_index = 0"
                " AND x.trigger_type IN ('SCHEDULE', 'MISFIRE') OFFSET 0)"
                " ORDER BY fire.ord"
                " RETURNING id, job_id, scheduled_time, state, job_group)"
                " SELECT * FROM pending UNION ALL SELECT * FROM skipped");
  // job_log_active_node: (admin_node, scheduled_time), the node's runs in flight whatever their
  // state, which is a filter, as is a fire waiting for a slot (not this node's to send until one
  // admits it); each fire's job by id (a subquery, so no join order can read job_info any other
  // way).
  c.prepare("sched_pending",
            "SELECT l.id, l.job_id, l.scheduled_time, l.trigger_type, " + kMisfireStrategy +
                " FROM job_log_active l WHERE l.state = 'pending' AND NOT l.waiting_slot AND l.admin_node = $1"
                " AND l.scheduled_time <= $2"
                " ORDER BY l.scheduled_time, l.id LIMIT $3");
  // The statements on given runs find them by id alone; their guards compare with `guard`
  // (pg_guard.h). $1 and $2 are parallel arrays: the runs and each one's message.
  c.prepare("sched_cancel_pending",
            end_runs(guard_cte("$1::bigint[] AS run_ids, $2::text[] AS messages, 'pending'::text AS run_state,"
                               " $3::text AS run_owner") + ", " +
                         batch_values_cte("m", "c", "unnest(guard.run_ids, guard.messages) AS c(run_id, message)"),
                     "USING guard, m WHERE a.id = m.run_id AND a.state = guard.run_state AND a.admin_node = guard.run_owner",
                     "JOIN m ON m.run_id = ended.id",
                     {{"state", "'cancelled'"},
                      {"trigger_msg", "CASE WHEN ended.trigger_msg = '' THEN m.message"
                                      " ELSE ended.trigger_msg || E'\\n' || m.message END"}}));
  // The dead nodes' pending fires through job_log_active_node, each with its job's misfire strategy
  // (by id) for the misfire rule the caller applies.
  c.prepare("sched_takeover_pending",
            "UPDATE job_log_active l SET admin_node = $2 WHERE l.admin_node = ANY ($1::text[]) AND l.state = 'pending' "
            "AND NOT l.waiting_slot "
            "RETURNING l.id, l.job_id, l.scheduled_time, l.trigger_type, " + kMisfireStrategy);
  // Locks first (a row another node took meanwhile is skipped: FOR UPDATE re-checks the WHERE
  // on the newest version), so the old owner can be reported.
  c.prepare("sched_takeover_sending_lock",
            "SELECT l.id, l.job_id, l.scheduled_time, l.admin_node, l.executor_address, l.job_group, g.access_token, "
            "l.logical_time "
                "FROM job_log_active l LEFT JOIN job_group g ON g.id = l.job_group "
                "WHERE l.admin_node = ANY ($1::text[]) AND l.state = 'sending' AND NOT l.waiting_slot"
                " ORDER BY l.id FOR UPDATE OF l");
  c.prepare("sched_takeover_sending",
            "WITH " + guard_cte("$1::bigint[] AS run_ids, 'sending'::text AS run_state") +
                " UPDATE job_log_active SET admin_node = $2 FROM guard WHERE id = ANY (guard.run_ids) AND state = guard.run_state");
  // The run $1, if it is sending and owned by $2.
  const std::string sending =
      "WITH " + guard_cte("$1::bigint AS run_id, 'sending'::text AS run_state, $2::text AS run_owner");
  const std::string guarded =
      " FROM guard WHERE id = guard.run_id AND state = guard.run_state AND admin_node = guard.run_owner";
  c.prepare("sched_resolve_delivered", sending + " UPDATE job_log_active SET state = 'triggered', trigger_code = 200,"
                                                 " trigger_msg = " + kAppendMessage + guarded + " RETURNING id");
  // Back to pending: the claim starts afresh (new trigger time). The executor address and the
  // shard stay, so a broadcast shard is sent again as that shard to that executor.
  c.prepare("sched_resolve_not_delivered",
            sending + " UPDATE job_log_active SET state = 'pending', trigger_time = NULL, trigger_code = 0, trigger_msg = " +
                kAppendMessage + guarded + " RETURNING id");
  c.prepare("sched_resolve_unknown", sending + " UPDATE job_log_active SET state = 'triggered', trigger_code = 500,"
                                               " trigger_msg = " + kAppendMessage + guarded + " RETURNING id");
}

ScheduleStore::ScanResult PgScheduleStore::scan(std::string_view node, std::int64_t due_before, int limit,
                                                 const Decide& decide) {
  const std::string owner(node);
  return db_.transact([&](pqxx::work& tx) {
    ScanResult result;
    tx.exec_prepared("sched_lock");
    tx.exec_prepared("sched_mark_scan", owner);
    // The due jobs in due order, then their schedules by key. A job deleted between the two
    // reads (each statement has its own snapshot) is left out: its schedule row went with it,
    // so it has nothing to advance.
    const auto due_rows = tx.exec_prepared("sched_due", due_before, limit);
    std::vector<DueJob> due;
    std::unordered_map<std::int64_t, DueJob> schedules;
    std::unordered_map<std::int64_t, RunCopy> copied;
    if (!due_rows.empty()) {
      std::vector<std::int64_t> due_ids;
      for (const auto& r : due_rows) due_ids.push_back(r["job_id"].as<std::int64_t>());
      for (const auto& row : tx.exec_prepared("sched_due_jobs", bigint_array(due_ids))) {
        Fields r(row);
        DueJob job;
        job.id = r["id"].as<std::int64_t>();
        job.schedule_type = enum_of<ScheduleType>(r["schedule_type"]);
        job.schedule_conf = r["schedule_conf"].as<std::string>();
        job.timezone = r["timezone"].as<std::string>();
        job.misfire_strategy = enum_of<MisfireStrategy>(r["misfire_strategy"]);
        due_calendar(r, job);
        job.dst = dst_policy_from(r);
        job.priority = r["priority"].as<int>();
        copied.emplace(job.id, RunCopy{r["job_group"].as<std::int64_t>(), r["executor_handler"].as<std::string>(),
                                       r["executor_param"].as<std::string>(),
                                       r["executor_fail_retry_count"].as<std::int64_t>()});
        schedules.emplace(job.id, std::move(job));
      }
      for (const auto& r : due_rows) {
        auto it = schedules.find(r["job_id"].as<std::int64_t>());
        if (it == schedules.end()) continue;
        DueJob& job = it->second;
        job.trigger_last_time = r["trigger_last_time"].as<std::int64_t>();
        job.trigger_next_time = r["trigger_next_time"].as<std::int64_t>();
        due.push_back(std::move(job));
      }
    }
    result.jobs_read = due.size();
    if (due.empty()) {
      const auto next = tx.exec_prepared1("sched_next_due")[0];
      if (!next.is_null()) result.next_due = next.as<std::int64_t>();
      return result;
    }
    read_calendar_versions(tx, "sched_calendar_versions", due);

    const ScanDecision decision = decide(due);
    if (decision.jobs.empty()) return result;
    // The advance locks the jobs' schedule rows in the order of its arrays: by id, as a pause of a
    // group locks them (job_pause_group). In another order (the due order) a scan and a pause of
    // many jobs at once could each wait for the other, and one of them wait for PostgreSQL's
    // deadlock_timeout (1 s by default) before it is ended and retried.
    std::vector<const JobAdvance*> in_id_order;
    in_id_order.reserve(decision.jobs.size());
    for (const auto& j : decision.jobs) in_id_order.push_back(&j);
    std::sort(in_id_order.begin(), in_id_order.end(), [](auto* a, auto* b) { return a->job_id < b->job_id; });
    std::vector<std::int64_t> ids, read_next, last, next, status;
    for (const auto* job : in_id_order) {
      const auto& j = *job;
      ids.push_back(j.job_id);
      read_next.push_back(j.read_next_time);
      last.push_back(j.last_time);
      next.push_back(j.next_time);
      status.push_back(j.trigger_status);
    }
    std::unordered_set<std::int64_t> advanced;
    for (const auto& r : tx.exec_prepared("sched_advance", bigint_array(ids), bigint_array(read_next),
                                          bigint_array(last), bigint_array(next), bigint_array(status))) {
      advanced.insert(r[0].as<std::int64_t>());
    }
    // The fires (pending) and the records of skipped fires (cancelled MISFIRE rows, which the
    // scheduled-fire index keeps apart from every fire: see decide_fires) of the jobs advanced,
    // in one insert.
    std::vector<std::int64_t> fire_jobs, fire_times, fire_groups;
    std::vector<std::string> fire_types, fire_states, fire_messages, fire_handlers, fire_params;
    std::vector<std::int64_t> fire_retries;
    const auto copy_job = [&](std::int64_t job_id) {
      const RunCopy& c = copied.at(job_id);
      fire_groups.push_back(c.job_group);
      fire_handlers.push_back(c.executor_handler);
      fire_params.push_back(c.executor_param);
      fire_retries.push_back(c.executor_fail_retry_count);
    };
    for (const auto& f : decision.fires) {
      if (!advanced.contains(f.job_id)) continue;
      copy_job(f.job_id);
      fire_jobs.push_back(f.job_id);
      fire_times.push_back(f.scheduled_time);
      fire_types.push_back(text(f.trigger_type));
      fire_states.push_back(text(FireState::kPending));
      fire_messages.emplace_back();
    }
    for (const auto& skip : decision.skipped) {
      if (!advanced.contains(skip.job_id)) continue;
      copy_job(skip.job_id);
      fire_jobs.push_back(skip.job_id);
      fire_times.push_back(skip.first_time);
      fire_types.push_back(text(TriggerType::kMisfire));
      fire_states.push_back(text(FireState::kCancelled));
      fire_messages.push_back(skip.message);
    }
    if (fire_jobs.empty()) return result;
    auto rows = tx.exec_prepared("sched_insert_fires", bigint_array(fire_jobs), bigint_array(fire_times),
                                 text_array(fire_types), text_array(fire_states), text_array(fire_messages), owner,
                                 bigint_array(fire_groups), text_array(fire_handlers), text_array(fire_params),
                                 bigint_array(fire_retries));
    for (const auto& r : rows) {
      if (enum_of<FireState>(r["state"]) == FireState::kPending) {
        result.fires.push_back(pending_from(r));
      } else {
        ++result.misfire_records;
        result.misfire_groups.push_back(r["job_group"].as<std::int64_t>());
      }
    }
    std::sort(result.fires.begin(), result.fires.end(), due_order);
    return result;
  });
}

std::vector<PendingFireRow> PgScheduleStore::pending(std::string_view node, std::int64_t due_before, int limit) {
  return db_.read([&](pqxx::read_transaction& tx) {
    return all_of<PendingFireRow>(tx.exec_prepared("sched_pending", std::string(node), due_before, limit),
                                  pending_row_from);
  });
}

std::vector<std::int64_t> PgScheduleStore::cancel_pending(const std::vector<SkippedFire>& fires, std::string_view node,
                                                          const FollowUpPlanner& plan) {
  if (fires.empty()) return {};
  std::vector<std::int64_t> ids;
  std::vector<std::string> messages;
  for (const auto& f : fires) {
    ids.push_back(f.log_id);
    messages.push_back(f.message);
  }
  return db_.transact([&](pqxx::work& tx) {
    // One read of the jobs for the whole batch (write_follow_ups).
    const auto runs = all_of<JobLog>(
        tx.exec_prepared("sched_cancel_pending", bigint_array(ids), text_array(messages), std::string(node)), log_from);
    write_follow_ups(tx, runs, plan);
    std::vector<std::int64_t> moved;
    for (const JobLog& run : runs) moved.push_back(run.id);
    std::sort(moved.begin(), moved.end());
    return moved;
  });
}

ScheduleStore::Takeover PgScheduleStore::take_over(const std::vector<std::string>& dead_nodes, std::string_view node) {
  if (dead_nodes.empty()) return {};
  const std::string dead = text_array(dead_nodes);
  const std::string owner(node);
  return db_.transact([&](pqxx::work& tx) {
    Takeover out;
    out.pending = all_of<PendingFireRow>(tx.exec_prepared("sched_takeover_pending", dead, owner), pending_row_from);
    std::vector<std::int64_t> sending_ids;
    for (const auto& r : tx.exec_prepared("sched_takeover_sending_lock", dead)) {
      SendingFire s;
      s.fire = pending_from(r);
      s.dead_node = r["admin_node"].as<std::string>();
      s.executor_address = r["executor_address"].as<std::string>();
      s.job_group = r["job_group"].as<std::int64_t>();
      if (!r["access_token"].is_null()) s.access_token = r["access_token"].as<std::string>();
      if (!r["logical_time"].is_null()) s.logical_time = r["logical_time"].as<std::int64_t>();
      sending_ids.push_back(s.fire.log_id);
      out.sending.push_back(std::move(s));
    }
    if (!sending_ids.empty()) tx.exec_prepared("sched_takeover_sending", bigint_array(sending_ids), owner);
    std::sort(out.pending.begin(), out.pending.end(),
              [](const PendingFireRow& a, const PendingFireRow& b) { return due_order(a.fire, b.fire); });
    return out;
  });
}

bool PgScheduleStore::resolve_sending(std::int64_t log_id, std::string_view node, Delivery delivery,
                                      std::string_view message) {
  const char* statement = delivery == Delivery::kDelivered      ? "sched_resolve_delivered"
                          : delivery == Delivery::kNotDelivered ? "sched_resolve_not_delivered"
                                                                : "sched_resolve_unknown";
  return db_.transact([&](pqxx::work& tx) {
    return !tx.exec_prepared(statement, log_id, std::string(node), std::string(message)).empty();
  });
}

}  // namespace cronwheel::admin
