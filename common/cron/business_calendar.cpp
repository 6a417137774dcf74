#include "common/cron/business_calendar.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <utility>

#include "common/cron/civil_time.h"
#include "common/cron/cron_error.h"
#include "common/cron/zone_rules.h"

namespace cronwheel::common {
namespace {

using cron_detail::kMillisPerDay;

constexpr std::size_t kMaxExcludedDates = 5'000;
constexpr std::size_t kMaxIncludedDates = 1'000;
constexpr std::size_t kMaxExcludedTimes = 24;
constexpr std::size_t kMaxDayNameBytes = 200;
constexpr int kFirstCalendarYear = 1970;
constexpr int kLastCalendarYear = 2999;
constexpr int kLastSecondOfDay = 86'399;
// A run of excluded days is reported as one exclusion up to this many days.
constexpr std::int64_t kMaxExcludedRunDays = 366;
// Instants further than this from the epoch (~146 million years) are never excluded: it keeps
// every wall-time and day sum below far from overflowing.
constexpr std::int64_t kEvaluatedRangeMs = std::int64_t{1} << 62;
// Index of a recurring (month, day) in State::recurring.
constexpr int kMonthDaySlots = 12 * 31;

constexpr const char* kWeekdayNames[7] = {"Monday", "Tuesday",  "Wednesday", "Thursday",
                                          "Friday", "Saturday", "Sunday"};

// 0 = Monday ... 6 = Sunday (CalendarSpec::business_days' order) of a day since the epoch.
int monday_based_weekday(std::int64_t days) {
  return (cron_detail::day_of_week(days) + 5) % 7;  // day_of_week: 1 = Sunday ... 7 = Saturday
}

int month_day_slot(int month, int day) { return (month - 1) * 31 + (day - 1); }

std::string format_date(int year, int month, int day) {
  char buffer[48];
  if (year == 0) {
    std::snprintf(buffer, sizeof buffer, "%02d-%02d", month, day);
  } else {
    std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02d", year, month, day);
  }
  return buffer;
}

std::string format_time_of_day(int seconds) {
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "%02d:%02d:%02d", seconds / 3600, seconds / 60 % 60,
                seconds % 60);
  return buffer;
}

// Why a date's name is refused, or "" when it is fine: one line of UTF-8 an operator can read.
std::string name_problem(const std::string& name) {
  if (name.size() > kMaxDayNameBytes) {
    return "name is " + std::to_string(name.size()) + " bytes, more than " +
           std::to_string(kMaxDayNameBytes);
  }
  std::size_t i = 0;
  while (i < name.size()) {
    const auto c = static_cast<unsigned char>(name[i]);
    if (c < 0x80) {
      if (c < 0x20 || c == 0x7f) return "name contains a control character";
      ++i;
      continue;
    }
    int length = 0;
    std::uint32_t code = 0;
    if (c >= 0xc2 && c <= 0xdf) {
      length = 2;
      code = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
      length = 3;
      code = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      length = 4;
      code = c & 0x07;
    } else {
      return "name is not valid UTF-8";
    }
    if (i + static_cast<std::size_t>(length) > name.size()) return "name is not valid UTF-8";
    for (int k = 1; k < length; ++k) {
      const auto next = static_cast<unsigned char>(name[i + static_cast<std::size_t>(k)]);
      if ((next & 0xc0) != 0x80) return "name is not valid UTF-8";
      code = (code << 6) | (next & 0x3f);
    }
    // Overlong forms, UTF-16 surrogates and code points past U+10FFFF.
    if ((length == 3 && code < 0x800) || (length == 4 && code < 0x10000) ||
        (code >= 0xd800 && code <= 0xdfff) || code > 0x10ffff) {
      return "name is not valid UTF-8";
    }
    if (code >= 0x80 && code <= 0x9f) return "name contains a control character";
    i += static_cast<std::size_t>(length);
  }
  return {};
}

// Checks one excluded or included date; `recurring_allowed` is false for included dates.
void check_day(const CalendarDay& day, const std::string& field, bool recurring_allowed) {
  if (day.year == 0) {
    if (!recurring_allowed) {
      throw CalendarError(field, "a make-up day needs its year (1970-2999); only excluded dates "
                                 "may recur every year");
    }
  } else if (day.year < kFirstCalendarYear || day.year > kLastCalendarYear) {
    throw CalendarError(field, "year " + std::to_string(day.year) + " is out of range 1970-2999" +
                                   (recurring_allowed ? " (or 0: every year)" : ""));
  }
  if (day.month < 1 || day.month > 12) {
    throw CalendarError(field, "month " + std::to_string(day.month) + " is out of range 1-12");
  }
  // A recurring date may be any day some year has, so 02-29 (leap years only).
  const int last_day = cron_detail::days_in_month(day.year == 0 ? 2000 : day.year, day.month);
  if (day.day < 1 || day.day > last_day) {
    throw CalendarError(field, format_date(day.year, day.month, day.day) + " does not exist");
  }
  if (std::string problem = name_problem(day.name); !problem.empty()) {
    throw CalendarError(field, problem);
  }
}

}  // namespace

