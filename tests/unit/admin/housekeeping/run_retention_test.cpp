#include "admin/housekeeping/run_retention.h"

#include <gtest/gtest.h>

#include <chrono>

#include "common/timer/hierarchical_wheel_timer.h"
#include "common/timer/recurring_task.h"
#include "tests/support/fake_clock.h"
#include "tests/support/fake_retention_store.h"
#include "tests/support/retention_contract_tests.h"

namespace cronwheel::testing {

namespace {

// FakeRetentionStore under the contract suite PgRetentionStore also passes.
class FakeRetentionFixture {
 public:
  admin::RetentionStore& retention() { return store_; }
  admin::JobLog put_run(admin::JobLog run) {
    run.job_group = 1;
    run.job_id = 1;
    return store_.put_run(std::move(run));
  }
  bool exists(std::int64_t id) { return store_.exists(id); }
  std::int64_t put_workflow_run(admin::WorkflowRunState state, std::int64_t scheduled_time, int alarm_status) {
    return store_.put_workflow_run(state, scheduled_time, alarm_status);
  }
  bool workflow_run_exists(std::int64_t id) { return store_.workflow_run_exists(id); }

 private:
  FakeRetentionStore store_;
};

}  // namespace

namespace retention_contract {
INSTANTIATE_TYPED_TEST_SUITE_P(Fake, RetentionContract, FakeRetentionFixture);
}  // namespace retention_contract

namespace {

using namespace std::chrono_literals;
using admin::FireState;
using admin::JobLog;
using admin::RunRetention;

constexpr std::int64_t kDay = 24LL * 3600 * 1000;

RunRetention::Options options() {
  RunRetention::Options o;
  o.keep = 30 * 24h;
  o.interval = 1h;
  o.first_delay = 1min;
  o.batch = 100;
  o.pause = 0ms;
  o.max_batches = 5;
  return o;
}

class RunRetentionTest : public ::testing::Test {
 protected:
  void runs(int n, std::int64_t scheduled_time) {
    for (int i = 0; i < n; ++i) {
      JobLog l;
      l.job_id = 1;
      l.state = FireState::kSucceeded;
      l.scheduled_time = scheduled_time + i;
      l.alarm_status = admin::kAlarmNotNeeded;
      store_.put_run(l);
    }
  }
  void advance(std::chrono::milliseconds d) {
    clock_.advance(d);
    timer_.process_until(clock_.steady_now());
    tasks_.wait_idle();
  }

  FakeClock clock_;
  FakeRetentionStore store_;
  common::HierarchicalWheelTimer timer_{clock_, {}, {.manual = true}};
  common::RecurringTasks tasks_{timer_, clock_};
  RunRetention retention_{store_, tasks_, options()};
};

TEST_F(RunRetentionTest, APassDeletesRunsOlderThanKeepInBatchesUntilAShortOne) {
  runs(250, clock_.now_ms() - 31 * kDay);
  runs(40, clock_.now_ms() - 29 * kDay);
  EXPECT_EQ(retention_.pass_once(), 250);
  EXPECT_EQ(store_.calls(), 3);  // 100, 100, 50
  EXPECT_EQ(store_.size(), 40u);
  EXPECT_EQ(retention_.counters().deleted, 250u);
}

TEST_F(RunRetentionTest, APassDeletesOldWorkflowRunsTooInBatches) {
  for (int i = 0; i < 150; ++i) {
    store_.put_workflow_run(admin::WorkflowRunState::kSucceeded, clock_.now_ms() - 31 * kDay + i, admin::kAlarmUndecided);
  }
  const auto recent = store_.put_workflow_run(admin::WorkflowRunState::kFailed, clock_.now_ms() - 29 * kDay, admin::kAlarmSent);
  const auto running = store_.put_workflow_run(admin::WorkflowRunState::kRunning, clock_.now_ms() - 40 * kDay, admin::kAlarmUndecided);
  EXPECT_EQ(retention_.pass_once(), 0) << "counts the runs of jobs";
  EXPECT_EQ(retention_.counters().workflow_runs_deleted, 150u);
  EXPECT_TRUE(store_.workflow_run_exists(recent));
  EXPECT_TRUE(store_.workflow_run_exists(running));
}

TEST_F(RunRetentionTest, APassStopsAfterMaxBatchesAndTheNextGoesOn) {
  runs(700, clock_.now_ms() - 40 * kDay);
  EXPECT_EQ(retention_.pass_once(), 500);
  EXPECT_EQ(retention_.pass_once(), 200);
  EXPECT_EQ(store_.size(), 0u);
}

TEST_F(RunRetentionTest, ARunBecomesOldEnoughAsTimeGoesOn) {
  runs(1, clock_.now_ms() - 30 * kDay + 1'000);
  EXPECT_EQ(retention_.pass_once(), 0);
  clock_.advance(1s);
  EXPECT_EQ(retention_.pass_once(), 0);  // exactly `keep` old: kept
  clock_.advance(1ms);
  EXPECT_EQ(retention_.pass_once(), 1);
}

TEST_F(RunRetentionTest, StartedItPassesAfterTheFirstDelayThenEveryIntervalAndOutlivesAFailingStore) {
  runs(10, clock_.now_ms() - 31 * kDay);
  store_.fail_with("database down");
  retention_.start();
  advance(59s);
  EXPECT_EQ(store_.calls(), 0);
  advance(1s);
  EXPECT_EQ(store_.calls(), 1);  // failed
  EXPECT_EQ(store_.size(), 10u);
  EXPECT_EQ(retention_.counters().passes, 1u);
  store_.fail_with(std::nullopt);
  advance(1h);
  EXPECT_EQ(store_.size(), 0u);
  EXPECT_EQ(retention_.counters().passes, 2u);
  retention_.stop();
}

TEST_F(RunRetentionTest, NonsenseOptionsAreRefused) {
  auto o = options();
  o.keep = 0ms;
  EXPECT_THROW(RunRetention(store_, tasks_, o), std::invalid_argument);
  o = options();
  o.batch = 0;
  EXPECT_THROW(RunRetention(store_, tasks_, o), std::invalid_argument);
  o = options();
  o.pause = -1ms;
  EXPECT_THROW(RunRetention(store_, tasks_, o), std::invalid_argument);
}

}  // namespace
}  // namespace cronwheel::testing
