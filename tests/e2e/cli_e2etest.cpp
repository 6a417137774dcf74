// The real `cronwheel` binary, run as a process for each command, against a real cronwheel-admin
// on a fresh PostgreSQL database and (for runs and workflows) the real cronwheel-executor running
// shell jobs and its built-in handlers: what each command prints, its exit status (0 success, 1
// failed operation, 2 bad usage), and where the settings come from (flags, CRONWHEEL_URL /
// CRONWHEEL_TOKEN, the settings file).

#include <gtest/gtest.h>

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/admin_process.h"
#include "tests/support/eventually.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_database.h"

namespace cronwheel {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using nlohmann::json;
using testing::AdminProcess;
using testing::ApiCredentials;
using testing::eventually;
using testing::Process;
using testing::TempDir;
using testing::TestDatabase;

// Long enough for a loaded 2-core machine; a test that needs it is failing anyway.
constexpr auto kBound = 60s;
constexpr const char* kExecutorToken = "cli-e2e-executor-token";
constexpr const char* kApp = "cli-e2e";

// A port on 127.0.0.1 that nothing listens on: bound, then closed without listening.
int unused_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  socklen_t length = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

struct Ran {
  int status = -1;
  std::string out;
  std::string err;
};

std::ostream& operator<<(std::ostream& os, const Ran& r) {
  return os << "status " << r.status << "\n--- stdout\n" << r.out << "--- stderr\n" << r.err;
}

class CliE2e : public ::testing::Test {
 protected:
  void SetUp() override {
    // Nothing of the machine's own settings: no variables, no ~/.config/cronwheel/cli.toml.
    for (const char* name : {"CRONWHEEL_URL", "CRONWHEEL_TOKEN", "CRONWHEEL_TOKEN_FILE"}) ::unsetenv(name);
    ::setenv("HOME", home_.path().c_str(), 1);
    ::setenv("XDG_CONFIG_HOME", (home_.path() / "config").c_str(), 1);

    AdminProcess::Options options;
    options.db_url = db_.url();
    options.args = {"--node-id", "cli-e2e", "--access-token", kExecutorToken, "--registry-refresh-ms", "200"};
    options.require_answers = true;
    admin_ = std::make_unique<AdminProcess>(options);
    ASSERT_GT(admin_->wait_until_listening(), 0) << admin_->process().out() << admin_->process().err();
    url_ = "http://127.0.0.1:" + std::to_string(admin_->port());
    session_ = admin_->login();

    auto token = admin_->post("tokens", session_, {{"name", "cli-e2e"}});
    ASSERT_EQ(token.status, 201) << token.text;
    token_ = token.body["token"].get<std::string>();
    auto group = admin_->post("groups", session_, {{"appName", kApp}, {"title", "CLI e2e"}, {"addressType", 0}});
    ASSERT_EQ(group.status, 201) << group.text;
    group_id_ = group.body["id"].get<std::int64_t>();
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

  static std::string binary() { return std::string(CRONWHEEL_BIN_DIR) + "/cronwheel"; }

  // `cronwheel ARGS` with only `env` added to the (cleaned) environment.
  Ran bare(std::vector<std::string> args, std::vector<std::string> env = {}, std::chrono::milliseconds bound = kBound) {
    args.insert(args.begin(), binary());
    Process process(args, env);
    Ran ran;
    ran.status = process.wait_for_exit(bound);
    ran.out = process.out();
    ran.err = process.err();
    return ran;
  }

  // `cronwheel --url URL --token TOKEN ARGS`.
  Ran run(std::vector<std::string> args) {
    args.insert(args.begin(), {"--url", url_, "--token", token_});
    return bare(args);
  }

  std::int64_t make_job(const std::string& name, json fields = json::object()) {
    json body = {{"jobGroup", group_id_}, {"name", name},           {"jobDesc", "CLI job " + name},
                 {"scheduleType", "CRON"}, {"scheduleConf", "0 0 3 * * ?"}, {"executorHandler", "echo"}};
    body.update(fields);
    auto job = admin_->post("jobs", session_, body);
    EXPECT_EQ(job.status, 201) << job.text;
    return job.body.value("id", std::int64_t{0});
  }

  std::int64_t make_script_job(const std::string& name, const std::string& script) {
    return make_job(name, {{"scheduleType", "NONE"},
                           {"scheduleConf", ""},
                           {"executorHandler", ""},  // scripts have none
                           {"glueType", "GLUE_SHELL"},
                           {"glueSource", script},
                           {"glueRemark", "e2e"}});
  }

  json job(std::int64_t id) { return admin_->get("jobs/" + std::to_string(id), session_).body; }
  json run_record(std::int64_t id) { return admin_->get("logs/" + std::to_string(id), session_).body; }

  // Starts cronwheel-executor in the group and waits until the group lists it.
  void start_executor() {
    executor_ = std::make_unique<Process>(std::vector<std::string>{
        std::string(CRONWHEEL_BIN_DIR) + "/cronwheel-executor", "--admin", admin_->url(), "--app-name", kApp,
        "--listen", "127.0.0.1:0", "--access-token", kExecutorToken, "--log-dir", (work_.path() / "logs").string()});
    ASSERT_TRUE(eventually(
        [&] {
          auto group = admin_->get("groups/" + std::to_string(group_id_), session_);
          return !group.body.value("addressList", std::vector<std::string>{}).empty() || !executor_->running();
        },
        kBound))
        << executor_->out() << executor_->err();
    ASSERT_TRUE(executor_->running()) << executor_->out() << executor_->err();
  }

  // A job that fires only when asked, running the executor's built-in `handler` (echo answers
  // its parameters as its message, which is a workflow node's output; fail fails).
  std::int64_t make_handler_job(const std::string& name, const std::string& handler) {
    return make_job(name, {{"scheduleType", "NONE"}, {"scheduleConf", ""}, {"executorHandler", handler}});
  }

  std::int64_t make_workflow(const json& workflow) {
    auto created = admin_->post("workflows", session_, workflow);
    EXPECT_EQ(created.status, 201) << created.text;
    return created.body.value("id", std::int64_t{0});
  }

  fs::path write(const std::string& name, const std::string& text) {
    const fs::path path = work_.path() / name;
    std::ofstream(path) << text;
    return path;
  }

  // The workflow run id `workflows trigger` printed ("workflow X triggered: run N").
  static std::int64_t triggered_workflow_run(const Ran& ran) {
    static const std::regex printed(R"(^workflow [^\n]* triggered: run (\d+)\n)");
    std::smatch m;
    if (!std::regex_search(ran.out, m, printed)) {
      ADD_FAILURE() << "no workflow run id in: " << ran;
      return 0;
    }
    return std::stoll(m[1]);
  }

  // The run id `jobs trigger` printed ("job X triggered: run N").
  static std::int64_t triggered_run(const Ran& ran) {
    static const std::regex printed(R"(triggered: run (\d+)\n$)");
    std::smatch m;
    if (!std::regex_search(ran.out, m, printed)) {
      ADD_FAILURE() << "no run id in: " << ran;
      return 0;
    }
    return std::stoll(m[1]);
  }

  TempDir home_{"cronwheel-cli-e2e-home"};
  TempDir work_{"cronwheel-cli-e2e"};
  TestDatabase db_;
  std::unique_ptr<AdminProcess> admin_;
  std::unique_ptr<Process> executor_;
  std::string url_;
  ApiCredentials session_;
  std::string token_;
  std::int64_t group_id_ = 0;
};

TEST_F(CliE2e, JobsListGetStartStopTriggerAndDelete) {
  const auto nightly = make_job("nightly");
  const auto reconcile = make_job("reconcile");

  Ran r = run({"jobs", "list"});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_EQ(r.out.rfind("ID ", 0), 0u) << r;
  EXPECT_NE(r.out.find("cli-e2e/nightly "), std::string::npos) << r;
  EXPECT_NE(r.out.find("cli-e2e/reconcile "), std::string::npos) << r;

  r = run({"jobs", "get", "cli-e2e/nightly"});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_NE(r.out.find("ID:            " + std::to_string(nightly) + "\n"), std::string::npos) << r;
  EXPECT_NE(r.out.find("Status:        stopped\n"), std::string::npos) << r;

  r = run({"jobs", "get", std::to_string(nightly), "-o", "json"});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_EQ(json::parse(r.out), job(nightly));

  // Bulk: both by name, one by id; each its own call.
  r = run({"jobs", "start", "cli-e2e/nightly", std::to_string(reconcile)});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_NE(r.out.find("job cli-e2e/nightly (" + std::to_string(nightly) + ") started, next fire "), std::string::npos) << r;
  EXPECT_NE(r.out.find("job " + std::to_string(reconcile) + " started"), std::string::npos) << r;
  EXPECT_EQ(job(nightly)["triggerStatus"], 1);
  EXPECT_EQ(job(reconcile)["triggerStatus"], 1);

  r = run({"jobs", "list", "--status", "running", "-o", "yaml"});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_NE(r.out.find("name: nightly"), std::string::npos) << r;

  // One of three does not exist: the others are still stopped, and the status is 1.
  r = run({"jobs", "stop", "cli-e2e/nightly", "cli-e2e/absent", std::to_string(reconcile)});
  EXPECT_EQ(r.status, 1) << r;
  EXPECT_EQ(r.err, "cronwheel: jobs stop cli-e2e/absent: no such job\n") << r;
  EXPECT_EQ(job(nightly)["triggerStatus"], 0);
  EXPECT_EQ(job(reconcile)["triggerStatus"], 0);

  r = run({"jobs", "trigger", "cli-e2e/nightly", "--param", "from-cli"});
  ASSERT_EQ(r.status, 0) << r;
  const auto fire = triggered_run(r);
  EXPECT_EQ(run_record(fire)["executorParam"], "from-cli");
  EXPECT_EQ(run_record(fire)["jobId"], nightly);

  r = run({"jobs", "delete", "cli-e2e/reconcile"});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_EQ(r.out, "job cli-e2e/reconcile (" + std::to_string(reconcile) + ") deleted\n");
  EXPECT_EQ(admin_->get("jobs/" + std::to_string(reconcile), session_).status, 404);

  // Exit status 1: what the server says, with the status.
  r = run({"jobs", "get", std::to_string(reconcile)});
  EXPECT_EQ(r.status, 1) << r;
  EXPECT_EQ(r.err, "cronwheel: jobs get " + std::to_string(reconcile) + ": no such job: " + std::to_string(reconcile) +
                       " (HTTP 404)\n");
  // Exit status 2: refused before anything is sent.
  r = run({"jobs", "get", "Nightly"});
  EXPECT_EQ(r.status, 2) << r;
  r = run({"jobs", "list", "--limit", "5000"});
  EXPECT_EQ(r.status, 2) << r;
  EXPECT_EQ(r.err, "cronwheel: jobs list: --limit: Value 5000 not in range 1 to 1000\n");
  r = run({"jobs", "list", "--no-such-flag"});
  EXPECT_EQ(r.status, 2) << r;
}

TEST_F(CliE2e, GroupsListPauseAndResume) {
  const auto running = make_job("running");
  const auto stopped = make_job("stopped");
  ASSERT_EQ(admin_->post("jobs/" + std::to_string(running) + "/start", session_).status, 200);

  Ran r = run({"groups", "list"});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_NE(r.out.find("  cli-e2e  CLI e2e  none   automatic: none\n"), std::string::npos) << r;

  r = run({"groups", "pause", kApp});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_EQ(r.out, "group cli-e2e paused: 1 job stopped (ids " + std::to_string(running) + ")\n");
  EXPECT_EQ(job(running)["triggerStatus"], 0);

  r = run({"groups", "resume", kApp, "-o", "json"});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_EQ(json::parse(r.out)["resumed"], json::array({running}));
  EXPECT_EQ(job(running)["triggerStatus"], 1);
  EXPECT_EQ(job(stopped)["triggerStatus"], 0);  // it was stopped before the pause

  r = run({"groups", "pause", "no-such-app"});
  EXPECT_EQ(r.status, 1) << r;
  EXPECT_EQ(r.err, "cronwheel: groups pause no-such-app: no such group\n");
}

TEST_F(CliE2e, RunsLogsFollowsAShellJobToItsEnd) {
  start_executor();
  make_script_job("steps",
                  "#!/bin/bash\n"
                  "echo 'step one'\n"
                  "sleep 1\n"
                  "echo 'step two'\n"
                  "sleep 1\n"
                  "echo 'all done'\n");
  Ran r = run({"jobs", "trigger", "cli-e2e/steps"});
  ASSERT_EQ(r.status, 0) << r;
  const auto id = triggered_run(r);

  // Started while the fire is still pending: it waits for the run, follows it, and ends with it.
  r = run({"runs", "logs", "-f", std::to_string(id)});
  ASSERT_EQ(r.status, 0) << r;
  const auto one = r.out.find("step one\n");
  const auto two = r.out.find("step two\n");
  const auto done = r.out.find("all done\n");
  ASSERT_NE(one, std::string::npos) << r;
  ASSERT_NE(two, std::string::npos) << r;
  ASSERT_NE(done, std::string::npos) << r;
  EXPECT_LT(one, two);
  EXPECT_LT(two, done);
  EXPECT_EQ(r.out.find("step one\n", one + 1), std::string::npos) << "a line printed twice: " << r;
  // Followed to the end: the run has its result by the time the command is done... or very soon.
  EXPECT_TRUE(eventually([&] { return run_record(id)["state"] == "succeeded"; })) << run_record(id).dump();

  r = run({"runs", "logs", std::to_string(id)});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_NE(r.out.find("step one\nstep two\nall done\n"), std::string::npos) << r;

  r = run({"runs", "list", "--job", "cli-e2e/steps", "--state", "success"});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_NE(r.out.find("\n" + std::to_string(id) + " "), std::string::npos) << r;
  EXPECT_NE(r.out.find(" succeeded "), std::string::npos) << r;

  r = run({"runs", "get", std::to_string(id), "-o", "json"});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_EQ(json::parse(r.out)["state"], "succeeded");
}

TEST_F(CliE2e, RunsKillEndsARunningScript) {
  start_executor();
  make_script_job("sleeper", "#!/bin/bash\necho 'sleeping'\nsleep 300\n");
  Ran r = run({"jobs", "trigger", "cli-e2e/sleeper"});
  ASSERT_EQ(r.status, 0) << r;
  const auto id = triggered_run(r);
  ASSERT_TRUE(eventually([&] {
    const Ran logs = run({"runs", "logs", std::to_string(id)});
    return logs.status == 0 && logs.out.find("sleeping\n") != std::string::npos;
  }, kBound)) << run_record(id).dump();

  r = run({"runs", "kill", std::to_string(id)});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_EQ(r.out, "run " + std::to_string(id) + " killed\n");
  EXPECT_TRUE(eventually([&] { return run_record(id)["state"] == "failed"; })) << run_record(id).dump();

  r = run({"runs", "kill", std::to_string(id)});
  EXPECT_EQ(r.status, 1) << r;
  EXPECT_NE(r.err.find("(HTTP 409)"), std::string::npos) << r;
}

TEST_F(CliE2e, WorkflowsTriggerWaitFollowsTheNodesToTheRunsEnd) {
  start_executor();
  const auto a = make_handler_job("wf-a", "echo");
  const auto b = make_handler_job("wf-b", "echo");
  const auto wf = make_workflow({{"jobGroup", group_id_},
                                 {"name", "pipeline"},
                                 {"params", json::array({{{"name", "day"}, {"default", "monday"}}})},
                                 {"nodes", json::array({{{"key", "a"}, {"jobId", a}, {"params", R"({"day":"${params.day}"})"}},
                                                        {{"key", "b"}, {"jobId", b}, {"params", "after ${nodes.a.output.day}"}}})},
                                 {"edges", json::array({{{"from", "a"}, {"to", "b"}}})}});
  const std::string label = "cli-e2e/pipeline (" + std::to_string(wf) + ")";

  Ran r = run({"workflows", "list"});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("\n" + std::to_string(wf) + " +cli-e2e/pipeline +stopped "))) << r;

