#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "common/cron/business_calendar.h"
#include "common/cron/cron_expression.h"
#include "common/protocol/job_enums.h"

namespace cronwheel::admin {

using common::protocol::ScheduleType;

// When a job fires, from its three schedule fields (job_info.schedule_type, schedule_conf,
// timezone). Shared by the REST API (validation, start, previews) and the scheduling core
// (next times after a fire or a completion), so it knows nothing about HTTP or storage.
//
//   CRON       schedule_conf is a Quartz cron expression evaluated in `timezone`.
//   FIX_RATE   schedule_conf is a whole number of seconds N: fires at after + N s.
//   FIX_DELAY  schedule_conf is N seconds too; the scheduler measures from the end of the
//              previous run, the API (start, previews) from the instant it is given.
//   NONE       never fires by itself (triggered by hand or as a child job).
//
// The zone is validated for every type: a job keeps it when its schedule changes to CRON.

// Why a schedule was refused. field() is the API field to point at: "scheduleConf" or
// "timezone"; what() is one line that starts with that field:
//   "scheduleConf: minutes: 60 is out of range 0-59"
//   "timezone: unknown time zone 'Mars/Base'"
//   "scheduleConf: FIX_RATE needs a whole number of seconds from 1 to 315360000, got '0'"
class ScheduleError : public std::invalid_argument {
 public:
  ScheduleError(std::string field, const std::string& message)
      : std::invalid_argument(message), field_(std::move(field)) {}
  const std::string& field() const noexcept { return field_; }

 private:
  std::string field_;
};

// A business calendar a schedule goes by (calendar.h): the instants it excludes in `mode` do not
// fire, and leave no run behind.
struct ScheduleCalendar {
  std::string name;  // what messages call it: "excluded by calendar cn-holidays: ..."
  common::BusinessCalendar calendar;
  common::CalendarMode mode = common::CalendarMode::kSkip;
};

// A validated schedule. An immutable value: cheap to copy (a cron expression is shared), and
// every method is const and safe to call from many threads at once.
class Schedule {
 public:
  // The longest FIX_RATE/FIX_DELAY interval: ten years of seconds.
  static constexpr std::int64_t kMaxFixedSeconds = 10LL * 365 * 24 * 3600;

  // Throws ScheduleError for a configuration that does not fit the type or an unknown zone.
  // `dst` applies to CRON only; other types have no wall times to go by and ignore it (the API
  // refuses to store another than the default for them: check_dst_policy).
  static Schedule parse(ScheduleType type, std::string_view conf, std::string_view time_zone,
                        common::DstPolicy dst = {});

  // This schedule going by `calendar`: every method below skips the instants it excludes
  // (common/cron/business_calendar.h, next_fire_in_calendar: excluded stretches are jumped
  // over, not stepped through).
  Schedule with_calendar(ScheduleCalendar calendar) const;
  const std::optional<ScheduleCalendar>& calendar() const noexcept { return calendar_; }

  // The first fire time strictly after `after_ms` (epoch ms) that the calendar, if any, lets
  // through; nullopt for NONE, for a cron expression with no further fire time, and when the
  // calendar lets none through within ten years (end_reason says which).
  std::optional<std::int64_t> next_after(std::int64_t after_ms) const;

  // Up to `count` consecutive fire times after `after_ms`, each computed from the one before
  // (for FIX_DELAY this assumes runs take no time); fewer when the schedule ends.
  std::vector<std::int64_t> next_times(std::int64_t after_ms, int count) const;

  // Why the calendar keeps `at_ms` from firing, as an operator reads it: "excluded by calendar
  // cn-holidays: 2026-10-01 National Day"; nullopt when it does not, or there is no calendar.
  std::optional<std::string> excluded(std::int64_t at_ms) const;

  // Why next_after(after_ms) has no time: "the schedule has no further fire time" or "calendar
  // cn-holidays lets no fire through within ten years". Empty when it has one.
  std::string end_reason(std::int64_t after_ms) const;

  // A preview: the next `count` fire times after `after_ms`, and the instants the calendar
  // skipped among them, each with its reason (at most `max_skipped`, oldest first); `end` is
  // end_reason() when there are fewer than `count` times. `dst` notes the days among the times
  // (up to the last one; a year past it, or past `after_ms`, when the schedule ends) when the
  // clocks change over a wall time a CRON schedule fires at, and what its DST policy does then
  // (CronExpression::dst_notes), at most `max_skipped` of them.
  struct SkippedTime {
    std::int64_t at_ms = 0;
    std::string reason;  // as excluded() words it
  };
  struct Preview {
    std::vector<std::int64_t> times;
    std::vector<SkippedTime> skipped;
    std::vector<common::DstNote> dst;
    std::string end;
  };
  Preview preview(std::int64_t after_ms, int count, int max_skipped) const;

  // The days from just after `after_ms` to `until_ms` when the clocks change over a wall time a
  // CRON schedule fires at, with what its DST policy does then (at most `max`); none for other
  // types.
  std::vector<common::DstNote> dst_notes(std::int64_t after_ms, std::int64_t until_ms, std::size_t max) const;

  ScheduleType type() const noexcept { return type_; }
  // FIX_RATE/FIX_DELAY: the interval in seconds; 0 otherwise.
  std::int64_t fixed_seconds() const noexcept { return fixed_seconds_; }

 private:
  Schedule(ScheduleType type, std::int64_t fixed_seconds,
           std::optional<common::CronExpression> cron)
      : type_(type), fixed_seconds_(fixed_seconds), cron_(std::move(cron)) {}

  // The schedule's own next time, without the calendar.
  std::optional<std::int64_t> raw_next_after(std::int64_t after_ms) const;
  common::NextInstant instants_after(std::int64_t after_ms) const;

  ScheduleType type_;
  std::int64_t fixed_seconds_;
  std::optional<common::CronExpression> cron_;
  std::optional<ScheduleCalendar> calendar_;
};

// ScheduleError (field "dstGap" or "dstRepeat") for a DST policy other than the default on
// anything but CRON, where it would do nothing.
void check_dst_policy(ScheduleType type, common::DstPolicy dst);

// Schedule::parse without keeping the result.
void validate_schedule(ScheduleType type, std::string_view conf, std::string_view time_zone);

// Schedule::parse(...).next_after(after_ms), for one-off use (the cron expression is parsed on
// every call). Throws ScheduleError like parse.
std::optional<std::int64_t> next_fire_time(ScheduleType type, std::string_view conf,
                                           std::string_view time_zone, std::int64_t after_ms);

}  // namespace cronwheel::admin