struct BusinessCalendar::State {
  // An excluded date of a specific year: its day since the epoch and its index in the spec.
  struct DatedExclusion {
    std::int64_t day;
    std::size_t index;
  };
  // A piece of the union of the excluded time ranges, in milliseconds since local midnight,
  // both ends excluded: [first, last] within [0, kMillisPerDay).
  struct MsInterval {
    std::int64_t first;
    std::int64_t last;
  };
  // What a local date is in a mode: allowed, or excluded as a listed date or by its weekday.
  struct DayVerdict {
    bool excluded = false;
    int date_index = -1;  // the excluded date's index in spec.excluded_dates, or -1: weekday
  };

  CalendarSpec spec;
  std::shared_ptr<const cron_detail::ZoneRules> zone;
  // The instants (UTC ms) at which the zone's offset changes, ascending: where a walk through
  // wall time must look again.
  std::vector<std::int64_t> transitions;
  std::vector<DatedExclusion> excluded;  // by day; one per day, the first listed
  std::array<int, kMonthDaySlots> recurring{};  // spec index + 1 of a recurring date, 0: none
  bool any_recurring = false;
  std::vector<std::int64_t> included;  // days since the epoch, ascending, unique
  std::array<bool, 7> business{};      // Monday first
  std::vector<MsInterval> excluded_ms;  // ascending, disjoint, not adjacent

  // spec.excluded_dates' index of the excluded date that falls on `day`, or -1. A date of a
  // specific year comes before a recurring one.
  int excluded_date_at(std::int64_t day) const {
    if (!excluded.empty()) {
      const auto it = std::lower_bound(
          excluded.begin(), excluded.end(), day,
          [](const DatedExclusion& e, std::int64_t d) { return e.day < d; });
      if (it != excluded.end() && it->day == day) return static_cast<int>(it->index);
    }
    if (any_recurring) {
      const cron_detail::CivilDate date = cron_detail::civil_from_days(day);
      const int slot = recurring[static_cast<std::size_t>(month_day_slot(date.month, date.day))];
      if (slot != 0) return slot - 1;
    }
    return -1;
  }

  DayVerdict verdict(std::int64_t day, CalendarMode mode) const {
    DayVerdict v;
    if (mode == CalendarMode::kSkip) {
      // make() refuses a date both excluded and included, so an excluded date is never an
      // included one here.
      v.date_index = excluded_date_at(day);
      v.excluded = v.date_index >= 0;
      return v;
    }
    if (!included.empty() && std::binary_search(included.begin(), included.end(), day)) return v;
    v.date_index = excluded_date_at(day);
    v.excluded =
        v.date_index >= 0 || !business[static_cast<std::size_t>(monday_based_weekday(day))];
    return v;
  }