  r = run({"workflows", "get", "cli-e2e/pipeline"});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_NE(r.out.find("Parameters:    day=monday\n"), std::string::npos) << r;
  EXPECT_NE(r.out.find("\nb     " + std::to_string(b)), std::string::npos) << r;

  // Followed to its end: each node's start (with its run) and end, then the run's; exit 0.
  r = run({"workflows", "trigger", "cli-e2e/pipeline", "-p", "day=friday", "--wait", "--wait-timeout", "60"});
  ASSERT_EQ(r.status, 0) << r;
  const auto id = triggered_workflow_run(r);
  EXPECT_EQ(r.out.rfind("workflow " + label + " triggered: run " + std::to_string(id) + "\n", 0), 0u) << r;
  const auto a_started = r.out.find("node a: started (run ");
  const auto a_done = r.out.find("node a: succeeded\n");
  const auto b_started = r.out.find("node b: started (run ");
  const auto b_done = r.out.find("node b: succeeded\n");
  ASSERT_NE(a_started, std::string::npos) << r;
  ASSERT_NE(a_done, std::string::npos) << r;
  ASSERT_NE(b_started, std::string::npos) << r;
  ASSERT_NE(b_done, std::string::npos) << r;
  EXPECT_LT(a_started, a_done);
  EXPECT_LT(a_done, b_started);  // b starts after a is done
  EXPECT_LT(b_started, b_done);
  EXPECT_EQ(r.out.substr(r.out.size() - ("run " + std::to_string(id) + " succeeded\n").size()),
            "run " + std::to_string(id) + " succeeded\n")
      << r;
  EXPECT_EQ(r.err, "") << r;

