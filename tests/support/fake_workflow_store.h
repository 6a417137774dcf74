#pragma once

// An in-memory WorkflowStore with the semantics of PgWorkflowStore (admin/pg/pg_workflow_store.h):
// the same planner (admin/model/workflow_plan.h) decides every step, and the contract suite
// (tests/support/workflow_contract_tests.h) runs against both. Jobs are read from the JobStore
// given; node runs are rows of this fake (node_run()), moved by the test as the trigger and
// completion stores move them in PostgreSQL (sent(), end_node_run()).
//
// A backfill's runs are written through write_backfill_runs() by FakeBackfillStore, as
// PgBackfillStore writes them through pg::write_backfill_runs; they are outside the overlap
// policy as in PostgreSQL.
//
// What it leaves out: alarm channels (claim_alarms sees the workflow's alarm addresses only),
// retries of node runs (a node's run ends its node), and the check that a workflow's calendar
// exists (it keeps the CalendarUse as given; PostgreSQL refuses a calendar that does not exist
// with Conflict on calendarId).
//
// Thread-safe: one mutex.

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "admin/model/stores.h"
#include "admin/model/workflow_json.h"
#include "admin/model/workflow_plan.h"
#include "admin/model/workflow_store.h"
#include "admin/model/workflow_template.h"
#include "common/util/clock.h"

namespace cronwheel::testing {

class FakeWorkflowStore final : public admin::WorkflowStore {
 public:
  FakeWorkflowStore(admin::JobStore& jobs, common::Clock& clock) : jobs_(jobs), clock_(clock) {}

  // pending → triggered, as a send does.
  void sent(std::int64_t log_id) {
    std::lock_guard lock(mutex_);
    auto it = logs_.find(log_id);
    if (it != logs_.end() && it->second.state == admin::FireState::kPending) {
      it->second.state = admin::FireState::kTriggered;
      it->second.trigger_time = clock_.now_ms();
    }
  }
  // A node run's result as the completion records it: the run ends, its node ends, and the
  // planner's next step is written. Answers the fires it led to.
  std::vector<admin::JobLog> end_node_run(std::int64_t log_id, bool ok, const std::string& message,
                                          std::optional<std::string> output, std::int64_t now, const std::string& node) {
    std::lock_guard lock(mutex_);
    auto it = logs_.find(log_id);
    if (it == logs_.end() || (it->second.state != admin::FireState::kTriggered && it->second.state != admin::FireState::kSending)) {
      return {};
    }
    admin::JobLog& run = it->second;
    run.state = ok ? admin::FireState::kSucceeded : admin::FireState::kFailed;
    run.handle_time = now;
    run.handle_code = ok ? 200 : 500;
    run.handle_msg = message;
    run.output = std::move(output);
    Steps steps(*this, node);
    auto r = runs_.find(*run.workflow_run_id);
    if (r == runs_.end()) return {};
    Node* n = node_of(r->second, run.workflow_node);
    if (n == nullptr || n->node.state != admin::NodeState::kStarted || n->node.log_id != run.id) return {};
    n->node.state = ok ? admin::NodeState::kSucceeded : admin::NodeState::kFailed;
    n->node.message = ok ? "" : "run " + std::to_string(run.id) + " failed" + (message.empty() ? "" : ": " + message);
    n->node.ended_at = now;
    n->node.output = admin::node_output_value(run.output, run.handle_msg).dump();
    if (r->second.run.state == admin::WorkflowRunState::kRunning) steps.step(r->second, now);
    return steps.changed.fires;
  }
  std::optional<admin::JobLog> node_run(std::int64_t log_id) {
    std::lock_guard lock(mutex_);
    auto it = logs_.find(log_id);
    if (it == logs_.end()) return std::nullopt;
    return it->second;
  }

