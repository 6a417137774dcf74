#include "admin/pg/pg_workflow_store.h"

#include <algorithm>
#include <map>
#include <set>

#include "admin/model/workflow_json.h"
#include "admin/model/workflow_plan.h"
#include "admin/model/workflow_template.h"
#include "admin/pg/pg_guard.h"
#include "admin/pg/pg_keyset_list.h"
#include "admin/pg/pg_store_support.h"

namespace cronwheel::admin {

using namespace pg;

namespace {

// Read FROM workflow_run, unaliased (the keyset list's outer query names it so).
const std::string kRunHead =
    "id, workflow_id, (SELECT w.name FROM workflow w WHERE w.id = workflow_run.workflow_id) AS workflow_name, "
    "job_group, state, trigger_type, scheduled_time, started_at, ended_at, deadline, params::text AS params, "
    "reason, created_by, alarm_status, backfill_id";
const std::string kRunColumns = kRunHead + ", graph::text AS graph";
const std::string kRunListColumns = kRunHead + ", NULL::text AS graph";

template <class T>
std::optional<T> opt(const pqxx::field& f) {
  if (f.is_null()) return std::nullopt;
  return f.as<T>();
}

WorkflowRun run_from(const pqxx::row& r) {
  WorkflowRun run;
  run.id = r["id"].as<std::int64_t>();
  run.workflow_id = r["workflow_id"].as<std::int64_t>();
  run.workflow_name = opt<std::string>(r["workflow_name"]).value_or("");
  run.job_group = r["job_group"].as<std::int64_t>();
  run.state = parse_workflow_run_state(r["state"].as<std::string>()).value_or(WorkflowRunState::kFailed);
  run.trigger_type = enum_of<TriggerType>(r["trigger_type"]);
  run.scheduled_time = r["scheduled_time"].as<std::int64_t>();
  run.started_at = opt<std::int64_t>(r["started_at"]);
  run.ended_at = opt<std::int64_t>(r["ended_at"]);
  run.deadline = opt<std::int64_t>(r["deadline"]);
  run.params = r["params"].as<std::string>();
  if (!r["graph"].is_null()) run.graph = graph_from_json(nlohmann::json::parse(r["graph"].as<std::string>()));
  run.reason = r["reason"].as<std::string>();
  run.created_by = r["created_by"].as<std::string>();
  run.alarm_status = r["alarm_status"].as<int>();
  run.backfill_id = opt<std::int64_t>(r["backfill_id"]);
  return run;
}

struct NodeRow {
  WorkflowRunNode node;
  bool kill_requested = false;
};

NodeRow node_from(const pqxx::row& r) {
  NodeRow row;
  auto& n = row.node;
  n.key = r["node_key"].as<std::string>();
  n.job_id = r["job_id"].as<std::int64_t>();
  n.state = parse_node_state(r["state"].as<std::string>()).value_or(NodeState::kFailed);
  n.log_id = opt<std::int64_t>(r["log_id"]);
  n.attempts = r["attempts"].as<int>();
  n.param = r["param"].as<std::string>();
  n.output = opt<std::string>(r["output"]);
  n.message = r["message"].as<std::string>();
  n.started_at = opt<std::int64_t>(r["started_at"]);
  n.ended_at = opt<std::int64_t>(r["ended_at"]);
  if (!r["run_state"].is_null()) n.run_state = enum_of<FireState>(r["run_state"]);
  n.executor_address = opt<std::string>(r["executor_address"]).value_or("");
  row.kill_requested = r["kill_requested"].as<bool>();
  return row;
}

// The nodes of a run in the order of its graph (rows of nodes the graph does not have last).
std::vector<NodeRow> read_nodes(pqxx::dbtransaction& tx, const WorkflowRun& run) {
  std::map<std::string, NodeRow, std::less<>> by_key;
  for (const auto& row : tx.exec_prepared("wfr_nodes", run.id)) {
    NodeRow n = node_from(row);
    by_key.emplace(n.node.key, std::move(n));
  }
  std::vector<NodeRow> out;
  for (const auto& g : run.graph.nodes) {
    auto it = by_key.find(g.key);
    if (it == by_key.end()) continue;
    out.push_back(std::move(it->second));
    by_key.erase(it);
  }
  for (auto& [key, row] : by_key) out.push_back(std::move(row));
  return out;
}

std::vector<PlanNode> plan_nodes(const std::vector<NodeRow>& rows) {
  std::vector<PlanNode> out;
  for (const auto& r : rows) {
    PlanNode p;
    p.key = r.node.key;
    p.state = r.node.state;
    p.message = r.node.message;
    if (r.node.output) {
      p.output = node_output_value(r.node.output, "");
      p.has_output = true;
    }
    out.push_back(std::move(p));
  }
  return out;
}

nlohmann::json params_object(const std::string& text) {
  auto parsed = nlohmann::json::parse(text, nullptr, false);
  return parsed.is_object() ? parsed : nlohmann::json::object();
}

struct NodeJob {
  std::int64_t job_group = 0;
  std::string handler;
  std::string param;
  int retries = 0;
};

std::string quoted_state(WorkflowRunState s) { return std::string(to_string(s)); }

// The jobs of nodes about to start, by id (jobs deleted meanwhile are absent), locked against
// deletion until commit.
std::map<std::int64_t, NodeJob> read_node_jobs(pqxx::work& tx, const std::vector<std::int64_t>& ids) {
  std::map<std::int64_t, NodeJob> jobs;
  if (ids.empty()) return jobs;
  for (const auto& row : tx.exec_prepared("wfn_jobs", bigint_array(ids))) {
    jobs[row["id"].as<std::int64_t>()] = NodeJob{row["job_group"].as<std::int64_t>(), row["executor_handler"].as<std::string>(),
                                                 row["executor_param"].as<std::string>(),
                                                 row["executor_fail_retry_count"].as<int>()};
  }
  return jobs;
}

// A started node to be killed: marked so; a run of it not yet sent is simply not sent (the node
// ends cancelled), one on its way or running is killed at its executor by whoever reads
// kill_candidates().
void kill_node(pqxx::work& tx, std::int64_t run_id, const std::string& key, std::int64_t now) {
  auto killed = tx.exec_prepared("wfn_kill", run_id, key);
  if (killed.empty() || killed[0][0].is_null()) return;
  const auto log_id = killed[0][0].as<std::int64_t>();
  if (!tx.exec_prepared("wfn_fire_cancel", log_id, "workflow run " + std::to_string(run_id) + " ended").empty()) {
    tx.exec_prepared("wfn_end", run_id, key, log_id, text(NodeState::kCancelled), "not run: the workflow run ended first",
                     now, std::optional<std::string>());
  }
}

// The run of the node's parent that ended last, for the new run's page; 0 when none.
std::int64_t latest_parent_run(const WorkflowGraph& graph, std::string_view key, const std::vector<NodeRow>& rows) {
  std::int64_t parent = 0;
  for (const auto& e : graph.edges) {
    if (e.to != key) continue;
    for (const auto& r : rows) {
      if (r.node.key == e.from && r.node.log_id && *r.node.log_id > parent) parent = *r.node.log_id;
    }
  }
  return parent;
}

// Nodes to start, gathered and then written in one statement (wfn_start_all): the guarded
// transition waiting → started and, for exactly the nodes it moved, their run rows.
class NodeStarts {
 public:
  // `run` is the node's workflow run: a backfill's gives its node runs its instant as their
  // logical time (JobLog::logical_time).
  void add(const WorkflowRun& run, const std::string& key, const std::string& param, std::int64_t now,
           const NodeJob& job, std::int64_t job_id, std::int64_t parent) {
    const std::int64_t run_id = run.id;
    logical_.push_back(run.backfill_id ? run.scheduled_time : 0);
    runs_.push_back(run_id);
    keys_.push_back(key);
    params_.push_back(param);
    times_.push_back(now);
    groups_.push_back(job.job_group);
    jobs_.push_back(job_id);
    handlers_.push_back(job.handler);
    retries_.push_back(job.retries);
    parents_.push_back(parent);
  }
  // The run rows inserted, pending and owned by `node_id`.
  std::vector<JobLog> write(pqxx::work& tx, const std::string& node_id) const {
    if (runs_.empty()) return {};
    return all_of<JobLog>(tx.exec_prepared("wfn_start_all", bigint_array(runs_), text_array(keys_), text_array(params_),
                                           bigint_array(times_), node_id, bigint_array(groups_), bigint_array(jobs_),
                                           text_array(handlers_), bigint_array(retries_), bigint_array(parents_),
                                           bigint_array(logical_)),
                          log_from);
  }

