// The time zone layer under the evaluation: the transition table and Java's rule for
// resolving local wall times.
#include <gtest/gtest.h>

#include "common/cron/cron_error.h"
#include "common/cron/posix_tz_rule.h"
#include "common/cron/zone_rules.h"
#include "tests/unit/common/cron/cron_test_support.h"

namespace cronwheel::common::cron_detail {
namespace {

using cronwheel::testing::epoch_ms;

constexpr std::int64_t kHour = 3'600'000;

// The wall time of a local "YYYY-MM-DDTHH:MM:SS" as milliseconds (the instant it would be in
// UTC), which is what offset_for_wall() takes.
std::int64_t wall(std::string_view local) { return epoch_ms(std::string(local) + "Z"); }

TEST(ZoneRules, GapWallTimeTakesTheOffsetBeforeTheGap) {
  const auto ny = ZoneRules::find("America/New_York");
  std::size_t hint = 0;
  // 2024-03-10 02:30 does not exist; Java reads it as 02:30 EST (= 03:30 EDT).
  EXPECT_EQ(ny->offset_for_wall(wall("2024-03-10T02:30:00"), hint), -5 * kHour);
  EXPECT_EQ(ny->offset_for_wall(wall("2024-03-10T01:59:59"), hint), -5 * kHour);
  EXPECT_EQ(ny->offset_for_wall(wall("2024-03-10T03:00:00"), hint), -4 * kHour);
}

TEST(ZoneRules, RepeatedWallTimeTakesTheOffsetAfterTheTransition) {
  const auto ny = ZoneRules::find("America/New_York");
  std::size_t hint = 0;
  // 2024-11-03 01:30 happens twice; Java reads it as 01:30 EST, the second time.
  EXPECT_EQ(ny->offset_for_wall(wall("2024-11-03T01:30:00"), hint), -5 * kHour);
  EXPECT_EQ(ny->offset_for_wall(wall("2024-11-03T01:00:00"), hint), -5 * kHour);
  EXPECT_EQ(ny->offset_for_wall(wall("2024-11-03T00:59:59"), hint), -4 * kHour);
}

TEST(ZoneRules, ReportsWhetherAnInstantRoundTripsThroughItsWallTime) {
  const auto ny = ZoneRules::find("America/New_York");
  std::size_t hint = 0;
  bool round_trips = false;
  // 01:30 EDT, the first pass through the repeated hour, does not.
  EXPECT_EQ(ny->offset_at(epoch_ms("2024-11-03T01:30:00-04:00"), hint, round_trips), -4 * kHour);
  EXPECT_FALSE(round_trips);
  EXPECT_EQ(ny->offset_at(epoch_ms("2024-11-03T01:30:00-05:00"), hint, round_trips), -5 * kHour);
  EXPECT_TRUE(round_trips);
  EXPECT_EQ(ny->offset_at(epoch_ms("2024-07-01T12:00:00-04:00"), hint, round_trips), -4 * kHour);
  EXPECT_TRUE(round_trips);
}

TEST(ZoneRules, HintsDoNotChangeAnswers) {
  const auto sydney = ZoneRules::find("Australia/Sydney");
  const std::int64_t from = epoch_ms("2020-01-01T00:00:00Z");
  for (std::int64_t t = from; t < from + 20 * 365 * 24 * kHour; t += 7 * kHour + 123) {
    std::size_t fresh = 0;
    std::size_t far = 100000;
    std::size_t hint = 0;
    const std::int64_t expected = sydney->offset_at(t, fresh);
    EXPECT_EQ(sydney->offset_at(t, far), expected);
    EXPECT_EQ(sydney->offset_at(t, hint), expected);
  }
}

TEST(ZoneRules, ContinuesDaylightSavingPast2037) {
  const auto ny = ZoneRules::find("America/New_York");
  std::size_t hint = 0;
  EXPECT_EQ(ny->offset_at(epoch_ms("2045-07-01T12:00:00Z"), hint), -4 * kHour);
  EXPECT_EQ(ny->offset_at(epoch_ms("2045-12-01T12:00:00Z"), hint), -5 * kHour);
  // Second Sunday of March 2045 is the 12th, at 02:00 EST.
  EXPECT_EQ(ny->offset_at(epoch_ms("2045-03-12T06:59:59Z"), hint), -5 * kHour);
  EXPECT_EQ(ny->offset_at(epoch_ms("2045-03-12T07:00:00Z"), hint), -4 * kHour);
  const auto lord_howe = ZoneRules::find("Australia/Lord_Howe");
  EXPECT_EQ(lord_howe->offset_at(epoch_ms("2050-01-01T00:00:00Z"), hint), 11 * kHour);
  EXPECT_EQ(lord_howe->offset_at(epoch_ms("2050-07-01T00:00:00Z"), hint), 10 * kHour + kHour / 2);
}

TEST(ZoneRules, NextChangeIsTheFirstChangeOfOffsetStrictlyAfter) {
  const auto ny = ZoneRules::find("America/New_York");
  std::size_t hint = 0;
  auto change = ny->next_change(epoch_ms("2026-01-01T00:00:00Z"), hint);
  ASSERT_TRUE(change);
  EXPECT_EQ(change->utc_ms, epoch_ms("2026-03-08T07:00:00Z"));
  EXPECT_EQ(change->before_ms, -5 * kHour);
  EXPECT_EQ(change->after_ms, -4 * kHour);
  // Strictly after: from the change itself, the next one is November's.
  change = ny->next_change(change->utc_ms, hint);
  ASSERT_TRUE(change);
  EXPECT_EQ(change->utc_ms, epoch_ms("2026-11-01T06:00:00Z"));
  EXPECT_EQ(change->before_ms, -4 * kHour);
  EXPECT_EQ(change->after_ms, -5 * kHour);
  // Past the table's end, and in a zone that never changes, there is none.
  EXPECT_FALSE(ny->next_change(epoch_ms("2200-01-01T00:00:00Z"), hint));
  EXPECT_FALSE(ZoneRules::find("UTC")->next_change(0, hint));
}

TEST(ZoneRules, FixedZonesHaveOneEntry) {
  EXPECT_TRUE(ZoneRules::find("UTC")->fixed());
  EXPECT_TRUE(ZoneRules::find("Etc/GMT-14")->fixed());
  EXPECT_FALSE(ZoneRules::find("Asia/Kolkata")->fixed());  // +05:53 until 1941
}

TEST(ZoneRules, SameNameGivesTheSharedTable) {
  EXPECT_EQ(ZoneRules::find("Europe/Berlin"), ZoneRules::find("Europe/Berlin"));
}

TEST(ZoneRules, UnknownNameThrowsTimezoneError) {
  try {
    ZoneRules::find("Not/AZone");
    FAIL();
  } catch (const CronError& e) {
    EXPECT_EQ(e.field(), "timezone");
  }
}

TEST(PosixTzRule, ParsesTheFormsTzdataUses) {
  for (const char* text : {"EST5EDT,M3.2.0,M11.1.0", "<+1030>-10:30<+11>-11,M10.1.0,M4.1.0",
                           "<+1245>-12:45<+1345>,M9.5.0/2:45,M4.1.0/3:45", "GMT0BST,M3.5.0/1,M10.5.0",
                           "<-03>3", "IST-5:30", "UTC0", "<-02>2<-01>,M3.5.0/-1,M10.5.0/0",
                           "EST5EDT,0/0,J365/25", "IST-1GMT0,M10.5.0,M3.5.0/1"}) {
    EXPECT_TRUE(PosixTzRule::parse(text).has_value()) << text;
  }
  for (const char* text : {"", "EST", "EST5EDT", "5", "EST5EDT,M3.2.0", "EST5EDT,M13.1.0,M1.1.0",
                           "EST5EDT,M3.6.0,M11.1.0", "<+1030-10:30", "EST5EDT,M3.2.0,M11.1.0x"}) {
    EXPECT_FALSE(PosixTzRule::parse(text).has_value()) << text;
  }
}

TEST(PosixTzRule, ComputesTransitionInstants) {
  const auto rule = PosixTzRule::parse("EST5EDT,M3.2.0,M11.1.0");
  ASSERT_TRUE(rule);
  EXPECT_EQ(rule->standard_offset(), -5 * 3600);
  const auto t = rule->transitions(epoch_ms("2040-01-01T00:00:00Z") / 1000,
                                   epoch_ms("2041-01-01T00:00:00Z") / 1000);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].first * 1000, epoch_ms("2040-03-11T02:00:00-05:00"));
  EXPECT_EQ(t[0].second, -4 * 3600);
  EXPECT_EQ(t[1].first * 1000, epoch_ms("2040-11-04T02:00:00-04:00"));
  EXPECT_EQ(t[1].second, -5 * 3600);
}

TEST(PosixTzRule, LastWeekdayAndSouthernHemisphere) {
  // Chatham: last Sunday of September 02:45 standard, first Sunday of April 03:45 daylight.
  const auto rule = PosixTzRule::parse("<+1245>-12:45<+1345>,M9.5.0/2:45,M4.1.0/3:45");
  ASSERT_TRUE(rule);
  const auto t = rule->transitions(epoch_ms("2040-01-01T00:00:00Z") / 1000,
                                   epoch_ms("2041-01-01T00:00:00Z") / 1000);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].first * 1000, epoch_ms("2040-04-01T03:45:00+13:45"));
  EXPECT_EQ(t[1].first * 1000, epoch_ms("2040-09-30T02:45:00+12:45"));
}

}  // namespace
}  // namespace cronwheel::common::cron_detail
