// DstPolicy: what a cron expression does on the days its zone's clocks change, beyond Quartz's
// default (cron_next_test.cpp and the Quartz corpus hold the default).
#include <gtest/gtest.h>

#include <set>

#include "common/cron/cron_expression.h"
#include "tests/unit/common/cron/cron_test_support.h"

namespace cronwheel::common {
namespace {

using testing::epoch_ms;
using DstTimes = std::vector<std::string>;

constexpr const char* kNewYorkZone = "America/New_York";
// Clocks go forward by half an hour (02:00 → 02:30) and back by half an hour.
constexpr const char* kLordHoweZone = "Australia/Lord_Howe";

constexpr DstPolicy kQuartz{};
constexpr DstPolicy kAfterGap{DstGap::kFireAfter, DstRepeat::kOnce};
constexpr DstPolicy kBoth{DstGap::kSkip, DstRepeat::kBoth};
constexpr DstPolicy kAll{DstGap::kFireAfter, DstRepeat::kBoth};

DstTimes fires(std::string_view expression, std::string_view zone, DstPolicy policy, std::string_view from,
            int count) {
  const auto cron = CronExpression::parse(expression, zone).with_dst_policy(policy);
  DstTimes out;
  std::int64_t t = epoch_ms(from);
  for (int i = 0; i < count; ++i) {
    const auto next = cron.next_after(t);
    if (!next) {
      out.emplace_back("none");
      break;
    }
    out.push_back(format_iso8601(*next, zone));
    t = *next;
  }
  return out;
}

// 2026-03-08 in New York: 02:00 EST is followed by 03:00 EDT.
TEST(DstPolicy, ATimeInAGapIsSkippedByDefaultAndFiresAtTheGapsEndWithFireAfter) {
  EXPECT_EQ(fires("0 30 2 * * ?", kNewYorkZone, kQuartz, "2026-03-07T12:00:00-05:00", 2),
            (DstTimes{"2026-03-09T02:30:00-04:00", "2026-03-10T02:30:00-04:00"}));
  EXPECT_EQ(fires("0 30 2 * * ?", kNewYorkZone, kAfterGap, "2026-03-07T12:00:00-05:00", 3),
            (DstTimes{"2026-03-08T03:00:00-04:00", "2026-03-09T02:30:00-04:00", "2026-03-10T02:30:00-04:00"}));
  // The first wall time of the gap is in it too.
  EXPECT_EQ(fires("0 0 2 * * ?", kNewYorkZone, kAfterGap, "2026-03-07T12:00:00-05:00", 2),
            (DstTimes{"2026-03-08T03:00:00-04:00", "2026-03-09T02:00:00-04:00"}));
  // BOTH is about repeated hours: a gap is skipped as by default.
  EXPECT_EQ(fires("0 30 2 * * ?", kNewYorkZone, kBoth, "2026-03-07T12:00:00-05:00", 1),
            (DstTimes{"2026-03-09T02:30:00-04:00"}));
}

TEST(DstPolicy, SeveralTimesInOneGapFireOnceAtItsEnd) {
  // 02:00, 02:20 and 02:40 do not exist; 03:00 is a fire time of its own anyway.
  const DstTimes expected{"2026-03-08T01:40:00-05:00", "2026-03-08T03:00:00-04:00", "2026-03-08T03:20:00-04:00"};
  EXPECT_EQ(fires("0 */20 * * * ?", kNewYorkZone, kAfterGap, "2026-03-08T01:30:00-05:00", 3), expected);
  EXPECT_EQ(fires("0 */20 * * * ?", kNewYorkZone, kQuartz, "2026-03-08T01:30:00-05:00", 3), expected);
  // Without a fire time of its own at 03:00 the gap's end is added once.
  EXPECT_EQ(fires("0 10,20 2,4 * * ?", kNewYorkZone, kAfterGap, "2026-03-08T00:00:00-05:00", 3),
            (DstTimes{"2026-03-08T03:00:00-04:00", "2026-03-08T04:10:00-04:00", "2026-03-08T04:20:00-04:00"}));
}

// 2026-11-01 in New York: 02:00 EDT is followed by 01:00 EST, so 01:00-01:59:59 happen twice.
TEST(DstPolicy, ARepeatedTimeFiresOnceAtTheSecondByDefaultAndTwiceWithBoth) {
  EXPECT_EQ(fires("0 30 1 * * ?", kNewYorkZone, kQuartz, "2026-10-31T12:00:00-04:00", 2),
            (DstTimes{"2026-11-01T01:30:00-05:00", "2026-11-02T01:30:00-05:00"}));
  EXPECT_EQ(fires("0 30 1 * * ?", kNewYorkZone, kBoth, "2026-10-31T12:00:00-04:00", 3),
            (DstTimes{"2026-11-01T01:30:00-04:00", "2026-11-01T01:30:00-05:00", "2026-11-02T01:30:00-05:00"}));
  EXPECT_EQ(fires("0 30 1 * * ?", kNewYorkZone, kAfterGap, "2026-10-31T12:00:00-04:00", 1),
            (DstTimes{"2026-11-01T01:30:00-05:00"}));
}

TEST(DstPolicy, BothFiresEveryOccurrenceInOrderEvenFromInsideTheFirst) {
  EXPECT_EQ(fires("0 */20 * * * ?", kNewYorkZone, kQuartz, "2026-11-01T00:50:00-04:00", 4),
            (DstTimes{"2026-11-01T01:00:00-05:00", "2026-11-01T01:20:00-05:00", "2026-11-01T01:40:00-05:00",
                   "2026-11-01T02:00:00-05:00"}));
  EXPECT_EQ(fires("0 */20 * * * ?", kNewYorkZone, kBoth, "2026-11-01T00:50:00-04:00", 7),
            (DstTimes{"2026-11-01T01:00:00-04:00", "2026-11-01T01:20:00-04:00", "2026-11-01T01:40:00-04:00",
                   "2026-11-01T01:00:00-05:00", "2026-11-01T01:20:00-05:00", "2026-11-01T01:40:00-05:00",
                   "2026-11-01T02:00:00-05:00"}));
  // A job started (or a misfire recomputed) during the first pass through the hour.
  EXPECT_EQ(fires("0 */20 * * * ?", kNewYorkZone, kBoth, "2026-11-01T01:10:00-04:00", 4),
            (DstTimes{"2026-11-01T01:20:00-04:00", "2026-11-01T01:40:00-04:00", "2026-11-01T01:00:00-05:00",
                   "2026-11-01T01:20:00-05:00"}));
}

TEST(DstPolicy, AnEverySecondExpressionFiresEverySecondOfTheNightWithBoth) {
  const auto count = [](DstPolicy policy) {
    const auto cron = CronExpression::parse("* * * * * ?", kNewYorkZone).with_dst_policy(policy);
    const std::int64_t from = epoch_ms("2026-11-01T00:00:00-04:00");
    const std::int64_t until = epoch_ms("2026-11-01T03:00:00-05:00");
    int n = 0;
    std::int64_t previous = from;
    for (auto t = cron.next_after(from); t && *t <= until; t = cron.next_after(*t)) {
      EXPECT_GT(*t, previous);
      previous = *t;
      ++n;
    }
    return n;
  };
  EXPECT_EQ(count(kBoth), 4 * 3600);       // four hours of real time
  EXPECT_EQ(count(kQuartz), 3 * 3600);     // the first 01:xx is not fired
}

TEST(DstPolicy, HalfHourChangesWork) {
  // Lord Howe Island: 2026-10-04 02:00 +10:30 becomes 02:30 +11:00; 2026-04-05 02:00 +11:00 becomes 01:30 +10:30.
  EXPECT_EQ(fires("0 15 2 * * ?", kLordHoweZone, kAfterGap, "2026-10-03T12:00:00+10:30", 2),
            (DstTimes{"2026-10-04T02:30:00+11:00", "2026-10-05T02:15:00+11:00"}));
  EXPECT_EQ(fires("0 45 1 * * ?", kLordHoweZone, kBoth, "2026-04-04T12:00:00+11:00", 3),
            (DstTimes{"2026-04-05T01:45:00+11:00", "2026-04-05T01:45:00+10:30", "2026-04-06T01:45:00+10:30"}));
}

TEST(DstPolicy, AnExpressionWhoseYearsEndedCanStillHaveItsGapFire) {
  EXPECT_EQ(fires("0 30 2 8 3 ? 2026", kNewYorkZone, kQuartz, "2026-01-01T00:00:00-05:00", 1), (DstTimes{"none"}));
  EXPECT_EQ(fires("0 30 2 8 3 ? 2026", kNewYorkZone, kAfterGap, "2026-01-01T00:00:00-05:00", 2),
            (DstTimes{"2026-03-08T03:00:00-04:00", "none"}));
  EXPECT_EQ(fires("0 0 0 30 2 ?", kNewYorkZone, kAll, "2026-01-01T00:00:00-05:00", 1), (DstTimes{"none"}));
}

TEST(DstPolicy, AZoneWithoutChangesGivesQuartzsTimes) {
  for (const char* expression : {"0 30 2 * * ?", "0 */20 * * * ?", "0 0 0 L * ?"}) {
    EXPECT_EQ(fires(expression, "UTC", kAll, "2026-03-01T00:00:00Z", 20),
              fires(expression, "UTC", kQuartz, "2026-03-01T00:00:00Z", 20))
        << expression;
  }
}

// Whatever the expression, a policy only adds instants, each on a day the clocks change, and
// the times stay strictly increasing.
TEST(DstPolicy, APolicyOnlyAddsInstantsOnTheDaysTheClocksChange) {
  const std::int64_t from = epoch_ms("2026-01-01T00:00:00-05:00");
  const std::int64_t until = epoch_ms("2027-01-01T00:00:00-05:00");
  for (const char* expression : {"0 0 * * * ?", "0 30 1,2 * * ?", "0 */7 1-3 * * ?", "30 59 1 ? * SUN",
                                 "0 0 2 ? * 1#2", "0 15,45 0-4 1 NOV ?", "0 0 0/3 * * ?"}) {
    const auto base = CronExpression::parse(expression, kNewYorkZone);
    const auto with = base.with_dst_policy(kAll);
    std::set<std::int64_t> quartz;
    for (auto t = base.next_after(from); t && *t < until; t = base.next_after(*t)) quartz.insert(*t);
    std::set<std::int64_t> policy;
    for (auto t = with.next_after(from); t && *t < until; t = with.next_after(*t)) policy.insert(*t);
    for (const auto t : quartz) EXPECT_TRUE(policy.count(t)) << expression << " lost " << format_iso8601(t, kNewYorkZone);
    for (const auto t : policy) {
      if (quartz.count(t)) continue;
      const std::string local = format_iso8601(t, kNewYorkZone);
      EXPECT_TRUE(local.rfind("2026-03-08T", 0) == 0 || local.rfind("2026-11-01T", 0) == 0)
          << expression << " added " << local;
    }
  }
}

TEST(DstPolicy, NotesNameTheDayTheWallTimesAndWhatThePolicyDoes) {
  const auto gap = CronExpression::parse("0 30 2 * * ?", kNewYorkZone);
  const std::int64_t march = epoch_ms("2026-03-01T00:00:00-05:00");
  const std::int64_t april = epoch_ms("2026-04-01T00:00:00-04:00");
  auto notes = gap.dst_notes(march, april, 10);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].at_ms, epoch_ms("2026-03-08T03:00:00-04:00"));
  EXPECT_EQ(notes[0].text,
            "2026-03-08: the clocks in America/New_York go forward from 02:00 to 03:00, so 02:30 does not "
            "happen: no fire for it that day");
  notes = gap.with_dst_policy(kAfterGap).dst_notes(march, april, 10);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].text,
            "2026-03-08: the clocks in America/New_York go forward from 02:00 to 03:00, so 02:30 does not "
            "happen: it fires at 03:00, the first instant after the gap");

  const auto hourly = CronExpression::parse("0 */20 * * * ?", kNewYorkZone);
  const std::int64_t october = epoch_ms("2026-10-01T00:00:00-04:00");
  const std::int64_t december = epoch_ms("2026-12-01T00:00:00-05:00");
  notes = hourly.dst_notes(october, december, 10);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].text,
            "2026-11-01: the clocks in America/New_York go back from 02:00 to 01:00, so 01:00, 01:20 and "
            "01:40 happen twice: each fires once, at the second (-05:00)");
  notes = hourly.with_dst_policy(kBoth).dst_notes(october, december, 10);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].text,
            "2026-11-01: the clocks in America/New_York go back from 02:00 to 01:00, so 01:00, 01:20 and "
            "01:40 happen twice: each fires at both (-04:00 and -05:00)");

  notes = CronExpression::parse("* * * * * ?", kNewYorkZone).dst_notes(october, december, 10);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].text.find("so 01:00, 01:00:01, 01:00:02 and 3,597 more happen twice"), std::string::npos)
      << notes[0].text;
}

