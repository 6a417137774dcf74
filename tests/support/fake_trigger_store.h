#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
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

  bool wait_for_slot(std::int64_t log_id, std::string_view node_id, const std::string& note) override {
    run_hook("wait_for_slot");
    std::lock_guard lock(mutex_);
    auto it = logs_.find(log_id);
    if (it == logs_.end()) return false;
    admin::JobLog& row = it->second;
    if (row.state != admin::FireState::kPending || row.admin_node != node_id || row.waiting_slot ||
        row.slot_admitted) {
      return false;
    }
    row.waiting_slot = true;
    append(row.trigger_msg, note);
    return true;
  }

  std::map<std::int64_t, std::int64_t> waiting_by_group() override {
    run_hook("waiting_by_group");
    std::lock_guard lock(mutex_);
    std::map<std::int64_t, std::int64_t> out;
    for (const auto& [id, l] : logs_) {
      if (l.waiting_slot && l.state == admin::FireState::kPending) ++out[l.job_group];
    }
    return out;
  }

  // As PgTriggerStore::admit; a group another node admits for is played by held_group().
  std::optional<std::vector<admin::PendingFire>> admit(std::int64_t group_id, std::string_view node_id,
                                                       std::size_t max_candidates,
                                                       const ChooseAdmitted& choose) override {
    run_hook("admit");
    std::lock_guard lock(mutex_);
    auto group = groups_.find(group_id);
    if (group == groups_.end() || held_groups_.count(group_id)) return std::nullopt;
    std::map<std::int64_t, int> holding;
    std::vector<admin::SlotCandidate> candidates;
    for (const auto& [id, l] : logs_) {
      if (l.job_group != group_id) continue;
      const bool live = l.state == admin::FireState::kPending || l.state == admin::FireState::kSending ||
                        l.state == admin::FireState::kTriggered;
      if (l.slot_admitted && live) ++holding[l.job_id];
      if (l.waiting_slot && l.state == admin::FireState::kPending) {
        const auto job = jobs_.find(l.job_id);
        const int priority = job == jobs_.end() ? 0 : job->second.priority;
        const int limit = job == jobs_.end() ? 0 : job->second.max_concurrent;
        candidates.push_back({l.id, l.job_id, priority, l.scheduled_time, limit});
      }
    }
    std::sort(candidates.begin(), candidates.end(), admin::slot_order);
    if (candidates.size() > max_candidates) candidates.resize(max_candidates);
    std::vector<admin::PendingFire> admitted;
    if (candidates.empty()) return admitted;
    for (auto id : choose(group->second.max_running, holding, std::move(candidates))) {
      admin::JobLog& row = logs_.at(id);
      if (row.state != admin::FireState::kPending || !row.waiting_slot) continue;
      row.waiting_slot = false;
      row.slot_admitted = true;
      row.admin_node = std::string(node_id);
      admitted.push_back({row.id, row.job_id, row.scheduled_time});
    }
    return admitted;
  }
  // Plays another node admitting for the group: admit() answers nullopt for it while held.
  void held_group(std::int64_t group_id, bool held) {
    std::lock_guard lock(mutex_);
    if (held) {
      held_groups_.insert(group_id);
    } else {
      held_groups_.erase(group_id);
    }
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
  std::set<std::int64_t> held_groups_;
};

}  // namespace cronwheel::testing
