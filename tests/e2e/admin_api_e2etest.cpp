// The REST API end to end: a real cronwheel-admin on a fresh PostgreSQL database, driven the
// way the console drives it (session cookie + X-CSRF-Token) and the way automation does
// (bearer token).

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/cron/cron_expression.h"
#include "tests/support/admin_process.h"
#include "tests/support/test_database.h"
#include "tests/support/wall_time.h"

namespace cronwheel {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::AdminProcess;
using testing::now_ms;
using testing::ApiCredentials;
using testing::ApiReply;
using testing::TestDatabase;

constexpr const char* kAdminPassword = AdminProcess::kPassword;

class AdminApi : public ::testing::Test {
 protected:
  void SetUp() override {
    admin_ = std::make_unique<AdminProcess>(
        AdminProcess::Options{.db_url = db_.url(), .args = {"--node-id", "e2e-node"}, .require_answers = true});
    ASSERT_GT(admin_->wait_until_listening(), 0) << admin_->process().out() << admin_->process().err();
  }

  void TearDown() override {
    EXPECT_EQ(admin_->stop(20s), 0) << admin_->process().out() << admin_->process().err();
  }

  // The admin under test's API, as the tests below call it.
  ApiReply call(const std::string& method, const std::string& path, const ApiCredentials& who,
                const std::string& body = "") {
    return admin_->call(method, path, who, body);
  }
  ApiReply get(const std::string& path, const ApiCredentials& who) { return admin_->get(path, who); }
  ApiReply post(const std::string& path, const ApiCredentials& who, const json& body = json::object()) {
    return admin_->post(path, who, body);
  }
  ApiReply put(const std::string& path, const ApiCredentials& who, const json& body) {
    return admin_->put(path, who, body);
  }
  ApiCredentials login(const std::string& username, const std::string& password) {
    return admin_->login(username, password);
  }

  TestDatabase db_;
  std::unique_ptr<AdminProcess> admin_;
};

TEST_F(AdminApi, ConsoleCreatesSchedulesAndTriggersACronJob) {
  auto admin = login("admin", kAdminPassword);

  auto group = post("groups", admin, {{"appName", "reports-executor"}, {"title", "Reports"}});
  ASSERT_EQ(group.status, 201) << group.text;
  const auto group_id = group.body["id"].get<std::int64_t>();

  auto job = post("jobs", admin,
                  {{"jobGroup", group_id},
                   {"jobDesc", "morning report"},
                   {"author", "ops"},
                   {"scheduleType", "CRON"},
                   {"scheduleConf", "0 0 9 * * ?"},
                   {"timezone", "America/New_York"},
                   {"executorHandler", "reportHandler"}});
  ASSERT_EQ(job.status, 201) << job.text;
  const auto id = std::to_string(job.body["id"].get<std::int64_t>());
  EXPECT_EQ(job.body["triggerStatus"], 0);

  // Its next five fire times: 09:00 New York time, one a day.
  const auto before = now_ms();
  auto fires = get("jobs/" + id + "/next-fires?count=5", admin);
  ASSERT_EQ(fires.status, 200) << fires.text;
  ASSERT_EQ(fires.body["times"].size(), 5u);
  std::int64_t previous = before;
  for (const auto& t : fires.body["times"]) {
    const auto ms = t.get<std::int64_t>();
    EXPECT_GT(ms, previous);
    EXPECT_NE(common::format_iso8601(ms, "America/New_York").find("T09:00:00-0"), std::string::npos)
        << common::format_iso8601(ms, "America/New_York");
    previous = ms;
  }
  auto preview = get("cron/next?expr=0%200%209%20*%20*%20%3F&tz=America/New_York&count=5&from=" +
                         std::to_string(before),
                     admin);
  ASSERT_EQ(preview.status, 200) << preview.text;
  EXPECT_EQ(preview.body["times"].size(), 5u);

  auto updated = put("jobs/" + id, admin, {{"jobDesc", "morning report v2"}, {"executorTimeout", 120}});
  ASSERT_EQ(updated.status, 200) << updated.text;
  EXPECT_EQ(updated.body["jobDesc"], "morning report v2");
  EXPECT_EQ(get("jobs/" + id, admin).body["executorTimeout"], 120);

  auto started = post("jobs/" + id + "/start", admin);
  ASSERT_EQ(started.status, 200) << started.text;
  EXPECT_EQ(started.body["triggerStatus"], 1);
  EXPECT_GT(started.body["triggerNextTime"].get<std::int64_t>(), before);
  EXPECT_EQ(get("jobs?triggerStatus=1", admin).body["total"], 1);

  auto stopped = post("jobs/" + id + "/stop", admin);
  ASSERT_EQ(stopped.status, 200) << stopped.text;
  EXPECT_EQ(stopped.body["triggerStatus"], 0);
  EXPECT_EQ(stopped.body["triggerNextTime"], 0);

  auto fire = post("jobs/" + id + "/trigger", admin, {{"executorParam", "--once"}});
  ASSERT_EQ(fire.status, 201) << fire.text;
  EXPECT_EQ(fire.body["triggerType"], "MANUAL");
  EXPECT_EQ(fire.body["adminNode"], "e2e-node");
  auto logs = get("logs?jobId=" + id, admin);
  ASSERT_EQ(logs.status, 200) << logs.text;
  ASSERT_EQ(logs.body["total"], 1);
  EXPECT_EQ(logs.body["items"][0]["id"], fire.body["id"]);
  EXPECT_EQ(logs.body["items"][0]["executorParam"], "--once");

  // Everything above is in the audit log.
  auto audit = get("audit?entityType=job&limit=100", admin);
  ASSERT_EQ(audit.status, 200) << audit.text;
  std::vector<std::string> actions;
  for (const auto& e : audit.body["items"]) {
    actions.push_back(e["action"]);
    EXPECT_EQ(e["username"], "admin");
  }
  std::sort(actions.begin(), actions.end());
  EXPECT_EQ(actions, (std::vector<std::string>{"job.create", "job.start", "job.stop", "job.trigger", "job.update"}));
}

TEST_F(AdminApi, InvalidInputIsA400NamingTheField) {
  auto admin = login("admin", kAdminPassword);
  auto group = post("groups", admin, {{"appName", "reports-executor"}, {"title", "Reports"}});
  ASSERT_EQ(group.status, 201) << group.text;
  json job = {{"jobGroup", group.body["id"]},
              {"jobDesc", "report"},
              {"scheduleType", "CRON"},
              {"scheduleConf", "0 60 9 * * ?"},
              {"executorHandler", "h"}};

  auto r = post("jobs", admin, job);
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.error_field(), "scheduleConf");
  EXPECT_EQ(r.error_message(), "scheduleConf: minutes: 60 is out of range 0-59");

