#pragma once

// The misfire rules, as pure functions of what was read and the time, so every rule is
// unit-tested with fixed times:
//  - decide_fires: the schedule thread's decision step (docs/scheduling.md, "Deciding fires",
//    step 3): which fires the jobs read by one scan get, and what the jobs' last/next times and
//    status become; the store (ScheduleStore::scan) runs it under the scheduling lock and
//    writes its result;
//  - judge_late_fires: what becomes of pending fires that are already late (docs/scheduling.md,
//    "Sending a fire"), one rule for every path that finds them: the feeder (fires a full
//    trigger pool left waiting, and a restarted node's own stale fires) and the takeover of a
//    dead node's fires.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "admin/model/fire.h"
#include "admin/model/scan.h"
#include "admin/model/schedule_store.h"

namespace cronwheel::admin {

// A calendar as a scan decides with it: the version it was read at, and the calendar, or why
// it cannot be used (a row written around the API that BusinessCalendar::make refuses).
struct ScanCalendar {
  int version = 0;
  std::string name;
  std::optional<common::BusinessCalendar> calendar;
  std::string error;  // when there is no calendar
};
using ScanCalendars = std::map<std::int64_t, ScanCalendar>;  // by calendar id

// Decides the fires of `jobs` at `now` (epoch ms). For each job, with next = its next time:
//  - now > next + window (missed by more than the window): FIRE_ONCE_NOW decides one MISFIRE
//    fire at `next`, DO_NOTHING none; the next time is computed from now. The fire times the
//    strategy skips get one record (ScanDecision::skipped, a cancelled MISFIRE run to be): for
//    DO_NOTHING every time from `next` up to now, for FIRE_ONCE_NOW every time after `next` up
//    to now (coalesced into its one fire; none, no record). Its message gives the count, the
//    first and last time (ISO-8601, UTC), the threshold and the strategy. Counting stops at
//    kMaxSkippedCounted ("at least"); a fixed rate is counted exactly; a FIX_DELAY job missed
//    only the one fire it was waiting for;
//  - otherwise one SCHEDULE fire at `next` (due, or due within the window); the next time is
//    computed from `next`;
//  - and while the next time is again within the window (<= now + window) it is decided too,
//    so a job firing every second gets every second of the window in one scan.
// FIX_DELAY: after a fire the next time is kAwaitingCompletion (the run's result sets the real
// one) and no more fires are decided. A schedule with no further time stops the job
// (status 0, next 0); so does one that cannot be parsed (a row written around the API).
// Times are computed with the job's own schedule and time zone (admin/model/schedule.h).
//
// A job with a calendar goes by the version of it the pre-read saw (DueJob::calendar_version),
// taken from `calendars`: the times it excludes are passed over without a fire or a record
// (a next time it excludes, written before the calendar changed or by a path that does not read
// calendars, moves to the first time it lets through), misfires count only the times it lets
// through, and a calendar that lets no fire through within ten years stops the job, saying so.
// A job whose calendar is not in `calendars` at that version is left as it was, and the
// calendar is named in ScanDecision::calendars_wanted; one that cannot be used stops the job.
ScanDecision decide_fires(const std::vector<DueJob>& jobs, std::int64_t now,
                          std::int64_t window_ms = kPreReadWindowMs, const ScanCalendars& calendars = {});

// Shedding past capacity (docs/scheduling.md, "Past capacity: shedding at the scan"): turns
// the fires of some of the jobs `decision` holds into records of skipped fires, so that over
// time a node that cannot send every fire decides about `keep` (0 to 1) of its fire times, what
// it can send on time, and the rest costs a record instead of a run that would go out late or
// be cancelled as late. `due` is what `decision` was decided from (decide_fires).
//  - Whole jobs are shed: all of a job's fires in the scan or none. Only a job that would skip
//    a missed fire anyway may be shed: misfire strategy DO_NOTHING, a schedule other than
//    FIX_DELAY (one fire in flight at a time already), and no misfire record in this scan (at
//    most one record per job and scan). FIRE_ONCE_NOW asks for missed fires to be made up, so
//    its jobs keep theirs.
//  - A shed job also skips its times after the window up to now + window + `skip_ahead_ms`, and
//    its next time is the first one after those: a node past capacity reads, advances and
//    records it once for all of them rather than once a second. A job with a calendar, or whose
//    schedule ends within them, skips only its fires in the window.
//  - Lower priorities are shed first (DueJob::priority); among equals, the order is a hash of
//    the job and the second of `now`, so a different set of jobs is shed each second and none
//    is shed every time.
//  - Jobs are shed until the times they skip are at least 1 - keep of the fires left and the
//    times skipped, or no job may be shed. A job a scan sheds is not read again until after its
//    skipped times, while a job kept is read each second for its next fire, so this keeps
//    `keep` of the job's fire times over time, not of one scan's fires.
//  - A shed job gets one MisfireSkip (a cancelled MISFIRE run, at its first shed fire) with its
//    count, first and last time and `why` in its message; its advance keeps its last time as read
//    (no fire).
// Answers how many fire times were shed (in the window and after it). keep >= 1: nothing is shed.
std::size_t shed_fires(ScanDecision& decision, const std::vector<DueJob>& due, double keep, std::int64_t now,
                       const std::string& why, std::int64_t window_ms = kPreReadWindowMs,
                       std::int64_t skip_ahead_ms = kPreReadWindowMs);

struct LateFiresVerdict {
  std::vector<PendingFire> send;     // to go out, in the order given
  std::vector<SkippedFire> cancel;   // to cancel (ScheduleStore::cancel_pending), in the order given
  std::size_t skipped = 0;           // of `cancel`: late fires of DO_NOTHING jobs
  std::size_t coalesced = 0;         // of `cancel`: older late fires of FIRE_ONCE_NOW jobs

  friend bool operator==(const LateFiresVerdict&, const LateFiresVerdict&) = default;
};

// What becomes of pending fires seen together at `now` (epoch ms), with their jobs' misfire
// strategies as the jobs say now:
//  - a fire is late when its scheduled time is more than `window` before now (now >
//    scheduled + window), the scan's misfire threshold;
//  - only scheduled fires (SCHEDULE, MISFIRE) follow the misfire strategy; WORKFLOW, MANUAL, API, RETRY,
//    PARENT and BACKFILL fires go out however late they are (someone asked for each one; a
//    backfill's are late by design);
//  - a fire that is not late goes out;
//  - a late fire of a DO_NOTHING job is cancelled, with a message giving how late it is, the
//    threshold and the strategy;
//  - of a FIRE_ONCE_NOW job's late fires, only the newest goes out (Quartz's "fire once now":
//    one run for everything missed) and the older ones are cancelled as coalesced into it,
//    saying so. Several rows at that newest time are the shards of one fire: all go out.
// "Seen together" is the caller's batch: late fires of one job read in separate batches are
// coalesced at most batch by batch (one that went out is no longer pending to be seen).
LateFiresVerdict judge_late_fires(const std::vector<PendingFireRow>& fires, std::int64_t now,
                                  std::int64_t window_ms = kPreReadWindowMs);

}  // namespace cronwheel::admin