  // For FakeBackfillStore (pg::write_backfill_runs' counterpart): a running BACKFILL run of
  // workflow `workflow_id` at each of `instants` backfill `backfill_id` has none at yet, oldest
  // first, outside the overlap policy, its first nodes started with the instant as their logical
  // time. Nothing when the workflow is gone.
  Changed write_backfill_runs(std::int64_t workflow_id, std::int64_t backfill_id, std::vector<std::int64_t> instants,
                              const std::string& params, std::int64_t now, const std::string& node,
                              const std::string& created_by) {
    std::lock_guard lock(mutex_);
    Steps steps(*this, node);
    auto wf = workflows_.find(workflow_id);
    if (wf == workflows_.end()) return steps.changed;
    std::sort(instants.begin(), instants.end());
    for (const std::int64_t instant : instants) {
      bool exists = false;
      for (const auto& [id, r] : runs_) exists = exists || (r.run.backfill_id == backfill_id && r.run.scheduled_time == instant);
      if (exists) continue;  // workflow_run_backfill_fire
      steps.create_backfill(wf->second, backfill_id, instant, params, now, created_by);
    }
    return steps.changed;
  }
  // The backfill's runs waiting or running.
  std::int64_t backfill_unfinished(std::int64_t backfill_id) {
    std::lock_guard lock(mutex_);
    std::int64_t n = 0;
    for (const auto& [id, r] : runs_) {
      if (r.run.backfill_id == backfill_id && !admin::is_final(r.run.state)) ++n;
    }
    return n;
  }
  // The states of the backfill's runs, by run id.
  std::vector<admin::WorkflowRunState> backfill_run_states(std::int64_t backfill_id) {
    std::lock_guard lock(mutex_);
    std::vector<admin::WorkflowRunState> out;
    for (const auto& [id, r] : runs_) {
      if (r.run.backfill_id == backfill_id) out.push_back(r.run.state);
    }
    return out;
  }
  // Of `instants`, those at which the workflow has a run of its schedule or of a backfill that
  // started or waits to (BackfillStore::existing_workflow_runs).
  std::set<std::int64_t> existing_runs(std::int64_t workflow_id, const std::vector<std::int64_t>& instants) {
    std::lock_guard lock(mutex_);
    const std::set<std::int64_t> asked(instants.begin(), instants.end());
    std::set<std::int64_t> found;
    for (const auto& [id, r] : runs_) {
      const auto& run = r.run;
      if (run.workflow_id != workflow_id || !asked.count(run.scheduled_time)) continue;
      if (run.trigger_type != admin::TriggerType::kSchedule && run.trigger_type != admin::TriggerType::kMisfire &&
          run.trigger_type != admin::TriggerType::kBackfill) {
        continue;
      }
      if (run.state == admin::WorkflowRunState::kSkipped) continue;
      if (run.state == admin::WorkflowRunState::kCancelled && !run.started_at) continue;
      found.insert(run.scheduled_time);
    }
    return found;
  }

  admin::Page<admin::Workflow> list(const Filter& f) override {
    std::lock_guard lock(mutex_);
    std::vector<admin::Workflow> all;
    for (auto it = workflows_.rbegin(); it != workflows_.rend(); ++it) {
      const auto& w = it->second;
      if (f.scope && std::find(f.scope->begin(), f.scope->end(), w.job_group) == f.scope->end()) continue;
      if (f.job_group && w.job_group != *f.job_group) continue;
      if (!f.name.empty() && w.name != f.name) continue;
      if (!f.text.empty() && !contains(w.name, f.text) && !contains(w.description, f.text)) continue;
      all.push_back(w);
    }
    return page(all, f.page);
  }
  std::optional<admin::Workflow> get(std::int64_t id) override {
    std::lock_guard lock(mutex_);
    auto it = workflows_.find(id);
    if (it == workflows_.end()) return std::nullopt;
    return it->second;
  }
  admin::Workflow create(const admin::Workflow& w, const admin::Actor&) override {
    std::lock_guard lock(mutex_);
    check_unique(w, 0);
    check_jobs(w.graph);
    admin::Workflow created = w;
    created.id = next_workflow_++;
    created.version = 1;
    created.trigger_status = 0;
    created.trigger_last_time = created.trigger_next_time = 0;
    created.created_at = created.updated_at = clock_.now_ms();
    workflows_[created.id] = created;
    return created;
  }
  admin::Workflow update(const admin::Workflow& w, int trigger_status, std::int64_t next_time, const admin::Actor&) override {
    std::lock_guard lock(mutex_);
    auto it = workflows_.find(w.id);
    if (it == workflows_.end()) throw admin::NotFound("workflow " + std::to_string(w.id) + " does not exist");
    if (it->second.version != w.version) {
      throw admin::Conflict("workflow " + std::to_string(w.id) + " was changed meanwhile (version " +
                                std::to_string(it->second.version) + ", not " + std::to_string(w.version) + "): read it again",
                            "version");
    }
    check_unique(w, w.id);
    check_jobs(w.graph);
    admin::Workflow after = w;
    after.version = it->second.version + 1;
    after.trigger_status = trigger_status;
    after.trigger_next_time = next_time;
    after.trigger_last_time = it->second.trigger_last_time;
    after.created_at = it->second.created_at;
    after.updated_at = clock_.now_ms();
    it->second = after;
    return after;
  }
  void remove(std::int64_t id, const admin::Actor&) override {
    std::lock_guard lock(mutex_);
    if (!workflows_.count(id)) throw admin::NotFound("workflow " + std::to_string(id) + " does not exist");
    for (const auto& [run_id, r] : runs_) {
      if (r.run.workflow_id == id && !admin::is_final(r.run.state)) {
        throw admin::Conflict("run " + std::to_string(run_id) + " of the workflow is waiting or running: cancel it first");
      }
    }
    workflows_.erase(id);
    for (auto it = runs_.begin(); it != runs_.end();) it = it->second.run.workflow_id == id ? runs_.erase(it) : std::next(it);
  }
  admin::Workflow set_status(std::int64_t id, int status, std::int64_t next_time, const admin::Actor&) override {
    std::lock_guard lock(mutex_);
    auto it = workflows_.find(id);
    if (it == workflows_.end()) throw admin::NotFound("workflow " + std::to_string(id) + " does not exist");
    it->second.trigger_status = status;
    it->second.trigger_next_time = next_time;
    it->second.updated_at = clock_.now_ms();
    return it->second;
  }

