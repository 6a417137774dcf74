#pragma once

// Workflows (docs/workflows.md): a DAG of jobs that runs as a whole, passing what one node
// produced to the nodes after it. Plain values, as the stores read and write them; the rules
// are in workflow_graph.h (what a valid graph is), workflow_template.h (parameters) and
// workflow_plan.h (which node starts when).

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "admin/model/records.h"

namespace cronwheel::admin {

// What a node's failure (after its own retries) does to its run.
enum class NodeFailurePolicy {
  kFail,      // the workflow run fails: nodes not started are cancelled
  kContinue,  // its children treat it as done
};

// What a run due while others of the same workflow run does.
enum class OverlapPolicy {
  kWait,      // one run at a time: the next waits for the one before to end
  kSkip,      // the next is recorded `skipped` and never runs
  kParallel,  // up to max_parallel at once; more wait
};

// What a failing run does to its nodes still running.
enum class RunningOnFailure {
  kFinish,  // they run to their end; their results are recorded and start nothing
  kKill,    // they are killed (their executors told, as POST /logs/{id}/kill does)
};

// waiting → running → succeeded | failed | timed_out | cancelled; waiting → cancelled;
// skipped from the start (overlap SKIP, or too many waiting).
enum class WorkflowRunState { kWaiting, kRunning, kSucceeded, kFailed, kCancelled, kSkipped, kTimedOut };

// A node of a run: waiting → started → succeeded | failed; waiting → cancelled. `started`
// holds while its run row (and the retries of it) goes through pending, triggered, ...
enum class NodeState { kWaiting, kStarted, kSucceeded, kFailed, kCancelled };

std::string_view to_string(NodeFailurePolicy v) noexcept;  // "FAIL", "CONTINUE"
std::string_view to_string(OverlapPolicy v) noexcept;      // "WAIT", "SKIP", "PARALLEL"
std::string_view to_string(RunningOnFailure v) noexcept;   // "FINISH", "KILL"
std::string_view to_string(WorkflowRunState v) noexcept;   // "waiting", ..., "timed_out"
std::string_view to_string(NodeState v) noexcept;          // "waiting", "started", ...
std::optional<NodeFailurePolicy> parse_node_failure_policy(std::string_view text) noexcept;
std::optional<OverlapPolicy> parse_overlap_policy(std::string_view text) noexcept;
std::optional<RunningOnFailure> parse_running_on_failure(std::string_view text) noexcept;
std::optional<WorkflowRunState> parse_workflow_run_state(std::string_view text) noexcept;
std::optional<NodeState> parse_node_state(std::string_view text) noexcept;
std::ostream& operator<<(std::ostream& out, WorkflowRunState v);
std::ostream& operator<<(std::ostream& out, NodeState v);

// True for the states a run ends in.
bool is_final(WorkflowRunState state) noexcept;

// Bounds of a workflow (the API refuses more).
inline constexpr std::size_t kMaxWorkflowNodes = 200;
inline constexpr std::size_t kMaxWorkflowEdges = 1000;
inline constexpr std::size_t kMaxWorkflowParams = 50;
inline constexpr std::size_t kMaxNodeKeyChars = 64;
inline constexpr std::size_t kMaxTemplateBytes = 64 * 1024;
// A node's output as the templates read it, at most (a longer one is refused by the callback
// handling and the node's output is cut to nothing, with a message).
inline constexpr std::size_t kMaxNodeOutputBytes = 64 * 1024;
// Runs of one workflow waiting at once; a run due beyond it is recorded skipped.
inline constexpr int kMaxWaitingRuns = 100;

struct WorkflowParam {
  std::string name;
  std::string default_value;  // used when a trigger gives none
  bool has_default = false;   // without one a trigger must give it
  std::string description;

