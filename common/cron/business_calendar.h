#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace cronwheel::common {

// Why a calendar was refused. what() is "<field>: <reason>", one line fit to show an operator;
// field() names the part that is wrong, with its index where it is one of a list:
// "timeZone", "excludedDates[3]", "includedDates[0]", "businessDays", "excludedTimes[1]".
class CalendarError : public std::invalid_argument {
 public:
  CalendarError(std::string field, const std::string& reason)
      : std::invalid_argument(field + ": " + reason), field_(std::move(field)), reason_(reason) {}

  const std::string& field() const noexcept { return field_; }
  const std::string& reason() const noexcept { return reason_; }

 private:
  std::string field_;
  std::string reason_;
};

// One day of a calendar: a holiday it excludes or a make-up working day it includes.
// `year` 0 means every year (a fixed-date holiday, Quartz's AnnualCalendar); only excluded
// dates may recur, and 02-29 recurring is excluded in leap years only. A day excluded more than
// once (listed twice, or both for its year and every year) is excluded once, under the name of
// the first specific-year entry listed, else of the first recurring one.
struct CalendarDay {
  int year = 0;   // 1970-2999, or 0: every year
  int month = 0;  // 1-12
  int day = 0;    // 1-31, a day the month has (02-29 only in a leap year, or recurring)
  // "National Day"; may be empty; at most 200 bytes of valid UTF-8 without control characters
  // (C0, DEL, C1), so a reason stays one printable line.
  std::string name;
};

// A time range of every day, in the calendar's local wall time, in seconds since midnight
// (0-86399). Both ends are excluded, to the millisecond, as in Quartz's DailyCalendar: 09:00:00
// to 17:00:00 excludes 09:00:00.000 through 17:00:00.000 and lets 17:00:00.001 through. A
// start after its end wraps past midnight (23:00:00 to 01:00:00 is "not between 23:00 and
// 01:00"); a start equal to its end is that one instant. Wall time, so on a night the clocks
// fall back an hour both passes through the range are excluded, and a range inside a
// spring-forward gap excludes nothing that night. The ranges of a calendar together may not
// cover every millisecond of the day (no fire could ever happen).
struct TimeOfDayRange {
  int start_s = 0;
  int end_s = 0;
};

// What a job or workflow does with its calendar.
enum class CalendarMode {
  // The default: a fire on an excluded date (not an included one) or inside an excluded time
  // range does not happen. The weekly rule is not consulted: the schedule says the days.
  kSkip,
  // A fire happens only on the calendar's business days, outside its excluded time ranges: a
  // business day is an included date, or a day of a business weekday that is not an excluded
  // date. "Every working day at 9, except holidays, with the make-up Saturdays" is a daily
  // schedule at 9 with a calendar in this mode. An excluded date on a day of the week that is
  // not a business day anyway is reported by its date ("2026-10-03 National Day").
  kOnly,
};

// A business calendar as an operator writes it. Bounds (checked by BusinessCalendar::make):
// at most 5,000 excluded dates, 1,000 included dates and 24 excluded time ranges.
struct CalendarSpec {
  std::string time_zone = "UTC";  // an IANA zone: what day and time of day an instant is
  std::vector<CalendarDay> excluded_dates;
  std::vector<CalendarDay> included_dates;  // specific years only
  // The business weekdays, [0] Monday ... [6] Sunday; none: every day is one.
  std::optional<std::array<bool, 7>> business_days;
  std::vector<TimeOfDayRange> excluded_times;
};

// Why the calendar lets no fire happen at an instant, and for how long that holds.
struct CalendarExclusion {
  // What an operator reads after "excluded by calendar NAME: ": "2026-10-01 National Day"
  // ("2026-10-01" for an unnamed date), "Saturday is not a business day", "between 23:00:00 and
  // 01:00:00".
  std::string reason;
  // The calendar excludes every instant from the one asked about up to (not including)
  // until_ms, for this reason or another: the next instant worth asking about. Always after
  // the instant asked; it may itself be excluded for another reason (an excluded time range
  // that starts at the midnight after an excluded day), so a caller asks again there.
  //  - An excluded day: a run of consecutive excluded days (kSkip: excluded dates; kOnly: days
  //    that are not business days) is one exclusion, capped at 366 days, so a caller skipping
  //    forward never steps through excluded instants one by one. until_ms is the first instant
  //    whose local date is the day after the run; where that day's midnight does not exist
  //    (clocks moved forward at midnight), the day starts at its first instant. Where the
  //    clocks go back across midnight into an allowed day before the run, until_ms is that
  //    instant instead.
  //  - An excluded time range: the first later instant whose wall time is past the range's end
  //    (its end + 1 ms), or earlier where the clocks go back or jump out of the range.
  std::int64_t until_ms = 0;
};

