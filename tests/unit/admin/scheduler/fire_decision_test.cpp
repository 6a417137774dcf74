// The schedule thread's decision step: the three branches of docs/scheduling.md "Deciding
// fires", misfire strategies, several fires per window, stopping, time zones, FIX_RATE and
// FIX_DELAY; and the misfire rule for pending fires that are already late (judge_late_fires).
// Pure functions, fixed times: no clock, no threads.

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "admin/model/fire.h"
#include "admin/scheduler/fire_decision.h"

namespace cronwheel::admin {
namespace {

constexpr std::int64_t kMinute = 1'699'999'980'000;  // 2023-11-14T22:13:00Z, on a minute boundary
constexpr std::int64_t kSecond = 1000;

DueJob job(std::int64_t id, ScheduleType type, std::string conf, std::int64_t next,
           MisfireStrategy misfire = MisfireStrategy::kDoNothing, std::string zone = "UTC") {
  DueJob j;
  j.id = id;
  j.schedule_type = type;
  j.schedule_conf = std::move(conf);
  j.timezone = std::move(zone);
  j.misfire_strategy = misfire;
  j.trigger_last_time = 42;
  j.trigger_next_time = next;
  return j;
}

DueJob every_minute(std::int64_t next, MisfireStrategy misfire = MisfireStrategy::kDoNothing) {
  return job(1, ScheduleType::kCron, "0 * * * * ?", next, std::move(misfire));
}

DueJob every_second(std::int64_t next, MisfireStrategy misfire = MisfireStrategy::kDoNothing) {
  return job(1, ScheduleType::kCron, "* * * * * ?", next, std::move(misfire));
}

std::vector<std::int64_t> times_of(const ScanDecision& d) {
  std::vector<std::int64_t> out;
  for (const auto& f : d.fires) out.push_back(f.scheduled_time);
  return out;
}

TEST(FireDecision, DueJobFiresOnceAndItsNextTimeComesFromTheFireTime) {
  auto d = decide_fires({every_minute(kMinute)}, kMinute + 2 * kSecond);
  ASSERT_EQ(d.fires.size(), 1u);
  EXPECT_EQ(d.fires[0], (DecidedFire{1, kMinute, TriggerType::kSchedule}));
  ASSERT_EQ(d.jobs.size(), 1u);
  EXPECT_EQ(d.jobs[0], (JobAdvance{1, kMinute, kMinute, kMinute + 60 * kSecond, 1, ""}));
}

TEST(FireDecision, JobDueWithinTheWindowFiresAtItsOwnTime) {
  auto d = decide_fires({every_minute(kMinute)}, kMinute - 3 * kSecond);
  EXPECT_EQ(d.fires, (std::vector<DecidedFire>{{1, kMinute, TriggerType::kSchedule}}));
  EXPECT_EQ(d.jobs[0].next_time, kMinute + 60 * kSecond);
}

TEST(FireDecision, JobNotDueWithinTheWindowIsNotTouched) {
  // The pre-read never returns it, but the rule holds anyway: the window is inclusive.
  auto d = decide_fires({every_minute(kMinute)}, kMinute - 5 * kSecond);
  EXPECT_EQ(d.fires.size(), 1u);
}

TEST(FireDecision, JobFiringEverySecondGetsEverySecondOfTheWindowInOneScan) {
  auto d = decide_fires({every_second(kMinute)}, kMinute);
  EXPECT_EQ(times_of(d), (std::vector<std::int64_t>{kMinute, kMinute + 1000, kMinute + 2000, kMinute + 3000,
                                                    kMinute + 4000, kMinute + 5000}));
  for (const auto& f : d.fires) EXPECT_EQ(f.trigger_type, TriggerType::kSchedule);
  EXPECT_EQ(d.jobs[0].last_time, kMinute + 5000);
  EXPECT_EQ(d.jobs[0].next_time, kMinute + 6000);
}

TEST(FireDecision, FireLateByExactlyTheWindowIsStillDueNotMissed) {
  auto d = decide_fires({every_minute(kMinute, MisfireStrategy::kDoNothing)}, kMinute + 5 * kSecond);
  EXPECT_EQ(d.fires, (std::vector<DecidedFire>{{1, kMinute, TriggerType::kSchedule}}));
}

TEST(FireDecision, MissedFireWithDoNothingFiresNothingAndTheNextTimeComesFromNow) {
  auto d = decide_fires({every_minute(kMinute, MisfireStrategy::kDoNothing)}, kMinute + 10 * kSecond);
  EXPECT_TRUE(d.fires.empty());
  EXPECT_EQ(d.jobs[0], (JobAdvance{1, kMinute, 42, kMinute + 60 * kSecond, 1, ""}));
}

TEST(FireDecision, MissedFireWithFireOnceNowFiresItOnceAsAMisfire) {
  auto d = decide_fires({every_minute(kMinute, MisfireStrategy::kFireOnceNow)}, kMinute + 10 * kSecond);
  EXPECT_EQ(d.fires, (std::vector<DecidedFire>{{1, kMinute, TriggerType::kMisfire}}));
  EXPECT_EQ(d.jobs[0].last_time, kMinute);
  EXPECT_EQ(d.jobs[0].next_time, kMinute + 60 * kSecond);
}

TEST(FireDecision, EverySecondJobMissedForAMinuteCatchesUpOnceThenFiresTheWindow) {
  const std::int64_t now = kMinute + 60 * kSecond;
  auto once = decide_fires({every_second(kMinute, MisfireStrategy::kFireOnceNow)}, now);
  EXPECT_EQ(once.fires.front(), (DecidedFire{1, kMinute, TriggerType::kMisfire}));
  EXPECT_EQ(times_of(once), (std::vector<std::int64_t>{kMinute, now + 1000, now + 2000, now + 3000, now + 4000,
                                                       now + 5000}));
  auto nothing = decide_fires({every_second(kMinute, MisfireStrategy::kDoNothing)}, now);
  EXPECT_EQ(times_of(nothing), (std::vector<std::int64_t>{now + 1000, now + 2000, now + 3000, now + 4000, now + 5000}));
  EXPECT_EQ(nothing.jobs[0].next_time, now + 6000);
}

TEST(FireDecision, ScheduleWithNoFurtherTimeFiresItsLastTimeAndStopsTheJob) {
  const std::int64_t new_year_2023 = 1'672'531'200'000;
  auto d = decide_fires({job(7, ScheduleType::kCron, "0 0 0 1 1 ? 2023", new_year_2023)}, new_year_2023 + kSecond);
  EXPECT_EQ(d.fires, (std::vector<DecidedFire>{{7, new_year_2023, TriggerType::kSchedule}}));
  ASSERT_EQ(d.jobs.size(), 1u);
  EXPECT_EQ(d.jobs[0].trigger_status, 0);
  EXPECT_EQ(d.jobs[0].next_time, 0);
  EXPECT_EQ(d.jobs[0].last_time, new_year_2023);
  EXPECT_NE(d.jobs[0].stop_reason.find("no further fire time"), std::string::npos) << d.jobs[0].stop_reason;
}

TEST(FireDecision, UnreadableScheduleStopsTheJobWithoutFiringAndSaysWhy) {
  auto d = decide_fires({job(3, ScheduleType::kCron, "61 * * * * ?", kMinute)}, kMinute);
  EXPECT_TRUE(d.fires.empty());
  ASSERT_EQ(d.jobs.size(), 1u);
  EXPECT_EQ(d.jobs[0].trigger_status, 0);
  EXPECT_EQ(d.jobs[0].read_next_time, kMinute);
  EXPECT_NE(d.jobs[0].stop_reason.find("scheduleConf"), std::string::npos) << d.jobs[0].stop_reason;
}

TEST(FireDecision, NextTimeFollowsTheJobsTimeZoneAcrossTheSpringForward) {
  // 09:00 in New York: 14:00Z on Saturday 2024-03-09 (EST), 13:00Z on Sunday (EDT), 23 hours on.
  const std::int64_t saturday_nine = 1'709'992'800'000;
  const std::int64_t sunday_nine = 1'710'075'600'000;
  auto d = decide_fires({job(1, ScheduleType::kCron, "0 0 9 * * ?", saturday_nine, MisfireStrategy::kDoNothing, "America/New_York")},
                        saturday_nine);
  EXPECT_EQ(times_of(d), (std::vector<std::int64_t>{saturday_nine}));
  EXPECT_EQ(d.jobs[0].next_time, sunday_nine);
  auto utc = decide_fires({job(1, ScheduleType::kCron, "0 0 9 * * ?", saturday_nine - 5 * 3'600'000, MisfireStrategy::kDoNothing, "UTC")},
                          saturday_nine - 5 * 3'600'000);
  EXPECT_EQ(utc.jobs[0].next_time, saturday_nine - 5 * 3'600'000 + 24 * 3'600'000);
}

TEST(FireDecision, AJobsDstPolicyDecidesItsFiresOnTheNightsTheClocksChange) {
  // 02:30 in New York: on 2024-03-10 the clocks go from 02:00 EST to 03:00 EDT (07:00Z).
  const std::int64_t saturday = 1'709'969'400'000;    // 2024-03-09T02:30-05:00
  const std::int64_t after_gap = 1'710'054'000'000;   // 2024-03-10T03:00-04:00
  const std::int64_t monday = 1'710'138'600'000;      // 2024-03-11T02:30-04:00
  auto quartz = job(1, ScheduleType::kCron, "0 30 2 * * ?", saturday, MisfireStrategy::kDoNothing, "America/New_York");
  auto fire_after = quartz;
  fire_after.id = 2;
  fire_after.dst.gap = common::DstGap::kFireAfter;
  auto d = decide_fires({quartz, fire_after}, saturday);
  EXPECT_EQ(times_of(d), (std::vector<std::int64_t>{saturday, saturday}));
  EXPECT_EQ(d.jobs[0].next_time, monday);
  EXPECT_EQ(d.jobs[1].next_time, after_gap);
  fire_after.trigger_next_time = after_gap;
  d = decide_fires({fire_after}, after_gap - 2 * kSecond);
  EXPECT_EQ(times_of(d), (std::vector<std::int64_t>{after_gap}));
  EXPECT_EQ(d.jobs[0].next_time, monday);

  // 01:30 on 2024-11-03 happens at 05:30Z (EDT) and 06:30Z (EST): BOTH fires at each.
  auto both = job(3, ScheduleType::kCron, "0 30 1 * * ?", 1'730'611'800'000, MisfireStrategy::kDoNothing,
                  "America/New_York");
  both.dst.repeat = common::DstRepeat::kBoth;
  d = decide_fires({both}, 1'730'611'800'000);
  EXPECT_EQ(times_of(d), (std::vector<std::int64_t>{1'730'611'800'000}));
  EXPECT_EQ(d.jobs[0].next_time, 1'730'615'400'000);
}

TEST(FireDecision, FixRateFiresEveryIntervalFromItsOwnTimeNotFromNow) {
  auto d = decide_fires({job(1, ScheduleType::kFixRate, "2", kMinute + 500)}, kMinute);
  EXPECT_EQ(times_of(d), (std::vector<std::int64_t>{kMinute + 500, kMinute + 2500, kMinute + 4500}));
  EXPECT_EQ(d.jobs[0].next_time, kMinute + 6500);
  EXPECT_EQ(d.jobs[0].trigger_status, 1);
}

TEST(FireDecision, FixDelayFiresOnceThenAwaitsTheRunsCompletion) {
  auto d = decide_fires({job(1, ScheduleType::kFixDelay, "1", kMinute)}, kMinute);
  EXPECT_EQ(d.fires, (std::vector<DecidedFire>{{1, kMinute, TriggerType::kSchedule}}));
  EXPECT_EQ(d.jobs[0].next_time, kAwaitingCompletion);
  EXPECT_EQ(d.jobs[0].trigger_status, 1);
}

TEST(FireDecision, MissedFixDelayWithDoNothingRestartsItsDelayFromNow) {
  const std::int64_t now = kMinute + 60 * kSecond;
  auto d = decide_fires({job(1, ScheduleType::kFixDelay, "10", kMinute)}, now);
  EXPECT_TRUE(d.fires.empty());
  EXPECT_EQ(d.jobs[0].next_time, now + 10 * kSecond);
  auto soon = decide_fires({job(1, ScheduleType::kFixDelay, "3", kMinute)}, now);
  EXPECT_EQ(soon.fires, (std::vector<DecidedFire>{{1, now + 3 * kSecond, TriggerType::kSchedule}}));
  EXPECT_EQ(soon.jobs[0].next_time, kAwaitingCompletion);
}

TEST(FireDecision, MissedFixDelayWithFireOnceNowFiresOnceThenAwaits) {
  auto d = decide_fires({job(1, ScheduleType::kFixDelay, "1", kMinute, MisfireStrategy::kFireOnceNow)}, kMinute + 60 * kSecond);
  EXPECT_EQ(d.fires, (std::vector<DecidedFire>{{1, kMinute, TriggerType::kMisfire}}));
  EXPECT_EQ(d.jobs[0].next_time, kAwaitingCompletion);
}

TEST(FireDecision, NeverComputedNextTimeStartsFromNowWithoutFiring) {
  auto d = decide_fires({every_minute(0, MisfireStrategy::kFireOnceNow)}, kMinute + 30 * kSecond);
  EXPECT_TRUE(d.fires.empty());
  EXPECT_EQ(d.jobs[0].next_time, kMinute + 60 * kSecond);
}

TEST(FireDecision, EveryJobReadGetsOneAdvanceInTheOrderRead) {
  auto a = every_minute(kMinute);
  auto b = job(2, ScheduleType::kFixRate, "60", kMinute + kSecond);
  auto c = job(3, ScheduleType::kCron, "0 0 0 1 1 ? 2023", 1'672'531'200'000);
  auto d = decide_fires({a, b, c}, kMinute + 2 * kSecond);
  ASSERT_EQ(d.jobs.size(), 3u);
  EXPECT_EQ(d.jobs[0].job_id, 1);
  EXPECT_EQ(d.jobs[1].job_id, 2);
  EXPECT_EQ(d.jobs[2].job_id, 3);
  EXPECT_EQ(d.fires, (std::vector<DecidedFire>{{1, kMinute, TriggerType::kSchedule}, {2, kMinute + kSecond, TriggerType::kSchedule}}));
  EXPECT_EQ(d.jobs[2].trigger_status, 0);  // missed long ago with DO_NOTHING, and no time after now
}

// ---- the record of fires a misfire strategy skipped ----

const std::string kThreshold = "missed by more than the misfire threshold of 5000 ms";

TEST(FireDecision, FiresMissedWithDoNothingLeaveOneRecordWithTheirCountAndRange) {
  const std::int64_t now = kMinute + 60 * kSecond;  // 2023-11-14T22:14:00Z
  auto d = decide_fires({every_second(kMinute, MisfireStrategy::kDoNothing)}, now);
  ASSERT_EQ(d.skipped.size(), 1u);
  const MisfireSkip& skip = d.skipped[0];
  EXPECT_EQ(skip.job_id, 1);
  EXPECT_EQ(skip.first_time, kMinute);  // the job's next time: no fire is decided there
  EXPECT_EQ(skip.last_time, now);       // every second up to the scan
  EXPECT_EQ(skip.count, 61);
  EXPECT_FALSE(skip.at_least);
  EXPECT_EQ(skip.message, "misfire: 61 fires skipped, scheduled from 2023-11-14T22:13:00+00:00 to "
                          "2023-11-14T22:14:00+00:00: " + kThreshold + " (the scan ran at 2023-11-14T22:14:00+00:00); "
                          "the job's misfire strategy DO_NOTHING skips the fires it missed");
  // The fires of the window after now are decided as before.
  EXPECT_EQ(times_of(d), (std::vector<std::int64_t>{now + 1000, now + 2000, now + 3000, now + 4000, now + 5000}));
}

TEST(FireDecision, FiresMissedWithFireOnceNowAreRecordedAsCoalescedIntoTheOneFireSent) {
  const std::int64_t now = kMinute + 60 * kSecond;
  auto d = decide_fires({every_second(kMinute, MisfireStrategy::kFireOnceNow)}, now);
  EXPECT_EQ(d.fires.front(), (DecidedFire{1, kMinute, TriggerType::kMisfire}));  // as it was
  ASSERT_EQ(d.skipped.size(), 1u);
  const MisfireSkip& skip = d.skipped[0];
  EXPECT_EQ(skip.first_time, kMinute + kSecond);  // after the fire sent, so apart from it
  EXPECT_EQ(skip.last_time, now);
  EXPECT_EQ(skip.count, 60);
  EXPECT_EQ(skip.message, "misfire: 60 fires coalesced into the fire scheduled at 2023-11-14T22:13:00+00:00, "
                          "scheduled from 2023-11-14T22:13:01+00:00 to 2023-11-14T22:14:00+00:00: " + kThreshold +
                          " (the scan ran at 2023-11-14T22:14:00+00:00); the job's misfire strategy FIRE_ONCE_NOW "
                          "sends one fire for all it missed");
  // Nothing the scan decides is at the record's time (the scheduled-fire index holds both).
  for (const auto& f : d.fires) EXPECT_NE(f.scheduled_time, skip.first_time);
}

TEST(FireDecision, OneMissedFireIsRecordedAsOneAndAFireOnceNowWithNothingCoalescedRecordsNothing) {
  const std::int64_t now = kMinute + 10 * kSecond;
  auto nothing = decide_fires({every_minute(kMinute, MisfireStrategy::kDoNothing)}, now);
  ASSERT_EQ(nothing.skipped.size(), 1u);
  EXPECT_EQ(nothing.skipped[0].count, 1);
  EXPECT_EQ(nothing.skipped[0].first_time, kMinute);
  EXPECT_EQ(nothing.skipped[0].last_time, kMinute);
  EXPECT_EQ(nothing.skipped[0].message.rfind("misfire: 1 fire skipped, scheduled at 2023-11-14T22:13:00+00:00: ", 0),
            0u)
      << nothing.skipped[0].message;
  // The one fire missed is sent: nothing was skipped.
  auto once = decide_fires({every_minute(kMinute, MisfireStrategy::kFireOnceNow)}, now);
  EXPECT_EQ(once.fires.size(), 1u);
  EXPECT_TRUE(once.skipped.empty());
}

TEST(FireDecision, FiresOnTimeOrWithinTheWindowOrNeverComputedRecordNothing) {
  for (auto misfire : {MisfireStrategy::kDoNothing, MisfireStrategy::kFireOnceNow}) {
    EXPECT_TRUE(decide_fires({every_second(kMinute, misfire)}, kMinute).skipped.empty());
    EXPECT_TRUE(decide_fires({every_second(kMinute, misfire)}, kMinute + 5 * kSecond).skipped.empty());
    EXPECT_TRUE(decide_fires({every_second(0, misfire)}, kMinute + 30 * kSecond).skipped.empty());
  }
}

TEST(FireDecision, CountingACronJobMissedForAWeekStopsAtTheCapAndSaysAtLeast) {
  const std::int64_t week = 7 * 24 * 3'600 * kSecond;
  auto d = decide_fires({every_second(kMinute, MisfireStrategy::kDoNothing)}, kMinute + week);
  ASSERT_EQ(d.skipped.size(), 1u);
  EXPECT_EQ(d.skipped[0].count, kMaxSkippedCounted);
  EXPECT_TRUE(d.skipped[0].at_least);
  EXPECT_EQ(d.skipped[0].last_time, kMinute + (kMaxSkippedCounted - 1) * kSecond);
  EXPECT_EQ(d.skipped[0].message.rfind("misfire: at least 10000 fires skipped, scheduled from "
                                       "2023-11-14T22:13:00+00:00 to 2023-11-15T00:59:39+00:00 (counting stops at "
                                       "10000; every later one up to the scan was skipped too): ", 0),
            0u)
      << d.skipped[0].message;
  EXPECT_EQ(d.jobs[0].next_time, kMinute + week + 6 * kSecond);  // the job goes on from now (after the window)
}

TEST(FireDecision, AFixedRateIsCountedExactlyHoweverLong) {
  const std::int64_t week = 7 * 24 * 3'600 * kSecond;
  auto d = decide_fires({job(1, ScheduleType::kFixRate, "2", kMinute + 500)}, kMinute + week);
  ASSERT_EQ(d.skipped.size(), 1u);
  EXPECT_EQ(d.skipped[0].count, week / (2 * kSecond));  // 500 ms past the last even second: one fewer
  EXPECT_FALSE(d.skipped[0].at_least);
  EXPECT_EQ(d.skipped[0].last_time, kMinute + 500 + (week / (2 * kSecond) - 1) * 2 * kSecond);
}

TEST(FireDecision, AFixDelayJobMissedOnlyTheFireItWasWaitingFor) {
  // Its later times would follow runs that never happened: DO_NOTHING records the one fire,
  // FIRE_ONCE_NOW sends it and coalesces nothing.
  const std::int64_t now = kMinute + 60 * kSecond;
  auto nothing = decide_fires({job(1, ScheduleType::kFixDelay, "10", kMinute)}, now);
  ASSERT_EQ(nothing.skipped.size(), 1u);
  EXPECT_EQ(nothing.skipped[0].count, 1);
  EXPECT_EQ(nothing.skipped[0].first_time, kMinute);
  EXPECT_EQ(nothing.jobs[0].next_time, now + 10 * kSecond);  // not stuck: the scan gives its next time
  auto once = decide_fires({job(1, ScheduleType::kFixDelay, "10", kMinute, MisfireStrategy::kFireOnceNow)}, now);
  EXPECT_TRUE(once.skipped.empty());
}

TEST(FireDecision, EachMissedJobGetsItsOwnRecordInTheOrderRead) {
  const std::int64_t now = kMinute + 20 * kSecond;
  auto a = job(1, ScheduleType::kCron, "*/5 * * * * ?", kMinute);
  auto b = job(2, ScheduleType::kCron, "0 * * * * ?", now);  // on time
  auto c = job(3, ScheduleType::kFixRate, "10", kMinute, MisfireStrategy::kFireOnceNow);
  auto d = decide_fires({a, b, c}, now);
  ASSERT_EQ(d.skipped.size(), 2u);
  EXPECT_EQ(d.skipped[0].job_id, 1);
  EXPECT_EQ(d.skipped[0].count, 5);  // :00 :05 :10 :15 :20
  EXPECT_EQ(d.skipped[1].job_id, 3);
  EXPECT_EQ(d.skipped[1].first_time, kMinute + 10 * kSecond);
  EXPECT_EQ(d.skipped[1].count, 2);  // :10 and :20, coalesced into :00
}

// ---- calendars ----

// 2023-11-14, the day of kMinute, in UTC.
ScanCalendars calendars_with(common::CalendarSpec spec, int version = 1, std::string name = "holidays") {
  ScanCalendars out;
  out[5] = ScanCalendar{version, std::move(name), common::BusinessCalendar::make(std::move(spec)), ""};
  return out;
}

common::CalendarSpec excluding_the_14th() {
  common::CalendarSpec spec;
  spec.excluded_dates.push_back({2023, 11, 14, "Closing Day"});
  return spec;
}

DueJob with_calendar(DueJob j, int version = 1, common::CalendarMode mode = common::CalendarMode::kSkip) {
  j.calendar_id = 5;
  j.calendar_version = version;
  j.calendar_mode = mode;
  return j;
}

constexpr std::int64_t kMidnightOfThe15th = 1'700'006'400'000;  // 2023-11-15T00:00:00Z

TEST(FireDecisionCalendar, ANextTimeOnAnExcludedDayFiresNothingAndMovesToTheFirstTimeTheCalendarLetsThrough) {
  auto d = decide_fires({with_calendar(every_minute(kMinute))}, kMinute + 2 * kSecond, kPreReadWindowMs,
                        calendars_with(excluding_the_14th()));
  EXPECT_TRUE(d.fires.empty());
  EXPECT_TRUE(d.skipped.empty()) << "a fire a calendar excludes leaves no record";
  ASSERT_EQ(d.jobs.size(), 1u);
  EXPECT_EQ(d.jobs[0], (JobAdvance{1, kMinute, 42, kMidnightOfThe15th, 1, ""}));
}

TEST(FireDecisionCalendar, AnExcludedTimeRangeInsideTheWindowIsPassedOverAndTheRestOfTheWindowFires) {
  common::CalendarSpec spec;
  const int at = 22 * 3600 + 13 * 60;  // kMinute's time of day
  spec.excluded_times.push_back({at + 2, at + 3});
  auto d = decide_fires({with_calendar(every_second(kMinute))}, kMinute, kPreReadWindowMs, calendars_with(spec));
  EXPECT_EQ(times_of(d), (std::vector<std::int64_t>{kMinute, kMinute + 1000, kMinute + 4000, kMinute + 5000}));
  EXPECT_EQ(d.jobs[0].next_time, kMinute + 6000);
}

TEST(FireDecisionCalendar, TheTimesAMisfireCountsAreOnlyThoseTheCalendarLetsThrough) {
  common::CalendarSpec spec;
  const int at = 22 * 3600 + 13 * 60;
  spec.excluded_times.push_back({at + 60, at + 3 * 60});  // 22:14 through 22:16, three fire times
  // Missed from 22:13 to 22:23: ten minutes, of which the calendar lets 22:13 and 22:17-22:23 through.
  const std::int64_t now = kMinute + 10 * 60 * kSecond + 30 * kSecond;
  auto d = decide_fires({with_calendar(every_minute(kMinute))}, now, kPreReadWindowMs, calendars_with(spec));
  EXPECT_TRUE(d.fires.empty());
  ASSERT_EQ(d.skipped.size(), 1u);
  EXPECT_EQ(d.skipped[0].first_time, kMinute);
  EXPECT_EQ(d.skipped[0].count, 8);  // 22:13, then 22:17 ... 22:23
  EXPECT_EQ(d.skipped[0].last_time, kMinute + 10 * 60 * kSecond);
  EXPECT_EQ(d.jobs[0].next_time, kMinute + 11 * 60 * kSecond);
}

TEST(FireDecisionCalendar, OnlyModeFiresOnBusinessDaysAndSkipModeIgnoresTheWeeklyRule) {
  common::CalendarSpec spec;
  spec.business_days = std::array<bool, 7>{false, false, false, true, true, true, true};  // Thursday to Sunday
  // 2023-11-14 is a Tuesday.
  auto only = decide_fires({with_calendar(every_minute(kMinute), 1, common::CalendarMode::kOnly)}, kMinute,
                           kPreReadWindowMs, calendars_with(spec));
  EXPECT_TRUE(only.fires.empty());
  EXPECT_EQ(only.jobs[0].next_time, kMidnightOfThe15th + 24 * 3600 * kSecond);  // Thursday the 16th
  auto skip = decide_fires({with_calendar(every_minute(kMinute), 1, common::CalendarMode::kSkip)}, kMinute,
                           kPreReadWindowMs, calendars_with(spec));
  EXPECT_EQ(times_of(skip), (std::vector<std::int64_t>{kMinute}));
}

TEST(FireDecisionCalendar, AJobWhoseCalendarIsNotGivenAtTheVersionReadIsLeftAsItWasAndTheCalendarIsWanted) {
  const DueJob stale = with_calendar(every_minute(kMinute), 2);
  for (const auto& given : {ScanCalendars{}, calendars_with(excluding_the_14th(), 1)}) {
    auto d = decide_fires({stale, every_minute(kMinute)}, kMinute, kPreReadWindowMs, given);
    ASSERT_EQ(d.jobs.size(), 2u);
    EXPECT_EQ(d.jobs[0], (JobAdvance{1, kMinute, 42, kMinute, 1, ""}));
    EXPECT_EQ(d.calendars_wanted, (std::vector<std::int64_t>{5}));
    // The job without a calendar is decided as ever.
    EXPECT_EQ(times_of(d), (std::vector<std::int64_t>{kMinute}));
  }
}

TEST(FireDecisionCalendar, ACalendarThatCannotBeUsedStopsItsJobsSayingWhy) {
  ScanCalendars broken;
  broken[5] = ScanCalendar{1, "broken", std::nullopt, "timeZone: unknown time zone 'Mars/Base'"};
  auto d = decide_fires({with_calendar(every_minute(kMinute))}, kMinute, kPreReadWindowMs, broken);
  EXPECT_TRUE(d.fires.empty());
  EXPECT_EQ(d.jobs[0].trigger_status, 0);
  EXPECT_NE(d.jobs[0].stop_reason.find("calendar broken cannot be used: timeZone"), std::string::npos)
      << d.jobs[0].stop_reason;
}

TEST(FireDecisionCalendar, ACalendarThatLetsNoFireThroughStopsTheJobSayingSo) {
  common::CalendarSpec spec;
  spec.excluded_dates.push_back({0, 1, 1, "New Year"});
  const std::int64_t new_year_2024 = 1'704'067'200'000;
  auto d = decide_fires({with_calendar(job(1, ScheduleType::kCron, "0 0 0 1 1 ?", new_year_2024))},
                        new_year_2024 - kSecond, kPreReadWindowMs, calendars_with(spec, 1, "no-new-year"));
  EXPECT_TRUE(d.fires.empty());
  EXPECT_EQ(d.jobs[0].trigger_status, 0);
  EXPECT_NE(d.jobs[0].stop_reason.find("calendar no-new-year lets no fire through"), std::string::npos)
      << d.jobs[0].stop_reason;
}

// ---- judge_late_fires ----

constexpr std::int64_t kNow = kMinute + 95 * kSecond;

PendingFireRow pending(std::int64_t log_id, std::int64_t job_id, std::int64_t scheduled,
                       MisfireStrategy misfire = MisfireStrategy::kDoNothing,
                       TriggerType type = TriggerType::kSchedule) {
  return {{log_id, job_id, scheduled}, type, misfire};
}

std::vector<std::int64_t> ids_of(const std::vector<PendingFire>& fires) {
  std::vector<std::int64_t> ids;
  for (const auto& f : fires) ids.push_back(f.log_id);
  return ids;
}
std::vector<std::int64_t> ids_of(const std::vector<SkippedFire>& fires) {
  std::vector<std::int64_t> ids;
  for (const auto& f : fires) ids.push_back(f.log_id);
  return ids;
}

TEST(LateFires, FireLateByMoreThanTheWindowOfADoNothingJobIsCancelledSayingHowLateAndWhy) {
  auto verdict = judge_late_fires({pending(7, 1, kNow - 5'001)}, kNow);
  EXPECT_TRUE(verdict.send.empty());
  ASSERT_EQ(verdict.cancel.size(), 1u);
  EXPECT_EQ(verdict.cancel[0].log_id, 7);
  EXPECT_EQ(verdict.cancel[0].message,
            "misfire: this fire was 5001 ms late, more than the misfire threshold of 5000 ms; the job's misfire "
            "strategy DO_NOTHING skips a late fire");
  EXPECT_EQ(verdict.skipped, 1u);
  EXPECT_EQ(verdict.coalesced, 0u);
}

TEST(LateFires, FireLateByExactlyTheWindowGoesOut) {
  auto verdict = judge_late_fires({pending(7, 1, kNow - 5'000), pending(8, 1, kNow + 3'000)}, kNow);
  EXPECT_EQ(ids_of(verdict.send), (std::vector<std::int64_t>{7, 8}));
  EXPECT_TRUE(verdict.cancel.empty());
}

TEST(LateFires, TheThresholdIsTheWindowGiven) {
  auto verdict = judge_late_fires({pending(7, 1, kNow - 1'001), pending(8, 1, kNow - 1'000)}, kNow, 1'000);
  EXPECT_EQ(ids_of(verdict.cancel), std::vector<std::int64_t>{7});
  EXPECT_EQ(ids_of(verdict.send), std::vector<std::int64_t>{8});
  EXPECT_NE(verdict.cancel[0].message.find("threshold of 1000 ms"), std::string::npos) << verdict.cancel[0].message;
}

TEST(LateFires, MisfireFiresFollowTheStrategyLikeScheduledOnes) {
  auto verdict = judge_late_fires({pending(7, 1, kMinute, MisfireStrategy::kDoNothing, TriggerType::kMisfire)}, kNow);
  EXPECT_EQ(ids_of(verdict.cancel), std::vector<std::int64_t>{7});
}

TEST(LateFires, FiresSomeoneAskedForGoOutHoweverLate) {
  std::vector<PendingFireRow> fires;
  std::int64_t id = 1;
  for (TriggerType type : {TriggerType::kManual, TriggerType::kApi, TriggerType::kRetry, TriggerType::kParent,
                           TriggerType::kWorkflow, TriggerType::kBackfill}) {
    fires.push_back(pending(id++, 1, kMinute, MisfireStrategy::kDoNothing, type));
    fires.push_back(pending(id++, 2, kMinute, MisfireStrategy::kFireOnceNow, type));
  }
  auto verdict = judge_late_fires(fires, kNow);
  EXPECT_EQ(ids_of(verdict.send), (std::vector<std::int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}));
  EXPECT_TRUE(verdict.cancel.empty());
}

TEST(LateFires, OnlyTheNewestLateFireOfAFireOnceNowJobGoesOutAndTheOlderAreCoalescedIntoIt) {
  auto verdict = judge_late_fires({pending(1, 5, kMinute, MisfireStrategy::kFireOnceNow),
                                   pending(2, 5, kMinute + 30 * kSecond, MisfireStrategy::kFireOnceNow,
                                           TriggerType::kMisfire),
                                   pending(3, 5, kMinute + 60 * kSecond, MisfireStrategy::kFireOnceNow),
                                   pending(4, 5, kNow, MisfireStrategy::kFireOnceNow)},  // on time
                                  kNow);
  EXPECT_EQ(ids_of(verdict.send), (std::vector<std::int64_t>{3, 4}));
  EXPECT_EQ(ids_of(verdict.cancel), (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(verdict.coalesced, 2u);
  EXPECT_EQ(verdict.skipped, 0u);
  EXPECT_EQ(verdict.cancel[0].message,
            "misfire: this fire was 95000 ms late, more than the misfire threshold of 5000 ms; the job's misfire "
            "strategy FIRE_ONCE_NOW sends only the newest of its late fires (run 3, scheduled 60000 ms after this "
            "one), so this one is coalesced into it");
}

TEST(LateFires, ASingleLateFireOfAFireOnceNowJobGoesOut) {
  auto verdict = judge_late_fires({pending(1, 5, kMinute, MisfireStrategy::kFireOnceNow)}, kNow);
  EXPECT_EQ(ids_of(verdict.send), std::vector<std::int64_t>{1});
  EXPECT_TRUE(verdict.cancel.empty());
}

TEST(LateFires, EveryShardOfTheNewestLateFireGoesOut) {
  // A broadcast's shards are rows of one fire at one time: coalescing keeps them all.
  auto verdict = judge_late_fires({pending(1, 5, kMinute, MisfireStrategy::kFireOnceNow),
                                   pending(2, 5, kMinute + kSecond, MisfireStrategy::kFireOnceNow),
                                   pending(3, 5, kMinute + kSecond, MisfireStrategy::kFireOnceNow)},
                                  kNow);
  EXPECT_EQ(ids_of(verdict.send), (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(ids_of(verdict.cancel), std::vector<std::int64_t>{1});
}

TEST(LateFires, EachJobIsJudgedByItsOwnStrategyAndItsOwnNewestFire) {
  auto verdict = judge_late_fires({pending(1, 5, kMinute, MisfireStrategy::kFireOnceNow),
                                   pending(2, 6, kMinute, MisfireStrategy::kDoNothing),
                                   pending(3, 7, kMinute + kSecond, MisfireStrategy::kFireOnceNow),
                                   pending(4, 5, kMinute + 2 * kSecond, MisfireStrategy::kFireOnceNow),
                                   pending(5, 6, kMinute + 3 * kSecond, MisfireStrategy::kDoNothing),
                                   pending(6, 7, kMinute, MisfireStrategy::kFireOnceNow)},
                                  kNow);
  EXPECT_EQ(ids_of(verdict.send), (std::vector<std::int64_t>{3, 4}));
  EXPECT_EQ(ids_of(verdict.cancel), (std::vector<std::int64_t>{1, 2, 5, 6}));
  EXPECT_EQ(verdict.skipped, 2u);
  EXPECT_EQ(verdict.coalesced, 2u);
}

TEST(LateFires, NothingSeenNothingDecided) { EXPECT_EQ(judge_late_fires({}, kNow), LateFiresVerdict{}); }

// ---- shed_fires ----

// `n` jobs firing every second, ids 1..n, due at kMinute; decided at kMinute - 4 s, so each has
// its one fire of the window's last second... at kMinute exactly, and no more.
std::vector<DueJob> every_second_jobs(int n, std::int64_t first_id = 1) {
  std::vector<DueJob> due;
  for (int i = 0; i < n; ++i) {
    auto j = every_second(kMinute);
    j.id = first_id + i;
    due.push_back(j);
  }
  return due;
}

constexpr std::int64_t kShedNow = kMinute - 5 * kSecond;  // each every-second job: one fire, at kMinute

std::set<std::int64_t> jobs_fired(const ScanDecision& d) {
  std::set<std::int64_t> out;
  for (const auto& f : d.fires) out.insert(f.job_id);
  return out;
}

TEST(ShedFires, KeepingEverythingShedsNothing) {
  const auto due = every_second_jobs(10);
  auto d = decide_fires(due, kShedNow);
  const auto before = d;
  EXPECT_EQ(shed_fires(d, due, 1.0, kShedNow, "why"), 0u);
  EXPECT_EQ(d, before);
}

TEST(ShedFires, KeepsTheShareGivenAndRecordsEachShedJobsFiresOnce) {
  const auto due = every_second_jobs(10);
  auto d = decide_fires(due, kShedNow);
  ASSERT_EQ(d.fires.size(), 10u);
  // Each job shed skips 6 times (its fire and the 5 seconds after the window): 4 jobs shed are
  // 24 times skipped against 6 fires kept, 80 %.
  EXPECT_EQ(shed_fires(d, due, 0.2, kShedNow, "node n1 hands its fires over late"), 24u);
  EXPECT_EQ(d.fires.size(), 6u);
  ASSERT_EQ(d.skipped.size(), 4u);
  const auto kept = jobs_fired(d);
  // A shed job skips its fire and the times up to a window after the scan's window with it, in
  // one record, and is next due after them.
  for (const auto& skip : d.skipped) {
    EXPECT_FALSE(kept.contains(skip.job_id)) << "job " << skip.job_id << " both fired and shed";
    EXPECT_EQ(skip.first_time, kMinute);
    EXPECT_EQ(skip.last_time, kMinute + 5 * kSecond);
    EXPECT_EQ(skip.count, 6);
    EXPECT_EQ(skip.message.rfind("shed: 6 fires skipped, scheduled from 2023-11-14T22:13:00+00:00 to "
                                 "2023-11-14T22:13:05+00:00: node n1 hands its fires over late; ",
                                 0),
              0u)
        << skip.message;
    EXPECT_NE(skip.message.find("DO_NOTHING"), std::string::npos) << skip.message;
  }
  // A kept job advances past its fire; a shed one past its skipped times, its last time as read.
  ASSERT_EQ(d.jobs.size(), 10u);
  for (const auto& advance : d.jobs) {
    const bool was_kept = kept.contains(advance.job_id);
    EXPECT_EQ(advance.next_time, was_kept ? kMinute + kSecond : kMinute + 6 * kSecond) << "job " << advance.job_id;
    EXPECT_EQ(advance.last_time, was_kept ? kMinute : 42) << "job " << advance.job_id;
    EXPECT_EQ(advance.trigger_status, 1);
  }
}

TEST(ShedFires, ASlowerJobSkipsOnlyTheTimesItHasUpToAWindowAfterTheWindow) {
  std::vector<DueJob> due{job(1, ScheduleType::kCron, "0/7 * * * * ?", kMinute), job(2, ScheduleType::kCron, "* * * * * ?", kMinute)};
  for (auto& j : due) j.priority = j.id == 1 ? -1 : 0;
  auto d = decide_fires(due, kMinute);  // job 1: its fire at :00, next at :07; job 2: :00 to :05
  EXPECT_EQ(shed_fires(d, due, 0.8, kMinute, "why"), 2u);  // job 1 first: 2 of 8 times skipped
  ASSERT_EQ(d.skipped.size(), 1u);
  EXPECT_EQ(d.skipped[0].job_id, 1);
  EXPECT_EQ(d.skipped[0].count, 2);  // :00 and :07, up to :10
  EXPECT_EQ(d.skipped[0].last_time, kMinute + 7 * kSecond);
  EXPECT_EQ(d.jobs[0].next_time, kMinute + 14 * kSecond);
  EXPECT_EQ(d.jobs[1].next_time, kMinute + 6 * kSecond);
}

TEST(ShedFires, AJobWithACalendarSkipsOnlyItsWindow) {
  std::vector<DueJob> due{with_calendar(every_second(kMinute))};
  auto d = decide_fires(due, kShedNow, kPreReadWindowMs, calendars_with({}));
  ASSERT_EQ(d.fires.size(), 1u);
  EXPECT_EQ(shed_fires(d, due, 0.0, kShedNow, "why"), 1u);
  ASSERT_EQ(d.skipped.size(), 1u);
  EXPECT_EQ(d.skipped[0].count, 1);
  EXPECT_EQ(d.jobs[0].next_time, kMinute + kSecond);
}

TEST(ShedFires, AJobIsShedWholeWithOneRecordOfItsFirstAndLastFire) {
  const auto due = every_second_jobs(2);
  auto d = decide_fires(due, kMinute);  // every second of the window: 6 fires a job
  ASSERT_EQ(d.fires.size(), 12u);
  EXPECT_EQ(shed_fires(d, due, 0.5, kMinute, "why"), 11u);
  ASSERT_EQ(d.skipped.size(), 1u);
  EXPECT_EQ(d.skipped[0].first_time, kMinute);
  EXPECT_EQ(d.skipped[0].last_time, kMinute + 10 * kSecond);
  EXPECT_EQ(d.skipped[0].count, 11);  // its window's 6 and the 5 after it
  EXPECT_NE(d.skipped[0].message.find("11 fires skipped, scheduled from"), std::string::npos) << d.skipped[0].message;
  EXPECT_EQ(jobs_fired(d).size(), 1u);
  EXPECT_FALSE(jobs_fired(d).contains(d.skipped[0].job_id));
}

TEST(ShedFires, LowerPrioritiesAreShedFirst) {
  auto due = every_second_jobs(10);
  for (auto& j : due) j.priority = j.id <= 3 ? 10 : (j.id <= 6 ? 0 : -5);  // 1-3 high, 4-6 normal, 7-10 low
  auto d = decide_fires(due, kShedNow);
  // 6 jobs shed (36 times) against 4 kept: the four low ones, then two of the normal ones; the
  // high ones keep theirs.
  EXPECT_EQ(shed_fires(d, due, 0.1, kShedNow, "why"), 36u);
  const auto kept = jobs_fired(d);
  for (std::int64_t id : {1, 2, 3}) EXPECT_TRUE(kept.contains(id)) << id;
  for (std::int64_t id : {7, 8, 9, 10}) EXPECT_FALSE(kept.contains(id)) << id;
  EXPECT_EQ(kept.size(), 4u);
}

TEST(ShedFires, JobsThatAskForMissedFiresOrHaveOneInFlightAreNeverShed) {
  std::vector<DueJob> due;
  due.push_back(job(1, ScheduleType::kCron, "* * * * * ?", kMinute, MisfireStrategy::kFireOnceNow));
  due.push_back(job(2, ScheduleType::kFixDelay, "10", kMinute));
  // Missed by more than the window: a misfire record already (one record per job and scan).
  due.push_back(job(3, ScheduleType::kCron, "* * * * * ?", kShedNow - 60 * kSecond));
  due.push_back(job(4, ScheduleType::kCron, "* * * * * ?", kMinute));
  auto d = decide_fires(due, kShedNow);
  ASSERT_EQ(d.skipped.size(), 1u);  // job 3's misfire
  const auto fires = d.fires.size();
  // Only job 4 may be shed, whatever the share: its fire and the 5 seconds after the window.
  EXPECT_EQ(shed_fires(d, due, 0.0, kShedNow, "why"), 6u);
  EXPECT_EQ(d.fires.size(), fires - 1);
  EXPECT_FALSE(jobs_fired(d).contains(4));
  for (std::int64_t id : {1, 2}) EXPECT_TRUE(jobs_fired(d).contains(id)) << id;
  ASSERT_EQ(d.skipped.size(), 2u);
  EXPECT_EQ(d.skipped[1].job_id, 4);
}

TEST(ShedFires, AFireOnceNowJobCatchingUpKeepsItsCatchUpAndItsWindow) {
  std::vector<DueJob> due{job(1, ScheduleType::kCron, "0 * * * * ?", kShedNow - 120 * kSecond,
                              MisfireStrategy::kFireOnceNow)};
  auto d = decide_fires(due, kShedNow);
  const auto fires = d.fires;
  ASSERT_FALSE(fires.empty());
  ASSERT_EQ(fires[0].trigger_type, TriggerType::kMisfire);
  EXPECT_EQ(shed_fires(d, due, 0.0, kShedNow, "why"), 0u);
  EXPECT_EQ(d.fires, fires);
}

TEST(ShedFires, EachSecondShedsADifferentSetSoNoJobIsShedEveryTime) {
  const auto due = every_second_jobs(100);
  std::map<std::int64_t, int> kept_times;
  for (int second = 0; second < 20; ++second) {
    const std::int64_t now = kShedNow + second * kSecond;
    auto moved = due;
    for (auto& j : moved) j.trigger_next_time = kMinute + second * kSecond;
    auto d = decide_fires(moved, now);
    ASSERT_EQ(d.fires.size(), 100u);
    EXPECT_EQ(shed_fires(d, moved, 0.1, now, "why"), 360u);  // 60 jobs of 6 times
    EXPECT_EQ(d.fires.size(), 40u);
    for (auto id : jobs_fired(d)) ++kept_times[id];
  }
  for (const auto& j : due) {
    EXPECT_GT(kept_times[j.id], 0) << "job " << j.id << " shed every second";
    EXPECT_LT(kept_times[j.id], 20) << "job " << j.id << " never shed";
  }
}

}  // namespace
}  // namespace cronwheel::admin
