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

// ---- with a calendar ----

constexpr std::int64_t kDay = 24LL * 3600 * 1000;

// A daily 09:00 UTC job and a calendar that closes for the Spring Festival, 2024-02-10 to 02-12.
Schedule daily_nine_with_festival(common::CalendarMode mode = common::CalendarMode::kSkip) {
  common::CalendarSpec spec;
  for (int day = 10; day <= 12; ++day) spec.excluded_dates.push_back({2024, 2, day, "Spring Festival"});
  spec.business_days = std::array<bool, 7>{true, true, true, true, true, false, false};
  spec.included_dates.push_back({2024, 2, 18, "make-up day"});  // a Sunday
  return Schedule::parse(ScheduleType::kCron, "0 0 9 * * ?", "UTC")
      .with_calendar({"cn-holidays", common::BusinessCalendar::make(spec), mode});
}

constexpr std::int64_t kFeb9Utc = 1'707'436'800'000;  // 2024-02-09T00:00:00Z, a Friday

TEST(ScheduleCalendar, NextAfterPassesOverTheDaysTheCalendarExcludes) {
  const auto schedule = daily_nine_with_festival();
  EXPECT_EQ(schedule.next_after(kFeb9Utc), kFeb9Utc + 9 * 3600 * 1000);
  EXPECT_EQ(schedule.next_after(kFeb9Utc + kDay / 2), kFeb9Utc + 4 * kDay + 9 * 3600 * 1000);  // the 13th
  EXPECT_EQ(schedule.excluded(kFeb9Utc + kDay + 9 * 3600 * 1000),
            "excluded by calendar cn-holidays: 2024-02-10 Spring Festival");
  EXPECT_EQ(schedule.excluded(kFeb9Utc + 9 * 3600 * 1000), std::nullopt);
  EXPECT_EQ(Schedule::parse(ScheduleType::kCron, "0 0 9 * * ?", "UTC").excluded(kFeb9Utc + kDay), std::nullopt);
}

TEST(ScheduleCalendar, APreviewListsEachSkippedTimeWithItsReason) {
  const auto preview = daily_nine_with_festival().preview(kFeb9Utc, 2, 10);
  const std::int64_t nine = 9 * 3600 * 1000;
  EXPECT_EQ(preview.times, (std::vector<std::int64_t>{kFeb9Utc + nine, kFeb9Utc + 4 * kDay + nine}));
  ASSERT_EQ(preview.skipped.size(), 3u);
  EXPECT_EQ(preview.skipped[0].at_ms, kFeb9Utc + kDay + nine);
  EXPECT_EQ(preview.skipped[0].reason, "excluded by calendar cn-holidays: 2024-02-10 Spring Festival");
  EXPECT_EQ(preview.skipped[2].reason, "excluded by calendar cn-holidays: 2024-02-12 Spring Festival");
  EXPECT_EQ(preview.end, "");
  // The list stops at max_skipped; the times do not.
  const auto short_list = daily_nine_with_festival().preview(kFeb9Utc, 2, 1);
  EXPECT_EQ(short_list.times, preview.times);
  EXPECT_EQ(short_list.skipped.size(), 1u);
}

TEST(ScheduleCalendar, OnlyModeFiresOnBusinessDaysAndMakeUpDays) {
  const std::int64_t nine = 9 * 3600 * 1000;
  const auto times = daily_nine_with_festival(common::CalendarMode::kOnly).preview(kFeb9Utc, 5, 0).times;
  // Fri 9th; 10th-12th the festival (13th a Tuesday), then Tue 13 ... Fri 16, Sun 18 the make-up day.
  EXPECT_EQ(times, (std::vector<std::int64_t>{kFeb9Utc + nine, kFeb9Utc + 4 * kDay + nine, kFeb9Utc + 5 * kDay + nine,
                                              kFeb9Utc + 6 * kDay + nine, kFeb9Utc + 7 * kDay + nine}));
  const auto later = daily_nine_with_festival(common::CalendarMode::kOnly).next_after(kFeb9Utc + 7 * kDay + nine);
  EXPECT_EQ(later, kFeb9Utc + 9 * kDay + nine);  // Sunday the 18th, the make-up day
}

TEST(ScheduleCalendar, ACalendarThatLetsNothingThroughEndsThePreviewSayingSo) {
  common::CalendarSpec spec;
  spec.excluded_dates.push_back({0, 1, 1, "New Year"});
  const auto schedule = Schedule::parse(ScheduleType::kCron, "0 0 0 1 1 ?", "UTC")
                            .with_calendar({"no-new-year", common::BusinessCalendar::make(spec), common::CalendarMode::kSkip});
  const auto preview = schedule.preview(kJan15Utc, 3, 5);
  EXPECT_TRUE(preview.times.empty());
  EXPECT_EQ(preview.skipped.size(), 5u);
  EXPECT_EQ(preview.end, "calendar no-new-year lets no fire through within ten years");
  EXPECT_EQ(schedule.next_after(kJan15Utc), std::nullopt);
  // A schedule that ends by itself says that instead.
  const auto ended = Schedule::parse(ScheduleType::kCron, "0 0 0 1 1 ? 2023", "UTC")
                         .with_calendar({"no-new-year", common::BusinessCalendar::make(spec), common::CalendarMode::kSkip});
  EXPECT_EQ(ended.preview(kJan15Utc, 3, 5).end, "the schedule has no further fire time");
}

TEST(ScheduleCalendar, AFixedRateGoesByTheCalendarToo) {
  common::CalendarSpec spec;
  spec.excluded_times.push_back({0, 6 * 3600 - 1});  // not before 06:00
  const auto schedule = Schedule::parse(ScheduleType::kFixRate, "3600", "UTC")
                            .with_calendar({"daytime", common::BusinessCalendar::make(spec), common::CalendarMode::kSkip});
  // From 23:30 the rate gives 00:30, 01:30, ... 05:30 (all excluded), then 06:30.
  EXPECT_EQ(schedule.next_after(kJan15Utc - 30 * 60 * 1000), kJan15Utc + 6 * 3600 * 1000 + 30 * 60 * 1000);
}

}  // namespace
}  // namespace cronwheel::admin
