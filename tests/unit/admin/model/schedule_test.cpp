#include <gtest/gtest.h>

#include <string>

#include "admin/model/schedule.h"

namespace cronwheel::admin {
namespace {

constexpr std::int64_t kJan15Utc = 1'705'276'800'000;  // 2024-01-15T00:00:00Z

std::string error_of(ScheduleType type, const std::string& conf, const std::string& zone,
                     std::string* field = nullptr) {
  try {
    validate_schedule(type, conf, zone);
  } catch (const ScheduleError& e) {
    if (field != nullptr) *field = e.field();
    return e.what();
  }
  return "";
}

TEST(Schedule, CronFiresAtWallTimeInItsZone) {
  // 09:00 in New York in January is 14:00Z (EST, UTC-5).
  EXPECT_EQ(next_fire_time(ScheduleType::kCron, "0 0 9 * * ?", "America/New_York", kJan15Utc), 1'705'327'200'000);
  // 09:00 in Berlin in June is 07:00Z (CEST, UTC+2).
  EXPECT_EQ(next_fire_time(ScheduleType::kCron, "0 0 9 * * ?", "Europe/Berlin", 1'717'200'000'000), 1'717'225'200'000);
}

TEST(Schedule, CronSkipsNonexistentLocalTimeOnSpringForward) {
  // 2024-03-10 02:30 does not exist in New York; after 03:00 EST on the 9th the next 02:30 is
  // on the 11th (EDT).
  EXPECT_EQ(next_fire_time(ScheduleType::kCron, "0 30 2 * * ?", "America/New_York", 1'709'971'200'000), 1'710'138'600'000);
}

TEST(Schedule, CronFiresOnceAtTheSecondOccurrenceOnFallBack) {
  // 2024-11-03 01:30 happens twice in New York; Quartz fires at the second (EST).
  auto s = Schedule::parse(ScheduleType::kCron, "0 30 1 * * ?", "America/New_York");
  auto times = s.next_times(1'730'606'400'000, 2);  // from 00:00 EDT on the 3rd
  ASSERT_EQ(times.size(), 2u);
  EXPECT_EQ(times[0], 1'730'615'400'000);
  EXPECT_EQ(times[1] - times[0], 24LL * 3600 * 1000);  // 01:30 EST the next day, not 01:30 EDT again
}

TEST(Schedule, FixedRateAddsItsSecondsToTheGivenInstant) {
  EXPECT_EQ(next_fire_time(ScheduleType::kFixRate, "30", "UTC", 1'000), 31'000);
  auto s = Schedule::parse(ScheduleType::kFixRate, "60", "Asia/Tokyo");
  EXPECT_EQ(s.fixed_seconds(), 60);
  EXPECT_EQ(s.next_times(0, 3), (std::vector<std::int64_t>{60'000, 120'000, 180'000}));
}

TEST(Schedule, FixedDelayCountsFromTheInstantGiven) {
  // The scheduler passes the end of the previous run; the API passes now.
  EXPECT_EQ(next_fire_time(ScheduleType::kFixDelay, "5", "UTC", 12'345), 17'345);
  EXPECT_EQ(Schedule::parse(ScheduleType::kFixDelay, "5", "UTC").type(), common::protocol::ScheduleType::kFixDelay);
}

TEST(Schedule, NoneNeverFires) {
  EXPECT_EQ(next_fire_time(ScheduleType::kNone, "", "UTC", kJan15Utc), std::nullopt);
  EXPECT_TRUE(Schedule::parse(ScheduleType::kNone, "", "UTC").next_times(kJan15Utc, 5).empty());
}

TEST(Schedule, CronWhoseYearsHavePassedHasNoNextTime) {
  EXPECT_EQ(next_fire_time(ScheduleType::kCron, "0 0 0 1 1 ? 2020", "UTC", kJan15Utc), std::nullopt);
  EXPECT_TRUE(Schedule::parse(ScheduleType::kCron, "0 0 0 1 1 ? 2020", "UTC").next_times(kJan15Utc, 5).empty());
}

TEST(Schedule, NextTimesAreConsecutive) {
  auto times = Schedule::parse(ScheduleType::kCron, "0 */15 * * * ?", "UTC").next_times(kJan15Utc, 4);
  EXPECT_EQ(times, (std::vector<std::int64_t>{kJan15Utc + 900'000, kJan15Utc + 1'800'000, kJan15Utc + 2'700'000,
                                              kJan15Utc + 3'600'000}));
}

TEST(ScheduleValidation, CronErrorsNameScheduleConfAndTheCronField) {
  std::string field;
  EXPECT_EQ(error_of(ScheduleType::kCron, "0 60 * * * ?", "UTC", &field), "scheduleConf: minutes: 60 is out of range 0-59");
  EXPECT_EQ(field, "scheduleConf");
  EXPECT_EQ(error_of(ScheduleType::kCron, "  ", "UTC", &field), "scheduleConf: a cron expression is required for scheduleType CRON");
  EXPECT_EQ(field, "scheduleConf");
  EXPECT_NE(error_of(ScheduleType::kCron, "0 0 * * *", "UTC").find("scheduleConf: "), std::string::npos);
}

TEST(ScheduleValidation, UnknownZoneNamesTimezone) {
  std::string field;
  EXPECT_EQ(error_of(ScheduleType::kCron, "0 0 9 * * ?", "Mars/Base", &field), "timezone: unknown time zone 'Mars/Base'");
  EXPECT_EQ(field, "timezone");
  // Every type keeps a valid zone: it applies as soon as the schedule becomes CRON.
  EXPECT_EQ(error_of(ScheduleType::kFixRate, "10", "Mars/Base", &field), "timezone: unknown time zone 'Mars/Base'");
  EXPECT_EQ(error_of(ScheduleType::kNone, "", "", &field), "timezone: unknown time zone ''");
}

TEST(ScheduleValidation, FixedScheduleNeedsWholePositiveSecondsUpToTenYears) {
  const std::string expected_prefix = "scheduleConf: FIX_RATE needs a whole number of seconds from 1 to 315360000, got ";
  for (const std::string bad : {"0", "-5", "+5", "05", "1.5", "abc", "", "315360001", "99999999999999999999"}) {
    std::string field;
    EXPECT_EQ(error_of(ScheduleType::kFixRate, bad, "UTC", &field), expected_prefix + "'" + bad + "'") << bad;
    EXPECT_EQ(field, "scheduleConf");
  }
  EXPECT_EQ(error_of(ScheduleType::kFixRate, "315360000", "UTC"), "");
  EXPECT_EQ(error_of(ScheduleType::kFixDelay, "1", "UTC"), "");
  EXPECT_EQ(error_of(ScheduleType::kFixDelay, "0", "UTC"),
            "scheduleConf: FIX_DELAY needs a whole number of seconds from 1 to 315360000, got '0'");
}

TEST(ScheduleValidation, NoneTakesNoConfiguration) {
  std::string field;
  EXPECT_EQ(error_of(ScheduleType::kNone, "0 0 9 * * ?", "UTC", &field), "scheduleConf: must be empty for scheduleType NONE, got '0 0 9 * * ?'");
  EXPECT_EQ(field, "scheduleConf");
}

TEST(ScheduleValidation, OverlongConfigurationIsRefused) {
  EXPECT_EQ(error_of(ScheduleType::kCron, std::string(256, '*'), "UTC"), "scheduleConf: at most 255 characters");
}

}  // namespace
}  // namespace cronwheel::admin
