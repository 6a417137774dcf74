// Alarms end to end (docs/alarms.md): two real cronwheel-admin nodes on one PostgreSQL and a
// real SMTP server (tests/support/smtp_sink.h) that requires STARTTLS and a password. Runs that
// end badly are mailed to their job's addresses once, whichever node claims them, and a job with
// retries alarms only when its last retry failed.

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "tests/support/admin_process.h"
#include "tests/support/eventually.h"
#include "tests/support/mail_message.h"
#include "tests/support/smtp_sink.h"
#include "tests/support/test_database.h"

namespace cronwheel {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::AdminProcess;
using testing::ApiCredentials;
using testing::SmtpSink;
using testing::TestDatabase;

constexpr const char* kSmtpUser = "alarms";
constexpr const char* kSmtpPassword = "mail-secret";

class AlarmE2e : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* node : {"alarm-node-a", "alarm-node-b"}) {
      admins_.push_back(std::make_unique<AdminProcess>(AdminProcess::Options{
          .db_url = db_.url(),
          .args = {"--node-id", node, "--smtp-url", sink_.url(), "--smtp-starttls", "required", "--smtp-user",
                   kSmtpUser, "--smtp-ca-file", sink_.cert_file(), "--alarm-from", "cronwheel@example.com",
                   "--console-url", "https://cron.example.com", "--alarm-quiet-s", "0"},
          .env = {std::string("CRONWHEEL_SMTP_PASSWORD=") + kSmtpPassword},
          .require_answers = true}));
      ASSERT_GT(admins_.back()->wait_until_listening(), 0)
          << admins_.back()->process().out() << admins_.back()->process().err();
    }
  }
  void TearDown() override {
    for (auto& a : admins_) EXPECT_EQ(a->stop(20s), 0) << a->process().out() << a->process().err();
  }

  TestDatabase db_;
  SmtpSink sink_{{.tls = true, .require_starttls = true, .auth = std::string(kSmtpUser) + ":" + kSmtpPassword}};
  std::vector<std::unique_ptr<AdminProcess>> admins_;
};

TEST_F(AlarmE2e, EachRunThatEndedBadlyIsMailedOnceThroughStartTlsAfterItsLastRetry) {
  AdminProcess& admin = *admins_[0];
  auto who = admin.login();
  // Nobody listens at this address: every trigger fails ("trigger failed").
  auto group = admin.post("groups", who,
                          {{"appName", "alarm-app"}, {"title", "Alarms"}, {"addressType", 1},
                           {"addressList", json::array({"http://127.0.0.1:9/"})}});
  ASSERT_EQ(group.status, 201) << group.text;
  const auto group_id = group.body["id"].get<std::int64_t>();

  auto make_job = [&](const std::string& desc, int retries) {
    auto job = admin.post("jobs", who,
                          {{"jobGroup", group_id}, {"jobDesc", desc}, {"scheduleType", "NONE"},
                           {"executorHandler", "report"}, {"executorFailRetryCount", retries},
                           {"alarmEmail", "ops@example.com, dev@example.com"}});
    EXPECT_EQ(job.status, 201) << job.text;
    return job.body["id"].get<std::int64_t>();
  };
  std::vector<std::int64_t> jobs;
  for (int i = 0; i < 5; ++i) jobs.push_back(make_job("report " + std::to_string(i), 0));
  const auto retried = make_job("report with a retry", 1);
  const auto silent = admin.post("jobs", who,
                                 {{"jobGroup", group_id}, {"jobDesc", "no alarm"}, {"scheduleType", "NONE"},
                                  {"executorHandler", "report"}});
  ASSERT_EQ(silent.status, 201) << silent.text;

  for (auto id : jobs) ASSERT_EQ(admin.post("jobs/" + std::to_string(id) + "/trigger", who).status, 201);
  ASSERT_EQ(admin.post("jobs/" + std::to_string(retried) + "/trigger", who).status, 201);
  ASSERT_EQ(admin.post("jobs/" + silent.body["id"].dump() + "/trigger", who).status, 201);

  ASSERT_TRUE(sink_.wait_for_messages(6, 60s)) << sink_.messages().size() << " messages\n"
                                               << admins_[0]->process().err() << admins_[1]->process().err();
  // Both nodes pass every 5 s: two more passes each, and still one mail per job.
  std::this_thread::sleep_for(11s);
  auto messages = sink_.messages();
  ASSERT_EQ(messages.size(), 6u);

  std::map<std::string, std::string> body_of_subject;
  for (const auto& m : messages) {
    EXPECT_EQ(m.mail_from, "cronwheel@example.com");
    EXPECT_EQ(m.rcpt_tos, (std::vector<std::string>{"ops@example.com", "dev@example.com"}));
    auto parsed = testing::parse(m.data);
    body_of_subject[parsed.one("Subject")] = testing::decoded_body(parsed);
  }
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const auto id = jobs[i];
    auto runs = admin.get("logs?jobId=" + std::to_string(id), who);
    ASSERT_EQ(runs.body["total"], 1) << runs.text;
    const auto& run = runs.body["items"][0];
    EXPECT_EQ(run["alarmStatus"], 2) << run.dump();
    const std::string run_id = run["id"].dump();
    const std::string subject = "[cronwheel] job " + std::to_string(id) + " \"report " +
                                std::to_string(i) + "\": run " + run_id + " trigger failed";
    ASSERT_EQ(body_of_subject.count(subject), 1u) << subject;
    const std::string& body = body_of_subject[subject];
    // The mailer sends CRLF line ends.
    EXPECT_NE(body.find("https://cron.example.com/runs/" + run_id + "\r\n"), std::string::npos) << body;
    EXPECT_NE(body.find("executor   http://127.0.0.1:9/"), std::string::npos) << body;
  }
  // The job with a retry: its first run failed quietly, the retry's failure alarmed.
  auto runs = admin.get("logs?jobId=" + std::to_string(retried), who);
  ASSERT_EQ(runs.body["total"], 2) << runs.text;
  std::map<std::string, json> by_type;
  for (const auto& r : runs.body["items"]) by_type[r["triggerType"].get<std::string>()] = r;
  EXPECT_EQ(by_type["MANUAL"]["alarmStatus"], 1);
  EXPECT_EQ(by_type["RETRY"]["alarmStatus"], 2);
  const std::string retry_subject = "[cronwheel] job " + std::to_string(retried) + " \"report with a retry\": run " +
                                    by_type["RETRY"]["id"].dump() + " trigger failed";
  EXPECT_EQ(body_of_subject.count(retry_subject), 1u) << retry_subject;
  // A job without addresses alarms nobody.
  auto quiet = admin.get("logs?jobId=" + silent.body["id"].dump(), who);
  EXPECT_EQ(quiet.body["items"][0]["alarmStatus"], 1) << quiet.text;

  // Each node counts its own: together, six alarms sent.
  int sent = 0;
  for (auto& a : admins_) {
    httplib::Client client("127.0.0.1", a->port());
    auto metrics = client.Get("/metrics");
    ASSERT_TRUE(metrics);
    const std::string line = "cronwheel_alarms_total{outcome=\"sent\"} ";
    auto at = metrics->body.find(line);
    ASSERT_NE(at, std::string::npos) << metrics->body;
    sent += std::stoi(metrics->body.substr(at + line.size()));
  }
  EXPECT_EQ(sent, 6);
}

}  // namespace
}  // namespace cronwheel
