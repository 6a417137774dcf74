#pragma once

// An in-memory CompletionStore with the semantics of PgCompletionStore, over a FakeStores' jobs
// and logs (what FakeStores::logs() lists is what it changed) and a FakeRegistryStore's
// registrations (for the lost-result rules). Ages of registrations use the registry's clock;
// trigger times are compared as given.
//
// record() is one step under the FakeStores' mutex, as the real one is one transaction: of two
// concurrent results for a run exactly one moves it, and only that one writes follow-ups.
// Thread-safe.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "admin/model/completion_store.h"
#include "admin/model/fire.h"
#include "admin/model/records.h"
#include "admin/model/stores.h"
#include "tests/support/fake_registry_store.h"
#include "tests/support/fake_stores.h"

namespace cronwheel::testing {

class FakeCompletionStore final : public admin::CompletionStore {
 public:
  FakeCompletionStore(FakeStores& stores, FakeRegistryStore& registry) : stores_(stores), registry_(registry) {}

  Recorded record(const admin::RunResult& result, const Decide& decide) override {
    const bool lost = result.state == admin::FireState::kLost;
    // Read before taking the stores' mutex (lock order: registry, then stores).
    const auto live = lost && !result.lost_forgotten ? registry_.live(result.lost_dead_after_ms)
                                                     : std::vector<admin::RegistryEntry>{};
    return stores_.with_state([&](fake_stores_detail::State& s) {
      Recorded out;
      auto it = s.logs.find(result.log_id);
      if (it == s.logs.end()) return out;  // kUnknownLog
      admin::JobLog& run = it->second;
      const bool moves = lost ? run.state == admin::FireState::kTriggered && run.trigger_time &&
                                    *run.trigger_time <= result.lost_triggered_before &&
                                    (result.lost_forgotten || !registered(live, run.executor_address))
                              : run.state == admin::FireState::kTriggered || run.state == admin::FireState::kSending;
      if (!moves) {
        out.run = run;
        out.status = admin::is_finished(run.state) ? Status::kAlreadyFinal : Status::kNotRunning;
        return out;
      }
      // Follow-ups are computed before anything changes, so a throw leaves the state as it was,
      // like a rolled-back transaction.
      admin::JobLog after = run;
      after.state = result.state;
      after.handle_time = result.handle_time;
      after.handle_code = result.handle_code;
      after.handle_msg = result.handle_msg;
      if (result.state == admin::FireState::kCancelled) after.alarm_status = 1;  // an operator's: no alarm
      const admin::Job& job = s.jobs.at(after.job_id);
      std::vector<admin::Job> children;
      for (auto id : fake_stores_detail::sorted_unique(job.child_job_ids)) {
        auto child = s.jobs.find(id);
        if (child != s.jobs.end() && id != job.id) children.push_back(child->second);
      }
      admin::FollowUps follow = decide(after, job, children);
      for (auto fire : follow.fires) {
        fake_stores_detail::check_fire(fire);
        if (s.jobs.count(fire.job_id) == 0) throw admin::NotFound("job " + std::to_string(fire.job_id) + " does not exist");
      }

      run = after;
      out.status = Status::kRecorded;
      out.run = after;
      for (auto fire : follow.fires) {
        fire.state = admin::FireState::kPending;
        fire.id = s.next_log++;
        s.logs[fire.id] = fire;
        out.fires.push_back(fire);
      }
      if (follow.fix_delay_next_time) {
        admin::Job& stored = s.jobs.at(job.id);
        if (stored.trigger_status == 1 && stored.trigger_next_time == admin::kAwaitingCompletion) {
          stored.trigger_next_time = *follow.fix_delay_next_time;
          out.next_time_set = true;
        }
      }
      return out;
    });
  }

  // One record() per result, in order. Unlike the real one (one transaction) a throw part-way
  // keeps the results before it: tests of the fake never make a store call fail part-way.
  std::vector<Recorded> record_all(const std::vector<admin::RunResult>& results, const Decide& decide) override {
    for (const auto& r : results) {
      if (r.state == admin::FireState::kLost) throw std::invalid_argument("record_all takes executors' results, not lost ones");
    }
    std::vector<Recorded> out;
    for (const auto& r : results) out.push_back(record(r, decide));
    return out;
  }