 private:
  std::vector<std::int64_t> runs_, times_, groups_, jobs_, retries_, parents_, logical_;
  std::vector<std::string> keys_, params_, handlers_;
};

// What a change of a run does, in its transaction.
class RunSteps {
 public:
  RunSteps(pqxx::work& tx, std::string node_id) : tx_(tx), node_id_(std::move(node_id)) {}

  WorkflowStore::Changed& changed() { return changed_; }

  // Applies the planner's step to a running run until no job is missing, then ends the run if
  // the plan says so.
  void step(WorkflowRun& run, std::int64_t now) {
    const nlohmann::json params = params_object(run.params);
    for (int pass = 0; pass < 4; ++pass) {
      const auto rows = read_nodes(tx_, run);
      WorkflowStep plan = plan_workflow_step(run.graph, params, plan_nodes(rows));
      const bool job_missing = apply(run, plan, rows, now);
      if (job_missing) continue;  // that node failed instead of starting: plan again
      if (plan.run_end) end_run(run, *plan.run_end, plan.reason, now);
      return;
    }
  }

  // Stops a waiting or running run from outside (cancel, timeout).
  void stop(WorkflowRun& run, WorkflowRunState end, const std::string& reason, std::int64_t now) {
    const auto rows = read_nodes(tx_, run);
    WorkflowStep plan = plan_workflow_stop(run.graph, plan_nodes(rows), end, reason);
    apply(run, plan, rows, now);
    end_run(run, end, reason, now);
  }

  // Creates a run of `wf` (its row locked by the caller) under its overlap policy. False when a
  // scheduled run of that time exists already.
  bool create(const Workflow& wf, std::int64_t scheduled_time, TriggerType type, const std::string& params_json,
              std::int64_t now, const std::string& created_by) {
    const auto counts = tx_.exec_prepared1("wfr_active", wf.id);
    const auto running = counts["running"].as<std::int64_t>();
    const auto waiting = counts["waiting"].as<std::int64_t>();
    const std::int64_t limit = wf.overlap == OverlapPolicy::kParallel ? wf.max_parallel : 1;
    const std::string oldest = counts["oldest"].is_null() ? "" : counts["oldest"].as<std::string>();
    WorkflowRunState state = WorkflowRunState::kRunning;
    std::string reason;
    if (running >= limit || waiting > 0) {
      const std::string busy = running == 1 ? "run " + oldest + " is still running"
                                            : std::to_string(running) + " runs are still running";
      if (wf.overlap == OverlapPolicy::kSkip) {
        state = WorkflowRunState::kSkipped;
        reason = "skipped: " + busy + " (overlap SKIP)";
      } else if (waiting >= kMaxWaitingRuns) {
        state = WorkflowRunState::kSkipped;
        reason = "skipped: " + std::to_string(waiting) + " runs are waiting already (at most " +
                 std::to_string(kMaxWaitingRuns) + ")";
      } else {
        state = WorkflowRunState::kWaiting;
        reason = "waiting: " + busy;
      }
    }
    const std::int64_t start = std::max(now, scheduled_time);
    std::optional<std::int64_t> started_at, ended_at, deadline;
    if (state == WorkflowRunState::kRunning) {
      started_at = start;
      if (wf.timeout_seconds > 0) deadline = start + std::int64_t{wf.timeout_seconds} * 1000;
    }
    if (state == WorkflowRunState::kSkipped) ended_at = now;
    const auto graph = graph_json(wf.graph).dump();
    const auto inserted = tx_.exec_prepared("wfr_insert", wf.id, wf.job_group, text(state), text(type), scheduled_time,
                                            started_at, deadline, params_json, graph, reason, created_by, ended_at);
    if (inserted.empty()) return false;
    add_nodes(wf, inserted[0][0].as<std::int64_t>(),
              state == WorkflowRunState::kRunning ? std::optional<std::int64_t>(start) : std::nullopt);
    return true;
  }

  // A backfill's run of `wf` at `instant` (the caller holds the workflow's row FOR KEY SHARE
  // and the backfill's): running from `now`, outside the overlap policy, with `params_json` as
  // its inputs, its first nodes started with the instant as their logical time. False when the
  // backfill has a run at that instant already.
  bool create_backfill(const Workflow& wf, std::int64_t backfill_id, std::int64_t instant, const std::string& params_json,
                       std::int64_t now, const std::string& created_by) {
    std::optional<std::int64_t> deadline;
    if (wf.timeout_seconds > 0) deadline = now + std::int64_t{wf.timeout_seconds} * 1000;
    const auto inserted = tx_.exec_prepared("wfr_insert_backfill", wf.id, wf.job_group, instant, now, deadline,
                                            params_json, graph_json(wf.graph).dump(), created_by, backfill_id);
    if (inserted.empty()) return false;
    add_nodes(wf, inserted[0][0].as<std::int64_t>(), now);
    return true;
  }

  // The nodes of the run `id` just inserted for `wf`, all waiting; when `start` is given, the
  // run's first step at that time. The run created comes before the runs its step may start in
  // what changed (a run ending at once lets the waiting ones start).
  void add_nodes(const Workflow& wf, std::int64_t id, std::optional<std::int64_t> start) {
    std::vector<std::string> keys;
    std::vector<std::int64_t> jobs;
    for (const auto& n : wf.graph.nodes) {
      keys.push_back(n.key);
      jobs.push_back(n.job_id);
    }
    tx_.exec_prepared("wfr_nodes_insert", id, text_array(keys), bigint_array(jobs));
    WorkflowRun run = run_from(tx_.exec_prepared1("wfr_get", id));
    const auto at = static_cast<std::ptrdiff_t>(changed_.runs.size());
    if (start) step(run, *start);
    changed_.runs.insert(changed_.runs.begin() + at, run_from(tx_.exec_prepared1("wfr_get", id)));
  }

  // Marks the run ended. The runs of its workflow waiting for room are started by
  // start_waiting() in a transaction of their own (the workflow runner's), not here: locking the
  // workflow's row in the middle of a batch of results would order locks differently in each
  // batch (deadlocks), and creating a run takes that lock first.
  void end_run(WorkflowRun& run, WorkflowRunState end, const std::string& reason, std::int64_t now) {
    if (tx_.exec_prepared("wfr_end", run.id, text(end), now, reason).affected_rows() == 0) return;
    run.state = end;
    run.ended_at = now;
    run.reason = reason;
  }

