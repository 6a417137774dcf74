#pragma once

// An in-memory BackfillStore with the semantics of PgBackfillStore (admin/pg/pg_backfill_store.h),
// both held to tests/support/backfill_contract_tests.h:
//  - backfills are kept beside a FakeStores' data and under its mutex, so a step reads the job
//    and the runs and writes its runs as one step, as a transaction does; every step and every
//    cancel holds that mutex, which serializes them as the job's lock does in PostgreSQL;
//  - a step of a backfill another thread is stepping is skipped (the row lock's SKIP LOCKED);
//  - runs are the FakeStores' logs, moved by the other fakes (or FakeStores::put_log) as the
//    trigger and completion stores move them;
//  - a run the backfill has at an instant already is not written again (job_log_backfill_fire);
//  - changes are audited in the FakeStores' AuditStore;
//  - a workflow's backfill (given the FakeWorkflowStore its workflows are in) writes its runs
//    there (FakeWorkflowStore::write_backfill_runs) and counts them there; its steps hold a
//    mutex of their own instead of the FakeStores' (the workflow store takes the FakeStores'
//    mutex under its own when it reads jobs), one for every workflow's backfills, as the
//    advisory lock per workflow serializes them in PostgreSQL; a cancel waits for a step in
//    progress, as the row lock makes it.
// What it leaves out: deleting a job or a workflow leaves its backfills here (PostgreSQL deletes
// them with it).
//
// Thread-safe: the FakeStores' mutex, and the mutexes above.

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "admin/model/alarm_store.h"
#include "admin/model/backfill_store.h"
#include "tests/support/fake_follow_ups.h"
#include "tests/support/fake_stores.h"
#include "tests/support/fake_workflow_store.h"

namespace cronwheel::testing {

class FakeBackfillStore final : public admin::BackfillStore {
 public:
  // `workflows`: where workflows' backfills find their workflows and write their runs; without
  // it, a workflow's backfill cannot be made (NotFound).
  explicit FakeBackfillStore(FakeStores& stores, FakeWorkflowStore* workflows = nullptr)
      : stores_(stores), workflows_(workflows) {}

  admin::Page<admin::Backfill> list(const Filter& f) override {
    std::vector<admin::Backfill> all;
    for (auto& b : newest_first()) {
      if (!fake_stores_detail::in_scope(f.scope, b.job_group)) continue;
      if (f.job_id && b.job_id != *f.job_id) continue;
      if (f.workflow_id && b.workflow_id != *f.workflow_id) continue;
      if (f.state && b.state != *f.state) continue;
      all.push_back(std::move(b));
    }
    return fake_stores_detail::page_of(std::move(all), f.page);
  }

  std::optional<admin::Backfill> get(std::int64_t id) override {
    auto b = stores_.with_state([&](State& s) -> std::optional<admin::Backfill> {
      auto it = backfills_.find(id);
      if (it == backfills_.end()) return std::nullopt;
      if (it->second.kind() == admin::BackfillKind::kWorkflow) return it->second;
      return with_group(s, it->second);
    });
    if (!b || b->kind() == admin::BackfillKind::kJob) return b;
    return with_workflow(*b);
  }

