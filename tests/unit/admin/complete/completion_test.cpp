// Completion's rules (docs/scheduling.md, "Results") against the fake stores: what a result
// records and what it leads to.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "tests/unit/admin/complete/completion_fixture.h"

namespace cronwheel::admin {
namespace {

using Outcome = Completion::Outcome;

class CompletionTest : public CompletionFixture {};

TEST_F(CompletionTest, SuccessRecordsTheResultWithTheHandleTime) {
  auto job = make_job("parent");
  auto run = make_run(job);
  clock_.advance(std::chrono::seconds(3));

  EXPECT_EQ(completion_.report(callback(run.id, 200, "all good")), Outcome::kRecorded);

  auto after = log(run.id);
  EXPECT_EQ(after.state, FireState::kSucceeded);
  EXPECT_EQ(after.handle_code, 200);
  EXPECT_EQ(after.handle_msg, "all good");
  EXPECT_EQ(after.handle_time, clock_.now_ms());
  EXPECT_EQ(completion_.counters().recorded, 1);
}

// A fire handed over ahead that its executor never started (it restarted first) is no result: it
// goes back to pending, this node's, with no retry and no child fires, and a repeat changes nothing.
TEST_F(CompletionTest, ANotStartedCallbackPutsItsRunBackToPendingForThisNodeWithoutFollowUps) {
  auto child = make_job("child");
  auto parent = make_job("parent");
  parent.child_job_ids = {child.id};
  parent = update(parent);
  auto run = make_run(parent, FireState::kTriggered, /*retries=*/2);
  auto other = make_run(parent);
  auto c = callback(run.id, 500, "not started: executor restarted before the fire's instant");
  c.not_started = "executor restarted before the fire's instant";
  auto done = callback(other.id, 200, "ok");
  auto outcomes = completion_.report_all({c, done});
  EXPECT_EQ(outcomes, (std::vector<Outcome>{Outcome::kRecorded, Outcome::kRecorded}));
  const auto after = log(run.id);
  EXPECT_EQ(after.state, FireState::kPending);
  EXPECT_EQ(after.admin_node, kNode);
  EXPECT_FALSE(after.trigger_time.has_value());
  EXPECT_EQ(after.handle_code, 0);
  EXPECT_NE(after.trigger_msg.find("Not started: executor restarted before the fire's instant"), std::string::npos)
      << after.trigger_msg;
  EXPECT_EQ(log(other.id).state, FireState::kSucceeded) << "the batch's results are recorded too";
  EXPECT_EQ(runs_of(child.id).size(), 1u) << "only the success fired the child";
  EXPECT_EQ(runs_of(parent.id).size(), 2u) << "no retry";
  EXPECT_EQ(completion_.counters().not_started, 1);
  EXPECT_EQ(completion_.report(c), Outcome::kNotRunning) << "reported again: pending already, nothing changes";
  EXPECT_EQ(log(run.id).state, FireState::kPending);
}

TEST_F(CompletionTest, SuccessFiresEachExistingChildOnceDueNowOwnedByThisNode) {
  auto b = make_job("child-b");
  auto c = make_job("child-c");
  auto gone = make_job("child-gone");
  auto parent = make_job("parent", {c.id, b.id, gone.id});
  stores_.jobs().remove(gone.id, system_);
  auto run = make_run(parent);

  ASSERT_EQ(completion_.report(callback(run.id, 200)), Outcome::kRecorded);

  for (const Job& child : {b, c}) {
    auto fires = runs_of(child.id);
    ASSERT_EQ(fires.size(), 1u) << child.job_desc;
    const JobLog& fire = fires[0];
    EXPECT_EQ(fire.state, FireState::kPending);
    EXPECT_EQ(fire.trigger_type, TriggerType::kParent);
    EXPECT_EQ(fire.scheduled_time, clock_.now_ms());
    EXPECT_EQ(fire.admin_node, kNode);
    EXPECT_EQ(fire.job_group, child.job_group);
    EXPECT_EQ(fire.executor_handler, child.executor_handler);
    EXPECT_EQ(fire.executor_param, child.executor_param);
    EXPECT_EQ(fire.parent_log_id, run.id);
    EXPECT_EQ(fire.executor_address, "");
  }
  EXPECT_EQ(completion_.counters().child_fires, 2);
  EXPECT_TRUE(runs_of(parent.id).size() == 1) << "no retry after a success";
}

TEST_F(CompletionTest, ChildFiresCarryTheChildsRetryCount) {
  auto child = make_job("child");
  child.executor_fail_retry_count = 4;
  child = update(child);
  auto run = make_run(make_job("parent", {child.id}));

  completion_.report(callback(run.id, 200));

  ASSERT_EQ(runs_of(child.id).size(), 1u);
  EXPECT_EQ(runs_of(child.id)[0].executor_fail_retry_count, 4);
}

TEST_F(CompletionTest, RepeatedCallbackIsIgnoredAndCounted) {
  auto child = make_job("child");
  auto run = make_run(make_job("parent", {child.id}));
  ASSERT_EQ(completion_.report(callback(run.id, 200, "first")), Outcome::kRecorded);
  const auto recorded = log(run.id);
  clock_.advance(std::chrono::seconds(5));

  EXPECT_EQ(completion_.report(callback(run.id, 200, "second")), Outcome::kDuplicate);
  EXPECT_EQ(completion_.report(callback(run.id, 500, "third")), Outcome::kDuplicate);

  EXPECT_EQ(log(run.id), recorded);
  EXPECT_EQ(runs_of(child.id).size(), 1u) << "child jobs fire once";
  EXPECT_EQ(completion_.counters().duplicates, 2);
  EXPECT_EQ(completion_.counters().recorded, 1);
}

TEST_F(CompletionTest, EachRecordedResultCountsOnceAsARunOfItsGroupFinished) {
  auto job = make_job("counted");
  auto ok = make_run(job);
  auto bad = make_run(job);
  auto batched = make_run(job);
  auto never_sent = make_run(job, FireState::kPending);

  completion_.report(callback(ok.id, 200));
  completion_.report(callback(ok.id, 500));  // a repeated callback
  completion_.report(callback(bad.id, 500));
  completion_.report(callback(never_sent.id, 200));
  completion_.report_all({callback(batched.id, 502), callback(batched.id, 200), callback(987654, 200)});

  EXPECT_EQ(finished_.counts(), (std::vector<FinishedRuns::Count>{{group_, FireState::kSucceeded, 1},
                                                                  {group_, FireState::kFailed, 2}}));
}

TEST_F(CompletionTest, ConcurrentDuplicateCallbacksRecordExactlyOnce) {
  auto child = make_job("child");
  auto run = make_run(make_job("parent", {child.id}));
  std::vector<std::thread> threads;
  std::atomic<int> recorded{0};
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      if (completion_.report(callback(run.id, 200)) == Outcome::kRecorded) ++recorded;
    });
  }
  for (auto& t : threads) t.join();

  EXPECT_EQ(recorded.load(), 1);
  EXPECT_EQ(runs_of(child.id).size(), 1u);
  EXPECT_EQ(completion_.counters().duplicates, 7);
  EXPECT_EQ(finished_.counts(), (std::vector<FinishedRuns::Count>{{group_, FireState::kSucceeded, 1}}));
}

