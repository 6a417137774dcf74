#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "admin/api/api_context.h"
#include "admin/api/json_body.h"
#include "admin/model/calendar_store.h"
#include "admin/model/records.h"
#include "admin/model/schedule.h"
#include "admin/model/stores.h"

// Validation of the job objects the REST API receives (POST jobs, PUT jobs/{id}). Every
// problem is an HttpError 400 (code "invalid") whose `field` is the JSON field and whose
// message starts with it and says what is wrong:
//   "jobDesc: must not be empty"
//   "scheduleConf: minutes: 60 is out of range 0-59"
//   "timezone: unknown time zone 'Mars/Base'"
//   "childJobId: job 42 does not exist"
// Checks run in the order of the fields in DESIGN.md, so the first problem is reported.
namespace cronwheel::admin {

enum class JobBodyKind {
  kCreate,  // POST jobs: jobGroup and jobDesc required, everything else defaults
  kUpdate,  // PUT jobs/{id}: fields left out keep their values
};

// Reads the writable fields of a job from a JSON request body onto `base` (Job{} for a create,
// the stored job for an update) and checks each field on its own: type, range, length, known
// enumeration value. Fields the API answers but never takes (id, triggerStatus, times) are
// refused as read-only, any other unknown field as unknown. On update, glueSource and
// glueRemark are refused: script source changes through POST jobs/{id}/script, which keeps
// its history. `scheduleType` and `scheduleConf` go together: a new type without a new
// configuration gets an empty one.
//
// childJobId is an array of job ids; XXL-JOB's comma-separated string ("3,4") is accepted too.
// calendarId and calendarMode as read_calendar_use() reads them, dstGap and dstRepeat as
// read_dst_policy() does.
Job read_job_body(std::string_view body_text, Job base, JobBodyKind kind);

// The calendar a job or workflow body names (docs/scheduling.md, "Calendars"), onto `use` (the
// stored one on update: fields left out keep their values): `calendarId` an id, or null for
// none; `calendarMode` "SKIP" (the default) or "ONLY". ONLY without a calendar is refused.
// Whether the calendar exists is check_calendar_use()'s.
CalendarUse read_calendar_use(JsonBody& body, CalendarUse use);

// A job's retry back-off (admin/model/retry_backoff.h) onto `retry`: `retryBackoff` "FIXED" (the
// default) or "EXPONENTIAL", `retryMultiplier` a number 1-10, `retryMaxInterval` seconds 0 (no
// ceiling) to 30 days, `retryJitter` a percentage 0-100; 400 naming the field otherwise.
RetryPolicy read_retry_policy(JsonBody& body, RetryPolicy retry);

// A CRON job's DST policy (common::DstPolicy; docs/scheduling.md, "Daylight saving time") onto
// `dst`: `dstGap` "SKIP" (the default) or "FIRE_AFTER", `dstRepeat` "ONCE" (the default) or
// "BOTH"; 400 naming the field for anything else. Whether the schedule is CRON is
// validate_job()'s.
common::DstPolicy read_dst_policy(JsonBody& body, common::DstPolicy dst);

// 400 on calendarId ("calendarId: calendar 42 does not exist") unless `use` names no calendar or
// one that exists. Calendars are every user's to read, so no scope applies. `calendars` null:
// not checked here (the job store's foreign key still refuses a missing one, 409).
void check_calendar_use(const CalendarUse& use, CalendarStore* calendars);

// A script source as given, or HttpError 400 (field glueSource) when longer than
// kMaxGlueSourceBytes.
const std::string& checked_glue_source(const std::string& source);

// Checks the fields of a job against each other: the schedule (type, configuration and time
// zone together, a cron expression parsed in its zone; a DST policy other than the default only
// for CRON) and the handler a BEAN job needs.
void validate_job(const Job& job);

// Checks what a job refers to: its group exists and `who` may act on it; each child job exists,
// `who` may see it, and is not the job itself (`self_id`, absent on create).
void check_job_references(const Job& job, std::optional<std::int64_t> self_id, GroupStore& groups,
                          JobStore& jobs, const Principal& who);

// Whether the schedule (type, configuration, zone or DST policy) or the calendar (or its mode)
// differs.
bool schedule_changed(const Job& before, const Job& after);

// The schedule of a stored job, going by its calendar when it names one and `calendars` is
// given (read now: the calendar as it is); HttpError 409 when the schedule or the calendar is
// invalid (a row written around the API) or the calendar is gone. Without `calendars` the
// calendar is not applied: the times are the schedule's own (the scan still skips what the
// calendar excludes, moving an excluded next time to the first one it lets through).
Schedule schedule_of(const Job& job, CalendarStore* calendars = nullptr);

// The first fire time of a job started at `now`, or a 400 naming why there is none (field
// scheduleConf, or calendarId when the calendar lets no fire through within ten years). XXL-JOB
// computes a started job's first fire time from now + the schedule thread's pre-read window,
// so the thread never finds a job already overdue the moment it is started. The calendar
// applies as in schedule_of().
std::int64_t first_fire_time(const Job& job, std::int64_t now, CalendarStore* calendars = nullptr);

// A schedule going by the calendar `use` names, read from `calendars` now (schedule_of() for
// jobs; workflows and drafts go through it too). `what` names the job or workflow in the 409 a
// calendar that is gone or invalid answers.
Schedule with_calendar_of(Schedule schedule, const CalendarUse& use, CalendarStore* calendars, const std::string& what);

// A fire-time preview as the API answers it (jobs/{id}/next-fires, cron/next):
// {"times":[epoch ms...], "skipped":[{"time": epoch ms, "reason": "excluded by calendar
// cn-holidays: 2026-10-01 National Day"}...], "dst":[{"time": epoch ms of a clock change,
// "note": what the DST policy does that day}...], "end": why there are fewer times than asked, or
// null}.
nlohmann::json preview_json(const Schedule::Preview& preview);

// Limits on job fields (characters; the columns' sizes in sql/0001_initial_schema.sql).
inline constexpr std::size_t kMaxJobDesc = 255;
inline constexpr std::size_t kMaxAuthor = 64;
inline constexpr std::size_t kMaxAlarmEmail = 255;
inline constexpr std::size_t kMaxTimezone = 64;
inline constexpr std::size_t kMaxExecutorHandler = 255;
inline constexpr std::size_t kMaxExecutorParamBytes = 64 * 1024;  // travels with every trigger
inline constexpr std::size_t kMaxGlueSourceBytes = 1024 * 1024;
// Request bodies of the routes that carry a job's parameter or script source: room for the
// largest of both, JSON-escaped.
inline constexpr std::size_t kMaxJobBodyBytes = 4 * kMaxGlueSourceBytes;
inline constexpr std::size_t kMaxGlueRemark = 128;
inline constexpr int kMaxFailRetryCount = 100;

}  // namespace cronwheel::admin
