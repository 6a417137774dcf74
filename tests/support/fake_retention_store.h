#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "admin/model/alarm_store.h"
#include "admin/model/records.h"
#include "admin/model/retention_store.h"
#include "admin/model/workflow.h"

namespace cronwheel::testing {

// An in-memory RetentionStore with PgRetentionStore's semantics (tests/support/
// retention_contract_tests.h holds both to them). Runs are put in as given. fail_with(...)
// makes every call throw StoreUnavailable until cleared. Thread-safe.
class FakeRetentionStore final : public admin::RetentionStore {
 public:
  admin::JobLog put_run(admin::JobLog run) {
    std::lock_guard lock(mutex_);
    if (run.id == 0) run.id = next_id_++;
    runs_[run.id] = run;
    return run;
  }
  bool exists(std::int64_t id) {
    std::lock_guard lock(mutex_);
    return runs_.count(id) != 0;
  }
  std::size_t size() {
    std::lock_guard lock(mutex_);
    return runs_.size();
  }
  void fail_with(std::optional<std::string> error) {
    std::lock_guard lock(mutex_);
    error_ = std::move(error);
  }
  int calls() {
    std::lock_guard lock(mutex_);
    return calls_;
  }

  std::int64_t put_workflow_run(admin::WorkflowRunState state, std::int64_t scheduled_time, int alarm_status) {
    std::lock_guard lock(mutex_);
    admin::WorkflowRun run;
    run.id = next_id_++;
    run.state = state;
    run.scheduled_time = scheduled_time;
    run.alarm_status = alarm_status;
    workflow_runs_[run.id] = run;
    return run.id;
  }
  bool workflow_run_exists(std::int64_t id) {
    std::lock_guard lock(mutex_);
    return workflow_runs_.count(id) != 0;
  }

  // Not counted in calls(), which counts the deletions of runs.
  std::int64_t delete_workflow_runs_before(std::int64_t before, int batch) override {
    std::lock_guard lock(mutex_);
    if (error_) throw admin::StoreUnavailable(*error_);
    std::vector<std::int64_t> ids;  // by id: oldest first
    for (const auto& [id, run] : workflow_runs_) {
      if (ids.size() >= static_cast<std::size_t>(std::max(batch, 0))) break;
      if (run.scheduled_time >= before || !is_final(run.state)) continue;
      const bool ended_badly = run.state == admin::WorkflowRunState::kFailed || run.state == admin::WorkflowRunState::kTimedOut;
      if (ended_badly && (run.alarm_status == admin::kAlarmUndecided || run.alarm_status == admin::kAlarmClaimed)) continue;
      ids.push_back(id);
    }
    for (auto id : ids) workflow_runs_.erase(id);
    return static_cast<std::int64_t>(ids.size());
  }

  std::int64_t delete_runs_before(std::int64_t before, int batch) override {
    std::lock_guard lock(mutex_);
    ++calls_;
    if (error_) throw admin::StoreUnavailable(*error_);
    std::vector<const admin::JobLog*> old;
    for (const auto& [id, run] : runs_) {
      if (run.scheduled_time < before && deletable(run)) old.push_back(&run);
    }
    std::sort(old.begin(), old.end(), [](const admin::JobLog* a, const admin::JobLog* b) {
      return std::tie(a->scheduled_time, a->id) < std::tie(b->scheduled_time, b->id);
    });
    if (old.size() > static_cast<std::size_t>(std::max(batch, 0))) old.resize(static_cast<std::size_t>(batch));
    std::vector<std::int64_t> ids;
    for (const auto* run : old) ids.push_back(run->id);
    for (auto id : ids) runs_.erase(id);
    return static_cast<std::int64_t>(ids.size());
  }

 private:
  static bool deletable(const admin::JobLog& run) {
    using admin::FireState;
    const bool ended_badly =
        run.state == FireState::kFailed || run.state == FireState::kLost || run.state == FireState::kCancelled;
    if (!ended_badly && run.state != FireState::kSucceeded) return false;
    return !(ended_badly && (run.alarm_status == admin::kAlarmUndecided || run.alarm_status == admin::kAlarmClaimed));
  }

  std::mutex mutex_;
  std::map<std::int64_t, admin::JobLog> runs_;
  std::map<std::int64_t, admin::WorkflowRun> workflow_runs_;
  std::int64_t next_id_ = 1;
  std::optional<std::string> error_;
  int calls_ = 0;
};

}  // namespace cronwheel::testing
