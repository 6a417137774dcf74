// PgWorkflowStore on a fresh PostgreSQL database, with the stores that end node runs: what only a
// real database shows. Parallel nodes ending at once start their join exactly once; overlap
// policies; a scheduled run created once across nodes scanning at once; cancel, timeout,
// retries of a node's run; one callback batch ending nodes of many runs at once.

#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <future>
#include <map>
#include <sstream>
#include <thread>

#include <pqxx/pqxx>

#include "admin/model/run_end.h"
#include "admin/pg/database.h"
#include "admin/pg/pg_completion_store.h"
#include "admin/pg/pg_stores.h"
#include "admin/pg/pg_workflow_store.h"
#include "admin/scheduler/fire_decision.h"
#include "tests/support/eventually.h"
#include "tests/support/fake_clock.h"
#include "tests/support/migrated_database.h"
#include "tests/support/test_database.h"

namespace cronwheel::testing {
namespace {

using namespace cronwheel::admin;

constexpr std::int64_t kNow = 1'767'225'600'000;  // 2026-01-01T00:00:00Z
const Actor kOperator{std::nullopt, "operator", "127.0.0.1"};

class WorkflowPgTest : public ::testing::Test {
 protected:
  WorkflowPgTest()
      : migrated_(migrate_schema(db_)),
        database_(pool_options(db_, 6), &prepare),
        stores_(database_, clock_),
        store_(database_, clock_),
        completion_(database_) {
    clock_.set_wall_ms(kNow);
    Group g;
    g.app_name = "wf-pg";
    g.title = "workflows";
    group_ = stores_.stores().groups.create(g, kOperator).id;
  }

  static void prepare(pqxx::connection& c) {
    PgStores::prepare(c);
    PgCompletionStore::prepare(c);
    PgWorkflowStore::prepare(c);
  }

  std::int64_t job(const std::string& name, int retries = 0, std::int64_t group = 0) {
    Job j;
    j.job_group = group != 0 ? group : group_;
    j.name = name;
    j.job_desc = name;
    j.executor_handler = "echo";
    j.executor_fail_retry_count = retries;
    return stores_.stores().jobs.create(j, kOperator).id;
  }

  Workflow workflow(const std::string& name, std::vector<std::string> keys,
                    std::vector<std::pair<std::string, std::string>> edges, OverlapPolicy overlap = OverlapPolicy::kWait,
                    int max_parallel = 1) {
    Workflow w;
    w.job_group = group_;
    w.name = name;
    w.overlap = overlap;
    w.max_parallel = max_parallel;
    for (const auto& k : keys) {
      WorkflowNode n;
      n.key = k;
      n.job_id = job(name + "-" + k);
      w.graph.nodes.push_back(n);
    }
    for (auto& [from, to] : edges) w.graph.edges.push_back({from, to});
    return store_.create(w, kOperator);
  }

  Workflow diamond(const std::string& name, OverlapPolicy overlap = OverlapPolicy::kWait, int max_parallel = 1) {
    return workflow(name, {"a", "b", "c", "d"}, {{"a", "b"}, {"a", "c"}, {"b", "d"}, {"c", "d"}}, overlap, max_parallel);
  }

  WorkflowStore::Changed trigger(std::int64_t workflow_id, const std::string& node = "node-a") {
    WorkflowStore::TriggerRequest r;
    r.workflow_id = workflow_id;
    r.now = clock_.now_ms();
    r.node_id = node;
    r.actor = kOperator;
    return store_.trigger(r);
  }

  // The run row as sent: pending → triggered (what the trigger service does).
  void sent(std::int64_t log_id) {
    database_.transact([&](pqxx::work& tx) {
      tx.exec_params("UPDATE job_log SET state = 'triggered', trigger_time = now(), trigger_code = 200, "
                     "executor_address = 'http://127.0.0.1:9/' WHERE id = $1 AND state = 'pending'",
                     log_id);
    });
  }

  // Its executor's result, as the callback records it; answers the fires it led to.
  std::vector<JobLog> result(std::int64_t log_id, bool ok, const std::string& message = "done",
                             const std::string& node = "node-a", std::optional<std::string> output = std::nullopt) {
    RunResult r;
    r.output = std::move(output);
    r.log_id = log_id;
    r.state = ok ? FireState::kSucceeded : FireState::kFailed;
    r.handle_time = clock_.now_ms();
    r.handle_code = ok ? 200 : 500;
    r.handle_msg = message;
    auto recorded = completion_.record(r, follow_ups_of(ok ? RunEnd::kSucceeded : RunEnd::kFailed, clock_.now_ms(), node));
    EXPECT_EQ(recorded.status, CompletionStore::Status::kRecorded) << log_id;
    return recorded.fires;
  }

