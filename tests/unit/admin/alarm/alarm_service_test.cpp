#include "admin/alarm/alarm_service.h"

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/timer/hierarchical_wheel_timer.h"
#include "common/timer/recurring_task.h"
#include "tests/support/fake_alarm_store.h"
#include "tests/support/fake_clock.h"

namespace cronwheel::admin {
namespace {

using namespace std::chrono_literals;
using testing::FakeAlarmStore;
using testing::FakeClock;

// Records what it is asked to send; fails the next `failures` sends.
class FakeMailer final : public Mailer {
 public:
  void send(const Mail& mail) override {
    std::lock_guard lock(mutex_);
    ++calls_;
    if (failures_ > 0) {
      --failures_;
      throw MailError("cannot connect to smtp://127.0.0.1:25: Connection refused");
    }
    sent_.push_back(mail);
  }
  void fail_next(int n) {
    std::lock_guard lock(mutex_);
    failures_ = n;
  }
  std::vector<Mail> sent() {
    std::lock_guard lock(mutex_);
    return sent_;
  }
  int calls() {
    std::lock_guard lock(mutex_);
    return calls_;
  }

 private:
  std::mutex mutex_;
  std::vector<Mail> sent_;
  int failures_ = 0;
  int calls_ = 0;
};

// Records what it is asked to post; fails the next `failures` posts.
class FakeWebhooks final : public WebhookSender {
 public:
  void post(const WebhookRequest& request) override {
    std::lock_guard lock(mutex_);
    ++calls_;
    if (failures_ > 0) {
      --failures_;
      throw WebhookError("webhook https://hooks.example.com:443 answered HTTP 503");
    }
    posted_.push_back(request);
  }
  void fail_next(int n) {
    std::lock_guard lock(mutex_);
    failures_ = n;
  }
  std::vector<WebhookRequest> posted() {
    std::lock_guard lock(mutex_);
    return posted_;
  }
  int calls() {
    std::lock_guard lock(mutex_);
    return calls_;
  }

 private:
  std::mutex mutex_;
  std::vector<WebhookRequest> posted_;
  int failures_ = 0;
  int calls_ = 0;
};

AlarmService::Options options() {
  AlarmService::Options o;
  o.node_id = "admin-1";
  o.interval = 5s;
  o.quiet = 300s;
  o.stale = 600s;
  o.send_attempts = 3;
  o.retry_delay = 10s;
  o.console_url = "https://cron.example.com/";
  return o;
}

class AlarmServiceTest : public ::testing::Test {
 protected:
  Job job(const std::string& recipients = "ops@example.com, dev@example.com") {
    Job j;
    j.job_group = 1;
    j.job_desc = "nightly report";
    j.executor_handler = "report";
    j.alarm_email = recipients;
    return store_.put_job(j);
  }
  JobLog fail(const Job& j) {
    JobLog l;
    l.job_group = j.job_group;
    l.job_id = j.id;
    l.state = FireState::kFailed;
    l.scheduled_time = clock_.now_ms() - 1'000;
    l.trigger_time = l.scheduled_time + 2;
    l.trigger_code = 200;
    l.handle_time = l.scheduled_time + 500;
    l.handle_code = 500;
    l.handle_msg = "disk full";
    return store_.put_log(l);
  }
  // Moves the clock, letting the timer hand over the passes that fall due.
  void advance(std::chrono::milliseconds d) {
    clock_.advance(d);
    timer_.process_until(clock_.steady_now());
    tasks_.wait_idle();
  }

  AlarmChannel channel(const std::string& name, AlarmChannelKind kind, const std::string& target,
                       std::vector<std::int64_t> groups, std::vector<std::int64_t> jobs) {
    AlarmChannel c;
    c.name = name;
    c.kind = kind;
    c.target = target;
    if (kind == AlarmChannelKind::kWebhook) c.secret = "key-" + name;
    c.groups = std::move(groups);
    c.jobs = std::move(jobs);
    return store_.create_channel(c, Actor{std::nullopt, "system", ""});
  }