// A validated calendar. An immutable value: copies are cheap (shared state); every method is
// const and safe to call from many threads at once.
class BusinessCalendar {
 public:
  // Checks `spec` and builds the calendar. Throws CalendarError naming the field: an unknown
  // zone; a date that does not exist, is out of range, or is both excluded and included (a
  // recurring excluded date counts in every year); an included date with year 0; a time out
  // of 0-86399; excluded times that together cover the whole day ("excludedTimes"); a list
  // over its bound (the list's own name: "excludedDates"); a name over 200 bytes, not UTF-8 or
  // with a control character; business days none of which is true while no date is included
  // (kOnly would never fire).
  static BusinessCalendar make(CalendarSpec spec);

  const CalendarSpec& spec() const;

  // Why `epoch_ms` is excluded in `mode`, or nullopt when a fire may happen then. An excluded
  // day is the reason before an excluded time range. Allocates only when the instant is
  // excluded; typically well under a microsecond. Instants more than 2^62 ms (~146 million
  // years) from the epoch are never excluded.
  std::optional<CalendarExclusion> exclusion(std::int64_t epoch_ms, CalendarMode mode) const;

 private:
  struct State;
  explicit BusinessCalendar(std::shared_ptr<const State> state) : state_(std::move(state)) {}

  std::shared_ptr<const State> state_;
};

// A schedule's instant a calendar skipped, with its reason (CalendarExclusion::reason).
struct SkippedFire {
  std::int64_t at_ms = 0;
  std::string reason;
};

// The first fire of a schedule a calendar lets through.
struct CalendarFire {
  std::optional<std::int64_t> at_ms;  // none: the schedule ended, or the calendar blocks it
  // The schedule's instants the calendar skipped before at_ms, oldest first, each with its own
  // reason: the first max_skipped of them (a preview's list). Beyond those, skipped instants
  // are jumped over, not listed.
  std::vector<SkippedFire> skipped;
  // No instant within kCalendarSearchMs of after_ms, or within kCalendarSearchSteps
  // exclusions jumped over (listed ones not counted), is let through: the caller stops the job
  // and says so. Never set when the schedule itself ended first.
  bool blocked = false;
};

// How far next_fire_in_calendar looks before saying `blocked`.
inline constexpr std::int64_t kCalendarSearchMs = 10LL * 366 * 24 * 3600 * 1000;  // ~10 years
inline constexpr std::size_t kCalendarSearchSteps = 10'000;

// A schedule: its first instant strictly after the given one (epoch ms), or none when it has
// ended. CronExpression::next_after, or a fixed rate's arithmetic.
using NextInstant = std::function<std::optional<std::int64_t>(std::int64_t)>;

// The first instant of `next_after` strictly after `after_ms` that `calendar` lets through in
// `mode`. Until `skipped` holds max_skipped instants, each skipped instant is listed and the
// search goes on from it; after that, an excluded instant is left by asking the schedule for its
// first instant at or after the exclusion's until_ms (next_after(until_ms - 1)), never one by
// one, so an every-second job over a week-long holiday costs a handful of calls. max_skipped
// above kCalendarSearchSteps counts as kCalendarSearchSteps. Same instants as Quartz evaluating
// a trigger with the calendar one instant at a time, where their rules overlap.
CalendarFire next_fire_in_calendar(const NextInstant& next_after, std::int64_t after_ms,
                                   const BusinessCalendar& calendar, CalendarMode mode,
                                   std::size_t max_skipped = 0);

}  // namespace cronwheel::common