TEST_F(CompletionTest, FailureWithRetriesLeftFiresOneRetryAfterTheRetryInterval) {
  auto job = make_job("flaky");
  job.retry_interval = 30;
  job = update(job);
  auto run = make_run(job, FireState::kTriggered, 2);
  JobLog shard = log(run.id);
  shard.shard_index = 1;
  shard.shard_total = 3;
  stores_.put_log(shard);

  ASSERT_EQ(completion_.report(callback(run.id, 500, "boom")), Outcome::kRecorded);

  EXPECT_EQ(log(run.id).state, FireState::kFailed);
  auto runs = runs_of(job.id);
  ASSERT_EQ(runs.size(), 2u);
  const JobLog& retry = runs[1];
  EXPECT_EQ(retry.state, FireState::kPending);
  EXPECT_EQ(retry.trigger_type, TriggerType::kRetry);
  EXPECT_EQ(retry.scheduled_time, clock_.now_ms() + 30'000);
  EXPECT_EQ(retry.executor_fail_retry_count, 1);
  EXPECT_EQ(retry.parent_log_id, run.id);
  EXPECT_EQ(retry.admin_node, kNode);
  EXPECT_EQ(retry.executor_param, "run-param") << "a retry runs with the failed run's parameters";
  EXPECT_EQ(retry.executor_handler, job.executor_handler);
  EXPECT_EQ(retry.shard_index, 1);
  EXPECT_EQ(retry.shard_total, 3);
  EXPECT_EQ(retry.executor_address, "") << "routed again";
  EXPECT_EQ(completion_.counters().retry_fires, 1);
}

TEST_F(CompletionTest, ZeroRetryIntervalRetriesAtOnce) {
  auto job = make_job("flaky");
  auto run = make_run(job, FireState::kTriggered, 1);

  completion_.report(callback(run.id, 500));

  auto runs = runs_of(job.id);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[1].scheduled_time, clock_.now_ms());
  EXPECT_EQ(runs[1].executor_fail_retry_count, 0);
}

