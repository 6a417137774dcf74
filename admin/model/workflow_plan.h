#pragma once

// Which nodes of a workflow run start now, which never will, and how the run ends
// (docs/workflows.md, "Running it"): the one planner for every change of a run — its start, a
// node's end, an operator's cancel or re-run, its timeout. The store calls it under the run's
// row lock, in the transaction that records what changed, and writes exactly what it returns;
// nothing else decides that a node starts. Pure.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "admin/model/workflow.h"

namespace cronwheel::admin {

// A node of the run as the planner reads it.
struct PlanNode {
  std::string key;
  NodeState state = NodeState::kWaiting;
  // A node that ended: its output as templates read it (node_output_value), and its message.
  nlohmann::json output;
  bool has_output = false;
  std::string message;
};

struct NodeStart {
  std::string key;
  std::int64_t job_id = 0;
  std::optional<std::string> param;  // rendered; nullopt: the job's own parameter

  friend bool operator==(const NodeStart&, const NodeStart&) = default;
};

// A node ended by the plan without running: cancelled, or failed (its parameters could not be
// rendered).
struct NodeFinish {
  std::string key;
  NodeState state = NodeState::kCancelled;  // kCancelled or kFailed
  std::string message;

  friend bool operator==(const NodeFinish&, const NodeFinish&) = default;
};

struct WorkflowStep {
  std::vector<NodeStart> start;    // in the order of the graph's nodes
  std::vector<NodeFinish> finish;  // in the order decided
  std::vector<std::string> kill;   // started nodes whose runs are to be killed
  std::optional<WorkflowRunState> run_end;  // the run ends so now
  std::string reason;                       // with run_end: why, for people

  friend bool operator==(const WorkflowStep&, const WorkflowStep&) = default;
};

// The step of a running run whose nodes are as `nodes` says (one per node of the graph; a node
// absent is waiting). The rules, applied until nothing changes:
//  1. A node failed whose policy is FAIL: the run fails ("node K failed: <message>"); every
//     waiting node is cancelled ("not started: node K failed"); started nodes are killed when
//     the graph says KILL, left to finish otherwise.
//  2. A waiting node whose parents are all done (succeeded, or failed with policy CONTINUE)
//     starts, its parameters rendered from `params` and the outputs of the nodes upstream. A
//     template that does not render fails the node with the reason (then rule 1 or its CONTINUE
//     policy applies, as for any failure). Nodes without parents start at once.
//  3. No node waiting or started: the run succeeded.
WorkflowStep plan_workflow_step(const WorkflowGraph& graph, const nlohmann::json& params,
                                const std::vector<PlanNode>& nodes);

// A running (or waiting) run stopped from outside: `end` is kCancelled (an operator) or
// kTimedOut (its timeout passed). Every waiting node is cancelled with `reason`; every started
// node is killed; the run ends as `end`.
WorkflowStep plan_workflow_stop(const WorkflowGraph& graph, const std::vector<PlanNode>& nodes,
                                WorkflowRunState end, const std::string& reason);

// A re-run from node `from` of a run that ended failed, timed out or cancelled: the nodes that
// go back to waiting — `from`, everything downstream of it, and every other node that did not
// get done (failed with policy FAIL, cancelled, waiting); what succeeded (and what failed with
// policy CONTINUE) outside `from`'s downstream is kept. Empty with `error` set when the re-run
// cannot be: no such node, `from` did not fail or was not cancelled, or a node still runs.
struct RerunPlan {
  std::vector<std::string> reset;  // in the order of the graph's nodes
  std::string error;
};
RerunPlan plan_rerun(const WorkflowGraph& graph, const std::vector<PlanNode>& nodes, std::string_view from);

}  // namespace cronwheel::admin
