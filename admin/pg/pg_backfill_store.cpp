#include "admin/pg/pg_backfill_store.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "admin/model/alarm_store.h"
#include "admin/pg/pg_follow_ups.h"
#include "admin/pg/pg_store_support.h"
#include "admin/pg/pg_workflow_store.h"

namespace cronwheel::admin {

using namespace pg;

namespace {

// A backfill read as `b` with its job as `j` or its workflow as `w` (their group: permissions).
const std::string kBackfillColumns =
    "b.id, b.job_id, b.workflow_id, COALESCE(j.job_group, w.job_group) AS job_group, w.name AS workflow_name, "
    "b.params::text AS params, b.from_time, b.to_time, b.on_existing, b.max_concurrent, b.state, b.cursor_time, "
    "b.total, b.written, b.skipped, b.created_by, " +
    ms("b.created_at", "created_at") + ", " + ms("b.ended_at", "ended_at") + ", b.reason";
const std::string kBackfillFrom =
    " FROM backfill b LEFT JOIN job_info j ON j.id = b.job_id LEFT JOIN workflow w ON w.id = b.workflow_id";

template <class T>
std::optional<T> nullable(const pqxx::field& f) {
  if (f.is_null()) return std::nullopt;
  return f.as<T>();
}

Backfill backfill_from(const pqxx::row& r) {
  Backfill b;
  b.id = r["id"].as<std::int64_t>();
  b.job_id = nullable<std::int64_t>(r["job_id"]).value_or(0);
  b.workflow_id = nullable<std::int64_t>(r["workflow_id"]).value_or(0);
  b.job_group = nullable<std::int64_t>(r["job_group"]).value_or(0);
  b.workflow_name = nullable<std::string>(r["workflow_name"]).value_or("");
  b.params = nullable<std::string>(r["params"]);
  b.from = r["from_time"].as<std::int64_t>();
  b.to = r["to_time"].as<std::int64_t>();
  const auto on_existing = r["on_existing"].as<std::string>();
  const auto state = r["state"].as<std::string>();
  const auto parsed_on_existing = parse_on_existing(on_existing);
  const auto parsed_state = parse_backfill_state(state);
  if (!parsed_on_existing) throw std::runtime_error("backfill.on_existing: unknown value '" + on_existing + "'");
  if (!parsed_state) throw std::runtime_error("backfill.state: unknown value '" + state + "'");
  b.on_existing = *parsed_on_existing;
  b.state = *parsed_state;
  b.max_concurrent = r["max_concurrent"].as<int>();
  if (!r["cursor_time"].is_null()) b.cursor = r["cursor_time"].as<std::int64_t>();
  b.total = r["total"].as<std::int64_t>();
  b.written = r["written"].as<std::int64_t>();
  b.skipped = r["skipped"].as<std::int64_t>();
  b.created_by = r["created_by"].as<std::string>();
  b.created_at = r["created_at"].as<std::int64_t>();
  if (!r["ended_at"].is_null()) b.ended_at = r["ended_at"].as<std::int64_t>();
  b.reason = r["reason"].as<std::string>();
  return b;
}

std::string text_of(BackfillState state) { return std::string(to_string(state)); }

}  // namespace

void PgBackfillStore::prepare(pqxx::connection& c) {
  prepare_follow_ups(c);
  c.prepare("bf_get", "SELECT " + kBackfillColumns + kBackfillFrom + " WHERE b.id = $1");
  const std::string matches = kBackfillFrom +
                              " WHERE ($1::bigint[] IS NULL OR COALESCE(j.job_group, w.job_group) = ANY ($1::bigint[]))"
                              " AND ($2::bigint IS NULL OR b.job_id = $2) AND ($3::text IS NULL OR b.state = $3)"
                              " AND ($4::bigint IS NULL OR b.workflow_id = $4)";
  c.prepare("bf_list", "SELECT " + kBackfillColumns + ", count(*) OVER () AS listed" + matches +
                           " ORDER BY b.id DESC LIMIT $5 OFFSET $6");
  c.prepare("bf_count", "SELECT count(*)" + matches);
  c.prepare("bf_runs", "SELECT state, count(*) AS runs FROM job_log WHERE backfill_id = $1 GROUP BY state");
  c.prepare("bf_workflow_runs", "SELECT state, count(*) AS runs FROM workflow_run WHERE backfill_id = $1 GROUP BY state");
  c.prepare("bf_existing",
            "SELECT DISTINCT scheduled_time FROM job_log WHERE job_id = $1 AND scheduled_time = ANY ($2::bigint[]) "
            "AND trigger_type IN ('SCHEDULE', 'MISFIRE', 'BACKFILL') AND state <> 'cancelled' ORDER BY scheduled_time");
  // A workflow run that never started (skipped, or cancelled while it waited) did not run its
  // instant; one waiting will (backfill.h, OnExisting). Through workflow_run_at.
  c.prepare("bf_existing_workflow",
            "SELECT DISTINCT scheduled_time FROM workflow_run WHERE workflow_id = $1 "
            "AND scheduled_time = ANY ($2::bigint[]) AND trigger_type IN ('SCHEDULE', 'MISFIRE', 'BACKFILL') "
            "AND state <> 'skipped' AND (state <> 'cancelled' OR started_at IS NOT NULL) ORDER BY scheduled_time");
  c.prepare("bf_running", "SELECT " + kBackfillColumns + kBackfillFrom + " WHERE b.state = 'running' ORDER BY b.id LIMIT $1");
  c.prepare("bf_insert",
            "INSERT INTO backfill (job_id, from_time, to_time, on_existing, max_concurrent, total, created_by, created_at) "
            "SELECT id, $2, $3, $4, $5, $6, $7, " + ts("$8") + " FROM job_info WHERE id = $1 RETURNING id");
  c.prepare("bf_insert_workflow",
            "INSERT INTO backfill (workflow_id, params, from_time, to_time, on_existing, max_concurrent, total, created_by, "
            "created_at) SELECT id, $9::jsonb, $2, $3, $4, $5, $6, $7, " + ts("$8") +
                " FROM workflow WHERE id = $1 RETURNING id");
  c.prepare("bf_target", "SELECT job_id, workflow_id FROM backfill WHERE id = $1");
  // Taken before the backfill's row: deleting a job or workflow (its row locked, then its
  // backfills deleted with it) then waits for the step, or the step for it, never both.
  c.prepare("bf_job_share", "SELECT id FROM job_info WHERE id = $1 FOR KEY SHARE");
  c.prepare("bf_workflow_share", "SELECT " + kWorkflowColumns + " FROM workflow WHERE id = $1 FOR KEY SHARE");
  c.prepare("bf_lock_skip", "SELECT id FROM backfill WHERE id = $1 FOR NO KEY UPDATE SKIP LOCKED");
  c.prepare("bf_lock", "SELECT id FROM backfill WHERE id = $1 FOR NO KEY UPDATE");
  c.prepare("bf_job_lock", "SELECT pg_advisory_xact_lock(hashtextextended('backfill-job:' || $1::text, 0))");
  c.prepare("bf_workflow_lock", "SELECT pg_advisory_xact_lock(hashtextextended('backfill-workflow:' || $1::text, 0))");
  c.prepare("bf_unfinished", "SELECT count(*) FROM job_log_active WHERE backfill_id = $1");
  c.prepare("bf_unfinished_workflow", "SELECT count(*) FROM workflow_run WHERE backfill_id = $1 "
                                      "AND state IN ('waiting', 'running')");
  c.prepare("bf_write",
            "INSERT INTO job_log_active (job_group, job_id, state, trigger_type, scheduled_time, admin_node, "
            "executor_handler, executor_param, executor_fail_retry_count, backfill_id, logical_time) "
            "SELECT j.job_group, j.id, 'pending', 'BACKFILL', t, $3, j.executor_handler, j.executor_param, "
            "j.executor_fail_retry_count, $1, t FROM job_info j, unnest($4::bigint[]) AS t WHERE j.id = $2 "
            "AND NOT " + backfill_fire_finished("$1::bigint", "t", "0") + " "
            "ON CONFLICT (backfill_id, scheduled_time, shard_index) WHERE trigger_type = 'BACKFILL' DO NOTHING "
            "RETURNING " + kLogColumns);
  c.prepare("bf_advance",
            "UPDATE backfill SET cursor_time = COALESCE($2, cursor_time), written = written + $3, "
            "skipped = skipped + $4, state = COALESCE($5::text, state), "
            "ended_at = CASE WHEN $5::text IS NULL THEN ended_at ELSE " + ts("$6") + " END, "
            "reason = CASE WHEN $5::text IS NULL THEN reason ELSE $7 END WHERE id = $1");
  c.prepare("bf_cancel", "UPDATE backfill SET state = 'cancelled', ended_at = " + ts("$2") +
                             ", reason = $3 WHERE id = $1 AND state = 'running'");
  c.prepare("bf_cancel_runs", end_runs("", "WHERE a.backfill_id = $1 AND a.state = 'pending'", "",
                                       {{"state", "'cancelled'"},
                                        {"alarm_status", std::to_string(kAlarmNotNeeded)},
                                        {"trigger_msg", appended_trigger_msg("$2")}}));
}

Page<Backfill> PgBackfillStore::list(const Filter& f) {
  const auto scope = scope_param(f.scope);
  const std::optional<std::string> state = f.state ? std::optional<std::string>(text_of(*f.state)) : std::nullopt;
  return db_.read([&](pqxx::read_transaction& tx) {
    auto rows = tx.exec_prepared("bf_list", scope, f.job_id, state, f.workflow_id, f.page.limit, f.page.offset);
    Page<Backfill> page;
    page.items = all_of<Backfill>(rows, backfill_from);
    // The window's count is `listed`: `total` is a backfill's own column.
    page.total = rows.empty() ? tx.exec_prepared1("bf_count", scope, f.job_id, state, f.workflow_id)[0].as<std::int64_t>()
                              : rows[0]["listed"].as<std::int64_t>();
    return page;
  });
}

std::optional<Backfill> PgBackfillStore::get(std::int64_t id) {
  return db_.read([&](pqxx::read_transaction& tx) { return first_of<Backfill>(tx.exec_prepared("bf_get", id), backfill_from); });
}

BackfillRuns PgBackfillStore::runs(std::int64_t id) {
  return db_.read([&](pqxx::read_transaction& tx) {
    BackfillRuns out;
    for (const auto& row : tx.exec_prepared("bf_workflow_runs", id)) {
      const auto n = row["runs"].as<std::int64_t>();
      const auto state = row["state"].as<std::string>();
      switch (parse_workflow_run_state(state).value_or(WorkflowRunState::kFailed)) {
        case WorkflowRunState::kWaiting: out.pending += n; break;
        case WorkflowRunState::kRunning: out.running += n; break;
        case WorkflowRunState::kSucceeded: out.succeeded += n; break;
        case WorkflowRunState::kFailed:
        case WorkflowRunState::kTimedOut: out.failed += n; break;
        case WorkflowRunState::kCancelled:
        case WorkflowRunState::kSkipped: out.cancelled += n; break;
      }
    }
    for (const auto& row : tx.exec_prepared("bf_runs", id)) {
      const auto n = row["runs"].as<std::int64_t>();
      switch (enum_of<FireState>(row["state"])) {
        case FireState::kPending: out.pending += n; break;
        case FireState::kSending:
        case FireState::kTriggered: out.running += n; break;
        case FireState::kSucceeded: out.succeeded += n; break;
        case FireState::kFailed:
        case FireState::kLost: out.failed += n; break;
        case FireState::kCancelled: out.cancelled += n; break;
      }
    }
    return out;
  });
}

std::vector<std::int64_t> PgBackfillStore::existing(std::int64_t job_id, const std::vector<std::int64_t>& instants) {
  if (instants.size() > static_cast<std::size_t>(kMaxBackfillInstants)) {
    throw std::invalid_argument("existing: at most " + std::to_string(kMaxBackfillInstants) + " instants");
  }
  if (instants.empty()) return {};
  return db_.read([&](pqxx::read_transaction& tx) {
    std::vector<std::int64_t> out;
    for (const auto& row : tx.exec_prepared("bf_existing", job_id, bigint_array(instants))) {
      out.push_back(row[0].as<std::int64_t>());
    }
    return out;
  });
}

std::vector<std::int64_t> PgBackfillStore::existing_workflow_runs(std::int64_t workflow_id,
                                                                  const std::vector<std::int64_t>& instants) {
  if (instants.size() > static_cast<std::size_t>(kMaxBackfillInstants)) {
    throw std::invalid_argument("existing_workflow_runs: at most " + std::to_string(kMaxBackfillInstants) + " instants");
  }
  if (instants.empty()) return {};
  return db_.read([&](pqxx::read_transaction& tx) {
    std::vector<std::int64_t> out;
    for (const auto& row : tx.exec_prepared("bf_existing_workflow", workflow_id, bigint_array(instants))) {
      out.push_back(row[0].as<std::int64_t>());
    }
    return out;
  });
}

std::vector<Backfill> PgBackfillStore::running(int limit) {
  return db_.read(
      [&](pqxx::read_transaction& tx) { return all_of<Backfill>(tx.exec_prepared("bf_running", limit), backfill_from); });
}

Backfill PgBackfillStore::create(const Backfill& backfill, const Actor& actor) {
  const auto now = clock_.now_ms();
  return mapped([&] {
    return db_.transact([&](pqxx::work& tx) {
      const bool of_workflow = backfill.kind() == BackfillKind::kWorkflow;
      const std::string on_existing(to_string(backfill.on_existing));
      auto inserted =
          of_workflow
              ? tx.exec_prepared("bf_insert_workflow", backfill.workflow_id, backfill.from, backfill.to, on_existing,
                                 backfill.max_concurrent, backfill.total, backfill.created_by, now,
                                 backfill.params.value_or("{}"))
              : tx.exec_prepared("bf_insert", backfill.job_id, backfill.from, backfill.to, on_existing,
                                 backfill.max_concurrent, backfill.total, backfill.created_by, now);
      if (inserted.empty()) {
        throw NotFound(of_workflow ? "workflow " + std::to_string(backfill.workflow_id) + " does not exist"
                                   : "job " + std::to_string(backfill.job_id) + " does not exist");
      }
      Backfill created = backfill_from(tx.exec_prepared1("bf_get", inserted[0][0].as<std::int64_t>()));
      write_audit(tx, now, actor, "backfill.create", "backfill", created.id, std::nullopt, to_json(created));
      return created;
    });
  });
}

BackfillStore::StepResult PgBackfillStore::step(std::int64_t id, std::string_view node, std::int64_t now,
                                                const Decide& decide) {
  const std::string owner(node);
  return db_.transact([&](pqxx::work& tx) {
    StepResult out;
    // The job's or workflow's row first (bf_job_share says why).
    std::optional<Workflow> workflow;
    auto target = tx.exec_prepared("bf_target", id);
    if (target.empty()) return out;
    if (!target[0]["workflow_id"].is_null()) {
      auto rows = tx.exec_prepared("bf_workflow_share", target[0]["workflow_id"].as<std::int64_t>());
      if (rows.empty()) return out;  // deleted meanwhile, its backfills with it
      workflow = workflow_from(rows[0]);
    } else if (tx.exec_prepared("bf_job_share", target[0]["job_id"].as<std::int64_t>()).empty()) {
      return out;
    }
    if (tx.exec_prepared("bf_lock_skip", id).empty()) return out;  // gone, or another node steps it
    const Backfill backfill = backfill_from(tx.exec_prepared1("bf_get", id));
    if (backfill.state != BackfillState::kRunning) return out;
    if (workflow) {
      tx.exec_prepared("bf_workflow_lock", backfill.workflow_id);
    } else {
      tx.exec_prepared("bf_job_lock", backfill.job_id);
    }
    const auto unfinished =
        tx.exec_prepared1(workflow ? "bf_unfinished_workflow" : "bf_unfinished", id)[0].as<std::int64_t>();
    const ExistingLookup existing = [&](const std::vector<std::int64_t>& instants) {
      std::set<std::int64_t> found;
      if (instants.empty()) return found;
      for (const auto& row : tx.exec_prepared(workflow ? "bf_existing_workflow" : "bf_existing",
                                              workflow ? backfill.workflow_id : backfill.job_id, bigint_array(instants))) {
        found.insert(row[0].as<std::int64_t>());
      }
      return found;
    };
    const BackfillStep step = decide(backfill, unfinished, existing);
    std::int64_t written = 0;
    if (!step.write.empty() && workflow) {
      auto changed = write_backfill_runs(tx, *workflow, id, step.write, backfill.params.value_or("{}"), now, owner,
                                         backfill.created_by);
      out.fires = std::move(changed.fires);
      out.runs = std::move(changed.runs);
      written = static_cast<std::int64_t>(out.runs.size());
    } else if (!step.write.empty()) {
      out.fires = all_of<JobLog>(tx.exec_prepared("bf_write", id, backfill.job_id, owner, bigint_array(step.write)), log_from);
      std::sort(out.fires.begin(), out.fires.end(),
                [](const JobLog& a, const JobLog& b) { return a.scheduled_time < b.scheduled_time; });
      written = static_cast<std::int64_t>(out.fires.size());
    }
    std::optional<std::string> end;
    if (step.end) end = text_of(*step.end);
    tx.exec_prepared("bf_advance", id, step.cursor, written, step.skipped, end, now, step.reason);
    out.stepped = true;
    out.backfill = backfill_from(tx.exec_prepared1("bf_get", id));
    return out;
  });
}

std::optional<BackfillStore::Cancelled> PgBackfillStore::cancel(std::int64_t id, std::int64_t now, const Actor& actor,
                                                                 const FollowUpPlanner& plan) {
  return db_.transact([&](pqxx::work& tx) -> std::optional<Cancelled> {
    if (tx.exec_prepared("bf_lock", id).empty()) return std::nullopt;
    Cancelled out;
    const Backfill before = backfill_from(tx.exec_prepared1("bf_get", id));
    out.backfill = before;
    if (before.state != BackfillState::kRunning) return out;
    tx.exec_prepared("bf_cancel", id, now, "cancelled by " + actor.username);
    // A workflow's backfill's runs go on (backfill_store.h); bf_cancel_runs finds none of them.
    out.runs = all_of<JobLog>(
        tx.exec_prepared("bf_cancel_runs", id, "cancelled: backfill " + std::to_string(id) + " was cancelled by " + actor.username),
        log_from);
    std::sort(out.runs.begin(), out.runs.end(), [](const JobLog& a, const JobLog& b) { return a.id < b.id; });
    write_follow_ups(tx, out.runs, plan);
    out.backfill = backfill_from(tx.exec_prepared1("bf_get", id));
    out.changed = true;
    write_audit(tx, now, actor, "backfill.cancel", "backfill", id, to_json(before), to_json(out.backfill));
    return out;
  });
}

}  // namespace cronwheel::admin
