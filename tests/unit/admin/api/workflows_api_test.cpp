// The workflows endpoints (admin/api/workflows_api.h) on a real HttpServer over FakeStores and a
// FakeWorkflowStore: what each refuses and why, permissions, versions, trigger inputs, runs.

#include "admin/api/workflows_api.h"

#include <gtest/gtest.h>

#include "tests/support/fake_workflow_store.h"
#include "tests/unit/admin/api/resource_api_fixture.h"

namespace cronwheel::admin {
namespace {

using nlohmann::json;

class WorkflowsApiTest : public ResourceApiTest {
 protected:
  void add_more_routes(ApiRouter& router) override {
    WorkflowRoutes routes;
    routes.store = &workflows_;
    routes.node_id = "node-under-test";
    routes.fires_written = [this](const std::vector<JobLog>& fires) { written_ += static_cast<int>(fires.size()); };
    add_workflow_routes(router, stores_, routes, clock_);
  }

  void SetUp() override {
    ResourceApiTest::SetUp();
    group_ = add_group("wf-api");
    other_ = add_group("wf-other");
    a_ = add_job(group_.id, "extract").id;
    b_ = add_job(group_.id, "load").id;
    foreign_ = add_job(other_.id, "elsewhere").id;
    add_user("alice", "normal", {group_.id});
  }

  json body(const std::string& name = "etl") {
    return {{"jobGroup", group_.id},
            {"name", name},
            {"params", json::array({{{"name", "day"}, {"default", "today"}}})},
            {"nodes", json::array({{{"key", "extract"}, {"jobId", a_}},
                                   {{"key", "load"}, {"jobId", b_}, {"params", "${params.day} ${nodes.extract.output.rows}"}}})},
            {"edges", json::array({{{"from", "extract"}, {"to", "load"}}})}};
  }