  // The first instant after `t` whose wall time is outside [window_start, window_end), given
  // that t's wall time (t + offset) is inside it. Wall time rises with t between two offset
  // changes; at a change it jumps forward (a gap: the window may be left at once) or back (a
  // repeated hour: it may land before the window, or inside it again, as the second pass through
  // a range on a fall-back night does).
  std::int64_t first_instant_outside(std::int64_t t, std::int64_t offset, std::size_t& hint,
                                     std::int64_t window_start, std::int64_t window_end) const {
    std::int64_t at = t;
    for (;;) {
      const std::int64_t reached = window_end - offset;  // where this offset's wall time leaves
      const auto next_change = std::upper_bound(transitions.begin(), transitions.end(), at);
      if (next_change == transitions.end() || reached < *next_change) return reached;
      at = *next_change;
      offset = zone->offset_at(at, hint);
      const std::int64_t wall = at + offset;
      if (wall < window_start || wall >= window_end) return at;
    }
  }

  std::string date_reason(std::int64_t day, int index) const {
    const cron_detail::CivilDate date = cron_detail::civil_from_days(day);
    std::string reason = format_date(date.year, date.month, date.day);
    const std::string& name = spec.excluded_dates[static_cast<std::size_t>(index)].name;
    if (!name.empty()) {
      reason += ' ';
      reason += name;
    }
    return reason;
  }

  // The reason of the first listed range that holds `ms_of_day`.
  std::string range_reason(std::int64_t ms_of_day) const {
    for (const TimeOfDayRange& range : spec.excluded_times) {
      const std::int64_t start = range.start_s * cron_detail::kMillisPerSecond;
      const std::int64_t end = range.end_s * cron_detail::kMillisPerSecond;
      const bool holds = start <= end ? (ms_of_day >= start && ms_of_day <= end)
                                      : (ms_of_day >= start || ms_of_day <= end);
      if (holds) {
        return "between " + format_time_of_day(range.start_s) + " and " +
               format_time_of_day(range.end_s);
      }
    }
    return "between excluded times";  // unreachable: excluded_ms is the union of these ranges
  }
};

