// Fuzz target: common/cron. Parses a Quartz cron expression in a time zone and walks its next
// fire times.
//
// Input: up to three lines, "EXPRESSION\nZONE\nFROM_MS"; ZONE defaults to UTC and FROM_MS (a
// decimal, possibly negative, epoch milliseconds) to 2026-01-01T00:00:00Z.
//
// Properties:
//  - parse() throws nothing but CronError, whose field is one of the documented ones and whose
//    message is one printable line "<field>: <reason>";
//  - fire times are whole seconds, strictly after the start and strictly increasing, each the
//    next_after() of the one before, and none past Quartz's MAX_YEAR;
//  - in a zone with one fixed offset (where wall time is plain arithmetic), each fire's wall
//    second, minute, hour, month and year belong to the expression's fields, its day of month
//    and day of week obey the plain forms, and L/W/#/nL land where they say.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/cron/civil_time.h"
#include "common/cron/cron_error.h"
#include "common/cron/cron_expression.h"
#include "common/cron/cron_fields.h"
#include "common/cron/zone_rules.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using namespace cronwheel::common;
using namespace cronwheel::common::cron_detail;

constexpr std::int64_t kDefaultFromMs = 1'767'225'600'000;  // 2026-01-01T00:00:00Z
constexpr int kFireTimes = 6;

std::string_view next_line(std::string_view& rest) {
  const auto end = rest.find('\n');
  std::string_view line = rest.substr(0, end);
  rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
  return line;
}

std::optional<std::int64_t> parse_int64(std::string_view text) {
  if (text.empty() || text.size() > 20) return std::nullopt;
  bool negative = text.front() == '-';
  if (negative) text.remove_prefix(1);
  if (text.empty()) return std::nullopt;
  // Accumulate negatively so INT64_MIN is representable; refuse anything beyond the range.
  std::int64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    if (value < (INT64_MIN + (c - '0')) / 10) return std::nullopt;
    value = value * 10 - (c - '0');
  }
  if (!negative) {
    if (value == INT64_MIN) return std::nullopt;
    value = -value;
  }
  return value;
}

bool printable_line(std::string_view text) {
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f) return false;
  }
  return true;
}

void check_error(const CronError& e) {
  const std::string& field = e.field();
  FUZZ_CHECK(field == "seconds" || field == "minutes" || field == "hours" || field == "day-of-month" ||
                 field == "month" || field == "day-of-week" || field == "year" || field == "expression" ||
                 field == "timezone",
             "CronError::field() is one of the documented names");
  FUZZ_CHECK(std::string(e.what()) == field + ": " + e.reason(), "what() is \"<field>: <reason>\"");
  FUZZ_CHECK(printable_line(e.what()), "a CronError message is one printable ASCII line");
}

// The wall-clock checks of one fire time in a fixed-offset zone.
void check_wall_time(const CronFields& f, std::int64_t fire_ms, std::int64_t offset_ms) {
  const std::int64_t wall = fire_ms + offset_ms;
  const std::int64_t days = floor_div(wall, kMillisPerDay);
  const std::int64_t in_day = floor_mod(wall, kMillisPerDay) / 1000;
  const CivilDate date = civil_from_days(days);
  const int weekday = day_of_week(days);
  const int last_day = days_in_month(date.year, date.month);

  FUZZ_CHECK(f.seconds.contains(static_cast<int>(in_day % 60)), "fire second is in the seconds field");
  FUZZ_CHECK(f.minutes.contains(static_cast<int>(in_day / 60 % 60)), "fire minute is in the minutes field");
  FUZZ_CHECK(f.hours.contains(static_cast<int>(in_day / 3600)), "fire hour is in the hours field");
  FUZZ_CHECK(f.months.contains(date.month), "fire month is in the month field");
  FUZZ_CHECK(f.years.contains(date.year), "fire year is in the year field");

  if (!f.day_of_month_unspecified) {
    if (f.last_day_of_month && !f.nearest_weekday) {
      FUZZ_CHECK(date.day == last_day - f.last_day_offset, "'L-n' fires n days before the month's last day");
    } else if (f.nearest_weekday) {
      FUZZ_CHECK(weekday >= 2 && weekday <= 6, "'W' fires on a weekday");
    } else {
      FUZZ_CHECK(f.days_of_month.contains(date.day), "fire day is in the day-of-month field");
    }
  }
  if (!f.day_of_week_unspecified) {
    FUZZ_CHECK(f.days_of_week.contains(weekday), "fire weekday is in the day-of-week field");
    if (f.nth_day_of_week != 0) {
      FUZZ_CHECK((date.day - 1) / 7 + 1 == f.nth_day_of_week, "'n#k' fires on the k-th such weekday");
    }
    if (f.last_day_of_week) FUZZ_CHECK(date.day + 7 > last_day, "'nL' fires on the month's last such weekday");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  const std::string_view expression_text = next_line(rest);
  std::string_view zone_text = next_line(rest);
  if (zone_text.empty()) zone_text = "UTC";
  const std::int64_t from = parse_int64(next_line(rest)).value_or(kDefaultFromMs);

  std::optional<CronExpression> expression;
  try {
    expression = CronExpression::parse(expression_text, zone_text);
  } catch (const CronError& e) {
    check_error(e);
    return 0;
  }
  FUZZ_CHECK(expression->expression() == expression_text, "expression() is the text given");
  FUZZ_CHECK(expression->time_zone() == zone_text, "time_zone() is the zone given");

  // The same fields again, for the wall-clock checks (parse() succeeded, so this does too).
  const CronFields fields = parse_cron_fields(expression_text);
  const auto zone = ZoneRules::find(zone_text);

  // The latest instant Quartz can return: the end of MAX_YEAR, widened by a day for the offset.
  const std::int64_t latest_ms = (days_from_civil(quartz_max_year() + 1, 1, 1) + 1) * kMillisPerDay;
  const auto times = expression->next_times(from, kFireTimes);
  std::int64_t previous = from;
  for (std::size_t i = 0; i < times.size(); ++i) {
    const std::int64_t t = times[i];
    FUZZ_CHECK(t > previous, "fire times are strictly after the start and increasing");
    FUZZ_CHECK(floor_mod(t, 1000) == 0, "fire times are whole seconds");
    FUZZ_CHECK(t < latest_ms, "no fire time after Quartz's MAX_YEAR");
    FUZZ_CHECK(expression->next_after(previous) == t, "next_times() is next_after() repeated");
    if (zone->fixed()) {
      std::size_t hint = 0;
      check_wall_time(fields, t, zone->offset_at(t, hint));
    }
    const std::string iso = format_iso8601(t, zone_text);
    FUZZ_CHECK(iso.size() >= 25 && iso[10] == 'T', "format_iso8601 gives yyyy-MM-ddTHH:mm:ss+hh:mm");
    previous = t;
  }
  if (static_cast<int>(times.size()) < kFireTimes) {
    FUZZ_CHECK(!expression->next_after(previous).has_value(), "a schedule that ended stays ended");
  }
  return 0;
}
