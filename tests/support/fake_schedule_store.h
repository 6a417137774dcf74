#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "admin/model/calendar_store.h"
#include "admin/model/fire.h"
#include "admin/model/schedule_store.h"
#include "tests/support/fake_follow_ups.h"
#include "admin/model/store_errors.h"
#include "admin/model/records.h"

namespace cronwheel::testing {

// An in-memory ScheduleStore with PgScheduleStore's semantics, over jobs and log rows the test
// puts in:
//  - scan() runs under one "lock row" (a mutex of its own), reads running jobs due by
//    `due_before` in due order, applies the decision with the same guards (trigger_status 1 and
//    the next time read), and inserts the fires and the records of skipped fires (cancelled
//    MISFIRE rows) of the jobs it advanced, refusing a second scheduled fire of a job for the
//    same time and shard;
//  - every transition is guarded by state and owner as the real one is.
//
// Hooks: fail_with(...) makes every call throw (an unreachable database) until cleared;
// after_read(hook) runs inside scan() between the pre-read and the write, holding the lock row
// but not the data, so a test can change a job "meanwhile" (stop it, reschedule it).
//
// Thread-safe.
class FakeScheduleStore final : public admin::ScheduleStore {
 public:
  // Where scans read the versions of the calendars jobs name (as PgScheduleStore reads them
  // from the calendar table); without it they read 0, a version no calendar has.
  void read_calendars_from(admin::CalendarStore* calendars) { calendars_ = calendars; }

  admin::Job put_job(admin::Job job) {
    std::lock_guard lock(mutex_);
    if (job.id == 0) job.id = next_job_++;
    next_job_ = std::max(next_job_, job.id + 1);
    jobs_[job.id] = job;
    return job;
  }
  void update_job(std::int64_t id, const std::function<void(admin::Job&)>& change) {
    std::lock_guard lock(mutex_);
    change(jobs_.at(id));
  }
  admin::Job job(std::int64_t id) const {
    std::lock_guard lock(mutex_);
    return jobs_.at(id);
  }
  // A group's own access token (none by default).
  void set_group_token(std::int64_t group, std::optional<std::string> token) {
    std::lock_guard lock(mutex_);
    tokens_[group] = std::move(token);
  }

  // Stores the row as given (a new id unless it has one).
  admin::JobLog put_log(admin::JobLog log) {
    std::lock_guard lock(mutex_);
    if (log.id == 0) log.id = next_log_++;
    next_log_ = std::max(next_log_, log.id + 1);
    logs_[log.id] = log;
    return log;
  }
  void update_log(std::int64_t id, const std::function<void(admin::JobLog&)>& change) {
    std::lock_guard lock(mutex_);
    change(logs_.at(id));
  }
  admin::JobLog log(std::int64_t id) const {
    std::lock_guard lock(mutex_);
    return logs_.at(id);
  }
  std::vector<admin::JobLog> logs() const {
    std::lock_guard lock(mutex_);
    std::vector<admin::JobLog> out;
    for (const auto& [id, l] : logs_) out.push_back(l);
    return out;
  }

  // Every call (or, with `method`, every call of that method) throws StoreUnavailable
  // with `message` until cleared with nullopt.
  void fail_with(std::optional<std::string> message, std::string method = {}) {
    std::lock_guard lock(mutex_);
    failure_ = std::move(message);
    failing_method_ = std::move(method);
  }
  void after_read(std::function<void()> hook) {
    std::lock_guard lock(mutex_);
    after_read_ = std::move(hook);
  }
  // Calls of each method so far ("scan", "pending", "cancel_pending", "take_over", "resolve_sending").
  int calls(const std::string& method) const {
    std::lock_guard lock(mutex_);
    auto it = calls_.find(method);
    return it == calls_.end() ? 0 : it->second;
  }