  WorkflowStore::RunDetail run(std::int64_t id) { return *store_.get_run(id); }

  static const WorkflowRunNode& node_of(const WorkflowStore::RunDetail& d, const std::string& key) {
    for (const auto& n : d.nodes) {
      if (n.key == key) return n;
    }
    throw std::logic_error("no node " + key);
  }

  std::int64_t count(const std::string& sql) {
    return database_.read([&](pqxx::read_transaction& tx) { return tx.exec1(sql)[0].as<std::int64_t>(); });
  }

  TestDatabase db_;
  bool migrated_;
  FakeClock clock_;
  Database database_;
  PgStores stores_;
  PgWorkflowStore store_;
  PgCompletionStore completion_;
  std::int64_t group_ = 0;
};

TEST_F(WorkflowPgTest, ParallelNodesEndingAtOnceStartTheirJoinExactlyOnce) {
  const Workflow wf = diamond("race", OverlapPolicy::kParallel, 100);
  constexpr int kRuns = 20;
  std::vector<std::int64_t> runs;
  for (int i = 0; i < kRuns; ++i) {
    auto started = trigger(wf.id);
    ASSERT_EQ(started.fires.size(), 1u);
    runs.push_back(started.runs.front().id);
    sent(started.fires[0].id);
    auto next = result(started.fires[0].id, true);
    ASSERT_EQ(next.size(), 2u) << "b and c";
    for (const auto& f : next) sent(f.id);
    // b and c end at the same moment on two nodes.
    std::barrier start(2);
    std::atomic<int> d_fires{0};
    auto end = [&](const JobLog& f, const char* node) {
      start.arrive_and_wait();
      for (const auto& fire : result(f.id, true, "done", node)) {
        if (fire.workflow_node == "d") ++d_fires;
      }
    };
    std::thread one(end, next[0], "node-a");
    std::thread two(end, next[1], "node-b");
    one.join();
    two.join();
    EXPECT_EQ(d_fires.load(), 1) << "run " << runs.back();
  }
  EXPECT_EQ(count("SELECT count(*) FROM job_log WHERE workflow_node = 'd'"), kRuns);
  EXPECT_EQ(count("SELECT count(*) FROM (SELECT workflow_run_id, workflow_node FROM job_log "
                  "GROUP BY 1, 2 HAVING count(*) > 1) twice"),
            0);
}

// The same race held open: b's end is written and not yet committed when c's end comes. c's
// transaction must wait for b's (the run's row lock), then see b done and start d; without the
// lock each would see the other still running and d would never start.
TEST_F(WorkflowPgTest, TheSecondOfTwoParallelEndsWaitsForTheFirstAndStartsTheJoin) {
  // c's job in a group of its own: the two ends share no row but the run's (the run report
  // counts runs per group and hour, and would order them too).
  Group other;
  other.app_name = "wf-pg-other";
  other.title = "other";
  const auto other_group = stores_.stores().groups.create(other, kOperator).id;
  Workflow w;
  w.job_group = group_;
  w.name = "held";
  for (const char* key : {"a", "b", "c", "d"}) {
    WorkflowNode n;
    n.key = key;
    n.job_id = job(std::string("held-") + key, 0, std::string(key) == "c" ? other_group : 0);
    w.graph.nodes.push_back(n);
  }
  w.graph.edges = {{"a", "b"}, {"a", "c"}, {"b", "d"}, {"c", "d"}};
  const Workflow wf = store_.create(w, kOperator);
  auto started = trigger(wf.id);
  sent(started.fires[0].id);
  auto next = result(started.fires[0].id, true);
  ASSERT_EQ(next.size(), 2u);
  ASSERT_EQ(next[0].workflow_node, "b");
  for (const auto& f : next) sent(f.id);
  const auto run_id = started.runs.front().id;

  std::future<std::vector<JobLog>> second;
  database_.transact([&](pqxx::work& tx) {
    tx.exec_params("UPDATE job_log SET state = 'succeeded', handle_time = now(), handle_code = 200 WHERE id = $1",
                   next[0].id);
    JobLog b = next[0];
    b.state = FireState::kSucceeded;
    const WorkflowNodeEnd end{run_id, "b", b.id, NodeState::kSucceeded, "", clock_.now_ms(), "node-a"};
    EXPECT_TRUE(pg::record_workflow_node_end(tx, end, b).empty()) << "c still runs";
    second = std::async(std::launch::async, [&] { return result(next[1].id, true, "done", "node-b"); });
    EXPECT_TRUE(eventually([&] {
      return count("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                   "AND datname = current_database()") > 0;
    })) << "c's end did not wait for b's";
  });
  const auto fires = second.get();
  ASSERT_EQ(fires.size(), 1u);
  EXPECT_EQ(fires[0].workflow_node, "d");
}

// One callback batch (PgCompletionStore::record_all → pg::record_workflow_node_ends) ending nodes
// of several runs of three workflows at once, interleaved: both parents of a diamond's join in one
// run, one parent only in another run of it, a chain's last node, and a node failing under FAIL
// while its sibling still runs. Each run takes its own step; each child starts exactly once.
TEST_F(WorkflowPgTest, OneBatchOfResultsTakesEachRunsStepAndStartsEachChildOnce) {
  const Workflow diamonds = diamond("batch-diamond", OverlapPolicy::kParallel, 2);
  const Workflow chain = workflow("batch-chain", {"x", "y"}, {{"x", "y"}});
  const Workflow failing = workflow("batch-fail", {"s1", "s2", "t"}, {{"s1", "t"}, {"s2", "t"}});
  // Each run's started nodes' runs, sent, by node key.
  auto started = [&](const std::vector<JobLog>& fires) {
    std::map<std::string, std::int64_t> out;
    for (const JobLog& f : fires) {
      sent(f.id);
      out[f.workflow_node] = f.id;
    }
    return out;
  };
  auto first = trigger(diamonds.id), second = trigger(diamonds.id), chained = trigger(chain.id),
       failed = trigger(failing.id);
  ASSERT_EQ(second.runs.front().state, WorkflowRunState::kRunning) << "PARALLEL up to 2";
  sent(first.fires[0].id);
  sent(second.fires[0].id);
  sent(chained.fires[0].id);
  const auto join = started(result(first.fires[0].id, true));        // b and c
  const auto one_parent = started(result(second.fires[0].id, true));  // b and c
  const auto last = started(result(chained.fires[0].id, true));       // y
  const auto roots = started(failed.fires);                            // s1 and s2
  ASSERT_EQ(join.size(), 2u);
  ASSERT_EQ(one_parent.size(), 2u);
  ASSERT_EQ(last.size(), 1u);
  ASSERT_EQ(roots.size(), 2u);
  const std::int64_t r1 = first.runs.front().id, r2 = second.runs.front().id, r3 = chained.runs.front().id,
                     r4 = failed.runs.front().id;

  // Results in one batch, as the callback handling records them: each run's end read from its state.
  auto record_batch = [&](const std::vector<std::pair<std::int64_t, bool>>& ends) {
    std::vector<RunResult> results;
    for (const auto& [log_id, ok] : ends) {
      RunResult r;
      r.log_id = log_id;
      r.state = ok ? FireState::kSucceeded : FireState::kFailed;
      r.handle_time = clock_.now_ms();
      r.handle_code = ok ? 200 : 500;
      r.handle_msg = ok ? "done" : "boom";
      results.push_back(r);
    }
    const auto recorded =
        completion_.record_all(results, [&](const JobLog& run, const Job& job, const std::vector<Job>& children) {
          const RunEnd end = run.state == FireState::kSucceeded ? RunEnd::kSucceeded : RunEnd::kFailed;
          return plan_follow_ups(end, run, job, children, clock_.now_ms(), "node-a");
        });
    std::vector<JobLog> fires;
    EXPECT_EQ(recorded.size(), results.size());
    for (std::size_t i = 0; i < recorded.size(); ++i) {
      EXPECT_EQ(recorded[i].status, CompletionStore::Status::kRecorded) << "result " << i;
      fires.insert(fires.end(), recorded[i].fires.begin(), recorded[i].fires.end());
    }
    return fires;
  };
  // A run's nodes as "key:state", in the graph's order.
  auto states = [&](std::int64_t run_id) {
    std::ostringstream out;
    for (const auto& n : run(run_id).nodes) out << (out.tellp() > 0 ? " " : "") << n.key << ":" << n.state;
    return out.str();
  };
  auto runs_of = [&](std::int64_t run_id, const std::string& node) {
    return count("SELECT count(*) FROM job_log WHERE workflow_run_id = " + std::to_string(run_id) +
                 " AND workflow_node = '" + node + "'");
  };

  const auto fires = record_batch({{join.at("b"), true},
                                   {roots.at("s1"), false},
                                   {last.at("y"), true},
                                   {one_parent.at("b"), true},
                                   {join.at("c"), true}});
  ASSERT_EQ(fires.size(), 1u) << "only the join of the run whose two parents ended";
  EXPECT_EQ(fires[0].workflow_run_id, r1);
  EXPECT_EQ(fires[0].workflow_node, "d");
  EXPECT_EQ(fires[0].state, FireState::kPending);
  EXPECT_EQ(fires[0].trigger_type, TriggerType::kWorkflow);

  EXPECT_EQ(run(r1).run.state, WorkflowRunState::kRunning);
  EXPECT_EQ(states(r1), "a:succeeded b:succeeded c:succeeded d:started");
  EXPECT_EQ(node_of(run(r1), "d").log_id, fires[0].id);
  EXPECT_EQ(node_of(run(r1), "d").attempts, 1);
  EXPECT_EQ(run(r2).run.state, WorkflowRunState::kRunning);
  EXPECT_EQ(states(r2), "a:succeeded b:succeeded c:started d:waiting") << "its join waits for c";
  EXPECT_EQ(run(r3).run.state, WorkflowRunState::kSucceeded);
  EXPECT_TRUE(run(r3).run.ended_at.has_value());
  EXPECT_EQ(states(r3), "x:succeeded y:succeeded");
  EXPECT_EQ(run(r4).run.state, WorkflowRunState::kFailed);
  EXPECT_NE(run(r4).run.reason.find("node s1 failed"), std::string::npos) << run(r4).run.reason;
  EXPECT_EQ(states(r4), "s1:failed s2:started t:cancelled") << "FAIL: s2 left to finish (FINISH), t never starts";
  EXPECT_EQ(runs_of(r1, "d"), 1);
  EXPECT_EQ(runs_of(r2, "d"), 0);
  EXPECT_EQ(runs_of(r4, "t"), 0);

  // The nodes still running end in a second batch: the first diamond run's join, the second
  // run's last parent, the failed run's sibling, which starts nothing.
  sent(fires[0].id);
  const auto next = record_batch({{roots.at("s2"), true}, {fires[0].id, true}, {one_parent.at("c"), true}});
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].workflow_run_id, r2);
  EXPECT_EQ(next[0].workflow_node, "d");
  EXPECT_EQ(run(r1).run.state, WorkflowRunState::kSucceeded);
  EXPECT_EQ(states(r1), "a:succeeded b:succeeded c:succeeded d:succeeded");
  EXPECT_EQ(states(r2), "a:succeeded b:succeeded c:succeeded d:started");
  EXPECT_EQ(run(r4).run.state, WorkflowRunState::kFailed);
  EXPECT_EQ(states(r4), "s1:failed s2:succeeded t:cancelled");
  EXPECT_EQ(runs_of(r2, "d"), 1);
  EXPECT_EQ(runs_of(r4, "t"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM (SELECT workflow_run_id, workflow_node FROM job_log "
                  "WHERE workflow_run_id IS NOT NULL GROUP BY 1, 2 HAVING count(*) > 1) twice"),
            0)
      << "a node started twice";
}

TEST_F(WorkflowPgTest, AReportedOutputIsWhatTheNextNodeReadsRatherThanTheMessage) {
  Workflow w;
  w.job_group = group_;
  w.name = "outputs";
  WorkflowNode a;
  a.key = "a";
  a.job_id = job("outputs-a");
  WorkflowNode b;
  b.key = "b";
  b.job_id = job("outputs-b");
  b.params = "rows=${nodes.a.output.rows}";
  b.params_set = true;
  w.graph.nodes = {a, b};
  w.graph.edges = {{"a", "b"}};
  const Workflow wf = store_.create(w, kOperator);
  auto started = trigger(wf.id);
  sent(started.fires[0].id);
  auto next = result(started.fires[0].id, true, "extracted 3 rows", "node-a", R"({"rows":3})");
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].executor_param, "rows=3");
  const JobLog a_run = *stores_.stores().logs.get(started.fires[0].id);
  EXPECT_EQ(a_run.output, R"({"rows":3})");
  EXPECT_EQ(a_run.handle_msg, "extracted 3 rows");
  EXPECT_EQ(node_of(run(started.runs.front().id), "a").output, R"({"rows":3})");
}