  FakeClock clock_;
  FakeAlarmStore store_;
  FakeMailer mailer_;
  FakeWebhooks webhooks_;
  AlarmDelivery delivery_{&mailer_, &webhooks_, "cronwheel@example.com"};
  common::HierarchicalWheelTimer timer_{clock_, {}, {.manual = true}};
  common::RecurringTasks tasks_{timer_, clock_};
  AlarmService service_{store_, delivery_, tasks_, options()};
};

TEST_F(AlarmServiceTest, SendsOneMailPerJobToItsAddressesAndRecordsItSent) {
  auto j = job();
  auto a = fail(j);
  auto b = fail(j);
  auto other = job("team@example.com");
  auto c = fail(other);
  EXPECT_EQ(service_.pass_once(), 2);
  auto mails = mailer_.sent();
  ASSERT_EQ(mails.size(), 2u);
  EXPECT_EQ(mails[0].from, "cronwheel@example.com");
  EXPECT_EQ(mails[0].to, (std::vector<std::string>{"ops@example.com", "dev@example.com"}));
  EXPECT_EQ(mails[0].subject, "[cronwheel] job 1 \"nightly report\": 2 runs failed or were skipped");
  EXPECT_NE(mails[0].body.find("https://cron.example.com/runs/" + std::to_string(a.id)), std::string::npos);
  EXPECT_EQ(mails[1].to, (std::vector<std::string>{"team@example.com"}));
  EXPECT_EQ(mails[1].subject, "[cronwheel] job 2 \"nightly report\": run " + std::to_string(c.id) + " failed");
  for (auto id : {a.id, b.id, c.id}) EXPECT_EQ(store_.alarm_status(id), kAlarmSent);
  EXPECT_EQ(service_.counters().sent, 2u);
  // Nothing new: nothing sent.
  EXPECT_EQ(service_.pass_once(), 0);
  EXPECT_EQ(mailer_.calls(), 2);
}

// XXL-JOB mails every failure: a job failing every second would send 3,600 mails an hour. Here
// it sends one at the first failure and then one summary per quiet period.
TEST_F(AlarmServiceTest, AJobFailingEverySecondSendsOneSummaryPerQuietPeriod) {
  auto j = job();
  for (int second = 0; second < 620; ++second) {
    fail(j);
    service_.pass_once();
    clock_.advance(1s);
  }
  auto mails = mailer_.sent();
  ASSERT_EQ(mails.size(), 3u);
  EXPECT_NE(mails[0].subject.find(": run 1 failed"), std::string::npos) << mails[0].subject;
  EXPECT_NE(mails[1].subject.find(": 300 runs failed"), std::string::npos) << mails[1].subject;
  EXPECT_NE(mails[1].body.find("since the last alarm"), std::string::npos);
  EXPECT_NE(mails[2].subject.find(": 300 runs failed"), std::string::npos) << mails[2].subject;
}

TEST_F(AlarmServiceTest, AFailedSendIsTriedAgainLaterWithGrowingDelaysThenRecordedFailed) {
  auto j = job();
  auto r = fail(j);
  mailer_.fail_next(100);
  EXPECT_EQ(service_.pass_once(), 0);
  EXPECT_EQ(mailer_.calls(), 1);
  EXPECT_EQ(service_.waiting(), 1u);
  EXPECT_EQ(store_.alarm_status(r.id), kAlarmClaimed);
  clock_.advance(9'999ms);
  service_.pass_once();
  EXPECT_EQ(mailer_.calls(), 1);
  clock_.advance(1ms);  // 10 s after the first try
  service_.pass_once();
  EXPECT_EQ(mailer_.calls(), 2);
  clock_.advance(19'999ms);
  service_.pass_once();
  EXPECT_EQ(mailer_.calls(), 2);
  clock_.advance(1ms);  // 20 s after the second
  service_.pass_once();
  EXPECT_EQ(mailer_.calls(), 3);
  EXPECT_EQ(service_.waiting(), 0u);
  EXPECT_EQ(store_.alarm_status(r.id), kAlarmFailed);
  auto counters = service_.counters();
  EXPECT_EQ(counters.failed, 1u);
  EXPECT_EQ(counters.retried, 2u);
  EXPECT_EQ(counters.sent, 0u);
}

TEST_F(AlarmServiceTest, ASendThatFailsOnceGoesOutOnTheRetry) {
  auto j = job();
  auto r = fail(j);
  mailer_.fail_next(1);
  service_.pass_once();
  clock_.advance(10s);
  EXPECT_EQ(service_.pass_once(), 1);
  EXPECT_EQ(mailer_.sent().size(), 1u);
  EXPECT_EQ(store_.alarm_status(r.id), kAlarmSent);
}

TEST_F(AlarmServiceTest, WithoutAMailerAlarmsAreRecordedFailedAtOnce) {
  AlarmDelivery without_mail(nullptr, &webhooks_, "cronwheel@example.com");
  AlarmService no_mail(store_, without_mail, tasks_, options());
  auto j = job();
  auto r = fail(j);
  EXPECT_EQ(no_mail.pass_once(), 0);
  EXPECT_EQ(store_.alarm_status(r.id), kAlarmFailed);
  EXPECT_EQ(no_mail.counters().failed, 1u);
  EXPECT_EQ(no_mail.waiting(), 0u);
}

TEST_F(AlarmServiceTest, AClaimMustOutlastEveryTryOfItsAlarm) {
  auto o = options();
  o.stale = 40s;  // tries: 10 s + 20 s, each up to an interval late, plus a pass
  EXPECT_THROW(AlarmService(store_, delivery_, tasks_, o), std::invalid_argument);
  o.stale = 46s;
  EXPECT_NO_THROW(AlarmService(store_, delivery_, tasks_, o));
  o = options();
  o.send_attempts = 0;
  EXPECT_THROW(AlarmService(store_, delivery_, tasks_, o), std::invalid_argument);
}

TEST_F(AlarmServiceTest, TheChannelsOfTheJobAndItsGroupGetTheAlarmToo) {
  auto j = job("ops@example.com");
  auto r = fail(j);
  channel("team-mail", AlarmChannelKind::kEmail, "team@example.com, lead@example.com", {j.job_group}, {});
  channel("hook", AlarmChannelKind::kWebhook, "https://hooks.example.com/cron", {}, {j.id});
  auto other = job("");
  channel("elsewhere", AlarmChannelKind::kWebhook, "https://other.example.com/", {}, {other.id});
  EXPECT_EQ(service_.pass_once(), 1);

  auto mails = mailer_.sent();
  ASSERT_EQ(mails.size(), 2u);
  EXPECT_EQ(mails[0].to, (std::vector<std::string>{"ops@example.com"}));
  EXPECT_EQ(mails[1].to, (std::vector<std::string>{"team@example.com", "lead@example.com"}));
  EXPECT_EQ(mails[1].subject, mails[0].subject);
  auto posts = webhooks_.posted();
  ASSERT_EQ(posts.size(), 1u);
  EXPECT_EQ(posts[0].url, "https://hooks.example.com/cron");
  EXPECT_EQ(posts[0].secret, "key-hook");
  auto body = nlohmann::json::parse(posts[0].body);
  EXPECT_EQ(body["event"], "alarm");
  EXPECT_EQ(body["job"]["id"], j.id);
  EXPECT_EQ(body["subject"], mails[0].subject);
  ASSERT_EQ(body["runs"].size(), 1u);
  EXPECT_EQ(body["runs"][0]["id"], r.id);
  EXPECT_EQ(body["runs"][0]["handleMsg"], "disk full");
  EXPECT_EQ(body["runs"][0]["url"], "https://cron.example.com/runs/" + std::to_string(r.id));
  EXPECT_EQ(store_.alarm_status(r.id), kAlarmSent);
  EXPECT_EQ(service_.counters().sent, 1u);
}

TEST_F(AlarmServiceTest, AnExecutorWhoseClockIsOffAlarmsItsGroupsChannelsOnceUntilItComesBack) {
  auto j = job("ops@example.com");  // a job's own addresses are for its runs, not its executors
  store_.name_group(j.job_group, "billing");
  channel("team-mail", AlarmChannelKind::kEmail, "team@example.com", {j.job_group}, {});
  channel("hook", AlarmChannelKind::kWebhook, "https://hooks.example.com/cron", {j.job_group}, {});
  const auto off = store_.put_registration("billing", "http://10.0.0.5:9999/", 2'500, 4);
  store_.put_registration("billing", "http://10.0.0.6:9999/", 900, 2);  // within the bound
  EXPECT_EQ(service_.pass_once(), 1);

  auto mails = mailer_.sent();
  ASSERT_EQ(mails.size(), 1u);
  EXPECT_EQ(mails[0].to, (std::vector<std::string>{"team@example.com"}));
  EXPECT_EQ(mails[0].subject,
            "[cronwheel] executor billing at http://10.0.0.5:9999/: its clock is 2500 ms behind the admin's");
  EXPECT_NE(mails[0].body.find("more than 1000 ms"), std::string::npos) << mails[0].body;
  EXPECT_NE(mails[0].body.find("round trip of 4 ms"), std::string::npos) << mails[0].body;
  auto posts = webhooks_.posted();
  ASSERT_EQ(posts.size(), 1u);
  auto body = nlohmann::json::parse(posts[0].body);
  EXPECT_EQ(body["event"], "executor_clock");
  EXPECT_EQ(body["executor"]["appName"], "billing");
  EXPECT_EQ(body["executor"]["address"], "http://10.0.0.5:9999/");
  EXPECT_EQ(body["offsetMs"], 2'500);
  EXPECT_EQ(body["boundMs"], 1'000);
  EXPECT_EQ(body["subject"], mails[0].subject);
  EXPECT_EQ(store_.clock_alarm_status(off), kAlarmSent);

  clock_.advance(1h);
  EXPECT_EQ(service_.pass_once(), 0);
  EXPECT_EQ(mailer_.sent().size(), 1u) << "once while it stays off";
  store_.set_clock_offset(off, 100);
  EXPECT_EQ(service_.pass_once(), 0);
  store_.set_clock_offset(off, -1'800);
  EXPECT_EQ(service_.pass_once(), 1);
  mails = mailer_.sent();
  ASSERT_EQ(mails.size(), 2u) << "drifted off again";
  EXPECT_EQ(mails[1].subject,
            "[cronwheel] executor billing at http://10.0.0.5:9999/: its clock is 1800 ms ahead of the admin's");
}

TEST_F(AlarmServiceTest, ClockAlarmsAreOffWithABoundOfZero) {
  auto o = options();
  o.clock_bound_ms = 0;
  AlarmService quiet{store_, delivery_, tasks_, o};
  auto j = job("");
  store_.name_group(j.job_group, "billing");
  channel("team-mail", AlarmChannelKind::kEmail, "team@example.com", {j.job_group}, {});
  const auto off = store_.put_registration("billing", "http://10.0.0.5:9999/", 60'000, 4);
  EXPECT_EQ(quiet.pass_once(), 0);
  EXPECT_TRUE(mailer_.sent().empty());
  EXPECT_EQ(store_.clock_alarm_status(off), 0);
}

// One destination failing does not send the alarm again to the others: only it is retried, and
// the runs are recorded once every destination is done.
TEST_F(AlarmServiceTest, OnlyTheDestinationThatFailedIsTriedAgain) {
  auto j = job("ops@example.com");
  auto r = fail(j);
  channel("hook", AlarmChannelKind::kWebhook, "https://hooks.example.com/cron", {j.job_group}, {});
  webhooks_.fail_next(1);
  EXPECT_EQ(service_.pass_once(), 0);
  EXPECT_EQ(mailer_.calls(), 1);
  EXPECT_EQ(webhooks_.calls(), 1);
  EXPECT_EQ(store_.alarm_status(r.id), kAlarmClaimed);
  EXPECT_EQ(service_.waiting(), 1u);
  clock_.advance(10s);
  EXPECT_EQ(service_.pass_once(), 1);
  EXPECT_EQ(mailer_.calls(), 1);
  EXPECT_EQ(webhooks_.posted().size(), 1u);
  EXPECT_EQ(store_.alarm_status(r.id), kAlarmSent);
  EXPECT_EQ(service_.counters().retried, 1u);
}

TEST_F(AlarmServiceTest, AnAlarmOneDestinationNeverTookIsRecordedFailed) {
  auto j = job("ops@example.com");
  auto r = fail(j);
  channel("hook", AlarmChannelKind::kWebhook, "https://hooks.example.com/cron", {}, {j.id});
  webhooks_.fail_next(100);
  service_.pass_once();
  clock_.advance(10s);
  service_.pass_once();
  clock_.advance(20s);
  service_.pass_once();
  EXPECT_EQ(webhooks_.calls(), 3);
  EXPECT_EQ(mailer_.sent().size(), 1u);
  EXPECT_EQ(store_.alarm_status(r.id), kAlarmFailed);
  EXPECT_EQ(service_.counters().failed, 1u);
  EXPECT_EQ(service_.counters().sent, 0u);
}

TEST_F(AlarmServiceTest, StartedItPassesEveryIntervalAndOutlivesAnUnreachableStore) {
  auto j = job();
  store_.fail_with("database down");
  fail(j);
  service_.start();
  tasks_.wait_idle();
  EXPECT_EQ(mailer_.calls(), 0);
  store_.fail_with(std::nullopt);
  advance(4'999ms);
  EXPECT_EQ(mailer_.calls(), 0);
  advance(1ms);
  EXPECT_EQ(mailer_.sent().size(), 1u);
  service_.stop();
}

}  // namespace
}  // namespace cronwheel::admin
