#include "executor/src/lead_hold.h"

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <utility>

#include <spdlog/spdlog.h>

#include "executor/src/run_log.h"

namespace cronwheel::executor {

using common::protocol::HandleCallbackParam;
using common::protocol::kFailCode;
using common::protocol::kMaxLeadAheadMs;
using common::protocol::kMaxLeadFires;
using common::protocol::LeadAnswer;
using common::protocol::LeadCancelAnswer;
using common::protocol::LeadCancelParam;
using common::protocol::LeadRefusal;
using common::protocol::LeadRequest;
using common::protocol::ReturnT;
using common::protocol::TriggerParam;

HandleCallbackParam not_started_result(std::int64_t log_id, std::int64_t log_date_time, std::string_view reason) {
  HandleCallbackParam result;
  result.log_id = log_id;
  result.log_date_time = log_date_time;
  result.handle_code = kFailCode;
  result.handle_msg = "not started: " + std::string(reason);
  result.not_started = std::string(reason);
  return result;
}

LeadHold::LeadHold(LeadHoldOptions options, LeadHoldHooks hooks, common::Timer& timer, common::Clock& clock)
    : options_(std::move(options)),
      hooks_(std::move(hooks)),
      timer_(timer),
      clock_(clock),
      journal_(LeadJournal::Options{options_.journal_dir, options_.journal_compact_bytes}, clock) {}

LeadHold::~LeadHold() { stop(); }

ReturnT<LeadAnswer> LeadHold::hold(const LeadRequest& request) {
  using Answer = ReturnT<LeadAnswer>;
  const std::int64_t max_offset = options_.max_clock_offset.count();
  if (request.fires.size() > kMaxLeadFires) {
    return Answer::fail("lead dispatch refused: " + std::to_string(request.fires.size()) + " fires, more than " +
                        std::to_string(kMaxLeadFires) + " in one request");
  }
  if (request.admin_time <= 0) {
    return Answer::fail("lead dispatch refused: adminTime " + std::to_string(request.admin_time) +
                        " is not a time (epoch ms)");
  }
  const std::optional<ClockSample> estimate = hooks_.clock_estimate ? hooks_.clock_estimate() : std::nullopt;
  if (!estimate) {
    return Answer::fail("lead dispatch refused: this executor has not measured the admin's clock yet");
  }
  if (std::abs(estimate->offset_ms) > max_offset) {
    return Answer::fail("lead dispatch refused: the admin's clock is " + std::to_string(estimate->offset_ms) +
                        " ms from this executor's, beyond max-clock-offset " + std::to_string(max_offset) + " ms");
  }
  const std::int64_t now_ms = clock_.now_ms();
  const std::int64_t admin_now = now_ms + estimate->offset_ms;
  if (std::abs(request.admin_time - admin_now) > max_offset) {
    return Answer::fail("lead dispatch refused: adminTime " + std::to_string(request.admin_time) + " is " +
                        std::to_string(request.admin_time - admin_now) +
                        " ms from the admin's clock as this executor estimates it, beyond max-clock-offset " +
                        std::to_string(max_offset) + " ms (a clock step, or a request delayed that long)");
  }
  // Late is fine, early never: the offset is known to ±delay/2.
  const std::int64_t correction = -estimate->offset_ms + (std::max<std::int64_t>(estimate->delay_ms, 0) + 1) / 2;

  // Judged without the lock: these do not depend on what is held.
  LeadAnswer answer;
  std::vector<const common::protocol::LeadFire*> candidates;
  std::unordered_set<std::int64_t> received;
  for (const auto& fire : request.fires) {
    const TriggerParam& trigger = fire.trigger;
    auto refuse = [&](std::string msg) { answer.refused.push_back(LeadRefusal{trigger.log_id, std::move(msg)}); };
    if (auto problem = RunLogStore::log_date_time_problem(trigger.log_date_time, now_ms)) {
      refuse("logDateTime " + *problem + "; run refused");
    } else if (fire.fire_at <= 0) {
      // Also keeps the arithmetic below far from overflowing.
      refuse("fireAt " + std::to_string(fire.fire_at) + " is not a time (epoch ms)");
    } else if (fire.fire_at - admin_now > kMaxLeadAheadMs) {
      refuse("fireAt " + std::to_string(fire.fire_at) + " is " + std::to_string(fire.fire_at - admin_now) +
             " ms ahead of the admin's clock as this executor estimates it, more than " +
             std::to_string(kMaxLeadAheadMs) + " ms");
    } else if (auto refusal = hooks_.check ? hooks_.check(trigger) : std::nullopt) {
      refuse(std::move(*refusal));
    } else if (hooks_.received && hooks_.received(trigger)) {
      received.insert(trigger.log_id);  // came by /run, or a resend of a fire that ran
      candidates.push_back(&fire);
    } else {
      candidates.push_back(&fire);
    }
  }

  std::lock_guard lock(mutex_);
  if (stopping_) return Answer::fail("lead dispatch refused: the executor is stopping");
  std::vector<LeadJournal::Fire> journaled;
  std::vector<const common::protocol::LeadFire*> to_hold;
  std::unordered_set<std::int64_t> in_request;
  for (const auto* fire : candidates) {
    const TriggerParam& trigger = fire->trigger;
    const std::int64_t id = trigger.log_id;
    if (held_.contains(id) || started_.contains(id) || in_request.contains(id) || received.contains(id)) {
      answer.accepted.push_back(id);  // a resend: held or run once only
      continue;
    }
    if (held_.size() + to_hold.size() >= options_.max_held_fires) {
      answer.refused.push_back(LeadRefusal{
          id, "this executor holds " + std::to_string(options_.max_held_fires) +
                  " fires already (max-held-fires); fire refused"});
      continue;
    }
    in_request.insert(id);
    to_hold.push_back(fire);
    journaled.push_back({id, trigger.log_date_time});
  }
  if (!journal_.held(journaled)) {
    return Answer::fail("lead dispatch refused: this executor cannot write its lead journal");
  }
  for (const auto* fire : to_hold) {
    const std::int64_t id = fire->trigger.log_id;
    const std::int64_t start_ms = fire->fire_at + correction;
    held_[id] = Held{fire->trigger, start_ms};
    answer.accepted.push_back(id);
    Slot& slot = slots_[start_ms];
    slot.log_ids.push_back(id);
    if (!slot.timeout) {
      // From the clock now, not from now_ms: holding a large request takes a while, and the
      // timer counts the delay from this call.
      const auto delay = std::chrono::milliseconds(std::max<std::int64_t>(start_ms - clock_.now_ms(), 0));
      try {
        slot.timeout = timer_.schedule([this, start_ms] { start_due(start_ms); }, delay);
      } catch (const std::exception& e) {
        // The timer is stopping (the executor is): the hold's stop() reports the fire.
        spdlog::error("lead dispatch: cannot schedule the fires of {}: {}", start_ms, e.what());
      }
    }
  }
  return Answer::success(std::move(answer));
}

void LeadHold::remember_started_locked(std::int64_t log_id) {
  if (!started_.insert(log_id).second) return;
  started_order_.push_back(log_id);
  while (started_order_.size() > std::max<std::size_t>(options_.max_held_fires, 1)) {
    started_.erase(started_order_.front());
    started_order_.pop_front();
  }
}

void LeadHold::start_due(std::int64_t start_ms) noexcept {
  std::vector<TriggerParam> due;
  bool recorded = false;
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;  // stop() reports what is held
    auto slot = slots_.find(start_ms);
    if (slot == slots_.end()) return;
    std::vector<std::int64_t> ids;
    for (auto id : slot->second.log_ids) {
      auto it = held_.find(id);
      if (it == held_.end() || it->second.start_ms != start_ms) continue;  // cancelled
      due.push_back(std::move(it->second.trigger));
      ids.push_back(id);
      held_.erase(it);
    }
    slots_.erase(slot);
    if (due.empty()) return;
    recorded = journal_.started(ids);
    if (recorded) {
      for (auto id : ids) {
        remember_started_locked(id);
        starting_ids_.insert(id);
      }
    }
    ++starting_;
  }
  if (!recorded) {
    // Started without a record, a fire could be reported not started after a crash and run twice.
    for (const auto& trigger : due) report_not_started(trigger, "executor cannot write its lead journal");
    std::vector<std::int64_t> ids;
    for (const auto& trigger : due) ids.push_back(trigger.log_id);
    journal_.returned(ids);
  } else {
    // All at once: queued before any of them starts (JobDispatcher::run_all).
    std::vector<ReturnT<std::string>> answers;
    std::string failure;
    try {
      answers = hooks_.run(due);
      if (answers.size() != due.size()) failure = "the run could not start: no answer for it";
    } catch (const std::exception& e) {
      failure = std::string("the run could not start: ") + e.what();
    }
    for (std::size_t i = 0; i < due.size(); ++i) {
      const TriggerParam& trigger = due[i];
      if (failure.empty() && answers[i].is_success()) continue;
      std::string refusal = failure.empty() ? std::move(answers[i].msg) : failure;
      // Delivered, as far as the admin knows: the refusal is the run's result.
      spdlog::info("lead dispatch: job {} run {} refused at its instant: {}", trigger.job_id, trigger.log_id,
                   refusal);
      HandleCallbackParam result;
      result.log_id = trigger.log_id;
      result.log_date_time = trigger.log_date_time;
      result.handle_code = kFailCode;
      result.handle_msg = std::move(refusal);
      try {
        hooks_.report(std::move(result));
      } catch (const std::exception& e) {
        spdlog::error("lead dispatch: cannot report run {}: {}", trigger.log_id, e.what());
      }
    }
    // Each fire is now the dispatcher's or its result is held for the admin (/run's "received
    // already" sees it either way): no longer the hold's.
    std::lock_guard lock(mutex_);
    for (const auto& trigger : due) starting_ids_.erase(trigger.log_id);
  }
  std::lock_guard lock(mutex_);
  if (--starting_ == 0) idle_.notify_all();
}