  // The runs of `wf` (its row locked by the caller) waiting for room, oldest first, as many as
  // its overlap policy has room for.
  void start_waiting(const Workflow& wf, std::int64_t now) {
    const auto counts = tx_.exec_prepared1("wfr_active", wf.id);
    const std::int64_t limit = wf.overlap == OverlapPolicy::kParallel ? wf.max_parallel : 1;
    const std::int64_t room = limit - counts["running"].as<std::int64_t>();
    if (room <= 0 || counts["waiting"].as<std::int64_t>() == 0) return;
    for (const auto& row : tx_.exec_prepared("wfr_next_waiting", wf.id, room)) {
      const auto id = row[0].as<std::int64_t>();
      std::optional<std::int64_t> deadline;
      if (wf.timeout_seconds > 0) deadline = now + std::int64_t{wf.timeout_seconds} * 1000;
      tx_.exec_prepared("wfr_start", id, now, deadline, "");
      WorkflowRun next = run_from(tx_.exec_prepared1("wfr_get", id));
      step(next, now);
      changed_.runs.push_back(run_from(tx_.exec_prepared1("wfr_get", id)));
    }
  }

 private:
  // Writes a step's node changes; true when a node to start had no job any more (it failed).
  bool apply(const WorkflowRun& run, const WorkflowStep& plan, const std::vector<NodeRow>& rows, std::int64_t now) {
    for (const auto& f : plan.finish) {
      tx_.exec_prepared("wfn_finish", run.id, f.key, text(f.state), f.message, now);
    }
    for (const auto& key : plan.kill) kill_node(tx_, run.id, key, now);
    if (plan.start.empty()) return false;
    std::vector<std::int64_t> job_ids;
    for (const auto& st : plan.start) job_ids.push_back(st.job_id);
    const auto jobs = read_node_jobs(tx_, job_ids);
    bool missing = false;
    NodeStarts starts;
    for (const auto& st : plan.start) {
      auto job = jobs.find(st.job_id);
      if (job == jobs.end()) {
        tx_.exec_prepared("wfn_finish", run.id, st.key, text(NodeState::kFailed),
                          "job " + std::to_string(st.job_id) + " no longer exists", now);
        missing = true;
        continue;
      }
      starts.add(run, st.key, st.param.value_or(job->second.param), now, job->second, st.job_id,
                 latest_parent_run(run.graph, st.key, rows));
    }
    for (auto& fire : starts.write(tx_, node_id_)) changed_.fires.push_back(std::move(fire));
    return missing;
  }