  Changed trigger(const TriggerRequest& r) override {
    std::lock_guard lock(mutex_);
    auto it = workflows_.find(r.workflow_id);
    if (it == workflows_.end()) throw admin::NotFound("workflow " + std::to_string(r.workflow_id) + " does not exist");
    Steps steps(*this, r.node_id);
    steps.create(it->second, r.now, r.trigger_type, r.params_json, r.now, r.actor.username);
    return steps.changed;
  }
  Changed scan(std::string_view node, std::int64_t now, std::int64_t due_before, int limit, const Decide& decide) override {
    std::lock_guard lock(mutex_);
    std::vector<admin::DueJob> due;
    std::vector<admin::Workflow*> by_time;
    for (auto& [id, w] : workflows_) {
      if (w.trigger_status == 1 && w.trigger_next_time <= due_before) by_time.push_back(&w);
    }
    std::sort(by_time.begin(), by_time.end(), [](auto* a, auto* b) {
      return std::tie(a->trigger_next_time, a->id) < std::tie(b->trigger_next_time, b->id);
    });
    if (by_time.size() > static_cast<std::size_t>(limit)) by_time.resize(static_cast<std::size_t>(limit));
    for (auto* w : by_time) {
      // Due workflows come without their calendar here (PgWorkflowStore reads it, and the
      // workflow_pgtest cases cover it), and with Quartz's DST rules (workflows have no policy).
      due.push_back({w->id, w->schedule_type, w->schedule_conf, w->timezone, w->misfire_strategy, w->trigger_last_time,
                     w->trigger_next_time, 0, common::CalendarMode::kSkip, 0, common::DstPolicy{}});
    }
    Steps steps(*this, std::string(node));
    if (due.empty()) return steps.changed;
    const auto decision = decide(due);
    std::set<std::int64_t> advanced;
    for (const auto& a : decision.jobs) {
      auto& w = workflows_.at(a.job_id);
      if (w.trigger_status != 1 || w.trigger_next_time != a.read_next_time) continue;
      w.trigger_last_time = a.last_time;
      w.trigger_next_time = a.next_time;
      w.trigger_status = a.trigger_status;
      advanced.insert(a.job_id);
    }
    for (const auto& fire : decision.fires) {
      if (!advanced.count(fire.job_id)) continue;
      const auto& w = workflows_.at(fire.job_id);
      nlohmann::json params = nlohmann::json::object();
      for (const auto& p : w.params) params[p.name] = p.default_value;
      steps.create(w, fire.scheduled_time, fire.trigger_type, params.dump(), now, "system");
    }
    return steps.changed;
  }

