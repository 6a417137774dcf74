// The workflow runner's pass over the fake workflow store: scheduled runs, waiting runs started
// once there is room, timeouts, kills of the node runs of ended runs, and the runs by state.

#include "admin/scheduler/workflow_runner.h"

#include <gtest/gtest.h>

#include "common/timer/hierarchical_wheel_timer.h"
#include "common/timer/recurring_task.h"
#include "tests/support/fake_clock.h"
#include "tests/support/fake_stores.h"
#include "tests/support/fake_workflow_store.h"

namespace cronwheel::admin {
namespace {

constexpr std::int64_t kNow = 1'767'225'600'000;

class WorkflowRunnerTest : public ::testing::Test {
 protected:
  WorkflowRunnerTest() {
    clock_.set_wall_ms(kNow);
    Group g;
    g.app_name = "runner";
    g.title = "runner";
    group_ = stores_.groups().create(g, actor_).id;
    Job j;
    j.job_group = group_;
    j.name = "step";
    j.job_desc = "step";
    j.executor_handler = "echo";
    job_ = stores_.jobs().create(j, actor_).id;
  }

  Workflow one_node(const std::string& name) {
    Workflow w;
    w.job_group = group_;
    w.name = name;
    WorkflowNode n;
    n.key = "only";
    n.job_id = job_;
    w.graph.nodes.push_back(n);
    return w;
  }
  WorkflowStore::Changed trigger(std::int64_t id) {
    WorkflowStore::TriggerRequest r;
    r.workflow_id = id;
    r.now = clock_.now_ms();
    r.node_id = "node-a";
    r.actor = actor_;
    return store_.trigger(r);
  }

  testing::FakeClock clock_;
  common::HierarchicalWheelTimer timer_{clock_, {}, {.manual = true}};
  common::RecurringTasks tasks_{timer_, clock_};
  testing::FakeStores stores_{clock_};
  testing::FakeWorkflowStore store_{stores_.jobs(), clock_};
  Actor actor_{std::nullopt, "author", ""};
  std::int64_t group_ = 0, job_ = 0;
  std::vector<JobLog> written_;
  std::vector<JobLog> killed_;
  WorkflowRunner runner_{store_,
                         tasks_,
                         "node-a",
                         [this](const std::vector<JobLog>& fires) { written_.insert(written_.end(), fires.begin(), fires.end()); },
                         [this](const JobLog& run) { killed_.push_back(run); },
                         WorkflowRunner::Options{}};
};

TEST_F(WorkflowRunnerTest, APassCreatesScheduledRunsAndSendsTheirFirstNodes) {
  Workflow w = one_node("scheduled");
  w.schedule_type = ScheduleType::kFixRate;
  w.schedule_conf = "10";
  const auto wf = store_.create(w, actor_);
  store_.set_status(wf.id, 1, kNow, actor_);
  runner_.pass_once();
  ASSERT_EQ(written_.size(), 1u);
  EXPECT_EQ(written_[0].scheduled_time, kNow);
  EXPECT_EQ(store_.get(wf.id)->trigger_next_time, kNow + 10'000);
}

TEST_F(WorkflowRunnerTest, APassStartsAWaitingRunOnceTheRunBeforeEnded) {
  const auto wf = store_.create(one_node("waiting"), actor_);
  const auto first = trigger(wf.id);
  const auto second = trigger(wf.id);
  runner_.pass_once();
  EXPECT_TRUE(written_.empty()) << "no room yet";
  store_.sent(first.fires[0].id);
  store_.end_node_run(first.fires[0].id, true, "done", std::nullopt, kNow, "node-a");
  runner_.pass_once();
  ASSERT_EQ(written_.size(), 1u);
  EXPECT_EQ(written_[0].workflow_run_id, second.runs[0].id);
}

TEST_F(WorkflowRunnerTest, APassTimesRunsOutAndKillsTheirRunningNodes) {
  Workflow w = one_node("slow");
  w.timeout_seconds = 30;
  const auto wf = store_.create(w, actor_);
  const auto run = trigger(wf.id);
  store_.sent(run.fires[0].id);
  runner_.pass_once();
  EXPECT_TRUE(killed_.empty());
  clock_.set_wall_ms(kNow + 30'000);
  runner_.pass_once();
  EXPECT_EQ(store_.get_run(run.runs[0].id)->run.state, WorkflowRunState::kTimedOut);
  ASSERT_EQ(killed_.size(), 1u);
  EXPECT_EQ(killed_[0].id, run.fires[0].id);
}

TEST_F(WorkflowRunnerTest, RunsAreCountedByStateAtTheFirstPassThenEveryInterval) {
  const auto wf = store_.create(one_node("counted"), actor_);
  EXPECT_TRUE(runner_.run_counts().empty()) << "before the first pass";
  trigger(wf.id);
  runner_.pass_once();
  EXPECT_EQ(runner_.run_counts(), (std::vector<std::pair<WorkflowRunState, std::int64_t>>{{WorkflowRunState::kRunning, 1}}));
  trigger(wf.id);
  clock_.set_wall_ms(kNow + 14'999);
  runner_.pass_once();
  EXPECT_EQ(runner_.run_counts().size(), 1u) << "not counted again before count_every";
  clock_.set_wall_ms(kNow + 15'000);
  runner_.pass_once();
  EXPECT_EQ(runner_.run_counts(), (std::vector<std::pair<WorkflowRunState, std::int64_t>>{
                                      {WorkflowRunState::kRunning, 1}, {WorkflowRunState::kWaiting, 1}}));
}

}  // namespace
}  // namespace cronwheel::admin
