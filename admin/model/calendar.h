#pragma once

// Business calendars (docs/scheduling.md, "Calendars"): named, shared objects that jobs and
// workflows name with a mode (skip excluded days and times, or fire only on business days).
// Plain values, as the stores read and write them; the rules (what a calendar excludes, and
// the next fire a calendar lets through) are common/cron/business_calendar.h's.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/cron/business_calendar.h"

namespace cronwheel::admin {

// One stored day of a calendar.
struct CalendarDate {
  common::CalendarDay day;  // year 0: every year (excluded dates only)
  bool included = false;    // a make-up working day; otherwise an excluded date (a holiday)
  // Where it came from: empty for a date entered by hand; otherwise the name of the import
  // that brought it (an .ics file's source name), which a later import of the same source
  // replaces as a whole, leaving every other date alone. At most 255 characters.
  std::string source;
  std::string source_uid;  // the iCalendar event (UID) it came from, for an imported date; <= 255
};

struct Calendar {
  std::int64_t id = 0;
  std::string name;  // unique; ^[a-z0-9][a-z0-9._-]{0,63}$ (what jobs files name it by)
  // Text is stored up to its column's width (description 255 characters, time_zone 64, a
  // date's name 200): the API bounds it before a store sees it.
  std::string description;
  std::string time_zone = "UTC";
  std::optional<std::array<bool, 7>> business_days;  // [0] Monday ... [6] Sunday; none: every day
  std::vector<CalendarDate> dates;                    // ordered by (year, month, day), each once
  std::vector<common::TimeOfDayRange> excluded_times;  // in the order given
  int version = 1;  // + 1 on every change; updates name the version they change
  std::int64_t created_at = 0;
  std::int64_t updated_at = 0;
};

// The calendar's rules as business_calendar.h takes them (BusinessCalendar::make checks them).
common::CalendarSpec to_spec(const Calendar& calendar);

// A job's or workflow's use of a calendar.
struct CalendarUse {
  std::int64_t calendar_id = 0;  // 0: none
  common::CalendarMode mode = common::CalendarMode::kSkip;

  friend bool operator==(const CalendarUse&, const CalendarUse&) = default;
};

std::string_view to_string(common::CalendarMode mode) noexcept;  // "SKIP", "ONLY"
std::optional<common::CalendarMode> parse_calendar_mode(std::string_view text) noexcept;

}  // namespace cronwheel::admin