  ScanResult scan(std::string_view node, std::int64_t due_before, int limit, const Decide& decide) override {
    std::lock_guard lock_row(lock_row_);
    std::vector<admin::DueJob> due;
    std::optional<std::int64_t> next_due;
    std::function<void()> hook;
    {
      std::lock_guard lock(mutex_);
      enter("scan");
      std::vector<const admin::Job*> running;
      for (const auto& [id, j] : jobs_) {
        if (j.trigger_status == 1 && j.trigger_next_time <= due_before) running.push_back(&j);
      }
      std::stable_sort(running.begin(), running.end(),
                       [](const admin::Job* a, const admin::Job* b) { return a->trigger_next_time < b->trigger_next_time; });
      if (static_cast<int>(running.size()) > limit) running.resize(static_cast<std::size_t>(limit));
      for (const auto* j : running) {
        due.push_back({j->id, j->schedule_type, j->schedule_conf, j->timezone, j->misfire_strategy,
                       j->trigger_last_time, j->trigger_next_time, j->calendar.calendar_id, j->calendar.mode, 0,
                       j->dst, j->priority});
      }
      hook = after_read_;
      if (due.empty()) {
        for (const auto& [id, j] : jobs_) {
          if (j.trigger_status == 1 && (!next_due || j.trigger_next_time < *next_due)) next_due = j.trigger_next_time;
        }
      }
    }
    // The versions of the calendars the jobs name, as the scan reads them (0: none such).
    for (auto& d : due) {
      if (d.calendar_id == 0 || calendars_ == nullptr) continue;
      const auto found = calendars_->get_many({d.calendar_id});
      d.calendar_version = found.empty() ? 0 : found.front().version;
    }
    ScanResult result;
    result.jobs_read = due.size();
    if (due.empty()) {
      result.next_due = next_due;
      return result;
    }
    const admin::ScanDecision decision = decide(due);
    if (hook) hook();

    std::lock_guard lock(mutex_);
    std::vector<std::int64_t> advanced;
    for (const auto& a : decision.jobs) {
      auto it = jobs_.find(a.job_id);
      if (it == jobs_.end() || it->second.trigger_status != 1 || it->second.trigger_next_time != a.read_next_time) continue;
      it->second.trigger_last_time = a.last_time;
      it->second.trigger_next_time = a.next_time;
      it->second.trigger_status = a.trigger_status;
      advanced.push_back(a.job_id);
    }
    for (const auto& f : decision.fires) {
      if (std::find(advanced.begin(), advanced.end(), f.job_id) == advanced.end()) continue;
      if (scheduled_exists(f.job_id, f.scheduled_time, 0)) continue;
      const admin::Job& job = jobs_.at(f.job_id);
      admin::JobLog l;
      l.id = next_log_++;
      l.job_group = job.job_group;
      l.job_id = f.job_id;
      l.state = admin::FireState::kPending;
      l.trigger_type = f.trigger_type;
      l.scheduled_time = f.scheduled_time;
      l.admin_node = std::string(node);
      l.executor_handler = job.executor_handler;
      l.executor_param = job.executor_param;
      l.executor_fail_retry_count = job.executor_fail_retry_count;
      logs_[l.id] = l;
      result.fires.push_back({l.id, l.job_id, l.scheduled_time});
    }
    for (const auto& skip : decision.skipped) {
      if (std::find(advanced.begin(), advanced.end(), skip.job_id) == advanced.end()) continue;
      if (scheduled_exists(skip.job_id, skip.first_time, 0)) continue;
      const admin::Job& job = jobs_.at(skip.job_id);
      admin::JobLog l;
      l.id = next_log_++;
      l.job_group = job.job_group;
      l.job_id = skip.job_id;
      l.state = admin::FireState::kCancelled;
      l.trigger_type = admin::TriggerType::kMisfire;
      l.scheduled_time = skip.first_time;
      l.admin_node = std::string(node);
      l.executor_handler = job.executor_handler;
      l.executor_param = job.executor_param;
      l.executor_fail_retry_count = job.executor_fail_retry_count;
      l.trigger_msg = skip.message;
      logs_[l.id] = l;
      ++result.misfire_records;
      result.misfire_groups.push_back(l.job_group);
    }
    std::sort(result.fires.begin(), result.fires.end(), due_order);
    return result;
  }

  std::vector<admin::PendingFireRow> pending(std::string_view node, std::int64_t due_before, int limit) override {
    std::lock_guard lock(mutex_);
    enter("pending");
    std::vector<admin::PendingFireRow> out;
    for (const auto& [id, l] : logs_) {
      if (l.state == admin::FireState::kPending && l.admin_node == node && l.scheduled_time <= due_before) {
        out.push_back(row_of(l));
      }
    }
    std::sort(out.begin(), out.end(), row_due_order);
    if (static_cast<int>(out.size()) > limit) out.resize(static_cast<std::size_t>(limit));
    return out;
  }

  std::vector<std::int64_t> cancel_pending(const std::vector<admin::SkippedFire>& fires, std::string_view node,
                                           const admin::FollowUpPlanner& plan) override {
    std::lock_guard lock(mutex_);
    enter("cancel_pending");
    std::vector<std::int64_t> moved;
    for (const auto& fire : fires) {
      auto it = logs_.find(fire.log_id);
      if (it == logs_.end() || it->second.state != admin::FireState::kPending || it->second.admin_node != node) continue;
      admin::JobLog& l = it->second;
      l.state = admin::FireState::kCancelled;
      l.trigger_msg = l.trigger_msg.empty() ? fire.message : l.trigger_msg + "\n" + fire.message;
      write_fake_follow_ups(jobs_, logs_, next_log_, l, plan);
      moved.push_back(fire.log_id);
    }
    std::sort(moved.begin(), moved.end());
    return moved;
  }

