#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <stop_token>

#include "admin/model/retention_store.h"
#include "common/timer/recurring_task.h"
#include "common/util/clock.h"

namespace cronwheel::admin {

// Deletes runs older than `keep` (docs/operations.md "Retention"), so the run table does not
// grow forever. Every `interval` (the first `first_delay` after start), a pass deletes batches
// of `batch` runs through RetentionStore::delete_runs_before (oldest first, finished runs only,
// each batch its own short transaction), with `pause` between batches so the fire path's
// statements get the table in between, until a batch comes back short or `max_batches` were
// deleted (the rest waits for the next pass). Every admin node runs it; nodes deleting at once
// take different rows. The run report behind the dashboard is not touched.
//
// Threading: the passes are a common::RecurringTask on the node's timer, on a lane of their
// own. stop() cancels the next pass and ends one under way after its current batch. A failed
// batch (store unreachable) ends the pass; the next one tries again. Counters may be read from
// any thread.
class RunRetention {
 public:
  struct Options {
    std::chrono::milliseconds keep{std::chrono::hours(24 * 30)};
    std::chrono::milliseconds interval{std::chrono::hours(1)};
    std::chrono::milliseconds first_delay{std::chrono::minutes(1)};
    int batch = 1'000;
    std::chrono::milliseconds pause{50};
    int max_batches = 1'000;
  };

  struct Counters {
    std::uint64_t deleted = 0;  // runs deleted
    std::uint64_t passes = 0;   // passes finished (failed ones included)
    std::uint64_t workflow_runs_deleted = 0;
  };

  // `store` and `tasks` (the node's timer and clock) must outlive the service. Throws
  // std::invalid_argument for a non-positive keep, interval, batch or max_batches, or a
  // negative first_delay or pause.
  RunRetention(RetentionStore& store, common::RecurringTasks& tasks, Options options);
  ~RunRetention();  // stop()

  RunRetention(const RunRetention&) = delete;
  RunRetention& operator=(const RunRetention&) = delete;

  void start() { task_.start(); }
  void stop() noexcept { task_.stop(); }

  // One pass, as the lane does it: returns the runs deleted. Throws what the store throws.
  std::int64_t pass_once(std::stop_token stop = {});

  Counters counters() const noexcept { return {deleted_.load(), passes_.load(), workflow_runs_deleted_.load()}; }

 private:
  void pass(std::stop_token stop) noexcept;

  RetentionStore& store_;
  common::Clock& clock_;
  const Options options_;
  std::atomic<std::uint64_t> deleted_{0}, passes_{0}, workflow_runs_deleted_{0};
  common::RecurringTask task_;  // last: its lane uses the members above
};

}  // namespace cronwheel::admin