  bool return_not_started(std::int64_t log_id, const std::string& node_id, const std::string& note) override {
    return stores_.with_state([&](fake_stores_detail::State& s) {
      auto it = s.logs.find(log_id);
      if (it == s.logs.end()) return false;
      admin::JobLog& run = it->second;
      if (run.state != admin::FireState::kTriggered && run.state != admin::FireState::kSending) return false;
      run.state = admin::FireState::kPending;
      run.admin_node = node_id;
      run.trigger_time.reset();
      run.trigger_code = 0;
      run.trigger_msg = run.trigger_msg.empty() ? note : run.trigger_msg + "\n" + note;
      return true;
    });
  }

  bool cancel_not_started(std::int64_t log_id, const std::string& note) override {
    return stores_.with_state([&](fake_stores_detail::State& s) {
      auto it = s.logs.find(log_id);
      if (it == s.logs.end()) return false;
      admin::JobLog& run = it->second;
      if (run.state != admin::FireState::kTriggered && run.state != admin::FireState::kSending) return false;
      run.state = admin::FireState::kCancelled;
      run.alarm_status = 1;
      run.trigger_msg = run.trigger_msg.empty() ? note : run.trigger_msg + "\n" + note;
      return true;
    });
  }

  std::vector<admin::JobLog> held_runs(std::int64_t job_id, std::int64_t now, int limit) override {
    return stores_.with_state([&](fake_stores_detail::State& s) {
      std::vector<admin::JobLog> out;  // s.logs is ordered by id
      for (const auto& [id, l] : s.logs) {
        if (static_cast<int>(out.size()) >= limit) break;
        if (l.job_id == job_id && admin::CompletionStore::held_at(l, now)) {
          out.push_back(l);
        }
      }
      return out;
    });
  }

  std::vector<admin::JobLog> lost_candidates(std::int64_t triggered_before, std::int64_t dead_after_ms,
                                             int limit) override {
    const auto live = registry_.live(dead_after_ms);
    auto candidates = stores_.with_state([&](fake_stores_detail::State& s) {
      std::vector<admin::JobLog> out;
      for (const auto& [id, l] : s.logs) {
        if (l.state == admin::FireState::kTriggered && l.trigger_time && *l.trigger_time <= triggered_before &&
            !registered(live, l.executor_address)) {
          out.push_back(l);
        }
      }
      return out;
    });
    std::sort(candidates.begin(), candidates.end(), [](const admin::JobLog& a, const admin::JobLog& b) {
      return a.trigger_time != b.trigger_time ? a.trigger_time < b.trigger_time : a.id < b.id;
    });
    if (candidates.size() > static_cast<std::size_t>(std::max(limit, 0))) candidates.resize(std::max(limit, 0));
    return candidates;
  }

  std::vector<admin::JobLog> triggered_runs(std::int64_t triggered_before, const std::optional<RunCursor>& after,
                                            int limit) override {
    auto key = [](const admin::JobLog& l) {
      return std::make_tuple(l.executor_address, l.trigger_time.value_or(0), l.id);
    };
    auto runs = stores_.with_state([&](fake_stores_detail::State& s) {
      std::vector<admin::JobLog> out;
      for (const auto& [id, l] : s.logs) {
        if (l.state != admin::FireState::kTriggered || !l.trigger_time || *l.trigger_time > triggered_before) continue;
        if (after && key(l) <= std::make_tuple(after->executor_address, after->trigger_time, after->id)) continue;
        out.push_back(l);
      }
      return out;
    });
    std::sort(runs.begin(), runs.end(), [&](const admin::JobLog& a, const admin::JobLog& b) { return key(a) < key(b); });
    if (runs.size() > static_cast<std::size_t>(std::max(limit, 0))) runs.resize(std::max(limit, 0));
    return runs;
  }

 private:
  static std::string_view without_trailing_slashes(std::string_view address) {
    while (!address.empty() && address.back() == '/') address.remove_suffix(1);
    return address;
  }
  static bool registered(const std::vector<admin::RegistryEntry>& live, std::string_view address) {
    return std::any_of(live.begin(), live.end(), [&](const admin::RegistryEntry& e) {
      return e.registry_group == "EXECUTOR" &&
             without_trailing_slashes(e.registry_value) == without_trailing_slashes(address);
    });
  }

  FakeStores& stores_;
  FakeRegistryStore& registry_;
};

}  // namespace cronwheel::testing
