// What `workflows trigger --wait` says between two answers of a workflow run, as tables of cases,
// and the workflow inputs and files checked before anything is sent.

#include "cli/workflow_progress.h"

#include <gtest/gtest.h>

#include <string>
#include <variant>
#include <vector>

#include "cli/cli_error.h"
#include "cli/workflow_inputs.h"

namespace cronwheel::cli {
namespace {

using nlohmann::json;
using Lines = std::vector<std::string>;

// A run answer: `nodes` as {key, state, runId (0: none), attempts, message}.
struct NodeAt {
  std::string key;
  std::string state;
  std::int64_t run_id = 0;
  int attempts = 0;
  std::string message{};
};

json run_at(const std::string& state, const std::vector<NodeAt>& nodes, const std::string& reason = "") {
  json list = json::array();
  for (const auto& n : nodes) {
    list.push_back({{"key", n.key},
                    {"state", n.state},
                    {"runId", n.run_id > 0 ? json(n.run_id) : json(nullptr)},
                    {"attempts", n.attempts},
                    {"message", n.message}});
  }
  return {{"id", 5}, {"state", state}, {"reason", reason}, {"nodes", list}};
}

TEST(WorkflowRunProgress, SaysEachChangeOnceInTheOrderOfTheNodes) {
  struct Step {
    json run;
    Lines said;
  };
  const std::vector<Step> steps = {
      // First answer: the run's state is only learnt; waiting nodes say nothing.
      {run_at("running", {{"a", "started", 11, 1}, {"b", "waiting"}, {"c", "waiting"}}), {"node a: started (run 11)"}},
      // Nothing changed.
      {run_at("running", {{"a", "started", 11, 1}, {"b", "waiting"}, {"c", "waiting"}}), {}},
      // a ended; b and c started together.
      {run_at("running", {{"a", "succeeded", 11, 1}, {"b", "started", 12, 1}, {"c", "started", 13, 1}}),
       {"node a: succeeded", "node b: started (run 12)", "node c: started (run 13)"}},
      // b is retried: a new run, the second attempt.
      {run_at("running", {{"a", "succeeded", 11, 1}, {"b", "started", 14, 2}, {"c", "started", 13, 1}}),
       {"node b: started (run 14, attempt 2)"}},
      // b failed for good (its message made one line), c was cancelled with no message, the run
      // failed with its reason.
      {run_at("failed",
              {{"a", "succeeded", 11, 1}, {"b", "failed", 14, 2, "exit 4\nTraceback"}, {"c", "cancelled", 13, 1}},
              "node b failed"),
       {"node b: failed: exit 4 Traceback", "node c: cancelled", "run 5 failed: node b failed"}},
      // Re-run from b: b and c wait, then run again.
      {run_at("running", {{"a", "succeeded", 11, 1}, {"b", "waiting", 14, 2}, {"c", "waiting", 13, 1}}),
       {"node b: waiting", "node c: waiting", "run 5 running"}},
      {run_at("succeeded", {{"a", "succeeded", 11, 1}, {"b", "succeeded", 15, 1}, {"c", "succeeded", 16, 1}},
              "all done"),
       {"node b: started (run 15)", "node b: succeeded", "node c: started (run 16)", "node c: succeeded",
        "run 5 succeeded"}},
  };
  WorkflowRunProgress progress;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    EXPECT_EQ(progress.changes(steps[i].run), steps[i].said) << "step " << i;
  }
}

TEST(WorkflowRunProgress, ANodeThatFailedWithoutRunningSaysWhy) {
  WorkflowRunProgress progress;
  progress.changes(run_at("running", {{"a", "waiting"}}));
  EXPECT_EQ(progress.changes(run_at("failed", {{"a", "failed", 0, 0, "parameters: ${nodes.x.output}: no node x"}},
                                    "node a failed")),
            (Lines{"node a: failed: parameters: ${nodes.x.output}: no node x", "run 5 failed: node a failed"}));
}

TEST(WorkflowRunProgress, AWaitingRunThatStartsSaysSo) {
  WorkflowRunProgress progress;
  EXPECT_EQ(progress.changes(run_at("waiting", {{"a", "waiting"}}, "waits for run 4")), Lines{});
  EXPECT_EQ(progress.changes(run_at("running", {{"a", "started", 11, 1}})),
            (Lines{"node a: started (run 11)", "run 5 running"}));
}

TEST(WorkflowRunProgress, RefusesAnAnswerItCannotFollow) {
  WorkflowRunProgress progress;
  EXPECT_THROW(progress.changes(run_at("paused", {})), CliError);
  EXPECT_THROW(progress.changes(json{{"id", 5}, {"state", "running"}}), CliError);  // no nodes
  EXPECT_THROW(progress.changes(json{{"id", 5}, {"state", "running"}, {"nodes", json::array({{{"key", 1}}})}}), CliError);
}

TEST(WorkflowRunState, TheEndsAreEveryStateButWaitingAndRunning) {
  for (const char* state : {"succeeded", "failed", "cancelled", "skipped", "timed_out"}) {
    EXPECT_TRUE(workflow_run_ended(state)) << state;
    EXPECT_EQ(workflow_run_state(json{{"state", state}}), state);
  }
  EXPECT_FALSE(workflow_run_ended("waiting"));
  EXPECT_FALSE(workflow_run_ended("running"));
  EXPECT_THROW(workflow_run_state(json{{"state", 3}}), CliError);
}

// ---- inputs

TEST(WorkflowInputs, AnAssignmentIsANameThenEverythingAfterTheFirstEquals) {
  using Pair = std::pair<std::string, std::string>;
  EXPECT_EQ(std::get<Pair>(parse_param_assignment("day=monday")), Pair("day", "monday"));
  EXPECT_EQ(std::get<Pair>(parse_param_assignment("q=a=b")), Pair("q", "a=b"));
  EXPECT_EQ(std::get<Pair>(parse_param_assignment("Empty_1-x=")), Pair("Empty_1-x", ""));
  EXPECT_EQ(std::get<std::string>(parse_param_assignment("day")), "an input is NAME=VALUE");
  EXPECT_EQ(std::get<std::string>(parse_param_assignment("=x")), "the parameter name is empty");
  EXPECT_EQ(std::get<std::string>(parse_param_assignment("_day=x")),
            "a parameter name is a letter, then letters, digits, '_' or '-'");
  EXPECT_EQ(std::get<std::string>(parse_param_assignment(std::string(65, 'a') + "=x")),
            "a parameter name has at most 64 characters");
  EXPECT_FALSE(workflow_key_problem(std::string(64, 'a'), "node key"));
}

TEST(WorkflowInputs, TriggerParamsAreStringsAndANameGivenTwiceIsBadUsage) {
  EXPECT_EQ(trigger_params({"day=monday", "n=3"}), json::parse(R"({"day":"monday","n":"3"})"));
  EXPECT_EQ(trigger_params({}), json::object());
  try {
    trigger_params({"day=a", "day=b"});
    FAIL() << "accepted";
  } catch (const CliError& e) {
    EXPECT_EQ(e.status(), kExitUsage);
    EXPECT_STREQ(e.what(), "--param: day is given twice");
  }
}

TEST(WorkflowInputs, ACheckBodyIsTheFilesObjectLessWhatTheServerKeeps) {
  const auto body = workflow_check_body(
      R"({"id":12,"version":4,"triggerStatus":1,"triggerLastTime":1,"triggerNextTime":2,"createdAt":3,"updatedAt":4,
          "jobGroup":3,"name":"etl","nodes":[{"key":"a","jobId":7}],"extra":true})");
  EXPECT_EQ(std::get<json>(body), json::parse(R"({"jobGroup":3,"name":"etl","nodes":[{"key":"a","jobId":7}],"extra":true})"));
}

TEST(WorkflowInputs, ACheckBodySaysWhereTheJsonBreaks) {
  EXPECT_EQ(std::get<std::string>(workflow_check_body("{\n  \"a\": tru\n}")).rfind("2:11: not JSON: ", 0), 0u)
      << std::get<std::string>(workflow_check_body("{\n  \"a\": tru\n}"));
  EXPECT_EQ(std::get<std::string>(workflow_check_body("")).rfind("1:1: not JSON: ", 0), 0u);
  EXPECT_EQ(std::get<std::string>(workflow_check_body("\"etl\"")),
            "a workflow is one JSON object (as `cronwheel workflows get WF -o json` prints)");
  EXPECT_EQ(std::get<std::string>(workflow_check_body(std::string(65, '[') + std::string(65, ']'))),
            "JSON nested deeper than 64");
}

}  // namespace
}  // namespace cronwheel::cli
