// The lost-result rules with a fake clock: a run `triggered` for more than 10 minutes whose
// executor has no live registration becomes `lost`, once, and is retried like a failure.

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "admin/complete/lost_result_monitor.h"
#include "common/timer/hierarchical_wheel_timer.h"
#include "common/timer/recurring_task.h"
#include "tests/support/fake_executor_client.h"
#include "tests/unit/admin/complete/completion_fixture.h"

namespace cronwheel::admin {
namespace {

using namespace std::chrono_literals;

class LostResultTest : public CompletionFixture {
 protected:
  static constexpr std::int64_t kDeadAfterMs = 90'000;

  LostResultMonitor::Options options() {
    LostResultMonitor::Options o;
    o.interval = 60s;
    o.lost_after = 10min;
    o.dead_after = std::chrono::milliseconds(kDeadAfterMs);
    return o;
  }

  // The executor's heartbeat, as /api/registry records it.
  void heartbeat(const std::string& address = kExecutor) { registry_.upsert("EXECUTOR", "demo-app", address); }

  // Moves time in steps of at most `step`, letting the monitor finish each pass it starts.
  void advance(std::chrono::milliseconds total, std::chrono::milliseconds step = 30s, bool beat = false) {
    while (total.count() > 0) {
      const auto d = std::min(total, step);
      if (beat) heartbeat();
      clock_.advance(d);
      timer_.process_until(clock_.steady_now());
      tasks_.wait_idle();
      total -= d;
    }
  }