  friend bool operator==(const WorkflowParam&, const WorkflowParam&) = default;
};

struct WorkflowNode {
  std::string key;  // unique in its workflow: the name templates and edges use
  std::int64_t job_id = 0;
  // The node's run's parameters, a template over ${params.NAME} and ${nodes.KEY.output[.path]}
  // (workflow_template.h); empty: the job's own parameter.
  std::string params;
  // Whether `params` was given at all: an empty template means "no parameter", none means
  // "the job's own".
  bool params_set = false;
  NodeFailurePolicy on_failure = NodeFailurePolicy::kFail;

  friend bool operator==(const WorkflowNode&, const WorkflowNode&) = default;
};

struct WorkflowEdge {
  std::string from;
  std::string to;

  friend bool operator==(const WorkflowEdge&, const WorkflowEdge&) = default;
};

// What a run follows: the nodes, the edges and what a failure does to running nodes.
struct WorkflowGraph {
  std::vector<WorkflowNode> nodes;
  std::vector<WorkflowEdge> edges;
  RunningOnFailure on_failure_running = RunningOnFailure::kFinish;

  const WorkflowNode* node(std::string_view key) const;
  friend bool operator==(const WorkflowGraph&, const WorkflowGraph&) = default;
};

struct Workflow {
  std::int64_t id = 0;
  std::int64_t job_group = 0;
  std::string name;  // unique in its group; the rules of a job's name
  std::string description;
  std::string author;
  std::string alarm_email;
  ScheduleType schedule_type = ScheduleType::kNone;  // NONE, CRON or FIX_RATE
  std::string schedule_conf;
  std::string timezone = "UTC";
  MisfireStrategy misfire_strategy = MisfireStrategy::kDoNothing;
  OverlapPolicy overlap = OverlapPolicy::kWait;
  int max_parallel = 1;      // PARALLEL only
  int timeout_seconds = 0;   // 0: none
  std::vector<WorkflowParam> params;
  WorkflowGraph graph;
  int trigger_status = 0;
  std::int64_t trigger_last_time = 0;
  std::int64_t trigger_next_time = 0;
  // The business calendar its runs follow, and how (calendar.h); none by default.
  CalendarUse calendar;
  int version = 1;
  std::int64_t created_at = 0;
  std::int64_t updated_at = 0;

  friend bool operator==(const Workflow&, const Workflow&) = default;
};

struct WorkflowRun {
  std::int64_t id = 0;
  std::int64_t workflow_id = 0;
  std::string workflow_name;  // read with the run
  std::int64_t job_group = 0;
  WorkflowRunState state = WorkflowRunState::kWaiting;
  TriggerType trigger_type = TriggerType::kManual;
  std::int64_t scheduled_time = 0;
  std::optional<std::int64_t> started_at;
  std::optional<std::int64_t> ended_at;
  std::optional<std::int64_t> deadline;
  std::string params = "{}";  // JSON object text: every declared parameter with its value
  WorkflowGraph graph;
  std::string reason;
  std::string created_by;
  int alarm_status = 0;
  // A backfill's run (trigger type BACKFILL): the backfill (backfill.h). Its scheduled time is
  // the historical instant it runs for, the logical time of every node run of it.
  std::optional<std::int64_t> backfill_id;

  friend bool operator==(const WorkflowRun&, const WorkflowRun&) = default;
};

// A node of a run, with what its current run row says.
struct WorkflowRunNode {
  std::string key;
  std::int64_t job_id = 0;
  NodeState state = NodeState::kWaiting;
  std::optional<std::int64_t> log_id;
  int attempts = 0;
  std::string param;
  std::optional<std::string> output;  // JSON text
  std::string message;
  std::optional<std::int64_t> started_at;
  std::optional<std::int64_t> ended_at;
  // Of its run row (log_id), when it has one.
  std::optional<FireState> run_state;
  std::string executor_address;

  friend bool operator==(const WorkflowRunNode&, const WorkflowRunNode&) = default;
};

}  // namespace cronwheel::admin
