#pragma once

// What one scheduling scan reads and decides (docs/scheduling.md, "Deciding fires"): the
// values decide_fires (admin/scheduler/fire_decision.h) maps from and to, and ScheduleStore
// (schedule_store.h) reads and writes.

#include <cstdint>
#include <string>
#include <vector>

#include "admin/model/records.h"
#include "common/cron/business_calendar.h"
#include "common/cron/cron_expression.h"

namespace cronwheel::admin {

// How far ahead a scan decides fires, and how late a fire may be before it is a misfire.
inline constexpr std::int64_t kPreReadWindowMs = 5'000;

// A job as the pre-read reads it: only the columns of the job_info_due index.
struct DueJob {
  std::int64_t id = 0;
  ScheduleType schedule_type = ScheduleType::kNone;
  std::string schedule_conf;
  std::string timezone;
  MisfireStrategy misfire_strategy = MisfireStrategy::kDoNothing;
  std::int64_t trigger_last_time = 0;
  std::int64_t trigger_next_time = 0;
  // Its calendar (calendar.h), 0 for none, and the calendar's version as the pre-read saw it:
  // a scan decides with that version of it or not at all.
  std::int64_t calendar_id = 0;
  common::CalendarMode calendar_mode = common::CalendarMode::kSkip;
  int calendar_version = 0;
  // A CRON job's daylight-saving policy (Job::dst).
  common::DstPolicy dst;
  // Job::priority: past capacity, a scan sheds the fires of lower priorities first (shed_fires).
  int priority = 0;

  friend bool operator==(const DueJob&, const DueJob&) = default;
};

// One fire decided by a scan: a pending job_log row to be.
struct DecidedFire {
  std::int64_t job_id = 0;
  std::int64_t scheduled_time = 0;  // epoch ms
  TriggerType trigger_type = TriggerType::kSchedule;  // or kMisfire for FIRE_ONCE_NOW's catch-up

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

// How many skipped fire times a scan counts for one job before it stops counting (and says
// "at least"): counting a cron schedule is one step per fire time, and a job firing every
// second that was missed for a week has 604,800 of them.
inline constexpr std::int64_t kMaxSkippedCounted = 10'000;

// The fires of one job that a scan's misfire strategy skipped (DO_NOTHING) or coalesced into
// the one fire it sends (FIRE_ONCE_NOW): written as one run row, state cancelled, trigger type
// MISFIRE, scheduled at `first_time`, with `message` as its trigger_msg, in the scan's
// transaction and only if the job's advance is written.
struct MisfireSkip {
  std::int64_t job_id = 0;
  std::int64_t first_time = 0;  // the first fire time skipped: the row's scheduled_time
  std::int64_t last_time = 0;   // the last one counted
  std::int64_t count = 0;       // fire times skipped, counted up to kMaxSkippedCounted
  bool at_least = false;        // counting stopped at the cap: at least `count`, and more after last_time
  std::string message;          // the row's trigger_msg

  friend bool operator==(const MisfireSkip&, const MisfireSkip&) = default;
};

struct ScanDecision {
  std::vector<DecidedFire> fires;     // by job in the order read, then by time
  std::vector<JobAdvance> jobs;       // one per job read, in the order read
  std::vector<MisfireSkip> skipped;   // at most one per job, in the order read
  // Calendars the decision needed at a version it was not given (ascending, once each): their
  // jobs were left as they were (advance to the same next time, no fire), for the caller to load
  // the calendars and decide them at its next scan.
  std::vector<std::int64_t> calendars_wanted;

  friend bool operator==(const ScanDecision&, const ScanDecision&) = default;
};

}  // namespace cronwheel::admin