  // Both nodes succeeded, each with its run; b got what a produced.
  r = run({"workflow-runs", "get", std::to_string(id)});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_NE(r.out.find("State:       succeeded\n"), std::string::npos) << r;
  EXPECT_NE(r.out.find("Inputs:      day=friday\n"), std::string::npos) << r;
  EXPECT_NE(r.out.find("\nNODE  STATE      RUN ID  ATTEMPTS  MESSAGE\n"), std::string::npos) << r;
  const std::regex node_line(R"(\n(a|b)     succeeded  (\d+) +1\b)");
  int succeeded = 0;
  for (std::sregex_iterator it(r.out.begin(), r.out.end(), node_line), end; it != end; ++it) {
    ++succeeded;
    EXPECT_EQ(run_record(std::stoll((*it)[2]))["state"], "succeeded") << (*it)[0];
  }
  EXPECT_EQ(succeeded, 2) << r;
  r = run({"workflow-runs", "get", std::to_string(id), "-o", "json"});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_EQ(json::parse(r.out)["nodes"][1]["param"], "after friday") << r;

  r = run({"workflow-runs", "list", "--workflow", "cli-e2e/pipeline", "--state", "succeeded"});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("^ID +WORKFLOW .*\n" + std::to_string(id) +
                                                  " +cli-e2e/pipeline +succeeded +API +[^\n]*\n$")))
      << r;

  // A node that fails fails the run, and the wait says so with exit status 1; a re-run from it
  // runs it again.
  const auto broken = make_handler_job("wf-broken", "fail");
  make_workflow({{"jobGroup", group_id_},
                 {"name", "breaks"},
                 {"nodes", json::array({{{"key", "a"}, {"jobId", a}}, {{"key", "x"}, {"jobId", broken}}})},
                 {"edges", json::array({{{"from", "a"}, {"to", "x"}}})}});
  r = run({"workflows", "trigger", "cli-e2e/breaks", "--wait"});
  EXPECT_EQ(r.status, 1) << r;
  EXPECT_NE(r.out.find("node a: succeeded\nnode x: started (run "), std::string::npos) << r;
  EXPECT_NE(r.out.find("\nnode x: failed"), std::string::npos) << r;
  const auto failed = triggered_workflow_run(r);
  EXPECT_NE(r.out.find("\nrun " + std::to_string(failed) + " failed"), std::string::npos) << r;
  r = run({"workflow-runs", "rerun", std::to_string(failed), "--from", "x"});
  ASSERT_EQ(r.status, 0) << r;
  // The broken node may fail again before the answer is printed: either state is the truth.
  EXPECT_TRUE(std::regex_match(
      r.out, std::regex("workflow run " + std::to_string(failed) + " re-run from node x: (running|failed)\n")))
      << r;
  r = run({"workflow-runs", "rerun", std::to_string(failed), "--from", "nope"});
  EXPECT_EQ(r.status, 1) << r;
  EXPECT_NE(r.err.find("cronwheel: workflow-runs rerun " + std::to_string(failed) + ": "), std::string::npos) << r;
}

