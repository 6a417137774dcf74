#pragma once

// Backfills (docs/scheduling.md, "Backfill"; docs/workflows.md, "Backfill"): a run of a job or
// of a workflow for every instant its schedule had in a past range [from, to), as if each had
// fired on time. A job's runs are ordinary run rows (job_log, trigger type BACKFILL) scheduled
// at the historical instant; a workflow's are workflow runs of trigger type BACKFILL at it, whose
// node runs start when the run is written. Every run of a backfill — a job's run, its retries,
// and a workflow run's node runs and their retries — carries the instant as its logical time
// (JobLog::logical_time), so an executor files it under that instant (logDateTime) and its
// handler sees the logical date however late it goes out. Runs are written oldest first, at most
// `max_concurrent` unfinished at a time, by the pump of whichever admin node holds the
// backfill's row lock (admin/scheduler/backfill_pump.h), and the store writes each (backfill,
// instant, shard) at most once.
//
// The rules, as pure functions of what was read, so they are tested with fixed times:
//  - backfill_schedule: the schedule a backfill of a job (its schedule, zone, DST policy and
//    calendar) or of a workflow (its schedule, zone and calendar) goes by, or why it has no
//    instants to backfill;
//  - backfill_instants: the schedule's instants of the range after a cursor, oldest first,
//    bounded, never stepping through more of them than asked for;
//  - plan_backfill_step: of those, which one step writes, which it passes over (a run exists
//    and the operator chose SKIP), where the cursor goes, and whether the backfill is done.

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "admin/model/calendar.h"
#include "admin/model/records.h"
#include "admin/model/schedule.h"
#include "admin/model/workflow.h"

namespace cronwheel::admin {

// running → done (every instant written or skipped, and every run it wrote ended) |
// running → cancelled (an operator, or its job or workflow can no longer be backfilled). Never
// back.
enum class BackfillState { kRunning, kDone, kCancelled };

// What a backfill does at an instant that already ran: pass over it (counted as skipped), or run
// it again. An instant ran when
//  - of a job: it has a run of the job's schedule (SCHEDULE, MISFIRE) or of a backfill (BACKFILL)
//    that was not cancelled. A cancelled row never went out (a misfire's record of skipped fires,
//    a late fire its job's strategy dropped, a cancelled backfill's pending run);
//  - of a workflow: it has a workflow run of its schedule (SCHEDULE, MISFIRE) or of a backfill
//    (BACKFILL) that started or waits to. A run skipped by the overlap policy, or cancelled while
//    it waited, never started; one cancelled while it ran did run (in part), as a job's run
//    killed while it ran did.
enum class OnExisting { kSkip, kRerun };

// What a backfill runs.
enum class BackfillKind { kJob, kWorkflow };

std::string_view to_string(BackfillState state) noexcept;  // "running", "done", "cancelled"
std::string_view to_string(OnExisting on_existing) noexcept;  // "SKIP", "RERUN"
std::string_view to_string(BackfillKind kind) noexcept;  // "job", "workflow"
std::optional<BackfillState> parse_backfill_state(std::string_view text) noexcept;
std::optional<OnExisting> parse_on_existing(std::string_view text) noexcept;

// The most instants one backfill may have: the range is counted with the schedule when the
// backfill is asked for (at most this many + 1 steps), and a range with more is refused.
inline constexpr std::int64_t kMaxBackfillInstants = 10'000;
// max_concurrent's range (the backfill table's CHECK).
inline constexpr int kMaxBackfillConcurrent = 100;
// The earliest instant a backfill may run: executors refuse a run whose logDateTime is before
// 2000-01-01 (they file its log under that day).
inline constexpr std::int64_t kMinBackfillTime = 946'684'800'000;  // 2000-01-01T00:00:00Z
// How many running backfills an installation may have at once: each costs its pump a
// transaction a second on every admin node.
inline constexpr std::int64_t kMaxRunningBackfills = 100;

struct Backfill {
  std::int64_t id = 0;
  // What it runs: a job (job_id) or a workflow (workflow_id); the other is 0.
  std::int64_t job_id = 0;
  std::int64_t workflow_id = 0;
  // The group of its job or workflow as read (permissions); not stored with the backfill.
  std::int64_t job_group = 0;
  // Its workflow's name as read (what lists show); empty for a job's backfill.
  std::string workflow_name;
  // A workflow's backfill: the inputs each of its runs gets, every declared parameter with its
  // value (a JSON object's text); none for a job's.
  std::optional<std::string> params;
  std::int64_t from = 0;       // epoch ms, the first instant it may run
  std::int64_t to = 0;         // epoch ms, after its last: [from, to)
  OnExisting on_existing = OnExisting::kSkip;
  int max_concurrent = 1;      // runs unfinished (pending, sending, triggered) at once, 1..100
  BackfillState state = BackfillState::kRunning;
  // The last instant dealt with (written or skipped), oldest first; none before the first.
  std::optional<std::int64_t> cursor;
  std::int64_t total = 0;    // instants the range had when the backfill was created
  std::int64_t written = 0;  // runs written
  std::int64_t skipped = 0;  // instants passed over (SKIP, a run existed)
  std::string created_by;    // the username that asked for it
  std::int64_t created_at = 0;
  std::optional<std::int64_t> ended_at;  // when it became done or cancelled
  std::string reason;                    // why it ended, as an operator reads it

