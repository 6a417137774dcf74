#pragma once

// What keeps workflow runs going on one admin node (docs/workflows.md, "Running it"), as one
// recurring task on the node's timer, once a second:
//  1. the workflow scan: scheduled workflows due within the pre-read window get their runs,
//     decided by the same rules as jobs' fires (decide_fires: CRON in its zone, FIX_RATE,
//     DO_NOTHING / FIRE_ONCE_NOW beyond the window, the workflow's calendar), under the workflow
//     scan lock, so across nodes each scheduled run is created once; the first nodes' fires are
//     due at the run's time;
//  2. runs waiting for room (overlap WAIT, PARALLEL) start once the runs before them ended, so a
//     waiting run starts within a second of the run before it ending;
//     timeouts: running runs past their deadline end timed_out;
//  3. kills: node runs still going on although their workflow run ended with them to be killed
//     (cancelled, timed out, failed with KILL) are killed at their executors (`kill`).
// Nothing here decides which node starts: the store's transactions and the planner do. A pass
// that fails (the database away) is logged and the next one tries again; nothing is lost, since
// every decision is a committed row.
//
// Threading: the pass runs on the task's own lane. start() once, stop() idempotent.

#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>
#include <string>

#include "admin/model/calendar_store.h"
#include "admin/model/run_end.h"
#include "admin/model/workflow_store.h"
#include "admin/scheduler/calendar_cache.h"
#include "common/timer/recurring_task.h"

namespace cronwheel::admin {

class WorkflowRunner {
 public:
  struct Options {
    std::chrono::milliseconds interval{1000};
    int scan_limit = 500;  // workflows read per scan
    int batch = 100;       // timeouts and kills handled per pass
    // How often the runs are counted by state for /metrics (a query over every run).
    std::chrono::milliseconds count_every{15'000};
    // Where the calendars of workflows that name one are read (CalendarCache, as the schedule
    // thread keeps its own). Without it such workflows are never decided. Must outlive this.
    CalendarStore* calendars = nullptr;
  };
  // Kills a node's run at its executor and records it killed (Completion::mark_killed); must not
  // throw.
  using Kill = std::function<void(const JobLog& run)>;

  // `store` and `tasks` must outlive the runner. `fires_written` gets the fires each pass wrote
  // (send them soon).
  WorkflowRunner(WorkflowStore& store, common::RecurringTasks& tasks, std::string node_id, FiresWritten fires_written,
                 Kill kill, Options options);
  ~WorkflowRunner();

  WorkflowRunner(const WorkflowRunner&) = delete;
  WorkflowRunner& operator=(const WorkflowRunner&) = delete;

  void start() { task_.start(); }
  void stop() noexcept { task_.stop(); }

  // One pass, as the task makes it; throws what the store throws.
  void pass_once();

  // The runs by state as last counted (count_every), for /metrics; empty before the first count.
  std::vector<std::pair<WorkflowRunState, std::int64_t>> run_counts() const;

 private:
  void pass(std::stop_token stop) noexcept;

  WorkflowStore& store_;
  common::Clock& clock_;
  const std::string node_id_;
  const FiresWritten fires_written_;
  const Kill kill_;
  const Options options_;
  mutable std::mutex counts_mutex_;
  std::vector<std::pair<WorkflowRunState, std::int64_t>> counts_;  // guarded by counts_mutex_
  std::int64_t counted_at_ = 0;  // the lane's: when counts_ was last read (epoch ms)
  std::optional<CalendarCache> calendars_;  // the lane's; with options_.calendars
  common::RecurringTask task_;  // last: its lane uses the members above
};

}  // namespace cronwheel::admin
