// Business calendars: which instants a calendar excludes in each mode, for how long, and why;
// the first fire of a schedule a calendar lets through; and what make() refuses. Each table
// reads "instant asked -> reason until instant", in the calendar's zone.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/cron/business_calendar.h"
#include "common/cron/cron_expression.h"
#include "common/cron/zone_rules.h"
#include "tests/unit/common/cron/cron_test_support.h"

namespace {

// Counts this thread's plain allocations while a test asks it to (exclusion() promises none
// for an instant it lets through).
thread_local bool t_count_allocations = false;
thread_local long t_allocations = 0;

}  // namespace

// The plain and nothrow forms and every delete that pairs with them, all on malloc (so that a
// sanitizer's own operators never see memory from the other family).
void* operator new(std::size_t size) {
  if (t_count_allocations) ++t_allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  if (t_count_allocations) ++t_allocations;
  return std::malloc(size == 0 ? 1 : size);
}
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace cronwheel::common::calendar_test {
namespace {

using cronwheel::testing::epoch_ms;

constexpr std::int64_t kHourMs = 3'600'000;
constexpr std::int64_t kDayMs = 24 * kHourMs;

struct Case {
  const char* at;        // an instant with its offset
  const char* expected;  // "allowed", or "<reason> until <instant in the calendar's zone>"
};

CalendarDay on(int year, int month, int day, std::string name = "") {
  return CalendarDay{year, month, day, std::move(name)};
}

std::array<bool, 7> monday_to_friday() { return {true, true, true, true, true, false, false}; }

// `ms` as format_iso8601 writes it, with ".mmm" when it is not a whole second.
std::string iso_ms(std::int64_t ms, const std::string& zone) {
  std::string out = format_iso8601(ms, zone);
  const std::int64_t fraction = ((ms % 1000) + 1000) % 1000;
  if (fraction != 0) {
    char digits[8];
    std::snprintf(digits, sizeof digits, ".%03d", static_cast<int>(fraction));
    out.insert(19, digits);
  }
  return out;
}

std::string describe(const BusinessCalendar& calendar, std::int64_t at, CalendarMode mode) {
  const std::optional<CalendarExclusion> ex = calendar.exclusion(at, mode);
  if (!ex) return "allowed";
  return ex->reason + " until " + iso_ms(ex->until_ms, calendar.spec().time_zone);
}

void expect_cases(const BusinessCalendar& calendar, CalendarMode mode,
                  const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    EXPECT_EQ(describe(calendar, epoch_ms(c.at), mode), c.expected) << "at " << c.at;
  }
}

// The message of the CalendarError make() raises, "field | what()", or "" when it accepts.
std::string refusal(const CalendarSpec& spec) {
  try {
    BusinessCalendar::make(spec);
    return "";
  } catch (const CalendarError& e) {
    return e.field() + " | " + e.what();
  }
}

// China's National Day week of 2026 with its make-up Saturday, in Beijing time.
CalendarSpec national_day_spec() {
  CalendarSpec spec;
  spec.time_zone = "Asia/Shanghai";
  for (int d = 1; d <= 7; ++d) spec.excluded_dates.push_back(on(2026, 10, d, "National Day"));
  spec.excluded_dates.push_back(on(2026, 12, 25, "Christmas"));
  spec.excluded_dates.push_back(on(2026, 5, 1));
  spec.included_dates.push_back(on(2026, 10, 10, "Make-up day"));
  spec.business_days = monday_to_friday();
  return spec;
}

TEST(BusinessCalendar, HolidaysExcludeTheirWholeRunOfDaysWhenSkipping) {
  const auto calendar = BusinessCalendar::make(national_day_spec());
  expect_cases(calendar, CalendarMode::kSkip, {
      {"2026-09-30T23:59:59.999+08:00", "allowed"},
      {"2026-10-01T00:00:00+08:00", "2026-10-01 National Day until 2026-10-08T00:00:00+08:00"},
      {"2026-10-03T12:00:00+08:00", "2026-10-03 National Day until 2026-10-08T00:00:00+08:00"},
      {"2026-10-07T23:59:59.999+08:00",
       "2026-10-07 National Day until 2026-10-08T00:00:00+08:00"},
      {"2026-10-08T00:00:00+08:00", "allowed"},
      // The weekly rule is not consulted: the schedule says the days.
      {"2026-10-10T09:00:00+08:00", "allowed"},
      {"2026-10-11T09:00:00+08:00", "allowed"},
      // A lone holiday on a Friday is one day when skipping.
      {"2026-12-25T10:00:00+08:00", "2026-12-25 Christmas until 2026-12-26T00:00:00+08:00"},
      {"2026-12-26T10:00:00+08:00", "allowed"},
      // An unnamed date is reported by its date alone.
      {"2026-05-01T10:00:00+08:00", "2026-05-01 until 2026-05-02T00:00:00+08:00"},
  });
}

TEST(BusinessCalendar, OnlyBusinessDaysLetsThroughWeekdaysAndMakeUpDaysOutsideHolidays) {
  const auto calendar = BusinessCalendar::make(national_day_spec());
  expect_cases(calendar, CalendarMode::kOnly, {
      {"2026-09-30T09:00:00+08:00", "allowed"},
      {"2026-10-01T00:00:00+08:00", "2026-10-01 National Day until 2026-10-08T00:00:00+08:00"},
      // A holiday on a Saturday is told by its name.
      {"2026-10-03T12:00:00+08:00", "2026-10-03 National Day until 2026-10-08T00:00:00+08:00"},
      {"2026-10-08T09:00:00+08:00", "allowed"},
      {"2026-10-09T09:00:00+08:00", "allowed"},
      // The make-up Saturday is a business day; the Sunday after it is not.
      {"2026-10-10T09:00:00+08:00", "allowed"},
      {"2026-10-11T09:00:00+08:00", "Sunday is not a business day until 2026-10-12T00:00:00+08:00"},
      {"2026-10-17T09:00:00+08:00",
       "Saturday is not a business day until 2026-10-19T00:00:00+08:00"},
      // A Friday holiday runs into the weekend: one exclusion to Monday.
      {"2026-12-25T10:00:00+08:00", "2026-12-25 Christmas until 2026-12-28T00:00:00+08:00"},
      {"2026-12-26T10:00:00+08:00",
       "Saturday is not a business day until 2026-12-28T00:00:00+08:00"},
      {"2026-12-28T00:00:00+08:00", "allowed"},
  });
}

TEST(BusinessCalendar, WeeklyRuleNamesTheDayThatIsNotABusinessDay) {
  CalendarSpec spec;
  spec.time_zone = "Asia/Riyadh";
  spec.business_days = std::array<bool, 7>{true, true, true, true, false, false, true};  // Sun-Thu
  const auto calendar = BusinessCalendar::make(spec);
  expect_cases(calendar, CalendarMode::kOnly, {
      {"2026-11-26T23:59:59.999+03:00", "allowed"},  // Thursday
      {"2026-11-27T00:00:00+03:00", "Friday is not a business day until 2026-11-29T00:00:00+03:00"},
      {"2026-11-28T18:00:00+03:00",
       "Saturday is not a business day until 2026-11-29T00:00:00+03:00"},
      {"2026-11-29T00:00:00+03:00", "allowed"},  // Sunday
  });
  expect_cases(calendar, CalendarMode::kSkip, {{"2026-11-27T12:00:00+03:00", "allowed"}});
}

TEST(BusinessCalendar, RecurringDatesExcludeEveryYearAndFebruary29OnlyInLeapYears) {
  CalendarSpec spec;
  spec.excluded_dates = {on(0, 12, 25, "Christmas"), on(0, 2, 29, "Leap Day"),
                         on(0, 12, 31, "New Year's Eve"), on(0, 1, 1),
                         on(2027, 12, 25, "Christmas 2027"), on(0, 12, 25, "Listed again")};
  const auto calendar = BusinessCalendar::make(spec);
  expect_cases(calendar, CalendarMode::kSkip, {
      {"2026-12-25T08:00:00Z", "2026-12-25 Christmas until 2026-12-26T00:00:00+00:00"},
      {"2031-12-25T23:59:59.999Z", "2031-12-25 Christmas until 2031-12-26T00:00:00+00:00"},
      // A date of its year is named before the recurring one.
      {"2027-12-25T08:00:00Z", "2027-12-25 Christmas 2027 until 2027-12-26T00:00:00+00:00"},
      {"2028-02-29T12:00:00Z", "2028-02-29 Leap Day until 2028-03-01T00:00:00+00:00"},
      {"2000-02-29T12:00:00Z", "2000-02-29 Leap Day until 2000-03-01T00:00:00+00:00"},
      {"2027-02-28T12:00:00Z", "allowed"},
      {"2027-03-01T00:00:00Z", "allowed"},
      {"2100-02-28T12:00:00Z", "allowed"},
      {"2100-03-01T12:00:00Z", "allowed"},
      // New Year's Eve and New Year's Day are one run across the year's end.
      {"2026-12-31T10:00:00Z", "2026-12-31 New Year's Eve until 2027-01-02T00:00:00+00:00"},
      {"2027-01-01T05:00:00Z", "2027-01-01 until 2027-01-02T00:00:00+00:00"},
  });
}

TEST(BusinessCalendar, RunOfExcludedDaysIsCappedAt366Days) {
  CalendarSpec spec;
  spec.business_days = std::array<bool, 7>{};  // no weekday: only the included date works
  spec.included_dates = {on(2030, 1, 2, "The one working day")};
  const auto calendar = BusinessCalendar::make(spec);
  expect_cases(calendar, CalendarMode::kOnly, {
      {"2026-01-01T00:00:00Z", "Thursday is not a business day until 2027-01-02T00:00:00+00:00"},
      {"2029-12-31T10:00:00Z", "Monday is not a business day until 2030-01-02T00:00:00+00:00"},
      {"2030-01-02T10:00:00Z", "allowed"},
      {"2030-01-03T00:00:00Z", "Thursday is not a business day until 2031-01-04T00:00:00+00:00"},
  });
}

TEST(BusinessCalendar, TimeRangesExcludeBothEndsToTheMillisecond) {
  CalendarSpec spec;
  spec.excluded_times = {{9 * 3600, 17 * 3600}, {23 * 3600, 1 * 3600}, {5 * 3600, 5 * 3600}};
  const auto calendar = BusinessCalendar::make(spec);
  const std::vector<Case> cases = {
      {"2026-06-01T08:59:59.999Z", "allowed"},
      {"2026-06-01T09:00:00Z", "between 09:00:00 and 17:00:00 until 2026-06-01T17:00:00.001+00:00"},
      {"2026-06-01T17:00:00Z", "between 09:00:00 and 17:00:00 until 2026-06-01T17:00:00.001+00:00"},
      {"2026-06-01T17:00:00.001Z", "allowed"},
      // A range past midnight runs into the next day.
      {"2026-06-01T22:59:59.999Z", "allowed"},
      {"2026-06-01T23:00:00Z", "between 23:00:00 and 01:00:00 until 2026-06-02T01:00:00.001+00:00"},
      {"2026-06-02T00:30:00Z", "between 23:00:00 and 01:00:00 until 2026-06-02T01:00:00.001+00:00"},
      {"2026-06-02T01:00:00Z", "between 23:00:00 and 01:00:00 until 2026-06-02T01:00:00.001+00:00"},
      {"2026-06-02T01:00:00.001Z", "allowed"},
      // A range whose start is its end is one millisecond.
      {"2026-06-01T04:59:59.999Z", "allowed"},
      {"2026-06-01T05:00:00Z", "between 05:00:00 and 05:00:00 until 2026-06-01T05:00:00.001+00:00"},
      {"2026-06-01T05:00:00.001Z", "allowed"},
  };
  // Ranges hold whatever the mode.
  expect_cases(calendar, CalendarMode::kSkip, cases);
  expect_cases(calendar, CalendarMode::kOnly, cases);
}

TEST(BusinessCalendar, OverlappingRangesAreLeftTogetherAndEachNamedAsListed) {
  CalendarSpec spec;
  spec.excluded_times = {{9 * 3600, 12 * 3600}, {11 * 3600, 13 * 3600}, {13 * 3600 + 1, 14 * 3600}};
  const auto calendar = BusinessCalendar::make(spec);
  expect_cases(calendar, CalendarMode::kSkip, {
      {"2026-06-01T10:00:00Z", "between 09:00:00 and 12:00:00 until 2026-06-01T13:00:00.001+00:00"},
      {"2026-06-01T12:30:00Z", "between 11:00:00 and 13:00:00 until 2026-06-01T13:00:00.001+00:00"},
      {"2026-06-01T13:00:00.500Z", "allowed"},
      {"2026-06-01T13:00:01Z", "between 13:00:01 and 14:00:00 until 2026-06-01T14:00:00.001+00:00"},
  });
}

TEST(BusinessCalendar, ExcludedDayWinsOverARangeAndARangeAfterItIsAskedAboutAgain) {
  CalendarSpec spec;
  spec.business_days = monday_to_friday();
  spec.excluded_times = {{23 * 3600, 1 * 3600}};
  const auto calendar = BusinessCalendar::make(spec);
  expect_cases(calendar, CalendarMode::kOnly, {
      // Friday night's range reaches into Saturday, which is excluded anyway.
      {"2026-11-27T23:30:00Z", "between 23:00:00 and 01:00:00 until 2026-11-28T01:00:00.001+00:00"},
      {"2026-11-28T00:30:00Z", "Saturday is not a business day until 2026-11-30T00:00:00+00:00"},
      {"2026-11-29T23:30:00Z", "Sunday is not a business day until 2026-11-30T00:00:00+00:00"},
      // Monday starts inside the range: until leaves the day rule, the range answers next.
      {"2026-11-30T00:00:00Z", "between 23:00:00 and 01:00:00 until 2026-11-30T01:00:00.001+00:00"},
      {"2026-11-30T01:00:00.001Z", "allowed"},
  });
}

TEST(BusinessCalendar, CalendarZoneDecidesTheDateOfAnInstant) {
  const auto calendar = BusinessCalendar::make(national_day_spec());
  expect_cases(calendar, CalendarMode::kSkip, {
      // 2026-09-30 in UTC, already 2026-10-01 in Beijing.
      {"2026-09-30T16:00:00Z", "2026-10-01 National Day until 2026-10-08T00:00:00+08:00"},
      {"2026-09-30T15:59:59.999Z", "allowed"},
      // Still 2026-10-07 in UTC, 2026-10-08 in Beijing.
      {"2026-10-07T16:00:00Z", "allowed"},
  });
  // A job at 20:00 UTC runs at 04:00 the next morning in Beijing.
  const auto cron = CronExpression::parse("0 0 20 * * ?", "UTC");
  const CalendarFire fire =
      next_fire_in_calendar([&](std::int64_t t) { return cron.next_after(t); },
                            epoch_ms("2026-09-29T21:00:00Z"), calendar, CalendarMode::kSkip, 10);
  ASSERT_TRUE(fire.at_ms.has_value());
  EXPECT_EQ(format_iso8601(*fire.at_ms, "UTC"), "2026-10-07T20:00:00+00:00");
  ASSERT_EQ(fire.skipped.size(), 7u);
  EXPECT_EQ(format_iso8601(fire.skipped.front().at_ms, "UTC"), "2026-09-30T20:00:00+00:00");
  EXPECT_EQ(fire.skipped.front().reason, "2026-10-01 National Day");
  EXPECT_EQ(format_iso8601(fire.skipped.back().at_ms, "UTC"), "2026-10-06T20:00:00+00:00");
  EXPECT_EQ(fire.skipped.back().reason, "2026-10-07 National Day");
  EXPECT_FALSE(fire.blocked);
}

TEST(BusinessCalendar, DaysOf23And25HoursAreExcludedWhole) {
  CalendarSpec spec;
  spec.time_zone = "America/New_York";
  spec.excluded_dates = {on(2026, 3, 8, "Spring forward"), on(2026, 11, 1, "Fall back")};
  const auto calendar = BusinessCalendar::make(spec);
  expect_cases(calendar, CalendarMode::kSkip, {
      {"2026-03-07T23:59:59.999-05:00", "allowed"},
      {"2026-03-08T00:00:00-05:00", "2026-03-08 Spring forward until 2026-03-09T00:00:00-04:00"},
      {"2026-03-08T01:59:59.999-05:00",
       "2026-03-08 Spring forward until 2026-03-09T00:00:00-04:00"},
      {"2026-03-08T03:00:00-04:00", "2026-03-08 Spring forward until 2026-03-09T00:00:00-04:00"},
      {"2026-03-08T23:59:59.999-04:00",
       "2026-03-08 Spring forward until 2026-03-09T00:00:00-04:00"},
      {"2026-03-09T00:00:00-04:00", "allowed"},
      {"2026-10-31T23:59:59.999-04:00", "allowed"},
      {"2026-11-01T00:00:00-04:00", "2026-11-01 Fall back until 2026-11-02T00:00:00-05:00"},
      {"2026-11-01T01:30:00-04:00", "2026-11-01 Fall back until 2026-11-02T00:00:00-05:00"},
      {"2026-11-01T01:30:00-05:00", "2026-11-01 Fall back until 2026-11-02T00:00:00-05:00"},
      {"2026-11-01T23:59:59.999-05:00", "2026-11-01 Fall back until 2026-11-02T00:00:00-05:00"},
      {"2026-11-02T00:00:00-05:00", "allowed"},
  });
  const auto spring =
      calendar.exclusion(epoch_ms("2026-03-08T00:00:00-05:00"), CalendarMode::kSkip);
  const auto fall = calendar.exclusion(epoch_ms("2026-11-01T00:00:00-04:00"), CalendarMode::kSkip);
  ASSERT_TRUE(spring && fall);
  EXPECT_EQ(spring->until_ms - epoch_ms("2026-03-08T00:00:00-05:00"), 23 * kHourMs);
  EXPECT_EQ(fall->until_ms - epoch_ms("2026-11-01T00:00:00-04:00"), 25 * kHourMs);
}

TEST(BusinessCalendar, RangeInTheRepeatedHourExcludesBothPasses) {
  CalendarSpec spec;
  spec.time_zone = "America/New_York";
  spec.excluded_times = {{1 * 3600, 2 * 3600}};
  expect_cases(BusinessCalendar::make(spec), CalendarMode::kSkip, {
      {"2026-11-01T00:59:59.999-04:00", "allowed"},
      {"2026-11-01T01:00:00-04:00",
       "between 01:00:00 and 02:00:00 until 2026-11-01T02:00:00.001-05:00"},
      {"2026-11-01T01:59:59.999-04:00",
       "between 01:00:00 and 02:00:00 until 2026-11-01T02:00:00.001-05:00"},
      {"2026-11-01T01:00:00-05:00",
       "between 01:00:00 and 02:00:00 until 2026-11-01T02:00:00.001-05:00"},
      {"2026-11-01T02:00:00-05:00",
       "between 01:00:00 and 02:00:00 until 2026-11-01T02:00:00.001-05:00"},
      {"2026-11-01T02:00:00.001-05:00", "allowed"},
  });

  // A range inside the repeated hour: the time between its two passes is allowed.
  spec.excluded_times = {{1 * 3600 + 30 * 60, 1 * 3600 + 45 * 60}};
  expect_cases(BusinessCalendar::make(spec), CalendarMode::kSkip, {
      {"2026-11-01T01:40:00-04:00",
       "between 01:30:00 and 01:45:00 until 2026-11-01T01:45:00.001-04:00"},
      {"2026-11-01T01:50:00-04:00", "allowed"},
      {"2026-11-01T01:20:00-05:00", "allowed"},
      {"2026-11-01T01:35:00-05:00",
       "between 01:30:00 and 01:45:00 until 2026-11-01T01:45:00.001-05:00"},
  });

  // A range across the end of the repeated hour: the clocks going back leave it at once.
  spec.excluded_times = {{1 * 3600 + 50 * 60, 2 * 3600 + 10 * 60}};
  expect_cases(BusinessCalendar::make(spec), CalendarMode::kSkip, {
      {"2026-11-01T01:55:00-04:00",
       "between 01:50:00 and 02:10:00 until 2026-11-01T01:00:00-05:00"},
      {"2026-11-01T01:00:00-05:00", "allowed"},
      {"2026-11-01T01:50:00-05:00",
       "between 01:50:00 and 02:10:00 until 2026-11-01T02:10:00.001-05:00"},
  });
}

TEST(BusinessCalendar, RangeInTheSpringForwardGapExcludesNothingThatNight) {
  CalendarSpec spec;
  spec.time_zone = "America/New_York";
  spec.excluded_times = {{2 * 3600, 2 * 3600 + 59 * 60 + 59}};
  expect_cases(BusinessCalendar::make(spec), CalendarMode::kSkip, {
      {"2026-03-07T02:30:00-05:00",
       "between 02:00:00 and 02:59:59 until 2026-03-07T02:59:59.001-05:00"},
      {"2026-03-08T01:59:59.999-05:00", "allowed"},
      {"2026-03-08T03:00:00-04:00", "allowed"},
  });

  // A range into the gap ends where the clocks land.
  spec.excluded_times = {{1 * 3600 + 30 * 60, 2 * 3600 + 30 * 60}};
  expect_cases(BusinessCalendar::make(spec), CalendarMode::kSkip, {
      {"2026-03-08T01:45:00-05:00",
       "between 01:30:00 and 02:30:00 until 2026-03-08T03:00:00-04:00"},
      {"2026-03-08T03:00:00-04:00", "allowed"},
  });
}

TEST(BusinessCalendar, DayWhoseMidnightDoesNotExistStartsAtItsFirstInstant) {
  // Havana moved its clocks from 00:00 to 01:00 on 2024-03-10, Sao Paulo on 2018-11-04,
  // Beirut on 2024-03-31; Apia skipped 2011-12-30 altogether.
  CalendarSpec havana;
  havana.time_zone = "America/Havana";
  havana.excluded_dates = {on(2024, 3, 9, "Eve")};
  expect_cases(BusinessCalendar::make(havana), CalendarMode::kSkip, {
      {"2024-03-09T12:00:00-05:00", "2024-03-09 Eve until 2024-03-10T01:00:00-04:00"},
      {"2024-03-10T01:00:00-04:00", "allowed"},
  });
  havana.excluded_dates = {on(2024, 3, 10, "Short day")};
  havana.excluded_times = {{0, 30 * 60}};  // 00:00-00:30 does not happen that night
  expect_cases(BusinessCalendar::make(havana), CalendarMode::kSkip, {
      {"2024-03-09T23:59:59.999-05:00", "allowed"},
      {"2024-03-10T01:00:00-04:00", "2024-03-10 Short day until 2024-03-11T00:00:00-04:00"},
      {"2024-03-11T00:15:00-04:00",
       "between 00:00:00 and 00:30:00 until 2024-03-11T00:30:00.001-04:00"},
  });
  havana.excluded_dates.clear();
  expect_cases(BusinessCalendar::make(havana), CalendarMode::kSkip, {
      {"2024-03-10T01:00:00-04:00", "allowed"},
  });

  CalendarSpec sao_paulo;
  sao_paulo.time_zone = "America/Sao_Paulo";
  sao_paulo.business_days = monday_to_friday();
  expect_cases(BusinessCalendar::make(sao_paulo), CalendarMode::kOnly, {
      {"2018-11-02T23:59:59.999-03:00", "allowed"},
      {"2018-11-03T12:00:00-03:00",
       "Saturday is not a business day until 2018-11-05T00:00:00-02:00"},
  });
  sao_paulo.business_days.reset();
  sao_paulo.excluded_dates = {on(2018, 11, 3)};
  expect_cases(BusinessCalendar::make(sao_paulo), CalendarMode::kSkip, {
      {"2018-11-03T12:00:00-03:00", "2018-11-03 until 2018-11-04T01:00:00-02:00"},
  });

  CalendarSpec beirut;
  beirut.time_zone = "Asia/Beirut";
  beirut.excluded_dates = {on(2024, 3, 30)};
  expect_cases(BusinessCalendar::make(beirut), CalendarMode::kSkip, {
      {"2024-03-30T12:00:00+02:00", "2024-03-30 until 2024-03-31T01:00:00+03:00"},
  });

  CalendarSpec apia;
  apia.time_zone = "Pacific/Apia";
  apia.excluded_dates = {on(2011, 12, 29)};
  expect_cases(BusinessCalendar::make(apia), CalendarMode::kSkip, {
      {"2011-12-29T12:00:00-10:00", "2011-12-29 until 2011-12-31T00:00:00+14:00"},
  });
}

TEST(BusinessCalendar, DayWhoseLastHourRepeatsEndsAfterTheSecondPass) {
  // Sao Paulo set its clocks back from 00:00 to 23:00 on 2018-02-18: 23:00-24:00 of the 17th
  // happened twice.
  CalendarSpec spec;
  spec.time_zone = "America/Sao_Paulo";
  spec.excluded_dates = {on(2018, 2, 17, "Carnival Saturday")};
  expect_cases(BusinessCalendar::make(spec), CalendarMode::kSkip, {
      {"2018-02-17T23:30:00-02:00", "2018-02-17 Carnival Saturday until 2018-02-18T00:00:00-03:00"},
      {"2018-02-17T23:30:00-03:00", "2018-02-17 Carnival Saturday until 2018-02-18T00:00:00-03:00"},
      {"2018-02-18T00:00:00-03:00", "allowed"},
  });
}

// For several calendars around clock changes, at instants half an hour or so apart: every
// excluded instant's until_ms is later, and nothing between them is allowed. Sampled each
// minute for three hours after the instant and before until_ms, each second for the two minutes
// before until_ms, each ten minutes between, and at each clock change and the millisecond
// before it.
TEST(BusinessCalendar, NoAllowedInstantLiesBeforeUntil) {
  struct Scenario {
    CalendarSpec spec;
    const char* from;
    const char* to;
  };
  std::vector<Scenario> scenarios;
  {
    CalendarSpec s;
    s.time_zone = "America/New_York";
    s.excluded_dates = {on(2026, 3, 8), on(2026, 11, 1)};
    s.business_days = monday_to_friday();
    s.excluded_times = {{1 * 3600, 2 * 3600}, {23 * 3600 + 30 * 60, 30 * 60}};
    scenarios.push_back({s, "2026-03-05T00:00:00Z", "2026-03-11T00:00:00Z"});
    scenarios.push_back({s, "2026-10-29T00:00:00Z", "2026-11-04T00:00:00Z"});
    s.excluded_dates.clear();
    s.excluded_times = {{1 * 3600 + 50 * 60, 2 * 3600 + 10 * 60},
                        {1 * 3600 + 30 * 60, 1 * 3600 + 40 * 60}};
    scenarios.push_back({s, "2026-10-30T00:00:00Z", "2026-11-03T00:00:00Z"});
    scenarios.push_back({s, "2026-03-06T00:00:00Z", "2026-03-10T00:00:00Z"});
  }
  {
    CalendarSpec s;
    s.time_zone = "America/Havana";
    s.excluded_dates = {on(2024, 3, 9), on(2024, 11, 2)};
    s.excluded_times = {{0, 30 * 60}, {23 * 3600 + 45 * 60, 15 * 60}};
    scenarios.push_back({s, "2024-03-07T00:00:00Z", "2024-03-12T00:00:00Z"});
    scenarios.push_back({s, "2024-10-31T00:00:00Z", "2024-11-05T00:00:00Z"});
  }
  {
    CalendarSpec s;
    s.time_zone = "America/Sao_Paulo";
    s.excluded_dates = {on(2018, 2, 17), on(2018, 11, 3)};
    s.excluded_times = {{23 * 3600 + 10 * 60, 23 * 3600 + 20 * 60}};
    scenarios.push_back({s, "2018-02-15T00:00:00Z", "2018-02-20T00:00:00Z"});
    scenarios.push_back({s, "2018-11-01T00:00:00Z", "2018-11-06T00:00:00Z"});
  }
  {
    CalendarSpec s;
    s.time_zone = "Pacific/Apia";
    s.excluded_dates = {on(2011, 12, 29)};
    s.excluded_times = {{23 * 3600, 3600}};
    scenarios.push_back({s, "2011-12-27T00:00:00Z", "2012-01-02T00:00:00Z"});
  }
  {
    CalendarSpec s;
    s.time_zone = "Australia/Lord_Howe";  // 30-minute daylight saving
    s.excluded_times = {{1 * 3600 + 45 * 60, 2 * 3600 + 15 * 60}};
    s.business_days = monday_to_friday();
    scenarios.push_back({s, "2026-04-02T00:00:00Z", "2026-04-07T00:00:00Z"});
    scenarios.push_back({s, "2026-10-01T00:00:00Z", "2026-10-06T00:00:00Z"});
  }

  for (const Scenario& scenario : scenarios) {
    const auto calendar = BusinessCalendar::make(scenario.spec);
    std::vector<std::int64_t> changes;
    for (const auto& [at, offset] :
         cron_detail::ZoneRules::find(scenario.spec.time_zone)->transitions()) {
      changes.push_back(at);
    }
    for (const CalendarMode mode : {CalendarMode::kSkip, CalendarMode::kOnly}) {
      for (std::int64_t t = epoch_ms(scenario.from); t < epoch_ms(scenario.to);
           t += 37 * 60'000 + 13'001) {
        const auto ex = calendar.exclusion(t, mode);
        if (!ex) continue;
        ASSERT_GT(ex->until_ms, t) << scenario.spec.time_zone << " at " << t;
        const std::int64_t until = ex->until_ms;
        std::vector<std::int64_t> probes = {until - 1};
        for (std::int64_t p = t + 60'000; p < until && p < t + 3 * kHourMs; p += 60'000) {
          probes.push_back(p);
        }
        for (std::int64_t p = t + 3 * kHourMs; p < until - 3 * kHourMs; p += 600'000) {
          probes.push_back(p);
        }
        for (std::int64_t p = until - 60'000; p > t && p > until - 3 * kHourMs; p -= 60'000) {
          probes.push_back(p);
        }
        for (std::int64_t p = until - 1000; p > t && p > until - 120'000; p -= 1000) {
          probes.push_back(p);
        }
        for (std::int64_t change : changes) {
          if (change > t && change < until) {
            probes.push_back(change);
            probes.push_back(change - 1);
          }
        }
        for (std::int64_t p : probes) {
          if (p <= t) continue;
          EXPECT_TRUE(calendar.exclusion(p, mode).has_value())
              << scenario.spec.time_zone << ": " << iso_ms(p, scenario.spec.time_zone)
              << " is allowed but lies before until " << iso_ms(until, scenario.spec.time_zone)
              << " of " << iso_ms(t, scenario.spec.time_zone);
        }
      }
    }
  }
}

TEST(BusinessCalendar, LettingAnInstantThroughDoesNotAllocate) {
  CalendarSpec spec = national_day_spec();
  spec.time_zone = "America/New_York";
  spec.excluded_dates.push_back(on(0, 7, 4, "Independence Day"));
  spec.excluded_times = {{1 * 3600, 2 * 3600}, {23 * 3600, 30 * 60}};
  const auto calendar = BusinessCalendar::make(spec);
  const std::int64_t from = epoch_ms("2026-09-01T00:00:00Z");
  int allowed = 0;
  long when_allowed = 0;
  t_allocations = 0;
  t_count_allocations = true;
  for (std::int64_t t = from; t < from + 90 * kDayMs; t += 7 * 60'000 + 1) {
    for (const CalendarMode mode : {CalendarMode::kSkip, CalendarMode::kOnly}) {
      const long before = t_allocations;
      if (!calendar.exclusion(t, mode)) {
        ++allowed;
        when_allowed += t_allocations - before;
      }
    }
  }
  // The counter does count: an excluded instant's long reason is allocated.
  t_allocations = 0;
  const auto saturday = calendar.exclusion(epoch_ms("2026-11-28T12:00:00Z"), CalendarMode::kOnly);
  t_count_allocations = false;
  ASSERT_TRUE(saturday.has_value());
  EXPECT_EQ(saturday->reason, "Saturday is not a business day");
  EXPECT_GT(allowed, 10'000);
  EXPECT_EQ(when_allowed, 0);
  EXPECT_GT(t_allocations, 0);
}

TEST(BusinessCalendar, InstantsFarFromTheEpochAreAnsweredWithoutOverflow) {
  CalendarSpec spec;
  spec.time_zone = "Pacific/Kiritimati";
  spec.business_days = monday_to_friday();
  spec.excluded_times = {{23 * 3600, 3600}};
  const auto calendar = BusinessCalendar::make(spec);
  for (const std::int64_t t : {std::numeric_limits<std::int64_t>::min(),
                               std::numeric_limits<std::int64_t>::max(),
                               (std::int64_t{1} << 62) - 1, -(std::int64_t{1} << 62) + 1}) {
    for (const CalendarMode mode : {CalendarMode::kSkip, CalendarMode::kOnly}) {
      const auto ex = calendar.exclusion(t, mode);
      if (ex) {
        EXPECT_GT(ex->until_ms, t);
      }
    }
  }
}

// Schedules through the calendar.

NextInstant counting(const CronExpression& cron, int& calls) {
  return [&cron, &calls](std::int64_t t) {
    ++calls;
    return cron.next_after(t);
  };
}

TEST(NextFireInCalendar, ListsEachSkippedDayOfAHolidayWeekWithItsReason) {
  const auto calendar = BusinessCalendar::make(national_day_spec());
  const auto cron = CronExpression::parse("0 0 9 * * ?", "Asia/Shanghai");
  for (const CalendarMode mode : {CalendarMode::kSkip, CalendarMode::kOnly}) {
    int calls = 0;
    const CalendarFire fire = next_fire_in_calendar(
        counting(cron, calls), epoch_ms("2026-09-30T10:00:00+08:00"), calendar, mode, 10);
    ASSERT_TRUE(fire.at_ms.has_value());
    EXPECT_EQ(format_iso8601(*fire.at_ms, "Asia/Shanghai"), "2026-10-08T09:00:00+08:00");
    EXPECT_FALSE(fire.blocked);
    ASSERT_EQ(fire.skipped.size(), 7u);
    for (int d = 1; d <= 7; ++d) {
      const SkippedFire& skipped = fire.skipped[static_cast<std::size_t>(d - 1)];
      const std::string date = "2026-10-0" + std::to_string(d);
      EXPECT_EQ(format_iso8601(skipped.at_ms, "Asia/Shanghai"), date + "T09:00:00+08:00");
      EXPECT_EQ(skipped.reason, date + " National Day");
    }
    EXPECT_EQ(calls, 8);
  }
}

TEST(NextFireInCalendar, ListsUpToMaxSkippedThenJumpsOverTheRest) {
  const auto calendar = BusinessCalendar::make(national_day_spec());
  const auto cron = CronExpression::parse("0 0 9 * * ?", "Asia/Shanghai");
  int calls = 0;
  const CalendarFire fire = next_fire_in_calendar(
      counting(cron, calls), epoch_ms("2026-09-30T10:00:00+08:00"), calendar,
      CalendarMode::kSkip, 3);
  ASSERT_TRUE(fire.at_ms.has_value());
  EXPECT_EQ(format_iso8601(*fire.at_ms, "Asia/Shanghai"), "2026-10-08T09:00:00+08:00");
  ASSERT_EQ(fire.skipped.size(), 3u);
  EXPECT_EQ(fire.skipped[2].reason, "2026-10-03 National Day");
  // Three listed, the fourth leads to a jump to 2026-10-08, which fires.
  EXPECT_EQ(calls, 5);
}

TEST(NextFireInCalendar, MakeUpSaturdayFiresAndTheSundayAfterIsSkipped) {
  const auto calendar = BusinessCalendar::make(national_day_spec());
  const auto cron = CronExpression::parse("0 0 9 * * ?", "Asia/Shanghai");
  const NextInstant next = [&](std::int64_t t) { return cron.next_after(t); };
  const CalendarFire saturday = next_fire_in_calendar(
      next, epoch_ms("2026-10-09T10:00:00+08:00"), calendar, CalendarMode::kOnly, 5);
  ASSERT_TRUE(saturday.at_ms.has_value());
  EXPECT_EQ(format_iso8601(*saturday.at_ms, "Asia/Shanghai"), "2026-10-10T09:00:00+08:00");
  EXPECT_TRUE(saturday.skipped.empty());
  const CalendarFire monday = next_fire_in_calendar(
      next, epoch_ms("2026-10-10T10:00:00+08:00"), calendar, CalendarMode::kOnly, 5);
  ASSERT_TRUE(monday.at_ms.has_value());
  EXPECT_EQ(format_iso8601(*monday.at_ms, "Asia/Shanghai"), "2026-10-12T09:00:00+08:00");
  ASSERT_EQ(monday.skipped.size(), 1u);
  EXPECT_EQ(monday.skipped[0].reason, "Sunday is not a business day");
}

TEST(NextFireInCalendar, EverySecondJobCrossesAWeekLongHolidayInTwoCalls) {
  const auto calendar = BusinessCalendar::make(national_day_spec());
  const auto cron = CronExpression::parse("* * * * * ?", "UTC");
  int calls = 0;
  const CalendarFire fire =
      next_fire_in_calendar(counting(cron, calls), epoch_ms("2026-09-30T23:59:59.500+08:00"),
                            calendar, CalendarMode::kSkip, 0);
  ASSERT_TRUE(fire.at_ms.has_value());
  EXPECT_EQ(iso_ms(*fire.at_ms, "Asia/Shanghai"), "2026-10-08T00:00:00+08:00");
  EXPECT_TRUE(fire.skipped.empty());
  EXPECT_EQ(calls, 2);
}

TEST(NextFireInCalendar, FixedRateScheduleSkipsTheWeekendAndAnExcludedHour) {
  CalendarSpec spec;
  spec.business_days = monday_to_friday();
  spec.excluded_times = {{12 * 3600, 13 * 3600}};
  const auto calendar = BusinessCalendar::make(spec);
  const std::int64_t anchor = epoch_ms("2026-11-27T00:00:07Z");
  constexpr std::int64_t kRateMs = 90'000;
  int calls = 0;
  const NextInstant every_90s = [&](std::int64_t t) -> std::optional<std::int64_t> {
    ++calls;
    if (t < anchor) return anchor;
    return anchor + ((t - anchor) / kRateMs + 1) * kRateMs;
  };
  CalendarFire fire = next_fire_in_calendar(every_90s, epoch_ms("2026-11-27T23:59:00Z"), calendar,
                                            CalendarMode::kOnly, 0);
  ASSERT_TRUE(fire.at_ms.has_value());
  EXPECT_EQ(format_iso8601(*fire.at_ms, "UTC"), "2026-11-30T00:00:07+00:00");
  EXPECT_EQ(calls, 2);

  calls = 0;
  fire = next_fire_in_calendar(every_90s, epoch_ms("2026-11-30T11:59:00Z"), calendar,
                               CalendarMode::kSkip, 1);
  ASSERT_TRUE(fire.at_ms.has_value());
  // 12:00:07 is skipped and listed; 12:01:37 leads to the jump past 13:00:00.000.
  EXPECT_EQ(format_iso8601(*fire.at_ms, "UTC"), "2026-11-30T13:00:07+00:00");
  ASSERT_EQ(fire.skipped.size(), 1u);
  EXPECT_EQ(format_iso8601(fire.skipped[0].at_ms, "UTC"), "2026-11-30T12:00:07+00:00");
  EXPECT_EQ(fire.skipped[0].reason, "between 12:00:00 and 13:00:00");
  EXPECT_EQ(calls, 3);
}

TEST(NextFireInCalendar, JobOnlyOnAnExcludedRecurringDateIsBlocked) {
  CalendarSpec spec;
  spec.excluded_dates = {on(0, 10, 1, "National Day")};
  const auto calendar = BusinessCalendar::make(spec);
  const auto cron = CronExpression::parse("0 0 9 1 10 ?", "UTC");
  int calls = 0;
  CalendarFire fire = next_fire_in_calendar(counting(cron, calls), epoch_ms("2026-01-01T00:00:00Z"),
                                            calendar, CalendarMode::kSkip, 0);
  EXPECT_FALSE(fire.at_ms.has_value());
  EXPECT_TRUE(fire.blocked);
  EXPECT_TRUE(fire.skipped.empty());
  EXPECT_LE(calls, 12);  // one a year, for the ten years searched

  fire = next_fire_in_calendar(counting(cron, calls), epoch_ms("2026-01-01T00:00:00Z"), calendar,
                               CalendarMode::kSkip, 2);
  EXPECT_TRUE(fire.blocked);
  ASSERT_EQ(fire.skipped.size(), 2u);
  EXPECT_EQ(fire.skipped[1].reason, "2027-10-01 National Day");
}

TEST(NextFireInCalendar, ScheduleEndingBeforeAnyAllowedInstantIsNotBlocked) {
  CalendarSpec spec;
  spec.excluded_dates = {on(0, 10, 1, "National Day")};
  const auto calendar = BusinessCalendar::make(spec);
  const auto cron = CronExpression::parse("0 0 9 1 10 ? 2026-2027", "UTC");
  const CalendarFire fire =
      next_fire_in_calendar([&](std::int64_t t) { return cron.next_after(t); },
                            epoch_ms("2026-01-01T00:00:00Z"), calendar, CalendarMode::kSkip, 5);
  EXPECT_FALSE(fire.at_ms.has_value());
  EXPECT_FALSE(fire.blocked);
  EXPECT_EQ(fire.skipped.size(), 2u);
}

TEST(NextFireInCalendar, AllowedFireFurtherThanTheSearchIsStillFound) {
  CalendarSpec spec;
  spec.business_days = monday_to_friday();
  const auto calendar = BusinessCalendar::make(spec);
  // 2040-01-02 is a Monday, fourteen years after the start.
  const auto cron = CronExpression::parse("0 0 9 2 1 ? 2040", "UTC");
  const CalendarFire fire =
      next_fire_in_calendar([&](std::int64_t t) { return cron.next_after(t); },
                            epoch_ms("2026-01-01T00:00:00Z"), calendar, CalendarMode::kOnly, 0);
  ASSERT_TRUE(fire.at_ms.has_value());
  EXPECT_EQ(format_iso8601(*fire.at_ms, "UTC"), "2040-01-02T09:00:00+00:00");
  EXPECT_FALSE(fire.blocked);
}

TEST(NextFireInCalendar, SearchStopsAfterTheStepBound) {
  // Four fires a day, each in a range: 10,000 jumps take under seven years.
  CalendarSpec spec;
  spec.excluded_times = {{1 * 3600, 2 * 3600}, {3 * 3600, 4 * 3600}, {5 * 3600, 6 * 3600},
                         {7 * 3600, 8 * 3600}};
  const auto calendar = BusinessCalendar::make(spec);
  const auto cron = CronExpression::parse("0 30 1,3,5,7 * * ?", "UTC");
  int calls = 0;
  const CalendarFire fire = next_fire_in_calendar(
      counting(cron, calls), epoch_ms("2026-01-01T00:00:00Z"), calendar, CalendarMode::kSkip, 0);
  EXPECT_TRUE(fire.blocked);
  EXPECT_FALSE(fire.at_ms.has_value());
  EXPECT_EQ(calls, static_cast<int>(kCalendarSearchSteps) + 1);
}

TEST(NextFireInCalendar, HugeMaxSkippedListsAtMostTheStepBound) {
  CalendarSpec spec;
  spec.excluded_times = {{0, 86'398}};  // all but the day's last two seconds
  const auto calendar = BusinessCalendar::make(spec);
  const auto cron = CronExpression::parse("* * * * * ?", "UTC");
  int calls = 0;
  const CalendarFire fire =
      next_fire_in_calendar(counting(cron, calls), epoch_ms("2026-01-01T00:00:00Z"), calendar,
                            CalendarMode::kSkip, std::numeric_limits<std::size_t>::max());
  ASSERT_TRUE(fire.at_ms.has_value());
  EXPECT_EQ(format_iso8601(*fire.at_ms, "UTC"), "2026-01-01T23:59:59+00:00");
  EXPECT_EQ(fire.skipped.size(), kCalendarSearchSteps);
  EXPECT_EQ(calls, static_cast<int>(kCalendarSearchSteps) + 2);
}

// What make() refuses.

TEST(BusinessCalendarMake, RefusesEachInvalidFieldNamingIt) {
  struct Refusal {
    const char* what;
    std::function<void(CalendarSpec&)> edit;
    const char* expected;  // "field | what()"
  };
  const std::string long_name(201, 'x');
  const std::vector<Refusal> refusals = {
      {"unknown zone", [](CalendarSpec& s) { s.time_zone = "Mars/Olympus_Mons"; },
       "timeZone | timeZone: unknown time zone 'Mars/Olympus_Mons'"},
      {"empty zone", [](CalendarSpec& s) { s.time_zone = ""; },
       "timeZone | timeZone: unknown time zone ''"},
      {"too many excluded dates",
       [](CalendarSpec& s) { s.excluded_dates.assign(5001, on(2026, 1, 1)); },
       "excludedDates | excludedDates: at most 5000 dates, got 5001"},
      {"too many included dates",
       [](CalendarSpec& s) { s.included_dates.assign(1001, on(2026, 1, 3)); },
       "includedDates | includedDates: at most 1000 dates, got 1001"},
      {"too many time ranges", [](CalendarSpec& s) { s.excluded_times.assign(25, {0, 60}); },
       "excludedTimes | excludedTimes: at most 24 time ranges, got 25"},
      {"February 30",
       [](CalendarSpec& s) {
         s.excluded_dates = {on(2026, 1, 1), on(2026, 1, 2), on(2026, 1, 3), on(2026, 2, 30)};
       },
       "excludedDates[3] | excludedDates[3]: 2026-02-30 does not exist"},
      {"February 29 of a common year",
       [](CalendarSpec& s) { s.excluded_dates = {on(2027, 2, 29)}; },
       "excludedDates[0] | excludedDates[0]: 2027-02-29 does not exist"},
      {"recurring April 31", [](CalendarSpec& s) { s.excluded_dates = {on(0, 4, 31)}; },
       "excludedDates[0] | excludedDates[0]: 04-31 does not exist"},
      {"day 0", [](CalendarSpec& s) { s.excluded_dates = {on(2026, 1, 0)}; },
       "excludedDates[0] | excludedDates[0]: 2026-01-00 does not exist"},
      {"day 32", [](CalendarSpec& s) { s.excluded_dates = {on(2026, 1, 32)}; },
       "excludedDates[0] | excludedDates[0]: 2026-01-32 does not exist"},
      {"month 13", [](CalendarSpec& s) { s.excluded_dates = {on(2026, 13, 1)}; },
       "excludedDates[0] | excludedDates[0]: month 13 is out of range 1-12"},
      {"month 0", [](CalendarSpec& s) { s.excluded_dates = {on(0, 0, 1)}; },
       "excludedDates[0] | excludedDates[0]: month 0 is out of range 1-12"},
      {"year before 1970", [](CalendarSpec& s) { s.excluded_dates = {on(1969, 12, 31)}; },
       "excludedDates[0] | excludedDates[0]: year 1969 is out of range 1970-2999 (or 0: every "
       "year)"},
      {"year after 2999", [](CalendarSpec& s) { s.excluded_dates = {on(3000, 1, 1)}; },
       "excludedDates[0] | excludedDates[0]: year 3000 is out of range 1970-2999 (or 0: every "
       "year)"},
      {"negative year", [](CalendarSpec& s) { s.excluded_dates = {on(-2026, 1, 1)}; },
       "excludedDates[0] | excludedDates[0]: year -2026 is out of range 1970-2999 (or 0: every "
       "year)"},
      {"recurring included date", [](CalendarSpec& s) { s.included_dates = {on(0, 10, 10)}; },
       "includedDates[0] | includedDates[0]: a make-up day needs its year (1970-2999); only "
       "excluded dates may recur every year"},
      {"included year out of range", [](CalendarSpec& s) { s.included_dates = {on(3000, 1, 1)}; },
       "includedDates[0] | includedDates[0]: year 3000 is out of range 1970-2999"},
      {"included date that does not exist",
       [](CalendarSpec& s) { s.included_dates = {on(2026, 1, 1), on(2026, 6, 31)}; },
       "includedDates[1] | includedDates[1]: 2026-06-31 does not exist"},
      {"date both excluded and included",
       [](CalendarSpec& s) {
         s.excluded_dates = {on(2026, 10, 1)};
         s.included_dates = {on(2026, 10, 1)};
       },
       "includedDates[0] | includedDates[0]: 2026-10-01 is also excluded (excludedDates[0])"},
      {"included date on a recurring excluded date",
       [](CalendarSpec& s) {
         s.excluded_dates = {on(2026, 5, 1), on(0, 10, 1)};
         s.included_dates = {on(2026, 10, 10), on(2031, 10, 1)};
       },
       "includedDates[1] | includedDates[1]: 2031-10-01 is also excluded (excludedDates[1], "
       "every year)"},
      {"included leap day on a recurring leap day",
       [](CalendarSpec& s) {
         s.excluded_dates = {on(0, 2, 29)};
         s.included_dates = {on(2028, 2, 29)};
       },
       "includedDates[0] | includedDates[0]: 2028-02-29 is also excluded (excludedDates[0], "
       "every year)"},
      {"name over 200 bytes",
       [&](CalendarSpec& s) { s.excluded_dates = {on(2026, 1, 1, long_name)}; },
       "excludedDates[0] | excludedDates[0]: name is 201 bytes, more than 200"},
      {"name not UTF-8", [](CalendarSpec& s) { s.excluded_dates = {on(2026, 1, 1, "Fe\xff")}; },
       "excludedDates[0] | excludedDates[0]: name is not valid UTF-8"},
      {"name with an overlong form",
       [](CalendarSpec& s) { s.excluded_dates = {on(2026, 1, 1, "\xc0\xaf")}; },
       "excludedDates[0] | excludedDates[0]: name is not valid UTF-8"},
      {"name cut inside a character",
       [](CalendarSpec& s) { s.excluded_dates = {on(2026, 1, 1, "\xe5\x9b")}; },
       "excludedDates[0] | excludedDates[0]: name is not valid UTF-8"},
      {"name with a surrogate",
       [](CalendarSpec& s) { s.excluded_dates = {on(2026, 1, 1, "\xed\xa0\x80")}; },
       "excludedDates[0] | excludedDates[0]: name is not valid UTF-8"},
      {"name with a newline",
       [](CalendarSpec& s) { s.excluded_dates = {on(2026, 1, 1, "New\nYear")}; },
       "excludedDates[0] | excludedDates[0]: name contains a control character"},
      {"name with a C1 control",
       [](CalendarSpec& s) { s.excluded_dates = {on(2026, 1, 1, "New\xc2\x85Year")}; },
       "excludedDates[0] | excludedDates[0]: name contains a control character"},
      {"included date's name",
       [](CalendarSpec& s) { s.included_dates = {on(2026, 1, 3, std::string("a\0b", 3))}; },
       "includedDates[0] | includedDates[0]: name contains a control character"},
      {"no business day at all",
       [](CalendarSpec& s) { s.business_days = std::array<bool, 7>{}; },
       "businessDays | businessDays: no weekday is a business day and no date is included, so "
       "in business-days-only mode no fire could ever happen"},
      {"range start below 0", [](CalendarSpec& s) { s.excluded_times = {{0, 60}, {-1, 60}}; },
       "excludedTimes[1] | excludedTimes[1]: start -1 is out of range 0-86399 (seconds since "
       "midnight)"},
      {"range start past the day", [](CalendarSpec& s) { s.excluded_times = {{86400, 60}}; },
       "excludedTimes[0] | excludedTimes[0]: start 86400 is out of range 0-86399 (seconds since "
       "midnight)"},
      {"range end past the day", [](CalendarSpec& s) { s.excluded_times = {{0, 86400}}; },
       "excludedTimes[0] | excludedTimes[0]: end 86400 is out of range 0-86399 (seconds since "
       "midnight)"},
      {"ranges covering the whole day",
       [](CalendarSpec& s) { s.excluded_times = {{0, 86'399}, {86'399, 0}}; },
       "excludedTimes | excludedTimes: the ranges cover the whole day, so no fire could ever "
       "happen"},
      {"wrapping ranges covering the whole day",
       [](CalendarSpec& s) { s.excluded_times = {{43'200, 43'199}, {43'199, 43'200}}; },
       "excludedTimes | excludedTimes: the ranges cover the whole day, so no fire could ever "
       "happen"},
  };
  for (const Refusal& r : refusals) {
    CalendarSpec spec;
    r.edit(spec);
    EXPECT_EQ(refusal(spec), r.expected) << r.what;
  }
}

TEST(BusinessCalendarMake, AcceptsTheEdgesOfEachBound) {
  std::vector<std::function<void(CalendarSpec&)>> edits = {
      [](CalendarSpec& s) { s.excluded_dates.assign(5000, on(2026, 1, 1)); },
      [](CalendarSpec& s) { s.included_dates.assign(1000, on(2026, 1, 3)); },
      [](CalendarSpec& s) { s.excluded_times.assign(24, {0, 60}); },
      [](CalendarSpec& s) { s.excluded_dates = {on(1970, 1, 1), on(2999, 12, 31), on(0, 2, 29)}; },
      [](CalendarSpec& s) { s.included_dates = {on(2028, 2, 29)}; },
      [](CalendarSpec& s) { s.excluded_dates = {on(2026, 1, 1, std::string(200, 'x'))}; },
      // 66 three-byte characters and two bytes: 200 bytes.
      [](CalendarSpec& s) {
        std::string name;
        for (int i = 0; i < 66; ++i) name += "\xe5\x9b\xbd";
        s.excluded_dates = {on(2026, 1, 1, name + "ab")};
      },
      [](CalendarSpec& s) { s.excluded_dates = {on(2026, 1, 1, "\xf0\x9f\x8e\x86 Fireworks")}; },
      [](CalendarSpec& s) {
        s.business_days = std::array<bool, 7>{};
        s.included_dates = {on(2026, 10, 10)};
      },
      [](CalendarSpec& s) { s.excluded_times = {{0, 86'399}}; },  // 23:59:59.001-.999 is free
      [](CalendarSpec& s) { s.time_zone = "Etc/GMT-14"; },
  };
  for (std::size_t i = 0; i < edits.size(); ++i) {
    CalendarSpec spec;
    edits[i](spec);
    EXPECT_EQ(refusal(spec), "") << "edit " << i;
  }
}

TEST(BusinessCalendarMake, KeepsTheSpecAsGivenAndNamesInReasons) {
  CalendarSpec spec = national_day_spec();
  spec.excluded_dates[0].name = "\xe5\x9b\xbd\xe5\xba\x86\xe8\x8a\x82";  // 国庆节
  const auto calendar = BusinessCalendar::make(spec);
  EXPECT_EQ(calendar.spec().time_zone, "Asia/Shanghai");
  EXPECT_EQ(calendar.spec().excluded_dates.size(), 9u);
  EXPECT_EQ(calendar.spec().included_dates[0].name, "Make-up day");
  const auto ex = calendar.exclusion(epoch_ms("2026-10-01T09:00:00+08:00"), CalendarMode::kSkip);
  ASSERT_TRUE(ex.has_value());
  EXPECT_EQ(ex->reason, "2026-10-01 \xe5\x9b\xbd\xe5\xba\x86\xe8\x8a\x82");
  // A copy shares the calendar and answers the same.
  const BusinessCalendar copy = calendar;
  EXPECT_EQ(copy.exclusion(epoch_ms("2026-10-01T09:00:00+08:00"), CalendarMode::kSkip)->until_ms,
            ex->until_ms);
}

}  // namespace
}  // namespace cronwheel::common::calendar_test