TEST_F(WorkflowPgTest, WaitQueuesTheNextRunUntilTheRunBeforeEnds) {
  const Workflow wf = workflow("queue", {"only"}, {});
  auto first = trigger(wf.id);
  auto second = trigger(wf.id);
  EXPECT_EQ(first.runs.front().state, WorkflowRunState::kRunning);
  EXPECT_EQ(second.runs.front().state, WorkflowRunState::kWaiting);
  EXPECT_EQ(second.runs.front().reason, "waiting: run " + std::to_string(first.runs.front().id) + " is still running");
  EXPECT_TRUE(second.fires.empty());
  sent(first.fires[0].id);
  EXPECT_TRUE(result(first.fires[0].id, true).empty());
  auto next = store_.start_waiting(clock_.now_ms(), "node-a", 10).fires;
  ASSERT_EQ(next.size(), 1u) << "the waiting run's first node";
  EXPECT_EQ(next[0].workflow_run_id, second.runs.front().id);
  EXPECT_EQ(run(first.runs.front().id).run.state, WorkflowRunState::kSucceeded);
  EXPECT_EQ(run(second.runs.front().id).run.state, WorkflowRunState::kRunning);
}

TEST_F(WorkflowPgTest, SkipRecordsTheOverlappingRunSkipped) {
  const Workflow wf = workflow("skip", {"only"}, {}, OverlapPolicy::kSkip);
  trigger(wf.id);
  auto second = trigger(wf.id);
  EXPECT_EQ(second.runs.front().state, WorkflowRunState::kSkipped);
  EXPECT_TRUE(second.runs.front().ended_at.has_value());
  EXPECT_TRUE(second.fires.empty());
}