  pqxx::work& tx_;
  std::string node_id_;
  WorkflowStore::Changed changed_;
};

std::string node_output_text(const JobLog& run, std::string& message) {
  std::string text = node_output_value(run.output, run.handle_msg).dump(-1, ' ', false,
                                                                          nlohmann::json::error_handler_t::replace);
  if (text.size() > kMaxNodeOutputBytes) {
    message += (message.empty() ? "" : "; ") + std::string("its output (") + std::to_string(text.size()) +
               " bytes) is over " + std::to_string(kMaxNodeOutputBytes) + " bytes and was dropped";
    return "\"\"";
  }
  return text;
}

}  // namespace

void PgWorkflowStore::prepare(pqxx::connection& c) {
  c.prepare("wf_get", "SELECT " + kWorkflowColumns + " FROM workflow WHERE id = $1");
  c.prepare("wf_lock", "SELECT " + kWorkflowColumns + " FROM workflow WHERE id = $1 FOR UPDATE");
  c.prepare("wf_insert",
            "INSERT INTO workflow (job_group, name, description, author, alarm_email, schedule_type, schedule_conf, "
            "timezone, misfire_strategy, overlap, max_parallel, timeout_seconds, params, graph, created_at, updated_at, "
            "calendar_id, calendar_mode) "
            "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::jsonb, $14::jsonb, " + ts("$15") + ", " +
                ts("$15") + ", NULLIF($16::bigint, 0), $17) RETURNING " + kWorkflowColumns);
  c.prepare("wf_update",
            "UPDATE workflow SET job_group = $2, name = $3, description = $4, author = $5, alarm_email = $6, "
            "schedule_type = $7, schedule_conf = $8, timezone = $9, misfire_strategy = $10, overlap = $11, "
            "max_parallel = $12, timeout_seconds = $13, params = $14::jsonb, graph = $15::jsonb, trigger_status = $16, "
            "trigger_next_time = $17, version = version + 1, updated_at = " + ts("$18") +
                ", calendar_id = NULLIF($20::bigint, 0), calendar_mode = $21 WHERE id = $1 AND version = $19 RETURNING " +
                kWorkflowColumns);
  c.prepare("wf_status", "UPDATE workflow SET trigger_status = $2, trigger_next_time = $3, updated_at = " + ts("$4") +
                             " WHERE id = $1 RETURNING " + kWorkflowColumns);
  c.prepare("wf_delete", "DELETE FROM workflow WHERE id = $1");
  c.prepare("wf_jobs_clear", "DELETE FROM workflow_job WHERE workflow_id = $1");
  c.prepare("wf_jobs_insert",
            "INSERT INTO workflow_job (workflow_id, job_id) SELECT $1, unnest($2::bigint[]) ON CONFLICT DO NOTHING");
  c.prepare("wf_jobs_existing", "SELECT id FROM job_info WHERE id = ANY ($1::bigint[]) FOR KEY SHARE");
  c.prepare("wf_scan_lock", "SELECT lock_name FROM job_lock WHERE lock_name = 'workflow_schedule_lock' FOR UPDATE");
  // The due workflows, chosen in time order and locked in id order (as an apply locks them).
  c.prepare("wf_due", "SELECT id, schedule_type, schedule_conf, timezone, misfire_strategy, trigger_last_time, "
                      "trigger_next_time, calendar_id, calendar_mode FROM workflow WHERE id IN (SELECT id FROM workflow "
                      "WHERE trigger_status = 1 AND trigger_next_time <= $1 ORDER BY trigger_next_time, id LIMIT $2) "
                      "ORDER BY id FOR UPDATE");
  c.prepare("wf_calendar_versions", kCalendarVersions);
  c.prepare("wf_advance", "UPDATE workflow SET trigger_last_time = $2, trigger_next_time = $3, trigger_status = $4 "
                          "WHERE id = $1 AND trigger_status = 1 AND trigger_next_time = $5 RETURNING " + kWorkflowColumns);

  c.prepare("wfr_get", "SELECT " + kRunColumns + " FROM workflow_run WHERE id = $1");
  c.prepare("wfr_lock", "SELECT " + kRunColumns + " FROM workflow_run WHERE id = $1 FOR UPDATE");
  c.prepare("wfr_active", "SELECT count(*) FILTER (WHERE state = 'running') AS running, "
                          "count(*) FILTER (WHERE state = 'waiting') AS waiting, "
                          "min(id) FILTER (WHERE state = 'running') AS oldest "
                          "FROM workflow_run WHERE workflow_id = $1 AND state IN ('waiting', 'running') "
                          "AND backfill_id IS NULL");
  c.prepare("wfr_any_active", "SELECT id FROM workflow_run WHERE workflow_id = $1 AND state IN ('waiting', 'running') LIMIT 1");
  c.prepare("wfr_insert",
            "INSERT INTO workflow_run (workflow_id, job_group, state, trigger_type, scheduled_time, started_at, deadline, "
            "params, graph, reason, created_by, ended_at) "
            "VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9::jsonb, $10, $11, $12) "
            "ON CONFLICT (workflow_id, scheduled_time) WHERE trigger_type IN ('SCHEDULE', 'MISFIRE') DO NOTHING RETURNING id");
  c.prepare("wfr_insert_backfill",
            "INSERT INTO workflow_run (workflow_id, job_group, state, trigger_type, scheduled_time, started_at, deadline, "
            "params, graph, reason, created_by, backfill_id) "
            "VALUES ($1, $2, 'running', 'BACKFILL', $3, $4, $5, $6::jsonb, $7::jsonb, '', $8, $9) "
            "ON CONFLICT (backfill_id, scheduled_time) WHERE backfill_id IS NOT NULL DO NOTHING RETURNING id");
  c.prepare("wfr_nodes_insert", "INSERT INTO workflow_run_node (run_id, node_key, job_id, state) "
                                "SELECT $1, k, j, 'waiting' FROM unnest($2::text[], $3::bigint[]) AS t(k, j)");
  c.prepare("wfr_nodes",
            "SELECT n.node_key, n.job_id, n.state, n.log_id, n.attempts, n.param, n.output, n.message, n.started_at, "
            "n.ended_at, n.kill_requested, l.state AS run_state, l.executor_address "
            "FROM workflow_run_node n LEFT JOIN job_log l ON l.id = n.log_id WHERE n.run_id = $1");
  c.prepare("wfr_end", "UPDATE workflow_run SET state = $2, ended_at = $3, reason = $4 "
                       "WHERE id = $1 AND state IN ('waiting', 'running')");
  c.prepare("wfr_start", "UPDATE workflow_run SET state = 'running', started_at = $2, deadline = $3, ended_at = NULL, "
                         "reason = $4, alarm_status = 0 WHERE id = $1");
  c.prepare("wfr_next_waiting", "SELECT id FROM workflow_run WHERE workflow_id = $1 AND state = 'waiting' "
                                "ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED");
  c.prepare("wfr_timeouts", "SELECT id FROM workflow_run WHERE state = 'running' AND deadline IS NOT NULL "
                            "AND deadline <= $1 ORDER BY deadline LIMIT $2");
  c.prepare("wfr_reset_nodes",
            "UPDATE workflow_run_node SET state = 'waiting', message = '', ended_at = NULL, output = NULL, "
            "kill_requested = false WHERE run_id = $1 AND node_key = ANY ($2::text[])");
  c.prepare("wfr_count_by_state", "SELECT state, count(*) FROM workflow_run GROUP BY state ORDER BY state");
  c.prepare("wfr_kill_candidates",
            "SELECT " + kLogColumns + " FROM job_log_active WHERE id IN (SELECT log_id FROM workflow_run_node "
            "WHERE kill_requested AND state = 'started') AND state = 'triggered' ORDER BY id LIMIT $1");

  c.prepare("wfr_alarm_candidates",
            "SELECT id FROM workflow_run WHERE state IN ('failed', 'timed_out') AND (alarm_status = 0 OR "
            "(alarm_status = -1 AND alarm_claimed_at < $1)) ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED");
  c.prepare("wfr_alarm_channels", "SELECT " + kChannelColumns + " FROM alarm_channel c WHERE $1 = ANY (c.groups) ORDER BY c.id");
  c.prepare("wfr_alarm_decide", "UPDATE workflow_run SET alarm_status = $2, alarm_claimed_at = $3 WHERE id = $1");
  c.prepare("wfr_alarm_finish", "UPDATE workflow_run SET alarm_status = $3 WHERE id = $1 AND alarm_status = -1 "
                                "AND alarm_claimed_at = $2");
  // The statements of a batch's node ends (record_workflow_node_ends) find their rows by primary
  // key alone, whatever the tables' statistics and the batch's size: their arrays and the states
  // they guard with come from `guard`, their per-row values from a batch_values_cte (pg_guard.h).
  // Written with the arrays in the WHERE, a batch of 1,000 on tables not yet analysed read the
  // whole of workflow_run_node (and the node read the whole of job_log, in every plan) instead
  // (tests/integration/fire_path_plans_pgtest.cpp).
  c.prepare("wfn_jobs", "WITH " + guard_cte("$1::bigint[] AS job_ids") +
                            " SELECT id, job_group, executor_handler, executor_param, executor_fail_retry_count "
                            "FROM job_info, guard WHERE id = ANY (guard.job_ids) FOR KEY SHARE OF job_info");
  c.prepare("wfr_lock_rows", "WITH " + guard_cte("$1::bigint[] AS run_ids") + " SELECT " + kRunColumns +
                                 " FROM workflow_run, guard WHERE id = ANY (guard.run_ids) ORDER BY id FOR UPDATE OF workflow_run");
  // The ends of many nodes' runs, each guarded as wfn_end is.
  c.prepare("wfn_end_all",
            "WITH " + guard_cte("'started'::text AS started_state, $1::bigint[] AS run_ids, $2::text[] AS node_keys, "
                                "$3::bigint[] AS log_ids, $4::text[] AS states, $5::text[] AS messages, $6::bigint[] AS times, "
                                "$7::text[] AS outputs") + ", " +
                batch_values_cte("ended", "e", "unnest(guard.run_ids, guard.node_keys, guard.log_ids, guard.states, "
                                              "guard.messages, guard.times, guard.outputs) "
                                              "AS e(run_id, node_key, log_id, state, message, at, output)") +
                " UPDATE workflow_run_node n SET state = ended.state, message = ended.message, ended_at = ended.at, "
                "output = ended.output FROM guard, ended WHERE n.run_id = ended.run_id AND n.node_key = ended.node_key "
                "AND n.log_id = ended.log_id AND n.state = guard.started_state RETURNING n.run_id");
  c.prepare("wfr_nodes_all",
            "WITH " + guard_cte("$1::bigint[] AS run_ids") +
                " SELECT n.run_id, n.node_key, n.job_id, n.state, n.log_id, n.attempts, n.param, n.output, n.message, "
                "n.started_at, n.ended_at, n.kill_requested, l.state AS run_state, l.executor_address "
                "FROM guard JOIN workflow_run_node n ON n.run_id = ANY (guard.run_ids) LEFT JOIN job_log l ON l.id = n.log_id");
  c.prepare("wfn_finish_all",
            "WITH " + guard_cte("'waiting'::text AS waiting_state, $1::bigint[] AS run_ids, $2::text[] AS node_keys, "
                                "$3::text[] AS states, $4::text[] AS messages, $5::bigint[] AS times") + ", " +
                batch_values_cte("finish", "f", "unnest(guard.run_ids, guard.node_keys, guard.states, guard.messages, "
                                               "guard.times) AS f(run_id, node_key, state, message, at)") +
                " UPDATE workflow_run_node n SET state = finish.state, message = finish.message, ended_at = finish.at "
                "FROM guard, finish WHERE n.run_id = finish.run_id AND n.node_key = finish.node_key "
                "AND n.state = guard.waiting_state");
  // Many nodes' starts: the guarded transition waiting → started takes the run row's id from
  // job_log's sequence, and the run rows of exactly the nodes it moved are inserted with it.
  c.prepare("wfn_start_all",
            "WITH " + guard_cte("'waiting'::text AS waiting_state, $1::bigint[] AS run_ids, $2::text[] AS node_keys, "
                                "$3::text[] AS params, $4::bigint[] AS times, $6::bigint[] AS group_ids, "
                                "$7::bigint[] AS job_ids, $8::text[] AS handlers, $9::integer[] AS retry_counts, "
                                "$10::bigint[] AS parents, $11::bigint[] AS logical_times") + ", " +
                batch_values_cte("s", "v", "unnest(guard.run_ids, guard.node_keys, guard.params, guard.times, "
                                           "guard.group_ids, guard.job_ids, guard.handlers, guard.retry_counts, guard.parents, "
                                           "guard.logical_times) "
                                           "AS v(run_id, node_key, param, at, job_group, job_id, handler, retries, parent, logical)") +
                ", started AS (UPDATE workflow_run_node n SET state = 'started', attempts = n.attempts + 1, "
                "param = s.param, started_at = s.at, ended_at = NULL, message = '', output = NULL, kill_requested = false, "
                "log_id = nextval('job_log_id_seq') FROM guard, s WHERE n.run_id = s.run_id AND n.node_key = s.node_key "
                "AND n.state = guard.waiting_state RETURNING n.run_id, n.node_key, n.log_id) "
                "INSERT INTO job_log_active (id, job_group, job_id, state, trigger_type, scheduled_time, admin_node, executor_handler, "
                "executor_param, executor_fail_retry_count, parent_log_id, workflow_run_id, workflow_node, logical_time) "
                "SELECT started.log_id, s.job_group, s.job_id, 'pending', 'WORKFLOW', s.at, $5, s.handler, s.param, s.retries, "
                "NULLIF(s.parent, 0), s.run_id, s.node_key, NULLIF(s.logical, 0) FROM started JOIN s ON s.run_id = started.run_id "
                "AND s.node_key = started.node_key ORDER BY started.log_id RETURNING " + kLogColumns);
  c.prepare("wfr_end_all",
            "WITH " + guard_cte("'{waiting,running}'::text[] AS active_states, $1::bigint[] AS run_ids, $2::text[] AS states, "
                                "$3::bigint[] AS times, $4::text[] AS reasons") + ", " +
                batch_values_cte("ending", "e", "unnest(guard.run_ids, guard.states, guard.times, guard.reasons) "
                                               "AS e(id, state, at, reason)") +
                " UPDATE workflow_run r SET state = ending.state, ended_at = ending.at, reason = ending.reason "
                "FROM guard, ending WHERE r.id = ending.id AND r.state = ANY (guard.active_states)");
  c.prepare("wfr_waiting_workflows", "SELECT DISTINCT workflow_id FROM workflow_run WHERE state = 'waiting' "
                                     "ORDER BY workflow_id LIMIT $1");
  c.prepare("wfn_finish", "UPDATE workflow_run_node SET state = $3, message = $4, ended_at = $5 "
                          "WHERE run_id = $1 AND node_key = $2 AND state = 'waiting'");
  c.prepare("wfn_end", "UPDATE workflow_run_node SET state = $4, message = $5, ended_at = $6, output = $7 "
                       "WHERE run_id = $1 AND node_key = $2 AND log_id = $3 AND state = 'started'");
  c.prepare("wfn_kill", "UPDATE workflow_run_node SET kill_requested = true "
                        "WHERE run_id = $1 AND node_key = $2 AND state = 'started' RETURNING log_id");
  c.prepare("wfn_fire_cancel", end_runs("", "WHERE a.id = $1 AND a.state = 'pending'", "",
                                        {{"state", "'cancelled'"}, {"trigger_msg", appended_trigger_msg("$2")}}));
  c.prepare("wfn_retry",
            "UPDATE workflow_run_node n SET log_id = $4, attempts = n.attempts + 1 FROM workflow_run r "
            "WHERE n.run_id = $1 AND n.node_key = $2 AND n.log_id = $3 AND n.state = 'started' "
            "AND NOT n.kill_requested AND r.id = n.run_id AND r.state = 'running'");
  c.prepare("wfn_retry_cancel", end_runs("", "WHERE a.id = $1 AND a.state = 'pending'", "",
                                         {{"state", "'cancelled'"}, {"trigger_msg", appended_trigger_msg("$2")}}));
}

// ---------------------------------------------------------------------------------------------
// Workflows

Page<Workflow> PgWorkflowStore::list(const Filter& f) {
  KeysetList list;
  list.table = "workflow";
  list.columns = kWorkflowColumns;
  list.groups = groups_to_list(f.scope, f.job_group);
  list.page = f.page;
  if (!f.name.empty()) list.conditions.push_back("name = " + list.params.add(f.name, "text"));
  if (!f.text.empty()) {
    const auto pattern = list.params.add(contains_pattern(f.text), "text");
    list.conditions.push_back("(name ILIKE " + pattern + " OR description ILIKE " + pattern + ")");
  }
  return db_.read([&](pqxx::read_transaction& tx) { return page_from<Workflow>(read_keyset_page(tx, list), workflow_from); });
}

std::optional<Workflow> PgWorkflowStore::get(std::int64_t id) {
  return db_.read([&](pqxx::read_transaction& tx) { return first_of<Workflow>(tx.exec_prepared("wf_get", id), workflow_from); });
}

namespace {

std::vector<std::int64_t> job_ids_of(const WorkflowGraph& graph) {
  std::set<std::int64_t> ids;
  for (const auto& n : graph.nodes) ids.insert(n.job_id);
  return {ids.begin(), ids.end()};
}

// The graph's jobs exist (locked against deletion until commit) and are recorded as the
// workflow's, so none of them can be deleted while it names them.
void record_jobs(pqxx::work& tx, std::int64_t workflow_id, const WorkflowGraph& graph) {
  const auto ids = job_ids_of(graph);
  std::set<std::int64_t> existing;
  for (const auto& row : tx.exec_prepared("wf_jobs_existing", bigint_array(ids))) existing.insert(row[0].as<std::int64_t>());
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    if (!existing.count(graph.nodes[i].job_id)) {
      throw Conflict("node " + graph.nodes[i].key + ": job " + std::to_string(graph.nodes[i].job_id) + " does not exist",
                     "nodes[" + std::to_string(i) + "].jobId");
    }
  }
  tx.exec_prepared("wf_jobs_clear", workflow_id);
  tx.exec_prepared("wf_jobs_insert", workflow_id, bigint_array(ids));
}

}  // namespace

