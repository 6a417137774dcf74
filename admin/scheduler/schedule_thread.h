#pragma once

// The schedule thread (docs/scheduling.md, "Deciding fires"): each loop, one scan in one
// transaction (ScheduleStore::scan: lock row, pre-read, decide_fires, durable pending rows and
// one batched job update), then, only after the commit, the fires go to the sink (the ring).
//
// The lock is held for one scan only (the scan's transaction). Between scans the thread sleeps
// on the injected Clock:
//  - after a scan that read a full pre-read batch: not at all (more jobs are due);
//  - after a scan that found work: to the next wall-second boundary;
//  - after one that found none: to the wall-second boundary just before the window's end
//    (at most 5 s), since nothing is due before then that the scan did not see, or, when the
//    next enabled job is due sooner than a window after that, to a window before it
//    (ScanResult::next_due), so each job's fires are decided a whole window ahead;
//  - after a failed scan (database unreachable): to the next second boundary, to try again.
// wake() cuts the sleep short. The REST API does not need it for started or created jobs: a
// start sets the first fire time at least one window ahead (jobs_api.cpp, kStartLeadMs), so
// the scan that ends the longest sleep still sees it in time. Completion calls it when a
// FIX_DELAY job gets its next time, which may be sooner than the end of the window.
//
// Thread-safe: start(), stop(), wake() from any thread; the sink is called on the schedule
// thread only.

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "admin/model/calendar_store.h"
#include "admin/model/finished_runs.h"
#include "admin/model/fire.h"
#include "admin/model/schedule_store.h"
#include "admin/scheduler/calendar_cache.h"
#include "admin/scheduler/fire_decision.h"
#include "admin/scheduler/load_shedder.h"
#include "common/util/clock.h"
#include "common/util/histogram.h"

namespace cronwheel::admin {

class ScheduleThread {
 public:
  struct Options {
    std::int64_t window_ms = kPreReadWindowMs;
    int pre_read_count = 10'000;  // (fast + slow pool threads) * 20, as XXL-JOB sizes it
    // When set, each record of skipped fires a scan writes (a cancelled MISFIRE run) is counted
    // there, by its group. Must outlive the thread.
    FinishedRuns* finished_runs = nullptr;
    // Where the calendars of jobs that name one are read (CalendarCache). Without it such jobs
    // are never decided. Must outlive the thread.
    CalendarStore* calendars = nullptr;
    // When set, each scan keeps the share of its fires the shedder gives and sheds the rest
    // (shed_fires: docs/scheduling.md, "Past capacity"). Must outlive the thread.
    LoadShedder* shedder = nullptr;
  };
  using Sink = std::function<void(const std::vector<PendingFire>& fires)>;

  // What one scan came to.
  struct ScanOutcome {
    bool ok = false;             // the scan committed
    std::size_t jobs_read = 0;   // jobs the pre-read returned
    std::size_t fires = 0;       // fires inserted and given to the sink
    bool full = false;           // the pre-read returned pre_read_count jobs
    std::size_t shed = 0;        // fires shed (each job's as one cancelled MISFIRE record)
    std::optional<std::int64_t> next_due;  // none read: when the next enabled job is due
  };
  struct Stats {
    std::uint64_t scans = 0;
    std::uint64_t failed_scans = 0;
    std::uint64_t fires = 0;
    std::uint64_t shed = 0;  // fires shed past capacity
    double keep = 1.0;       // the share of its fires the last scan kept
    common::Histogram::Snapshot scan_seconds;  // each scan's transaction, lock to commit
  };

  ScheduleThread(ScheduleStore& store, common::Clock& clock, std::string node_id, Sink sink, Options options);
  ~ScheduleThread();  // stop()

  ScheduleThread(const ScheduleThread&) = delete;
  ScheduleThread& operator=(const ScheduleThread&) = delete;

  void start();
  // Stops deciding: a scan in progress commits (its fires reach the sink) or rolls back, then
  // the thread ends. Idempotent.
  void stop() noexcept;
  // Ends the current sleep now, or skips the next one if a scan is running.
  void wake();

  // One scan at the clock's now, on the caller's thread (the loop's body; tests call it).
  ScanOutcome scan_once();

  Stats stats() const;

 private:
  void run(std::stop_token stop);
  // The reason a shed fire's record gives.
  std::string shed_reason(double keep) const;

  ScheduleStore& store_;
  common::Clock& clock_;
  const std::string node_id_;
  const Sink sink_;
  const Options options_;
  std::optional<CalendarCache> calendars_;  // with options_.calendars; the scanning thread's

  std::mutex wake_mutex_;
  std::stop_source sleep_;       // the current sleep's; cut short by wake()
  bool wake_requested_ = false;  // a wake() that came while no sleep was in progress
  bool failing_ = false;         // the last scan failed (log the streak once)
  bool shedding_ = false;        // the last scan shed fires (log the streak once)

  std::atomic<std::uint64_t> scans_{0}, failed_scans_{0}, fires_{0}, shed_{0};
  std::atomic<double> keep_{1.0};
  common::Histogram scan_seconds_{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5};
  std::jthread thread_;
};

}  // namespace cronwheel::admin
