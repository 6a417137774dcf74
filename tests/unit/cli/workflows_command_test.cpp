// `cronwheel workflows` and `cronwheel workflow-runs` against a scripted API: the arguments
// refused before anything is sent, APP/NAME resolved to ids, what is sent, the tables and the
// JSON printed, following a triggered run to its end (on the harness's fake clock), and the
// problems `workflows check` prints.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/support/temp_dir.h"
#include "tests/unit/cli/cli_harness.h"

namespace cronwheel::cli {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using testing::CliHarness;
using testing::CliResult;
using testing::page_of;

// A workflow as the API answers it: a → b in group 3.
json wf_json(std::int64_t id, const std::string& name, int trigger_status = 0) {
  return {{"id", id},
          {"jobGroup", 3},
          {"name", name},
          {"description", "Workflow " + name},
          {"author", "ops"},
          {"alarmEmail", ""},
          {"scheduleType", "CRON"},
          {"scheduleConf", "0 0 2 * * ?"},
          {"timezone", "UTC"},
          {"misfireStrategy", "DO_NOTHING"},
          {"overlap", "PARALLEL"},
          {"maxParallel", 2},
          {"timeout", 0},
          {"onFailureRunning", "FINISH"},
          {"params", json::array({{{"name", "day"}, {"default", "monday"}, {"description", ""}},
                                  {{"name", "region"}, {"description", ""}}})},
          {"nodes", json::array({{{"key", "a"}, {"jobId", 7}, {"onFailure", "FAIL"}, {"params", "${params.day}"}},
                                 {{"key", "b"}, {"jobId", 8}, {"onFailure", "CONTINUE"}}})},
          {"edges", json::array({{{"from", "a"}, {"to", "b"}}})},
          {"triggerStatus", trigger_status},
          {"triggerLastTime", 0},
          {"triggerNextTime", trigger_status == 1 ? 1767225600000 : 0},
          {"version", 4},
          {"createdAt", 1767139200000},
          {"updatedAt", 1767139200000}};
}

json wf_node(const std::string& key, const std::string& state, json run_id = nullptr, int attempts = 0,
             const std::string& message = "") {
  return {{"key", key},         {"jobId", key == "a" ? 7 : 8}, {"onFailure", "FAIL"},  {"state", state},
          {"runId", run_id},    {"runState", nullptr},         {"attempts", attempts}, {"param", ""},
          {"output", nullptr},  {"message", message},          {"startedAt", nullptr}, {"endedAt", nullptr},
          {"executorAddress", ""}};
}

// A run of workflow 12 (etl, group 3) with its nodes.
json wf_run(std::int64_t id, const std::string& state, json nodes, const std::string& reason = "") {
  return {{"id", id},
          {"workflowId", 12},
          {"workflowName", "etl"},
          {"jobGroup", 3},
          {"state", state},
          {"triggerType", "API"},
          {"scheduledTime", 1767225600000},
          {"startedAt", 1767225600000},
          {"endedAt", state == "running" || state == "waiting" ? json(nullptr) : json(1767225605000)},
          {"deadline", nullptr},
          {"params", {{"day", "monday"}}},
          {"reason", reason},
          {"createdBy", "ops"},
          {"alarmStatus", 0},
          {"nodes", std::move(nodes)},
          {"edges", json::array({{{"from", "a"}, {"to", "b"}}})}};
}

const json kBillingGroups =
    page_of(json::array({{{"id", 4}, {"appName", "billing-eu"}}, {{"id", 3}, {"appName", "billing"}}}));

class WorkflowsCommandTest : public testing::CliCommandTest {
 protected:
  void SetUp() override {
    CliCommandTest::SetUp();
    cli_.api.answer("GET api/v1/groups?limit=1000", 200, kBillingGroups);
  }

