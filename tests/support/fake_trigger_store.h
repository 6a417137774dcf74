#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "admin/model/fire.h"
#include "admin/model/records.h"
#include "admin/model/trigger_store.h"
#include "tests/support/fake_follow_ups.h"

namespace cronwheel::testing {

// An in-memory TriggerStore with PgTriggerStore's semantics (guarded transitions, broadcast
// expansion that skips existing scheduled shards, the result-first rule, RETRY fires and the
// FIX_DELAY next time), over jobs, groups and log rows the test puts in.
//
// before_call(hook) runs the hook at the start of every store call with the method's name
// ("load_pending", "claim", "release_claim", "record_triggered", "record_failed"): a test
// throws from it to simulate an unreachable database, or changes rows (update_log) to simulate
// another node. set_lease_left() plays the node's lease as the claim sees it.
//
// Thread-safe.
class FakeTriggerStore final : public admin::TriggerStore {
 public:
  admin::Group put_group(admin::Group group) {
    std::lock_guard lock(mutex_);
    if (group.id == 0) group.id = next_group_++;
    next_group_ = std::max(next_group_, group.id + 1);
    groups_[group.id] = group;
    return group;
  }
  admin::Job put_job(admin::Job job) {
    std::lock_guard lock(mutex_);
    if (job.id == 0) job.id = next_job_++;
    next_job_ = std::max(next_job_, job.id + 1);
    jobs_[job.id] = job;
    return job;
  }
  // Stores the row as given (a new id unless it has one); job_group is taken from the job.
  admin::JobLog put_log(admin::JobLog log) {
    std::lock_guard lock(mutex_);
    if (log.id == 0) log.id = next_log_++;
    next_log_ = std::max(next_log_, log.id + 1);
    auto job = jobs_.find(log.job_id);
    if (job != jobs_.end()) log.job_group = job->second.job_group;
    logs_[log.id] = log;
    return log;
  }
  void update_log(std::int64_t id, const std::function<void(admin::JobLog&)>& change) {
    std::lock_guard lock(mutex_);
    change(logs_.at(id));
  }
  void update_job(std::int64_t id, const std::function<void(admin::Job&)>& change) {
    std::lock_guard lock(mutex_);
    change(jobs_.at(id));
  }
  std::optional<admin::JobLog> log(std::int64_t id) const {
    std::lock_guard lock(mutex_);
    auto it = logs_.find(id);
    return it == logs_.end() ? std::nullopt : std::optional<admin::JobLog>(it->second);
  }
  std::vector<admin::JobLog> logs() const {
    std::lock_guard lock(mutex_);
    std::vector<admin::JobLog> out;
    for (const auto& [id, l] : logs_) out.push_back(l);
    return out;
  }
  std::optional<admin::Job> job(std::int64_t id) const {
    std::lock_guard lock(mutex_);
    auto it = jobs_.find(id);
    return it == jobs_.end() ? std::nullopt : std::optional<admin::Job>(it->second);
  }
  void before_call(std::function<void(std::string_view method)> hook) {
    std::lock_guard lock(mutex_);
    hook_ = std::move(hook);
  }

  std::optional<LoadedFire> load_pending(std::int64_t log_id, std::string_view node_id) override {
    run_hook("load_pending");
    std::lock_guard lock(mutex_);
    auto it = logs_.find(log_id);
    if (it == logs_.end() || it->second.state != admin::FireState::kPending || it->second.admin_node != node_id) return std::nullopt;
    auto job = jobs_.find(it->second.job_id);
    if (job == jobs_.end()) return std::nullopt;
    auto group = groups_.find(job->second.job_group);
    if (group == groups_.end()) return std::nullopt;
    return LoadedFire{it->second, job->second, group->second};
  }

  // What is left of a node's lease (as the claim sees it); none: the node has no lease row.
  void set_lease_left(const std::string& node_id, std::optional<std::int64_t> left_ms) {
    std::lock_guard lock(mutex_);
    if (left_ms) {
      leases_[node_id] = *left_ms;
    } else {
      leases_.erase(node_id);
    }
  }

  Claimed claim(const Claim& c) override {
    run_hook("claim");
    if (c.addresses.empty()) throw std::invalid_argument("a claim needs at least one address");
    std::lock_guard lock(mutex_);
    Claimed out;
    auto& shards = out.shards;
    auto it = logs_.find(c.log_id);
    if (it == logs_.end() || it->second.state != admin::FireState::kPending || it->second.admin_node != c.node_id) return out;
    auto lease = leases_.find(c.node_id);
    if (lease != leases_.end()) {
      if (lease->second < c.min_lease_ms) return out;
      out.lease_left_ms = lease->second;
    }
    const bool broadcast = c.addresses.size() > 1;
    admin::JobLog& row = it->second;
    row.state = admin::FireState::kSending;
    row.executor_address = c.addresses.front();
    row.executor_handler = c.executor_handler;
    row.executor_param = c.executor_param;
    row.shard_index = broadcast ? 0 : c.shard_index;
    row.shard_total = broadcast ? static_cast<int>(c.addresses.size()) : c.shard_total;
    row.trigger_time = c.trigger_time;
    shards.push_back({row.id, row.executor_address, row.shard_index, row.shard_total});
    const admin::JobLog claimed = row;
    for (std::size_t i = 1; broadcast && i < c.addresses.size(); ++i) {
      // A new row: what the claimed row says about the fire, none of its own attempt's notes.
      admin::JobLog shard;
      shard.job_group = claimed.job_group;
      shard.job_id = claimed.job_id;
      shard.state = admin::FireState::kSending;
      shard.trigger_type = claimed.trigger_type;
      shard.scheduled_time = claimed.scheduled_time;
      shard.admin_node = claimed.admin_node;
      shard.executor_handler = claimed.executor_handler;
      shard.executor_param = claimed.executor_param;
      shard.shard_total = claimed.shard_total;
      shard.executor_fail_retry_count = claimed.executor_fail_retry_count;
      shard.parent_log_id = claimed.parent_log_id;
      shard.trigger_time = claimed.trigger_time;
      shard.shard_index = static_cast<int>(i);
      shard.executor_address = c.addresses[i];
      if (scheduled_exists(shard)) continue;
      shard.id = next_log_++;
      logs_[shard.id] = shard;
      shards.push_back({shard.id, shard.executor_address, shard.shard_index, shard.shard_total});
    }
    return out;
  }

