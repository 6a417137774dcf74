// The backfill pump's passes over the fake stores: the oldest instants first, never more
// unfinished runs than max_concurrent, done once the last run ended, calendars and a job that
// can no longer be backfilled; a workflow's backfill's runs, their first nodes handed to the
// node with the instant as their logical time.

#include "admin/scheduler/backfill_pump.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "common/cron/cron_expression.h"
#include "common/timer/hierarchical_wheel_timer.h"
#include "common/timer/recurring_task.h"
#include "tests/support/fake_backfill_store.h"
#include "tests/support/fake_calendar_store.h"
#include "tests/support/fake_clock.h"
#include "tests/support/fake_stores.h"
#include "tests/support/fake_workflow_store.h"

namespace cronwheel::admin {
namespace {

constexpr std::int64_t kPumpNow = 1'767'225'600'000;  // 2026-01-01T00:00:00Z, a Thursday
constexpr std::int64_t kPumpHour = 3'600'000;
constexpr std::int64_t kPumpDay = 24 * kPumpHour;

class BackfillPumpTest : public ::testing::Test {
 protected:
  BackfillPumpTest() {
    clock_.set_wall_ms(kPumpNow);
    Group g;
    g.app_name = "pumped";
    g.title = "pumped";
    group_ = stores_.groups().create(g, actor_).id;
  }

  std::int64_t job(const std::string& cron, CalendarUse calendar = {}) {
    Job j;
    j.job_group = group_;
    j.job_desc = "backfilled";
    j.schedule_type = ScheduleType::kCron;
    j.schedule_conf = cron;
    j.executor_handler = "report";
    j.calendar = calendar;
    return stores_.jobs().create(j, actor_).id;
  }

  Backfill backfill(std::int64_t job_id, std::int64_t from, std::int64_t to, int max_concurrent,
                    OnExisting on_existing = OnExisting::kSkip) {
    Backfill b;
    b.job_id = job_id;
    b.from = from;
    b.to = to;
    b.max_concurrent = max_concurrent;
    b.on_existing = on_existing;
    b.created_by = "author";
    return store_.create(b, actor_);
  }

  std::vector<JobLog> runs(std::int64_t backfill_id) {
    return stores_.with_state([&](testing::fake_stores_detail::State& s) {
      std::vector<JobLog> out;
      for (const auto& [id, l] : s.logs) {
        if (l.backfill_id == backfill_id) out.push_back(l);
      }
      return out;
    });
  }

  // Every pending run of the backfill sent and succeeded, as the trigger pools and the results
  // would; answers how many.
  int finish(std::int64_t backfill_id, int at_most = 1'000) {
    return stores_.with_state([&](testing::fake_stores_detail::State& s) {
      int n = 0;
      for (auto& [id, l] : s.logs) {
        if (l.backfill_id == backfill_id && l.state == FireState::kPending && n < at_most) {
          l.state = FireState::kSucceeded;
          l.trigger_time = s.now();
          ++n;
        }
      }
      return n;
    });
  }

  testing::FakeClock clock_;
  common::HierarchicalWheelTimer timer_{clock_, {}, {.manual = true}};
  common::RecurringTasks tasks_{timer_, clock_};
  // A workflow of two nodes, `first` then `second`, on an hourly CRON schedule (or `cron`).
  Workflow workflow(const std::string& cron = "0 0 * * * ?", ScheduleType type = ScheduleType::kCron) {
    Workflow w;
    w.job_group = group_;
    w.name = "etl";
    w.schedule_type = type;
    w.schedule_conf = type == ScheduleType::kNone ? "" : cron;
    const auto step = job("0 0 * * * ?");
    w.graph.nodes = {{"first", step, "", false, NodeFailurePolicy::kFail}, {"second", step, "", false, NodeFailurePolicy::kFail}};
    w.graph.edges = {{"first", "second"}};
    return workflows_.create(w, actor_);
  }

  Backfill workflow_backfill(std::int64_t workflow_id, std::int64_t from, std::int64_t to, int max_concurrent) {
    Backfill b;
    b.workflow_id = workflow_id;
    b.params = "{}";
    b.from = from;
    b.to = to;
    b.max_concurrent = max_concurrent;
    b.created_by = "author";
    return store_.create(b, actor_);
  }

  std::vector<WorkflowRun> workflow_runs(std::int64_t backfill_id) {
    WorkflowStore::RunFilter filter;
    filter.backfill_id = backfill_id;
    filter.page.limit = 1'000;
    auto runs = workflows_.list_runs(filter).items;
    std::reverse(runs.begin(), runs.end());  // oldest first
    return runs;
  }