TEST_F(CompletionTest, RetriesStopWhenTheCountIsExhausted) {
  auto job = make_job("flaky");
  auto run = make_run(job, FireState::kTriggered, 1);
  completion_.report(callback(run.id, 500));
  // The retry is sent and fails too: it has no retry left.
  JobLog retry = runs_of(job.id)[1];
  retry.state = FireState::kTriggered;
  retry.trigger_time = clock_.now_ms();
  stores_.put_log(retry);

  EXPECT_EQ(completion_.report(callback(retry.id, 500)), Outcome::kRecorded);

  EXPECT_EQ(log(retry.id).state, FireState::kFailed);
  EXPECT_EQ(runs_of(job.id).size(), 2u);
}

TEST_F(CompletionTest, FailureWithoutRetriesFiresNothing) {
  auto child = make_job("child");
  auto job = make_job("parent", {child.id});
  auto run = make_run(job, FireState::kTriggered, 0);

  completion_.report(callback(run.id, 500));

  EXPECT_EQ(runs_of(job.id).size(), 1u);
  EXPECT_TRUE(runs_of(child.id).empty()) << "child jobs follow a success only";
}

TEST_F(CompletionTest, TimeoutCode502IsAFailure) {
  auto child = make_job("child");
  auto job = make_job("parent", {child.id});
  auto run = make_run(job, FireState::kTriggered, 1);

  completion_.report(callback(run.id, 502, "job timeout"));

  EXPECT_EQ(log(run.id).state, FireState::kFailed);
  EXPECT_EQ(log(run.id).handle_code, 502);
  EXPECT_EQ(runs_of(job.id).size(), 2u) << "retried";
  EXPECT_TRUE(runs_of(child.id).empty());
}

TEST_F(CompletionTest, ResultForARunStillBeingSentIsRecorded) {
  // The executor may finish before the admin records its answer to /run.
  auto run = make_run(make_job("fast"), FireState::kSending);

  EXPECT_EQ(completion_.report(callback(run.id, 200)), Outcome::kRecorded);
  EXPECT_EQ(log(run.id).state, FireState::kSucceeded);
}

TEST_F(CompletionTest, ResultForARunNeverSentChangesNothing) {
  auto job = make_job("idle");
  for (FireState state : {FireState::kPending, FireState::kCancelled}) {
    auto run = make_run(job, state);
    EXPECT_EQ(completion_.report(callback(run.id, 200)), Outcome::kNotRunning) << state;
    EXPECT_EQ(log(run.id), run) << state;
  }
  EXPECT_EQ(completion_.counters().not_running, 2);
}

TEST_F(CompletionTest, ResultForAnUnknownRunIsIgnored) {
  EXPECT_EQ(completion_.report(callback(424242, 200)), Outcome::kUnknownLog);
  EXPECT_EQ(completion_.report(callback(0, 200)), Outcome::kUnknownLog);
  EXPECT_EQ(completion_.report(callback(-5, 200)), Outcome::kUnknownLog);
  EXPECT_EQ(completion_.counters().unknown, 3);
}