  admin::BackfillRuns runs(std::int64_t id) override {
    const auto kind = stores_.with_state([&](State&) {
      auto it = backfills_.find(id);
      return it == backfills_.end() ? admin::BackfillKind::kJob : it->second.kind();
    });
    if (kind == admin::BackfillKind::kWorkflow) {
      admin::BackfillRuns out;
      for (const auto state : workflows_->backfill_run_states(id)) {
        switch (state) {
          case admin::WorkflowRunState::kWaiting: ++out.pending; break;
          case admin::WorkflowRunState::kRunning: ++out.running; break;
          case admin::WorkflowRunState::kSucceeded: ++out.succeeded; break;
          case admin::WorkflowRunState::kFailed:
          case admin::WorkflowRunState::kTimedOut: ++out.failed; break;
          case admin::WorkflowRunState::kCancelled:
          case admin::WorkflowRunState::kSkipped: ++out.cancelled; break;
        }
      }
      return out;
    }
    return stores_.with_state([&](State& s) {
      admin::BackfillRuns out;
      for (const auto& [log_id, l] : s.logs) {
        if (l.backfill_id != id) continue;
        switch (l.state) {
          case admin::FireState::kPending: ++out.pending; break;
          case admin::FireState::kSending:
          case admin::FireState::kTriggered: ++out.running; break;
          case admin::FireState::kSucceeded: ++out.succeeded; break;
          case admin::FireState::kFailed:
          case admin::FireState::kLost: ++out.failed; break;
          case admin::FireState::kCancelled: ++out.cancelled; break;
        }
      }
      return out;
    });
  }

  std::vector<std::int64_t> existing(std::int64_t job_id, const std::vector<std::int64_t>& instants) override {
    if (instants.size() > static_cast<std::size_t>(admin::kMaxBackfillInstants)) {
      throw std::invalid_argument("existing: at most " + std::to_string(admin::kMaxBackfillInstants) + " instants");
    }
    return stores_.with_state([&](State& s) {
      const auto found = existing_in(s, job_id, instants);
      return std::vector<std::int64_t>(found.begin(), found.end());
    });
  }

  std::vector<std::int64_t> existing_workflow_runs(std::int64_t workflow_id,
                                                   const std::vector<std::int64_t>& instants) override {
    if (instants.size() > static_cast<std::size_t>(admin::kMaxBackfillInstants)) {
      throw std::invalid_argument("existing_workflow_runs: at most " + std::to_string(admin::kMaxBackfillInstants) +
                                  " instants");
    }
    if (workflows_ == nullptr) return {};
    const auto found = workflows_->existing_runs(workflow_id, instants);
    return std::vector<std::int64_t>(found.begin(), found.end());
  }

  std::vector<admin::Backfill> running(int limit) override {
    auto all = newest_first();
    std::vector<admin::Backfill> out;
    for (auto it = all.rbegin(); it != all.rend(); ++it) {
      if (static_cast<int>(out.size()) >= limit) break;
      if (it->state == admin::BackfillState::kRunning) out.push_back(*it);
    }
    return out;
  }

  admin::Backfill create(const admin::Backfill& backfill, const admin::Actor& actor) override {
    std::optional<admin::Workflow> workflow;
    if (backfill.kind() == admin::BackfillKind::kWorkflow) {
      if (workflows_ != nullptr) workflow = workflows_->get(backfill.workflow_id);
      if (!workflow) throw admin::NotFound("workflow " + std::to_string(backfill.workflow_id) + " does not exist");
    }
    return stores_.with_state([&](State& s) {
      std::int64_t group = 0;
      if (workflow) {
        group = workflow->job_group;
      } else {
        auto job = s.jobs.find(backfill.job_id);
        if (job == s.jobs.end()) throw admin::NotFound("job " + std::to_string(backfill.job_id) + " does not exist");
        group = job->second.job_group;
      }
      check(backfill);
      admin::Backfill b;
      b.id = next_id_++;
      b.job_id = workflow ? 0 : backfill.job_id;
      b.workflow_id = workflow ? workflow->id : 0;
      b.workflow_name = workflow ? workflow->name : "";
      b.params = workflow ? std::optional<std::string>(backfill.params.value_or("{}")) : std::nullopt;
      b.job_group = group;
      b.from = backfill.from;
      b.to = backfill.to;
      b.on_existing = backfill.on_existing;
      b.max_concurrent = backfill.max_concurrent;
      b.total = backfill.total;
      b.created_by = backfill.created_by;
      b.created_at = s.now();
      backfills_[b.id] = b;
      s.audit_change(actor, "backfill.create", "backfill", b.id, std::nullopt, admin::to_json(b));
      return b;
    });
  }

