#include "cli/workflow_progress.h"

#include <array>

#include "cli/api_client.h"
#include "cli/cli_error.h"
#include "cli/output.h"

namespace cronwheel::cli {

namespace {

using nlohmann::json;

// A node's message or a run's reason on a progress line.
constexpr std::size_t kProgressTextBytes = 200;

constexpr std::array<std::string_view, 7> kRunStates{"waiting", "running",  "succeeded", "failed",
                                                     "cancelled", "skipped", "timed_out"};

}  // namespace

std::string workflow_run_state(const json& run) {
  const std::string state = string_member(run, "state");
  for (std::string_view known : kRunStates) {
    if (state == known) return state;
  }
  throw unexpected_answer("the run's state '" + one_line(state, 40) + "' is none the API defines");
}

bool workflow_run_ended(std::string_view state) { return state != "waiting" && state != "running"; }

std::vector<std::string> WorkflowRunProgress::changes(const json& run) {
  std::vector<std::string> lines;
  // Only the nodes of this answer are kept: what a server sends cannot pile up across answers.
  std::map<std::string, Seen> now;
  for (const json& node : array_member(run, "nodes")) {
    const std::string key = string_member(node, "key");
    const std::string state = string_member(node, "state");
    const std::int64_t run_id = int_of(node, "runId");
    auto before = nodes_.find(key);
    Seen& seen = now[key] = before != nodes_.end() ? before->second : Seen{};
    const std::string name = "node " + one_line(key, 64) + ": ";
    if (run_id > 0 && run_id != seen.run_id) {
      const auto attempts = int_of(node, "attempts");
      lines.push_back(name + "started (run " + std::to_string(run_id) +
                      (attempts > 1 ? ", attempt " + std::to_string(attempts) : "") + ")");
      seen.run_id = run_id;
      if (state == "started") seen.state = state;  // said just now
    }
    if (state != seen.state) {
      std::string line = name + one_line(state, 40);
      const std::string message = text_of(node, "message");
      if ((state == "failed" || state == "cancelled") && !message.empty()) {
        line += ": " + one_line(message, kProgressTextBytes);
      }
      lines.push_back(std::move(line));
      seen.state = state;
    }
  }
  nodes_ = std::move(now);
  const std::string state = workflow_run_state(run);
  if (run_state_ && *run_state_ != state) {
    std::string line = "run " + std::to_string(int_member(run, "id")) + " " + state;
    const std::string reason = text_of(run, "reason");
    if (state != "succeeded" && !reason.empty()) line += ": " + one_line(reason, kProgressTextBytes);
    lines.push_back(std::move(line));
  }
  run_state_ = state;
  return lines;
}

}  // namespace cronwheel::cli