  BackfillKind kind() const noexcept { return workflow_id != 0 ? BackfillKind::kWorkflow : BackfillKind::kJob; }
  friend bool operator==(const Backfill&, const Backfill&) = default;
};

// A backfill's runs counted by state: a job's BACKFILL runs and their retries; a workflow's
// workflow runs (waiting: pending; succeeded; failed or timed out: failed; cancelled or
// skipped: cancelled).
struct BackfillRuns {
  std::int64_t pending = 0;
  std::int64_t running = 0;    // sending or triggered; a workflow run running
  std::int64_t succeeded = 0;
  std::int64_t failed = 0;     // failed or lost; a workflow run failed or timed out
  std::int64_t cancelled = 0;

  friend bool operator==(const BackfillRuns&, const BackfillRuns&) = default;
};

// {"id","kind" ("job" or "workflow"),"jobId" (null for a workflow's),"workflowId","workflowName"
//  (null for a job's),"jobGroup","from","to","onExisting","maxConcurrent","inputs" (a
//  workflow's: its runs' inputs; null for a job's),"state","cursor" (null before the first
//  instant),"total","written","skipped","createdBy","createdAt","endedAt" (null while
//  running),"reason"}: the API's answer and the audit log's before/after.
nlohmann::json to_json(const Backfill& backfill);
// {"pending","running","succeeded","failed","cancelled"}
nlohmann::json to_json(const BackfillRuns& runs);

// Why a backfill of a job or workflow cannot be made, naming the API field at fault; what()
// starts with the field ("scheduleType: job 7 has schedule NONE: it never fires by itself, so it
// has no instants to backfill").
class BackfillRefused : public std::invalid_argument {
 public:
  BackfillRefused(std::string field, const std::string& message)
      : std::invalid_argument(message), field_(std::move(field)) {}
  const std::string& field() const noexcept { return field_; }

 private:
  std::string field_;
};

// The schedule a backfill of `job` goes by: its schedule in its zone with its DST policy, and
// the calendar it names in its mode (`calendar`: the job's calendar as read by the caller, none
// when the job names none). CRON and FIX_RATE only: NONE never fires by itself, and FIX_DELAY's
// times follow its runs' ends, so neither had instants in the past (BackfillRefused on
// "scheduleType"). A job naming a calendar that is not given, or one whose rules cannot be used
// (a row written around the API), or a schedule that cannot be parsed, is refused too.
Schedule backfill_schedule(const Job& job, const std::optional<Calendar>& calendar);
// The same for a workflow: its schedule (CRON or FIX_RATE; NONE refused on "scheduleType") in
// its zone with Quartz's DST rules, as its scheduled runs go by, and the calendar it names.
Schedule backfill_schedule(const Workflow& workflow, const std::optional<Calendar>& calendar);

// Instants of a schedule in a range, oldest first.
struct BackfillInstants {
  std::vector<std::int64_t> instants;
  bool complete = false;  // the range has no instant after the last one (or none at all)