  StepResult step(std::int64_t id, std::string_view node, std::int64_t now, const Decide& decide) override {
    // SKIP LOCKED: a backfill another thread is stepping is skipped, not waited for.
    {
      std::lock_guard lock(busy_mutex_);
      if (!busy_.insert(id).second) return {};
    }
    Release release{*this, id};
    const auto kind = stores_.with_state([&](State&) {
      auto it = backfills_.find(id);
      return it == backfills_.end() ? admin::BackfillKind::kJob : it->second.kind();
    });
    if (kind == admin::BackfillKind::kWorkflow) return step_workflow(id, node, now, decide);
    return stores_.with_state([&](State& s) {
      StepResult out;
      auto it = backfills_.find(id);
      if (it == backfills_.end() || it->second.state != admin::BackfillState::kRunning) return out;
      auto job = s.jobs.find(it->second.job_id);
      if (job == s.jobs.end()) return out;
      const admin::Backfill backfill = *with_group(s, it->second);
      std::int64_t unfinished = 0;
      for (const auto& [log_id, l] : s.logs) {
        if (l.backfill_id == id && (l.state == admin::FireState::kPending || l.state == admin::FireState::kSending ||
                                    l.state == admin::FireState::kTriggered)) {
          ++unfinished;
        }
      }
      const ExistingLookup lookup = [&](const std::vector<std::int64_t>& instants) {
        return existing_in(s, backfill.job_id, instants);
      };
      const admin::BackfillStep step = decide(backfill, unfinished, lookup);
      for (const std::int64_t instant : step.write) {
        if (has_run_at(s, id, instant)) continue;
        admin::JobLog fire;
        fire.id = s.next_log++;
        fire.job_group = job->second.job_group;
        fire.job_id = job->first;
        fire.state = admin::FireState::kPending;
        fire.trigger_type = admin::TriggerType::kBackfill;
        fire.scheduled_time = instant;
        fire.admin_node = std::string(node);
        fire.executor_handler = job->second.executor_handler;
        fire.executor_param = job->second.executor_param;
        fire.executor_fail_retry_count = job->second.executor_fail_retry_count;
        fire.backfill_id = id;
        fire.logical_time = instant;
        s.logs[fire.id] = fire;
        out.fires.push_back(fire);
      }
      std::sort(out.fires.begin(), out.fires.end(),
                [](const admin::JobLog& a, const admin::JobLog& b) { return a.scheduled_time < b.scheduled_time; });
      admin::Backfill& b = it->second;
      record_step(b, step, out.fires.size(), now);
      out.stepped = true;
      out.backfill = *with_group(s, b);
      return out;
    });
  }

