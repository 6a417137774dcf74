// Alarm channels end to end (docs/alarms.md): a real cronwheel-admin, its REST API and a real
// webhook receiver on loopback (tests/support/webhook_receiver.h). An admin makes a webhook
// channel for a group; a test alarm and a run that failed reach the receiver signed with the
// channel's secret, a refused delivery is retried, and the run is recorded alarmed once. An
// executor of the group registering a clock far off the admin's alarms the channel once.

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "admin/alarm/webhook_signature.h"
#include "common/http/http_client.h"
#include "tests/support/admin_process.h"
#include "tests/support/eventually.h"
#include "tests/support/test_database.h"
#include "tests/support/webhook_receiver.h"

namespace cronwheel {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::AdminProcess;
using testing::ApiCredentials;
using testing::TestDatabase;
using testing::WebhookReceiver;

constexpr const char* kSecret = "channel-secret-0123456789";

bool signed_by(const WebhookReceiver::Request& r, const std::string& secret) {
  return r.signature == "sha256=" + admin::hmac_sha256_hex(secret, r.timestamp + "." + r.body);
}

class AlarmChannelsE2e : public ::testing::Test {
 protected:
  void SetUp() override {
    admin_ = std::make_unique<AdminProcess>(AdminProcess::Options{
        .db_url = db_.url(),
        .args = {"--node-id", "channel-node", "--console-url", "https://cron.example.com/", "--alarm-quiet-s", "0"},
        .require_answers = true});
    ASSERT_GT(admin_->wait_until_listening(), 0) << admin_->process().out() << admin_->process().err();
    who_ = admin_->login();
    // Nobody listens at this address: every trigger fails.
    auto group = admin_->post("groups", who_,
                              {{"appName", "hook-app"}, {"title", "Hooks"}, {"addressType", 1},
                               {"addressList", json::array({"http://127.0.0.1:9/"})}});
    ASSERT_EQ(group.status, 201) << group.text;
    group_ = group.body["id"].get<std::int64_t>();
  }
  void TearDown() override { EXPECT_EQ(admin_->stop(20s), 0) << admin_->process().out() << admin_->process().err(); }

  TestDatabase db_;
  WebhookReceiver receiver_;
  std::unique_ptr<AdminProcess> admin_;
  ApiCredentials who_;
  std::int64_t group_ = 0;
};

TEST_F(AlarmChannelsE2e, AGroupsWebhookGetsATestAlarmAndThenItsFailedRunSignedAndRetried) {
  auto made = admin_->post("alarm-channels", who_,
                           {{"name", "ops-hook"}, {"kind", "webhook"}, {"target", receiver_.url("/cron")},
                            {"secret", kSecret}, {"groups", json::array({group_})}});
  ASSERT_EQ(made.status, 201) << made.text;
  EXPECT_EQ(made.body["secret"], kSecret);  // answered once, when given
  EXPECT_EQ(made.body["secretSet"], true);
  const std::string channel = made.body["id"].dump();
  auto read = admin_->get("alarm-channels/" + channel, who_);
  ASSERT_EQ(read.status, 200) << read.text;
  EXPECT_FALSE(read.body.contains("secret"));
  EXPECT_EQ(read.body["groups"], json::array({group_}));

  // The test alarm: delivered at once, signed.
  auto test = admin_->post("alarm-channels/" + channel + "/test", who_);
  ASSERT_EQ(test.status, 200) << test.text;
  EXPECT_EQ(test.body["delivered"], true);
  auto requests = receiver_.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].path, "/cron");
  EXPECT_TRUE(signed_by(requests[0], kSecret)) << requests[0].signature;
  auto test_body = json::parse(requests[0].body);
  EXPECT_EQ(test_body["event"], "test");
  EXPECT_EQ(test_body["channel"], "ops-hook");
  EXPECT_EQ(test_body["node"], "channel-node");

  // A job of the group without any address of its own: its failed run goes to the channel. The
  // receiver refuses the first delivery; the retry, 10 s later, is taken.
  auto job = admin_->post("jobs", who_,
                          {{"jobGroup", group_}, {"jobDesc", "hourly export"}, {"scheduleType", "NONE"},
                           {"executorHandler", "export"}});
  ASSERT_EQ(job.status, 201) << job.text;
  const std::string job_id = job.body["id"].dump();
  receiver_.fail_next(1);
  ASSERT_EQ(admin_->post("jobs/" + job_id + "/trigger", who_).status, 201);
  ASSERT_TRUE(receiver_.wait_for(3, 60s)) << receiver_.requests().size() << " requests\n" << admin_->process().err();
  // Two more passes: nothing more is sent.
  std::this_thread::sleep_for(6s);
  requests = receiver_.requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[1].answered, 503);
  EXPECT_EQ(requests[2].answered, 200);
  EXPECT_EQ(requests[1].body, requests[2].body);
  EXPECT_TRUE(signed_by(requests[2], kSecret));

  auto runs = admin_->get("logs?jobId=" + job_id, who_);
  ASSERT_EQ(runs.body["total"], 1) << runs.text;
  const auto& run = runs.body["items"][0];
  EXPECT_EQ(run["alarmStatus"], 2) << run.dump();
  auto alarm = json::parse(requests[2].body);
  EXPECT_EQ(alarm["event"], "alarm");
  EXPECT_EQ(alarm["job"]["id"].dump(), job_id);
  EXPECT_EQ(alarm["job"]["jobDesc"], "hourly export");
  EXPECT_EQ(alarm["runsTotal"], 1);
  ASSERT_EQ(alarm["runs"].size(), 1u);
  EXPECT_EQ(alarm["runs"][0]["id"], run["id"]);
  EXPECT_EQ(alarm["runs"][0]["outcome"], "trigger failed");
  EXPECT_EQ(alarm["runs"][0]["executorAddress"], "http://127.0.0.1:9/");
  EXPECT_EQ(alarm["runs"][0]["url"], "https://cron.example.com/runs/" + run["id"].dump());
  EXPECT_NE(alarm["text"].get<std::string>().find("hourly export"), std::string::npos);
}