TEST_F(CompletionTest, FixDelayJobAwaitingCompletionGetsItsNextTimeFromTheEndOfTheRun) {
  auto job = make_fix_delay_job(10, 1, kAwaitingCompletion);
  auto run = make_run(job);
  clock_.advance(std::chrono::seconds(42));  // the run took 42 s

  completion_.report(callback(run.id, 200));

  EXPECT_EQ(this->job(job.id).trigger_next_time, clock_.now_ms() + 10'000);
  EXPECT_EQ(next_time_set_, 1) << "the schedule thread is told, so a short delay is kept";
}

TEST_F(CompletionTest, ResultsOfOtherJobsDoNotWakeTheScheduler) {
  auto run = make_run(make_job("cron job"));
  completion_.report(callback(run.id, 200));
  EXPECT_EQ(next_time_set_, 0);
}

TEST_F(CompletionTest, FixDelayNextTimeFollowsAFailureToo) {
  auto job = make_fix_delay_job(7, 1, kAwaitingCompletion);
  auto run = make_run(job);

  completion_.report(callback(run.id, 500));

  EXPECT_EQ(this->job(job.id).trigger_next_time, clock_.now_ms() + 7'000);
}

TEST_F(CompletionTest, FixDelayJobStoppedMeanwhileKeepsItsStop) {
  auto job = make_fix_delay_job(10, 0, 0);
  auto run = make_run(job);

  completion_.report(callback(run.id, 200));

  EXPECT_EQ(this->job(job.id).trigger_status, 0);
  EXPECT_EQ(this->job(job.id).trigger_next_time, 0);
}

TEST_F(CompletionTest, FixDelayNextTimeIsSetOnlyWhileAwaitingCompletion) {
  auto job = make_fix_delay_job(10, 1, kAwaitingCompletion);
  auto first = make_run(job);
  auto second = make_run(job);
  completion_.report(callback(first.id, 200));
  const auto next = this->job(job.id).trigger_next_time;
  clock_.advance(std::chrono::seconds(3));

  completion_.report(callback(second.id, 200));

  EXPECT_EQ(this->job(job.id).trigger_next_time, next) << "a second result does not move it again";
}

TEST_F(CompletionTest, LongHandleMessagesAreCutAtACharacterBoundary) {
  auto run = make_run(make_job("chatty"));
  std::string message(kMaxHandleMsgBytes - 1, 'x');
  message += "\xC3\xA9\xC3\xA9";  // "éé": the first straddles the bound

  completion_.report(callback(run.id, 200, message));

  EXPECT_EQ(log(run.id).handle_msg, std::string(kMaxHandleMsgBytes - 1, 'x'));
}

TEST(BoundedMessage, DropsNulBytesAndKeepsWholeCharacters) {
  EXPECT_EQ(bounded_message(std::string("a\0b", 3)), "ab");
  EXPECT_EQ(bounded_message("h\xC3\xA9llo", 2), "h");
  EXPECT_EQ(bounded_message("h\xC3\xA9llo", 3), "h\xC3\xA9");
  EXPECT_EQ(bounded_message("\xE2\x82\xAC", 2), "");
  EXPECT_EQ(bounded_message("short", 100), "short");
}

TEST(PlanFollowUps, NeverFiresAJobAsItsOwnChild) {
  Job job;
  job.id = 7;
  job.child_job_ids = {7};
  JobLog run;
  run.id = 1;
  run.job_id = 7;
  run.state = FireState::kSucceeded;

  EXPECT_TRUE(plan_follow_ups(RunEnd::kSucceeded, run, job, {job}, 1000, "n").fires.empty());
}

TEST(PlanFollowUps, OnlyFixDelayJobsGetANextTime) {
  Job job;
  job.id = 7;
  JobLog run;
  run.state = FireState::kSucceeded;
  for (ScheduleType type : {ScheduleType::kCron, ScheduleType::kFixRate, ScheduleType::kNone}) {
    job.schedule_type = type;
    job.schedule_conf = "10";
    EXPECT_FALSE(plan_follow_ups(RunEnd::kSucceeded, run, job, {}, 1000, "n").fix_delay_next_time) << type;
  }
  job.schedule_type = ScheduleType::kFixDelay;
  EXPECT_EQ(plan_follow_ups(RunEnd::kSucceeded, run, job, {}, 1000, "n").fix_delay_next_time, 11'000);
}

TEST(LostMessage, NamesTheExecutorAndTheTime) {
  EXPECT_EQ(lost_message("http://10.0.0.5:9999/", std::chrono::minutes(10)),
            "result lost: executor http://10.0.0.5:9999/ has not been registered for 10 minutes");
  EXPECT_EQ(lost_message("http://h/", std::chrono::minutes(1)),
            "result lost: executor http://h/ has not been registered for 1 minute");
  EXPECT_EQ(lost_message("http://h/", std::chrono::seconds(90)),
            "result lost: executor http://h/ has not been registered for 90 seconds");
}

}  // namespace
}  // namespace cronwheel::admin