TEST_F(WorkflowPgTest, ParallelRunsUpToItsLimitAndTheRestWait) {
  const Workflow wf = workflow("parallel", {"only"}, {}, OverlapPolicy::kParallel, 2);
  EXPECT_EQ(trigger(wf.id).runs.front().state, WorkflowRunState::kRunning);
  EXPECT_EQ(trigger(wf.id).runs.front().state, WorkflowRunState::kRunning);
  EXPECT_EQ(trigger(wf.id).runs.front().state, WorkflowRunState::kWaiting);
}

TEST_F(WorkflowPgTest, NodesScanningAtOnceCreateEachScheduledRunOnce) {
  Workflow wf = workflow("scheduled", {"only"}, {});
  wf.schedule_type = ScheduleType::kFixRate;
  wf.schedule_conf = "1";
  wf = store_.update(wf, 0, 0, kOperator);
  store_.set_status(wf.id, 1, kNow, kOperator);
  std::barrier start(2);
  std::atomic<int> created{0};
  auto scan = [&](const char* node) {
    start.arrive_and_wait();
    for (int i = 0; i < 5; ++i) {
      auto changed = store_.scan(node, kNow, kNow + kPreReadWindowMs, 100,
                                 [](const std::vector<DueJob>& due) { return decide_fires(due, kNow); });
      created += static_cast<int>(changed.runs.size());
    }
  };
  std::thread one(scan, "node-a");
  std::thread two(scan, "node-b");
  one.join();
  two.join();
  // Every second of the window, once: 0..5 s.
  EXPECT_EQ(created.load(), 6);
  EXPECT_EQ(count("SELECT count(*) FROM workflow_run"), 6);
  EXPECT_EQ(count("SELECT count(DISTINCT scheduled_time) FROM workflow_run"), 6);
  EXPECT_EQ(count("SELECT count(*) FROM workflow_run WHERE state = 'running'"), 1) << "WAIT: one at a time";
}