  friend bool operator==(const BackfillInstants&, const BackfillInstants&) = default;
};

// Up to `max` instants of `schedule` in [from, to) after `after` (none: from the range's
// start), oldest first; one more instant is looked at to say whether the range goes on. A cron
// schedule's instants are its own (in its zone, with its DST policy); a fixed rate has no
// instants of its own in the past, so a backfill takes its grid from `from`: from, from + N s,
// and so on. The calendar's excluded instants are not among them (and are jumped over, not
// stepped through). Costs at most max + 1 steps of the schedule.
BackfillInstants backfill_instants(const Schedule& schedule, std::int64_t from, std::int64_t to,
                                   std::optional<std::int64_t> after, std::size_t max);

// What one step of a backfill does.
struct BackfillStep {
  std::vector<std::int64_t> write;     // instants to write a run for, oldest first
  std::int64_t skipped = 0;            // instants passed over because a run exists (SKIP)
  std::optional<std::int64_t> cursor;  // the new cursor: the last instant written or skipped
  // How the backfill ends with this step: done (every instant dealt with, and no run of it
  // unfinished) or cancelled (it cannot go on: backfill_stopped); nullopt while it goes on.
  std::optional<BackfillState> end;
  std::string reason;  // why it ends, as an operator reads it; empty while it goes on

  friend bool operator==(const BackfillStep&, const BackfillStep&) = default;
};

// One step of `backfill` (as read under its lock), given `next` (backfill_instants after its
// cursor), which of those instants have a run of the job already (OnExisting says which count;
// `existing`) and how many of its runs are unfinished:
//  - instants are taken oldest first; one with a run already is passed over when on_existing
//    is SKIP (skipped, the cursor moves past it), and written again when RERUN;
//  - at most max_concurrent - unfinished instants are written (none when that is 0 or less);
//    the step stops at the first instant it has no room to write, leaving the cursor before it;
//  - the cursor is the last instant written or skipped (unchanged when none was);
//  - done when `next` is complete, every instant of it was dealt with, none is written by this
//    step and no run is unfinished: the backfill ends only once its last run ended. The reason
//    counts what it did ("every instant dealt with: 168 runs written, 0 instants skipped").
BackfillStep plan_backfill_step(const Backfill& backfill, const BackfillInstants& next,
                                const std::set<std::int64_t>& existing, std::int64_t unfinished);

// Which of `instants` ran already for the backfill's job or workflow (OnExisting says when an
// instant did): a read of the store's, made in the step's transaction (BackfillStore::step).
using ExistingRuns = std::function<std::set<std::int64_t>(const std::vector<std::int64_t>& instants)>;

// How many instants past the room left a step looks at, to pass over those that have a run
// already (SKIP) without waiting a step for each: a backfill whose every instant exists is
// through 10,000 of them in 50 steps.
inline constexpr std::size_t kBackfillSkipLookahead = 200;

// A whole step of `backfill` going by `schedule`: the instants after its cursor (as many as the
// room left, plus kBackfillSkipLookahead under SKIP, at least one), which of them have a run
// already (asked under SKIP only), and plan_backfill_step of them.
BackfillStep next_backfill_step(const Schedule& schedule, const Backfill& backfill, std::int64_t unfinished,
                                const ExistingRuns& existing);

// The step of a backfill that cannot go on (`why`: its job's or workflow's schedule or calendar
// as backfill_schedule refused it): it ends cancelled, writing nothing; the runs it wrote
// already go on.
BackfillStep backfill_stopped(const std::string& why);

}  // namespace cronwheel::admin
