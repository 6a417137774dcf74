// Workflows end to end: the real cronwheel-admin on a fresh PostgreSQL database and a real
// cronwheel-executor running the nodes (its built-in `echo` handler answers its parameters as
// its message, which a node after it reads as output; `fail` fails; a GLUE_SHELL node leaves
// its output in CRONWHEEL_OUTPUT_FILE).

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <sstream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/http/http_client.h"
#include "tests/support/admin_process.h"
#include "tests/support/eventually.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_database.h"
#include "tests/support/webhook_receiver.h"

namespace cronwheel {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::AdminProcess;
using testing::ApiCredentials;
using testing::eventually;
using testing::Process;
using testing::TempDir;
using testing::TestDatabase;
using testing::WebhookReceiver;

// Long enough for a loaded 2-core machine; a test that needs it is failing anyway.
constexpr auto kBound = 60s;
constexpr const char* kToken = "workflows-e2e-token";
constexpr const char* kApp = "wf-e2e";

// The sample value of `series` in the admin's /metrics text, fetched without a login; -1 when
// absent.
double metric(const std::string& admin_url, const std::string& series) {
  common::http::HttpClient client(admin_url);
  auto r = client.get("metrics");
  EXPECT_EQ(r.status, 200) << r.error << r.body;
  std::istringstream in(r.body);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  }
  return -1;
}

class WorkflowsE2e : public ::testing::Test {
 protected:
  void SetUp() override {
    AdminProcess::Options options;
    options.db_url = db_.url();
    options.args = {"--node-id", "workflows-e2e", "--access-token", kToken, "--registry-refresh-ms", "200",
                    "--console-url", "https://cron.example.com/"};
    options.require_answers = true;
    admin_ = std::make_unique<AdminProcess>(options);
    ASSERT_GT(admin_->wait_until_listening(), 0) << admin_->process().out() << admin_->process().err();
    who_ = admin_->login();
    auto group = admin_->post("groups", who_, {{"appName", kApp}, {"title", "Workflow nodes"}, {"addressType", 0}});
    ASSERT_EQ(group.status, 201) << group.text;
    group_ = group.body["id"].get<std::int64_t>();

    executor_ = std::make_unique<Process>(std::vector<std::string>{
        std::string(CRONWHEEL_BIN_DIR) + "/cronwheel-executor", "--admin", admin_->url(), "--app-name", kApp, "--listen",
        "127.0.0.1:0", "--access-token", kToken, "--log-dir", (work_.path() / "logs").string()});
    ASSERT_TRUE(eventually(
        [&] {
          auto g = admin_->get("groups/" + std::to_string(group_), who_);
          return !g.body.value("addressList", std::vector<std::string>{}).empty() || !executor_->running();
        },
        kBound));
    ASSERT_TRUE(executor_->running()) << executor_->out() << executor_->err();
  }

  void TearDown() override {
    if (executor_) {
      executor_->signal(SIGTERM);
      executor_->wait_for_exit(kBound);
    }
    if (admin_) {
      EXPECT_EQ(admin_->stop(), 0) << admin_->process().out() << admin_->process().err();
    }
  }

  std::int64_t job(const std::string& name, const std::string& handler, int retries = 0) {
    auto created = admin_->post("jobs", who_,
                                {{"jobGroup", group_},
                                 {"name", name},
                                 {"jobDesc", name},
                                 {"scheduleType", "NONE"},
                                 {"executorHandler", handler},
                                 {"executorFailRetryCount", retries}});
    EXPECT_EQ(created.status, 201) << created.text;
    return created.body.value("id", std::int64_t{0});
  }

  // A GLUE_SHELL job running `script`.
  std::int64_t script_job(const std::string& name, const std::string& script) {
    auto created = admin_->post("jobs", who_,
                                {{"jobGroup", group_},
                                 {"name", name},
                                 {"jobDesc", name},
                                 {"scheduleType", "NONE"},
                                 {"executorHandler", ""},
                                 {"glueType", "GLUE_SHELL"},
                                 {"glueSource", script},
                                 {"glueRemark", "e2e"}});
    EXPECT_EQ(created.status, 201) << created.text;
    return created.body.value("id", std::int64_t{0});
  }

  static json node(const std::string& key, std::int64_t job, const std::string& params,
                   const std::string& on_failure = "FAIL") {
    return {{"key", key}, {"jobId", job}, {"params", params}, {"onFailure", on_failure}};
  }

