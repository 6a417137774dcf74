#pragma once

// The workflow store's contract (admin/model/workflow_store.h) as one typed GoogleTest suite, run
// against FakeWorkflowStore (tests/unit/admin/model/fake_workflow_store_test.cpp, label unit) and
// PgWorkflowStore (tests/integration/workflow_contract_pgtest.cpp, label db).
//
//   struct F {
//     F();                                     // fresh stores; a group of the fixture's
//     admin::WorkflowStore& workflows();
//     std::int64_t group();
//     std::int64_t job(const std::string& name);  // a BEAN job of the group, no retries
//     void sent(std::int64_t log_id);          // a node run pending → triggered, as a send does
//     // Its executor's result, as the completion records it; answers the fires it led to.
//     std::vector<admin::JobLog> end(std::int64_t log_id, bool ok, const std::string& message,
//                                    std::optional<std::string> output, std::int64_t now);
//     std::optional<admin::JobLog> node_run(std::int64_t log_id);
//     std::int64_t calendar(const std::string& name);  // a calendar, no days; answers its id
//   };
//   INSTANTIATE_TYPED_TEST_SUITE_P(Fake, WorkflowContract, F);

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "admin/model/workflow_store.h"
#include "admin/scheduler/fire_decision.h"

namespace cronwheel::testing {

namespace workflow_contract {

using namespace cronwheel::admin;

constexpr std::int64_t kNow = 1'767'225'600'000;  // 2026-01-01T00:00:00Z
inline const Actor kAuthor{std::nullopt, "author", "127.0.0.1"};

template <class F>
class WorkflowContract : public ::testing::Test {
 protected:
  Workflow make(const std::string& name, std::vector<std::string> keys, std::vector<std::pair<std::string, std::string>> edges,
                OverlapPolicy overlap = OverlapPolicy::kWait, int max_parallel = 1) {
    Workflow w;
    w.job_group = f_.group();
    w.name = name;
    w.overlap = overlap;
    w.max_parallel = max_parallel;
    for (const auto& k : keys) {
      WorkflowNode n;
      n.key = k;
      n.job_id = f_.job(name + "-" + k);
      w.graph.nodes.push_back(n);
    }
    for (auto& [from, to] : edges) w.graph.edges.push_back({from, to});
    return w;
  }
  Workflow create(const Workflow& w) { return f_.workflows().create(w, kAuthor); }
  Workflow diamond(const std::string& name) {
    return create(make(name, {"a", "b", "c", "d"}, {{"a", "b"}, {"a", "c"}, {"b", "d"}, {"c", "d"}}));
  }
  WorkflowStore::Changed trigger(std::int64_t id, const std::string& params = "{}") {
    WorkflowStore::TriggerRequest r;
    r.workflow_id = id;
    r.params_json = params;
    r.now = kNow;
    r.node_id = "node-a";
    r.actor = kAuthor;
    return f_.workflows().trigger(r);
  }
  // Sends and ends a node run; answers the fires its end led to.
  std::vector<JobLog> finish(const JobLog& fire, bool ok = true, const std::string& message = "done",
                             std::optional<std::string> output = std::nullopt) {
    f_.sent(fire.id);
    return f_.end(fire.id, ok, message, std::move(output), kNow);
  }
  WorkflowStore::RunDetail run(std::int64_t id) { return *f_.workflows().get_run(id); }
  static const WorkflowRunNode& node(const WorkflowStore::RunDetail& d, const std::string& key) {
    for (const auto& n : d.nodes) {
      if (n.key == key) return n;
    }
    throw std::logic_error("no node " + key);
  }
  static std::vector<std::string> keys(const std::vector<JobLog>& fires) {
    std::vector<std::string> out;
    for (const auto& f : fires) out.push_back(f.workflow_node);
    std::sort(out.begin(), out.end());
    return out;
  }
  F f_;
};

TYPED_TEST_SUITE_P(WorkflowContract);

TYPED_TEST_P(WorkflowContract, CreatesReadsListsAndRefusesATakenName) {
  auto& store = this->f_.workflows();
  Workflow w = this->make("etl", {"a"}, {});
  w.description = "Nightly ETL";
  WorkflowParam day;
  day.name = "day";
  day.default_value = "today";
  day.has_default = true;
  w.params = {day};
  const Workflow created = this->create(w);
  EXPECT_GT(created.id, 0);
  EXPECT_EQ(created.version, 1);
  EXPECT_EQ(created.trigger_status, 0);
  EXPECT_EQ(created.graph, w.graph);
  EXPECT_EQ(created.params, w.params);
  EXPECT_EQ(store.get(created.id), created);
  EXPECT_EQ(store.get(created.id + 1000), std::nullopt);
  WorkflowStore::Filter filter;
  filter.text = "nightly";
  EXPECT_EQ(store.list(filter).items.size(), 1u);
  filter.text = "";
  filter.name = "nope";
  EXPECT_EQ(store.list(filter).items.size(), 0u);
  filter.name = "";
  filter.scope = std::vector<std::int64_t>{this->f_.group() + 1000};
  EXPECT_EQ(store.list(filter).items.size(), 0u) << "another group's user sees nothing";
  try {
    this->create(this->make("etl", {"a"}, {}));
    FAIL() << "a taken name was accepted";
  } catch (const Conflict& e) {
    EXPECT_EQ(e.field(), "name");
  }
  Workflow missing = this->make("missing", {"a"}, {});
  missing.graph.nodes[0].job_id = 999'999;
  try {
    this->create(missing);
    FAIL() << "a node naming no job was accepted";
  } catch (const Conflict& e) {
    EXPECT_EQ(e.field(), "nodes[0].jobId");
  }
}

TYPED_TEST_P(WorkflowContract, AnUpdateNamesTheVersionItRead) {
  auto& store = this->f_.workflows();
  Workflow w = this->create(this->make("versioned", {"a"}, {}));
  w.description = "first edit";
  const Workflow after = store.update(w, 0, 0, kAuthor);
  EXPECT_EQ(after.version, 2);
  EXPECT_EQ(after.description, "first edit");
  w.description = "a stale edit";  // still version 1
  try {
    store.update(w, 0, 0, kAuthor);
    FAIL() << "a stale version was accepted";
  } catch (const Conflict& e) {
    EXPECT_EQ(e.field(), "version");
  }
  EXPECT_EQ(store.get(w.id)->description, "first edit");
}

TYPED_TEST_P(WorkflowContract, ACalendarUseRoundTripsThroughCreateUpdateAndGet) {
  auto& store = this->f_.workflows();
  const auto holidays = this->f_.calendar("cn-holidays");
  const auto workdays = this->f_.calendar("cn-workdays");
  EXPECT_EQ(this->create(this->make("plain", {"a"}, {})).calendar, CalendarUse{}) << "none by default";
  Workflow w = this->make("calendared", {"a"}, {});
  w.calendar = {holidays, common::CalendarMode::kOnly};
  Workflow created = this->create(w);
  EXPECT_EQ(created.calendar, w.calendar);
  EXPECT_EQ(store.get(created.id), created);
  created.calendar = {workdays, common::CalendarMode::kSkip};
  const Workflow updated = store.update(created, 0, 0, kAuthor);
  EXPECT_EQ(updated.calendar, (CalendarUse{workdays, common::CalendarMode::kSkip}));
  EXPECT_EQ(store.get(created.id)->calendar, updated.calendar);
  EXPECT_EQ(store.set_status(created.id, 0, 0, kAuthor).calendar, updated.calendar) << "kept by a stop";
  Workflow cleared = *store.get(created.id);
  cleared.calendar = {};
  EXPECT_EQ(store.update(cleared, 0, 0, kAuthor).calendar, CalendarUse{});
  EXPECT_EQ(store.get(created.id)->calendar, CalendarUse{});
}

TYPED_TEST_P(WorkflowContract, ADiamondRunsEachNodeOnceAndPassesOutputsDownstream) {
  Workflow w = this->make("diamond", {"a", "b", "c", "d"}, {{"a", "b"}, {"a", "c"}, {"b", "d"}, {"c", "d"}});
  w.graph.nodes[3].params = "${params.day}: ${nodes.b.output.rows} + ${nodes.c.output}";
  w.graph.nodes[3].params_set = true;
  WorkflowParam day;
  day.name = "day";
  w.params = {day};
  const Workflow wf = this->create(w);
  auto started = this->trigger(wf.id, R"({"day":"friday"})");
  ASSERT_EQ(started.runs.size(), 1u);
  const auto id = started.runs[0].id;
  EXPECT_EQ(started.runs[0].state, WorkflowRunState::kRunning);
  ASSERT_EQ(this->keys(started.fires), std::vector<std::string>{"a"});
  EXPECT_EQ(started.fires[0].trigger_type, TriggerType::kWorkflow);
  EXPECT_EQ(started.fires[0].state, FireState::kPending);
  EXPECT_EQ(started.fires[0].admin_node, "node-a");
  EXPECT_EQ(started.fires[0].workflow_run_id, id);

  auto next = this->finish(started.fires[0]);
  ASSERT_EQ(this->keys(next), (std::vector<std::string>{"b", "c"}));
  const JobLog& b = next[0].workflow_node == "b" ? next[0] : next[1];
  const JobLog& c = next[0].workflow_node == "c" ? next[0] : next[1];
  EXPECT_EQ(b.parent_log_id, started.fires[0].id);
  EXPECT_TRUE(this->finish(b, true, "b done", std::string(R"({"rows":7})")).empty()) << "d waits for c";
  EXPECT_EQ(this->node(this->run(id), "d").state, NodeState::kWaiting);
  auto last = this->finish(c, true, "c text");
  ASSERT_EQ(this->keys(last), std::vector<std::string>{"d"});
  EXPECT_EQ(last[0].executor_param, "friday: 7 + c text");
  EXPECT_TRUE(this->finish(last[0]).empty());

  const auto d = this->run(id);
  EXPECT_EQ(d.run.state, WorkflowRunState::kSucceeded);
  EXPECT_TRUE(d.run.ended_at.has_value());
  for (const auto& n : d.nodes) {
    EXPECT_EQ(n.state, NodeState::kSucceeded) << n.key;
    EXPECT_EQ(n.attempts, 1) << n.key;
    EXPECT_EQ(n.run_state, FireState::kSucceeded) << n.key;
  }
  EXPECT_EQ(this->node(d, "b").output, R"({"rows":7})");
  EXPECT_EQ(this->node(d, "c").output, R"("c text")");
  EXPECT_EQ(this->node(d, "d").param, "friday: 7 + c text");
}

TYPED_TEST_P(WorkflowContract, AFailureFailsTheRunAndARerunFromItKeepsWhatSucceeded) {
  const Workflow wf = this->diamond("failing");
  auto started = this->trigger(wf.id);
  const auto id = started.runs[0].id;
  auto next = this->finish(started.fires[0]);
  const JobLog& b = next[0].workflow_node == "b" ? next[0] : next[1];
  const JobLog& c = next[0].workflow_node == "c" ? next[0] : next[1];
  EXPECT_TRUE(this->finish(b, false, "boom").empty());
  auto failed = this->run(id);
  EXPECT_EQ(failed.run.state, WorkflowRunState::kFailed);
  EXPECT_EQ(failed.run.reason, "node b failed: run " + std::to_string(b.id) + " failed: boom");
  EXPECT_EQ(this->node(failed, "d").state, NodeState::kCancelled);
  EXPECT_EQ(this->node(failed, "c").state, NodeState::kStarted) << "FINISH: it runs to its end";

  auto refused = this->f_.workflows().rerun(id, "b", kNow, "node-a", kAuthor);
  EXPECT_EQ(refused.status, WorkflowStore::RunChange::Status::kRefused) << "c still runs";
  EXPECT_NE(refused.reason.find("node c is still running"), std::string::npos) << refused.reason;
  EXPECT_TRUE(this->finish(c).empty()) << "a failed run starts nothing";

  auto rerun = this->f_.workflows().rerun(id, "b", kNow, "node-a", kAuthor);
  ASSERT_EQ(rerun.status, WorkflowStore::RunChange::Status::kChanged) << rerun.reason;
  ASSERT_EQ(this->keys(rerun.changed.fires), std::vector<std::string>{"b"});
  EXPECT_EQ(this->run(id).run.state, WorkflowRunState::kRunning);
  auto d = this->finish(rerun.changed.fires[0]);
  ASSERT_EQ(this->keys(d), std::vector<std::string>{"d"});
  this->finish(d[0]);
  const auto done = this->run(id);
  EXPECT_EQ(done.run.state, WorkflowRunState::kSucceeded);
  EXPECT_EQ(this->node(done, "b").attempts, 2);
  EXPECT_EQ(this->node(done, "a").attempts, 1);
  EXPECT_EQ(this->node(done, "c").attempts, 1);
  EXPECT_EQ(this->f_.workflows().rerun(id, "b", kNow, "node-a", kAuthor).status,
            WorkflowStore::RunChange::Status::kRefused)
      << "a run that succeeded";
}

TYPED_TEST_P(WorkflowContract, OverlapWaitsSkipsOrRunsInParallel) {
  const Workflow wait = this->create(this->make("wait", {"a"}, {}));
  auto first = this->trigger(wait.id);
  auto second = this->trigger(wait.id);
  EXPECT_EQ(second.runs[0].state, WorkflowRunState::kWaiting);
  EXPECT_TRUE(second.fires.empty());
  EXPECT_TRUE(this->f_.workflows().start_waiting(kNow, "node-a", 10).runs.empty()) << "no room yet";
  EXPECT_TRUE(this->finish(first.fires[0]).empty()) << "a run's end does not start the next itself";
  auto started = this->f_.workflows().start_waiting(kNow, "node-a", 10);
  ASSERT_EQ(started.runs.size(), 1u) << "the waiting run starts once the one before ended";
  EXPECT_EQ(started.runs[0].id, second.runs[0].id);
  EXPECT_EQ(started.runs[0].state, WorkflowRunState::kRunning);
  ASSERT_EQ(started.fires.size(), 1u);
  EXPECT_EQ(started.fires[0].workflow_run_id, second.runs[0].id);

  const Workflow skip = this->create(this->make("skip", {"a"}, {}, OverlapPolicy::kSkip));
  this->trigger(skip.id);
  auto skipped = this->trigger(skip.id);
  EXPECT_EQ(skipped.runs[0].state, WorkflowRunState::kSkipped);
  EXPECT_TRUE(skipped.runs[0].ended_at.has_value());

  const Workflow parallel = this->create(this->make("parallel", {"a"}, {}, OverlapPolicy::kParallel, 2));
  EXPECT_EQ(this->trigger(parallel.id).runs[0].state, WorkflowRunState::kRunning);
  EXPECT_EQ(this->trigger(parallel.id).runs[0].state, WorkflowRunState::kRunning);
  EXPECT_EQ(this->trigger(parallel.id).runs[0].state, WorkflowRunState::kWaiting);
}

TYPED_TEST_P(WorkflowContract, AScanCreatesEachScheduledRunOnceAndAdvancesTheWorkflow) {
  auto& store = this->f_.workflows();
  Workflow w = this->make("scheduled", {"a"}, {}, OverlapPolicy::kParallel, 10);
  w.schedule_type = ScheduleType::kFixRate;
  w.schedule_conf = "2";
  const Workflow wf = this->create(w);
  store.set_status(wf.id, 1, kNow, kAuthor);
  auto decide = [](const std::vector<DueJob>& due) { return decide_fires(due, kNow); };
  auto scanned = store.scan("node-a", kNow, kNow + kPreReadWindowMs, 100, decide);
  ASSERT_EQ(scanned.runs.size(), 3u) << "now, +2 s, +4 s";
  EXPECT_EQ(scanned.runs[1].scheduled_time, kNow + 2000);
  EXPECT_EQ(scanned.runs[0].trigger_type, TriggerType::kSchedule);
  EXPECT_EQ(scanned.fires.size(), 3u);
  EXPECT_EQ(scanned.fires[2].scheduled_time, kNow + 4000) << "a run's first nodes are due at its time";
  EXPECT_EQ(store.get(wf.id)->trigger_next_time, kNow + 6000);
  EXPECT_TRUE(store.scan("node-b", kNow, kNow + kPreReadWindowMs, 100, decide).runs.empty());
  WorkflowStore::RunFilter filter;
  filter.workflow_id = wf.id;
  EXPECT_EQ(store.list_runs(filter).items.size(), 3u);
}

TYPED_TEST_P(WorkflowContract, ACancelDropsPendingNodeRunsAndMarksRunningOnesToKill) {
  auto& store = this->f_.workflows();
  const Workflow wf = this->diamond("cancelled");
  auto started = this->trigger(wf.id);
  const auto id = started.runs[0].id;
  auto next = this->finish(started.fires[0]);
  const JobLog& b = next[0].workflow_node == "b" ? next[0] : next[1];
  const JobLog& c = next[0].workflow_node == "c" ? next[0] : next[1];
  this->f_.sent(b.id);
  auto change = store.cancel(id, kNow, "node-a", kAuthor);
  ASSERT_EQ(change.status, WorkflowStore::RunChange::Status::kChanged);
  const auto d = this->run(id);
  EXPECT_EQ(d.run.state, WorkflowRunState::kCancelled);
  EXPECT_EQ(d.run.reason, "cancelled by author");
  EXPECT_EQ(this->node(d, "c").state, NodeState::kCancelled);
  EXPECT_EQ(this->f_.node_run(c.id)->state, FireState::kCancelled);
  EXPECT_EQ(this->node(d, "d").state, NodeState::kCancelled);
  const auto kill = store.kill_candidates(10);
  ASSERT_EQ(kill.size(), 1u);
  EXPECT_EQ(kill[0].id, b.id);
  EXPECT_TRUE(this->f_.end(b.id, false, "killed", std::nullopt, kNow).empty());
  EXPECT_TRUE(store.kill_candidates(10).empty());
  EXPECT_EQ(store.cancel(id, kNow, "node-a", kAuthor).status, WorkflowStore::RunChange::Status::kRefused);
  EXPECT_EQ(store.cancel(id + 1000, kNow, "node-a", kAuthor).status, WorkflowStore::RunChange::Status::kNotFound);
}

TYPED_TEST_P(WorkflowContract, ARunPastItsDeadlineTimesOut) {
  auto& store = this->f_.workflows();
  Workflow w = this->make("slow", {"a"}, {});
  w.timeout_seconds = 60;
  const Workflow wf = this->create(w);
  auto started = this->trigger(wf.id);
  EXPECT_EQ(started.runs[0].deadline, kNow + 60'000);
  EXPECT_TRUE(store.time_out(kNow + 59'999, "node-a", 10).runs.empty());
  auto ended = store.time_out(kNow + 60'000, "node-a", 10);
  ASSERT_EQ(ended.runs.size(), 1u);
  EXPECT_EQ(ended.runs[0].state, WorkflowRunState::kTimedOut);
  EXPECT_EQ(ended.runs[0].reason, "timed out: still running 60 s after it started");
}

TYPED_TEST_P(WorkflowContract, AFailedRunIsClaimedForItsAlarmOnceWhenItHasRecipients) {
  auto& store = this->f_.workflows();
  Workflow quiet = this->make("quiet", {"a"}, {});
  Workflow loud = this->make("loud", {"a"}, {});
  loud.alarm_email = "ops@example.com";
  const Workflow q = this->create(quiet);
  const Workflow l = this->create(loud);
  this->finish(this->trigger(q.id).fires[0], false, "boom");
  const auto loud_run = this->trigger(l.id);
  this->finish(loud_run.fires[0], false, "boom");
  auto claimed = store.claim_alarms(kNow, 600'000, 10);
  ASSERT_EQ(claimed.size(), 1u);
  EXPECT_EQ(claimed[0].run.run.id, loud_run.runs[0].id);
  EXPECT_EQ(claimed[0].workflow.alarm_email, "ops@example.com");
  EXPECT_EQ(claimed[0].run.nodes.size(), 1u);
  EXPECT_TRUE(store.claim_alarms(kNow, 600'000, 10).empty()) << "claimed once";
  EXPECT_EQ(store.claim_alarms(kNow + 600'001, 600'000, 10).size(), 1u) << "a stale claim is claimed again";
  store.finish_alarm(loud_run.runs[0].id, kNow + 600'001, AlarmOutcome::kSent);
  EXPECT_EQ(this->run(loud_run.runs[0].id).run.alarm_status, kAlarmSent);
  EXPECT_TRUE(store.claim_alarms(kNow + 2'000'000, 600'000, 10).empty());
}

TYPED_TEST_P(WorkflowContract, CountsRunsByStateAndRefusesToDeleteAWorkflowWithARunGoingOn) {
  auto& store = this->f_.workflows();
  const Workflow wf = this->create(this->make("counted", {"a"}, {}, OverlapPolicy::kParallel, 5));
  auto one = this->trigger(wf.id);
  this->trigger(wf.id);
  this->finish(one.fires[0]);
  EXPECT_EQ(store.count_runs(), (std::vector<std::pair<WorkflowRunState, std::int64_t>>{
                                    {WorkflowRunState::kRunning, 1}, {WorkflowRunState::kSucceeded, 1}}));
  EXPECT_THROW(store.remove(wf.id, kAuthor), Conflict);
  EXPECT_TRUE(store.get(wf.id).has_value());
}

REGISTER_TYPED_TEST_SUITE_P(WorkflowContract, CreatesReadsListsAndRefusesATakenName, AnUpdateNamesTheVersionItRead,
                            ACalendarUseRoundTripsThroughCreateUpdateAndGet,
                            ADiamondRunsEachNodeOnceAndPassesOutputsDownstream,
                            AFailureFailsTheRunAndARerunFromItKeepsWhatSucceeded, OverlapWaitsSkipsOrRunsInParallel,
                            AScanCreatesEachScheduledRunOnceAndAdvancesTheWorkflow,
                            ACancelDropsPendingNodeRunsAndMarksRunningOnesToKill, ARunPastItsDeadlineTimesOut,
                            AFailedRunIsClaimedForItsAlarmOnceWhenItHasRecipients,
                            CountsRunsByStateAndRefusesToDeleteAWorkflowWithARunGoingOn);

}  // namespace workflow_contract
}  // namespace cronwheel::testing
