// The workflow planner (admin/model/workflow_plan.h) as tables of cases: a graph, the nodes'
// states, and what must start, end and be killed.

#include "admin/model/workflow_plan.h"

#include <gtest/gtest.h>

namespace cronwheel::admin {
namespace {

WorkflowGraph graph_of(std::vector<std::pair<std::string, NodeFailurePolicy>> nodes,
                       std::vector<std::pair<std::string, std::string>> edges,
                       RunningOnFailure running = RunningOnFailure::kFinish) {
  WorkflowGraph g;
  std::int64_t job = 100;
  for (auto& [key, policy] : nodes) {
    WorkflowNode n;
    n.key = key;
    n.job_id = ++job;
    n.on_failure = policy;
    g.nodes.push_back(n);
  }
  for (auto& [from, to] : edges) g.edges.push_back({from, to});
  g.on_failure_running = running;
  return g;
}

constexpr auto kFail = NodeFailurePolicy::kFail;
constexpr auto kContinue = NodeFailurePolicy::kContinue;

WorkflowGraph diamond(NodeFailurePolicy b_policy = kFail, RunningOnFailure running = RunningOnFailure::kFinish) {
  return graph_of({{"a", kFail}, {"b", b_policy}, {"c", kFail}, {"d", kFail}},
                  {{"a", "b"}, {"a", "c"}, {"b", "d"}, {"c", "d"}}, running);
}

PlanNode node(std::string key, NodeState state, nlohmann::json output = nullptr, std::string message = "") {
  PlanNode n;
  n.key = std::move(key);
  n.state = state;
  if (!output.is_null()) {
    n.output = std::move(output);
    n.has_output = true;
  }
  n.message = std::move(message);
  return n;
}

std::vector<std::string> keys_started(const WorkflowStep& step) {
  std::vector<std::string> out;
  for (const auto& s : step.start) out.push_back(s.key);
  return out;
}

using S = NodeState;

struct StepCase {
  const char* name;
  WorkflowGraph graph;
  std::vector<PlanNode> nodes;
  std::vector<std::string> start;
  std::vector<NodeFinish> finish;
  std::vector<std::string> kill;
  std::optional<WorkflowRunState> run_end;
};

TEST(WorkflowPlan, StepsFollowTheTable) {
  const std::vector<StepCase> cases = {
      {"a new run starts the nodes without parents", diamond(), {}, {"a"}, {}, {}, std::nullopt},
      {"two roots start together",
       graph_of({{"x", kFail}, {"y", kFail}, {"z", kFail}}, {{"x", "z"}, {"y", "z"}}),
       {},
       {"x", "y"},
       {},
       {},
       std::nullopt},
      {"a fan-out starts both children", diamond(), {node("a", S::kSucceeded)}, {"b", "c"}, {}, {}, std::nullopt},
      {"a join waits for its last parent",
       diamond(),
       {node("a", S::kSucceeded), node("b", S::kSucceeded), node("c", S::kStarted)},
       {},
       {},
       {},
       std::nullopt},
      {"a join starts once every parent is done",
       diamond(),
       {node("a", S::kSucceeded), node("b", S::kSucceeded), node("c", S::kSucceeded)},
       {"d"},
       {},
       {},
       std::nullopt},
      {"the run succeeds when every node is done",
       diamond(),
       {node("a", S::kSucceeded), node("b", S::kSucceeded), node("c", S::kSucceeded), node("d", S::kSucceeded)},
       {},
       {},
       {},
       WorkflowRunState::kSucceeded},
      {"a failure under FAIL fails the run and cancels what has not started",
       diamond(),
       {node("a", S::kSucceeded), node("b", S::kFailed, nullptr, "run 7 failed: boom"), node("c", S::kStarted)},
       {},
       {{"d", S::kCancelled, "not started: node b failed"}},
       {},
       WorkflowRunState::kFailed},
      {"a failure under FAIL with KILL kills the nodes still running",
       diamond(kFail, RunningOnFailure::kKill),
       {node("a", S::kSucceeded), node("b", S::kFailed), node("c", S::kStarted)},
       {},
       {{"d", S::kCancelled, "not started: node b failed"}},
       {"c"},
       WorkflowRunState::kFailed},
      {"a failure under CONTINUE lets its children go on",
       diamond(kContinue),
       {node("a", S::kSucceeded), node("b", S::kFailed), node("c", S::kSucceeded)},
       {"d"},
       {},
       {},
       std::nullopt},
      {"a run with a CONTINUE failure succeeds at its end",
       diamond(kContinue),
       {node("a", S::kSucceeded), node("b", S::kFailed), node("c", S::kSucceeded), node("d", S::kSucceeded)},
       {},
       {},
       {},
       WorkflowRunState::kSucceeded},
      {"a cancelled parent holds its children back",
       graph_of({{"p", kFail}, {"q", kFail}}, {{"p", "q"}}),
       {node("p", S::kCancelled)},
       {},
       {},
       {},
       std::nullopt},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const WorkflowStep step = plan_workflow_step(c.graph, nlohmann::json::object(), c.nodes);
    EXPECT_EQ(keys_started(step), c.start);
    EXPECT_EQ(step.finish, c.finish);
    EXPECT_EQ(step.kill, c.kill);
    EXPECT_EQ(step.run_end, c.run_end);
  }
}

TEST(WorkflowPlan, FailedRunNamesTheNodeAndItsMessage) {
  const auto step = plan_workflow_step(diamond(), {}, {node("a", S::kFailed, nullptr, "run 3 failed: disk full")});
  EXPECT_EQ(step.reason, "node a failed: run 3 failed: disk full");
}

TEST(WorkflowPlan, StartsWithTheJobOfTheNode) {
  const auto g = diamond();
  const auto step = plan_workflow_step(g, {}, {});
  ASSERT_EQ(step.start.size(), 1u);
  EXPECT_EQ(step.start[0].job_id, g.nodes[0].job_id);
  EXPECT_EQ(step.start[0].param, std::nullopt) << "no template: the job's own parameter";
}

TEST(WorkflowPlan, RendersParametersFromInputsAndUpstreamOutputs) {
  auto g = diamond();
  g.nodes[3].params = "date=${params.date} b=${nodes.b.output.rows} c=${nodes.c.output} a=${nodes.a.output.files.1}";
  g.nodes[3].params_set = true;
  const auto step = plan_workflow_step(
      g, {{"date", "2026-11-29"}},
      {node("a", S::kSucceeded, {{"files", {"x.csv", "y.csv"}}}), node("b", S::kSucceeded, {{"rows", 42}}),
       node("c", S::kSucceeded, "plain text")});
  ASSERT_EQ(step.start.size(), 1u);
  EXPECT_EQ(step.start[0].param, "date=2026-11-29 b=42 c=plain text a=y.csv");
}

TEST(WorkflowPlan, ATemplateThatDoesNotRenderFailsTheNodeWithTheReason) {
  auto g = diamond();
  g.nodes[3].params = "${nodes.b.output.rows}";
  g.nodes[3].params_set = true;
  const auto step = plan_workflow_step(
      g, {}, {node("a", S::kSucceeded), node("b", S::kSucceeded, {{"count", 1}}), node("c", S::kSucceeded)});
  EXPECT_TRUE(step.start.empty()) << "never started with an empty string in place of the missing field";
  ASSERT_EQ(step.finish.size(), 1u);
  EXPECT_EQ(step.finish[0].key, "d");
  EXPECT_EQ(step.finish[0].state, S::kFailed);
  EXPECT_EQ(step.finish[0].message,
            "parameters: ${nodes.b.output.rows}: the output of node b has no field \"rows\"");
  EXPECT_EQ(step.run_end, WorkflowRunState::kFailed) << "its policy is FAIL";
  EXPECT_NE(step.reason.find("node d failed: parameters:"), std::string::npos) << step.reason;
}

TEST(WorkflowPlan, ATemplateFailureUnderContinueLetsTheRunGoOn) {
  auto g = graph_of({{"a", kFail}, {"b", kContinue}, {"c", kFail}}, {{"a", "b"}, {"b", "c"}});
  g.nodes[1].params = "${nodes.a.output.missing}";
  g.nodes[1].params_set = true;
  const auto step = plan_workflow_step(g, {}, {node("a", S::kSucceeded, nlohmann::json::object())});
  EXPECT_EQ(keys_started(step), std::vector<std::string>{"c"});
  ASSERT_EQ(step.finish.size(), 1u);
  EXPECT_EQ(step.finish[0].key, "b");
  EXPECT_EQ(step.run_end, std::nullopt);
}

TEST(WorkflowPlan, StopCancelsWaitingNodesAndKillsStartedOnes) {
  const auto step = plan_workflow_stop(diamond(), {node("a", S::kSucceeded), node("b", S::kStarted)},
                                       WorkflowRunState::kTimedOut, "timed out");
  EXPECT_EQ(step.kill, std::vector<std::string>{"b"});
  ASSERT_EQ(step.finish.size(), 2u);
  EXPECT_EQ(step.finish[0], (NodeFinish{"c", S::kCancelled, "timed out"}));
  EXPECT_EQ(step.finish[1], (NodeFinish{"d", S::kCancelled, "timed out"}));
  EXPECT_EQ(step.run_end, WorkflowRunState::kTimedOut);
}

struct RerunCase {
  const char* name;
  WorkflowGraph graph;
  std::vector<PlanNode> nodes;
  std::string from;
  std::vector<std::string> reset;
  std::string error_part;
};

TEST(WorkflowPlan, RerunsFollowTheTable) {
  const auto chain = graph_of({{"a", kFail}, {"b", kFail}, {"c", kFail}}, {{"a", "b"}, {"b", "c"}});
  const std::vector<RerunCase> cases = {
      {"from the failed node: it and everything downstream, what succeeded kept",
       diamond(),
       {node("a", S::kSucceeded), node("b", S::kFailed), node("c", S::kSucceeded), node("d", S::kCancelled)},
       "b",
       {"b", "d"},
       ""},
      {"the other branch's failure runs again too",
       diamond(),
       {node("a", S::kSucceeded), node("b", S::kFailed), node("c", S::kFailed), node("d", S::kCancelled)},
       "b",
       {"b", "c", "d"},
       ""},
      {"a succeeded node downstream of the failed one runs again",
       diamond(kContinue),
       {node("a", S::kFailed), node("b", S::kSucceeded), node("c", S::kCancelled), node("d", S::kCancelled)},
       "a",
       {"a", "b", "c", "d"},
       ""},
      {"from a cancelled node",
       chain,
       {node("a", S::kSucceeded), node("b", S::kCancelled), node("c", S::kCancelled)},
       "b",
       {"b", "c"},
       ""},
      {"not from a node that succeeded",
       chain,
       {node("a", S::kSucceeded), node("b", S::kFailed), node("c", S::kCancelled)},
       "a",
       {},
       "node a is succeeded"},
      {"not while a node still runs",
       diamond(),
       {node("a", S::kSucceeded), node("b", S::kFailed), node("c", S::kStarted)},
       "b",
       {},
       "node c is still running"},
      {"not from a node the graph lacks", chain, {}, "zz", {}, "no node zz"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const RerunPlan plan = plan_rerun(c.graph, c.nodes, c.from);
    EXPECT_EQ(plan.reset, c.reset);
    if (c.error_part[0] == '\0') {
      EXPECT_EQ(plan.error, "");
    } else {
      EXPECT_NE(plan.error.find(c.error_part), std::string::npos) << plan.error;
    }
  }
}

TEST(WorkflowPlan, ARerunPlanThenStartsTheResetNodesWhoseParentsAreDone) {
  const auto g = diamond();
  std::vector<PlanNode> nodes = {node("a", S::kSucceeded), node("b", S::kFailed), node("c", S::kSucceeded),
                                 node("d", S::kCancelled)};
  const RerunPlan plan = plan_rerun(g, nodes, "b");
  for (auto& n : nodes) {
    if (std::find(plan.reset.begin(), plan.reset.end(), n.key) != plan.reset.end()) n.state = S::kWaiting;
  }
  EXPECT_EQ(keys_started(plan_workflow_step(g, {}, nodes)), std::vector<std::string>{"b"});
}

}  // namespace
}  // namespace cronwheel::admin
