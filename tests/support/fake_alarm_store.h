#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "admin/model/alarm_store.h"
#include "admin/model/store_errors.h"

namespace cronwheel::testing {

// An in-memory AlarmStore with PgAlarmStore's semantics (tests/support/alarm_contract_tests.h
// holds both to them): jobs and runs are put in as given; claim() and finish() move the runs'
// alarm_status as the PostgreSQL statements do. A claim is atomic here, so "another node is
// claiming this job right now" never happens. fail_with(...) makes every call throw
// StoreUnavailable until cleared. It keeps alarm channels as PgAlarmStore does (the groups that
// exist are those of the jobs put in); it writes no audit entries.
//
// Thread-safe.
class FakeAlarmStore final : public admin::AlarmStore, public admin::AlarmChannelStore {
 public:
  admin::Job put_job(admin::Job job) {
    std::lock_guard lock(mutex_);
    if (job.id == 0) job.id = next_job_id_++;
    jobs_[job.id] = job;
    return job;
  }
  void remove_job(std::int64_t id) {
    std::lock_guard lock(mutex_);
    jobs_.erase(id);
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
  // The app name of a group (PostgreSQL: job_group.app_name), for executors' clock alarms.
  void name_group(std::int64_t group_id, std::string app_name) {
    std::lock_guard lock(mutex_);
    app_names_[group_id] = std::move(app_name);
  }
  // An executor's registration with its clock estimate (none: XXL-JOB's); returns its id.
  std::int64_t put_registration(std::string app_name, std::string address, std::optional<std::int64_t> offset_ms,
                                std::int64_t delay_ms = 0) {
    std::lock_guard lock(mutex_);
    const std::int64_t id = next_registration_id_++;
    registrations_[id] = Registration{std::move(app_name), std::move(address), offset_ms, delay_ms, 0, 0};
    return id;
  }
  void set_clock_offset(std::int64_t registration_id, std::optional<std::int64_t> offset_ms) {
    std::lock_guard lock(mutex_);
    registrations_.at(registration_id).offset_ms = offset_ms;
  }
  void remove_registration(std::int64_t registration_id) {
    std::lock_guard lock(mutex_);
    registrations_.erase(registration_id);
  }
  int clock_alarm_status(std::int64_t registration_id) {
    std::lock_guard lock(mutex_);
    return registrations_.at(registration_id).status;
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
      claim.channels = channels_of(claim.job);
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

  std::vector<admin::ClockAlarmClaim> claim_clock_alarms(std::int64_t now, std::int64_t bound_ms,
                                                         std::int64_t stale_ms, int limit) override {
    std::lock_guard lock(mutex_);
    enter();
    std::vector<admin::ClockAlarmClaim> out;
    for (auto& [id, r] : registrations_) {
      const bool off = r.offset_ms && std::abs(*r.offset_ms) > bound_ms;
      if (!off) {
        r.status = 0;
        r.time = 0;
        continue;
      }
      const bool open = r.status == 0 || (r.status == admin::kAlarmClaimed && r.time < now - stale_ms);
      if (!open || static_cast<int>(out.size()) >= limit) continue;
      auto channels = channels_of_app(r.app_name);
      if (channels.empty()) continue;
      r.status = admin::kAlarmClaimed;
      r.time = now;
      out.push_back({id, r.app_name, r.address, *r.offset_ms, r.delay_ms, now, std::move(channels)});
    }
    return out;
  }

  void finish_clock_alarm(std::int64_t registration_id, std::int64_t claimed_at, admin::AlarmOutcome outcome) override {
    std::lock_guard lock(mutex_);
    enter();
    auto it = registrations_.find(registration_id);
    if (it == registrations_.end() || it->second.status != admin::kAlarmClaimed || it->second.time != claimed_at) return;
    it->second.status = outcome == admin::AlarmOutcome::kSent ? admin::kAlarmSent : admin::kAlarmFailed;
  }

  std::vector<admin::AlarmChannel> list_channels() override {
    std::lock_guard lock(mutex_);
    enter();
    std::vector<admin::AlarmChannel> out;
    for (const auto& [id, channel] : channels_) out.push_back(read(channel));
    return out;
  }
  std::optional<admin::AlarmChannel> get_channel(std::int64_t id) override {
    std::lock_guard lock(mutex_);
    enter();
    auto it = channels_.find(id);
    if (it == channels_.end()) return std::nullopt;
    return read(it->second);
  }
  admin::AlarmChannel create_channel(const admin::AlarmChannel& channel, const admin::Actor&) override {
    std::lock_guard lock(mutex_);
    enter();
    check(channel);
    admin::AlarmChannel stored = channel;
    stored.id = next_channel_id_++;
    stored.created_at = stored.updated_at = ++channel_clock_;
    channels_[stored.id] = stored;
    return read(stored);
  }
  admin::AlarmChannel update_channel(const admin::AlarmChannel& channel, const admin::Actor&) override {
    std::lock_guard lock(mutex_);
    enter();
    auto it = channels_.find(channel.id);
    if (it == channels_.end()) throw admin::NotFound("alarm channel " + std::to_string(channel.id) + " does not exist");
    check(channel);
    admin::AlarmChannel stored = channel;
    stored.created_at = it->second.created_at;
    stored.updated_at = ++channel_clock_;
    it->second = stored;
    return read(stored);
  }
  void remove_channel(std::int64_t id, const admin::Actor&) override {
    std::lock_guard lock(mutex_);
    enter();
    if (channels_.erase(id) == 0) throw admin::NotFound("alarm channel " + std::to_string(id) + " does not exist");
  }

 private:
  // As read back: the groups and jobs that still exist, ascending.
  admin::AlarmChannel read(admin::AlarmChannel channel) const {
    std::set<std::int64_t> groups, jobs;
    for (auto g : channel.groups) {
      if (group_exists(g)) groups.insert(g);
    }
    for (auto j : channel.jobs) {
      if (jobs_.count(j) != 0) jobs.insert(j);
    }
    channel.groups.assign(groups.begin(), groups.end());
    channel.jobs.assign(jobs.begin(), jobs.end());
    return channel;
  }
  bool group_exists(std::int64_t group) const {
    return std::any_of(jobs_.begin(), jobs_.end(), [&](const auto& j) { return j.second.job_group == group; });
  }
  void check(const admin::AlarmChannel& channel) const {
    for (const auto& [id, other] : channels_) {
      if (id != channel.id && other.name == channel.name) {
        throw admin::Conflict("name is taken by another alarm channel", "name");
      }
    }
    for (auto g : channel.groups) {
      if (!group_exists(g)) throw admin::Conflict("groups: group " + std::to_string(g) + " does not exist", "groups");
    }
    for (auto j : channel.jobs) {
      if (jobs_.count(j) == 0) throw admin::Conflict("jobs: job " + std::to_string(j) + " does not exist", "jobs");
    }
  }
  std::vector<admin::AlarmChannel> channels_of(const admin::Job& job) const {
    std::vector<admin::AlarmChannel> out;
    for (const auto& [id, channel] : channels_) {
      const bool mine = std::find(channel.jobs.begin(), channel.jobs.end(), job.id) != channel.jobs.end() ||
                        std::find(channel.groups.begin(), channel.groups.end(), job.job_group) != channel.groups.end();
      if (mine) out.push_back(read(channel));
    }
    return out;
  }

  // The channels taking the alarms of a group named `app_name`, by id.
  std::vector<admin::AlarmChannel> channels_of_app(const std::string& app_name) const {
    std::vector<admin::AlarmChannel> out;
    for (const auto& [id, channel] : channels_) {
      const auto read_back = read(channel);
      const bool mine = std::any_of(read_back.groups.begin(), read_back.groups.end(), [&](std::int64_t g) {
        auto name = app_names_.find(g);
        return name != app_names_.end() && name->second == app_name;
      });
      if (mine) out.push_back(read_back);
    }
    return out;
  }

  struct Registration {
    std::string app_name;
    std::string address;
    std::optional<std::int64_t> offset_ms;
    std::int64_t delay_ms = 0;
    int status = 0;  // clock_alarm_status
    std::int64_t time = 0;
  };
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
    const bool recipients =
        job != jobs_.end() && (!job->second.alarm_email.empty() || !channels_of(job->second).empty());
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
  std::map<std::int64_t, admin::AlarmChannel> channels_;
  std::int64_t next_channel_id_ = 1;
  std::int64_t channel_clock_ = 0;
  std::optional<std::string> error_;
  int claims_ = 0;
  std::map<std::int64_t, std::string> app_names_;  // group → app name
  std::map<std::int64_t, Registration> registrations_;
  std::int64_t next_registration_id_ = 1;
};

}  // namespace cronwheel::testing
