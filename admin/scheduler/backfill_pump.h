#pragma once

// The backfill pump of one admin node (docs/scheduling.md, "Backfill"; docs/workflows.md,
// "Backfill"): a recurring task that, once a second, takes one step of every running backfill
// (admin/model/backfill_store.h): under the backfill's row lock, it counts the backfill's
// unfinished runs and writes the next instants' runs, oldest first, up to max_concurrent
// unfinished — a job's as pending BACKFILL rows owned by this node, a workflow's as running
// BACKFILL workflow runs whose first nodes' runs this node owns — then hands the job runs to the
// node's scheduling core (FiresWritten: sent at once, like an operator's trigger). A backfill
// whose every instant is written or skipped ends done once its last run ended; one whose job or
// workflow can no longer be backfilled (its schedule became NONE or FIX_DELAY, its calendar
// cannot be used) ends cancelled, saying why, and the runs it wrote go on.
//
// Every node runs a pump; a backfill another node is stepping is skipped (its row lock), so
// the nodes share the backfills without waiting for one another, and each step's runs are the
// stepping node's to send. Each step reads the job or workflow and its calendar as they are
// then: the instants after the cursor follow its schedule as it is at each step.
//
// Nothing is decided here: the rules are backfill.h's, the writes the store's. A failed step
// (the database away) is logged and tried again at the next pass; nothing is lost, since a
// backfill's progress is its committed row and runs.
//
// Threading: the passes run on a lane of their own (common::RecurringTask); start() once,
// stop() idempotent, wake() from any thread.

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "admin/model/backfill_store.h"
#include "admin/model/calendar_store.h"
#include "admin/model/run_end.h"
#include "admin/model/stores.h"
#include "admin/model/workflow_store.h"
#include "common/timer/recurring_task.h"

namespace cronwheel::admin {

class BackfillPump {
 public:
  struct Options {
    std::chrono::milliseconds interval{1'000};
    // Running backfills read per pass (at most kMaxRunningBackfills exist).
    int limit = static_cast<int>(kMaxRunningBackfills);
    // When set, a pass is made only while it answers true: the node's lease is valid, so the
    // runs it writes (owned by the node) are ones it can send.
    std::function<bool()> may_write;
  };

  // `store`, `jobs`, `workflows`, `calendars` and `tasks` must outlive the pump. `fires_written`
  // gets the job runs each step wrote (a workflow's: its runs' first nodes'), once committed.
  BackfillPump(BackfillStore& store, JobStore& jobs, WorkflowStore& workflows, CalendarStore& calendars,
               common::RecurringTasks& tasks, std::string node_id, FiresWritten fires_written, Options options);
  ~BackfillPump();  // stop()

  BackfillPump(const BackfillPump&) = delete;
  BackfillPump& operator=(const BackfillPump&) = delete;

  void start() { task_.start(); }
  void stop() noexcept { task_.stop(); }
  // A pass as soon as the lane is free (a backfill was just asked for).
  void wake() noexcept { task_.wake(); }

  // One pass on the caller's thread; answers how many runs it wrote. Never throws: a step that
  // fails is logged and left for the next pass.
  std::size_t pump_once() noexcept;

 private:
  std::size_t pass(const std::stop_token& stop) noexcept;
  // One step of `running`; answers the runs it wrote. Throws what the stores throw.
  std::size_t step(const Backfill& running);

  // The schedule backfill `running`'s job or workflow goes by now; none when it is gone (its
  // backfills with it). `refused` says why it cannot be backfilled any more.
  std::optional<Schedule> schedule_of(const Backfill& running, bool& gone, std::string& refused);

  BackfillStore& store_;
  JobStore& jobs_;
  WorkflowStore& workflows_;
  CalendarStore& calendars_;
  common::Clock& clock_;
  const std::string node_id_;
  const FiresWritten fires_written_;
  const Options options_;
  bool failing_ = false;  // the last pass failed (logged once until one works)
  common::RecurringTask task_;  // last: its lane uses the members above
};

}  // namespace cronwheel::admin