TEST_F(CliE2e, WorkflowsCheckReportsACycleWithItsField) {
  const auto a = make_handler_job("wf-a", "echo");
  const auto b = make_handler_job("wf-b", "echo");
  json workflow = {{"jobGroup", group_id_},
                   {"name", "loop"},
                   {"nodes", json::array({{{"key", "a"}, {"jobId", a}}, {{"key", "b"}, {"jobId", b}}})},
                   {"edges", json::array({{{"from", "a"}, {"to", "b"}}, {{"from", "b"}, {"to", "a"}}})}};
  const fs::path cyclic = write("loop.json", workflow.dump(2));
  Ran r = run({"workflows", "check", "-f", cyclic.string()});
  EXPECT_EQ(r.status, 1) << r;
  EXPECT_EQ(r.out.rfind("FIELD  PROBLEM\n", 0), 0u) << r;
  EXPECT_NE(r.out.find("\nedges  the edges form a cycle: a → b → a\n"), std::string::npos) << r;
  EXPECT_NE(r.err.find("cronwheel: workflows check " + cyclic.string() + ": "), std::string::npos) << r;
  EXPECT_EQ(admin_->get("workflows", session_).body["total"], 0);  // nothing saved

  // Without the edge back it has none; what `workflows get -o json` prints checks as it is.
  workflow["edges"] = json::array({{{"from", "a"}, {"to", "b"}}});
  make_workflow(workflow);
  r = run({"workflows", "get", "cli-e2e/loop", "-o", "json"});
  ASSERT_EQ(r.status, 0) << r;
  const fs::path saved = write("saved.json", r.out);
  r = run({"workflows", "check", "-f", saved.string()});
  EXPECT_EQ(r.status, 0) << r;
  EXPECT_EQ(r.out, saved.string() + ": no problems\n");

  // A field the server cannot read is a problem with its field too.
  workflow["scheduleType"] = "FIX_DELAY";
  r = run({"workflows", "check", "-f", write("delay.json", workflow.dump()).string(), "-o", "json"});
  EXPECT_EQ(r.status, 1) << r;
  EXPECT_EQ(json::parse(r.out)["problems"][0]["field"], "scheduleType") << r;
}