  testing::FakeWorkflowStore workflows_{stores_.jobs, clock_};
  int written_ = 0;
  Group group_, other_;
  std::int64_t a_ = 0, b_ = 0, foreign_ = 0;
};

TEST_F(WorkflowsApiTest, CreatesAWorkflowAndAnswersItWhole) {
  auto created = post("workflows", body());
  ASSERT_EQ(created.status, 201) << created.text;
  EXPECT_EQ(created.body["name"], "etl");
  EXPECT_EQ(created.body["version"], 1);
  EXPECT_EQ(created.body["triggerStatus"], 0);
  EXPECT_EQ(created.body["nodes"][1]["params"], "${params.day} ${nodes.extract.output.rows}");
  EXPECT_EQ(created.body["nodes"][0].contains("params"), false) << "no template: the job's own parameter";
  EXPECT_EQ(created.body["overlap"], "WAIT");
  EXPECT_EQ(get("workflows/" + created.body["id"].dump()).body, created.body);
}

TEST_F(WorkflowsApiTest, RefusesEachProblemNamingItsField) {
  struct Case {
    const char* what;
    json patch;  // merged into the body
    std::string field;
    std::string message_part;
  };
  const std::vector<Case> cases = {
      {"a cycle", {{"edges", json::array({{{"from", "extract"}, {"to", "load"}}, {{"from", "load"}, {"to", "extract"}}})}},
       "edges", "the edges form a cycle: extract → load → extract"},
      {"an unknown parameter", {{"params", json::array()}}, "nodes[1].params", "has no parameter day"},
      {"a bad name", {{"name", "Bad Name"}}, "name", "is not a name"},
      {"a name too long", {{"name", std::string(65, 'n')}}, "name", "at most 64 characters"},
      {"FIX_DELAY", {{"scheduleType", "FIX_DELAY"}, {"scheduleConf", "10"}}, "scheduleType", "a workflow has no FIX_DELAY"},
      {"a bad cron", {{"scheduleType", "CRON"}, {"scheduleConf", "0 60 * * * ?"}}, "scheduleConf", "60"},
      {"maxParallel 0", {{"maxParallel", 0}}, "maxParallel", "maxParallel"},
      {"an unknown field", {{"colour", "red"}}, "colour", "unknown field"},
      {"an unknown node field", {{"nodes", json::array({{{"key", "x"}, {"jobId", a_}, {"colour", 1}}})}},
       "nodes[0].colour", "unknown field"},
      {"a node key", {{"nodes", json::array({{{"key", "9x"}, {"jobId", a_}}})}, {"edges", json::array()}}, "nodes[0].key",
       "is not a node key"},
      {"no nodes", {{"nodes", json::array()}, {"edges", json::array()}}, "nodes", "at least one node"},
      {"a job that does not exist", {{"nodes", json::array({{{"key", "x"}, {"jobId", 9999}}})}, {"edges", json::array()}},
       "nodes[0].jobId", "job 9999 does not exist"},
      {"a scheduled workflow's parameter without a default",
       {{"scheduleType", "CRON"}, {"scheduleConf", "0 0 1 * * ?"}, {"params", json::array({{{"name", "day"}}})}},
       "params[0].default", "needs a default"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    json b = body();
    b.update(c.patch);
    auto refused = post("workflows", b);
    ASSERT_EQ(refused.status, 400) << refused.text;
    EXPECT_EQ(refused.field(), c.field) << refused.text;
    EXPECT_NE(refused.message().find(c.message_part), std::string::npos) << refused.message();
  }
  EXPECT_EQ(get("workflows").body["total"], 0) << "nothing refused was saved";
}

TEST_F(WorkflowsApiTest, CheckListsEveryProblemWithoutSaving) {
  json b = body();
  b["nodes"][1]["params"] = "${params.month} ${nodes.nowhere.output}";
  auto checked = post("workflows/check", b);
  ASSERT_EQ(checked.status, 200) << checked.text;
  ASSERT_EQ(checked.body["problems"].size(), 2u) << checked.text;
  EXPECT_EQ(checked.body["problems"][0]["field"], "nodes[1].params");
  EXPECT_EQ(get("workflows").body["total"], 0);
  EXPECT_EQ(post("workflows/check", body()).body["problems"], json::array());
}

TEST_F(WorkflowsApiTest, ANormalUserSeesAndActsOnTheirGroupsOnly) {
  auto mine = post("workflows", body(), "alice");
  ASSERT_EQ(mine.status, 201) << mine.text;
  json theirs = body("theirs");
  theirs["jobGroup"] = other_.id;
  auto other = post("workflows", theirs);
  ASSERT_EQ(other.status, 201) << other.text;
  EXPECT_EQ(get("workflows", "alice").body["total"], 1);
  EXPECT_EQ(get("workflows/" + other.body["id"].dump(), "alice").status, 404);
  EXPECT_EQ(post("workflows/" + other.body["id"].dump() + "/trigger", json::object(), "alice").status, 404);
  auto refused = post("workflows", theirs, "alice");
  EXPECT_EQ(refused.status, 400);
  EXPECT_EQ(refused.field(), "jobGroup");
  json borrowing = body("borrowing");
  borrowing["nodes"][0]["jobId"] = foreign_;
  auto job_refused = post("workflows", borrowing, "alice");
  EXPECT_EQ(job_refused.status, 400);
  EXPECT_EQ(job_refused.field(), "nodes[0].jobId") << "another group's job reads as no job";
}

TEST_F(WorkflowsApiTest, AnUpdateCarriesTheVersionItRead) {
  auto created = post("workflows", body());
  const std::string id = created.body["id"].dump();
  json update = body();
  update["description"] = "changed";
  EXPECT_EQ(put("workflows/" + id, update).field(), "version") << "required";
  update["version"] = 1;
  auto changed = put("workflows/" + id, update);
  ASSERT_EQ(changed.status, 200) << changed.text;
  EXPECT_EQ(changed.body["version"], 2);
  auto stale = put("workflows/" + id, update);
  EXPECT_EQ(stale.status, 409);
  EXPECT_EQ(stale.field(), "version");
}

TEST_F(WorkflowsApiTest, TriggerTakesDeclaredInputsWithDefaultsAndRefusesOthers) {
  const std::string id = post("workflows", body()).body["id"].dump();
  auto refused = post("workflows/" + id + "/trigger", {{"params", {{"month", "may"}}}});
  EXPECT_EQ(refused.status, 400);
  EXPECT_EQ(refused.message(), "params.month: the workflow has no such parameter");
  EXPECT_EQ(post("workflows/" + id + "/trigger", {{"params", "day=1"}}).field(), "params");

  auto run = post("workflows/" + id + "/trigger", json::object());
  ASSERT_EQ(run.status, 201) << run.text;
  EXPECT_EQ(run.body["params"], (json{{"day", "today"}}));
  EXPECT_EQ(run.body["state"], "running");
  EXPECT_EQ(run.body["triggerType"], "API") << "a bearer token";
  EXPECT_EQ(run.body["nodes"][0]["state"], "started");
  EXPECT_EQ(run.body["nodes"][1]["state"], "waiting");
  EXPECT_EQ(run.body["edges"].size(), 1u);
  EXPECT_EQ(written_, 1) << "the first node's fire is sent at once";

  auto second = post("workflows/" + id + "/trigger", {{"params", {{"day", "monday"}}}});
  EXPECT_EQ(second.body["state"], "waiting");
  EXPECT_EQ(second.body["params"], (json{{"day", "monday"}}));
  auto listed = get("workflow-runs?workflowId=" + id + "&state=waiting");
  ASSERT_EQ(listed.status, 200) << listed.text;
  EXPECT_EQ(listed.body["items"].size(), 1u);
  EXPECT_EQ(get("workflow-runs?state=sleeping").field(), "state");
}

TEST_F(WorkflowsApiTest, CancelAndRerunAnswerTheRunOrWhyNot) {
  const std::string id = post("workflows", body()).body["id"].dump();
  const std::string run = post("workflows/" + id + "/trigger", json::object()).body["id"].dump();
  EXPECT_EQ(post("workflow-runs/" + run + "/rerun", {{"node", "extract"}}).status, 409) << "it runs";
  auto cancelled = post("workflow-runs/" + run + "/cancel");
  ASSERT_EQ(cancelled.status, 200) << cancelled.text;
  EXPECT_EQ(cancelled.body["state"], "cancelled");
  EXPECT_EQ(post("workflow-runs/" + run + "/cancel").status, 409);
  EXPECT_EQ(post("workflow-runs/" + run + "/rerun", json::object()).field(), "node");
  auto rerun = post("workflow-runs/" + run + "/rerun", {{"node", "load"}});
  ASSERT_EQ(rerun.status, 200) << rerun.text;
  EXPECT_EQ(rerun.body["state"], "running");
  EXPECT_EQ(post("workflow-runs/999/cancel").status, 404);
}

TEST_F(WorkflowsApiTest, StartNeedsAScheduleAndComputesTheFirstTime) {
  const std::string id = post("workflows", body()).body["id"].dump();
  EXPECT_EQ(post("workflows/" + id + "/start").status, 409) << "NONE";
  json scheduled = body();
  scheduled["scheduleType"] = "FIX_RATE";
  scheduled["scheduleConf"] = "60";
  scheduled["version"] = 1;
  ASSERT_EQ(put("workflows/" + id, scheduled).status, 200);
  auto started = post("workflows/" + id + "/start");
  ASSERT_EQ(started.status, 200) << started.text;
  EXPECT_EQ(started.body["triggerStatus"], 1);
  EXPECT_GT(started.body["triggerNextTime"].get<std::int64_t>(), kStartMs);
  EXPECT_EQ(post("workflows/" + id + "/stop").body["triggerStatus"], 0);
}

}  // namespace
}  // namespace cronwheel::admin
