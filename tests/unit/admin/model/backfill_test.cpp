// The backfill rules (admin/model/backfill.h) with fixed times: which instants a backfill of a job
// has, what one step writes, skips and leaves, and when it is done.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "admin/model/backfill.h"
#include "admin/model/run_end.h"
#include "common/cron/cron_expression.h"

namespace cronwheel::admin {
namespace {

constexpr std::int64_t kHour = 3'600'000;
constexpr std::int64_t kDay = 24 * kHour;
constexpr std::int64_t kMonday = 1'699'833'600'000;  // 2023-11-13T00:00:00Z, a Monday

Job cron_job(const std::string& cron, const std::string& zone = "UTC", common::DstPolicy dst = {}) {
  Job job;
  job.id = 7;
  job.job_group = 3;
  job.schedule_type = ScheduleType::kCron;
  job.schedule_conf = cron;
  job.timezone = zone;
  job.dst = dst;
  return job;
}

std::string iso(std::int64_t ms, const std::string& zone = "UTC") { return common::format_iso8601(ms, zone); }

std::vector<std::string> isos(const std::vector<std::int64_t>& instants, const std::string& zone = "UTC") {
  std::vector<std::string> out;
  for (auto t : instants) out.push_back(iso(t, zone));
  return out;
}

Backfill backfill_of(OnExisting on_existing, int max_concurrent) {
  Backfill b;
  b.id = 11;
  b.job_id = 7;
  b.from = kMonday;
  b.to = kMonday + kDay;
  b.on_existing = on_existing;
  b.max_concurrent = max_concurrent;
  return b;
}

TEST(BackfillInstants, AWeekOfAnHourlyJobIsItsHundredAndSixtyEightInstantsOldestFirst) {
  const auto schedule = backfill_schedule(cron_job("0 0 * * * ?"), std::nullopt);
  const auto week = backfill_instants(schedule, kMonday, kMonday + 7 * kDay, std::nullopt, kMaxBackfillInstants);
  ASSERT_EQ(week.instants.size(), 168u);
  EXPECT_TRUE(week.complete);
  EXPECT_EQ(week.instants.front(), kMonday) << "an instant at `from` is in the range";
  EXPECT_EQ(week.instants.back(), kMonday + 7 * kDay - kHour) << "`to` is not";
  for (std::size_t i = 1; i < week.instants.size(); ++i) EXPECT_EQ(week.instants[i] - week.instants[i - 1], kHour);
}

TEST(BackfillInstants, ComeInBoundedBatchesAfterACursorAndSayWhenTheRangeEnds) {
  const auto schedule = backfill_schedule(cron_job("0 0 * * * ?"), std::nullopt);
  const auto first = backfill_instants(schedule, kMonday, kMonday + 5 * kHour, std::nullopt, 3);
  EXPECT_EQ(first.instants, (std::vector<std::int64_t>{kMonday, kMonday + kHour, kMonday + 2 * kHour}));
  EXPECT_FALSE(first.complete);
  const auto rest = backfill_instants(schedule, kMonday, kMonday + 5 * kHour, first.instants.back(), 3);
  EXPECT_EQ(rest.instants, (std::vector<std::int64_t>{kMonday + 3 * kHour, kMonday + 4 * kHour}));
  EXPECT_TRUE(rest.complete);
  // Exactly as many as asked for, with nothing after: complete, without a wasted batch.
  const auto exact = backfill_instants(schedule, kMonday, kMonday + 3 * kHour, std::nullopt, 3);
  EXPECT_EQ(exact.instants.size(), 3u);
  EXPECT_TRUE(exact.complete);
  const auto none = backfill_instants(schedule, kMonday + 1, kMonday + kHour, std::nullopt, 3);
  EXPECT_TRUE(none.instants.empty());
  EXPECT_TRUE(none.complete);
}

TEST(BackfillInstants, AnEverySecondJobOverAWeekIsCountedOnlyUpToTheBound) {
  const auto schedule = backfill_schedule(cron_job("* * * * * ?"), std::nullopt);
  const auto started = std::chrono::steady_clock::now();
  const auto counted = backfill_instants(schedule, kMonday, kMonday + 7 * kDay, std::nullopt, kMaxBackfillInstants);
  EXPECT_EQ(counted.instants.size(), static_cast<std::size_t>(kMaxBackfillInstants));
  EXPECT_FALSE(counted.complete) << "604,800 instants: more than the bound, and said so";
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5)) << "10,001 steps, not 604,800";
}

