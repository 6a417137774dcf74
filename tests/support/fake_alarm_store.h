#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <vector>

#include "admin/model/alarm_store.h"
#include "admin/model/store_errors.h"

namespace cronwheel::testing {

// An in-memory AlarmStore with PgAlarmStore's semantics (tests/support/alarm_contract_tests.h
// holds both to them): jobs and runs are put in as given; claim() and finish() move the runs'
// alarm_status as the PostgreSQL statements do. A claim is atomic here, so "another node is
// claiming this job right now" never happens. fail_with(...) makes every call throw
// StoreUnavailable until cleared.
//
// Thread-safe.
class FakeAlarmStore final : public admin::AlarmStore {
 public:
  admin::Job put_job(admin::Job job) {
    std::lock_guard lock(mutex_);
    if (job.id == 0) job.id = next_job_id_++;
    jobs_[job.id] = job;
    return job;
  }
  admin::JobLog put_log(admin::JobLog log) {
    std::lock_guard lock(mutex_);
    if (log.id == 0) log.id = next_log_id_++;
    runs_[log.id] = Run{log, 0};
    return log;
  }
  // As a node that claimed (or decided) the run at `alarm_time`.
  void set_alarm(std::int64_t run_id, int status, std::int64_t alarm_time) {
    std::lock_guard lock(mutex_);
    auto& run = runs_.at(run_id);
    run.log.alarm_status = status;
    run.alarm_time = alarm_time;
  }
  int alarm_status(std::int64_t run_id) {
    std::lock_guard lock(mutex_);
    return runs_.at(run_id).log.alarm_status;
  }
  void fail_with(std::optional<std::string> error) {
    std::lock_guard lock(mutex_);
    error_ = std::move(error);
  }
  int claims() {
    std::lock_guard lock(mutex_);
    return claims_;
  }

  std::vector<admin::AlarmClaim> claim(const ClaimRequest& r) override {
    std::lock_guard lock(mutex_);
    enter();
    ++claims_;
    const std::int64_t stale_before = r.now - r.stale_ms;
    const std::int64_t quiet_before = r.now - r.quiet_ms;
    std::set<std::int64_t> candidates;
    for (auto& [id, run] : runs_) {
      if (!open(run, stale_before)) continue;
      if (!calls_for_alarm(run)) {
        run.log.alarm_status = admin::kAlarmNotNeeded;
        run.alarm_time = r.now;
        continue;
      }
      auto last = last_sent_.find(run.log.job_id);
      if (last == last_sent_.end() || last->second <= quiet_before) candidates.insert(run.log.job_id);
    }
    std::vector<admin::AlarmClaim> out;
    for (std::int64_t job_id : candidates) {
      if (static_cast<int>(out.size()) >= r.max_jobs) break;
      admin::AlarmClaim claim;
      claim.job = jobs_.at(job_id);
      claim.claimed_at = r.now;
      auto last = last_sent_.find(job_id);
      claim.previous_alarm_at = last == last_sent_.end() ? 0 : last->second;
      for (auto& [id, run] : runs_) {
        if (run.log.job_id != job_id || !open(run, stale_before) || !calls_for_alarm(run)) continue;
        run.log.alarm_status = admin::kAlarmClaimed;
        run.alarm_time = r.now;
        ++claim.runs_total;
        if (static_cast<int>(claim.runs.size()) < r.runs_listed) claim.runs.push_back(run.log);
      }
      last_sent_[job_id] = r.now;
      out.push_back(std::move(claim));
    }
    return out;
  }

  int finish(std::int64_t job_id, std::int64_t claimed_at, admin::AlarmOutcome outcome, std::int64_t now) override {
    std::lock_guard lock(mutex_);
    enter();
    int n = 0;
    for (auto& [id, run] : runs_) {
      if (run.log.job_id != job_id || run.log.alarm_status != admin::kAlarmClaimed || run.alarm_time != claimed_at ||
          !ended_badly(run.log)) {
        continue;
      }
      run.log.alarm_status = outcome == admin::AlarmOutcome::kSent ? admin::kAlarmSent : admin::kAlarmFailed;
      run.alarm_time = now;
      ++n;
    }
    return n;
  }

 private:
  struct Run {
    admin::JobLog log;
    std::int64_t alarm_time = 0;
  };
  static bool ended_badly(const admin::JobLog& log) {
    return log.state == admin::FireState::kFailed || log.state == admin::FireState::kLost ||
           log.state == admin::FireState::kCancelled;
  }
  static bool open(const Run& run, std::int64_t stale_before) {
    return ended_badly(run.log) &&
           (run.log.alarm_status == admin::kAlarmUndecided ||
            (run.log.alarm_status == admin::kAlarmClaimed && run.alarm_time < stale_before));
  }
  bool calls_for_alarm(const Run& run) const {
    auto job = jobs_.find(run.log.job_id);
    const bool recipients = job != jobs_.end() && !job->second.alarm_email.empty();
    const bool retry_follows = run.log.state != admin::FireState::kCancelled && run.log.executor_fail_retry_count > 0;
    return recipients && !retry_follows;
  }
  void enter() const {
    if (error_) throw admin::StoreUnavailable(*error_);
  }

  std::mutex mutex_;
  std::map<std::int64_t, admin::Job> jobs_;
  std::map<std::int64_t, Run> runs_;
  std::map<std::int64_t, std::int64_t> last_sent_;  // job → last alarm claimed
  std::int64_t next_job_id_ = 1;
  std::int64_t next_log_id_ = 1;
  std::optional<std::string> error_;
  int claims_ = 0;
};

}  // namespace cronwheel::testing
