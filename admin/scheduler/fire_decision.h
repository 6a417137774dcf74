#pragma once

// The schedule thread's decision step (docs/scheduling.md, "Deciding fires", step 3): which
// fires the jobs read by one scan get, and what the jobs' last/next times and status become.
// A pure function of the jobs and the time, so every rule is unit-tested with fixed times;
// the store (ScheduleStore::scan) runs it under the scheduling lock and writes its result.

#include <cstdint>
#include <vector>

#include "admin/model/scan.h"

namespace cronwheel::admin {

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
// Times are computed with the job's own schedule and time zone (admin/model/schedule.h).
ScanDecision decide_fires(const std::vector<DueJob>& jobs, std::int64_t now,
                          std::int64_t window_ms = kPreReadWindowMs);

}  // namespace cronwheel::admin