  // A diamond a → b, a → c, b → d, c → d whose nodes run `handlers` (key → job id).
  json diamond(const std::string& name, const std::map<std::string, std::int64_t>& jobs,
               const std::string& b_policy = "FAIL") {
    return {{"jobGroup", group_},
            {"name", name},
            {"params", json::array({{{"name", "day"}, {"default", "monday"}}})},
            {"nodes", json::array({node("a", jobs.at("a"), R"({"rows":3,"day":"${params.day}"})"),
                                   node("b", jobs.at("b"), R"({"from":"b","rows":${nodes.a.output.rows}})", b_policy),
                                   node("c", jobs.at("c"), R"({"from":"c","day":"${nodes.a.output.day}"})"),
                                   node("d", jobs.at("d"),
                                        "b=${nodes.b.output.from}/${nodes.b.output.rows} c=${nodes.c.output.day}")})},
            {"edges", json::array({{{"from", "a"}, {"to", "b"}},
                                   {{"from", "a"}, {"to", "c"}},
                                   {{"from", "b"}, {"to", "d"}},
                                   {{"from", "c"}, {"to", "d"}}})}};
  }

  std::int64_t create(const json& workflow) {
    auto created = admin_->post("workflows", who_, workflow);
    EXPECT_EQ(created.status, 201) << created.text;
    return created.body.value("id", std::int64_t{0});
  }

  json trigger(std::int64_t workflow, const json& params = json::object()) {
    auto run = admin_->post("workflows/" + std::to_string(workflow) + "/trigger", who_, {{"params", params}});
    EXPECT_EQ(run.status, 201) << run.text;
    return run.body;
  }

  // The run once it has ended.
  json ended(std::int64_t run) {
    json body;
    const bool done = eventually(
        [&] {
          body = admin_->get("workflow-runs/" + std::to_string(run), who_).body;
          const std::string state = body.value("state", "");
          return state != "running" && state != "waiting";
        },
        kBound);
    EXPECT_TRUE(done) << body.dump(2) << "\n--- admin\n" << admin_->process().err();
    return body;
  }

  // The run once it ended and none of its nodes is still running: a run fails as soon as a node
  // fails, while a running sibling finishes after it (FINISH).
  json settled(std::int64_t run) {
    json body = ended(run);
    const bool done = eventually(
        [&] {
          body = admin_->get("workflow-runs/" + std::to_string(run), who_).body;
          for (const json& n : body.value("nodes", json::array())) {
            if (n.value("state", "") == "started") return false;
          }
          return true;
        },
        kBound);
    EXPECT_TRUE(done) << body.dump(2);
    return body;
  }

  static json node_of(const json& run, const std::string& key) {
    for (const json& n : run["nodes"]) {
      if (n["key"] == key) return n;
    }
    return nullptr;
  }

  // The node runs of a workflow run, by node key, from the run list.
  std::map<std::string, int> runs_per_node(std::int64_t workflow_run) {
    std::map<std::string, int> out;
    const json page = admin_->get("logs?jobGroup=" + std::to_string(group_) + "&limit=1000", who_).body;
    for (const json& log : page["items"]) {
      if (log["workflowRunId"] == workflow_run) ++out[log["workflowNode"].get<std::string>()];
    }
    return out;
  }

  TempDir work_{"cronwheel-workflows-e2e"};
  TestDatabase db_;
  std::unique_ptr<AdminProcess> admin_;
  std::unique_ptr<Process> executor_;
  ApiCredentials who_;
  std::int64_t group_ = 0;
};

TEST_F(WorkflowsE2e, ADiamondRunsEachNodeOnceAndTheJoinGetsBothOutputs) {
  const auto wf = create(diamond("diamond", {{"a", job("a", "echo")}, {"b", job("b", "echo")},
                                              {"c", job("c", "echo")}, {"d", job("d", "echo")}}));
  const json started = trigger(wf, {{"day", "friday"}});
  EXPECT_EQ(started["state"], "running");
  const json run = ended(started["id"].get<std::int64_t>());
  ASSERT_EQ(run["state"], "succeeded") << run.dump(2);
  const json d = node_of(run, "d");
  EXPECT_EQ(d["state"], "succeeded");
  EXPECT_EQ(d["param"], "b=b/3 c=friday");
  EXPECT_EQ(node_of(run, "b")["param"], R"({"from":"b","rows":3})");
  EXPECT_EQ(node_of(run, "a")["output"], (json{{"rows", 3}, {"day", "friday"}}));
  const json d_run = admin_->get("logs/" + std::to_string(d["runId"].get<std::int64_t>()), who_).body;
  EXPECT_EQ(d_run["handleMsg"], "b=b/3 c=friday") << "the executor got the rendered parameters";
  EXPECT_EQ(d_run["triggerType"], "WORKFLOW");
  EXPECT_EQ(runs_per_node(run["id"].get<std::int64_t>()),
            (std::map<std::string, int>{{"a", 1}, {"b", 1}, {"c", 1}, {"d", 1}}));
  // b, c and d were handed off from a parent; a started the run. (The runs by state are counted
  // every 15 s: the workflow runner's test reads them.)
  EXPECT_EQ(metric(admin_->url(), "cronwheel_workflow_handoff_seconds_count"), 3);
}