  common::HierarchicalWheelTimer timer_{clock_, {}, {.manual = true}};
  common::RecurringTasks tasks_{timer_, clock_};
  LostResultMonitor monitor_{store_, completion_, tasks_, options()};
};

TEST_F(LostResultTest, RunOfAnUnregisteredExecutorIsLostAfterTenMinutes) {
  auto run = make_run(make_job("long"));
  monitor_.start();
  tasks_.wait_idle();

  advance(9min);
  EXPECT_EQ(log(run.id).state, FireState::kTriggered) << "not yet: 9 minutes";

  advance(61s);
  auto after = log(run.id);
  EXPECT_EQ(after.state, FireState::kLost);
  EXPECT_EQ(after.handle_code, 500);
  EXPECT_EQ(after.handle_msg,
            "result lost: executor http://127.0.0.1:9999/ has not been registered for 10 minutes");
  ASSERT_TRUE(after.handle_time);
  EXPECT_GE(*after.handle_time, *run.trigger_time + 10 * 60'000);
  EXPECT_EQ(completion_.counters().lost, 1);
  EXPECT_EQ(finished_.counts(), (std::vector<FinishedRuns::Count>{{group_, FireState::kLost, 1}}));
}

TEST_F(LostResultTest, RunOfARegisteredExecutorIsNeverLost) {
  heartbeat();
  auto run = make_run(make_job("long"));
  monitor_.start();
  tasks_.wait_idle();

  advance(30min, 30s, /*beat=*/true);

  EXPECT_EQ(log(run.id).state, FireState::kTriggered);
  EXPECT_EQ(completion_.counters().lost, 0);
}

TEST_F(LostResultTest, ExecutorGoneForLessThanTheDeadTimeoutStillCounts) {
  heartbeat();
  auto run = make_run(make_job("long"), FireState::kTriggered, 0, clock_.now_ms() - 20 * 60'000);
  clock_.advance(80s);  // last heartbeat 80 s ago: alive until 90 s

  EXPECT_EQ(monitor_.check_once(), 0);
  EXPECT_EQ(log(run.id).state, FireState::kTriggered);

  clock_.advance(11s);
  EXPECT_EQ(monitor_.check_once(), 1);
  EXPECT_EQ(log(run.id).state, FireState::kLost);
}

TEST_F(LostResultTest, AddressesMatchWithOrWithoutTrailingSlash) {
  heartbeat("http://127.0.0.1:9999");  // registered without the slash
  auto run = make_run(make_job("long"), FireState::kTriggered, 0, clock_.now_ms() - 20 * 60'000);

  EXPECT_EQ(monitor_.check_once(), 0);
  EXPECT_EQ(log(run.id).state, FireState::kTriggered);
}

TEST_F(LostResultTest, LostRunIsRetriedLikeAFailure) {
  auto job = make_job("long");
  job.retry_interval = 5;
  job = update(job);
  auto run = make_run(job, FireState::kTriggered, 3, clock_.now_ms() - 11 * 60'000);

  EXPECT_EQ(monitor_.check_once(), 1);

  auto runs = runs_of(job.id);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[1].trigger_type, TriggerType::kRetry);
  EXPECT_EQ(runs[1].executor_fail_retry_count, 2);
  EXPECT_EQ(runs[1].scheduled_time, clock_.now_ms() + 5'000);
  EXPECT_EQ(runs[1].parent_log_id, run.id);
}

TEST_F(LostResultTest, LostRunOfAFixDelayJobSetsItsNextTime) {
  auto job = make_fix_delay_job(20, 1, kAwaitingCompletion);
  make_run(job, FireState::kTriggered, 0, clock_.now_ms() - 11 * 60'000);

  EXPECT_EQ(monitor_.check_once(), 1);

  EXPECT_EQ(this->job(job.id).trigger_next_time, clock_.now_ms() + 20'000);
}

TEST_F(LostResultTest, ResultsAndFinishedRunsAreLeftAlone) {
  auto job = make_job("done");
  auto old = clock_.now_ms() - 20 * 60'000;
  auto succeeded = make_run(job, FireState::kTriggered, 0, old);
  completion_.report(callback(succeeded.id, 200));
  auto pending = make_run(job, FireState::kPending);
  auto sending = make_run(job, FireState::kSending, 0, old);

  EXPECT_EQ(monitor_.check_once(), 0);

  EXPECT_EQ(log(succeeded.id).state, FireState::kSucceeded);
  EXPECT_EQ(log(pending.id).state, FireState::kPending);
  EXPECT_EQ(log(sending.id).state, FireState::kSending) << "a node's recovery decides sending fires";
}

TEST_F(LostResultTest, AnExecutorThatRegistersAgainWinsOverTheMonitorsEarlierLook) {
  auto run = make_run(make_job("long"), FireState::kTriggered, 0, clock_.now_ms() - 20 * 60'000);
  const auto before = clock_.now_ms() - 10 * 60'000;
  auto candidates = store_.lost_candidates(before, kDeadAfterMs, 10);
  ASSERT_EQ(candidates.size(), 1u);
  heartbeat();  // between the monitor's query and its verdict

  EXPECT_EQ(completion_.mark_lost(candidates[0], before, kDeadAfterMs, 10min), Completion::Outcome::kNotRunning);
  EXPECT_EQ(log(run.id).state, FireState::kTriggered);
}

TEST_F(LostResultTest, ACallbackArrivingFirstWinsOverTheVerdict) {
  auto run = make_run(make_job("long"), FireState::kTriggered, 0, clock_.now_ms() - 20 * 60'000);
  const auto before = clock_.now_ms() - 10 * 60'000;
  auto candidates = store_.lost_candidates(before, kDeadAfterMs, 10);
  ASSERT_EQ(candidates.size(), 1u);
  completion_.report(callback(run.id, 200));

  EXPECT_EQ(completion_.mark_lost(candidates[0], before, kDeadAfterMs, 10min), Completion::Outcome::kDuplicate);
  EXPECT_EQ(log(run.id).state, FireState::kSucceeded);
}

TEST_F(LostResultTest, APassMarksMoreRunsThanOneBatch) {
  LostResultMonitor::Options o = options();
  o.batch = 2;
  LostResultMonitor monitor(store_, completion_, tasks_, o);
  auto job = make_job("many");
  for (int i = 0; i < 5; ++i) make_run(job, FireState::kTriggered, 0, clock_.now_ms() - 20 * 60'000);

  EXPECT_EQ(monitor.check_once(), 5);
}

TEST_F(LostResultTest, StopsPromptlyWhileWaiting) {
  monitor_.start();
  tasks_.wait_idle();
  monitor_.stop();  // returns without the clock moving
  monitor_.stop();  // idempotent
  EXPECT_EQ(timer_.pending_timeouts(), 0u);
}

TEST_F(LostResultTest, StopEndsALongPassBetweenTwoRuns) {
  auto job = make_job("many");
  for (int i = 0; i < 3; ++i) make_run(job, FireState::kTriggered, 0, clock_.now_ms() - 20 * 60'000);
  std::stop_source stop;
  stop.request_stop();  // as stop() does to a pass under way
  EXPECT_EQ(monitor_.check_once(stop.get_token()), 0);
  EXPECT_EQ(completion_.counters().lost, 0);
}

TEST(LostResultMonitorOptions, RejectsNonPositiveDurations) {
  testing::FakeClock clock;
  testing::FakeStores stores{clock};
  testing::FakeRegistryStore registry{stores, clock};
  testing::FakeCompletionStore store{stores, registry};
  Completion completion{store, clock, Completion::Options{"n", {}}};
  common::HierarchicalWheelTimer timer(clock, {}, {.manual = true});
  common::RecurringTasks tasks(timer, clock);
  LostResultMonitor::Options o;
  o.interval = std::chrono::milliseconds(0);
  EXPECT_THROW(LostResultMonitor(store, completion, tasks, o), std::invalid_argument);
}

}  // namespace
}  // namespace cronwheel::admin

// ---------------------------------------------------------------------------------------------
// Rule 2: a run whose executor, asked, no longer knows it (restarted since it accepted the run).

namespace cronwheel::admin {
namespace {

using common::protocol::LogResult;
using testing::FakeExecutorClient;

class ForgottenRunTest : public CompletionFixture {
 protected:
  LostResultMonitor::Options options() {
    LostResultMonitor::Options o;
    o.interval = 60s;
    o.lost_after = 10min;
    o.dead_after = 90s;
    o.executors = &executors_;
    o.access_token = "secret";
    o.ask_after = 60s;
    o.start_margin = 60s;
    return o;
  }

  // The executor stays registered throughout: rule 1 never applies.
  void heartbeat() { registry_.upsert("EXECUTOR", "demo-app", kExecutor); }

  // What a cronwheel executor answers to /log about every run.
  void executor_says(std::string_view run_state, std::int64_t started_at) {
    LogResult result;
    result.from_line_num = 1;
    result.to_line_num = 0;
    result.log_content = "readLog fail, logFile not exists";
    result.is_end = true;
    result.run_state = std::string(run_state);
    result.executor_start_time = started_at;
    executors_.answer_log(kExecutor, FakeExecutorClient::LogAnswer::success(result));
  }

  void advance(std::chrono::milliseconds d) {
    heartbeat();
    clock_.advance(d);
  }

  FakeExecutorClient executors_;
  common::HierarchicalWheelTimer timer_{clock_, {}, {.manual = true}};
  common::RecurringTasks tasks_{timer_, clock_};
  LostResultMonitor monitor_{store_, completion_, tasks_, options()};
};

TEST_F(ForgottenRunTest, RunItsRestartedExecutorNoLongerKnowsIsLostWithTheReasonAndRetried) {
  heartbeat();
  auto run = make_run(make_job("short"), FireState::kTriggered, /*retries=*/1);
  const std::int64_t restarted_at = clock_.now_ms() + 5'000;
  executor_says(common::protocol::kRunStateUnknown, restarted_at);

  advance(30s);
  EXPECT_EQ(monitor_.check_once(), 0) << "not asked before a minute";
  EXPECT_TRUE(executors_.calls("log").empty());

  advance(31s);
  EXPECT_EQ(monitor_.check_once(), 1);
  auto calls = executors_.calls("log");
  ASSERT_EQ(calls.size(), 1U);
  EXPECT_EQ(calls[0].address, kExecutor);
  EXPECT_EQ(calls[0].access_token, "secret");
  EXPECT_EQ(calls[0].log.log_id, run.id);
  EXPECT_EQ(calls[0].log.log_date_time, run.scheduled_time);

  auto after = log(run.id);
  EXPECT_EQ(after.state, FireState::kLost);
  EXPECT_EQ(after.handle_code, 500);
  EXPECT_EQ(after.handle_msg, forgotten_message(kExecutor, restarted_at, true));
  EXPECT_NE(after.handle_msg.find("no longer knows the run"), std::string::npos);
  EXPECT_NE(after.handle_msg.find("restarted"), std::string::npos);
  auto runs = runs_of(run.job_id);
  ASSERT_EQ(runs.size(), 2U);
  EXPECT_EQ(runs[1].trigger_type, TriggerType::kRetry);
  EXPECT_EQ(runs[1].parent_log_id, run.id);
}

// An executor of a group with its own token accepts only that one: it is asked with it.
TEST_F(ForgottenRunTest, AnExecutorIsAskedWithTheTokenOfTheRunsGroup) {
  LostResultMonitor::Options o = options();
  o.token_of = [](std::int64_t group) { return "token-of-group-" + std::to_string(group); };
  LostResultMonitor monitor(store_, completion_, tasks_, o);
  heartbeat();
  auto run = make_run(make_job("tokened"));
  executor_says(common::protocol::kRunStateUnknown, clock_.now_ms() + 5'000);
  advance(61s);
  EXPECT_EQ(monitor.check_once(), 1);
  auto calls = executors_.calls("log");
  ASSERT_EQ(calls.size(), 1U);
  EXPECT_EQ(calls[0].access_token, "token-of-group-" + std::to_string(run.job_group));
}

TEST_F(ForgottenRunTest, RunsTheExecutorStillHoldsAreLeftAlone) {
  heartbeat();
  auto running = make_run(make_job("running"));
  advance(2min);
  executor_says(common::protocol::kRunStateActive, 1);
  EXPECT_EQ(monitor_.check_once(), 0);
  executor_says(common::protocol::kRunStateResultPending, 1);
  EXPECT_EQ(monitor_.check_once(), 0);
  EXPECT_EQ(log(running.id).state, FireState::kTriggered);
  EXPECT_EQ(executors_.calls("log").size(), 2U);
}

TEST_F(ForgottenRunTest, AnExecutorThatDoesNotSayIsLeftToTheRuleOfTheExecutorGone) {
  heartbeat();
  auto first = make_run(make_job("a"));
  auto second = make_run(make_job("b"));
  advance(2min);
  // XXL-JOB's executor: "no such log" and nothing else. That is not proof: its queued runs have
  // no log file yet.
  executors_.answer_log(kExecutor, FakeExecutorClient::no_such_log());
  EXPECT_EQ(monitor_.check_once(), 0);
  EXPECT_EQ(executors_.calls("log").size(), 1U) << "asked once, then not again in the same pass";
  // No answer at all.
  executors_.on_call([](const FakeExecutorClient::Call&) {
    return std::optional<ExecutorClient::Result>(ExecutorClient::Result::fail("connect refused", 500));
  });
  EXPECT_EQ(monitor_.check_once(), 0);
  EXPECT_EQ(log(first.id).state, FireState::kTriggered);
  EXPECT_EQ(log(second.id).state, FireState::kTriggered);
}

TEST_F(ForgottenRunTest, RunsTriggeredWellAfterTheAnsweringProcessStartedAreNotAskedAbout) {
  heartbeat();
  const std::int64_t started_at = clock_.now_ms();
  auto before_start = make_run(make_job("old"), FireState::kTriggered, 0, started_at - 60'000);
  advance(5min);
  auto after_start = make_run(make_job("new"), FireState::kTriggered, 0, clock_.now_ms());
  advance(2min);
  executor_says(common::protocol::kRunStateActive, started_at);
  EXPECT_EQ(monitor_.check_once(), 0);
  auto calls = executors_.calls("log");
  ASSERT_EQ(calls.size(), 1U);
  EXPECT_EQ(calls[0].log.log_id, before_start.id);
  EXPECT_EQ(log(after_start.id).state, FireState::kTriggered);
}

// A run whose delivery was never confirmed (no answer to /run nor /log: trigger code 500) may
// never have reached the process that answers now, however long it has been running: it is
// asked about, and closed with a message that says so.
TEST_F(ForgottenRunTest, AnUnconfirmedRunIsAskedAboutEvenAtAnExecutorThatDidNotRestart) {
  heartbeat();
  const std::int64_t started_at = clock_.now_ms();
  // Asked first (oldest): its answer tells the process's start time.
  auto before_start = make_run(make_job("old"), FireState::kTriggered, 0, started_at - 60'000);
  advance(5min);
  auto confirmed = make_run(make_job("confirmed"), FireState::kTriggered, 0, clock_.now_ms());
  auto unconfirmed = make_run(make_job("unconfirmed"), FireState::kTriggered, 1, clock_.now_ms(), 500);
  advance(2min);
  executor_says(common::protocol::kRunStateUnknown, started_at);
  EXPECT_EQ(monitor_.check_once(), 2);
  auto calls = executors_.calls("log");
  ASSERT_EQ(calls.size(), 2U);
  EXPECT_EQ(calls[0].log.log_id, before_start.id);
  EXPECT_EQ(calls[1].log.log_id, unconfirmed.id);
  EXPECT_EQ(log(confirmed.id).state, FireState::kTriggered);  // accepted by that process: not asked
  auto after = log(unconfirmed.id);
  EXPECT_EQ(after.state, FireState::kLost);
  EXPECT_EQ(after.handle_msg, forgotten_message(kExecutor, started_at, false));
  EXPECT_NE(after.handle_msg.find("its delivery was never confirmed"), std::string::npos) << after.handle_msg;
  auto runs = runs_of(unconfirmed.job_id);
  ASSERT_EQ(runs.size(), 2U);
  EXPECT_EQ(runs[1].trigger_type, TriggerType::kRetry);
}

TEST_F(ForgottenRunTest, AResultArrivingWhileTheExecutorIsAskedWins) {
  heartbeat();
  auto run = make_run(make_job("late"));
  advance(2min);
  executor_says(common::protocol::kRunStateUnknown, 1);
  // The result reaches another node just after the executor handed it over and forgot it.
  executors_.on_call([&](const FakeExecutorClient::Call& c) {
    completion_.report(callback(c.log.log_id, 200, "done"));
    return std::optional<ExecutorClient::Result>();
  });
  EXPECT_EQ(monitor_.check_once(), 0);
  EXPECT_EQ(log(run.id).state, FireState::kSucceeded);
}

TEST_F(ForgottenRunTest, ForgottenMessageWithoutAStartTime) {
  EXPECT_EQ(forgotten_message("http://e:9999/", 0, true),
            "result lost: executor http://e:9999/ no longer knows the run: not queued, not running, no result "
            "to send; it restarted after the run was triggered");
  EXPECT_EQ(forgotten_message("http://e:9999/", 1700000000123, true),
            "result lost: executor http://e:9999/ (running since 2023-11-14T22:13:20.123Z) no longer knows the run: "
            "not queued, not running, no result to send; it restarted after the run was triggered");
}

}  // namespace
}  // namespace cronwheel::admin