TEST_F(WorkflowPgTest, CancelDropsPendingNodeFiresAndMarksRunningOnesToKill) {
  const Workflow wf = diamond("cancelled");
  auto started = trigger(wf.id);
  sent(started.fires[0].id);
  auto next = result(started.fires[0].id, true);
  ASSERT_EQ(next.size(), 2u);
  sent(next[0].id);  // b runs; c is still pending
  const auto id = started.runs.front().id;
  auto change = store_.cancel(id, clock_.now_ms(), "node-a", kOperator);
  ASSERT_EQ(change.status, WorkflowStore::RunChange::Status::kChanged);
  const auto d = run(id);
  EXPECT_EQ(d.run.state, WorkflowRunState::kCancelled);
  EXPECT_EQ(d.run.reason, "cancelled by operator");
  EXPECT_EQ(node_of(d, "c").state, NodeState::kCancelled);
  EXPECT_EQ(node_of(d, "c").run_state, FireState::kCancelled);
  EXPECT_EQ(node_of(d, "d").state, NodeState::kCancelled);
  EXPECT_EQ(node_of(d, "b").state, NodeState::kStarted);
  auto kill = store_.kill_candidates(10);
  ASSERT_EQ(kill.size(), 1u);
  EXPECT_EQ(kill[0].id, next[0].id);
  // b's result, when it comes, ends the node and starts nothing.
  EXPECT_TRUE(result(next[0].id, true).empty());
  EXPECT_EQ(node_of(run(id), "b").state, NodeState::kSucceeded);
  EXPECT_TRUE(store_.kill_candidates(10).empty());
  EXPECT_EQ(store_.cancel(id, clock_.now_ms(), "node-a", kOperator).status, WorkflowStore::RunChange::Status::kRefused);
}