  testing::FakeStores stores_{clock_};
  testing::FakeWorkflowStore workflows_{stores_.jobs(), clock_};
  testing::FakeBackfillStore store_{stores_, &workflows_};
  testing::FakeCalendarStore calendars_{stores_};
  Actor actor_{std::nullopt, "author", ""};
  std::int64_t group_ = 0;
  std::vector<JobLog> handed_over_;
  bool may_write_ = true;
  BackfillPump pump_{store_,
                     stores_.jobs(),
                     workflows_,
                     calendars_,
                     tasks_,
                     "node-a",
                     [this](const std::vector<JobLog>& fires) { handed_over_.insert(handed_over_.end(), fires.begin(), fires.end()); },
                     BackfillPump::Options{std::chrono::milliseconds(1'000), 100, [this] { return may_write_; }}};
};

TEST_F(BackfillPumpTest, WritesTheOldestInstantsUpToMaxConcurrentAndHandsThemToTheNode) {
  const auto j = job("0 0 * * * ?");
  const auto b = backfill(j, kPumpNow - kPumpDay, kPumpNow, 3);
  EXPECT_EQ(pump_.pump_once(), 3u);
  ASSERT_EQ(handed_over_.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(handed_over_[i].scheduled_time, kPumpNow - kPumpDay + i * kPumpHour);
    EXPECT_EQ(handed_over_[i].trigger_type, TriggerType::kBackfill);
    EXPECT_EQ(handed_over_[i].admin_node, "node-a");
    EXPECT_EQ(handed_over_[i].backfill_id, b.id);
  }
  EXPECT_EQ(pump_.pump_once(), 0u) << "three unfinished: no room";
  ASSERT_EQ(finish(b.id, 2), 2);
  EXPECT_EQ(pump_.pump_once(), 2u);
  EXPECT_EQ(handed_over_.back().scheduled_time, kPumpNow - kPumpDay + 4 * kPumpHour);
  EXPECT_EQ(store_.get(b.id)->cursor, kPumpNow - kPumpDay + 4 * kPumpHour);
}

TEST_F(BackfillPumpTest, RunsEveryInstantOnceAndIsDoneOnlyAfterTheLastRunEnded) {
  const auto j = job("0 0 */2 * * ?");
  const auto b = backfill(j, kPumpNow - kPumpDay, kPumpNow, 5);
  for (int pass = 0; pass < 20 && store_.get(b.id)->state == BackfillState::kRunning; ++pass) {
    pump_.pump_once();
    if (pass % 2 == 1) finish(b.id);  // runs end a pass later
  }
  const auto ended = *store_.get(b.id);
  EXPECT_EQ(ended.state, BackfillState::kDone);
  EXPECT_EQ(ended.written, 12);
  EXPECT_EQ(ended.ended_at, kPumpNow);
  EXPECT_EQ(ended.reason, "every instant dealt with: 12 runs written, 0 instants skipped");
  std::map<std::int64_t, int> per_instant;
  for (const auto& r : runs(b.id)) {
    ++per_instant[r.scheduled_time];
    EXPECT_EQ(r.state, FireState::kSucceeded) << "done only after every run ended";
  }
  EXPECT_EQ(per_instant.size(), 12u);
  for (const auto& [at, n] : per_instant) EXPECT_EQ(n, 1);
}

TEST_F(BackfillPumpTest, SkipsInstantsThatRanAndRerunsThemWhenAsked) {
  const auto j = job("0 0 * * * ?");
  const std::int64_t from = kPumpNow - 4 * kPumpHour;
  JobLog ran;
  ran.job_id = j;
  ran.job_group = group_;
  ran.trigger_type = TriggerType::kSchedule;
  ran.scheduled_time = from + kPumpHour;
  ran.state = FireState::kSucceeded;
  ran.admin_node = "node-a";
  stores_.put_log(ran);
  const auto skip = backfill(j, from, kPumpNow, 10);
  pump_.pump_once();
  EXPECT_EQ(store_.get(skip.id)->written, 3);
  EXPECT_EQ(store_.get(skip.id)->skipped, 1);
  finish(skip.id);
  const auto rerun = backfill(j, from, kPumpNow, 10, OnExisting::kRerun);
  handed_over_.clear();
  pump_.pump_once();
  EXPECT_EQ(store_.get(rerun.id)->written, 4) << "every instant again, the one that ran too";
  EXPECT_EQ(store_.get(skip.id)->state, BackfillState::kDone);
}

TEST_F(BackfillPumpTest, InstantsTheJobsCalendarExcludesAreNotRun) {
  Calendar holidays;
  holidays.name = "holidays";
  CalendarDate day;
  day.day = {2025, 12, 31, "New Year's Eve"};
  holidays.dates = {day};
  const auto calendar = calendars_.create(holidays, actor_);
  const auto j = job("0 0 12 * * ?", {calendar.id, common::CalendarMode::kSkip});
  const auto b = backfill(j, kPumpNow - 3 * kPumpDay, kPumpNow, 10);
  pump_.pump_once();
  std::vector<std::string> instants;
  for (const auto& r : runs(b.id)) instants.push_back(common::format_iso8601(r.scheduled_time, "UTC"));
  std::sort(instants.begin(), instants.end());
  EXPECT_EQ(instants, (std::vector<std::string>{"2025-12-29T12:00:00+00:00", "2025-12-30T12:00:00+00:00"}));
}

TEST_F(BackfillPumpTest, ABackfillOfAJobThatNoLongerHasAScheduleEndsCancelledSayingWhy) {
  const auto j = job("0 0 * * * ?");
  const auto b = backfill(j, kPumpNow - kPumpDay, kPumpNow, 2);
  pump_.pump_once();
  Job changed = *stores_.jobs().get(j);
  changed.schedule_type = ScheduleType::kNone;
  changed.schedule_conf = "";
  stores_.jobs().update(changed, actor_);
  EXPECT_EQ(pump_.pump_once(), 0u);
  const auto ended = *store_.get(b.id);
  EXPECT_EQ(ended.state, BackfillState::kCancelled);
  EXPECT_EQ(ended.reason, "stopped: scheduleType: job " + std::to_string(j) +
                              " has schedule NONE: it never fires by itself, so it has no instants to backfill");
  EXPECT_EQ(runs(b.id).size(), 2u) << "the runs it wrote go on";
  EXPECT_EQ(runs(b.id)[0].state, FireState::kPending);
}

TEST_F(BackfillPumpTest, AWorkflowsBackfillWritesItsRunsAtTheInstantsAndHandsTheirFirstNodesToTheNode) {
  const auto w = workflow();
  const std::int64_t from = kPumpNow - 5 * kPumpHour;
  const auto b = workflow_backfill(w.id, from, kPumpNow, 2);
  EXPECT_EQ(pump_.pump_once(), 2u);
  auto runs = workflow_runs(b.id);
  ASSERT_EQ(runs.size(), 2u);
  ASSERT_EQ(handed_over_.size(), 2u) << "each run's first node, and only it";
  for (std::size_t i = 0; i < 2; ++i) {
    const std::int64_t instant = from + static_cast<std::int64_t>(i) * kPumpHour;
    EXPECT_EQ(runs[i].scheduled_time, instant);
    EXPECT_EQ(runs[i].trigger_type, TriggerType::kBackfill);
    EXPECT_EQ(runs[i].state, WorkflowRunState::kRunning);
    EXPECT_EQ(runs[i].backfill_id, b.id);
    EXPECT_EQ(runs[i].created_by, "author");
    EXPECT_EQ(handed_over_[i].workflow_run_id, runs[i].id);
    EXPECT_EQ(handed_over_[i].workflow_node, "first");
    EXPECT_EQ(handed_over_[i].admin_node, "node-a");
    EXPECT_EQ(handed_over_[i].scheduled_time, kPumpNow) << "a node run is due when its run starts";
    EXPECT_EQ(handed_over_[i].logical_time, instant) << "and stands for the instant";
    EXPECT_EQ(log_date_time(handed_over_[i]), instant);
  }
  EXPECT_EQ(pump_.pump_once(), 0u) << "two unfinished: no room";
  // The first node of the first run succeeds: the second node's run stands for the same instant.
  clock_.advance(std::chrono::milliseconds(60'000));
  workflows_.sent(handed_over_[0].id);
  const auto next = workflows_.end_node_run(handed_over_[0].id, true, "", std::nullopt, clock_.now_ms(), "node-a");
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].workflow_node, "second");
  EXPECT_EQ(next[0].scheduled_time, kPumpNow + 60'000);
  EXPECT_EQ(log_date_time(next[0]), from);
  ASSERT_EQ(workflows_.cancel(runs[1].id, clock_.now_ms(), "node-a", actor_).status, WorkflowStore::RunChange::Status::kChanged);
  EXPECT_EQ(pump_.pump_once(), 1u) << "a run ended: room for one";
  EXPECT_EQ(workflow_runs(b.id).back().scheduled_time, from + 2 * kPumpHour);
  EXPECT_EQ(store_.get(b.id)->written, 3);
  EXPECT_EQ(store_.runs(b.id), (BackfillRuns{0, 2, 0, 0, 1}));
}

TEST_F(BackfillPumpTest, AWorkflowsBackfillSkipsTheInstantsItsScheduleRanAndIsDoneWhenItsRunsEnded) {
  const auto w = workflow("0 0 */2 * * ?");
  const std::int64_t from = kPumpNow - 6 * kPumpHour;
  // The schedule's run at from + 2 h, as the workflow scan writes it.
  workflows_.set_status(w.id, 1, from + 2 * kPumpHour, actor_);
  workflows_.scan("node-a", from + 2 * kPumpHour, from + 2 * kPumpHour, 10, [&](const std::vector<DueJob>& due) {
    ScanDecision decision;
    for (const auto& d : due) {
      decision.jobs.push_back({d.id, d.trigger_next_time, d.trigger_next_time, kPumpNow + kPumpDay, 1, ""});
      decision.fires.push_back({d.id, d.trigger_next_time, TriggerType::kSchedule});
    }
    return decision;
  });
  const auto b = workflow_backfill(w.id, from, kPumpNow, 10);
  EXPECT_EQ(pump_.pump_once(), 2u);
  EXPECT_EQ(store_.get(b.id)->skipped, 1);
  std::vector<std::int64_t> instants;
  for (const auto& r : workflow_runs(b.id)) instants.push_back(r.scheduled_time);
  EXPECT_EQ(instants, (std::vector<std::int64_t>{from, from + 4 * kPumpHour}));
  EXPECT_EQ(store_.get(b.id)->state, BackfillState::kRunning) << "its runs are running";
  for (const auto& r : workflow_runs(b.id)) workflows_.cancel(r.id, kPumpNow, "node-a", actor_);
  pump_.pump_once();
  EXPECT_EQ(store_.get(b.id)->state, BackfillState::kDone);
  EXPECT_EQ(store_.get(b.id)->reason, "every instant dealt with: 2 runs written, 1 instant skipped");
}

TEST_F(BackfillPumpTest, ABackfillOfAWorkflowWhoseScheduleBecameNoneEndsCancelledSayingWhy) {
  auto w = workflow();
  const auto b = workflow_backfill(w.id, kPumpNow - kPumpDay, kPumpNow, 1);
  EXPECT_EQ(pump_.pump_once(), 1u);
  w.schedule_type = ScheduleType::kNone;
  w.schedule_conf = "";
  workflows_.update(w, 0, 0, actor_);
  EXPECT_EQ(pump_.pump_once(), 0u);
  const auto ended = *store_.get(b.id);
  EXPECT_EQ(ended.state, BackfillState::kCancelled);
  EXPECT_EQ(ended.reason, "stopped: scheduleType: workflow " + std::to_string(w.id) +
                              " has schedule NONE: it never fires by itself, so it has no instants to backfill");
  EXPECT_EQ(workflow_runs(b.id).front().state, WorkflowRunState::kRunning) << "the run it wrote goes on";
}

TEST_F(BackfillPumpTest, WritesNothingWhileTheNodeMayNotSend) {
  const auto j = job("0 0 * * * ?");
  const auto b = backfill(j, kPumpNow - kPumpDay, kPumpNow, 2);
  may_write_ = false;
  EXPECT_EQ(pump_.pump_once(), 0u);
  EXPECT_TRUE(runs(b.id).empty());
  may_write_ = true;
  EXPECT_EQ(pump_.pump_once(), 2u);
}

TEST_F(BackfillPumpTest, TheRecurringTaskPumpsEverySecond) {
  const auto j = job("0 0 * * * ?");
  const auto b = backfill(j, kPumpNow - kPumpDay, kPumpNow, 1);
  pump_.start();
  tasks_.wait_idle();
  EXPECT_EQ(runs(b.id).size(), 1u) << "a pass at start";
  finish(b.id);
  clock_.advance(std::chrono::milliseconds(1'000));
  timer_.process_until(clock_.steady_now());
  tasks_.wait_idle();
  EXPECT_EQ(runs(b.id).size(), 2u) << "and one a second later";
  pump_.stop();
}

}  // namespace
}  // namespace cronwheel::admin