TEST(BackfillInstants, AFixedRateTakesItsGridFromTheRangesStart) {
  Job job = cron_job("");
  job.schedule_type = ScheduleType::kFixRate;
  job.schedule_conf = "5400";  // 90 minutes
  const auto schedule = backfill_schedule(job, std::nullopt);
  const std::int64_t from = kMonday + 7 * 60'000;
  const auto got = backfill_instants(schedule, from, from + 5 * kHour, std::nullopt, 100);
  EXPECT_EQ(got.instants, (std::vector<std::int64_t>{from, from + 90 * 60'000, from + 180 * 60'000, from + 270 * 60'000}));
  const auto after = backfill_instants(schedule, from, from + 5 * kHour, got.instants[1], 100);
  EXPECT_EQ(after.instants, (std::vector<std::int64_t>{from + 180 * 60'000, from + 270 * 60'000}));
}

TEST(BackfillInstants, InstantsTheCalendarExcludesAreNotAmongThem) {
  Calendar calendar;
  calendar.id = 5;
  calendar.name = "holidays";
  CalendarDate holiday;
  holiday.day = {2023, 11, 14, "Test Holiday"};
  calendar.dates = {holiday};
  Job job = cron_job("0 0 9,17 * * ?");
  job.calendar = {5, common::CalendarMode::kSkip};
  const auto schedule = backfill_schedule(job, calendar);
  const auto got = backfill_instants(schedule, kMonday, kMonday + 3 * kDay, std::nullopt, 100);
  EXPECT_EQ(isos(got.instants), (std::vector<std::string>{"2023-11-13T09:00:00+00:00", "2023-11-13T17:00:00+00:00",
                                                          "2023-11-15T09:00:00+00:00", "2023-11-15T17:00:00+00:00"}));
  // ONLY business days: the weekend of a Monday-to-Friday calendar has none.
  calendar.business_days = std::array<bool, 7>{true, true, true, true, true, false, false};
  job.calendar.mode = common::CalendarMode::kOnly;
  const auto weekdays = backfill_instants(backfill_schedule(job, calendar), kMonday + 4 * kDay, kMonday + 7 * kDay,
                                          std::nullopt, 100);
  EXPECT_EQ(isos(weekdays.instants), (std::vector<std::string>{"2023-11-17T09:00:00+00:00", "2023-11-17T17:00:00+00:00"}));
}

TEST(BackfillInstants, FollowTheJobsDaylightSavingPolicy) {
  // 02:30 in Berlin: on 2024-03-31 the clocks jump from 02:00 to 03:00; on 2024-10-27 02:30
  // happens twice.
  const std::int64_t march30 = 1'711'756'800'000;  // 2024-03-30T00:00:00Z
  const std::int64_t october26 = 1'729'900'800'000;  // 2024-10-26T00:00:00Z
  const std::string berlin = "Europe/Berlin";
  auto instants = [&](common::DstPolicy dst, std::int64_t from) {
    return isos(backfill_instants(backfill_schedule(cron_job("0 30 2 * * ?", berlin, dst), std::nullopt), from,
                                  from + 3 * kDay, std::nullopt, 100)
                    .instants,
                berlin);
  };
  EXPECT_EQ(instants({}, march30), (std::vector<std::string>{"2024-03-30T02:30:00+01:00", "2024-04-01T02:30:00+02:00"}))
      << "Quartz's rule: the time the clocks skip does not fire that day";
  EXPECT_EQ(instants({common::DstGap::kFireAfter, common::DstRepeat::kOnce}, march30),
            (std::vector<std::string>{"2024-03-30T02:30:00+01:00", "2024-03-31T03:00:00+02:00",
                                      "2024-04-01T02:30:00+02:00"}));
  EXPECT_EQ(instants({}, october26), (std::vector<std::string>{"2024-10-26T02:30:00+02:00", "2024-10-27T02:30:00+01:00",
                                                               "2024-10-28T02:30:00+01:00"}))
      << "Quartz's rule: a repeated time fires at its second occurrence";
  EXPECT_EQ(instants({common::DstGap::kSkip, common::DstRepeat::kBoth}, october26),
            (std::vector<std::string>{"2024-10-26T02:30:00+02:00", "2024-10-27T02:30:00+02:00",
                                      "2024-10-27T02:30:00+01:00", "2024-10-28T02:30:00+01:00"}));
}

TEST(BackfillSchedule, IsRefusedForJobsWithoutInstantsOfTheirOwnNamingTheField) {
  Job none = cron_job("");
  none.schedule_type = ScheduleType::kNone;
  try {
    backfill_schedule(none, std::nullopt);
    FAIL() << "NONE has no instants";
  } catch (const BackfillRefused& e) {
    EXPECT_EQ(e.field(), "scheduleType");
    EXPECT_EQ(std::string(e.what()),
              "scheduleType: job 7 has schedule NONE: it never fires by itself, so it has no instants to backfill");
  }
  Job delay = cron_job("60");
  delay.schedule_type = ScheduleType::kFixDelay;
  EXPECT_THROW(backfill_schedule(delay, std::nullopt), BackfillRefused);
  Job with_calendar = cron_job("0 0 * * * ?");
  with_calendar.calendar = {5, common::CalendarMode::kSkip};
  try {
    backfill_schedule(with_calendar, std::nullopt);
    FAIL() << "a calendar named but not read";
  } catch (const BackfillRefused& e) {
    EXPECT_EQ(e.field(), "calendarId");
  }
}

TEST(BackfillSchedule, OfAWorkflowIsItsScheduleInItsZoneWithItsCalendarAndNoneIsRefused) {
  Workflow w;
  w.id = 9;
  w.schedule_type = ScheduleType::kCron;
  w.schedule_conf = "0 0 6 * * ?";
  w.timezone = "Asia/Shanghai";
  Calendar holidays;
  holidays.id = 4;
  holidays.name = "holidays";
  holidays.time_zone = "Asia/Shanghai";
  CalendarDate day;
  day.day = {2023, 11, 14, "a holiday"};
  holidays.dates = {day};
  w.calendar = {4, common::CalendarMode::kSkip};
  const auto schedule = backfill_schedule(w, holidays);
  // From Monday 08:00 in Shanghai to Thursday 08:00.
  const auto got = backfill_instants(schedule, kMonday, kMonday + 3 * kDay, std::nullopt, 10);
  EXPECT_EQ(isos(got.instants, "Asia/Shanghai"),
            (std::vector<std::string>{"2023-11-15T06:00:00+08:00", "2023-11-16T06:00:00+08:00"}))
      << "06:00 in its zone, the calendar's day left out";
  EXPECT_TRUE(got.complete);
  Workflow none = w;
  none.schedule_type = ScheduleType::kNone;
  none.schedule_conf = "";
  try {
    backfill_schedule(none, holidays);
    FAIL() << "NONE has no instants";
  } catch (const BackfillRefused& e) {
    EXPECT_EQ(e.field(), "scheduleType");
    EXPECT_EQ(std::string(e.what()),
              "scheduleType: workflow 9 has schedule NONE: it never fires by itself, so it has no instants to backfill");
  }
  try {
    backfill_schedule(w, std::nullopt);
    FAIL() << "a calendar named but not read";
  } catch (const BackfillRefused& e) {
    EXPECT_EQ(std::string(e.what()), "calendarId: workflow 9 names calendar 4, which does not exist");
  }
  Workflow rate = w;
  rate.schedule_type = ScheduleType::kFixRate;
  rate.schedule_conf = "3600";
  rate.calendar = {};
  EXPECT_EQ(backfill_instants(backfill_schedule(rate, std::nullopt), kMonday + 60'000, kMonday + 3 * kHour, std::nullopt, 10)
                .instants,
            (std::vector<std::int64_t>{kMonday + 60'000, kMonday + kHour + 60'000, kMonday + 2 * kHour + 60'000}))
      << "a fixed rate's grid from the range's start";
}

TEST(BackfillStep, WritesOldestFirstUpToTheRoomLeftByUnfinishedRuns) {
  const BackfillInstants next{{10, 20, 30, 40, 50}, true};
  auto step = plan_backfill_step(backfill_of(OnExisting::kSkip, 3), next, {}, 0);
  EXPECT_EQ(step.write, (std::vector<std::int64_t>{10, 20, 30}));
  EXPECT_EQ(step.cursor, 30);
  EXPECT_EQ(step.skipped, 0);
  EXPECT_EQ(step.end, std::nullopt);
  step = plan_backfill_step(backfill_of(OnExisting::kSkip, 3), next, {}, 2);
  EXPECT_EQ(step.write, (std::vector<std::int64_t>{10}));
  EXPECT_EQ(step.cursor, 10);
  step = plan_backfill_step(backfill_of(OnExisting::kSkip, 3), next, {}, 3);
  EXPECT_TRUE(step.write.empty());
  EXPECT_EQ(step.cursor, std::nullopt) << "no room: the cursor stays where it was";
  step = plan_backfill_step(backfill_of(OnExisting::kSkip, 3), next, {}, 7);
  EXPECT_TRUE(step.write.empty()) << "more unfinished than the cap (a retry each): still none";
}

TEST(BackfillStep, SkipPassesOverInstantsThatHaveARunAndRerunRunsThemAgain) {
  const BackfillInstants next{{10, 20, 30, 40}, true};
  const std::set<std::int64_t> existing{10, 20, 40};
  auto skip = plan_backfill_step(backfill_of(OnExisting::kSkip, 1), next, existing, 0);
  EXPECT_EQ(skip.write, (std::vector<std::int64_t>{30}));
  EXPECT_EQ(skip.skipped, 3) << "40 needs no room: it is passed over too";
  EXPECT_EQ(skip.cursor, 40);
  auto rerun = plan_backfill_step(backfill_of(OnExisting::kRerun, 10), next, existing, 0);
  EXPECT_EQ(rerun.write, (std::vector<std::int64_t>{10, 20, 30, 40}));
  EXPECT_EQ(rerun.skipped, 0);
  // Without room, SKIP still passes over the existing instants ahead of the first to write.
  auto full = plan_backfill_step(backfill_of(OnExisting::kSkip, 1), next, existing, 1);
  EXPECT_TRUE(full.write.empty());
  EXPECT_EQ(full.skipped, 2);
  EXPECT_EQ(full.cursor, 20);
}

TEST(BackfillStep, IsDoneOnlyOnceEveryInstantIsDealtWithAndEveryRunEnded) {
  Backfill b = backfill_of(OnExisting::kSkip, 2);
  b.written = 3;
  b.skipped = 1;
  EXPECT_EQ(plan_backfill_step(b, {{}, true}, {}, 1).end, std::nullopt) << "a run still unfinished";
  EXPECT_EQ(plan_backfill_step(b, {{}, false}, {}, 0).end, std::nullopt) << "instants left beyond the batch";
  EXPECT_EQ(plan_backfill_step(b, {{50}, true}, {}, 0).end, std::nullopt) << "it writes the last one now";
  auto skipped_last = plan_backfill_step(b, {{50}, true}, {50}, 0);
  EXPECT_EQ(skipped_last.end, BackfillState::kDone);
  EXPECT_EQ(skipped_last.reason, "every instant dealt with: 3 runs written, 2 instants skipped");
  auto done = plan_backfill_step(b, {{}, true}, {}, 0);
  EXPECT_EQ(done.end, BackfillState::kDone);
  EXPECT_EQ(done.reason, "every instant dealt with: 3 runs written, 1 instant skipped");
}

TEST(BackfillStep, AStoppedBackfillEndsCancelledWritingNothing) {
  auto step = backfill_stopped("scheduleType: job 7 has schedule NONE");
  EXPECT_EQ(step.end, BackfillState::kCancelled);
  EXPECT_TRUE(step.write.empty());
  EXPECT_EQ(step.reason, "stopped: scheduleType: job 7 has schedule NONE");
}

TEST(BackfillRuns, ARetryOfABackfillRunBelongsToTheSameBackfill) {
  Job job = cron_job("0 0 * * * ?");
  job.executor_fail_retry_count = 2;
  job.retry_interval = 30;
  JobLog run;
  run.id = 40;
  run.job_id = job.id;
  run.job_group = job.job_group;
  run.trigger_type = TriggerType::kBackfill;
  run.scheduled_time = kMonday;
  run.executor_fail_retry_count = 2;
  run.backfill_id = 11;
  run.logical_time = kMonday;
  const auto follow = plan_follow_ups(RunEnd::kFailed, run, job, {}, kMonday + 7 * kDay, "node-a");
  ASSERT_EQ(follow.fires.size(), 1u);
  EXPECT_EQ(follow.fires[0].trigger_type, TriggerType::kRetry);
  EXPECT_EQ(follow.fires[0].backfill_id, 11);
  EXPECT_EQ(follow.fires[0].scheduled_time, kMonday + 7 * kDay + 30'000) << "due after its wait";
  EXPECT_EQ(follow.fires[0].logical_time, kMonday) << "standing for the instant";
  EXPECT_EQ(log_date_time(follow.fires[0]), kMonday);
  // And the retry of that retry.
  const auto again = plan_follow_ups(RunEnd::kLost, follow.fires[0], job, {}, kMonday + 8 * kDay, "node-a");
  ASSERT_EQ(again.fires.size(), 1u);
  EXPECT_EQ(log_date_time(again.fires[0]), kMonday);
}

TEST(BackfillRuns, AWorkflowNodeRunsRetryKeepsItsLogicalTimeAndAnyOtherRunsRetryGoesByItsOwnTime) {
  Job job = cron_job("0 0 * * * ?");
  job.executor_fail_retry_count = 1;
  JobLog node_run;
  node_run.id = 41;
  node_run.job_id = job.id;
  node_run.trigger_type = TriggerType::kWorkflow;
  node_run.scheduled_time = kMonday + 7 * kDay;
  node_run.logical_time = kMonday;  // of a workflow's backfill's run
  node_run.executor_fail_retry_count = 1;
  node_run.workflow_run_id = 5;
  node_run.workflow_node = "extract";
  auto follow = plan_follow_ups(RunEnd::kTriggerFailed, node_run, job, {}, kMonday + 7 * kDay, "node-a");
  ASSERT_EQ(follow.fires.size(), 1u);
  EXPECT_EQ(follow.fires[0].workflow_node, "extract");
  EXPECT_EQ(log_date_time(follow.fires[0]), kMonday);
  JobLog scheduled = node_run;
  scheduled.trigger_type = TriggerType::kSchedule;
  scheduled.logical_time.reset();
  scheduled.workflow_run_id.reset();
  scheduled.workflow_node.clear();
  follow = plan_follow_ups(RunEnd::kFailed, scheduled, job, {}, kMonday + 7 * kDay + 5, "node-a");
  ASSERT_EQ(follow.fires.size(), 1u);
  EXPECT_EQ(follow.fires[0].logical_time, std::nullopt);
  EXPECT_EQ(log_date_time(follow.fires[0]), follow.fires[0].scheduled_time) << "as before: its own time";
}

TEST(BackfillJson, SpellsTheStatesAndChoicesAsTheApiDoes) {
  for (auto s : {BackfillState::kRunning, BackfillState::kDone, BackfillState::kCancelled}) {
    EXPECT_EQ(parse_backfill_state(to_string(s)), s);
  }
  EXPECT_EQ(parse_on_existing("SKIP"), OnExisting::kSkip);
  EXPECT_EQ(parse_on_existing("RERUN"), OnExisting::kRerun);
  EXPECT_EQ(parse_on_existing("skip"), std::nullopt);
  Backfill b = backfill_of(OnExisting::kRerun, 4);
  const auto json = to_json(b);
  EXPECT_EQ(json["onExisting"], "RERUN");
  EXPECT_EQ(json["state"], "running");
  EXPECT_TRUE(json["cursor"].is_null());
  EXPECT_TRUE(json["endedAt"].is_null());
  EXPECT_EQ(json["kind"], "job");
  EXPECT_EQ(json["jobId"], 7);
  EXPECT_TRUE(json["workflowId"].is_null());
  EXPECT_TRUE(json["workflowName"].is_null());
  EXPECT_TRUE(json["inputs"].is_null());
  Backfill of_workflow = b;
  of_workflow.job_id = 0;
  of_workflow.workflow_id = 9;
  of_workflow.workflow_name = "nightly-etl";
  of_workflow.params = R"({"day":"then"})";
  const auto wf = to_json(of_workflow);
  EXPECT_EQ(wf["kind"], "workflow");
  EXPECT_TRUE(wf["jobId"].is_null());
  EXPECT_EQ(wf["workflowId"], 9);
  EXPECT_EQ(wf["workflowName"], "nightly-etl");
  EXPECT_EQ(wf["inputs"], nlohmann::json({{"day", "then"}}));
}

}  // namespace
}  // namespace cronwheel::admin