  admin::Page<admin::WorkflowRun> list_runs(const RunFilter& f) override {
    std::lock_guard lock(mutex_);
    std::vector<admin::WorkflowRun> all;
    for (auto it = runs_.rbegin(); it != runs_.rend(); ++it) {
      const auto& run = it->second.run;
      if (f.scope && std::find(f.scope->begin(), f.scope->end(), run.job_group) == f.scope->end()) continue;
      if (f.workflow_id && run.workflow_id != *f.workflow_id) continue;
      if (f.job_group && run.job_group != *f.job_group) continue;
      if (f.state && run.state != *f.state) continue;
      if (f.backfill_id && run.backfill_id != *f.backfill_id) continue;
      admin::WorkflowRun listed = run;
      listed.graph = {};  // lists carry no graph
      all.push_back(listed);
    }
    return page(all, f.page);
  }
  std::optional<RunDetail> get_run(std::int64_t id) override {
    std::lock_guard lock(mutex_);
    auto it = runs_.find(id);
    if (it == runs_.end()) return std::nullopt;
    return detail(it->second);
  }
  RunChange cancel(std::int64_t run_id, std::int64_t now, std::string_view node, const admin::Actor& actor) override {
    std::lock_guard lock(mutex_);
    RunChange out;
    auto it = runs_.find(run_id);
    if (it == runs_.end()) return out;
    if (admin::is_final(it->second.run.state)) {
      out.status = RunChange::Status::kRefused;
      out.reason = "run " + std::to_string(run_id) + " has ended (" + std::string(to_string(it->second.run.state)) + ")";
      return out;
    }
    Steps steps(*this, std::string(node));
    steps.stop(it->second, admin::WorkflowRunState::kCancelled, "cancelled by " + actor.username, now);
    steps.changed.runs.insert(steps.changed.runs.begin(), it->second.run);
    out.status = RunChange::Status::kChanged;
    out.changed = std::move(steps.changed);
    return out;
  }
  RunChange rerun(std::int64_t run_id, std::string_view from, std::int64_t now, std::string_view node,
                  const admin::Actor& actor) override {
    std::lock_guard lock(mutex_);
    RunChange out;
    auto it = runs_.find(run_id);
    if (it == runs_.end()) return out;
    Run& r = it->second;
    out.status = RunChange::Status::kRefused;
    if (r.run.state != admin::WorkflowRunState::kFailed && r.run.state != admin::WorkflowRunState::kTimedOut &&
        r.run.state != admin::WorkflowRunState::kCancelled) {
      out.reason = "run " + std::to_string(run_id) + " is " + std::string(to_string(r.run.state)) +
                   ": only a failed, timed-out or cancelled run is run again";
      return out;
    }
    const auto plan = admin::plan_rerun(r.run.graph, plan_nodes(r), from);
    if (!plan.error.empty()) {
      out.reason = plan.error;
      return out;
    }
    const auto& wf = workflows_.at(r.run.workflow_id);
    const auto [running, waiting, oldest] = active(wf.id);
    (void)waiting;
    if (!r.run.backfill_id && running >= limit_of(wf)) {  // a backfill's run is outside the policy
      out.reason = "run " + std::to_string(oldest) + " of the workflow is running, and its overlap policy (" +
                   std::string(to_string(wf.overlap)) + ") allows " + std::to_string(limit_of(wf)) + " at a time";
      return out;
    }
    for (auto& n : r.nodes) {
      if (std::find(plan.reset.begin(), plan.reset.end(), n.node.key) == plan.reset.end()) continue;
      n.node.state = admin::NodeState::kWaiting;
      n.node.message.clear();
      n.node.ended_at.reset();
      n.node.output.reset();
      n.kill = false;
    }
    r.run.state = admin::WorkflowRunState::kRunning;
    r.run.ended_at.reset();
    r.run.reason = "run again from node " + std::string(from) + " by " + actor.username;
    r.run.deadline = wf.timeout_seconds > 0 ? std::optional<std::int64_t>(now + std::int64_t{wf.timeout_seconds} * 1000)
                                            : std::nullopt;
    r.run.alarm_status = 0;
    Steps steps(*this, std::string(node));
    steps.step(r, now);
    steps.changed.runs.insert(steps.changed.runs.begin(), r.run);
    out.status = RunChange::Status::kChanged;
    out.changed = std::move(steps.changed);
    return out;
  }
  Changed time_out(std::int64_t now, std::string_view node, int limit) override {
    std::lock_guard lock(mutex_);
    Steps steps(*this, std::string(node));
    int n = 0;
    for (auto& [id, r] : runs_) {
      if (n >= limit) break;
      if (r.run.state != admin::WorkflowRunState::kRunning || !r.run.deadline || *r.run.deadline > now) continue;
      const auto seconds = (*r.run.deadline - r.run.started_at.value_or(*r.run.deadline)) / 1000;
      steps.stop(r, admin::WorkflowRunState::kTimedOut,
                 "timed out: still running " + std::to_string(seconds) + " s after it started", now);
      steps.changed.runs.push_back(r.run);
      ++n;
    }
    return steps.changed;
  }
  Changed start_waiting(std::int64_t now, std::string_view node, int limit) override {
    std::lock_guard lock(mutex_);
    Steps steps(*this, std::string(node));
    std::set<std::int64_t> waiting;
    for (const auto& [id, r] : runs_) {
      if (r.run.state == admin::WorkflowRunState::kWaiting) waiting.insert(r.run.workflow_id);
    }
    int n = 0;
    for (auto id : waiting) {
      if (n++ >= limit) break;
      steps.start_waiting(workflows_.at(id), now);
    }
    return steps.changed;
  }
  std::vector<admin::JobLog> kill_candidates(int limit) override {
    std::lock_guard lock(mutex_);
    std::vector<admin::JobLog> out;
    for (const auto& [id, r] : runs_) {
      for (const auto& n : r.nodes) {
        if (!n.kill || n.node.state != admin::NodeState::kStarted || !n.node.log_id) continue;
        const auto& log = logs_.at(*n.node.log_id);
        if (log.state == admin::FireState::kTriggered) out.push_back(log);
      }
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
    if (out.size() > static_cast<std::size_t>(limit)) out.resize(static_cast<std::size_t>(limit));
    return out;
  }
  std::vector<std::pair<admin::WorkflowRunState, std::int64_t>> count_runs() override {
    std::lock_guard lock(mutex_);
    std::map<std::string, std::pair<admin::WorkflowRunState, std::int64_t>> by_name;  // ordered by spelling
    for (const auto& [id, r] : runs_) {
      auto& entry = by_name[std::string(to_string(r.run.state))];
      entry.first = r.run.state;
      ++entry.second;
    }
    std::vector<std::pair<admin::WorkflowRunState, std::int64_t>> out;
    for (auto& [name, entry] : by_name) out.push_back(entry);
    return out;
  }
  std::vector<Alarm> claim_alarms(std::int64_t now, std::int64_t stale_ms, int limit) override {
    std::lock_guard lock(mutex_);
    std::vector<Alarm> out;
    for (auto& [id, r] : runs_) {
      if (static_cast<int>(out.size()) >= limit) break;
      if (r.run.state != admin::WorkflowRunState::kFailed && r.run.state != admin::WorkflowRunState::kTimedOut) continue;
      const bool stale = r.run.alarm_status == admin::kAlarmClaimed && r.claimed_at < now - stale_ms;
      if (r.run.alarm_status != admin::kAlarmUndecided && !stale) continue;
      auto wf = workflows_.find(r.run.workflow_id);
      if (wf == workflows_.end() || wf->second.alarm_email.empty()) {
        r.run.alarm_status = admin::kAlarmNotNeeded;
        continue;
      }
      r.run.alarm_status = admin::kAlarmClaimed;
      r.claimed_at = now;
      out.push_back({detail(r), wf->second, {}, now});
    }
    return out;
  }
  void finish_alarm(std::int64_t run_id, std::int64_t claimed_at, admin::AlarmOutcome outcome) override {
    std::lock_guard lock(mutex_);
    auto it = runs_.find(run_id);
    if (it == runs_.end() || it->second.run.alarm_status != admin::kAlarmClaimed || it->second.claimed_at != claimed_at) return;
    it->second.run.alarm_status = outcome == admin::AlarmOutcome::kSent ? admin::kAlarmSent : admin::kAlarmFailed;
  }

 private:
  struct Node {
    admin::WorkflowRunNode node;
    bool kill = false;
  };
  struct Run {
    admin::WorkflowRun run;
    std::vector<Node> nodes;
    std::int64_t claimed_at = 0;
  };

  static bool contains(const std::string& text, const std::string& part) {
    auto lower = [](std::string s) {
      for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return s;
    };
    return lower(text).find(lower(part)) != std::string::npos;
  }
  template <class T>
  static admin::Page<T> page(const std::vector<T>& all, const admin::PageRequest& p) {
    admin::Page<T> out;
    out.total = static_cast<std::int64_t>(all.size());
    for (std::size_t i = static_cast<std::size_t>(p.offset); i < all.size() && out.items.size() < static_cast<std::size_t>(p.limit); ++i) {
      out.items.push_back(all[i]);
    }
    return out;
  }
  static Node* node_of(Run& r, const std::string& key) {
    for (auto& n : r.nodes) {
      if (n.node.key == key) return &n;
    }
    return nullptr;
  }
  static int limit_of(const admin::Workflow& w) { return w.overlap == admin::OverlapPolicy::kParallel ? w.max_parallel : 1; }

  std::tuple<int, int, std::int64_t> active(std::int64_t workflow_id) const {
    int running = 0, waiting = 0;
    std::int64_t oldest = 0;
    for (const auto& [id, r] : runs_) {
      if (r.run.workflow_id != workflow_id || r.run.backfill_id) continue;  // a backfill's runs are outside the policy
      if (r.run.state == admin::WorkflowRunState::kRunning) {
        if (running++ == 0) oldest = id;
      }
      if (r.run.state == admin::WorkflowRunState::kWaiting) ++waiting;
    }
    return {running, waiting, oldest};
  }
  void check_unique(const admin::Workflow& w, std::int64_t self) const {
    for (const auto& [id, other] : workflows_) {
      if (id != self && other.job_group == w.job_group && other.name == w.name) {
        throw admin::Conflict("a workflow of this name exists in the group", "name");
      }
    }
  }
  void check_jobs(const admin::WorkflowGraph& g) {
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
      if (!jobs_.get(g.nodes[i].job_id)) {
        throw admin::Conflict("node " + g.nodes[i].key + ": job " + std::to_string(g.nodes[i].job_id) + " does not exist",
                              "nodes[" + std::to_string(i) + "].jobId");
      }
    }
  }
  RunDetail detail(const Run& r) const {
    RunDetail d;
    d.run = r.run;
    for (const auto& n : r.nodes) {
      admin::WorkflowRunNode node = n.node;
      if (node.log_id) {
        auto log = logs_.find(*node.log_id);
        if (log != logs_.end()) {
          node.run_state = log->second.state;
          node.executor_address = log->second.executor_address;
        }
      }
      d.nodes.push_back(std::move(node));
    }
    return d;
  }
  static std::vector<admin::PlanNode> plan_nodes(const Run& r) {
    std::vector<admin::PlanNode> out;
    for (const auto& n : r.nodes) {
      admin::PlanNode p;
      p.key = n.node.key;
      p.state = n.node.state;
      p.message = n.node.message;
      if (n.node.output) {
        p.output = admin::node_output_value(n.node.output, "");
        p.has_output = true;
      }
      out.push_back(std::move(p));
    }
    return out;
  }

