#include "admin/model/workflow_plan.h"

#include <map>

#include "admin/model/workflow_graph.h"
#include "admin/model/workflow_template.h"

namespace cronwheel::admin {
namespace {

using States = std::map<std::string, PlanNode, std::less<>>;

States states_of(const WorkflowGraph& graph, const std::vector<PlanNode>& nodes) {
  States out;
  for (const auto& n : graph.nodes) {
    PlanNode waiting;
    waiting.key = n.key;
    out[n.key] = std::move(waiting);
  }
  for (const auto& n : nodes) {
    auto it = out.find(n.key);
    if (it != out.end()) it->second = n;  // nodes the graph does not have are ignored
  }
  return out;
}

bool done(const WorkflowNode& node, const PlanNode& state) {
  return state.state == NodeState::kSucceeded ||
         (state.state == NodeState::kFailed && node.on_failure == NodeFailurePolicy::kContinue);
}

}  // namespace

WorkflowStep plan_workflow_step(const WorkflowGraph& graph, const nlohmann::json& params,
                                const std::vector<PlanNode>& nodes) {
  WorkflowStep step;
  States states = states_of(graph, nodes);
  while (true) {
    // Rule 1: a failure that fails the run.
    for (const auto& node : graph.nodes) {
      const PlanNode& s = states.at(node.key);
      if (s.state != NodeState::kFailed || node.on_failure != NodeFailurePolicy::kFail) continue;
      step.run_end = WorkflowRunState::kFailed;
      step.reason = "node " + node.key + " failed" + (s.message.empty() ? "" : ": " + s.message);
      for (const auto& other : graph.nodes) {
        PlanNode& o = states.at(other.key);
        if (o.state == NodeState::kWaiting) {
          step.finish.push_back({other.key, NodeState::kCancelled, "not started: node " + node.key + " failed"});
          o.state = NodeState::kCancelled;
        } else if (o.state == NodeState::kStarted && graph.on_failure_running == RunningOnFailure::kKill) {
          step.kill.push_back(other.key);
        }
      }
      return step;
    }
    // Rule 2: the nodes whose parents are done.
    bool failed_to_render = false;
    for (const auto& node : graph.nodes) {
      PlanNode& s = states.at(node.key);
      if (s.state != NodeState::kWaiting) continue;
      bool ready = true;
      std::map<std::string, nlohmann::json, std::less<>> outputs;
      for (const auto& parent_key : parents_of(graph, node.key)) {
        const WorkflowNode* parent = graph.node(parent_key);
        if (parent == nullptr || !done(*parent, states.at(parent_key))) {
          ready = false;
          break;
        }
      }
      if (!ready) continue;
      for (const auto& up : ancestors_of(graph, node.key)) {
        const PlanNode& u = states.at(up);
        if (u.has_output) outputs.emplace(up, u.output);
      }
      std::optional<std::string> param;
      if (node.params_set) {
        Rendered rendered = render_template(parse_template(node.params), params, outputs);
        if (!rendered.ok()) {
          s.state = NodeState::kFailed;
          s.message = "parameters: " + rendered.error;
          step.finish.push_back({node.key, NodeState::kFailed, s.message});
          failed_to_render = true;
          continue;
        }
        param = std::move(rendered.text);
      }
      s.state = NodeState::kStarted;
      step.start.push_back({node.key, node.job_id, std::move(param)});
    }
    if (!failed_to_render) break;
  }
  // Rule 3: nothing left to run.
  bool open = false;
  for (const auto& [key, s] : states) open = open || s.state == NodeState::kWaiting || s.state == NodeState::kStarted;
  if (!open) {
    step.run_end = WorkflowRunState::kSucceeded;
    step.reason = "every node is done";
  }
  return step;
}

WorkflowStep plan_workflow_stop(const WorkflowGraph& graph, const std::vector<PlanNode>& nodes,
                                WorkflowRunState end, const std::string& reason) {
  WorkflowStep step;
  const States states = states_of(graph, nodes);
  for (const auto& node : graph.nodes) {
    const PlanNode& s = states.at(node.key);
    if (s.state == NodeState::kWaiting) step.finish.push_back({node.key, NodeState::kCancelled, reason});
    if (s.state == NodeState::kStarted) step.kill.push_back(node.key);
  }
  step.run_end = end;
  step.reason = reason;
  return step;
}

RerunPlan plan_rerun(const WorkflowGraph& graph, const std::vector<PlanNode>& nodes, std::string_view from) {
  RerunPlan plan;
  const WorkflowNode* start = graph.node(from);
  if (start == nullptr) {
    plan.error = "the run's graph has no node " + std::string(from);
    return plan;
  }
  const States states = states_of(graph, nodes);
  for (const auto& [key, s] : states) {
    if (s.state == NodeState::kStarted) {
      plan.error = "node " + key + " is still running: wait for it to end, or kill its run";
      return plan;
    }
  }
  const NodeState from_state = states.find(from)->second.state;
  if (from_state != NodeState::kFailed && from_state != NodeState::kCancelled) {
    plan.error = "node " + std::string(from) + " is " + std::string(to_string(from_state)) +
                 ": a run is re-run from a node that failed or was cancelled";
    return plan;
  }
  const auto downstream = descendants_of(graph, from);
  for (const auto& node : graph.nodes) {
    const PlanNode& s = states.at(node.key);
    const bool not_done = s.state == NodeState::kWaiting || s.state == NodeState::kCancelled ||
                          (s.state == NodeState::kFailed && node.on_failure == NodeFailurePolicy::kFail);
    if (node.key == from || downstream.count(node.key) || not_done) plan.reset.push_back(node.key);
  }
  return plan;
}

}  // namespace cronwheel::admin
