#include "admin/model/run_end.h"

#include <gtest/gtest.h>

#include <vector>

#include "admin/model/child_jobs.h"
#include "admin/model/records.h"

namespace cronwheel::admin {
namespace {

constexpr std::int64_t kNow = 1'700'000'000'000;

Job job_of() {
  Job job;
  job.id = 7;
  job.job_group = 3;
  job.schedule_type = ScheduleType::kCron;
  job.schedule_conf = "0 * * * * ?";
  job.executor_handler = "currentHandler";
  job.executor_param = "job-param";
  job.retry_interval = 30;
  job.child_job_ids = {8};
  return job;
}

JobLog run_of(int retries_left) {
  JobLog run;
  run.id = 100;
  run.job_group = 3;
  run.job_id = 7;
  run.executor_handler = "handlerAtFireTime";
  run.executor_param = "run-param";
  run.shard_index = 1;
  run.shard_total = 3;
  run.executor_fail_retry_count = retries_left;
  return run;
}

Job child_of() {
  Job child;
  child.id = 8;
  child.job_group = 4;
  child.executor_handler = "childHandler";
  child.executor_param = "child-param";
  child.executor_fail_retry_count = 2;
  return child;
}

TEST(PlanRunEnd, ARetryWaitsWhatTheJobsBackOffGivesItsAttempt) {
  Job job = job_of();
  job.retry_interval = 10;
  job.executor_fail_retry_count = 3;
  job.retry = RetryPolicy{RetryBackoff::kExponential, 3.0, 60, 0};
  // The first run has all three retries left: its retry is the first (10 s), then 30 s, then the
  // 60 s ceiling instead of 90.
  EXPECT_EQ(plan_follow_ups(RunEnd::kFailed, run_of(3), job, {}, kNow, "node-a").fires.at(0).scheduled_time,
            kNow + 10'000);
  EXPECT_EQ(plan_follow_ups(RunEnd::kFailed, run_of(2), job, {}, kNow, "node-a").fires.at(0).scheduled_time,
            kNow + 30'000);
  EXPECT_EQ(plan_follow_ups(RunEnd::kLost, run_of(1), job, {}, kNow, "node-a").fires.at(0).scheduled_time,
            kNow + 60'000);
  // A job given more retries since the run fired counts the run's as the first.
  job.executor_fail_retry_count = 1;
  EXPECT_EQ(plan_follow_ups(RunEnd::kFailed, run_of(3), job, {}, kNow, "node-a").fires.at(0).scheduled_time,
            kNow + 10'000);
  // Jitter is drawn from the run's id: the same run waits the same, within the share.
  job.retry.jitter_percent = 20;
  const auto with_jitter = plan_follow_ups(RunEnd::kFailed, run_of(3), job, {}, kNow, "node-a").fires.at(0);
  EXPECT_EQ(with_jitter.scheduled_time - kNow, retry_delay_ms(job.retry, 10, 1, 100));
  EXPECT_GT(with_jitter.scheduled_time, kNow + 8'000);
  EXPECT_LE(with_jitter.scheduled_time, kNow + 10'000);
}

TEST(PlanRunEnd, EndsThatMayBeRetriedGetOneRetryWithTheJobsCurrentHandler) {
  for (RunEnd end : {RunEnd::kFailed, RunEnd::kLost, RunEnd::kTriggerFailed}) {
    auto follow = plan_follow_ups(end, run_of(2), job_of(), {child_of()}, kNow, "node-a");
    ASSERT_EQ(follow.fires.size(), 1u) << to_string(end);
    const JobLog& retry = follow.fires[0];
    EXPECT_EQ(retry.trigger_type, TriggerType::kRetry) << to_string(end);
    EXPECT_EQ(retry.state, FireState::kPending);
    EXPECT_EQ(retry.job_id, 7);
    EXPECT_EQ(retry.job_group, 3);
    EXPECT_EQ(retry.scheduled_time, kNow + 30'000);
    EXPECT_EQ(retry.admin_node, "node-a");
    EXPECT_EQ(retry.executor_handler, "currentHandler");
    EXPECT_EQ(retry.executor_param, "run-param");
    EXPECT_EQ(retry.shard_index, 1);
    EXPECT_EQ(retry.shard_total, 3);
    EXPECT_EQ(retry.executor_fail_retry_count, 1);
    EXPECT_EQ(retry.parent_log_id, 100);
  }
}

TEST(PlanRunEnd, NoRetryWhenNoneIsLeftOrTheRunWasSkippedOrCancelled) {
  for (RunEnd end : {RunEnd::kFailed, RunEnd::kLost, RunEnd::kTriggerFailed}) {
    EXPECT_TRUE(plan_follow_ups(end, run_of(0), job_of(), {}, kNow, "n").fires.empty()) << to_string(end);
  }
  for (RunEnd end : {RunEnd::kMisfireSkipped, RunEnd::kCancelled}) {
    EXPECT_TRUE(plan_follow_ups(end, run_of(5), job_of(), {child_of()}, kNow, "n").fires.empty()) << to_string(end);
  }
}

TEST(PlanRunEnd, OnlySuccessFiresTheChildJobs) {
  auto follow = plan_follow_ups(RunEnd::kSucceeded, run_of(2), job_of(), {child_of()}, kNow, "node-a");
  ASSERT_EQ(follow.fires.size(), 1u);
  const JobLog& child = follow.fires[0];
  EXPECT_EQ(child.trigger_type, TriggerType::kParent);
  EXPECT_EQ(child.job_id, 8);
  EXPECT_EQ(child.job_group, 4);
  EXPECT_EQ(child.scheduled_time, kNow);
  EXPECT_EQ(child.executor_handler, "childHandler");
  EXPECT_EQ(child.executor_param, "child-param");
  EXPECT_EQ(child.executor_fail_retry_count, 2);
  EXPECT_EQ(child.parent_log_id, 100);
  for (RunEnd end : {RunEnd::kFailed, RunEnd::kLost, RunEnd::kTriggerFailed, RunEnd::kMisfireSkipped,
                     RunEnd::kCancelled}) {
    for (const JobLog& fire : plan_follow_ups(end, run_of(1), job_of(), {child_of()}, kNow, "n").fires) {
      EXPECT_NE(fire.trigger_type, TriggerType::kParent) << to_string(end);
    }
  }
}

TEST(PlanRunEnd, AChildFireIsOneChainStepDeeperAndARetryKeepsTheRunsDepth) {
  auto run = run_of(1);
  run.chain_depth = 3;
  auto children = plan_follow_ups(RunEnd::kSucceeded, run, job_of(), {child_of()}, kNow, "node-a");
  ASSERT_EQ(children.fires.size(), 1u);
  EXPECT_EQ(children.fires[0].chain_depth, 4);
  EXPECT_EQ(children.fires[0].state, FireState::kPending);
  auto retry = plan_follow_ups(RunEnd::kFailed, run, job_of(), {child_of()}, kNow, "node-a");
  ASSERT_EQ(retry.fires.size(), 1u);
  EXPECT_EQ(retry.fires[0].chain_depth, 3);
}

TEST(PlanRunEnd, AChildChainEndsAtTheDepthLimitWithACancelledRowSayingWhy) {
  auto run = run_of(0);
  run.chain_depth = kMaxChildChainDepth - 1;
  auto last = plan_follow_ups(RunEnd::kSucceeded, run, job_of(), {child_of()}, kNow, "node-a");
  ASSERT_EQ(last.fires.size(), 1u);
  EXPECT_EQ(last.fires[0].state, FireState::kPending) << "the last step allowed still runs";

  run.chain_depth = kMaxChildChainDepth;
  auto cut = plan_follow_ups(RunEnd::kSucceeded, run, job_of(), {child_of()}, kNow, "node-a");
  ASSERT_EQ(cut.fires.size(), 1u);
  const JobLog& row = cut.fires[0];
  EXPECT_EQ(row.state, FireState::kCancelled);
  EXPECT_EQ(row.job_id, 8);
  EXPECT_EQ(row.parent_log_id, 100);
  EXPECT_EQ(row.chain_depth, kMaxChildChainDepth + 1);
  EXPECT_NE(row.trigger_msg.find("not fired: child job 8 of job 7"), std::string::npos) << row.trigger_msg;
  EXPECT_NE(row.trigger_msg.find("cycle"), std::string::npos) << row.trigger_msg;
}

TEST(PlanRunEnd, EveryEndOfAFixDelayRunSetsItsNextTime) {
  Job job = job_of();
  job.schedule_type = ScheduleType::kFixDelay;
  job.schedule_conf = "10";
  for (RunEnd end : {RunEnd::kSucceeded, RunEnd::kFailed, RunEnd::kLost, RunEnd::kTriggerFailed,
                     RunEnd::kMisfireSkipped, RunEnd::kCancelled}) {
    EXPECT_EQ(plan_follow_ups(end, run_of(0), job, {}, kNow, "n").fix_delay_next_time, kNow + 10'000) << to_string(end);
  }
  job.schedule_conf = "ten";
  EXPECT_FALSE(plan_follow_ups(RunEnd::kFailed, run_of(0), job, {}, kNow, "n").fix_delay_next_time);
}

TEST(PlanRunEnd, FollowUpsOfBindsTheEndTimeAndNode) {
  auto plan = follow_ups_of(RunEnd::kTriggerFailed, kNow, "node-b");
  auto follow = plan(run_of(1), job_of(), {});
  ASSERT_EQ(follow.fires.size(), 1u);
  EXPECT_EQ(follow.fires[0].admin_node, "node-b");
  EXPECT_EQ(follow.fires[0].scheduled_time, kNow + 30'000);
}

}  // namespace
}  // namespace cronwheel::admin
