#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <stop_token>
#include <string>

#include "admin/complete/completion.h"
#include "admin/model/completion_store.h"
#include "admin/model/executor_client.h"
#include "admin/model/registry_store.h"
#include "common/timer/recurring_task.h"
#include "common/util/clock.h"

namespace cronwheel::admin {

// Marks results that will never come, once at start and then every `interval` (60 s), by two
// rules (docs/scheduling.md, "Results"):
//
//  1. The executor is gone: every run still `triggered` more than `lost_after` (10 min) after it
//     was sent whose executor address has no registration made within `dead_after` (90 s)
//     becomes `lost` (Completion::mark_lost: code 500, "result lost: executor <addr> has not been
//     registered for 10 minutes").
//  2. The executor forgot it (only with `executors` set): a run still `triggered` more than
//     `ask_after` (1 min) after it was sent is asked about at its executor (POST /log, from line
//     1). A cronwheel executor's answer says what the answering process holds of the run
//     (LogResult::run_state); "unknown" — not queued, not running, no result to send, so no
//     result will ever come: it was restarted (or replaced) since it accepted the run — makes the
//     run `lost` (Completion::mark_forgotten, the message names the executor and when it
//     started). Any other answer, an answer without run_state (an XXL-JOB executor, an older
//     cronwheel) or none leaves the run to rule 1. Each executor is asked about its oldest runs
//     first; once its start time is known, runs triggered more than `start_margin` after it are
//     not asked about (that process accepted them and keeps each until its result is accepted)
//     unless their delivery was never confirmed (trigger code 500: no answer to /run nor /log,
//     TriggerStore::record_unconfirmed), and an executor that does not answer or does not say
//     run_state is not asked again in the same pass.
//
// Both are retried like a failure and set a FIX_DELAY job's next time. The verdict is re-checked
// by the transition, so a run whose result (or, for rule 1, executor) comes back in between is
// left alone, and several admin nodes running the monitor mark each run once.
//
// "Sent" is measured with the clock of the node's recurring tasks against the run's
// trigger_time; registrations' ages with the database's clock (RegistryStore's contract).
//
// Threading: the passes are a common::RecurringTask: their deadlines are on the node's shared
// timer and they run on a lane (thread) of their own, which owns the store calls. stop()
// cancels the next deadline, lets the run being marked finish (a pass with many candidates
// stops between two runs) and joins the lane. A failed pass is logged and tried again at the
// next interval. stop() is idempotent.
class LostResultMonitor {
 public:
  struct Options {
    std::chrono::milliseconds interval{60'000};
    std::chrono::milliseconds lost_after{std::chrono::minutes(10)};
    std::chrono::milliseconds dead_after{90'000};
    int batch = 500;  // candidates read per query; a pass reads until it gets fewer

    // Rule 2; off when `executors` is null. `executors` must outlive the monitor.
    ExecutorClient* executors = nullptr;
    // The token the executors of a run's group are called with (the group's own, else the
    // admin's: ExecutorTokens::for_group_id), as the trigger sent the run with it; unset:
    // access_token for every group.
    std::function<std::string(std::int64_t group_id)> token_of = {};
    std::string access_token;
    std::chrono::milliseconds ask_after{60'000};
    // Clock skew tolerated between an executor's start time and this node's trigger times.
    std::chrono::milliseconds start_margin{60'000};
  };

  // Throws std::invalid_argument for non-positive durations or batch. `tasks` (the node's timer
  // and clock) must outlive the monitor.
  LostResultMonitor(CompletionStore& store, Completion& completion, common::RecurringTasks& tasks,
                    Options options);
  ~LostResultMonitor();  // stop()

  LostResultMonitor(const LostResultMonitor&) = delete;
  LostResultMonitor& operator=(const LostResultMonitor&) = delete;

  // Throws std::logic_error when called twice.
  void start() { task_.start(); }
  void stop() noexcept { task_.stop(); }

  // One pass, as the lane does it (rule 1, then rule 2): returns how many runs it marked lost.
  // Throws what the store throws. `stop` ends a long pass early.
  int check_once(std::stop_token stop = {});

 private:
  int check_gone(const std::stop_token& stop);
  int check_forgotten(const std::stop_token& stop);
  void pass(std::stop_token stop) noexcept;

  CompletionStore& store_;
  Completion& completion_;
  common::Clock& clock_;
  const Options options_;
  common::RecurringTask task_;  // last: its lane uses the members above
};

}  // namespace cronwheel::admin