TEST(DstPolicy, NotesOnlyForChangesOverTheExpressionsTimesWithinTheRange) {
  const std::int64_t year = epoch_ms("2026-01-01T00:00:00-05:00");
  const std::int64_t next_year = epoch_ms("2027-01-01T00:00:00-05:00");
  EXPECT_TRUE(CronExpression::parse("0 0 12 * * ?", kNewYorkZone).dst_notes(year, next_year, 10).empty());
  EXPECT_TRUE(CronExpression::parse("0 30 2 * * ?", "UTC").dst_notes(year, next_year, 10).empty());
  EXPECT_EQ(CronExpression::parse("0 30 1,2 * * ?", kNewYorkZone).dst_notes(year, next_year, 10).size(), 2u);
  EXPECT_EQ(CronExpression::parse("0 30 1,2 * * ?", kNewYorkZone).dst_notes(year, next_year, 1).size(), 1u);
  // The range ends before November's change.
  EXPECT_EQ(CronExpression::parse("0 30 1,2 * * ?", kNewYorkZone)
                .dst_notes(year, epoch_ms("2026-10-31T00:00:00-04:00"), 10)
                .size(),
            1u);
}

TEST(DstPolicy, NamesRoundTripAndAnythingElseIsRefused) {
  for (const auto gap : {DstGap::kSkip, DstGap::kFireAfter}) EXPECT_EQ(parse_dst_gap(dst_gap_name(gap)), gap);
  for (const auto repeat : {DstRepeat::kOnce, DstRepeat::kBoth}) {
    EXPECT_EQ(parse_dst_repeat(dst_repeat_name(repeat)), repeat);
  }
  EXPECT_EQ(parse_dst_gap("skip"), std::nullopt);
  EXPECT_EQ(parse_dst_gap(""), std::nullopt);
  EXPECT_EQ(parse_dst_repeat("TWICE"), std::nullopt);
}

}  // namespace
}  // namespace cronwheel::common