  // The steps of one change, as PgWorkflowStore's RunSteps takes them.
  struct Steps {
    FakeWorkflowStore& store;
    std::string node_id;
    Changed changed;

    Steps(FakeWorkflowStore& s, std::string node) : store(s), node_id(std::move(node)) {}

    void step(Run& r, std::int64_t now) {
      auto params = nlohmann::json::parse(r.run.params, nullptr, false);
      if (!params.is_object()) params = nlohmann::json::object();
      for (int pass = 0; pass < 4; ++pass) {
        const auto plan = admin::plan_workflow_step(r.run.graph, params, plan_nodes(r));
        if (apply(r, plan, now)) continue;
        if (plan.run_end) end_run(r, *plan.run_end, plan.reason, now);
        return;
      }
    }
    void stop(Run& r, admin::WorkflowRunState end, const std::string& reason, std::int64_t now) {
      apply(r, admin::plan_workflow_stop(r.run.graph, plan_nodes(r), end, reason), now);
      end_run(r, end, reason, now);
    }
    bool apply(Run& r, const admin::WorkflowStep& plan, std::int64_t now) {
      for (const auto& f : plan.finish) {
        Node* n = node_of(r, f.key);
        if (n == nullptr || n->node.state != admin::NodeState::kWaiting) continue;
        n->node.state = f.state;
        n->node.message = f.message;
        n->node.ended_at = now;
      }
      for (const auto& key : plan.kill) {
        Node* n = node_of(r, key);
        if (n == nullptr || n->node.state != admin::NodeState::kStarted) continue;
        n->kill = true;
        auto& log = store.logs_.at(*n->node.log_id);
        if (log.state == admin::FireState::kPending) {
          log.state = admin::FireState::kCancelled;
          n->node.state = admin::NodeState::kCancelled;
          n->node.message = "not run: the workflow run ended first";
          n->node.ended_at = now;
        }
      }
      bool missing = false;
      for (const auto& s : plan.start) {
        Node* n = node_of(r, s.key);
        auto job = store.jobs_.get(s.job_id);
        if (!job) {
          n->node.state = admin::NodeState::kFailed;
          n->node.message = "job " + std::to_string(s.job_id) + " no longer exists";
          n->node.ended_at = now;
          missing = true;
          continue;
        }
        admin::JobLog fire;
        fire.id = store.next_log_++;
        fire.job_group = job->job_group;
        fire.job_id = job->id;
        fire.state = admin::FireState::kPending;
        fire.trigger_type = admin::TriggerType::kWorkflow;
        fire.scheduled_time = now;
        fire.admin_node = node_id;
        fire.executor_handler = job->executor_handler;
        fire.executor_param = s.param.value_or(job->executor_param);
        fire.executor_fail_retry_count = job->executor_fail_retry_count;
        fire.workflow_run_id = r.run.id;
        fire.workflow_node = s.key;
        if (r.run.backfill_id) fire.logical_time = r.run.scheduled_time;
        std::optional<std::int64_t> parent;
        for (const auto& e : r.run.graph.edges) {
          if (e.to != s.key) continue;
          const Node* p = node_of(r, e.from);
          if (p != nullptr && p->node.log_id && (!parent || *p->node.log_id > *parent)) parent = p->node.log_id;
        }
        fire.parent_log_id = parent;
        store.logs_[fire.id] = fire;
        n->node.state = admin::NodeState::kStarted;
        n->node.log_id = fire.id;
        ++n->node.attempts;
        n->node.param = fire.executor_param;
        n->node.started_at = now;
        n->node.ended_at.reset();
        n->node.message.clear();
        n->node.output.reset();
        n->kill = false;
        changed.fires.push_back(fire);
      }
      return missing;
    }
    void end_run(Run& r, admin::WorkflowRunState end, const std::string& reason, std::int64_t now) {
      if (admin::is_final(r.run.state)) return;
      r.run.state = end;
      r.run.ended_at = now;
      r.run.reason = reason;
    }
    void start_waiting(const admin::Workflow& wf, std::int64_t now) {
      auto [running, waiting, oldest] = store.active(wf.id);
      (void)oldest;
      int room = limit_of(wf) - running;
      for (auto& [id, r] : store.runs_) {
        if (room <= 0 || waiting == 0) break;
        if (r.run.workflow_id != wf.id || r.run.state != admin::WorkflowRunState::kWaiting) continue;
        r.run.state = admin::WorkflowRunState::kRunning;
        r.run.started_at = now;
        r.run.reason.clear();
        r.run.deadline = wf.timeout_seconds > 0 ? std::optional<std::int64_t>(now + std::int64_t{wf.timeout_seconds} * 1000)
                                                : std::nullopt;
        step(r, now);
        changed.runs.push_back(r.run);
        --room;
      }
    }
    void create_backfill(const admin::Workflow& wf, std::int64_t backfill_id, std::int64_t instant,
                         const std::string& params, std::int64_t now, const std::string& created_by) {
      Run r;
      r.run.id = store.next_run_++;
      r.run.workflow_id = wf.id;
      r.run.workflow_name = wf.name;
      r.run.job_group = wf.job_group;
      r.run.trigger_type = admin::TriggerType::kBackfill;
      r.run.scheduled_time = instant;
      r.run.params = params;
      r.run.graph = wf.graph;
      r.run.created_by = created_by;
      r.run.backfill_id = backfill_id;
      r.run.state = admin::WorkflowRunState::kRunning;
      r.run.started_at = now;
      if (wf.timeout_seconds > 0) r.run.deadline = now + std::int64_t{wf.timeout_seconds} * 1000;
      for (const auto& n : wf.graph.nodes) {
        Node node;
        node.node.key = n.key;
        node.node.job_id = n.job_id;
        r.nodes.push_back(std::move(node));
      }
      auto& stored = store.runs_[r.run.id] = std::move(r);
      const auto at = static_cast<std::ptrdiff_t>(changed.runs.size());
      step(stored, now);
      changed.runs.insert(changed.runs.begin() + at, stored.run);
    }
    void create(const admin::Workflow& wf, std::int64_t scheduled, admin::TriggerType type, const std::string& params,
                std::int64_t now, const std::string& created_by) {
      const bool scheduled_kind = type == admin::TriggerType::kSchedule || type == admin::TriggerType::kMisfire;
      if (scheduled_kind) {
        for (const auto& [id, r] : store.runs_) {
          if (r.run.workflow_id == wf.id && r.run.scheduled_time == scheduled &&
              (r.run.trigger_type == admin::TriggerType::kSchedule || r.run.trigger_type == admin::TriggerType::kMisfire)) {
            return;
          }
        }
      }
      const auto [running, waiting, oldest] = store.active(wf.id);
      Run r;
      r.run.id = store.next_run_++;
      r.run.workflow_id = wf.id;
      r.run.workflow_name = wf.name;
      r.run.job_group = wf.job_group;
      r.run.trigger_type = type;
      r.run.scheduled_time = scheduled;
      r.run.params = params;
      r.run.graph = wf.graph;
      r.run.created_by = created_by;
      r.run.state = admin::WorkflowRunState::kRunning;
      if (running >= limit_of(wf) || waiting > 0) {
        const std::string busy = running == 1 ? "run " + std::to_string(oldest) + " is still running"
                                              : std::to_string(running) + " runs are still running";
        if (wf.overlap == admin::OverlapPolicy::kSkip) {
          r.run.state = admin::WorkflowRunState::kSkipped;
          r.run.reason = "skipped: " + busy + " (overlap SKIP)";
        } else if (waiting >= admin::kMaxWaitingRuns) {
          r.run.state = admin::WorkflowRunState::kSkipped;
          r.run.reason = "skipped: " + std::to_string(waiting) + " runs are waiting already (at most " +
                         std::to_string(admin::kMaxWaitingRuns) + ")";
        } else {
          r.run.state = admin::WorkflowRunState::kWaiting;
          r.run.reason = "waiting: " + busy;
        }
      }
      const std::int64_t start = std::max(now, scheduled);
      if (r.run.state == admin::WorkflowRunState::kRunning) {
        r.run.started_at = start;
        if (wf.timeout_seconds > 0) r.run.deadline = start + std::int64_t{wf.timeout_seconds} * 1000;
      }
      if (r.run.state == admin::WorkflowRunState::kSkipped) r.run.ended_at = now;
      for (const auto& n : wf.graph.nodes) {
        Node node;
        node.node.key = n.key;
        node.node.job_id = n.job_id;
        r.nodes.push_back(std::move(node));
      }
      auto& stored = store.runs_[r.run.id] = std::move(r);
      const auto at = static_cast<std::ptrdiff_t>(changed.runs.size());
      if (stored.run.state == admin::WorkflowRunState::kRunning) step(stored, start);
      changed.runs.insert(changed.runs.begin() + at, stored.run);
    }
  };

  admin::JobStore& jobs_;
  common::Clock& clock_;
  std::mutex mutex_;
  std::map<std::int64_t, admin::Workflow> workflows_;
  std::map<std::int64_t, Run> runs_;
  std::map<std::int64_t, admin::JobLog> logs_;
  std::int64_t next_workflow_ = 1, next_run_ = 1, next_log_ = 1;
};

}  // namespace cronwheel::testing