  // billing/etl is workflow 12.
  void name_etl() {
    cli_.api.answer("GET api/v1/groups?text=billing&offset=0&limit=1000", 200, kBillingGroups);
    cli_.api.answer("GET api/v1/workflows?jobGroup=3&name=etl&limit=2", 200, page_of(json::array({wf_json(12, "etl")})));
  }
};

// ---- arguments

TEST_F(WorkflowsCommandTest, BadArgumentsAreBadUsageBeforeAnythingIsSent) {
  expect_usage_error({"workflows", "get"}, "cronwheel: workflows get: WF is required");
  expect_usage_error({"workflows", "get", "etl"},
                     "cronwheel: workflows get: WF: 'etl': a workflow is its numeric id or APP/NAME (the group's app name "
                     "and the workflow's name)");
  expect_usage_error({"workflows", "start", "12", "billing/ETL"},
                     "cronwheel: workflows start: WF: 'billing/ETL': a workflow name has only a-z, 0-9, '.', '_' and '-', "
                     "and starts with a letter or digit");
  expect_usage_error({"workflows", "list", "--name", "Nightly"},
                     "cronwheel: workflows list: --name: 'Nightly': a workflow name has only a-z, 0-9, '.', '_' and '-', "
                     "and starts with a letter or digit");
  expect_usage_error({"workflows", "trigger", "12", "-p", "day"},
                     "cronwheel: workflows trigger: --param: 'day': an input is NAME=VALUE");
  expect_usage_error({"workflows", "trigger", "12", "-p", "1day=x"},
                     "cronwheel: workflows trigger: --param: '1day=x': a parameter name is a letter, then letters, "
                     "digits, '_' or '-'");
  expect_usage_error({"workflows", "trigger", "12", "-p", "day=a", "-p", "day=b"},
                     "cronwheel: workflows trigger: --param: day is given twice");
  expect_usage_error({"workflows", "trigger", "12", "--wait-timeout", "60"},
                     "cronwheel: workflows trigger: --wait-timeout requires --wait");
  expect_usage_error({"workflows", "trigger", "12", "--wait", "--wait-timeout", "0"},
                     "cronwheel: workflows trigger: --wait-timeout: Value 0 not in range 1 to 604800");
  expect_usage_error({"workflows", "check"}, "cronwheel: workflows check: --file is required");
  expect_usage_error({"workflow-runs", "list", "--state", "done"},
                     "cronwheel: workflow-runs list: --state: done not in {waiting,running,succeeded,failed,cancelled,"
                     "skipped,timed_out}");
  expect_usage_error({"workflow-runs", "get", "abc"}, "cronwheel: workflow-runs get: RUN: 'abc': an id is a positive whole number");
  expect_usage_error({"workflow-runs", "rerun", "17"}, "cronwheel: workflow-runs rerun: --from is required");
  expect_usage_error({"workflow-runs", "rerun", "17", "--from", "b c"},
                     "cronwheel: workflow-runs rerun: --from: 'b c': a node key is a letter, then letters, digits, '_' or "
                     "'-'");
  expect_usage_error({"workflows"},
                     "cronwheel: workflows: a command is required: list, get, start, stop, delete, trigger, backfill, check (see "
                     "cronwheel workflows --help)");
}

TEST_F(WorkflowsCommandTest, TheRequestTimeoutIsTheGlobalOneBeforeOrAfterTheCommand) {
  cli_.api.answer("POST api/v1/workflows/12/trigger", 201, wf_run(17, "running", json::array()));
  EXPECT_EQ(cli_.run({"--timeout", "5", "workflows", "trigger", "12"}).status, 0);
  cli_.api.answer("POST api/v1/workflows/12/trigger", 201, wf_run(18, "running", json::array()));
  const CliResult r = cli_.run({"workflows", "trigger", "12", "--timeout", "5"});
  EXPECT_EQ(r.status, 0) << r.err;
}

// ---- APP/NAME

TEST_F(WorkflowsCommandTest, AppSlashNameIsResolvedThroughItsGroup) {
  name_etl();
  cli_.api.answer("GET api/v1/workflows/12", 200, wf_json(12, "etl"));
  const CliResult r = cli_.run({"workflows", "get", "billing/etl", "-o", "json"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(json::parse(r.out), wf_json(12, "etl"));
  EXPECT_EQ(cli_.api.calls(), (std::vector<std::string>{"GET api/v1/groups?text=billing&offset=0&limit=1000",
                                                        "GET api/v1/workflows?jobGroup=3&name=etl&limit=2",
                                                        "GET api/v1/workflows/12"}));
}

TEST_F(WorkflowsCommandTest, AnIdIsUsedAsItIs) {
  cli_.api.answer("GET api/v1/workflows/12", 200, wf_json(12, "etl"));
  const CliResult r = cli_.run({"workflows", "get", "12", "-o", "yaml"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(cli_.api.calls(), (std::vector<std::string>{"GET api/v1/workflows/12"}));
  EXPECT_NE(r.out.find("\nname: etl\n"), std::string::npos) << r.out;
}

TEST_F(WorkflowsCommandTest, AnUnknownNameOrGroupSaysWhichInOneLine) {
  cli_.api.answer("GET api/v1/groups?text=billing&offset=0&limit=1000", 200, kBillingGroups);
  cli_.api.answer("GET api/v1/workflows?jobGroup=3&name=gone&limit=2", 200, page_of(json::array()));
  CliResult r = cli_.run({"workflows", "get", "billing/gone"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "cronwheel: workflows get billing/gone: no such workflow\n");
  EXPECT_EQ(r.out, "");

  cli_.api.answer("GET api/v1/groups?text=nope&offset=0&limit=1000", 200, page_of(json::array()));
  r = cli_.run({"workflows", "trigger", "nope/etl"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "cronwheel: workflows trigger nope/etl: no such group\n");
}

TEST_F(WorkflowsCommandTest, TwoWorkflowsAnsweredForOneNameAreUnexpected) {
  cli_.api.answer("GET api/v1/groups?text=billing&offset=0&limit=1000", 200, kBillingGroups);
  cli_.api.answer("GET api/v1/workflows?jobGroup=3&name=etl&limit=2", 200,
                  page_of(json::array({wf_json(12, "etl"), wf_json(13, "etl")})));
  const CliResult r = cli_.run({"workflows", "get", "billing/etl"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "cronwheel: workflows get billing/etl: unexpected answer from the server: two workflows named billing/etl\n");
}

// ---- workflows list|get

TEST_F(WorkflowsCommandTest, ListPrintsATableWithAppNames) {
  json other = wf_json(9, "sync", 1);
  other["jobGroup"] = 4;
  other["scheduleType"] = "FIX_RATE";
  other["scheduleConf"] = "300";
  json manual = wf_json(8, "by-hand");
  manual["scheduleType"] = "NONE";
  manual["scheduleConf"] = "";
  manual["jobGroup"] = 99;  // a group the user cannot see
  cli_.api.error("GET api/v1/groups/99", 404, "not_found", "no such group");
  cli_.api.answer("GET api/v1/workflows?limit=20", 200, page_of(json::array({wf_json(12, "etl"), other, manual})));
  const CliResult r = cli_.run({"workflows", "list"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "ID  WORKFLOW         STATUS     SCHEDULE     NEXT FIRE                  NODES  DESCRIPTION\n"
            "12  billing/etl      stopped    0 0 2 * * ?  -                          2      Workflow etl\n"
            "9   billing-eu/sync  scheduled  every 300 s  2026-01-01T00:00:00+00:00  2      Workflow sync\n"
            "8   #99/by-hand      stopped    -            -                          2      Workflow by-hand\n");
  EXPECT_EQ(r.err, "");
}

TEST_F(WorkflowsCommandTest, ListFiltersByGroupAndNameAndSaysWhenThePageIsPartial) {
  cli_.api.answer("GET api/v1/groups?text=billing&offset=0&limit=1000", 200, kBillingGroups);
  json page = page_of(json::array({wf_json(12, "etl")}));
  page["total"] = 3;
  cli_.api.answer("GET api/v1/workflows?jobGroup=3&name=etl&limit=1", 200, page);
  const CliResult r = cli_.run({"workflows", "list", "--group", "billing", "--name", "etl", "--limit", "1"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\n12  billing/etl  "), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "(1 of 3 workflows shown; --limit shows up to 1000)\n");
  EXPECT_EQ(cli_.api.calls().size(), 2u);  // the app name is known: no other group lookup
}

TEST_F(WorkflowsCommandTest, ListOfAnUnknownGroupNamesTheOption) {
  cli_.api.answer("GET api/v1/groups?text=nope&offset=0&limit=1000", 200, page_of(json::array()));
  const CliResult r = cli_.run({"workflows", "list", "--group", "nope"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "cronwheel: workflows list --group nope: no such group\n");
}

TEST_F(WorkflowsCommandTest, GetPrintsTheSettingsThenTheNodes) {
  cli_.api.answer("GET api/v1/workflows/12", 200, wf_json(12, "etl", 1));
  const CliResult r = cli_.run({"workflows", "get", "12"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("Workflow:      billing/etl\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Status:        scheduled\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Schedule:      CRON 0 0 2 * * ?\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Overlap:       PARALLEL, up to 2\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Timeout:       none\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Parameters:    day=monday, region\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n\nNODE  JOB ID  AFTER  ON FAILURE  PARAMETERS\n"
                       "a     7       -      FAIL        ${params.day}\n"
                       "b     8       a      CONTINUE    (the job's own)\n"),
            std::string::npos)
      << r.out;
}

// ---- workflows start|stop|delete

TEST_F(WorkflowsCommandTest, StartTriesEveryWorkflowAndFailsIfAnyFailed) {
  name_etl();
  cli_.api.answer("POST api/v1/workflows/12/start", 200, wf_json(12, "etl", 1));
  cli_.api.error("POST api/v1/workflows/13/start", 409, "conflict",
                 "workflow by-hand has no schedule (NONE): trigger it, or give it one");
  cli_.api.answer("POST api/v1/workflows/14/start", 200, wf_json(14, "x", 1));
  const CliResult r = cli_.run({"workflows", "start", "billing/etl", "13", "14"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out,
            "workflow billing/etl (12) started, next fire 2026-01-01T00:00:00+00:00\n"
            "workflow 14 started, next fire 2026-01-01T00:00:00+00:00\n");
  EXPECT_EQ(r.err,
            "cronwheel: workflows start 13: workflow by-hand has no schedule (NONE): trigger it, or give it one "
            "(HTTP 409)\n");
}

TEST_F(WorkflowsCommandTest, StopAndDeleteSayALineForEach) {
  cli_.api.answer("POST api/v1/workflows/12/stop", 200, wf_json(12, "etl"));
  CliResult r = cli_.run({"workflows", "stop", "12"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "workflow 12 stopped\n");
  EXPECT_EQ(cli_.api.requests().back().body, "{}");

  cli_.api.answer("DELETE api/v1/workflows/12", 204, nullptr);
  cli_.api.error("DELETE api/v1/workflows/13", 409, "conflict", "workflow 13 has a run running");
  r = cli_.run({"workflows", "delete", "12", "13", "-o", "json"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(json::parse(r.out), json::parse(R"([{"id":12}])"));
  EXPECT_EQ(r.err, "cronwheel: workflows delete 13: workflow 13 has a run running (HTTP 409)\n");
}

TEST_F(WorkflowsCommandTest, BulkCommandsGoNoFurtherWhenTheServerCannotBeReached) {
  cli_.api.unreachable("cannot reach http://127.0.0.1:8080: connection refused");
  const CliResult r = cli_.run({"workflows", "stop", "1", "2", "3"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "cronwheel: cannot reach http://127.0.0.1:8080: connection refused\n");
  EXPECT_EQ(cli_.api.calls().size(), 1u);
}

// ---- workflows trigger

TEST_F(WorkflowsCommandTest, TriggerSendsTheInputsGivenAndPrintsTheRun) {
  name_etl();
  cli_.api.answer("POST api/v1/workflows/12/trigger", 201,
                  wf_run(17, "running", json::array({wf_node("a", "started", 901, 1), wf_node("b", "waiting")})));
  CliResult r = cli_.run({"workflows", "trigger", "billing/etl", "-p", "day=tuesday", "--param", "region=eu=west", "-p",
                          "empty="});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "workflow billing/etl (12) triggered: run 17\n");
  EXPECT_EQ(json::parse(*cli_.api.requests().back().body),
            json::parse(R"({"params":{"day":"tuesday","region":"eu=west","empty":""}})"));

  r = cli_.run({"workflows", "trigger", "12"});
  EXPECT_EQ(json::parse(*cli_.api.requests().back().body), json::parse(R"({"params":{}})"));
  r = cli_.run({"workflows", "trigger", "12", "-o", "json"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["id"], 17);
  EXPECT_EQ(r.err, "");
}

TEST_F(WorkflowsCommandTest, TriggerSaysWhenTheRunWaitsOrIsSkipped) {
  cli_.api.answer("POST api/v1/workflows/12/trigger", 201,
                  wf_run(17, "waiting", json::array(), "waits for run 16 (overlap WAIT)"));
  CliResult r = cli_.run({"workflows", "trigger", "12"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "workflow 12 triggered: run 17 (waiting: waits for run 16 (overlap WAIT))\n");

  CliHarness skipped;
  skipped.api.answer("POST api/v1/workflows/12/trigger", 201, wf_run(18, "skipped", json::array(), "run 16 is running"));
  r = skipped.run({"workflows", "trigger", "12", "--wait"});
  EXPECT_EQ(r.status, 1);  // a skipped run did not succeed
  EXPECT_EQ(r.out, "workflow 12 triggered: run 18 (skipped: run 16 is running)\n");
  EXPECT_EQ(skipped.api.calls().size(), 1u);  // ended already: nothing to follow
}

TEST_F(WorkflowsCommandTest, TriggerAnInputTheServerRefusesSaysItsMessage) {
  cli_.api.error("POST api/v1/workflows/12/trigger", 400, "invalid", "params.region: is required (it has no default)");
  const CliResult r = cli_.run({"workflows", "trigger", "12"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "cronwheel: workflows trigger 12: params.region: is required (it has no default) (HTTP 400)\n");
}

TEST_F(WorkflowsCommandTest, TriggerWaitFollowsTheRunSayingEachNodesChangeAndSucceeds) {
  cli_.api.answer("POST api/v1/workflows/12/trigger", 201,
                  wf_run(17, "running", json::array({wf_node("a", "started", 901, 1), wf_node("b", "waiting")})));
  cli_.api.answer("GET api/v1/workflow-runs/17", 200,
                  wf_run(17, "running", json::array({wf_node("a", "started", 901, 1), wf_node("b", "waiting")})));
  cli_.api.answer("GET api/v1/workflow-runs/17", 200,
                  wf_run(17, "running", json::array({wf_node("a", "succeeded", 901, 1), wf_node("b", "started", 902, 1)})));
  // b ended and was retried between two answers: its second run is said.
  cli_.api.answer("GET api/v1/workflow-runs/17", 200,
                  wf_run(17, "running", json::array({wf_node("a", "succeeded", 901, 1), wf_node("b", "started", 903, 2)})));
  cli_.api.answer("GET api/v1/workflow-runs/17", 200,
                  wf_run(17, "succeeded", json::array({wf_node("a", "succeeded", 901, 1), wf_node("b", "succeeded", 903, 2)})));
  const CliResult r = cli_.run({"workflows", "trigger", "12", "--wait"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "workflow 12 triggered: run 17\n"
            "node a: started (run 901)\n"
            "node a: succeeded\n"
            "node b: started (run 902)\n"
            "node b: started (run 903, attempt 2)\n"
            "node b: succeeded\n"
            "run 17 succeeded\n");
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(cli_.pauses, (std::vector<std::chrono::milliseconds>(4, 1000ms)));
}

TEST_F(WorkflowsCommandTest, TriggerWaitFailsWhenTheRunFails) {
  cli_.api.answer("POST api/v1/workflows/12/trigger", 201,
                  wf_run(17, "running", json::array({wf_node("a", "waiting"), wf_node("b", "waiting")})));
  // a ran and failed before it was ever seen started; b was cancelled.
  cli_.api.answer("GET api/v1/workflow-runs/17", 200,
                  wf_run(17, "failed",
                         json::array({wf_node("a", "failed", 901, 1, "exit code 4\nstack..."),
                                      wf_node("b", "cancelled", nullptr, 0, "an upstream node failed")}),
                         "node a failed"));
  const CliResult r = cli_.run({"workflows", "trigger", "12", "--wait"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out,
            "workflow 12 triggered: run 17\n"
            "node a: started (run 901)\n"
            "node a: failed: exit code 4 stack...\n"
            "node b: cancelled: an upstream node failed\n"
            "run 17 failed: node a failed\n");
  EXPECT_EQ(r.err, "");
}

TEST_F(WorkflowsCommandTest, TriggerWaitAsJsonPrintsTheEndedRunAndTheProgressOnStderr) {
  cli_.api.answer("POST api/v1/workflows/12/trigger", 201, wf_run(17, "running", json::array({wf_node("a", "waiting")})));
  const json ended = wf_run(17, "succeeded", json::array({wf_node("a", "succeeded", 901, 1)}));
  cli_.api.answer("GET api/v1/workflow-runs/17", 200, ended);
  const CliResult r = cli_.run({"workflows", "trigger", "12", "--wait", "-o", "json"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(json::parse(r.out), ended);
  EXPECT_EQ(r.err,
            "workflow 12 triggered: run 17\n"
            "node a: started (run 901)\n"
            "node a: succeeded\n"
            "run 17 succeeded\n");
}

TEST_F(WorkflowsCommandTest, TriggerWaitGivesUpAtItsTimeoutAndTheRunGoesOn) {
  cli_.api.answer("POST api/v1/workflows/12/trigger", 201, wf_run(17, "running", json::array({wf_node("a", "waiting")})));
  cli_.api.answer("GET api/v1/workflow-runs/17", 200, wf_run(17, "running", json::array({wf_node("a", "started", 901, 1)})));
  cli_.clock_step = 300ms;  // each reading of the clock: a request's time
  const CliResult r = cli_.run({"workflows", "trigger", "12", "--wait", "--wait-timeout", "3"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err,
            "cronwheel: workflows trigger 12: run 17 is still running after 3 s; it goes on (cronwheel "
            "workflow-runs cancel 17 ends it)\n");
  // The waits add up to the timeout less the requests' time; the last is cut to the deadline.
  ASSERT_FALSE(cli_.pauses.empty());
  for (auto pause : cli_.pauses) EXPECT_LE(pause, 1000ms);
  EXPECT_LT(cli_.pauses.back(), 1000ms);
  EXPECT_LE(cli_.pauses.size(), 3u);
  // Nothing but the trigger changed anything: the run goes on.
  std::size_t posts = 0;
  for (const auto& request : cli_.api.requests()) posts += request.method == "POST";
  EXPECT_EQ(posts, 1u);
}

TEST_F(WorkflowsCommandTest, TriggerWaitEndsOnCtrlC) {
  cli_.api.answer("POST api/v1/workflows/12/trigger", 201, wf_run(17, "running", json::array({wf_node("a", "waiting")})));
  cli_.api.answer("GET api/v1/workflow-runs/17", 200, wf_run(17, "running", json::array({wf_node("a", "started", 901, 1)})));
  cli_.pauses_before_interrupt = 2;
  const CliResult r = cli_.run({"workflows", "trigger", "12", "--wait"});
  EXPECT_EQ(r.status, 130);
  EXPECT_EQ(r.out, "workflow 12 triggered: run 17\nnode a: started (run 901)\n");
  EXPECT_EQ(r.err, "");
}

TEST_F(WorkflowsCommandTest, TriggerWaitRefusesARunStateItDoesNotKnow) {
  cli_.api.answer("POST api/v1/workflows/12/trigger", 201, wf_run(17, "running", json::array()));
  cli_.api.answer("GET api/v1/workflow-runs/17", 200, wf_run(17, "paused", json::array()));
  const CliResult r = cli_.run({"workflows", "trigger", "12", "--wait"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err,
            "cronwheel: workflows trigger 12: unexpected answer from the server: the run's state 'paused' is none "
            "the API defines\n");
  EXPECT_EQ(cli_.pauses.size(), 1u);  // it did not go on waiting
}

// ---- workflows check

class WorkflowsCheckTest : public WorkflowsCommandTest {
 protected:
  std::string file(const std::string& name, const std::string& text) {
    const auto path = dir_.path() / name;
    std::ofstream(path, std::ios::binary) << text;
    return path.string();
  }

  testing::TempDir dir_{"cronwheel-cli-workflows"};
};

TEST_F(WorkflowsCheckTest, PrintsEachProblemWithItsFieldAndFails) {
  const std::string path = file("etl.json", wf_json(12, "etl").dump(2));
  cli_.api.answer("POST api/v1/workflows/check", 200,
                  {{"problems", json::array({{{"field", "edges"}, {"message", "the edges form a cycle: a → b → a"}},
                                             {{"field", "nodes[1].jobId"}, {"message", "node b: job 8 does not exist"}}})}});
  const CliResult r = cli_.run({"workflows", "check", "-f", path});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out,
            "FIELD           PROBLEM\n"
            "edges           the edges form a cycle: a → b → a\n"
            "nodes[1].jobId  node b: job 8 does not exist\n");
  EXPECT_EQ(r.err, "cronwheel: workflows check " + path + ": 2 problems\n");
  // What `workflows get -o json` printed is sent without the fields the server keeps.
  json sent = wf_json(12, "etl");
  for (const char* key : {"id", "version", "triggerStatus", "triggerLastTime", "triggerNextTime", "createdAt", "updatedAt"}) {
    sent.erase(key);
  }
  EXPECT_EQ(json::parse(*cli_.api.requests().back().body), sent);
}

TEST_F(WorkflowsCheckTest, NoProblemsIsSuccess) {
  const std::string path = file("etl.json", R"({"jobGroup":3,"name":"etl","nodes":[{"key":"a","jobId":7}]})");
  cli_.api.answer("POST api/v1/workflows/check", 200, {{"problems", json::array()}});
  CliResult r = cli_.run({"workflows", "check", "-f", path});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, path + ": no problems\n");
  r = cli_.run({"workflows", "check", "-f", path, "-o", "json"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(json::parse(r.out), json::parse(R"({"problems":[]})"));
}

TEST_F(WorkflowsCheckTest, AFieldTheServerCannotReadIsAProblemToo) {
  const std::string path = file("etl.json", R"({"jobGroup":3,"name":"etl","scheduleType":"FIX_DELAY","nodes":[]})");
  cli_.api.answer("POST api/v1/workflows/check", 400,
                  {{"error",
                    {{"code", "invalid"},
                     {"message", "scheduleType: must be NONE, CRON or FIX_RATE (a workflow has no FIX_DELAY)"},
                     {"field", "scheduleType"}}}});
  CliResult r = cli_.run({"workflows", "check", "-f", path});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out,
            "FIELD         PROBLEM\n"
            "scheduleType  must be NONE, CRON or FIX_RATE (a workflow has no FIX_DELAY)\n");
  EXPECT_EQ(r.err, "cronwheel: workflows check " + path + ": 1 problem\n");
  r = cli_.run({"workflows", "check", "-f", path, "-o", "json"});
  EXPECT_EQ(json::parse(r.out)["problems"][0]["field"], "scheduleType");
}

TEST_F(WorkflowsCheckTest, OtherErrorsAreSaidAsErrors) {
  const std::string path = file("etl.json", R"({"jobGroup":99,"name":"etl","nodes":[]})");
  cli_.api.error("POST api/v1/workflows/check", 404, "not_found", "no such group 99");
  const CliResult r = cli_.run({"workflows", "check", "-f", path});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "cronwheel: workflows check " + path + ": no such group 99 (HTTP 404)\n");
}

TEST_F(WorkflowsCheckTest, AFileThatIsNotAWorkflowIsSaidWhereAndNothingIsSent) {
  std::string path = file("broken.json", "{\n  \"name\": \"etl\",\n  \"nodes\": [,]\n}\n");
  CliResult r = cli_.run({"workflows", "check", "-f", path});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err.rfind(path + ":3:13: not JSON: syntax error", 0), 0u) << r.err;
  EXPECT_EQ(r.out, "");

  path = file("list.json", "[1, 2]");
  r = cli_.run({"workflows", "check", "-f", path});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, path + ":a workflow is one JSON object (as `cronwheel workflows get WF -o json` prints)\n");

  path = file("deep.json", std::string(10'000, '[') + std::string(10'000, ']'));
  r = cli_.run({"workflows", "check", "-f", path});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, path + ":JSON nested deeper than 64\n");

  r = cli_.run({"workflows", "check", "-f", (dir_.path() / "absent.json").string()});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "cronwheel: workflows check: " + (dir_.path() / "absent.json").string() + ": no such file\n");

  path = file("huge.json", "{\"description\":\"" + std::string(3 * 1024 * 1024, 'x') + "\"}");
  r = cli_.run({"workflows", "check", "-f", path});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "cronwheel: workflows check: " + path + ": larger than 2 MiB\n");
  EXPECT_TRUE(cli_.api.calls().empty());
}

// ---- workflow-runs

TEST_F(WorkflowsCommandTest, RunsListResolvesTheWorkflowAndFiltersByState) {
  name_etl();
  json page = page_of(json::array({wf_run(17, "failed", json::array(), "node a failed"),
                                   wf_run(16, "running", json::array())}));
  page["total"] = 10000;
  page["totalExact"] = false;
  cli_.api.answer("GET api/v1/workflow-runs?workflowId=12&state=failed&limit=2", 200, page);
  const CliResult r = cli_.run({"workflow-runs", "list", "--workflow", "billing/etl", "--state", "failed", "--limit", "2"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "ID  WORKFLOW     STATE    TRIGGER  SCHEDULED                  ENDED                      REASON\n"
            "17  billing/etl  failed   API      2026-01-01T00:00:00+00:00  2026-01-01T00:00:05+00:00  node a failed\n"
            "16  billing/etl  running  API      2026-01-01T00:00:00+00:00  -\n");
  EXPECT_EQ(r.err, "(2 of at least 10000 workflow runs shown; --limit shows up to 1000)\n");
}

TEST_F(WorkflowsCommandTest, RunsListAsJsonIsThePageAsAnswered) {
  const json page = page_of(json::array({wf_run(17, "succeeded", json::array())}));
  cli_.api.answer("GET api/v1/workflow-runs?limit=20", 200, page);
  const CliResult r = cli_.run({"workflow-runs", "list", "-o", "json"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(json::parse(r.out), page);
  EXPECT_EQ(cli_.api.calls().size(), 1u);  // no group names needed for JSON
}

TEST_F(WorkflowsCommandTest, RunsGetPrintsTheRunAndATableOfItsNodes) {
  cli_.api.answer("GET api/v1/workflow-runs/17", 200,
                  wf_run(17, "failed",
                         json::array({wf_node("a", "succeeded", 901, 1),
                                      wf_node("b", "failed", 903, 2, "exit code 4\nstack...")}),
                         "node b failed"));
  const CliResult r = cli_.run({"workflow-runs", "get", "17"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("Workflow:    billing/etl (12)\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("State:       failed\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Reason:      node b failed\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Inputs:      day=monday\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n\nNODE  STATE      RUN ID  ATTEMPTS  MESSAGE\n"
                       "a     succeeded  901     1\n"
                       "b     failed     903     2         exit code 4 stack...\n"),
            std::string::npos)
      << r.out;
}

TEST_F(WorkflowsCommandTest, RunsGetOfAnUnknownRunFails) {
  cli_.api.error("GET api/v1/workflow-runs/99", 404, "not_found", "no such workflow run 99");
  const CliResult r = cli_.run({"workflow-runs", "get", "99"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "cronwheel: workflow-runs get 99: no such workflow run 99 (HTTP 404)\n");
}

TEST_F(WorkflowsCommandTest, RunsCancelAndRerun) {
  cli_.api.answer("POST api/v1/workflow-runs/17/cancel", 200, wf_run(17, "cancelled", json::array()));
  CliResult r = cli_.run({"workflow-runs", "cancel", "17"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "workflow run 17 cancelled\n");
  EXPECT_EQ(cli_.api.requests().back().body, "{}");

  cli_.api.answer("POST api/v1/workflow-runs/17/rerun", 200, wf_run(17, "running", json::array()));
  r = cli_.run({"workflow-runs", "rerun", "17", "--from", "b"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "workflow run 17 re-run from node b: running\n");
  EXPECT_EQ(json::parse(*cli_.api.requests().back().body), json::parse(R"({"node":"b"})"));

  cli_.api.error("POST api/v1/workflow-runs/18/rerun", 409, "conflict", "node a of run 18 is still running");
  r = cli_.run({"workflow-runs", "rerun", "18", "--from", "a", "-o", "json"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "cronwheel: workflow-runs rerun 18: node a of run 18 is still running (HTTP 409)\n");
}

}  // namespace
}  // namespace cronwheel::cli
