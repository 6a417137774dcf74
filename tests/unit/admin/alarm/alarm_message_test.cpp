#include "admin/alarm/alarm_message.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

namespace cronwheel::admin {
namespace {

constexpr std::int64_t kAt = 1'795'780'800'000;  // 2026-11-27T12:00:00Z

Job job() {
  Job j;
  j.id = 12;
  j.job_group = 3;
  j.job_desc = "nightly report";
  j.executor_handler = "reportHandler";
  j.alarm_email = "ops@example.com";
  return j;
}

JobLog failed_run(std::int64_t id, std::int64_t scheduled) {
  JobLog r;
  r.id = id;
  r.job_id = 12;
  r.job_group = 3;
  r.state = FireState::kFailed;
  r.scheduled_time = scheduled;
  r.trigger_time = scheduled + 4;
  r.trigger_code = 200;
  r.handle_time = scheduled + 1'500;
  r.handle_code = 500;
  r.handle_msg = "disk full";
  r.executor_address = "http://10.0.0.5:9999/";
  return r;
}

AlarmClaim claim_of(std::vector<JobLog> runs, std::int64_t total = 0) {
  AlarmClaim c;
  c.job = job();
  c.claimed_at = kAt + 60'000;
  c.runs_total = total > 0 ? total : static_cast<std::int64_t>(runs.size());
  c.runs = std::move(runs);
  return c;
}

const AlarmTextOptions kOptions{"https://cron.example.com/", "admin-1"};

TEST(AlarmMessage, OneFailedRunSaysWhatHappenedWhenWhereAndLinksToIt) {
  auto text = render_alarm(claim_of({failed_run(345, kAt)}), kOptions);
  EXPECT_EQ(text.subject, "[cronwheel] job 12 \"nightly report\": run 345 failed");
  const std::string& b = text.body;
  EXPECT_NE(b.find("Job 12 \"nightly report\" (group 3, handler reportHandler) has a run that did not succeed."),
            std::string::npos) << b;
  EXPECT_NE(b.find("Run 345: failed with code 500\n"), std::string::npos) << b;
  EXPECT_NE(b.find("scheduled  2026-11-27T12:00:00.000Z (SCHEDULE)"), std::string::npos) << b;
  EXPECT_NE(b.find("ended      2026-11-27T12:00:01.500Z"), std::string::npos) << b;
  EXPECT_NE(b.find("executor   http://10.0.0.5:9999/"), std::string::npos) << b;
  EXPECT_NE(b.find("    disk full\n"), std::string::npos) << b;
  EXPECT_NE(b.find("https://cron.example.com/runs/345\n"), std::string::npos) << b;
  EXPECT_NE(b.find("Sent by cronwheel admin node admin-1 at 2026-11-27T12:01:00.000Z."), std::string::npos) << b;
}

TEST(AlarmMessage, EachWayOfEndingBadlyHasItsWords) {
  JobLog lost = failed_run(1, kAt);
  lost.state = FireState::kLost;
  EXPECT_EQ(run_outcome(lost), "result lost");
  JobLog refused = failed_run(2, kAt);
  refused.handle_time.reset();
  refused.trigger_code = 500;
  refused.trigger_msg = "no executor address in group 3";
  EXPECT_EQ(run_outcome(refused), "trigger failed");
  JobLog skipped;
  skipped.state = FireState::kCancelled;
  skipped.trigger_type = TriggerType::kMisfire;
  EXPECT_EQ(run_outcome(skipped), "skipped by the misfire strategy");
  EXPECT_EQ(run_outcome(failed_run(3, kAt)), "failed");

  // A trigger that failed shows the trigger's message; one that ran, the executor's.
  auto text = render_alarm(claim_of({refused}), kOptions);
  EXPECT_EQ(text.subject, "[cronwheel] job 12 \"nightly report\": run 2 trigger failed");
  EXPECT_NE(text.body.find("    no executor address in group 3\n"), std::string::npos) << text.body;
  EXPECT_EQ(text.body.find("disk full"), std::string::npos) << text.body;
}

TEST(AlarmMessage, ManyRunsMakeASummaryThatCountsThemAndListsTheOldest) {
  auto c = claim_of({failed_run(10, kAt), failed_run(11, kAt + 1'000)}, 57);
  c.previous_alarm_at = kAt - 300'000;
  auto text = render_alarm(c, kOptions);
  EXPECT_EQ(text.subject, "[cronwheel] job 12 \"nightly report\": 57 runs failed or were skipped");
  EXPECT_NE(text.body.find("has 57 runs that did not succeed since the last alarm, at 2026-11-27T11:55:00.000Z."),
            std::string::npos) << text.body;
  EXPECT_NE(text.body.find("Run 10: "), std::string::npos);
  EXPECT_NE(text.body.find("Run 11: "), std::string::npos);
  EXPECT_NE(text.body.find("… and 55 more: https://cron.example.com/runs?jobId=12&status=failed\n"), std::string::npos)
      << text.body;
  EXPECT_NE(text.body.find("at most once per quiet period"), std::string::npos);
}

TEST(AlarmMessage, WithoutAConsoleAddressThereAreNoLinks) {
  auto text = render_alarm(claim_of({failed_run(345, kAt)}), {"", "admin-1"});
  EXPECT_EQ(text.body.find("runs/"), std::string::npos) << text.body;
}

TEST(AlarmMessage, WhatUsersAndExecutorsWroteCannotShapeTheMessage) {
  auto c = claim_of({failed_run(345, kAt)});
  c.job.job_desc = "report\r\nBcc: evil@example.com";
  c.runs[0].handle_msg = std::string("line one\nline two\x1b[31m red\x07") + std::string(5'000, 'x');
  auto text = render_alarm(c, kOptions);
  EXPECT_EQ(text.subject.find_first_of("\r\n"), std::string::npos) << text.subject;
  EXPECT_NE(text.subject.find("report  Bcc: evil@example.com"), std::string::npos) << text.subject;
  EXPECT_NE(text.body.find("    line one\n    line two\xEF\xBF\xBD[31m red\xEF\xBF\xBD"), std::string::npos);
  EXPECT_EQ(text.body.find('\x1b'), std::string::npos);
  EXPECT_EQ(text.body.find('\x07'), std::string::npos);
  EXPECT_LT(text.body.size(), 2'500u);  // the executor's message is cut at 1,000 characters
  EXPECT_NE(text.body.find("x\xE2\x80\xA6"), std::string::npos);
}

TEST(AlarmMessage, AnExecutorsClockAlarmSaysHowFarOffWhichWayAndWhatToDo) {
  ClockAlarmClaim c;
  c.registration_id = 9;
  c.app_name = "billing\r\nBcc: evil@example.com";  // what an executor registered cannot shape it
  c.address = "http://10.0.0.5:9999/";
  c.offset_ms = -1'500;
  c.delay_ms = 3;
  c.claimed_at = kAt;
  auto text = render_clock_alarm(c, 1'000, kOptions);
  EXPECT_EQ(text.subject, "[cronwheel] executor billing  Bcc: evil@example.com at http://10.0.0.5:9999/: its clock "
                          "is 1500 ms ahead of the admin's");
  EXPECT_NE(text.body.find("is 1500 ms ahead of the admin's, more than 1000 ms"), std::string::npos) << text.body;
  EXPECT_NE(text.body.find("Synchronise the clock of its host (NTP)"), std::string::npos) << text.body;
  EXPECT_NE(text.body.find("Console: https://cron.example.com/groups"), std::string::npos) << text.body;
  c.offset_ms = 2'000;
  EXPECT_NE(render_clock_alarm(c, 1'000, kOptions).subject.find("2000 ms behind the admin's"), std::string::npos);
  auto body = nlohmann::json::parse(clock_alarm_webhook_body(c, 1'000, text, kOptions));
  EXPECT_EQ(body["event"], "executor_clock");
  EXPECT_EQ(body["executor"]["appName"], "billing  Bcc: evil@example.com");
  EXPECT_EQ(body["offsetMs"], 2'000);
  EXPECT_EQ(body["delayMs"], 3);
  EXPECT_EQ(body["boundMs"], 1'000);
  EXPECT_EQ(body["sentAt"], kAt);
}

TEST(AlarmMessage, RecipientsAreTheJobsAddressesTrimmedWithoutRepeats) {
  EXPECT_EQ(alarm_recipients("a@example.com, b@example.com ,,a@example.com"),
            (std::vector<std::string>{"a@example.com", "b@example.com"}));
  EXPECT_TRUE(alarm_recipients("").empty());
  EXPECT_TRUE(alarm_recipients(" , ").empty());
}

}  // namespace
}  // namespace cronwheel::admin
