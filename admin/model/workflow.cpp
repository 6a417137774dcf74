#include "admin/model/workflow.h"

#include <array>
#include <ostream>
#include <utility>

namespace cronwheel::admin {
namespace {

template <class E, std::size_t N>
std::string_view name_of(const std::array<std::pair<E, std::string_view>, N>& names, E value) noexcept {
  for (const auto& [v, name] : names) {
    if (v == value) return name;
  }
  return "?";
}

template <class E, std::size_t N>
std::optional<E> value_of(const std::array<std::pair<E, std::string_view>, N>& names, std::string_view text) noexcept {
  for (const auto& [v, name] : names) {
    if (name == text) return v;
  }
  return std::nullopt;
}

constexpr std::array<std::pair<NodeFailurePolicy, std::string_view>, 2> kFailurePolicies{{
    {NodeFailurePolicy::kFail, "FAIL"},
    {NodeFailurePolicy::kContinue, "CONTINUE"},
}};
constexpr std::array<std::pair<OverlapPolicy, std::string_view>, 3> kOverlapPolicies{{
    {OverlapPolicy::kWait, "WAIT"},
    {OverlapPolicy::kSkip, "SKIP"},
    {OverlapPolicy::kParallel, "PARALLEL"},
}};
constexpr std::array<std::pair<RunningOnFailure, std::string_view>, 2> kRunningOnFailure{{
    {RunningOnFailure::kFinish, "FINISH"},
    {RunningOnFailure::kKill, "KILL"},
}};
constexpr std::array<std::pair<WorkflowRunState, std::string_view>, 7> kRunStates{{
    {WorkflowRunState::kWaiting, "waiting"},
    {WorkflowRunState::kRunning, "running"},
    {WorkflowRunState::kSucceeded, "succeeded"},
    {WorkflowRunState::kFailed, "failed"},
    {WorkflowRunState::kCancelled, "cancelled"},
    {WorkflowRunState::kSkipped, "skipped"},
    {WorkflowRunState::kTimedOut, "timed_out"},
}};
constexpr std::array<std::pair<NodeState, std::string_view>, 5> kNodeStates{{
    {NodeState::kWaiting, "waiting"},
    {NodeState::kStarted, "started"},
    {NodeState::kSucceeded, "succeeded"},
    {NodeState::kFailed, "failed"},
    {NodeState::kCancelled, "cancelled"},
}};

}  // namespace

std::string_view to_string(NodeFailurePolicy v) noexcept { return name_of(kFailurePolicies, v); }
std::string_view to_string(OverlapPolicy v) noexcept { return name_of(kOverlapPolicies, v); }
std::string_view to_string(RunningOnFailure v) noexcept { return name_of(kRunningOnFailure, v); }
std::string_view to_string(WorkflowRunState v) noexcept { return name_of(kRunStates, v); }
std::string_view to_string(NodeState v) noexcept { return name_of(kNodeStates, v); }

std::optional<NodeFailurePolicy> parse_node_failure_policy(std::string_view text) noexcept {
  return value_of(kFailurePolicies, text);
}
std::optional<OverlapPolicy> parse_overlap_policy(std::string_view text) noexcept {
  return value_of(kOverlapPolicies, text);
}
std::optional<RunningOnFailure> parse_running_on_failure(std::string_view text) noexcept {
  return value_of(kRunningOnFailure, text);
}
std::optional<WorkflowRunState> parse_workflow_run_state(std::string_view text) noexcept {
  return value_of(kRunStates, text);
}
std::optional<NodeState> parse_node_state(std::string_view text) noexcept { return value_of(kNodeStates, text); }

std::ostream& operator<<(std::ostream& out, WorkflowRunState v) { return out << to_string(v); }
std::ostream& operator<<(std::ostream& out, NodeState v) { return out << to_string(v); }

bool is_final(WorkflowRunState state) noexcept {
  return state != WorkflowRunState::kWaiting && state != WorkflowRunState::kRunning;
}

const WorkflowNode* WorkflowGraph::node(std::string_view key) const {
  for (const auto& n : nodes) {
    if (n.key == key) return &n;
  }
  return nullptr;
}

}  // namespace cronwheel::admin