  std::optional<Cancelled> cancel(std::int64_t id, std::int64_t now, const admin::Actor& actor,
                                  const admin::FollowUpPlanner& plan) override {
    // The row lock: a step in progress is waited for.
    {
      std::unique_lock lock(busy_mutex_);
      busy_freed_.wait(lock, [&] { return busy_.count(id) == 0; });
      busy_.insert(id);
    }
    Release release{*this, id};
    std::optional<admin::Workflow> workflow;
    const auto workflow_id = stores_.with_state([&](State&) {
      auto it = backfills_.find(id);
      return it == backfills_.end() ? std::int64_t{0} : it->second.workflow_id;
    });
    if (workflow_id != 0) workflow = workflows_->get(workflow_id);
    return stores_.with_state([&](State& s) -> std::optional<Cancelled> {
      auto it = backfills_.find(id);
      if (it == backfills_.end()) return std::nullopt;
      auto resolved = [&](const admin::Backfill& b) {
        if (b.kind() == admin::BackfillKind::kJob) return with_group(s, b).value_or(b);
        admin::Backfill out = b;
        if (workflow) {
          out.job_group = workflow->job_group;
          out.workflow_name = workflow->name;
        }
        return out;
      };
      Cancelled out;
      const admin::Backfill before = resolved(it->second);
      out.backfill = before;
      if (before.state != admin::BackfillState::kRunning) return out;
      it->second.state = admin::BackfillState::kCancelled;
      it->second.ended_at = now;
      it->second.reason = "cancelled by " + actor.username;
      const std::string message = "cancelled: backfill " + std::to_string(id) + " was cancelled by " + actor.username;
      std::vector<std::int64_t> ids;
      for (const auto& [log_id, l] : s.logs) {
        // A workflow's backfill's runs are workflow runs, not here: they go on.
        if (l.backfill_id == id && l.state == admin::FireState::kPending) ids.push_back(log_id);
      }
      for (const auto log_id : ids) {
        admin::JobLog& l = s.logs[log_id];
        l.state = admin::FireState::kCancelled;
        l.alarm_status = admin::kAlarmNotNeeded;
        l.trigger_msg = l.trigger_msg.empty() ? message : l.trigger_msg + "\n" + message;
        out.runs.push_back(l);
        write_fake_follow_ups(s.jobs, s.logs, s.next_log, l, plan);
      }
      out.backfill = resolved(it->second);
      out.changed = true;
      s.audit_change(actor, "backfill.cancel", "backfill", id, admin::to_json(before), admin::to_json(out.backfill));
      return out;
    });
  }

 private:
  using State = fake_stores_detail::State;

  // A step's decision on the backfill's row, as the PostgreSQL store writes it: the cursor (in
  // the range, as backfill_cursor_in_range checks), the counts, the end.
  static void record_step(admin::Backfill& b, const admin::BackfillStep& step, std::size_t written, std::int64_t now) {
    if (step.cursor) {
      if (*step.cursor < b.from || *step.cursor >= b.to) {
        throw admin::Conflict("the cursor must lie in the backfill's range", "cursor");  // backfill_cursor_in_range
      }
      b.cursor = step.cursor;
    }
    b.written += static_cast<std::int64_t>(written);
    b.skipped += step.skipped;
    if (step.end) {
      b.state = *step.end;
      b.ended_at = now;
      b.reason = step.reason;
    }
  }

  // Releases a backfill's "row lock" (busy_).
  struct Release {
    FakeBackfillStore& store;
    std::int64_t id;
    ~Release() {
      {
        std::lock_guard lock(store.busy_mutex_);
        store.busy_.erase(id);
      }
      store.busy_freed_.notify_all();
    }
  };

  // The workflow's backfill with its workflow's group and name as the workflow is now; none when
  // the workflow is gone. Called without the FakeStores' mutex.
  std::optional<admin::Backfill> with_workflow(admin::Backfill b) {
    if (workflows_ == nullptr) return std::nullopt;
    auto wf = workflows_->get(b.workflow_id);
    if (!wf) return std::nullopt;
    b.job_group = wf->job_group;
    b.workflow_name = wf->name;
    return b;
  }

  // Every backfill whose job or workflow exists, as get() answers it, newest first.
  std::vector<admin::Backfill> newest_first() {
    auto copies = stores_.with_state([&](State& s) {
      std::vector<admin::Backfill> out;
      for (auto it = backfills_.rbegin(); it != backfills_.rend(); ++it) {
        if (it->second.kind() == admin::BackfillKind::kWorkflow) {
          out.push_back(it->second);
        } else if (auto b = with_group(s, it->second)) {
          out.push_back(*b);
        }
      }
      return out;
    });
    std::vector<admin::Backfill> out;
    for (auto& b : copies) {
      if (b.kind() == admin::BackfillKind::kJob) {
        out.push_back(std::move(b));
      } else if (auto with = with_workflow(std::move(b))) {
        out.push_back(std::move(*with));
      }
    }
    return out;
  }