TEST_F(WorkflowsE2e, AScriptNodesOutputFileReachesTheNextNodesParameters) {
  // The script gets its node's rendered parameters as $1 and leaves its output in
  // CRONWHEEL_OUTPUT_FILE; the next node reads fields of it.
  const auto load = script_job("load", "echo \"loading $1\"\n"
                                       "printf '{\"rows\":42,\"day\":\"%s\"}\\n' \"$1\" > \"$CRONWHEEL_OUTPUT_FILE\"\n");
  const json workflow = {
      {"jobGroup", group_},
      {"name", "script-output"},
      {"params", json::array({{{"name", "day"}, {"default", "monday"}}})},
      {"nodes", json::array({node("load", load, "${params.day}"),
                             node("report", job("report", "echo"),
                                  "rows=${nodes.load.output.rows} day=${nodes.load.output.day}")})},
      {"edges", json::array({{{"from", "load"}, {"to", "report"}}})}};
  const json run = ended(trigger(create(workflow), {{"day", "friday"}})["id"].get<std::int64_t>());
  ASSERT_EQ(run["state"], "succeeded") << run.dump(2) << "\n--- executor\n" << executor_->err();
  EXPECT_EQ(node_of(run, "load")["output"], (json{{"rows", 42}, {"day", "friday"}}));
  const json report = node_of(run, "report");
  EXPECT_EQ(report["param"], "rows=42 day=friday");
  const json report_run = admin_->get("logs/" + std::to_string(report["runId"].get<std::int64_t>()), who_).body;
  EXPECT_EQ(report_run["handleMsg"], "rows=42 day=friday") << "the executor got the rendered parameters";
}

TEST_F(WorkflowsE2e, AFailingNodeFailsTheRunThenARerunFromItKeepsWhatSucceeded) {
  const auto echo_a = job("a", "echo");
  const auto failing = job("b", "fail");
  const auto wf = create(diamond("failing", {{"a", echo_a}, {"b", failing}, {"c", job("c", "echo")}, {"d", job("d", "echo")}}));
  json run = settled(trigger(wf)["id"].get<std::int64_t>());
  const auto id = run["id"].get<std::int64_t>();
  ASSERT_EQ(run["state"], "failed") << run.dump(2);
  EXPECT_NE(run["reason"].get<std::string>().find("node b failed"), std::string::npos) << run["reason"];
  EXPECT_EQ(node_of(run, "d")["state"], "cancelled");
  EXPECT_EQ(node_of(run, "c")["state"], "succeeded") << "a running sibling finishes (FINISH)";

  // b's job is fixed; the run goes on from b, without running a or c again.
  auto fixed = admin_->put("jobs/" + std::to_string(failing), who_, {{"executorHandler", "echo"}});
  ASSERT_EQ(fixed.status, 200) << fixed.text;
  auto rerun = admin_->post("workflow-runs/" + std::to_string(id) + "/rerun", who_, {{"node", "b"}});
  ASSERT_EQ(rerun.status, 200) << rerun.text;
  run = ended(id);
  ASSERT_EQ(run["state"], "succeeded") << run.dump(2);
  EXPECT_EQ(node_of(run, "d")["param"], "b=b/3 c=monday");
  EXPECT_EQ(node_of(run, "b")["attempts"], 2);
  EXPECT_EQ(runs_per_node(id), (std::map<std::string, int>{{"a", 1}, {"b", 2}, {"c", 1}, {"d", 1}}));

  auto again = admin_->post("workflow-runs/" + std::to_string(id) + "/rerun", who_, {{"node", "b"}});
  EXPECT_EQ(again.status, 409) << again.text;
}