  bool release_claim(std::int64_t log_id, std::string_view node_id, const std::string& note) override {
    run_hook("release_claim");
    std::lock_guard lock(mutex_);
    auto it = logs_.find(log_id);
    if (it == logs_.end() || it->second.state != admin::FireState::kSending || it->second.admin_node != node_id) return false;
    it->second.state = admin::FireState::kPending;
    it->second.trigger_time.reset();
    append(it->second.trigger_msg, note);
    return true;
  }

  bool move_claim(std::int64_t log_id, std::string_view node_id, const std::string& from, const std::string& to,
                  const std::string& note) override {
    run_hook("move_claim");
    std::lock_guard lock(mutex_);
    auto it = logs_.find(log_id);
    if (it == logs_.end() || it->second.state != admin::FireState::kSending || it->second.admin_node != node_id ||
        it->second.executor_address != from) {
      return false;
    }
    it->second.executor_address = to;
    append(it->second.trigger_msg, note);
    return true;
  }

  Recorded record_triggered(std::int64_t log_id, std::string_view node_id, const std::string& trigger_msg) override {
    run_hook("record_triggered");
    return triggered(log_id, node_id, trigger_msg, 200);
  }

  Recorded record_unconfirmed(std::int64_t log_id, std::string_view node_id, const std::string& trigger_msg) override {
    run_hook("record_unconfirmed");
    return triggered(log_id, node_id, trigger_msg, 500);
  }

  Failed record_failed(const Failure& f, const admin::FollowUpPlanner& plan) override {
    run_hook("record_failed");
    if (f.from != admin::FireState::kPending && f.from != admin::FireState::kSending) {
      throw std::invalid_argument("a trigger fails from pending or sending, not " +
                                  std::string(admin::to_string(f.from)));
    }
    std::lock_guard lock(mutex_);
    Failed out;
    auto it = logs_.find(f.log_id);
    if (it == logs_.end() || it->second.admin_node != f.node_id || it->second.state != f.from) return out;
    admin::JobLog& row = it->second;
    row.state = admin::FireState::kFailed;
    row.trigger_code = 500;
    append(row.trigger_msg, f.trigger_msg);
    if (!row.trigger_time) row.trigger_time = f.now;
    if (f.from == admin::FireState::kPending) {
      row.executor_handler = f.executor_handler;
      row.executor_param = f.executor_param;
    }
    out.recorded = Recorded::kRecorded;
    auto written = write_fake_follow_ups(jobs_, logs_, next_log_, row, plan);
    out.fires = std::move(written.fires);
    out.next_time_set = written.next_time_set;
    return out;
  }

 private:
  void run_hook(std::string_view method) {
    std::function<void(std::string_view)> hook;
    {
      std::lock_guard lock(mutex_);
      hook = hook_;
    }
    if (hook) hook(method);
  }
  static void append(std::string& to, const std::string& message) { to += (to.empty() ? "" : "\n") + message; }
  // sending → triggered with `code`; a run whose result came first gets code 200 (it was delivered).
  Recorded triggered(std::int64_t log_id, std::string_view node_id, const std::string& trigger_msg, int code) {
    std::lock_guard lock(mutex_);
    auto it = logs_.find(log_id);
    if (it == logs_.end() || it->second.admin_node != node_id) return Recorded::kNotOurs;
    admin::JobLog& row = it->second;
    const bool result_first = (row.state == admin::FireState::kSucceeded || row.state == admin::FireState::kFailed) && row.trigger_code == 0;
    if (row.state != admin::FireState::kSending && !result_first) return Recorded::kNotOurs;
    row.trigger_code = result_first ? 200 : code;
    append(row.trigger_msg, trigger_msg);
    if (result_first) return Recorded::kResultFirst;
    row.state = admin::FireState::kTriggered;
    return Recorded::kRecorded;
  }
  // Call with the mutex held. A scheduled fire is unique per job, scheduled time and shard.
  bool scheduled_exists(const admin::JobLog& l) const {
    auto scheduled = [](const admin::JobLog& x) { return x.trigger_type == admin::TriggerType::kSchedule || x.trigger_type == admin::TriggerType::kMisfire; };
    if (!scheduled(l)) return false;
    return std::any_of(logs_.begin(), logs_.end(), [&](const auto& entry) {
      const auto& x = entry.second;
      return scheduled(x) && x.job_id == l.job_id && x.scheduled_time == l.scheduled_time && x.shard_index == l.shard_index;
    });
  }

  mutable std::mutex mutex_;
  std::map<std::int64_t, admin::Group> groups_;
  std::map<std::int64_t, admin::Job> jobs_;
  std::map<std::int64_t, admin::JobLog> logs_;
  std::int64_t next_group_ = 1, next_job_ = 1, next_log_ = 1;
  std::function<void(std::string_view)> hook_;
  std::map<std::string, std::int64_t> leases_;
};

}  // namespace cronwheel::testing
