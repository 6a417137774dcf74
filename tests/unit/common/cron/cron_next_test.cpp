// Hand-written evaluation cases, one construct or daylight-saving situation each. Expected
// times are Quartz 2.3.2's (checked with tests/unit/common/cron/quartz/QuartzOracle.java --stdin);
// quartz_golden_test.cpp compares a thousand more against the generated file.
#include <gtest/gtest.h>

#include <limits>
#include <thread>

#include "common/cron/cron_expression.h"
#include "tests/unit/common/cron/cron_test_support.h"

namespace cronwheel::common {
namespace {

using testing::epoch_ms;
using testing::fire_times;
using testing::next_fire;
using Times = std::vector<std::string>;

constexpr const char* kUtc = "UTC";
constexpr const char* kNewYork = "America/New_York";

TEST(CronNext, FiresStrictlyAfterTheGivenInstant) {
  EXPECT_EQ(next_fire("0 0 12 * * ?", kUtc, "2026-05-01T12:00:00Z"), "2026-05-02T12:00:00+00:00");
  EXPECT_EQ(next_fire("0 0 12 * * ?", kUtc, "2026-05-01T11:59:59Z"), "2026-05-01T12:00:00+00:00");
  EXPECT_EQ(next_fire("* * * * * ?", kUtc, "2026-05-01T12:00:00Z"), "2026-05-01T12:00:01+00:00");
}

TEST(CronNext, FireTimesAreWholeSecondsWhateverTheStartMilliseconds) {
  const auto cron = CronExpression::parse("* * * * * ?");
  EXPECT_EQ(cron.next_after(epoch_ms("2026-05-01T12:00:00.001Z")), epoch_ms("2026-05-01T12:00:01Z"));
  EXPECT_EQ(cron.next_after(epoch_ms("2026-05-01T12:00:00.999Z")), epoch_ms("2026-05-01T12:00:01Z"));
  EXPECT_EQ(cron.next_after(epoch_ms("2026-05-01T11:59:59.999Z")), epoch_ms("2026-05-01T12:00:00Z"));
}

TEST(CronNext, StepsStartAtTheGivenValue) {
  EXPECT_EQ(fire_times("0 */5 * * * ?", kUtc, "2026-05-01T12:07:00Z", 3),
            (Times{"2026-05-01T12:10:00+00:00", "2026-05-01T12:15:00+00:00",
                   "2026-05-01T12:20:00+00:00"}));
  EXPECT_EQ(fire_times("15/20 * * * * ?", kUtc, "2026-05-01T12:00:00Z", 4),
            (Times{"2026-05-01T12:00:15+00:00", "2026-05-01T12:00:35+00:00",
                   "2026-05-01T12:00:55+00:00", "2026-05-01T12:01:15+00:00"}));
  EXPECT_EQ(fire_times("0 0 9-17/4 * * ?", kUtc, "2026-05-01T10:00:00Z", 3),
            (Times{"2026-05-01T13:00:00+00:00", "2026-05-01T17:00:00+00:00",
                   "2026-05-02T09:00:00+00:00"}));
}

TEST(CronNext, RangesWrapAroundTheirField) {
  EXPECT_EQ(fire_times("0 0 22-1 * * ?", kUtc, "2026-05-01T12:00:00Z", 5),
            (Times{"2026-05-01T22:00:00+00:00", "2026-05-01T23:00:00+00:00",
                   "2026-05-02T00:00:00+00:00", "2026-05-02T01:00:00+00:00",
                   "2026-05-02T22:00:00+00:00"}));
  // FRI-MON is Friday, Saturday, Sunday, Monday. 2026-05-01 is a Friday.
  EXPECT_EQ(fire_times("0 0 12 ? * FRI-MON", kUtc, "2026-05-01T00:00:00Z", 5),
            (Times{"2026-05-01T12:00:00+00:00", "2026-05-02T12:00:00+00:00",
                   "2026-05-03T12:00:00+00:00", "2026-05-04T12:00:00+00:00",
                   "2026-05-08T12:00:00+00:00"}));
  EXPECT_EQ(fire_times("0 0 0 1 NOV-FEB ?", kUtc, "2026-05-01T00:00:00Z", 4),
            (Times{"2026-11-01T00:00:00+00:00", "2026-12-01T00:00:00+00:00",
                   "2027-01-01T00:00:00+00:00", "2027-02-01T00:00:00+00:00"}));
}

TEST(CronNext, NamesAreCaseInsensitive) {
  EXPECT_EQ(fire_times("0 0 12 ? jan,Jul mon", kUtc, "2026-05-01T00:00:00Z", 2),
            (Times{"2026-07-06T12:00:00+00:00", "2026-07-13T12:00:00+00:00"}));
}

TEST(CronNext, DayOfWeekCountsFromSunday) {
  // 1 = Sunday, 7 = Saturday.
  EXPECT_EQ(next_fire("0 0 12 ? * 1", kUtc, "2026-05-01T00:00:00Z"), "2026-05-03T12:00:00+00:00");
  EXPECT_EQ(next_fire("0 0 12 ? * 7", kUtc, "2026-05-01T00:00:00Z"), "2026-05-02T12:00:00+00:00");
  EXPECT_EQ(fire_times("0 15 10 ? * MON-FRI", kUtc, "2026-05-01T11:00:00Z", 2),
            (Times{"2026-05-04T10:15:00+00:00", "2026-05-05T10:15:00+00:00"}));
}

TEST(CronNext, DayThirtyOneSkipsShortMonths) {
  EXPECT_EQ(fire_times("0 0 0 31 * ?", kUtc, "2026-01-31T00:00:00Z", 3),
            (Times{"2026-03-31T00:00:00+00:00", "2026-05-31T00:00:00+00:00",
                   "2026-07-31T00:00:00+00:00"}));
}

TEST(CronNext, LeapDayFiresOnlyInLeapYears) {
  EXPECT_EQ(fire_times("0 0 0 29 2 ?", kUtc, "2026-01-01T00:00:00Z", 3),
            (Times{"2028-02-29T00:00:00+00:00", "2032-02-29T00:00:00+00:00",
                   "2036-02-29T00:00:00+00:00"}));
  // 2100 is not a leap year.
  EXPECT_EQ(next_fire("0 0 0 29 2 ?", kUtc, "2096-03-01T00:00:00Z"), "2104-02-29T00:00:00+00:00");
}

TEST(CronNext, ImpossibleDatesNeverFire) {
  EXPECT_EQ(next_fire("0 0 0 30 2 ?", kUtc, "2026-01-01T00:00:00Z"), "none");
  EXPECT_EQ(next_fire("0 0 0 31 4,6,9,11 ?", kNewYork, "2026-01-01T00:00:00Z"), "none");
}

TEST(CronNext, YearField) {
  EXPECT_EQ(next_fire("0 0 0 1 1 ? 2030", kUtc, "2026-05-01T00:00:00Z"), "2030-01-01T00:00:00+00:00");
  EXPECT_EQ(next_fire("0 0 0 1 1 ? 2030", kUtc, "2030-01-01T00:00:00Z"), "none");
  EXPECT_EQ(next_fire("0 0 0 1 1 ? 2025", kUtc, "2026-05-01T00:00:00Z"), "none");
  EXPECT_EQ(fire_times("0 0 0 1 1 ? 2026/3", kUtc, "2026-05-01T00:00:00Z", 3),
            (Times{"2029-01-01T00:00:00+00:00", "2032-01-01T00:00:00+00:00",
                   "2035-01-01T00:00:00+00:00"}));
  EXPECT_EQ(fire_times("0 0 12 L 12 ? 2027-2028", kUtc, "2026-05-01T00:00:00Z", 3),
            (Times{"2027-12-31T12:00:00+00:00", "2028-12-31T12:00:00+00:00", "none"}));
}

TEST(CronNext, RollsOverTheYear) {
  EXPECT_EQ(fire_times("59 59 23 31 12 ?", kUtc, "2026-12-31T23:59:58Z", 2),
            (Times{"2026-12-31T23:59:59+00:00", "2027-12-31T23:59:59+00:00"}));
  EXPECT_EQ(next_fire("0 0 0 1 1 ?", kNewYork, "2026-12-31T23:59:59-05:00"),
            "2027-01-01T00:00:00-05:00");
}

TEST(CronNext, LastDayOfMonth) {
  EXPECT_EQ(fire_times("0 0 12 L * ?", kUtc, "2028-01-31T13:00:00Z", 3),
            (Times{"2028-02-29T12:00:00+00:00", "2028-03-31T12:00:00+00:00",
                   "2028-04-30T12:00:00+00:00"}));
  EXPECT_EQ(fire_times("0 0 12 L-3 * ?", kUtc, "2026-02-01T00:00:00Z", 2),
            (Times{"2026-02-25T12:00:00+00:00", "2026-03-28T12:00:00+00:00"}));
}

TEST(CronNext, NearestWeekday) {
  // 2026-08-15 is a Saturday: 15W fires Friday the 14th. 2026-11-15 is a Sunday: Monday 16th.
  EXPECT_EQ(next_fire("0 0 8 15W * ?", kUtc, "2026-08-01T00:00:00Z"), "2026-08-14T08:00:00+00:00");
  EXPECT_EQ(next_fire("0 0 8 15W * ?", kUtc, "2026-11-01T00:00:00Z"), "2026-11-16T08:00:00+00:00");
  // 2026-08-01 is a Saturday: 1W does not leave the month, it moves to Monday the 3rd.
  EXPECT_EQ(next_fire("0 0 8 1W * ?", kUtc, "2026-07-31T00:00:00Z"), "2026-08-03T08:00:00+00:00");
  // 2026-05-31 is a Sunday: the last weekday is Friday the 29th.
  EXPECT_EQ(next_fire("0 0 8 LW * ?", kUtc, "2026-05-01T00:00:00Z"), "2026-05-29T08:00:00+00:00");
  EXPECT_EQ(next_fire("0 0 8 LW * ?", kUtc, "2026-05-29T08:00:00Z"), "2026-06-30T08:00:00+00:00");
}

TEST(CronNext, LastGivenWeekdayOfMonth) {
  EXPECT_EQ(fire_times("0 0 12 ? * 6L", kUtc, "2026-05-01T00:00:00Z", 3),
            (Times{"2026-05-29T12:00:00+00:00", "2026-06-26T12:00:00+00:00",
                   "2026-07-31T12:00:00+00:00"}));
  // 'L' alone in day-of-week is Saturday, every Saturday.
  EXPECT_EQ(fire_times("0 0 12 ? * L", kUtc, "2026-05-01T00:00:00Z", 2),
            (Times{"2026-05-02T12:00:00+00:00", "2026-05-09T12:00:00+00:00"}));
}

TEST(CronNext, NthWeekdayOfMonth) {
  EXPECT_EQ(fire_times("0 0 12 ? * 6#3", kUtc, "2026-05-01T00:00:00Z", 3),
            (Times{"2026-05-15T12:00:00+00:00", "2026-06-19T12:00:00+00:00",
                   "2026-07-17T12:00:00+00:00"}));
  // A fifth Monday exists only in some months.
  EXPECT_EQ(fire_times("0 0 12 ? * MON#5", kUtc, "2026-05-01T00:00:00Z", 3),
            (Times{"2026-06-29T12:00:00+00:00", "2026-08-31T12:00:00+00:00",
                   "2026-11-30T12:00:00+00:00"}));
}

// The check from the issue: the last Friday of the month at 10:15 in New York.
TEST(CronNext, LastFridayAt1015InNewYorkMatchesQuartz) {
  EXPECT_EQ(fire_times("0 15 10 ? * 6L", kNewYork, "2026-11-22T00:00:00-05:00", 5),
            (Times{"2026-11-27T10:15:00-05:00", "2026-12-25T10:15:00-05:00",
                   "2027-01-29T10:15:00-05:00", "2027-02-26T10:15:00-05:00",
                   "2027-03-26T10:15:00-04:00"}));
}

// Spring forward in New York, 2024-03-10: 02:00 EST becomes 03:00 EDT.
TEST(CronNextDst, SkipsFireTimeInsideSpringForwardGap) {
  EXPECT_EQ(fire_times("0 30 2 * * ?", kNewYork, "2024-03-09T12:00:00-05:00", 2),
            (Times{"2024-03-11T02:30:00-04:00", "2024-03-12T02:30:00-04:00"}));
  EXPECT_EQ(next_fire("0 0 2 ? * SUN", kNewYork, "2024-03-03T12:00:00-05:00"),
            "2024-03-17T02:00:00-04:00");
}

TEST(CronNextDst, StepsContinueAfterSpringForwardGap) {
  EXPECT_EQ(fire_times("0 */20 * * * ?", kNewYork, "2024-03-10T01:00:00-05:00", 4),
            (Times{"2024-03-10T01:20:00-05:00", "2024-03-10T01:40:00-05:00",
                   "2024-03-10T03:00:00-04:00", "2024-03-10T03:20:00-04:00"}));
  EXPECT_EQ(fire_times("* * * * * ?", kNewYork, "2024-03-10T01:59:58-05:00", 3),
            (Times{"2024-03-10T01:59:59-05:00", "2024-03-10T03:00:00-04:00",
                   "2024-03-10T03:00:01-04:00"}));
}

// Fall back in New York, 2024-11-03: 02:00 EDT becomes 01:00 EST, 01:xx happens twice.
TEST(CronNextDst, RepeatedHourFiresOnceInStandardTime) {
  EXPECT_EQ(fire_times("0 30 1 * * ?", kNewYork, "2024-11-02T12:00:00-04:00", 2),
            (Times{"2024-11-03T01:30:00-05:00", "2024-11-04T01:30:00-05:00"}));
  EXPECT_EQ(fire_times("0 0 * * * ?", kNewYork, "2024-11-02T23:30:00-04:00", 3),
            (Times{"2024-11-03T00:00:00-04:00", "2024-11-03T01:00:00-05:00",
                   "2024-11-03T02:00:00-05:00"}));
}

TEST(CronNextDst, FirstPassThroughRepeatedHourHasNoFireTimes) {
  // Every minute and every second jump from 00:59 EDT straight to 01:00 EST.
  EXPECT_EQ(fire_times("0 * * * * ?", kNewYork, "2024-11-03T00:58:00-04:00", 3),
            (Times{"2024-11-03T00:59:00-04:00", "2024-11-03T01:00:00-05:00",
                   "2024-11-03T01:01:00-05:00"}));
  EXPECT_EQ(fire_times("* * * * * ?", kNewYork, "2024-11-03T00:59:58-04:00", 3),
            (Times{"2024-11-03T00:59:59-04:00", "2024-11-03T01:00:00-05:00",
                   "2024-11-03T01:00:01-05:00"}));
  // Asked from inside the first 01:xx, the answer is in the second one.
  EXPECT_EQ(next_fire("* * * * * ?", kNewYork, "2024-11-03T01:59:58-04:00"),
            "2024-11-03T01:59:59-05:00");
  EXPECT_EQ(next_fire("0 0 * * * ?", kNewYork, "2024-11-03T01:10:00-04:00"),
            "2024-11-03T02:00:00-05:00");
}

TEST(CronNextDst, SouthernHemisphereSydney) {
  // Spring forward 2024-10-06 02:00 -> 03:00; fall back 2024-04-07 03:00 -> 02:00.
  EXPECT_EQ(next_fire("0 30 2 * * ?", "Australia/Sydney", "2024-10-05T12:00:00+10:00"),
            "2024-10-07T02:30:00+11:00");
  EXPECT_EQ(next_fire("0 30 2 * * ?", "Australia/Sydney", "2024-04-06T12:00:00+11:00"),
            "2024-04-07T02:30:00+10:00");
}

TEST(CronNextDst, HalfHourShiftOnLordHowe) {
  // 2024-10-06 02:00 +10:30 becomes 02:30 +11:00.
  EXPECT_EQ(next_fire("0 15 2 * * ?", "Australia/Lord_Howe", "2024-10-05T12:00:00+10:30"),
            "2024-10-07T02:15:00+11:00");
  EXPECT_EQ(fire_times("0 */15 * * * ?", "Australia/Lord_Howe", "2024-10-06T01:40:00+10:30", 3),
            (Times{"2024-10-06T01:45:00+10:30", "2024-10-06T02:30:00+11:00",
                   "2024-10-06T02:45:00+11:00"}));
  // 2024-04-07 02:00 +11:00 becomes 01:30 +10:30: 01:45 fires once, in standard time.
  EXPECT_EQ(next_fire("0 45 1 * * ?", "Australia/Lord_Howe", "2024-04-06T12:00:00+11:00"),
            "2024-04-07T01:45:00+10:30");
}

TEST(CronNextDst, FortyFiveMinuteOffsetOnChatham) {
  // 2024-09-29 02:45 +12:45 becomes 03:45 +13:45.
  EXPECT_EQ(next_fire("0 0 3 * * ?", "Pacific/Chatham", "2024-09-28T12:00:00+12:45"),
            "2024-09-30T03:00:00+13:45");
}

TEST(CronNextDst, MidnightGapInSaoPaulo2018) {
  // Daylight saving started at 00:00 on 2018-11-04 (abolished since 2019).
  EXPECT_EQ(fire_times("0 0 0 * * ?", "America/Sao_Paulo", "2018-11-03T12:00:00-03:00", 2),
            (Times{"2018-11-05T00:00:00-02:00", "2018-11-06T00:00:00-02:00"}));
  EXPECT_EQ(next_fire("0 0 0 * * ?", "America/Sao_Paulo", "2026-11-03T12:00:00-03:00"),
            "2026-11-04T00:00:00-03:00");
}

TEST(CronNextDst, EuropeSwitchesAtOneUtc) {
  EXPECT_EQ(next_fire("0 30 1 * * ?", "Europe/London", "2024-03-30T12:00:00+00:00"),
            "2024-04-01T01:30:00+01:00");
  EXPECT_EQ(next_fire("0 30 2 * * ?", "Europe/Berlin", "2024-10-26T12:00:00+02:00"),
            "2024-10-27T02:30:00+01:00");
}

TEST(CronNextDst, RulesContinuePast2037) {
  // The tz files list transitions up to 2037; later ones come from their POSIX rule.
  EXPECT_EQ(next_fire("0 30 2 * * ?", kNewYork, "2040-03-10T12:00:00-05:00"),
            "2040-03-12T02:30:00-04:00");
  EXPECT_EQ(next_fire("0 0 12 1 7 ?", kNewYork, "2060-01-01T00:00:00Z"), "2060-07-01T12:00:00-04:00");
}

TEST(CronNext, ZonesWithoutDaylightSaving) {
  EXPECT_EQ(next_fire("0 0 9 * * ?", "Asia/Kolkata", "2026-05-01T00:00:00Z"),
            "2026-05-01T09:00:00+05:30");
  EXPECT_EQ(CronExpression::parse("0 0 9 * * ?", "Asia/Kolkata").next_after(0),
            epoch_ms("1970-01-01T09:00:00+05:30"));
}

TEST(CronNext, ExtremeInstantsAreSafe) {
  const auto cron = CronExpression::parse("0 0 0 1 1 ?", kNewYork);
  EXPECT_EQ(cron.next_after(std::numeric_limits<std::int64_t>::max()), std::nullopt);
  EXPECT_EQ(cron.next_after(epoch_ms("3000-01-01T00:00:00Z")), std::nullopt);
  // Quartz MAX_YEAR is this year + 100: no fire time beyond it.
  EXPECT_EQ(cron.next_after(epoch_ms("2200-06-01T00:00:00Z")), std::nullopt);
  // Before 1970, the first fire time is the first one in 1970.
  EXPECT_EQ(cron.next_after(std::numeric_limits<std::int64_t>::min()),
            epoch_ms("1970-01-01T00:00:00-05:00"));
  EXPECT_EQ(cron.next_after(epoch_ms("1850-06-01T00:00:00Z")), epoch_ms("1970-01-01T00:00:00-05:00"));
}

TEST(CronNext, ReturnsNothingWhereQuartzWouldLoopForever) {
  // L-28 is February 1st in a leap year and "February 0th", January 31st, otherwise. After
  // 2028-02-01 Quartz's search bounces between January 31st and February 1st 2029 forever;
  // here it gives up.
  const auto cron = CronExpression::parse("0 0 0 L-28W 2 ?");
  EXPECT_EQ(cron.next_after(epoch_ms("2027-06-01T00:00:00Z")), epoch_ms("2028-02-01T00:00:00Z"));
  EXPECT_EQ(cron.next_after(epoch_ms("2028-02-01T00:00:00Z")), std::nullopt);
}

TEST(CronNextTimes, ListsConsecutiveFireTimes) {
  const auto cron = CronExpression::parse("0 0 12 * * ?", kNewYork);
  const auto times = cron.next_times(epoch_ms("2026-05-01T00:00:00Z"), 3);
  EXPECT_EQ(times, (std::vector<std::int64_t>{epoch_ms("2026-05-01T12:00:00-04:00"),
                                              epoch_ms("2026-05-02T12:00:00-04:00"),
                                              epoch_ms("2026-05-03T12:00:00-04:00")}));
}

TEST(CronNextTimes, StopsWhenTheScheduleEnds) {
  const auto cron = CronExpression::parse("0 0 0 1 1 ? 2027,2028");
  EXPECT_EQ(cron.next_times(epoch_ms("2026-05-01T00:00:00Z"), 10).size(), 2u);
  EXPECT_TRUE(cron.next_times(epoch_ms("2026-05-01T00:00:00Z"), 0).empty());
  EXPECT_TRUE(cron.next_times(epoch_ms("2026-05-01T00:00:00Z"), -1).empty());
}

TEST(CronExpressionValue, CopiesAndMovesBehaveAlike) {
  const auto original = CronExpression::parse("0 15 10 ? * 6L", kNewYork);
  CronExpression copy = original;
  CronExpression moved = std::move(copy);
  const std::int64_t from = epoch_ms("2026-05-01T00:00:00Z");
  EXPECT_EQ(moved.next_after(from), original.next_after(from));
  EXPECT_EQ(moved.expression(), original.expression());
  EXPECT_EQ(moved.time_zone(), kNewYork);
  moved = CronExpression::parse("0 0 12 * * ?");
  EXPECT_EQ(moved.time_zone(), "UTC");
}

TEST(CronExpressionValue, ConcurrentCallsAgreeWithSequentialOnes) {
  const auto cron = CronExpression::parse("0 */7 1-3 ? * MON-FRI", kNewYork);
  const std::int64_t from = epoch_ms("2024-03-01T00:00:00Z");
  const auto expected = cron.next_times(from, 2000);
  std::vector<std::vector<std::int64_t>> results(4);
  {
    std::vector<std::jthread> threads;
    for (auto& result : results) {
      threads.emplace_back([&cron, &result, from] { result = cron.next_times(from, 2000); });
    }
  }
  for (const auto& result : results) EXPECT_EQ(result, expected);
}

TEST(FormatIso8601, WritesLocalTimeWithNumericOffset) {
  const std::int64_t t = epoch_ms("2026-11-27T15:15:00Z");
  EXPECT_EQ(format_iso8601(t, kNewYork), "2026-11-27T10:15:00-05:00");
  EXPECT_EQ(format_iso8601(t, kUtc), "2026-11-27T15:15:00+00:00");
  EXPECT_EQ(format_iso8601(t, "Asia/Kolkata"), "2026-11-27T20:45:00+05:30");
  EXPECT_EQ(format_iso8601(t, "Pacific/Chatham"), "2026-11-28T05:00:00+13:45");
  EXPECT_EQ(format_iso8601(epoch_ms("2026-07-01T12:00:00Z"), kNewYork), "2026-07-01T08:00:00-04:00");
}

TEST(FormatIso8601, TruncatesToTheSecondAndHandlesEarlyInstants) {
  EXPECT_EQ(format_iso8601(999, kUtc), "1970-01-01T00:00:00+00:00");
  EXPECT_EQ(format_iso8601(-1, kUtc), "1969-12-31T23:59:59+00:00");
}

TEST(FormatIso8601, UnknownZoneIsATimezoneError) {
  EXPECT_THROW(format_iso8601(0, "Nowhere/Special"), CronError);
}

}  // namespace
}  // namespace cronwheel::common