Workflow PgWorkflowStore::create(const Workflow& w, const Actor& actor) {
  const auto now = clock_.now_ms();
  return mapped([&] {
    return db_.transact([&](pqxx::work& tx) {
      Workflow created = workflow_from(tx.exec_prepared1(
          "wf_insert", w.job_group, w.name, w.description, w.author, w.alarm_email, text(w.schedule_type), w.schedule_conf,
          w.timezone, text(w.misfire_strategy), text(w.overlap), w.max_parallel, w.timeout_seconds,
          params_json(w.params).dump(), graph_json(w.graph).dump(), now, w.calendar.calendar_id, text(w.calendar.mode)));
      record_jobs(tx, created.id, created.graph);
      write_audit(tx, now, actor, "workflow.create", "workflow", created.id, std::nullopt, to_json(created));
      return created;
    });
  });
}

Workflow PgWorkflowStore::update(const Workflow& w, int trigger_status, std::int64_t next_time, const Actor& actor) {
  const auto now = clock_.now_ms();
  return mapped([&] {
    return db_.transact([&](pqxx::work& tx) {
      auto before_row = tx.exec_prepared("wf_lock", w.id);
      if (before_row.empty()) throw NotFound("workflow " + std::to_string(w.id) + " does not exist");
      const Workflow before = workflow_from(before_row[0]);
      auto rows = tx.exec_prepared("wf_update", w.id, w.job_group, w.name, w.description, w.author, w.alarm_email,
                                   text(w.schedule_type), w.schedule_conf, w.timezone, text(w.misfire_strategy),
                                   text(w.overlap), w.max_parallel, w.timeout_seconds, params_json(w.params).dump(),
                                   graph_json(w.graph).dump(), trigger_status, next_time, now, w.version,
                                   w.calendar.calendar_id, text(w.calendar.mode));
      if (rows.empty()) {
        throw Conflict("workflow " + std::to_string(w.id) + " was changed meanwhile (version " +
                           std::to_string(before.version) + ", not " + std::to_string(w.version) + "): read it again",
                       "version");
      }
      Workflow after = workflow_from(rows[0]);
      record_jobs(tx, after.id, after.graph);
      write_audit(tx, now, actor, "workflow.update", "workflow", after.id, to_json(before), to_json(after));
      return after;
    });
  });
}

