#pragma once

// The schedule thread's decision step (docs/scheduling.md, "Deciding fires", step 3): which
// fires the jobs read by one scan get, and what the jobs' last/next times and status become.
// A pure function of the jobs and the time, so every rule is unit-tested with fixed times;
// the store (ScheduleStore::scan) runs it under the scheduling lock and writes its result.

#include <cstdint>
#include <string>
#include <vector>

namespace cronwheel::admin {

// How far ahead a scan decides fires, and how late a fire may be before it is a misfire.
inline constexpr std::int64_t kPreReadWindowMs = 5'000;

// A job as the pre-read reads it: only the columns of the job_info_due index.
struct DueJob {
  std::int64_t id = 0;
  std::string schedule_type;
  std::string schedule_conf;
  std::string timezone;
  std::string misfire_strategy;
  std::int64_t trigger_last_time = 0;
  std::int64_t trigger_next_time = 0;

  friend bool operator==(const DueJob&, const DueJob&) = default;
};

// One fire decided by a scan: a pending job_log row to be.
struct DecidedFire {
  std::int64_t job_id = 0;
  std::int64_t scheduled_time = 0;  // epoch ms
  std::string trigger_type;         // "SCHEDULE", or "MISFIRE" for FIRE_ONCE_NOW's catch-up

  friend bool operator==(const DecidedFire&, const DecidedFire&) = default;
};

// A job's new times. Written only while the job still runs and still has the next time the
// scan read (`read_next_time`): a job stopped, restarted or rescheduled meanwhile keeps what
// it has, and the fires decided for it are dropped with its update.
struct JobAdvance {
  std::int64_t job_id = 0;
  std::int64_t read_next_time = 0;
  std::int64_t last_time = 0;  // the last fire decided, or unchanged when none was
  std::int64_t next_time = 0;  // 0 when the job stops
  int trigger_status = 1;      // 0: the schedule has no further time (or cannot be read)
  std::string stop_reason;     // why it stops, for the node's log; empty while it runs

  friend bool operator==(const JobAdvance&, const JobAdvance&) = default;
};

struct ScanDecision {
  std::vector<DecidedFire> fires;  // by job in the order read, then by time
  std::vector<JobAdvance> jobs;    // one per job read, in the order read

  friend bool operator==(const ScanDecision&, const ScanDecision&) = default;
};

// Decides the fires of `jobs` at `now` (epoch ms). For each job, with next = its next time:
//  - now > next + window (missed by more than the window): FIRE_ONCE_NOW decides one MISFIRE
//    fire at `next`, DO_NOTHING none; the next time is computed from now;
//  - otherwise one SCHEDULE fire at `next` (due, or due within the window); the next time is
//    computed from `next`;
//  - and while the next time is again within the window (<= now + window) it is decided too,
//    so a job firing every second gets every second of the window in one scan.
// FIX_DELAY: after a fire the next time is kAwaitingCompletion (the run's result sets the real
// one) and no more fires are decided. A schedule with no further time stops the job
// (status 0, next 0); so does one that cannot be parsed (a row written around the API).
// Times are computed with the job's own schedule and time zone (admin/schedule/schedule.h).
ScanDecision decide_fires(const std::vector<DueJob>& jobs, std::int64_t now,
                          std::int64_t window_ms = kPreReadWindowMs);

}  // namespace cronwheel::admin