TEST_F(CliE2e, SettingsComeFromFlagsTheEnvironmentAndTheSettingsFile) {
  make_job("listed");
  const std::string url_env = "CRONWHEEL_URL=" + url_;

  // The environment.
  Ran r = bare({"jobs", "list"}, {url_env, "CRONWHEEL_TOKEN=" + token_});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_NE(r.out.find("cli-e2e/listed"), std::string::npos) << r;

  // A token file named by the environment.
  const fs::path token_file = work_.path() / "token";
  std::ofstream(token_file) << token_ << "\n";
  r = bare({"jobs", "list"}, {url_env, "CRONWHEEL_TOKEN_FILE=" + token_file.string()});
  EXPECT_EQ(r.status, 0) << r;

  // A flag beats the environment: the wrong token in the variable is not used.
  r = bare({"jobs", "list", "--token", token_}, {url_env, "CRONWHEEL_TOKEN=wrong-token"});
  EXPECT_EQ(r.status, 0) << r;
  r = bare({"jobs", "list"}, {url_env, "CRONWHEEL_TOKEN=wrong-token"});
  EXPECT_EQ(r.status, 1) << r;
  EXPECT_NE(r.err.find("(HTTP 401)"), std::string::npos) << r;

  // The default settings file, with a token file beside it.
  fs::create_directories(home_.path() / "config" / "cronwheel");
  std::ofstream(home_.path() / "config" / "cronwheel" / "token") << token_ << "\n";
  std::ofstream(home_.path() / "config" / "cronwheel" / "cli.toml")
      << "url = \"" << url_ << "\"\ntoken-file = \"token\"\n";
  r = bare({"jobs", "list"});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_NE(r.out.find("cli-e2e/listed"), std::string::npos) << r;

  // The environment beats the file: a URL nothing listens on is tried, and said.
  const std::string dead = "http://127.0.0.1:" + std::to_string(unused_port());
  r = bare({"jobs", "list"}, {"CRONWHEEL_URL=" + dead});
  EXPECT_EQ(r.status, 1) << r;
  EXPECT_EQ(r.err, "cronwheel: cannot reach " + dead + ": connection refused\n") << r;

  // --config names another file; a malformed one is an error naming it (bad usage).
  const fs::path other = work_.path() / "other.toml";
  std::ofstream(other) << "url = \"" << url_ << "\"\ntoken = \"" << token_ << "\"\n";
  r = bare({"--config", other.string(), "jobs", "list"});
  EXPECT_EQ(r.status, 0) << r;
  std::ofstream(other) << "url = \n[[broken\n";
  r = bare({"--config", other.string(), "jobs", "list"});
  EXPECT_EQ(r.status, 2) << r;
  EXPECT_NE(r.err.find(other.string()), std::string::npos) << r;
}

