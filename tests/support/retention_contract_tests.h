#pragma once

// The retention store's contract (admin/model/retention_store.h) as one typed GoogleTest suite,
// run against FakeRetentionStore (tests/unit/admin/housekeeping/run_retention_test.cpp, label
// unit) and PgRetentionStore (tests/integration/retention_pgtest.cpp, label db).
//
//   struct F {
//     F();                                  // fresh, empty stores
//     admin::RetentionStore& retention();
//     admin::JobLog put_run(admin::JobLog); // every column as given, for a job of the fixture's
//     bool exists(std::int64_t run_id);
//     // A workflow run in `state`, scheduled at `scheduled_time`, with `alarm_status`, of a
//     // workflow of the fixture's; its id.
//     std::int64_t put_workflow_run(admin::WorkflowRunState state, std::int64_t scheduled_time, int alarm_status);
//     bool workflow_run_exists(std::int64_t id);
//   };
//   INSTANTIATE_TYPED_TEST_SUITE_P(Fake, RetentionContract, F);

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "admin/model/alarm_store.h"
#include "admin/model/records.h"
#include "admin/model/retention_store.h"
#include "admin/model/workflow.h"

namespace cronwheel::testing {

namespace retention_contract {

using namespace cronwheel::admin;

constexpr std::int64_t kCutoff = 1'800'000'000'000;

template <class F>
class RetentionContract : public ::testing::Test {
 protected:
  JobLog run(FireState state, std::int64_t scheduled_time, int alarm_status = kAlarmNotNeeded) {
    JobLog l;
    l.state = state;
    l.trigger_type = TriggerType::kSchedule;
    l.scheduled_time = scheduled_time;
    l.admin_node = "node-a";
    l.executor_handler = "report";
    if (state != FireState::kPending && state != FireState::kCancelled) l.trigger_time = scheduled_time + 5;
    if (state == FireState::kSucceeded || state == FireState::kFailed || state == FireState::kLost) {
      l.trigger_code = 200;
      l.handle_time = scheduled_time + 100;
      l.handle_code = state == FireState::kSucceeded ? 200 : 500;
    }
    l.alarm_status = alarm_status;
    return f_.put_run(l);
  }
  F f_;
};

TYPED_TEST_SUITE_P(RetentionContract);

TYPED_TEST_P(RetentionContract, DeletesFinishedRunsOlderThanTheCutoffOnly) {
  auto& f = this->f_;
  auto old_ok = this->run(FireState::kSucceeded, kCutoff - 1);
  auto old_failed = this->run(FireState::kFailed, kCutoff - 2, kAlarmSent);
  auto old_lost = this->run(FireState::kLost, kCutoff - 3, kAlarmNotNeeded);
  auto old_skipped = this->run(FireState::kCancelled, kCutoff - 4, kAlarmFailed);
  auto recent = this->run(FireState::kSucceeded, kCutoff);
  EXPECT_EQ(f.retention().delete_runs_before(kCutoff, 100), 4);
  for (const auto& r : {old_ok, old_failed, old_lost, old_skipped}) EXPECT_FALSE(f.exists(r.id)) << r.id;
  EXPECT_TRUE(f.exists(recent.id));
  EXPECT_EQ(f.retention().delete_runs_before(kCutoff, 100), 0);
}

TYPED_TEST_P(RetentionContract, NeverDeletesFiresInFlightOrRunsWhoseAlarmIsOpen) {
  auto& f = this->f_;
  std::vector<JobLog> kept = {
      this->run(FireState::kPending, kCutoff - 10, kAlarmUndecided),
      this->run(FireState::kSending, kCutoff - 11, kAlarmUndecided),
      this->run(FireState::kTriggered, kCutoff - 12, kAlarmUndecided),
      this->run(FireState::kFailed, kCutoff - 13, kAlarmUndecided),  // alarm not decided yet
      this->run(FireState::kLost, kCutoff - 14, kAlarmClaimed),      // alarm being sent
  };
  auto done = this->run(FireState::kSucceeded, kCutoff - 15, kAlarmUndecided);  // a success needs no alarm
  EXPECT_EQ(f.retention().delete_runs_before(kCutoff, 100), 1);
  EXPECT_FALSE(f.exists(done.id));
  for (const auto& r : kept) EXPECT_TRUE(f.exists(r.id)) << r.id;
}

TYPED_TEST_P(RetentionContract, DeletesInBatchesOldestFirst) {
  auto& f = this->f_;
  std::vector<JobLog> runs;
  for (int i = 0; i < 5; ++i) runs.push_back(this->run(FireState::kSucceeded, kCutoff - 1000 + i));
  EXPECT_EQ(f.retention().delete_runs_before(kCutoff, 2), 2);
  EXPECT_FALSE(f.exists(runs[0].id));
  EXPECT_FALSE(f.exists(runs[1].id));
  EXPECT_TRUE(f.exists(runs[2].id));
  EXPECT_EQ(f.retention().delete_runs_before(kCutoff, 2), 2);
  EXPECT_EQ(f.retention().delete_runs_before(kCutoff, 2), 1);
  EXPECT_EQ(f.retention().delete_runs_before(kCutoff, 2), 0);
}

TYPED_TEST_P(RetentionContract, DeletesEndedWorkflowRunsOlderThanTheCutoffWhoseAlarmIsDecided) {
  auto& f = this->f_;
  using S = WorkflowRunState;
  const std::vector<std::int64_t> gone = {
      f.put_workflow_run(S::kSucceeded, kCutoff - 1, kAlarmUndecided),  // a success needs no alarm
      f.put_workflow_run(S::kFailed, kCutoff - 2, kAlarmSent),
      f.put_workflow_run(S::kTimedOut, kCutoff - 3, kAlarmNotNeeded),
      f.put_workflow_run(S::kCancelled, kCutoff - 4, kAlarmUndecided),
      f.put_workflow_run(S::kSkipped, kCutoff - 5, kAlarmUndecided),
  };
  const std::vector<std::int64_t> kept = {
      f.put_workflow_run(S::kRunning, kCutoff - 10, kAlarmUndecided),
      f.put_workflow_run(S::kWaiting, kCutoff - 11, kAlarmUndecided),
      f.put_workflow_run(S::kFailed, kCutoff - 12, kAlarmUndecided),   // alarm not decided yet
      f.put_workflow_run(S::kTimedOut, kCutoff - 13, kAlarmClaimed),  // alarm being sent
      f.put_workflow_run(S::kSucceeded, kCutoff, kAlarmUndecided),     // not older than the cutoff
  };
  EXPECT_EQ(f.retention().delete_workflow_runs_before(kCutoff, 3), 3) << "at most a batch";
  EXPECT_EQ(f.retention().delete_workflow_runs_before(kCutoff, 3), 2);
  EXPECT_EQ(f.retention().delete_workflow_runs_before(kCutoff, 3), 0);
  for (auto id : gone) EXPECT_FALSE(f.workflow_run_exists(id)) << id;
  for (auto id : kept) EXPECT_TRUE(f.workflow_run_exists(id)) << id;
}

REGISTER_TYPED_TEST_SUITE_P(RetentionContract, DeletesFinishedRunsOlderThanTheCutoffOnly,
                            NeverDeletesFiresInFlightOrRunsWhoseAlarmIsOpen, DeletesInBatchesOldestFirst,
                            DeletesEndedWorkflowRunsOlderThanTheCutoffWhoseAlarmIsDecided);

}  // namespace retention_contract

}  // namespace cronwheel::testing
