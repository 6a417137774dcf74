#pragma once

// Following a workflow run (`workflows trigger --wait`): which states end a run, and what changed
// between two answers of GET workflow-runs/{id}, said a line each.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace cronwheel::cli {

// The run's `state`, checked to be one the API defines (waiting, running, succeeded, failed,
// cancelled, skipped, timed_out): throws unexpected_answer otherwise, so that a follower never
// waits on a state it cannot know the end of.
std::string workflow_run_state(const nlohmann::json& run);

// Whether a run in `state` has ended (every state but waiting and running).
bool workflow_run_ended(std::string_view state);

// What changed in one run from one answer to the next. Not thread-safe; one per followed run.
class WorkflowRunProgress {
 public:
  // The lines telling what changed in `run` (an answer of GET workflow-runs/{id}, with its nodes)
  // since the previous call, the nodes in the run's order, then the run:
  //   - "node K: started (run N)" for a node's run not seen before (", attempt A" from the
  //     second attempt), also when the node has ended before it was seen started;
  //   - "node K: STATE" when the node's state changed, with ": MESSAGE" when a failed or
  //     cancelled node has one. A node first seen counts as having been waiting, so nodes still
  //     waiting say nothing;
  //   - "run ID STATE" when the run's state changed since the previous call, with ": REASON"
  //     when it has one and did not succeed. The first call only learns the run's state (the
  //     trigger's own line said it).
  // Texts from the server are made one line and cut (one_line).
  std::vector<std::string> changes(const nlohmann::json& run);

 private:
  struct Seen {
    std::string state = "waiting";
    std::int64_t run_id = 0;
  };
  std::map<std::string, Seen> nodes_;
  std::optional<std::string> run_state_;
};

}  // namespace cronwheel::cli