BusinessCalendar BusinessCalendar::make(CalendarSpec spec) {
  auto state = std::make_shared<State>();

  try {
    state->zone = cron_detail::ZoneRules::find(spec.time_zone);
  } catch (const CronError& e) {
    throw CalendarError("timeZone", e.reason());
  }
  for (const auto& [at, offset] : state->zone->transitions()) {
    if (at != std::numeric_limits<std::int64_t>::min()) state->transitions.push_back(at);
  }

  if (spec.excluded_dates.size() > kMaxExcludedDates) {
    throw CalendarError("excludedDates", "at most " + std::to_string(kMaxExcludedDates) +
                                             " dates, got " +
                                             std::to_string(spec.excluded_dates.size()));
  }
  if (spec.included_dates.size() > kMaxIncludedDates) {
    throw CalendarError("includedDates", "at most " + std::to_string(kMaxIncludedDates) +
                                             " dates, got " +
                                             std::to_string(spec.included_dates.size()));
  }
  if (spec.excluded_times.size() > kMaxExcludedTimes) {
    throw CalendarError("excludedTimes", "at most " + std::to_string(kMaxExcludedTimes) +
                                             " time ranges, got " +
                                             std::to_string(spec.excluded_times.size()));
  }

  for (std::size_t i = 0; i < spec.excluded_dates.size(); ++i) {
    const CalendarDay& day = spec.excluded_dates[i];
    check_day(day, "excludedDates[" + std::to_string(i) + "]", true);
    if (day.year == 0) {
      int& slot = state->recurring[static_cast<std::size_t>(month_day_slot(day.month, day.day))];
      if (slot == 0) slot = static_cast<int>(i) + 1;
      state->any_recurring = true;
    } else {
      state->excluded.push_back({cron_detail::days_from_civil(day.year, day.month, day.day), i});
    }
  }
  // Sorted by day, the first listed first; then one entry per day.
  std::sort(state->excluded.begin(), state->excluded.end(),
            [](const State::DatedExclusion& a, const State::DatedExclusion& b) {
              return a.day != b.day ? a.day < b.day : a.index < b.index;
            });
  state->excluded.erase(std::unique(state->excluded.begin(), state->excluded.end(),
                                    [](const State::DatedExclusion& a,
                                       const State::DatedExclusion& b) { return a.day == b.day; }),
                        state->excluded.end());

  for (std::size_t i = 0; i < spec.included_dates.size(); ++i) {
    const CalendarDay& day = spec.included_dates[i];
    const std::string field = "includedDates[" + std::to_string(i) + "]";
    check_day(day, field, false);
    const std::int64_t days = cron_detail::days_from_civil(day.year, day.month, day.day);
    if (const int excluded = state->excluded_date_at(days); excluded >= 0) {
      const bool recurs = spec.excluded_dates[static_cast<std::size_t>(excluded)].year == 0;
      throw CalendarError(field, format_date(day.year, day.month, day.day) +
                                     " is also excluded (excludedDates[" +
                                     std::to_string(excluded) + "]" +
                                     (recurs ? ", every year" : "") + ")");
    }
    state->included.push_back(days);
  }
  std::sort(state->included.begin(), state->included.end());
  state->included.erase(std::unique(state->included.begin(), state->included.end()),
                        state->included.end());

  state->business.fill(true);
  if (spec.business_days) {
    state->business = *spec.business_days;
    const bool any = std::find(state->business.begin(), state->business.end(), true) !=
                     state->business.end();
    if (!any && state->included.empty()) {
      throw CalendarError("businessDays",
                          "no weekday is a business day and no date is included, so in "
                          "business-days-only mode no fire could ever happen");
    }
  }

  std::vector<State::MsInterval> pieces;
  for (std::size_t i = 0; i < spec.excluded_times.size(); ++i) {
    const TimeOfDayRange& range = spec.excluded_times[i];
    const std::string field = "excludedTimes[" + std::to_string(i) + "]";
    if (range.start_s < 0 || range.start_s > kLastSecondOfDay) {
      throw CalendarError(field, "start " + std::to_string(range.start_s) +
                                     " is out of range 0-86399 (seconds since midnight)");
    }
    if (range.end_s < 0 || range.end_s > kLastSecondOfDay) {
      throw CalendarError(field, "end " + std::to_string(range.end_s) +
                                     " is out of range 0-86399 (seconds since midnight)");
    }
    const std::int64_t start = range.start_s * cron_detail::kMillisPerSecond;
    const std::int64_t end = range.end_s * cron_detail::kMillisPerSecond;
    if (start <= end) {
      pieces.push_back({start, end});
    } else {  // wraps past midnight
      pieces.push_back({start, kMillisPerDay - 1});
      pieces.push_back({0, end});
    }
  }
  std::sort(pieces.begin(), pieces.end(),
            [](const State::MsInterval& a, const State::MsInterval& b) {
              return a.first < b.first;
            });
  for (const State::MsInterval& piece : pieces) {
    if (!state->excluded_ms.empty() && piece.first <= state->excluded_ms.back().last + 1) {
      state->excluded_ms.back().last = std::max(state->excluded_ms.back().last, piece.last);
    } else {
      state->excluded_ms.push_back(piece);
    }
  }
  if (state->excluded_ms.size() == 1 && state->excluded_ms[0].first == 0 &&
      state->excluded_ms[0].last == kMillisPerDay - 1) {
    throw CalendarError("excludedTimes",
                        "the ranges cover the whole day, so no fire could ever happen");
  }

  state->spec = std::move(spec);
  return BusinessCalendar(std::move(state));
}

const CalendarSpec& BusinessCalendar::spec() const { return state_->spec; }