TEST_F(AlarmChannelsE2e, AnExecutorWhoseClockIsOffAlarmsItsGroupsWebhookOnce) {
  auto made = admin_->post("alarm-channels", who_,
                           {{"name", "ops-hook"}, {"kind", "webhook"}, {"target", receiver_.url("/cron")},
                            {"secret", kSecret}, {"groups", json::array({group_})}});
  ASSERT_EQ(made.status, 201) << made.text;
  // A cronwheel executor of the group registers with its estimate: its clock is 4 s ahead.
  common::http::HttpClient executor(admin_->url());
  auto registered = executor.post_json(
      "api/registry", json({{"registryGroup", "EXECUTOR"}, {"registryKey", "hook-app"},
                            {"registryValue", "http://127.0.0.1:9998/"}, {"clockOffsetMs", -4'000},
                            {"clockDelayMs", 3}})
                          .dump());
  ASSERT_EQ(registered.status, 200) << registered.error << registered.body;
  ASSERT_TRUE(receiver_.wait_for(1, 30s)) << admin_->process().err();
  auto requests = receiver_.requests();
  EXPECT_TRUE(signed_by(requests[0], kSecret));
  auto alarm = json::parse(requests[0].body);
  EXPECT_EQ(alarm["event"], "executor_clock");
  EXPECT_EQ(alarm["executor"]["appName"], "hook-app");
  EXPECT_EQ(alarm["executor"]["address"], "http://127.0.0.1:9998/");
  EXPECT_EQ(alarm["offsetMs"], -4'000);
  EXPECT_EQ(alarm["node"], "channel-node");
  EXPECT_EQ(alarm["subject"], "[cronwheel] executor hook-app at http://127.0.0.1:9998/: its clock is 4000 ms ahead of "
                              "the admin's");
  // Its next registrations say the same: no second alarm.
  ASSERT_EQ(executor
                .post_json("api/registry", json({{"registryGroup", "EXECUTOR"}, {"registryKey", "hook-app"},
                                                 {"registryValue", "http://127.0.0.1:9998/"},
                                                 {"clockOffsetMs", -4'100}, {"clockDelayMs", 2}})
                                               .dump())
                .status,
            200);
  std::this_thread::sleep_for(6s);  // another pass
  EXPECT_EQ(receiver_.requests().size(), 1u);
}

TEST_F(AlarmChannelsE2e, OnlyAdminsManageChannelsAndEveryMistakeIsNamed) {
  auto user = admin_->post("users", who_,
                           {{"username", "viewer"}, {"password", "viewer-password-1"}, {"role", "normal"},
                            {"groups", json::array({group_})}});
  ASSERT_EQ(user.status, 201) << user.text;
  auto viewer = admin_->login("viewer", "viewer-password-1");
  EXPECT_EQ(admin_->get("alarm-channels", viewer).status, 403);
  EXPECT_EQ(admin_->post("alarm-channels", viewer, {{"name", "x"}, {"kind", "webhook"}, {"target", receiver_.url()}})
                .status,
            403);

  auto field_of = [&](const json& body) {
    auto r = admin_->post("alarm-channels", who_, body);
    return std::to_string(r.status) + " " + r.body["error"].value("field", "");
  };
  EXPECT_EQ(field_of({{"kind", "webhook"}, {"target", receiver_.url()}}), "400 name");
  EXPECT_EQ(field_of({{"name", "a"}, {"kind", "pager"}, {"target", receiver_.url()}}), "400 kind");
  EXPECT_EQ(field_of({{"name", "a"}, {"kind", "webhook"}, {"target", "ftp://127.0.0.1/"}}), "400 target");
  EXPECT_EQ(field_of({{"name", "a"}, {"kind", "email"}, {"target", "not an address"}}), "400 target");
  EXPECT_EQ(field_of({{"name", "a"}, {"kind", "email"}, {"target", "a@example.com"}, {"secret", "x"}}), "400 secret");
  EXPECT_EQ(field_of({{"name", "a"}, {"kind", "webhook"}, {"target", receiver_.url()}, {"secret", "short"}}),
            "400 secret");
  EXPECT_EQ(field_of({{"name", "a"}, {"kind", "webhook"}, {"target", receiver_.url()}, {"groups", {group_ + 99}}}),
            "409 groups");
  EXPECT_EQ(field_of({{"name", "a"}, {"kind", "webhook"}, {"target", receiver_.url()}, {"id", 5}}), "400 id");
  EXPECT_EQ(field_of({{"name", "a"}, {"kind", "webhook"}, {"target", receiver_.url()}, {"colour", "red"}}),
            "400 colour");

  // Made without a secret: one is generated and answered once.
  auto made = admin_->post("alarm-channels", who_, {{"name", "a"}, {"kind", "webhook"}, {"target", receiver_.url()}});
  ASSERT_EQ(made.status, 201) << made.text;
  const std::string generated = made.body["secret"].get<std::string>();
  EXPECT_GE(generated.size(), 32u);
  EXPECT_EQ(field_of({{"name", "a"}, {"kind", "webhook"}, {"target", receiver_.url()}}), "409 name");
  const std::string id = made.body["id"].dump();

  // Rotated: a new one, answered once; the old one no longer signs.
  auto rotated = admin_->put("alarm-channels/" + id, who_, {{"rotateSecret", true}});
  ASSERT_EQ(rotated.status, 200) << rotated.text;
  const std::string fresh = rotated.body["secret"].get<std::string>();
  EXPECT_NE(fresh, generated);
  ASSERT_EQ(admin_->post("alarm-channels/" + id + "/test", who_).status, 200);
  ASSERT_EQ(receiver_.requests().size(), 1u);
  EXPECT_TRUE(signed_by(receiver_.requests()[0], fresh));

  // Tests that cannot be delivered say why.
  auto unreachable = admin_->put("alarm-channels/" + id, who_, {{"target", "http://127.0.0.1:9/hook"}});
  ASSERT_EQ(unreachable.status, 200) << unreachable.text;
  EXPECT_FALSE(unreachable.body.contains("secret"));
  auto refused = admin_->post("alarm-channels/" + id + "/test", who_);
  EXPECT_EQ(refused.status, 502) << refused.text;
  EXPECT_NE(refused.text.find("cannot connect"), std::string::npos) << refused.text;
  auto mail = admin_->put("alarm-channels/" + id, who_, {{"kind", "email"}, {"target", "ops@example.com"}});
  ASSERT_EQ(mail.status, 200) << mail.text;
  EXPECT_EQ(mail.body["secretSet"], false);
  auto no_smtp = admin_->post("alarm-channels/" + id + "/test", who_);
  EXPECT_EQ(no_smtp.status, 503) << no_smtp.text;
  EXPECT_NE(no_smtp.text.find("--smtp-url"), std::string::npos) << no_smtp.text;

  // Audited without the secret; deleted for good.
  auto audit = admin_->get("audit?entityType=alarm_channel", who_);
  ASSERT_EQ(audit.status, 200) << audit.text;
  EXPECT_GE(audit.body["total"].get<int>(), 4) << audit.text;
  EXPECT_EQ(audit.text.find(generated), std::string::npos);
  EXPECT_EQ(audit.text.find(fresh), std::string::npos);
  EXPECT_EQ(admin_->del("alarm-channels/" + id, who_).status, 204);
  EXPECT_EQ(admin_->get("alarm-channels/" + id, who_).status, 404);
  EXPECT_EQ(admin_->get("alarm-channels", who_).body["total"], 0);
}


TEST_F(AlarmChannelsE2e, TheListPagesByOffsetAndLimit) {
  for (const char* name : {"first", "second", "third"}) {
    auto made = admin_->post("alarm-channels", who_,
                             {{"name", name}, {"kind", "email"}, {"target", std::string(name) + "@example.com"}});
    ASSERT_EQ(made.status, 201) << made.text;
  }
  auto page = admin_->get("alarm-channels?offset=1&limit=1", who_);
  ASSERT_EQ(page.status, 200) << page.text;
  EXPECT_EQ(page.body["total"], 3);
  ASSERT_EQ(page.body["items"].size(), 1u);
  EXPECT_EQ(page.body["items"][0]["name"], "second");  // by id
  auto last = admin_->get("alarm-channels?offset=2&limit=5", who_);
  ASSERT_EQ(last.body["items"].size(), 1u) << last.text;
  EXPECT_EQ(last.body["items"][0]["name"], "third");
  auto past = admin_->get("alarm-channels?offset=7", who_);
  ASSERT_EQ(past.status, 200) << past.text;
  EXPECT_EQ(past.body["total"], 3);
  EXPECT_TRUE(past.body["items"].empty());

  auto bad = admin_->get("alarm-channels?limit=0", who_);
  EXPECT_EQ(bad.status, 400) << bad.text;
  EXPECT_EQ(bad.body["error"].value("field", ""), "limit");
}

}  // namespace
}  // namespace cronwheel