TEST_F(WorkflowPgTest, ARunPastItsDeadlineTimesOut) {
  Workflow wf = workflow("slow", {"only"}, {});
  wf.timeout_seconds = 60;
  wf = store_.update(wf, 0, 0, kOperator);
  auto started = trigger(wf.id);
  EXPECT_EQ(started.runs.front().deadline, kNow + 60'000);
  EXPECT_TRUE(store_.time_out(kNow + 59'999, "node-a", 10).runs.empty());
  auto timed_out = store_.time_out(kNow + 60'000, "node-a", 10);
  ASSERT_EQ(timed_out.runs.size(), 1u);
  EXPECT_EQ(timed_out.runs[0].state, WorkflowRunState::kTimedOut);
  EXPECT_EQ(run(started.runs.front().id).nodes[0].run_state, FireState::kCancelled) << "its pending fire";
}

TEST_F(WorkflowPgTest, ARetryOfANodesRunStaysTheNodesUntilTheRunEnds) {
  Workflow w;
  w.job_group = group_;
  w.name = "retried";
  WorkflowNode n;
  n.key = "flaky";
  n.job_id = job("flaky", 2);
  w.graph.nodes.push_back(n);
  const Workflow wf = store_.create(w, kOperator);
  auto started = trigger(wf.id);
  sent(started.fires[0].id);
  auto retry = result(started.fires[0].id, false, "boom");
  ASSERT_EQ(retry.size(), 1u);
  EXPECT_EQ(retry[0].trigger_type, TriggerType::kRetry);
  EXPECT_EQ(retry[0].workflow_run_id, started.runs.front().id);
  EXPECT_EQ(retry[0].workflow_node, "flaky");
  auto d = run(started.runs.front().id);
  EXPECT_EQ(d.nodes[0].state, NodeState::kStarted);
  EXPECT_EQ(d.nodes[0].log_id, retry[0].id);
  EXPECT_EQ(d.nodes[0].attempts, 2);

  // Cancelled meanwhile: the retry's own failure is its last; no further retry is sent.
  sent(retry[0].id);
  ASSERT_EQ(store_.cancel(d.run.id, clock_.now_ms(), "node-a", kOperator).status,
            WorkflowStore::RunChange::Status::kChanged);
  auto after = result(retry[0].id, false, "boom again");
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0].state, FireState::kCancelled) << "the retry the failure planned is dropped";
  d = run(d.run.id);
  EXPECT_EQ(d.nodes[0].state, NodeState::kFailed);
  EXPECT_NE(d.nodes[0].message.find("no retry: its workflow run has ended"), std::string::npos) << d.nodes[0].message;
}

}  // namespace
}  // namespace cronwheel::testing