// A calendar applied from a file, an .ics file's holidays imported into it, its year shown; a job
// naming it skips the holidays; what `get -o json` printed applies back as no change; a
// calendar a job names is not deleted.
TEST_F(CliE2e, CalendarsAppliedAndImportedShowTheirYearAndAJobSkipsTheirHolidays) {
  // Next year: inside the import's window (three years from today) whatever today is.
  const int year = static_cast<int>(std::chrono::year_month_day{std::chrono::floor<std::chrono::days>(
                                                                    std::chrono::system_clock::now())}
                                        .year()) +
                   1;
  const std::string y = std::to_string(year);
  const fs::path file = write("cli-holidays.json", json{{"name", "cli-holidays"},
                                                        {"description", "CLI e2e holidays"},
                                                        {"timeZone", "UTC"},
                                                        {"businessDays", {"MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY"}},
                                                        {"excludedDates", {{{"date", "--12-25"}, {"name", "Christmas"}}}},
                                                        {"excludedTimes", {{{"start", "12:00"}, {"end", "13:00"}}}}}
                                                       .dump(2));
  Ran r = run({"calendars", "apply", "-f", file.string()});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_EQ(r.out.rfind("calendar cli-holidays created (id ", 0), 0u) << r;
  r = run({"calendars", "apply", "-f", file.string()});
  EXPECT_EQ(r.out, "calendar cli-holidays unchanged (version 1)\n") << r;

  // National Day: 1 to 3 October of next year, one all-day event.
  const fs::path ics = write("national-day.ics", "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//cronwheel//e2e//EN\r\n"
                                                 "BEGIN:VEVENT\r\nUID:national-day@e2e\r\nDTSTAMP:20250101T000000Z\r\n"
                                                 "DTSTART;VALUE=DATE:" + y + "1001\r\nDTEND;VALUE=DATE:" + y + "1004\r\n"
                                                 "SUMMARY:National Day\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n");
  r = run({"calendars", "import", "cli-holidays", "--ics", ics.string(), "--source", "gov"});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_EQ(r.out, "calendar cli-holidays: 3 dates from source gov (version 2)\n") << r;

  r = run({"calendars", "days", "cli-holidays", "--year", y});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_NE(r.out.find("\nOct  xxx"), std::string::npos) << r;
  EXPECT_NE(r.out.find("\n" + y + "-10-01.." + y + "-10-03  x  National Day\n"), std::string::npos) << r;
  EXPECT_NE(r.out.find("\n" + y + "-12-25              x  Christmas\n"), std::string::npos) << r;
  EXPECT_NE(r.out.find("every day no fire in 12:00-13:00"), std::string::npos) << r;

  // What get -o json printed, imported dates and all, applies back as no change.
  r = run({"calendars", "get", "cli-holidays", "-o", "json"});
  ASSERT_EQ(r.status, 0) << r;
  const fs::path got = write("got.json", r.out);
  r = run({"calendars", "apply", "-f", got.string()});
  EXPECT_EQ(r.out, "calendar cli-holidays unchanged (version 2)\n") << r;

  // The .ics export holds the holidays.
  const fs::path exported = work_.path() / "exported.ics";
  r = run({"calendars", "export", "cli-holidays", "-o", exported.string()});
  ASSERT_EQ(r.status, 0) << r;
  std::ifstream in(exported);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(text.find("SUMMARY:National Day"), std::string::npos) << text;

  // A job every October day of that year at 09:00 UTC, by the calendar: its first fires skip
  // the three holidays, each named.
  const auto calendar_id = json::parse(run({"calendars", "get", "cli-holidays", "-o", "json"}).out)["id"].get<std::int64_t>();
  const auto id = make_job("october", {{"scheduleConf", "0 0 9 * 10 ? " + y}, {"calendarId", calendar_id}});
  const auto preview = admin_->get("jobs/" + std::to_string(id) + "/next-fires?count=3", session_);
  ASSERT_EQ(preview.status, 200) << preview.text;
  ASSERT_EQ(preview.body["times"].size(), 3u) << preview.text;
  EXPECT_EQ(preview.body["skipped"].size(), 3u) << preview.text;
  EXPECT_EQ(preview.body["skipped"][0]["reason"], "excluded by calendar cli-holidays: " + y + "-10-01 National Day")
      << preview.text;
  const auto first = preview.body["times"][0].get<std::int64_t>();
  const auto october_4 = std::chrono::sys_days{std::chrono::year{year} / std::chrono::October / 4} + std::chrono::hours{9};
  EXPECT_EQ(first, std::chrono::duration_cast<std::chrono::milliseconds>(october_4.time_since_epoch()).count()) << preview.text;

  // Named by the job, the calendar stays.
  r = run({"calendars", "delete", "cli-holidays"});
  EXPECT_EQ(r.status, 1) << r;
  EXPECT_NE(r.err.find("cronwheel: calendars delete cli-holidays: "), std::string::npos) << r;
  EXPECT_NE(r.err.find("cli-e2e/october"), std::string::npos) << r;
  EXPECT_NE(run({"calendars", "list"}).out.find("  cli-holidays  "), std::string::npos) << "still listed";
}