void PgWorkflowStore::remove(std::int64_t id, const Actor& actor) {
  const auto now = clock_.now_ms();
  mapped([&] {
    db_.transact([&](pqxx::work& tx) {
      auto row = tx.exec_prepared("wf_lock", id);
      if (row.empty()) throw NotFound("workflow " + std::to_string(id) + " does not exist");
      auto active = tx.exec_prepared("wfr_any_active", id);
      if (!active.empty()) {
        throw Conflict("run " + active[0][0].as<std::string>() + " of the workflow is waiting or running: cancel it first");
      }
      const Workflow before = workflow_from(row[0]);
      tx.exec_prepared("wf_delete", id);
      write_audit(tx, now, actor, "workflow.delete", "workflow", id, to_json(before), std::nullopt);
    });
  });
}

Workflow PgWorkflowStore::set_status(std::int64_t id, int status, std::int64_t next_time, const Actor& actor) {
  const auto now = clock_.now_ms();
  return mapped([&] {
    return db_.transact([&](pqxx::work& tx) {
      auto before_row = tx.exec_prepared("wf_lock", id);
      if (before_row.empty()) throw NotFound("workflow " + std::to_string(id) + " does not exist");
      const Workflow before = workflow_from(before_row[0]);
      Workflow after = workflow_from(tx.exec_prepared1("wf_status", id, status, next_time, now));
      write_audit(tx, now, actor, status == 1 ? "workflow.start" : "workflow.stop", "workflow", id, to_json(before),
                  to_json(after));
      return after;
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Runs

WorkflowStore::Changed PgWorkflowStore::trigger(const TriggerRequest& r) {
  return mapped([&] {
    return db_.transact([&](pqxx::work& tx) {
      auto row = tx.exec_prepared("wf_lock", r.workflow_id);
      if (row.empty()) throw NotFound("workflow " + std::to_string(r.workflow_id) + " does not exist");
      const Workflow wf = workflow_from(row[0]);
      RunSteps steps(tx, r.node_id);
      steps.create(wf, r.now, r.trigger_type, r.params_json, r.now, r.actor.username);
      const WorkflowRun& run = steps.changed().runs.front();
      write_audit(tx, r.now, r.actor, "workflow.trigger", "workflow", wf.id, std::nullopt,
                  nlohmann::json{{"runId", run.id}, {"state", to_string(run.state)}, {"params", params_object(r.params_json)}});
      return std::move(steps.changed());
    });
  });
}

WorkflowStore::Changed PgWorkflowStore::scan(std::string_view node, std::int64_t now, std::int64_t due_before, int limit,
                                             const Decide& decide) {
  return db_.transact([&](pqxx::work& tx) {
    tx.exec_prepared("wf_scan_lock");
    std::vector<DueJob> due;
    for (const auto& row : tx.exec_prepared("wf_due", due_before, limit)) {
      Fields fields(row);
      DueJob d;
      d.id = fields["id"].as<std::int64_t>();
      d.schedule_type = enum_of<ScheduleType>(fields["schedule_type"]);
      d.schedule_conf = fields["schedule_conf"].as<std::string>();
      d.timezone = fields["timezone"].as<std::string>();
      d.misfire_strategy = enum_of<MisfireStrategy>(fields["misfire_strategy"]);
      d.trigger_last_time = fields["trigger_last_time"].as<std::int64_t>();
      d.trigger_next_time = fields["trigger_next_time"].as<std::int64_t>();
      due_calendar(fields, d);
      due.push_back(d);
    }
    RunSteps steps(tx, std::string(node));
    if (due.empty()) return std::move(steps.changed());
    read_calendar_versions(tx, "wf_calendar_versions", due);
    const ScanDecision decision = decide(due);
    std::map<std::int64_t, Workflow> advanced;
    for (const auto& a : decision.jobs) {
      auto rows = tx.exec_prepared("wf_advance", a.job_id, a.last_time, a.next_time, a.trigger_status, a.read_next_time);
      if (!rows.empty()) advanced.emplace(a.job_id, workflow_from(rows[0]));
    }
    for (const auto& fire : decision.fires) {
      auto wf = advanced.find(fire.job_id);
      if (wf == advanced.end()) continue;
      nlohmann::json params = nlohmann::json::object();
      for (const auto& p : wf->second.params) params[p.name] = p.default_value;
      steps.create(wf->second, fire.scheduled_time, fire.trigger_type, params.dump(), now, "system");
    }
    return std::move(steps.changed());
  });
}

Page<WorkflowRun> PgWorkflowStore::list_runs(const RunFilter& f) {
  KeysetList list;
  list.table = "workflow_run";
  list.columns = kRunListColumns;
  list.groups = groups_to_list(f.scope, f.job_group);
  list.page = f.page;
  if (f.workflow_id) list.conditions.push_back("workflow_id = " + list.params.add(*f.workflow_id));
  if (f.state) list.conditions.push_back("state = " + list.params.add(std::string(to_string(*f.state)), "text"));
  if (f.backfill_id) list.conditions.push_back("backfill_id = " + list.params.add(*f.backfill_id));
  return db_.read([&](pqxx::read_transaction& tx) { return page_from<WorkflowRun>(read_keyset_page(tx, list), run_from); });
}

std::optional<WorkflowStore::RunDetail> PgWorkflowStore::get_run(std::int64_t id) {
  return db_.read([&](pqxx::read_transaction& tx) -> std::optional<RunDetail> {
    auto rows = tx.exec_prepared("wfr_get", id);
    if (rows.empty()) return std::nullopt;
    RunDetail d;
    d.run = run_from(rows[0]);
    for (auto& n : read_nodes(tx, d.run)) d.nodes.push_back(std::move(n.node));
    return d;
  });
}

WorkflowStore::RunChange PgWorkflowStore::cancel(std::int64_t run_id, std::int64_t now, std::string_view node,
                                                 const Actor& actor) {
  return db_.transact([&](pqxx::work& tx) {
    RunChange out;
    auto rows = tx.exec_prepared("wfr_lock", run_id);
    if (rows.empty()) return out;
    WorkflowRun run = run_from(rows[0]);
    if (is_final(run.state)) {
      out.status = RunChange::Status::kRefused;
      out.reason = "run " + std::to_string(run_id) + " has ended (" + quoted_state(run.state) + ")";
      return out;
    }
    RunSteps steps(tx, std::string(node));
    steps.stop(run, WorkflowRunState::kCancelled, "cancelled by " + actor.username, now);
    write_audit(tx, now, actor, "workflow_run.cancel", "workflow_run", run_id,
                nlohmann::json{{"state", rows[0]["state"].as<std::string>()}}, nlohmann::json{{"state", "cancelled"}});
    steps.changed().runs.insert(steps.changed().runs.begin(), run_from(tx.exec_prepared1("wfr_get", run_id)));
    out.status = RunChange::Status::kChanged;
    out.changed = std::move(steps.changed());
    return out;
  });
}

WorkflowStore::RunChange PgWorkflowStore::rerun(std::int64_t run_id, std::string_view from, std::int64_t now,
                                                std::string_view node, const Actor& actor) {
  return db_.transact([&](pqxx::work& tx) {
    RunChange out;
    auto rows = tx.exec_prepared("wfr_lock", run_id);
    if (rows.empty()) return out;
    WorkflowRun run = run_from(rows[0]);
    out.status = RunChange::Status::kRefused;
    if (run.state != WorkflowRunState::kFailed && run.state != WorkflowRunState::kTimedOut &&
        run.state != WorkflowRunState::kCancelled) {
      out.reason = "run " + std::to_string(run_id) + " is " + quoted_state(run.state) +
                   ": only a failed, timed-out or cancelled run is run again";
      return out;
    }
    const auto nodes = read_nodes(tx, run);
    const RerunPlan plan = plan_rerun(run.graph, plan_nodes(nodes), from);
    if (!plan.error.empty()) {
      out.reason = plan.error;
      return out;
    }
    auto wf_rows = tx.exec_prepared("wf_lock", run.workflow_id);
    if (wf_rows.empty()) return RunChange{};
    const Workflow wf = workflow_from(wf_rows[0]);
    const auto counts = tx.exec_prepared1("wfr_active", wf.id);
    const std::int64_t limit = wf.overlap == OverlapPolicy::kParallel ? wf.max_parallel : 1;
    // A backfill's run is outside the overlap policy (workflow_store.h).
    if (!run.backfill_id && counts["running"].as<std::int64_t>() >= limit) {
      out.reason = "run " + counts["oldest"].as<std::string>() + " of the workflow is running, and its overlap policy (" +
                   std::string(to_string(wf.overlap)) + ") allows " + std::to_string(limit) + " at a time";
      return out;
    }
    tx.exec_prepared("wfr_reset_nodes", run_id, text_array(plan.reset));
    std::optional<std::int64_t> deadline;
    if (wf.timeout_seconds > 0) deadline = now + std::int64_t{wf.timeout_seconds} * 1000;
    tx.exec_prepared("wfr_start", run_id, run.started_at.value_or(now), deadline,
                     "run again from node " + std::string(from) + " by " + actor.username);
    run = run_from(tx.exec_prepared1("wfr_get", run_id));
    RunSteps steps(tx, std::string(node));
    steps.step(run, now);
    write_audit(tx, now, actor, "workflow_run.rerun", "workflow_run", run_id, std::nullopt,
                nlohmann::json{{"from", from}, {"nodes", plan.reset}});
    steps.changed().runs.insert(steps.changed().runs.begin(), run_from(tx.exec_prepared1("wfr_get", run_id)));
    out.status = RunChange::Status::kChanged;
    out.changed = std::move(steps.changed());
    return out;
  });
}

WorkflowStore::Changed PgWorkflowStore::time_out(std::int64_t now, std::string_view node, int limit) {
  const auto ids = db_.read([&](pqxx::read_transaction& tx) {
    std::vector<std::int64_t> out;
    for (const auto& row : tx.exec_prepared("wfr_timeouts", now, limit)) out.push_back(row[0].as<std::int64_t>());
    return out;
  });
  Changed all;
  for (auto id : ids) {
    Changed one = db_.transact([&](pqxx::work& tx) {
      RunSteps steps(tx, std::string(node));
      auto rows = tx.exec_prepared("wfr_lock", id);
      if (rows.empty()) return std::move(steps.changed());
      WorkflowRun run = run_from(rows[0]);
      if (run.state != WorkflowRunState::kRunning || !run.deadline || *run.deadline > now) return std::move(steps.changed());
      const auto seconds = (*run.deadline - run.started_at.value_or(*run.deadline)) / 1000;
      steps.stop(run, WorkflowRunState::kTimedOut, "timed out: still running " + std::to_string(seconds) + " s after it started", now);
      steps.changed().runs.insert(steps.changed().runs.begin(), run_from(tx.exec_prepared1("wfr_get", id)));
      return std::move(steps.changed());
    });
    all.fires.insert(all.fires.end(), one.fires.begin(), one.fires.end());
    all.runs.insert(all.runs.end(), one.runs.begin(), one.runs.end());
  }
  return all;
}

WorkflowStore::Changed PgWorkflowStore::start_waiting(std::int64_t now, std::string_view node, int limit) {
  const auto ids = db_.read([&](pqxx::read_transaction& tx) {
    std::vector<std::int64_t> out;
    for (const auto& row : tx.exec_prepared("wfr_waiting_workflows", limit)) out.push_back(row[0].as<std::int64_t>());
    return out;
  });
  Changed all;
  for (auto id : ids) {
    Changed one = db_.transact([&](pqxx::work& tx) {
      RunSteps steps(tx, std::string(node));
      auto row = tx.exec_prepared("wf_lock", id);
      if (!row.empty()) steps.start_waiting(workflow_from(row[0]), now);
      return std::move(steps.changed());
    });
    all.fires.insert(all.fires.end(), one.fires.begin(), one.fires.end());
    all.runs.insert(all.runs.end(), one.runs.begin(), one.runs.end());
  }
  return all;
}

std::vector<std::pair<WorkflowRunState, std::int64_t>> PgWorkflowStore::count_runs() {
  return db_.read([&](pqxx::read_transaction& tx) {
    std::vector<std::pair<WorkflowRunState, std::int64_t>> out;
    for (const auto& row : tx.exec_prepared("wfr_count_by_state")) {
      if (auto state = parse_workflow_run_state(row[0].as<std::string>())) out.emplace_back(*state, row[1].as<std::int64_t>());
    }
    return out;
  });
}

std::vector<JobLog> PgWorkflowStore::kill_candidates(int limit) {
  return db_.read([&](pqxx::read_transaction& tx) { return all_of<JobLog>(tx.exec_prepared("wfr_kill_candidates", limit), log_from); });
}

std::vector<WorkflowStore::Alarm> PgWorkflowStore::claim_alarms(std::int64_t now, std::int64_t stale_ms, int limit) {
  return db_.transact([&](pqxx::work& tx) {
    std::vector<Alarm> out;
    std::map<std::int64_t, std::optional<Workflow>> workflows;
    for (const auto& row : tx.exec_prepared("wfr_alarm_candidates", now - stale_ms, limit)) {
      const auto id = row[0].as<std::int64_t>();
      RunDetail detail;
      detail.run = run_from(tx.exec_prepared1("wfr_get", id));
      auto wf = workflows.find(detail.run.workflow_id);
      if (wf == workflows.end()) {
        wf = workflows.emplace(detail.run.workflow_id,
                               first_of<Workflow>(tx.exec_prepared("wf_get", detail.run.workflow_id), workflow_from))
                 .first;
      }
      auto channels = all_of<AlarmChannel>(tx.exec_prepared("wfr_alarm_channels", detail.run.job_group), channel_from);
      if (!wf->second || (wf->second->alarm_email.empty() && channels.empty())) {
        tx.exec_prepared("wfr_alarm_decide", id, kAlarmNotNeeded, std::optional<std::int64_t>());
        continue;
      }
      tx.exec_prepared("wfr_alarm_decide", id, kAlarmClaimed, now);
      for (auto& n : read_nodes(tx, detail.run)) detail.nodes.push_back(std::move(n.node));
      out.push_back({std::move(detail), *wf->second, std::move(channels), now});
    }
    return out;
  });
}

void PgWorkflowStore::finish_alarm(std::int64_t run_id, std::int64_t claimed_at, AlarmOutcome outcome) {
  db_.transact([&](pqxx::work& tx) {
    tx.exec_prepared("wfr_alarm_finish", run_id, claimed_at, outcome == AlarmOutcome::kSent ? kAlarmSent : kAlarmFailed);
  });
}

// ---------------------------------------------------------------------------------------------
// Ends of nodes' runs, inside other stores' transactions

namespace pg {

void lock_workflow_runs(pqxx::work& tx, const std::vector<JobLog>& runs) {
  std::vector<std::int64_t> ids;
  for (const auto& r : runs) {
    if (r.workflow_run_id) ids.push_back(*r.workflow_run_id);
  }
  if (ids.size() > 1) tx.exec_prepared("wfr_lock_rows", bigint_array(ids));
}

std::vector<JobLog> record_workflow_node_end(pqxx::work& tx, const WorkflowNodeEnd& end, const JobLog& run) {
  std::vector<JobLog> out;
  for (auto& [index, fire] : record_workflow_node_ends(tx, {{0, end, &run}})) out.push_back(std::move(fire));
  return out;
}

std::vector<std::pair<std::size_t, JobLog>> record_workflow_node_ends(pqxx::work& tx, const std::vector<EndedNode>& ends) {
  std::vector<std::pair<std::size_t, JobLog>> out;
  if (ends.empty()) return out;
  // 1. The runs, locked in id order (the same order as every batch's), read once.
  std::vector<std::int64_t> run_ids;
  for (const auto& e : ends) run_ids.push_back(e.end.workflow_run_id);
  std::map<std::int64_t, WorkflowRun> runs;
  for (const auto& row : tx.exec_prepared("wfr_lock_rows", bigint_array(run_ids))) {
    WorkflowRun r = run_from(row);
    runs.emplace(r.id, std::move(r));
  }
  // 2. The nodes' ends, guarded: still started, with this run as their current one.
  std::vector<std::int64_t> end_runs, end_logs, end_times;
  std::vector<std::string> end_keys, end_states, end_messages, end_outputs;
  std::map<std::int64_t, std::size_t> last_end_of;  // run → the index of its last end in the batch
  std::map<std::int64_t, std::int64_t> now_of;
  for (const auto& e : ends) {
    std::string message = e.end.message;
    end_outputs.push_back(node_output_text(*e.run, message));
    end_runs.push_back(e.end.workflow_run_id);
    end_keys.push_back(e.end.node);
    end_logs.push_back(e.end.log_id);
    end_states.push_back(text(e.end.state));
    end_messages.push_back(std::move(message));
    end_times.push_back(e.end.now);
    last_end_of[e.end.workflow_run_id] = e.index;
    now_of[e.end.workflow_run_id] = std::max(now_of[e.end.workflow_run_id], e.end.now);
  }
  std::set<std::int64_t> moved;
  for (const auto& row : tx.exec_prepared("wfn_end_all", bigint_array(end_runs), text_array(end_keys), bigint_array(end_logs),
                                          text_array(end_states), text_array(end_messages), bigint_array(end_times),
                                          text_array(end_outputs))) {
    moved.insert(row[0].as<std::int64_t>());
  }
  // 3. The next step of every running run a node of which ended, planned from its nodes as
  //    they are now, read in one statement.
  std::vector<std::int64_t> stepping;
  for (auto id : moved) {
    auto r = runs.find(id);
    if (r != runs.end() && r->second.state == WorkflowRunState::kRunning) stepping.push_back(id);
  }
  if (stepping.empty()) return out;
  std::map<std::int64_t, std::vector<NodeRow>> nodes_of;
  for (const auto& row : tx.exec_prepared("wfr_nodes_all", bigint_array(stepping))) {
    nodes_of[row["run_id"].as<std::int64_t>()].push_back(node_from(row));
  }
  struct Planned {
    std::int64_t run_id;
    WorkflowStep step;
  };
  std::vector<Planned> plans;
  std::vector<std::int64_t> job_ids;
  for (auto id : stepping) {
    const WorkflowRun& run = runs.at(id);
    Planned p{id, plan_workflow_step(run.graph, params_object(run.params), plan_nodes(nodes_of[id]))};
    for (const auto& s : p.step.start) job_ids.push_back(s.job_id);
    plans.push_back(std::move(p));
  }
  const auto jobs = read_node_jobs(tx, job_ids);
  // 4. Written set-wise: the nodes that end without running, the nodes that start with their
  //    run rows, the runs that end. A run one of whose nodes' jobs is gone takes the step the
  //    one-run way, which fails that node and plans again.
  std::vector<std::int64_t> fin_runs, fin_times, end_ids, end_at;
  std::vector<std::string> fin_keys, fin_states, fin_messages, end_run_states, end_reasons;
  NodeStarts starts;
  std::string node_id = ends.front().end.node_id;
  for (auto& p : plans) {
    const WorkflowRun& run = runs.at(p.run_id);
    const std::int64_t now = now_of[p.run_id];
    bool missing = false;
    for (const auto& s : p.step.start) missing = missing || !jobs.count(s.job_id);
    if (missing) {
      RunSteps steps(tx, node_id);
      WorkflowRun copy = run;
      steps.step(copy, now);
      for (auto& f : steps.changed().fires) out.emplace_back(last_end_of[p.run_id], std::move(f));
      continue;
    }
    for (const auto& f : p.step.finish) {
      fin_runs.push_back(p.run_id);
      fin_keys.push_back(f.key);
      fin_states.push_back(text(f.state));
      fin_messages.push_back(f.message);
      fin_times.push_back(now);
    }
    for (const auto& key : p.step.kill) kill_node(tx, p.run_id, key, now);
    for (const auto& st : p.step.start) {
      const NodeJob& job = jobs.at(st.job_id);
      starts.add(run, st.key, st.param.value_or(job.param), now, job, st.job_id,
                 latest_parent_run(run.graph, st.key, nodes_of[p.run_id]));
    }
    if (p.step.run_end) {
      end_ids.push_back(p.run_id);
      end_run_states.push_back(text(*p.step.run_end));
      end_at.push_back(now);
      end_reasons.push_back(p.step.reason);
    }
  }
  if (!fin_runs.empty()) {
    tx.exec_prepared("wfn_finish_all", bigint_array(fin_runs), text_array(fin_keys), text_array(fin_states),
                     text_array(fin_messages), bigint_array(fin_times));
  }
  for (auto& fire : starts.write(tx, node_id)) {
    const auto index = last_end_of[*fire.workflow_run_id];
    out.emplace_back(index, std::move(fire));
  }
  if (!end_ids.empty()) {
    tx.exec_prepared("wfr_end_all", bigint_array(end_ids), text_array(end_run_states), bigint_array(end_at),
                     text_array(end_reasons));
  }
  return out;
}

WorkflowStore::Changed write_backfill_runs(pqxx::work& tx, const Workflow& workflow, std::int64_t backfill_id,
                                           const std::vector<std::int64_t>& instants, const std::string& params_json,
                                           std::int64_t now, const std::string& node_id, const std::string& created_by) {
  std::vector<std::int64_t> ordered = instants;
  std::sort(ordered.begin(), ordered.end());
  RunSteps steps(tx, node_id);
  for (const std::int64_t instant : ordered) steps.create_backfill(workflow, backfill_id, instant, params_json, now, created_by);
  return std::move(steps.changed());
}

JobLog record_workflow_retry(pqxx::work& tx, const JobLog& failed, JobLog retry) {
  if (!failed.workflow_run_id) return retry;
  tx.exec_prepared("wfr_lock", *failed.workflow_run_id);
  if (tx.exec_prepared("wfn_retry", *failed.workflow_run_id, failed.workflow_node, failed.id, retry.id).affected_rows() > 0) {
    return retry;
  }
  auto cancelled = tx.exec_prepared("wfn_retry_cancel", retry.id, "not retried: its workflow run has ended");
  std::string message = "run " + std::to_string(failed.id) + " failed; no retry: its workflow run has ended";
  const std::string output = node_output_text(failed, message);
  tx.exec_prepared("wfn_end", *failed.workflow_run_id, failed.workflow_node, failed.id, text(NodeState::kFailed), message,
                   retry.scheduled_time, output);
  return cancelled.empty() ? retry : log_from(cancelled[0]);
}

}  // namespace pg
}  // namespace cronwheel::admin