std::optional<CalendarExclusion> BusinessCalendar::exclusion(std::int64_t epoch_ms,
                                                             CalendarMode mode) const {
  const State& s = *state_;
  if (epoch_ms < -kEvaluatedRangeMs || epoch_ms > kEvaluatedRangeMs) return std::nullopt;
  std::size_t hint = 0;
  const std::int64_t offset = s.zone->offset_at(epoch_ms, hint);
  const std::int64_t wall = epoch_ms + offset;
  const std::int64_t day = cron_detail::floor_div(wall, kMillisPerDay);
  const std::int64_t ms_of_day = wall - day * kMillisPerDay;

  if (const State::DayVerdict verdict = s.verdict(day, mode); verdict.excluded) {
    std::int64_t run = 1;
    while (run < kMaxExcludedRunDays && s.verdict(day + run, mode).excluded) ++run;
    CalendarExclusion out;
    out.reason = verdict.date_index >= 0
                     ? s.date_reason(day, verdict.date_index)
                     : std::string(kWeekdayNames[monday_based_weekday(day)]) +
                           " is not a business day";
    out.until_ms = s.first_instant_outside(epoch_ms, offset, hint, day * kMillisPerDay,
                                           (day + run) * kMillisPerDay);
    return out;
  }

  for (std::size_t i = 0; i < s.excluded_ms.size(); ++i) {
    const State::MsInterval& piece = s.excluded_ms[i];
    if (ms_of_day < piece.first) break;
    if (ms_of_day > piece.last) continue;
    std::int64_t window_start = day * kMillisPerDay + piece.first;
    std::int64_t window_end = day * kMillisPerDay + piece.last + 1;
    // A range that runs past midnight is one piece ending at 24:00 and one starting at 00:00.
    const State::MsInterval& first = s.excluded_ms.front();
    const State::MsInterval& last = s.excluded_ms.back();
    if (piece.last == kMillisPerDay - 1 && first.first == 0) {
      window_end = (day + 1) * kMillisPerDay + first.last + 1;
    }
    if (piece.first == 0 && last.last == kMillisPerDay - 1) {
      window_start = (day - 1) * kMillisPerDay + last.first;
    }
    CalendarExclusion out;
    out.reason = s.range_reason(ms_of_day);
    out.until_ms = s.first_instant_outside(epoch_ms, offset, hint, window_start, window_end);
    return out;
  }
  return std::nullopt;
}

CalendarFire next_fire_in_calendar(const NextInstant& next_after, std::int64_t after_ms,
                                   const BusinessCalendar& calendar, CalendarMode mode,
                                   std::size_t max_skipped) {
  CalendarFire fire;
  const std::size_t list_limit = std::min(max_skipped, kCalendarSearchSteps);
  std::size_t jumps = 0;
  std::int64_t cursor = after_ms;
  for (;;) {
    const std::optional<std::int64_t> next = next_after(cursor);
    if (!next) return fire;  // the schedule ended: not blocked
    std::optional<CalendarExclusion> excluded = calendar.exclusion(*next, mode);
    if (!excluded) {
      fire.at_ms = *next;
      return fire;
    }
    // Unsigned, so a schedule answering far from after_ms cannot overflow the difference.
    const bool beyond_search =
        *next > after_ms &&
        static_cast<std::uint64_t>(*next) - static_cast<std::uint64_t>(after_ms) >
            static_cast<std::uint64_t>(kCalendarSearchMs);
    if (beyond_search) {
      fire.blocked = true;
      return fire;
    }
    if (fire.skipped.size() < list_limit) {
      fire.skipped.push_back({*next, std::move(excluded->reason)});
      cursor = *next;
      continue;
    }
    if (++jumps > kCalendarSearchSteps) {
      fire.blocked = true;
      return fire;
    }
    // next_after(until - 1) is the schedule's first instant at or after until.
    cursor = std::max(cursor, excluded->until_ms - 1);
  }
}

}  // namespace cronwheel::common