void LeadHold::report_not_started(const TriggerParam& trigger, std::string_view reason) const {
  try {
    hooks_.report(not_started_result(trigger.log_id, trigger.log_date_time, reason));
  } catch (const std::exception& e) {
    spdlog::error("lead dispatch: cannot report run {} not started: {}", trigger.log_id, e.what());
  }
}

LeadCancelAnswer LeadHold::cancel(const LeadCancelParam& param) {
  LeadCancelAnswer answer;
  std::vector<common::TimerHandle> emptied;
  {
    std::lock_guard lock(mutex_);
    for (std::size_t i = 0; i < param.log_ids.size() && i < kMaxLeadFires; ++i) {
      const std::int64_t id = param.log_ids[i];
      auto it = held_.find(id);
      if (it != held_.end()) {
        auto slot = slots_.find(it->second.start_ms);
        held_.erase(it);
        if (slot != slots_.end()) {
          std::erase(slot->second.log_ids, id);
          if (slot->second.log_ids.empty()) {
            emptied.push_back(std::move(slot->second.timeout));
            slots_.erase(slot);
          }
        }
        answer.cancelled.push_back(id);
      } else if (started_.contains(id)) {
        answer.started.push_back(id);
      } else {
        answer.unknown.push_back(id);
      }
    }
    // A crash before this record reports them not started; the admin ignores that for a fire it
    // took back.
    journal_.cancelled(answer.cancelled);
  }
  for (auto& timeout : emptied) timeout.cancel();
  if (!answer.cancelled.empty()) {
    spdlog::info("lead dispatch: {} held fire(s) cancelled: {}", answer.cancelled.size(), param.reason);
  }
  return answer;
}