  job["scheduleConf"] = "0 0 9 * * ?";
  job["timezone"] = "Mars/Base";
  EXPECT_EQ(post("jobs", admin, job).error_field(), "timezone");
  job["timezone"] = "UTC";
  job["executorTimeout"] = "soon";
  EXPECT_EQ(post("jobs", admin, job).error_message(), "executorTimeout: expected an integer, got string");
  job.erase("executorTimeout");
  job["jobDescription"] = "typo";
  EXPECT_EQ(post("jobs", admin, job).error_message(), "jobDescription: unknown field");

  auto malformed = call("POST", "jobs", admin, "{\"jobDesc\": ");
  EXPECT_EQ(malformed.status, 400);
  EXPECT_EQ(malformed.body["error"]["code"], "invalid");
  EXPECT_EQ(post("groups", admin, {{"appName", "abc"}, {"title", "t"}}).error_field(), "appName");
  EXPECT_EQ(get("jobs?limit=5000", admin).error_field(), "limit");
}

TEST_F(AdminApi, NormalUserSeesOnlyTheirGroups) {
  auto admin = login("admin", kAdminPassword);
  auto mine = post("groups", admin, {{"appName", "team-a-executor"}, {"title", "Team A"}});
  auto theirs = post("groups", admin, {{"appName", "team-b-executor"}, {"title", "Team B"}});
  ASSERT_EQ(mine.status, 201);
  ASSERT_EQ(theirs.status, 201);
  json job = {{"jobDesc", "job"}, {"executorHandler", "h"}};
  job["jobGroup"] = theirs.body["id"];
  auto hidden = post("jobs", admin, job);
  ASSERT_EQ(hidden.status, 201);
  const auto hidden_id = std::to_string(hidden.body["id"].get<std::int64_t>());

  auto user = post("users", admin,
                   {{"username", "alice"}, {"password", "alice-password"}, {"role", "normal"}, {"groups", {mine.body["id"]}}});
  ASSERT_EQ(user.status, 201) << user.text;
  auto alice = login("alice", "alice-password");

  auto groups = get("groups", alice);
  ASSERT_EQ(groups.status, 200);
  EXPECT_EQ(groups.body["total"], 1);
  EXPECT_EQ(groups.body["items"][0]["appName"], "team-a-executor");
  EXPECT_EQ(get("jobs", alice).body["total"], 0);
  EXPECT_EQ(get("jobs/" + hidden_id, alice).status, 404);
  EXPECT_EQ(post("jobs/" + hidden_id + "/trigger", alice).status, 404);
  EXPECT_EQ(post("jobs/" + hidden_id + "/start", alice).status, 404);
  EXPECT_EQ(post("groups", alice, {{"appName", "team-c-executor"}, {"title", "C"}}).status, 403);
  EXPECT_EQ(get("audit", alice).status, 403);
  job["jobGroup"] = theirs.body["id"];
  EXPECT_EQ(post("jobs", alice, job).error_field(), "jobGroup");

  // In their own group everything works.
  job["jobGroup"] = mine.body["id"];
  EXPECT_EQ(post("jobs", alice, job).status, 201);
  EXPECT_EQ(get("jobs", alice).body["total"], 1);
}

TEST_F(AdminApi, TokensAuthenticateAutomationAndSessionsNeedCsrf) {
  auto admin = login("admin", kAdminPassword);
  auto token = post("tokens", admin, {{"name", "ci"}});
  ASSERT_EQ(token.status, 201) << token.text;
  const auto bot = ApiCredentials::token(token.body["token"].get<std::string>());

  auto group = post("groups", bot, {{"appName", "ci-executor"}, {"title", "CI"}});
  ASSERT_EQ(group.status, 201) << group.text;  // no CSRF header needed with a token
  EXPECT_EQ(get("groups", bot).body["total"], 1);

  EXPECT_EQ(post("groups", admin.without_csrf(), {{"appName", "other-executor"}, {"title", "x"}}).status, 403);
  EXPECT_EQ(get("groups", ApiCredentials{}).status, 401);
}

}  // namespace
}  // namespace cronwheel