// An instant as `--from` takes it: ISO-8601 in UTC, to the second.
std::string utc_iso8601(std::int64_t ms) {
  const std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm utc{};
  ::gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

TEST_F(CliE2e, AFixRateJobBackfilledOverTheLastMinutesRunsEachInstantAndIsListedDone) {
  start_executor();
  // Stopped: only the backfill runs it. Every minute, so the last five minutes hold five instants.
  const auto id = make_job("catch-up", {{"scheduleType", "FIX_RATE"}, {"scheduleConf", "60"}});
  const auto now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  const std::int64_t from = (now_ms - 300'000) / 1000 * 1000;
  const std::string from_text = utc_iso8601(from);
  const std::string to_text = std::to_string(now_ms - 1000);

  Ran r = run({"jobs", "backfill", "cli-e2e/catch-up", "--from", from_text, "--to", to_text, "--dry-run"});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 7) << "a header, five instants, the counts: " << r;
  EXPECT_NE(r.out.find(": 5 instants from "), std::string::npos) << r;
  EXPECT_NE(r.out.find(", 5 to run, 0 of them ran already (dry run: nothing written)\n"), std::string::npos) << r;
  EXPECT_EQ(admin_->get("backfills", session_).body["total"], 0) << "a dry run writes nothing";

  r = run({"jobs", "backfill", "cli-e2e/catch-up", "--from", from_text, "--to", to_text, "--max-concurrent", "2", "--wait"});
  ASSERT_EQ(r.status, 0) << r;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex(R"(^job cli-e2e/catch-up \(\d+\): backfill (\d+) running, 5 instants )")))
      << r;
  const std::string backfill = m[1];
  EXPECT_NE(r.out.find("backfill " + backfill + " done, 5 instants: 5 runs written, 0 skipped; runs 0 pending, 0 running, "
                       "5 succeeded, 0 failed, 0 cancelled\n"),
            std::string::npos)
      << r;

  r = run({"backfills", "list"});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("\n" + backfill + " +job " + std::to_string(id) + " +done +"))) << r;
  r = run({"backfills", "list", "--job", "cli-e2e/catch-up", "--state", "done", "-o", "json"});
  ASSERT_EQ(r.status, 0) << r;
  const json page = json::parse(r.out);
  ASSERT_EQ(page["items"].size(), 1u) << r;
  EXPECT_EQ(page["items"][0]["id"], std::stoll(backfill));
  EXPECT_EQ(page["items"][0]["written"], 5);

  // Its runs, each at its historical instant, a minute apart from --from.
  r = run({"runs", "list", "--backfill", backfill, "-o", "json"});
  ASSERT_EQ(r.status, 0) << r;
  const json runs = json::parse(r.out)["items"];
  ASSERT_EQ(runs.size(), 5u) << r;
  std::vector<std::int64_t> instants;
  for (const auto& fire : runs) {
    EXPECT_EQ(fire["triggerType"], "BACKFILL");
    EXPECT_EQ(fire["state"], "succeeded");
    instants.push_back(fire["scheduledTime"].get<std::int64_t>());
  }
  std::sort(instants.begin(), instants.end());
  EXPECT_EQ(instants, (std::vector<std::int64_t>{from, from + 60'000, from + 120'000, from + 180'000, from + 240'000}));

  // The same range again: every instant ran already and is skipped.
  r = run({"jobs", "backfill", std::to_string(id), "--from", std::to_string(from), "--to", to_text, "--dry-run"});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_NE(r.out.find(", 0 to run, 5 of them ran already (skipped) (dry run: nothing written)\n"), std::string::npos) << r;

  r = run({"backfills", "cancel", backfill});
  EXPECT_EQ(r.status, 1) << r;
  EXPECT_NE(r.err.find("has ended already (done)"), std::string::npos) << r;
}

TEST_F(CliE2e, HelpAndVersionNeedNoServer) {
  Ran r = bare({"jobs", "trigger", "--help"});
  EXPECT_EQ(r.status, 0) << r;
  EXPECT_NE(r.out.find("EXAMPLES"), std::string::npos) << r;
  r = bare({"--version"});
  EXPECT_EQ(r.status, 0) << r;
  EXPECT_EQ(r.out.rfind("cronwheel ", 0), 0u) << r;
  r = bare({"version"});
  EXPECT_EQ(r.status, 0) << r;
}

}  // namespace
}  // namespace cronwheel