bool LeadHold::holds(std::int64_t log_id) const {
  std::lock_guard lock(mutex_);
  return held_.contains(log_id) || starting_ids_.contains(log_id);
}

std::size_t LeadHold::held_count() const {
  std::lock_guard lock(mutex_);
  return held_.size();
}

std::size_t LeadHold::recover() {
  std::size_t reported = 0;
  for (auto& orphan : journal_.orphans()) {
    for (const auto& fire : orphan.unstarted) {
      TriggerParam trigger;
      trigger.log_id = fire.log_id;
      trigger.log_date_time = fire.log_date_time;
      report_not_started(trigger, kRestartedReason);
      ++reported;
    }
    if (!orphan.unstarted.empty()) {
      spdlog::warn("lead dispatch: {} fire(s) held by an earlier process ({}) reported not started",
                   orphan.unstarted.size(), orphan.instance);
    }
    journal_.remove(orphan);
  }
  return reported;
}

void LeadHold::stop() {
  std::vector<TriggerParam> returned;
  std::vector<common::TimerHandle> timeouts;
  {
    std::unique_lock lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
    idle_.wait(lock, [this] { return starting_ == 0; });
    for (auto& [id, held] : held_) returned.push_back(std::move(held.trigger));
    for (auto& [start_ms, slot] : slots_) timeouts.push_back(std::move(slot.timeout));
    held_.clear();
    slots_.clear();
  }
  for (auto& timeout : timeouts) timeout.cancel();
  std::sort(returned.begin(), returned.end(),
            [](const TriggerParam& a, const TriggerParam& b) { return a.log_id < b.log_id; });
  std::vector<std::int64_t> ids;
  for (const auto& trigger : returned) {
    report_not_started(trigger, kStoppingReason);
    ids.push_back(trigger.log_id);
  }
  if (!returned.empty()) {
    spdlog::info("lead dispatch: {} held fire(s) reported not started (stopping)", returned.size());
  }
  journal_.returned(ids);
  journal_.close();
}

}  // namespace cronwheel::executor