  // A step of a workflow's backfill, its "row lock" held by the caller.
  StepResult step_workflow(std::int64_t id, std::string_view node, std::int64_t now, const Decide& decide) {
    std::lock_guard serial(workflow_steps_mutex_);
    StepResult out;
    auto read = stores_.with_state([&](State&) -> std::optional<admin::Backfill> {
      auto it = backfills_.find(id);
      if (it == backfills_.end() || it->second.state != admin::BackfillState::kRunning) return std::nullopt;
      return it->second;
    });
    if (!read) return out;
    const auto backfill = with_workflow(*read);
    if (!backfill) return out;
    const std::int64_t unfinished = workflows_->backfill_unfinished(id);
    const ExistingLookup lookup = [&](const std::vector<std::int64_t>& instants) {
      return workflows_->existing_runs(backfill->workflow_id, instants);
    };
    const admin::BackfillStep step = decide(*backfill, unfinished, lookup);
    auto changed = workflows_->write_backfill_runs(backfill->workflow_id, id, step.write, backfill->params.value_or("{}"),
                                                   now, std::string(node), backfill->created_by);
    out.fires = std::move(changed.fires);
    out.runs = std::move(changed.runs);
    stores_.with_state([&](State&) {
      record_step(backfills_.at(id), step, out.runs.size(), now);
    });
    out.stepped = true;
    out.backfill = *get(id);
    return out;
  }

  // The backfill with its job's group as the job is now; none when the job is gone.
  static std::optional<admin::Backfill> with_group(const State& s, admin::Backfill b) {
    auto job = s.jobs.find(b.job_id);
    if (job == s.jobs.end()) return std::nullopt;
    b.job_group = job->second.job_group;
    return b;
  }

  static std::set<std::int64_t> existing_in(const State& s, std::int64_t job_id, const std::vector<std::int64_t>& instants) {
    const std::set<std::int64_t> asked(instants.begin(), instants.end());
    std::set<std::int64_t> found;
    for (const auto& [log_id, l] : s.logs) {
      if (l.job_id != job_id || asked.count(l.scheduled_time) == 0 || l.state == admin::FireState::kCancelled) continue;
      if (l.trigger_type == admin::TriggerType::kSchedule || l.trigger_type == admin::TriggerType::kMisfire ||
          l.trigger_type == admin::TriggerType::kBackfill) {
        found.insert(l.scheduled_time);
      }
    }
    return found;
  }

  bool has_run_at(const State& s, std::int64_t backfill_id, std::int64_t instant) const {
    for (const auto& [log_id, l] : s.logs) {
      if (l.backfill_id == backfill_id && l.trigger_type == admin::TriggerType::kBackfill &&
          l.scheduled_time == instant && l.shard_index == 0) {
        return true;
      }
    }
    return false;
  }

  // The backfill table's CHECKs, as Conflicts naming the API's fields, in the order PostgreSQL
  // evaluates them (by constraint name).
  static void check(const admin::Backfill& b) {
    if (b.from < 0) throw admin::Conflict("from must not be negative", "from");
    if (b.max_concurrent < 1 || b.max_concurrent > admin::kMaxBackfillConcurrent) {
      throw admin::Conflict("maxConcurrent must be 1-100", "maxConcurrent");
    }
    if (b.from >= b.to) throw admin::Conflict("from must be before to", "to");
    if (b.total < 0) throw admin::Conflict("total must not be negative", "total");
  }

  FakeStores& stores_;
  FakeWorkflowStore* const workflows_;
  std::map<std::int64_t, admin::Backfill> backfills_;  // guarded by the FakeStores' mutex
  std::mutex busy_mutex_;
  std::condition_variable busy_freed_;
  std::set<std::int64_t> busy_;  // backfills being stepped or cancelled: their "row locks"
  std::mutex workflow_steps_mutex_;  // the steps of workflows' backfills, one at a time
  std::int64_t next_id_ = 1;
};

}  // namespace cronwheel::testing
