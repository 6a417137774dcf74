#pragma once

#include <chrono>
#include <stop_token>

#include "admin/complete/completion.h"
#include "admin/model/completion_store.h"
#include "admin/model/registry_store.h"
#include "common/timer/recurring_task.h"
#include "common/util/clock.h"

namespace cronwheel::admin {

// Marks results that will never come: once at start and then every `interval` (60 s), every run
// still `triggered` more than `lost_after` (10 min) after it was sent whose executor address
// has no registration made within `dead_after` (90 s) becomes `lost` (Completion::mark_lost:
// code 500, "result lost: executor <addr> has not been registered for 10 minutes", retried
// like a failure, a FIX_DELAY job's next time set). The verdict is re-checked by the
// transition, so a run whose result or executor comes back in between is left alone, and
// several admin nodes running the monitor mark each run once.
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

  // One pass, as the lane does it: returns how many runs it marked lost. Throws what the
  // store throws. `stop` ends a long pass early.
  int check_once(std::stop_token stop = {});

 private:
  void pass(std::stop_token stop) noexcept;

  CompletionStore& store_;
  Completion& completion_;
  common::Clock& clock_;
  const Options options_;
  common::RecurringTask task_;  // last: its lane uses the members above
};

}  // namespace cronwheel::admin