  Takeover take_over(const std::vector<std::string>& dead_nodes, std::string_view node) override {
    std::lock_guard lock(mutex_);
    enter("take_over");
    Takeover out;
    auto dead = [&](const admin::JobLog& l) {
      return l.admin_node && std::find(dead_nodes.begin(), dead_nodes.end(), *l.admin_node) != dead_nodes.end();
    };
    for (auto& [id, l] : logs_) {
      if (!dead(l)) continue;
      if (l.state == admin::FireState::kPending) {
        l.admin_node = std::string(node);
        out.pending.push_back(row_of(l));
      } else if (l.state == admin::FireState::kSending) {
        admin::SendingFire s;
        s.fire = {l.id, l.job_id, l.scheduled_time};
        s.dead_node = *l.admin_node;
        s.executor_address = l.executor_address;
        s.job_group = l.job_group;
        auto token = tokens_.find(l.job_group);
        if (token != tokens_.end()) s.access_token = token->second;
        s.logical_time = l.logical_time;
        l.admin_node = std::string(node);
        out.sending.push_back(std::move(s));
      }
    }
    std::sort(out.pending.begin(), out.pending.end(), row_due_order);
    return out;
  }

  bool resolve_sending(std::int64_t log_id, std::string_view node, Delivery delivery,
                       std::string_view message) override {
    std::lock_guard lock(mutex_);
    enter("resolve_sending");
    auto it = logs_.find(log_id);
    if (it == logs_.end() || it->second.state != admin::FireState::kSending || it->second.admin_node != node) return false;
    admin::JobLog& l = it->second;
    l.trigger_msg = l.trigger_msg.empty() ? std::string(message) : l.trigger_msg + "\n" + std::string(message);
    switch (delivery) {
      case Delivery::kDelivered:
        l.state = admin::FireState::kTriggered;
        l.trigger_code = 200;
        break;
      case Delivery::kNotDelivered:
        l.state = admin::FireState::kPending;
        l.trigger_time.reset();
        l.trigger_code = 0;
        break;
      case Delivery::kUnknown:
        l.state = admin::FireState::kTriggered;
        l.trigger_code = 500;
        break;
    }
    return true;
  }

 private:
  static bool due_order(const admin::PendingFire& a, const admin::PendingFire& b) {
    return a.scheduled_time != b.scheduled_time ? a.scheduled_time < b.scheduled_time : a.log_id < b.log_id;
  }
  static bool row_due_order(const admin::PendingFireRow& a, const admin::PendingFireRow& b) {
    return due_order(a.fire, b.fire);
  }
  // Call with mutex_ held. The job's strategy as it is now, as PostgreSQL reads it.
  admin::PendingFireRow row_of(const admin::JobLog& l) const {
    auto job = jobs_.find(l.job_id);
    return {{l.id, l.job_id, l.scheduled_time},
            l.trigger_type,
            job == jobs_.end() ? admin::MisfireStrategy::kDoNothing : job->second.misfire_strategy};
  }
  // Call with mutex_ held.
  void enter(const std::string& method) {
    ++calls_[method];
    if (failure_ && (failing_method_.empty() || failing_method_ == method)) throw admin::StoreUnavailable(*failure_);
  }
  bool scheduled_exists(std::int64_t job_id, std::int64_t at, int shard) const {
    for (const auto& [id, l] : logs_) {
      if ((l.trigger_type == admin::TriggerType::kSchedule || l.trigger_type == admin::TriggerType::kMisfire) && l.job_id == job_id &&
          l.scheduled_time == at && l.shard_index == shard) {
        return true;
      }
    }
    return false;
  }
  std::mutex lock_row_;
  admin::CalendarStore* calendars_ = nullptr;
  mutable std::mutex mutex_;
  std::map<std::int64_t, admin::Job> jobs_;
  std::map<std::int64_t, admin::JobLog> logs_;
  std::map<std::int64_t, std::optional<std::string>> tokens_;
  std::map<std::string, int> calls_;
  std::optional<std::string> failure_;
  std::string failing_method_;
  std::function<void()> after_read_;
  std::int64_t next_job_ = 1;
  std::int64_t next_log_ = 1;
};

}  // namespace cronwheel::testing