TEST_F(WorkflowsE2e, AFailureUnderContinueLetsTheJoinRun) {
  // `fail` fails with its parameters as the message: b's output still reads as JSON.
  const auto wf = create(diamond("continuing",
                                 {{"a", job("a", "echo")}, {"b", job("b", "fail")}, {"c", job("c", "echo")}, {"d", job("d", "echo")}},
                                 "CONTINUE"));
  const json run = ended(trigger(wf)["id"].get<std::int64_t>());
  EXPECT_EQ(run["state"], "succeeded") << run.dump(2);
  EXPECT_EQ(node_of(run, "b")["state"], "failed");
  EXPECT_EQ(node_of(run, "d")["state"], "succeeded");
  EXPECT_EQ(node_of(run, "d")["param"], "b=b/3 c=monday");
}

TEST_F(WorkflowsE2e, AParameterThatDoesNotResolveFailsItsNodeWithTheReasonWithoutRunningIt) {
  json w = diamond("unresolved", {{"a", job("a", "echo")}, {"b", job("b", "echo")}, {"c", job("c", "echo")}, {"d", job("d", "echo")}});
  w["nodes"][3]["params"] = "${nodes.c.output.rows}";
  const json run = ended(trigger(create(w))["id"].get<std::int64_t>());
  EXPECT_EQ(run["state"], "failed") << run.dump(2);
  const json d = node_of(run, "d");
  EXPECT_EQ(d["state"], "failed");
  EXPECT_EQ(d["message"], "parameters: ${nodes.c.output.rows}: the output of node c has no field \"rows\"") << d;
  EXPECT_EQ(d["runId"], nullptr) << "never sent";
  EXPECT_EQ(runs_per_node(run["id"].get<std::int64_t>()), (std::map<std::string, int>{{"a", 1}, {"b", 1}, {"c", 1}}));
}

TEST_F(WorkflowsE2e, AFailedRunAlarmsItsGroupsChannelOnce) {
  WebhookReceiver receiver;
  auto channel = admin_->post("alarm-channels", who_,
                              {{"name", "workflow-hook"}, {"kind", "webhook"}, {"target", receiver.url("/hook")},
                               {"groups", json::array({group_})}});
  ASSERT_EQ(channel.status, 201) << channel.text;
  const auto wf = create(diamond("alarming", {{"a", job("a", "echo")}, {"b", job("b", "fail")}, {"c", job("c", "echo")},
                                              {"d", job("d", "echo")}}));
  const json run = ended(trigger(wf)["id"].get<std::int64_t>());
  ASSERT_EQ(run["state"], "failed") << run.dump(2);
  // The job `b` alarms for its run too (its group's channel takes its alarms): two requests.
  ASSERT_TRUE(receiver.wait_for(2, kBound)) << admin_->process().err();
  json workflow_alarm;
  int workflow_alarms = 0;
  for (const auto& r : receiver.requests()) {
    const json body = json::parse(r.body);
    if (body["event"] == "workflow_alarm") {
      ++workflow_alarms;
      workflow_alarm = body;
    }
  }
  ASSERT_EQ(workflow_alarms, 1) << "one alarm per failed run";
  EXPECT_EQ(workflow_alarm["workflow"]["name"], "alarming");
  EXPECT_EQ(workflow_alarm["run"]["id"], run["id"]);
  EXPECT_EQ(workflow_alarm["run"]["url"], "https://cron.example.com/workflow-runs/" + run["id"].dump());
  ASSERT_EQ(workflow_alarm["run"]["nodes"].size(), 2u) << workflow_alarm.dump(2);  // b failed, d cancelled
  EXPECT_EQ(workflow_alarm["run"]["nodes"][0]["key"], "b");
  EXPECT_TRUE(eventually([&] { return admin_->get("workflow-runs/" + run["id"].dump(), who_).body["alarmStatus"] == 2; }, kBound));
}

TEST_F(WorkflowsE2e, RefusesACycleNamingItAndExplainsEveryProblem) {
  const auto a = job("a", "echo");
  json w = diamond("cyclic", {{"a", a}, {"b", a}, {"c", a}, {"d", a}});
  w["edges"].push_back({{"from", "d"}, {"to", "a"}});
  auto refused = admin_->post("workflows", who_, w);
  EXPECT_EQ(refused.status, 400) << refused.text;
  EXPECT_NE(refused.error_message().find("the edges form a cycle: a → b → d → a"), std::string::npos) << refused.text;
  auto checked = admin_->post("workflows/check", who_, w);
  ASSERT_EQ(checked.status, 200) << checked.text;
  ASSERT_EQ(checked.body["problems"].size(), 1u) << checked.text;
  EXPECT_EQ(checked.body["problems"][0]["field"], "edges");
}

}  // namespace
}  // namespace cronwheel
