#pragma once

// The feeder (docs/scheduling.md, "Holding fires until they are due"): once a second it reads
// this node's own pending fires due within the window and pushes them into the ring, which
// ignores the ones it already holds or has handed on. That is how fires the schedule thread did
// not decide reach the pools: fires of the REST API (trigger once, delayed one-shot fires),
// retries, child jobs, fires taken over from a dead node, and fires that went back to pending
// (a send interrupted by the database, a sending fire whose executor never got it, a fire a
// full trigger pool could not take).
//
// Before pushing, each pass applies the misfire rule for late pending fires (judge_late_fires,
// fire_decision.h) to what it read: a scheduled fire later than the window is cancelled when
// its job says DO_NOTHING, and of a FIRE_ONCE_NOW job's late fires only the newest goes out.
// The cancellations are one guarded batch (ScheduleStore::cancel_pending, with their
// follow-ups) made before anything is pushed; when it fails, nothing is pushed that pass. This
// is also what a node restarted under the same node id does with the fires it left pending:
// they are its own, so its feeder reads them, and they follow their jobs' strategies as a
// takeover's would.
//
// Threading: the passes are a common::RecurringTask, their deadlines on the node's shared timer
// and their runs on a lane (thread) of their own; the push function is called on that lane
// only. start() (once) and stop() from any thread; stop() waits for a pass under way.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "admin/model/finished_runs.h"
#include "admin/model/fire.h"
#include "admin/scheduler/fire_decision.h"
#include "admin/model/schedule_store.h"
#include "common/timer/recurring_task.h"
#include "common/util/clock.h"

namespace cronwheel::admin {

class PendingFeeder {
 public:
  struct Options {
    std::int64_t window_ms = kPreReadWindowMs;
    int limit = 10'000;  // fires read per pass
    std::chrono::milliseconds interval{1'000};
    // When set, the fires the misfire rule cancels are counted there, by group. Must outlive
    // the feeder.
    FinishedRuns* finished_runs = nullptr;
  };
  // True when the fire was new to the ring.
  using Push = std::function<bool(const PendingFire& fire)>;

  // Time comes from tasks.clock(). `tasks` must outlive the feeder. Throws
  // std::invalid_argument for a non-positive interval.
  PendingFeeder(ScheduleStore& store, common::RecurringTasks& tasks, std::string node_id, Push push,
                Options options);
  ~PendingFeeder();  // stop()

  PendingFeeder(const PendingFeeder&) = delete;
  PendingFeeder& operator=(const PendingFeeder&) = delete;

  void start() { task_.start(); }
  void stop() noexcept { task_.stop(); }
  // A pass now rather than at the next second (fires admitted to a slot are waiting for it).
  void wake() noexcept { task_.wake(); }

  // One pass on the caller's thread: returns how many fires were new to the ring. Never throws
  // (a failed read is logged and the next pass tries again).
  std::size_t feed_once() noexcept;

 private:
  ScheduleStore& store_;
  common::Clock& clock_;
  const std::string node_id_;
  const Push push_;
  const Options options_;
  bool failing_ = false;
  common::RecurringTask task_;  // last: its lane uses the members above
};

}  // namespace cronwheel::admin
