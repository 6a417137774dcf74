#include <mutex>

#include <nlohmann/json.hpp>

#include "admin/api/jobs_files_api.h"
#include "admin/complete/held_fire_canceller.h"
#include "admin/model/fire.h"
#include "tests/unit/admin/api/resource_api_fixture.h"

namespace cronwheel::admin {
namespace {

using nlohmann::json;

// An executor as the admin sees it: /log and /kill on 127.0.0.1, recording what it was asked
// and answering what the test set.
class FakeExecutor {
 public:
  struct Call {
    std::string path;
    json body;
    std::string token;
  };

  FakeExecutor() {
    common::http::HttpServerOptions o;
    o.host = "127.0.0.1";
    o.worker_threads = 2;
    o.error_formatter = common::http::xxl_job_error;
    server_ = std::make_unique<common::http::HttpServer>(o);
    for (const char* path : {"/log", "/kill", "/leadCancel"}) {
      server_->post(path, [this, path](const cronwheel::common::http::Request& req, cronwheel::common::http::Response& res) {
        std::lock_guard lock(mutex_);
        calls_.push_back({path, json::parse(req.body, nullptr, false), req.get_header_value("XXL-JOB-ACCESS-TOKEN")});
        const bool lead = std::string_view(path) == "/leadCancel" && !lead_answers_.empty();
        common::http::write_json(res, (lead ? lead_answers_.front() : answer_).dump(), 200);
        if (lead && lead_answers_.size() > 1) lead_answers_.erase(lead_answers_.begin());
      });
    }
    server_->start();
  }
  ~FakeExecutor() { server_->stop(); }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(server_->port()) + "/"; }
  void answer(json body) {
    std::lock_guard lock(mutex_);
    answer_ = std::move(body);
  }
  std::vector<Call> calls() {
    std::lock_guard lock(mutex_);
    return calls_;
  }
  // What /leadCancel answers (otherwise the common answer).
  void answer_lead_cancel(json body) { answer_lead_cancel_in_turn({std::move(body)}); }
  // What /leadCancel answers, one call after the other; the last answer stays.
  void answer_lead_cancel_in_turn(std::vector<json> bodies) {
    std::lock_guard lock(mutex_);
    lead_answers_ = std::move(bodies);
  }

 private:
  std::unique_ptr<common::http::HttpServer> server_;
  std::mutex mutex_;
  json answer_ = {{"code", 200}, {"msg", nullptr}, {"content", nullptr}};
  std::vector<json> lead_answers_;
  std::vector<Call> calls_;
};

class LogsApi : public ResourceApiTest {
 protected:
  void SetUp() override {
    ResourceApiTest::SetUp();
    group_ = add_group("reports");
    job_ = add_job(group_.id);
  }

  JobLog put_log(FireState state, std::int64_t scheduled, const std::string& address = "",
                 TriggerType trigger_type = TriggerType::kSchedule, std::optional<Job> job = std::nullopt) {
    const Job& j = job ? *job : job_;
    JobLog l;
    l.job_group = j.job_group;
    l.job_id = j.id;
    l.state = state;
    l.trigger_type = trigger_type;
    l.scheduled_time = scheduled;
    l.admin_node = "node-under-test";
    l.executor_address = address;
    if (state != FireState::kPending && state != FireState::kCancelled) l.trigger_time = scheduled + 10;
    if (state == FireState::kSucceeded) l.handle_code = 200;
    if (state == FireState::kFailed) l.handle_code = 500;
    if (l.handle_code != 0) l.handle_time = scheduled + 1'000;
    return fake_.put_log(l);
  }

  std::string path(const JobLog& log, const std::string& rest = "") const {
    return "logs/" + std::to_string(log.id) + rest;
  }

  Group group_;
  Job job_;
};

TEST_F(LogsApi, ListFiltersByStatusAndTime) {
  put_log(FireState::kSucceeded, 1'000);
  put_log(FireState::kFailed, 2'000);
  put_log(FireState::kLost, 3'000);
  put_log(FireState::kTriggered, 4'000, "http://10.0.0.5:9999/");
  put_log(FireState::kPending, 5'000);

  auto all = get("logs");
  ASSERT_EQ(all.status, 200) << all.text;
  EXPECT_EQ(all.body["total"], 5);
  EXPECT_EQ(all.body["items"][0]["scheduledTime"], 5'000);  // newest first
  for (const char* field : {"id", "jobId", "jobGroup", "scheduledTime", "triggerTime", "triggerCode", "triggerMsg",
                            "handleTime", "handleCode", "handleMsg", "executorAddress"}) {
    EXPECT_TRUE(all.body["items"][0].contains(field)) << field;
  }
  EXPECT_EQ(get("logs?status=success").body["total"], 1);
  EXPECT_EQ(get("logs?status=failure").body["total"], 2);
  EXPECT_EQ(get("logs?status=running").body["total"], 1);
  EXPECT_EQ(get("logs?status=pending").body["total"], 1);
  EXPECT_EQ(get("logs?status=cancelled").body["total"], 0);
  EXPECT_EQ(get("logs?from=2000&to=4000").body["total"], 2);
  EXPECT_EQ(get("logs?jobId=" + std::to_string(job_.id) + "&jobGroup=" + std::to_string(group_.id)).body["total"], 5);
  EXPECT_EQ(get("logs?limit=2&offset=4").body["items"].size(), 1u);

  auto bad = get("logs?status=ok");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.message(), "status: unknown value 'ok', expected one of success, failure, running, pending, cancelled");
  EXPECT_EQ(get("logs?from=5&to=1").message(), "to: must not be before from");
  EXPECT_EQ(get("logs?from=-5").field(), "from");
}

TEST_F(LogsApi, ListPagesByCursorBothWays) {
  for (int i = 1; i <= 5; ++i) put_log(FireState::kSucceeded, i * 1'000);
  auto first = get("logs?limit=2");
  ASSERT_EQ(first.status, 200) << first.text;
  EXPECT_EQ(first.body["total"], 5);
  EXPECT_EQ(first.body["totalExact"], true);
  EXPECT_TRUE(first.body["prevCursor"].is_null());
  ASSERT_TRUE(first.body["nextCursor"].is_string());
  auto second = get("logs?limit=2&after=" + first.body["nextCursor"].get<std::string>());
  ASSERT_EQ(second.status, 200) << second.text;
  ASSERT_EQ(second.body["items"].size(), 2u);
  EXPECT_EQ(second.body["items"][0]["scheduledTime"], 3'000);
  EXPECT_EQ(second.body["items"][1]["scheduledTime"], 2'000);
  auto back = get("logs?limit=2&before=" + second.body["prevCursor"].get<std::string>());
  ASSERT_EQ(back.status, 200) << back.text;
  EXPECT_EQ(back.body["items"], first.body["items"]);
  EXPECT_TRUE(back.body["prevCursor"].is_null());
  auto last = get("logs?limit=2&after=" + second.body["nextCursor"].get<std::string>());
  EXPECT_EQ(last.body["items"].size(), 1u);
  EXPECT_TRUE(last.body["nextCursor"].is_null());

  for (const char* bad : {"after=12", "after=x.1", "after=1.", "after=.1", "after=-1.5", "after=1.2.3",
                          "after=99999999999999999999.1", "before=1e3.1"}) {
    auto answer = get(std::string("logs?") + bad);
    EXPECT_EQ(answer.status, 400) << bad;
    EXPECT_EQ(answer.field(), std::string(bad).substr(0, std::string(bad).find('='))) << bad;
  }
  EXPECT_EQ(get("logs?after=1.1&before=1.1").message(), "before: give after or before, not both");
  EXPECT_EQ(get("logs?after=1.1&offset=2").field(), "offset");
  EXPECT_EQ(get("logs?offset=10000").status, 200);
  auto deep = get("logs?offset=10001");
  EXPECT_EQ(deep.status, 400);
  EXPECT_EQ(deep.message(), "offset: at most 10000; page further with after (the nextCursor of a page)");
}

TEST_F(LogsApi, GetAnswersOneLog) {
  auto log = put_log(FireState::kSucceeded, 1'000, "http://10.0.0.5:9999/");
  auto r = get(path(log));
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.body["id"], log.id);
  EXPECT_EQ(r.body["handleCode"], 200);
  EXPECT_EQ(get("logs/999").status, 404);
  EXPECT_TRUE(r.body["retry"].is_null()) << "no retry";
}

TEST_F(LogsApi, AFailedRunSaysWhenItsRetryIsDueAndHowItWent) {
  auto failed = put_log(FireState::kFailed, 1'000, "http://10.0.0.5:9999/");
  JobLog retry;
  retry.job_group = job_.job_group;
  retry.job_id = job_.id;
  retry.state = FireState::kPending;
  retry.trigger_type = TriggerType::kRetry;
  retry.scheduled_time = 61'000;
  retry.admin_node = "node-under-test";
  retry.parent_log_id = failed.id;
  retry = fake_.put_log(retry);
  put_log(FireState::kPending, 5'000);  // another run, not its retry
  auto r = get(path(failed));
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body["retry"], json({{"id", retry.id}, {"scheduledTime", 61'000}, {"state", "pending"}}));
  EXPECT_TRUE(get(path(retry)).body["retry"].is_null()) << "the retry has none of its own yet";
}

TEST_F(LogsApi, ContentIsReadFromTheExecutorThatRanIt) {
  FakeExecutor executor;
  executor.answer({{"code", 200},
                   {"msg", nullptr},
                   {"content", {{"fromLineNum", 3}, {"toLineNum", 4}, {"logContent", "line 3\nline 4\n"}, {"isEnd", true}}}});
  auto log = put_log(FireState::kSucceeded, 1'000, executor.url());

  auto r = get(path(log, "/content?fromLine=3"));
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body, json({{"fromLine", 3}, {"toLine", 4}, {"content", "line 3\nline 4\n"}, {"isEnd", true}}));
  auto calls = executor.calls();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].path, "/log");
  EXPECT_EQ(calls[0].body["logId"], log.id);
  EXPECT_EQ(calls[0].body["fromLineNum"], 3);
  EXPECT_EQ(calls[0].body["logDateTim"], 1'000);  // the scheduled time, as /run had it
  EXPECT_EQ(calls[0].token, "admin-default-token");
}

// An executor files a run's log under the day of /run's logDateTime (the scheduled time): a
// run scheduled just before midnight and triggered after it must be read back with that same
// time, or the executor looks in the next day's directory and finds nothing.
TEST_F(LogsApi, ContentOfARunTriggeredAfterMidnightIsAskedForWithItsRunTime) {
  FakeExecutor executor;
  executor.answer({{"code", 200}, {"content", {{"fromLineNum", 1}, {"toLineNum", 1}, {"logContent", "x\n"}, {"isEnd", true}}}});
  const std::int64_t before_midnight = 1'795'651'199'900;  // 2026-11-25T23:59:59.900Z
  auto log = put_log(FireState::kSucceeded, before_midnight, executor.url(), TriggerType::kManual);
  log.trigger_time = before_midnight + 300;  // 2026-11-26T00:00:00.200Z
  fake_.put_log(log);
  ASSERT_EQ(get(path(log, "/content")).status, 200);
  ASSERT_EQ(executor.calls().size(), 1u);
  EXPECT_EQ(executor.calls()[0].body["logDateTim"], before_midnight);
  EXPECT_EQ(executor.calls()[0].body["logDateTim"], log_date_time(log));
}

TEST_F(LogsApi, ContentUsesTheGroupsOwnToken) {
  FakeExecutor executor;
  executor.answer({{"code", 200}, {"content", {{"fromLineNum", 1}, {"toLineNum", 0}, {"logContent", ""}, {"isEnd", false}}}});
  auto g = group_;
  g.access_token = "group-token";
  stores_.groups.update(g, system_);
  auto log = put_log(FireState::kTriggered, 1'000, executor.url());
  ASSERT_EQ(get(path(log, "/content")).status, 200);
  ASSERT_EQ(executor.calls().size(), 1u);
  EXPECT_EQ(executor.calls()[0].token, "group-token");
  EXPECT_EQ(executor.calls()[0].body["fromLineNum"], 1);
}

// A fire is claimed (sending, its executor chosen) up to a second before it is posted: until
// the executor has it, its log is "not there yet" (409, the console waits), not a failure.
TEST_F(LogsApi, ContentOfARunBeingSentThatTheExecutorDoesNotHaveYetIsAConflict) {
  FakeExecutor executor;
  executor.answer({{"code", 500}, {"msg", "log file not found"}, {"content", nullptr}});
  auto sending = put_log(FireState::kSending, 1'000, executor.url());
  auto r = get(path(sending, "/content"));
  EXPECT_EQ(r.status, 409);
  EXPECT_EQ(r.message(), "run " + std::to_string(sending.id) + " is being sent to executor " + executor.url() +
                             ", which has no log of it yet: log file not found");
  auto triggered = put_log(FireState::kTriggered, 2'000, executor.url());
  EXPECT_EQ(get(path(triggered, "/content")).status, 502);  // it has the run: a real failure
}

// The same from an executor that answers a log it does not have as XXL-JOB does: a success
// saying the log ends before its first line. The console showed such a run's log as over.
TEST_F(LogsApi, ContentOfARunBeingSentThatTheExecutorAnswersAsNoLogFileIsAConflict) {
  FakeExecutor executor;
  executor.answer({{"code", 200},
                   {"msg", nullptr},
                   {"content",
                    {{"fromLineNum", 1}, {"toLineNum", 0}, {"logContent", "readLog fail, logFile not exists"},
                     {"isEnd", true}}}});
  auto sending = put_log(FireState::kSending, 1'000, executor.url());
  auto r = get(path(sending, "/content"));
  EXPECT_EQ(r.status, 409);
  EXPECT_EQ(r.message(),
            "run " + std::to_string(sending.id) + " is being sent to executor " + executor.url() +
                ", which has no log of it yet");
  // A run it has is shown, though its answer was not recorded yet (a quick run may be over).
  executor.answer({{"code", 200},
                   {"msg", nullptr},
                   {"content", {{"fromLineNum", 1}, {"toLineNum", 1}, {"logContent", "done\n"}, {"isEnd", true}}}});
  auto shown = get(path(sending, "/content"));
  ASSERT_EQ(shown.status, 200);
  EXPECT_EQ(shown.body["content"], "done\n");
  EXPECT_EQ(shown.body["isEnd"], true);
}

TEST_F(LogsApi, ContentOfARunWithoutExecutorIsAConflict) {
  auto log = put_log(FireState::kPending, 1'000);
  auto r = get(path(log, "/content"));
  EXPECT_EQ(r.status, 409);
  EXPECT_EQ(r.message(), "run " + std::to_string(log.id) + " has no executor yet (state pending)");
  EXPECT_EQ(get(path(log, "/content?fromLine=0")).field(), "fromLine");
}

TEST_F(LogsApi, ContentFromAnExecutorThatDoesNotAnswerIs502WithTheReason) {
  std::string gone;
  {
    FakeExecutor executor;  // a port that just stopped listening
    gone = executor.url();
  }
  auto log = put_log(FireState::kSucceeded, 1'000, gone);
  auto r = get(path(log, "/content"));
  EXPECT_EQ(r.status, 502);
  EXPECT_EQ(r.error()["code"], "bad_gateway");
  EXPECT_NE(r.message().find("executor " + gone + " did not return the log: "), std::string::npos) << r.message();
  EXPECT_NE(r.message().find("connect"), std::string::npos) << r.message();

  FakeExecutor failing;
  failing.answer({{"code", 500}, {"msg", "log file not found"}, {"content", nullptr}});
  auto other = put_log(FireState::kSucceeded, 2'000, failing.url());
  r = get(path(other, "/content"));
  EXPECT_EQ(r.status, 502);
  EXPECT_EQ(r.message(), "executor " + failing.url() + " did not return the log: log file not found");
}

TEST_F(LogsApi, KillAsksTheExecutorAndIsAudited) {
  FakeExecutor executor;
  auto log = put_log(FireState::kTriggered, 1'000, executor.url());
  auto r = post(path(log, "/kill"));
  ASSERT_EQ(r.status, 204) << r.text;
  auto calls = executor.calls();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].path, "/kill");
  EXPECT_EQ(calls[0].body, json({{"jobId", job_.id}}));
  auto audit = last_audit();
  EXPECT_EQ(audit.action, "log.kill");
  EXPECT_EQ(audit.entity_type, "log");
  EXPECT_EQ(audit.entity_id, log.id);
  EXPECT_EQ(audit.username, "admin");
  // Recorded at once, not when (if ever) the executor's callback comes.
  auto row = *stores_.logs.get(log.id);
  EXPECT_EQ(row.state, FireState::kFailed);
  EXPECT_EQ(row.handle_code, 500);
  EXPECT_EQ(row.handle_msg, "killed by admin; the executor ended it");
  EXPECT_EQ(row.handle_time, clock_.now_ms());
}

// A run handed over ahead of its instant (lead dispatch) is taken back from the executor before it
// starts and ends cancelled; one that started meanwhile is killed as any other.
TEST_F(LogsApi, KillOfARunHeldForItsInstantTakesItBackFromTheExecutor) {
  FakeExecutor executor;
  // Its trigger time is its instant, still ahead.
  auto held = put_log(FireState::kTriggered, clock_.now_ms() + 790, executor.url());
  executor.answer_lead_cancel({{"code", 200}, {"msg", nullptr},
                               {"content", {{"cancelled", {held.id}}, {"started", json::array()}, {"unknown", json::array()}}}});
  auto r = post(path(held, "/kill"));
  ASSERT_EQ(r.status, 204) << r.text;
  auto calls = executor.calls();
  ASSERT_EQ(calls.size(), 1u) << "no /kill: nothing runs yet";
  EXPECT_EQ(calls[0].path, "/leadCancel");
  EXPECT_EQ(calls[0].body, json({{"logIds", {held.id}}, {"reason", "killed by admin"}}));
  auto row = *stores_.logs.get(held.id);
  EXPECT_EQ(row.state, FireState::kCancelled) << "it never ran";
  EXPECT_EQ(row.alarm_status, 1) << "an operator's cancel alarms no one";
  EXPECT_EQ(row.handle_code, 500);
  EXPECT_EQ(row.handle_msg, "killed by admin before its instant; executor " + executor.url() +
                                " held it and will not start it");
  EXPECT_EQ(last_audit().action, "log.kill");

  auto started = put_log(FireState::kTriggered, clock_.now_ms() + 1'790, executor.url());
  executor.answer_lead_cancel({{"code", 200}, {"msg", nullptr},
                               {"content", {{"cancelled", json::array()}, {"started", {started.id}}, {"unknown", json::array()}}}});
  ASSERT_EQ(post(path(started, "/kill")).status, 204);
  calls = executor.calls();
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[1].path, "/leadCancel");
  EXPECT_EQ(calls[2].path, "/kill");
  EXPECT_EQ(stores_.logs.get(started.id)->handle_msg, "killed by admin; the executor ended it");
}

// Lead dispatch: a job changed or deleted while an executor holds one of its runs for its instant
// has that run taken back (HeldFireCanceller): a changed job's run is sent again as the job is
// now, a deleted job's is dropped.
class HeldRunsApi : public LogsApi {
 protected:
  void configure(ResourceOptions& options) override {
    options.held.read = [this](std::int64_t job_id) { return canceller_->held(job_id); };
    options.held.take_back = [this](std::vector<JobLog> runs, std::string reason, GivenBack then) {
      canceller_->take_back(std::move(runs), std::move(reason), then);
    };
    options.held.take_back_many = [this](std::vector<std::int64_t> job_ids, std::string reason, GivenBack then) {
      canceller_->take_back_jobs(std::move(job_ids), std::move(reason), then);
    };
  }
  void TearDown() override {
    LogsApi::TearDown();
    canceller_->stop();
  }
  json given_back(std::vector<std::int64_t> cancelled, std::vector<std::int64_t> started = {}) {
    return {{"code", 200}, {"msg", nullptr},
            {"content", {{"cancelled", cancelled}, {"started", started}, {"unknown", json::array()}}}};
  }
  json unknown(std::vector<std::int64_t> ids) {
    return {{"code", 200}, {"msg", nullptr},
            {"content", {{"cancelled", json::array()}, {"started", json::array()}, {"unknown", ids}}}};
  }
  // Once the canceller is idle: the executor was asked once, with the group's token, for `ids`
  // back, saying `reason`.
  void expect_asked_once(FakeExecutor& executor, std::vector<std::int64_t> ids, const std::string& reason) {
    canceller_->wait_idle();
    auto calls = executor.calls();
    ASSERT_EQ(calls.size(), 1u);
    EXPECT_EQ(calls[0].path, "/leadCancel");
    EXPECT_EQ(calls[0].token, "group-token");
    EXPECT_EQ(calls[0].body, json({{"logIds", ids}, {"reason", reason}}));
  }
  static HeldFireCanceller::Options canceller_options() {
    HeldFireCanceller::Options o{"node-under-test", [](std::int64_t) { return std::string("group-token"); }};
    o.in_flight_wait = std::chrono::milliseconds(1);
    return o;
  }
  std::unique_ptr<HeldFireCanceller> canceller_ =
      std::make_unique<HeldFireCanceller>(completion_store_, executors_, clock_, canceller_options());
};

// A run claimed seconds ahead and on its way to its executor (POST /lead under way, or held
// there and not yet recorded) when its job stops: the executor does not know it at the first ask;
// asked again, it gives it back, and the run ends cancelled.
TEST_F(HeldRunsApi, StoppingAJobTakesBackARunOnItsWayToItsExecutor) {
  FakeExecutor executor;
  const std::string job_path = "jobs/" + std::to_string(job_.id);
  ASSERT_EQ(post(job_path + "/start").status, 200);
  auto on_its_way = put_log(FireState::kSending, clock_.now_ms() + 3'000, executor.url());
  executor.answer_lead_cancel_in_turn({unknown({on_its_way.id}), given_back({on_its_way.id})});
  ASSERT_EQ(post(job_path + "/stop").status, 200);
  canceller_->wait_idle();
  auto calls = executor.calls();
  ASSERT_EQ(calls.size(), 2u);
  for (const auto& call : calls) {
    EXPECT_EQ(call.path, "/leadCancel");
    EXPECT_EQ(call.body, json({{"logIds", {on_its_way.id}}, {"reason", "job stopped by admin"}}));
  }
  EXPECT_EQ(stores_.logs.get(on_its_way.id)->state, FireState::kCancelled);
  EXPECT_EQ(canceller_->counters().rechecked, 1u);
  EXPECT_EQ(canceller_->counters().ended, 1u);

  // One its executor never hears of (it refused it, so it is posted at its instant) is asked
  // about a bounded number of times.
  ASSERT_EQ(post(job_path + "/start").status, 200);
  auto refused = put_log(FireState::kSending, clock_.now_ms() + 4'000, executor.url());
  executor.answer_lead_cancel(unknown({refused.id}));
  ASSERT_EQ(post(job_path + "/stop").status, 200);
  canceller_->wait_idle();
  EXPECT_EQ(executor.calls().size(), 2u + 1u + static_cast<std::size_t>(canceller_options().in_flight_checks));
  EXPECT_EQ(stores_.logs.get(refused.id)->state, FireState::kSending);
}


TEST_F(HeldRunsApi, ChangingAJobTakesItsHeldRunsBackToBeSentAgainAsItIsNow) {
  FakeExecutor executor;
  auto held = put_log(FireState::kTriggered, clock_.now_ms() + 790, executor.url());  // its instant ahead
  auto running = put_log(FireState::kTriggered, clock_.now_ms() - 5'000, executor.url());  // started already
  executor.answer_lead_cancel(given_back({held.id}));
  auto changed = put("jobs/" + std::to_string(job_.id), {{"jobDesc", "changed"}});
  ASSERT_EQ(changed.status, 200) << changed.text;
  expect_asked_once(executor, {held.id}, "job changed by admin");  // only the held one
  auto row = *stores_.logs.get(held.id);
  EXPECT_EQ(row.state, FireState::kPending) << "sent again by this node's feeder, with the change";
  EXPECT_EQ(row.admin_node, "node-under-test");
  EXPECT_NE(row.trigger_msg.find("Taken back: job changed by admin before its instant (executor " + executor.url() +
                                 " gave it back); sent again as the job is now"),
            std::string::npos)
      << row.trigger_msg;
  EXPECT_EQ(stores_.logs.get(running.id)->state, FireState::kTriggered);

  // One its executor started meanwhile runs as it was sent.
  auto again = put_log(FireState::kTriggered, clock_.now_ms() + 1'790, executor.url());
  executor.answer_lead_cancel(given_back({}, {again.id}));
  ASSERT_EQ(put("jobs/" + std::to_string(job_.id), {{"jobDesc", "changed again"}}).status, 200);
  canceller_->wait_idle();
  ASSERT_EQ(executor.calls().size(), 2u);
  EXPECT_EQ(stores_.logs.get(again.id)->state, FireState::kTriggered);
  EXPECT_EQ(canceller_->counters().sent_again, 1u);
  EXPECT_EQ(canceller_->counters().started, 1u);
}

// A stop cancels every fire decided and not started: pending ones in the stop's transaction, held
// ones taken back from their executors; one its executor started meanwhile runs.
TEST_F(HeldRunsApi, StoppingAJobCancelsItsDecidedFiresPendingAndHeld) {
  FakeExecutor executor;
  const std::string job_path = "jobs/" + std::to_string(job_.id);
  ASSERT_EQ(post(job_path + "/start").status, 200);
  auto pending = put_log(FireState::kPending, clock_.now_ms() + 2'000);  // decided, in a node's ring
  auto held = put_log(FireState::kTriggered, clock_.now_ms() + 790, executor.url());
  auto started = put_log(FireState::kTriggered, clock_.now_ms() + 1'790, executor.url());
  executor.answer_lead_cancel(given_back({held.id}, {started.id}));
  ASSERT_EQ(post(job_path + "/stop").status, 200);
  canceller_->wait_idle();
  auto calls = executor.calls();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].path, "/leadCancel");
  EXPECT_EQ(calls[0].body, json({{"logIds", {held.id, started.id}}, {"reason", "job stopped by admin"}}));

  auto row = *stores_.logs.get(held.id);
  EXPECT_EQ(row.state, FireState::kCancelled) << "never sent again";
  EXPECT_EQ(row.alarm_status, 1);
  EXPECT_NE(row.trigger_msg.find("Cancelled: job stopped by admin before its instant (executor " + executor.url() +
                                 " gave it back)"),
            std::string::npos)
      << row.trigger_msg;
  EXPECT_EQ(stores_.logs.get(pending.id)->state, FireState::kCancelled);
  EXPECT_EQ(stores_.logs.get(pending.id)->trigger_msg, "Cancelled: job stopped by admin before its instant");
  EXPECT_EQ(stores_.logs.get(started.id)->state, FireState::kTriggered) << "started meanwhile: it runs";
  EXPECT_EQ(canceller_->counters().ended, 1u);
  EXPECT_EQ(canceller_->counters().sent_again, 0u);
  EXPECT_EQ(canceller_->counters().started, 1u);

  // Stopping a stopped job asks nothing of anyone.
  ASSERT_EQ(post(job_path + "/stop").status, 200);
  canceller_->wait_idle();
  EXPECT_EQ(executor.calls().size(), 1u);
}

// A jobs file applied: the store says which jobs it changed and which it stopped, once written
// (PgApplyStore; apply_pgtest), and the route takes their held runs back as PUT and stop do.
class AppliedJobsFile final : public ApplyStore {
 public:
  ApplyOutcome outcome;
  ApplyOutcome apply(const std::vector<std::string>&, const std::function<ApplyPlan(const JobsSnapshot&)>&, bool dry_run,
                     const Actor&) override {
    return dry_run ? ApplyOutcome{} : outcome;
  }
  JobsSnapshot snapshot(const std::vector<std::string>&) override { return {}; }
};

class HeldRunsOfAppliedJobs : public HeldRunsApi {
 protected:
  void add_more_routes(ApiRouter& router) override {
    JobsFileRoutes routes;
    routes.store = &file_;
    routes.held.read = [this](std::int64_t job_id) { return canceller_->held(job_id); };
    routes.held.take_back = [this](std::vector<JobLog> runs, std::string reason, GivenBack then) {
      canceller_->take_back(std::move(runs), std::move(reason), then);
    };
    routes.held.take_back_many = [this](std::vector<std::int64_t> job_ids, std::string reason, GivenBack then) {
      canceller_->take_back_jobs(std::move(job_ids), std::move(reason), then);
    };
    add_jobs_file_routes(router, routes, clock_);
  }
  AppliedJobsFile file_;
};

TEST_F(HeldRunsOfAppliedJobs, AFileThatChangesOrStopsAJobTakesItsHeldRunsBack) {
  FakeExecutor executor;
  Job other = add_job(job_.job_group, "weekly report");
  auto changed = put_log(FireState::kTriggered, clock_.now_ms() + 790, executor.url());
  auto stopped = put_log(FireState::kTriggered, clock_.now_ms() + 790, executor.url(), TriggerType::kSchedule, other);
  executor.answer_lead_cancel(given_back({changed.id, stopped.id}));
  file_.outcome.changed_jobs = {job_.id};
  file_.outcome.stopped_jobs = {other.id};

  // A dry run changes nothing, so nothing is asked.
  ASSERT_EQ(post("apply?dryRun=true", json{{"groups", json::array()}}).status, 200);
  canceller_->wait_idle();
  EXPECT_TRUE(executor.calls().empty());

  auto applied = post("apply", json{{"groups", json::array()}});
  ASSERT_EQ(applied.status, 200) << applied.text;
  canceller_->wait_idle();
  auto calls = executor.calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].body, json({{"logIds", {changed.id}}, {"reason", "job changed by admin"}}));
  EXPECT_EQ(calls[1].body, json({{"logIds", {stopped.id}}, {"reason", "job stopped by admin"}}));
  EXPECT_EQ(stores_.logs.get(changed.id)->state, FireState::kPending) << "sent again as the job is now";
  EXPECT_EQ(stores_.logs.get(stopped.id)->state, FireState::kCancelled);
}

// A job the file prunes goes with its runs; those its executors held (read by the store just
// before the deletion) are asked back, for the executors to drop them.
TEST_F(HeldRunsOfAppliedJobs, AFileThatPrunesAJobHasItsHeldRunsDropped) {
  FakeExecutor executor;
  JobLog gone;
  gone.id = 4242;
  gone.job_id = 77;
  gone.job_group = job_.job_group;
  gone.state = FireState::kTriggered;
  gone.executor_address = executor.url();
  file_.outcome.deleted_held_runs = {gone};
  executor.answer_lead_cancel(given_back({gone.id}));
  auto applied = post("apply?prune=true", json{{"groups", json::array()}});
  ASSERT_EQ(applied.status, 200) << applied.text;
  expect_asked_once(executor, {gone.id}, "job deleted by admin");
  EXPECT_EQ(canceller_->counters().cancelled, 1u);
  EXPECT_EQ(canceller_->counters().ended + canceller_->counters().sent_again, 0u) << "nothing left to write";
}

TEST_F(HeldRunsApi, PausingAGroupCancelsTheDecidedFiresOfEachJobItStops) {
  FakeExecutor executor;
  ASSERT_EQ(post("jobs/" + std::to_string(job_.id) + "/start").status, 200);
  auto pending = put_log(FireState::kPending, clock_.now_ms() + 2'000);
  auto held = put_log(FireState::kTriggered, clock_.now_ms() + 790, executor.url());
  executor.answer_lead_cancel(given_back({held.id}));
  auto paused = post("groups/" + std::to_string(job_.job_group) + "/pause");
  ASSERT_EQ(paused.status, 200) << paused.text;
  canceller_->wait_idle();
  auto calls = executor.calls();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].body, json({{"logIds", {held.id}}, {"reason", "group paused by admin"}}));
  EXPECT_EQ(stores_.logs.get(held.id)->state, FireState::kCancelled);
  EXPECT_EQ(stores_.logs.get(pending.id)->state, FireState::kCancelled);
  EXPECT_EQ(stores_.logs.get(pending.id)->trigger_msg, "Cancelled: group paused by admin before its instant");
}

TEST_F(HeldRunsApi, DeletingAJobAsksItsHeldRunsBackFromTheirExecutors) {
  FakeExecutor executor;
  auto held = put_log(FireState::kTriggered, clock_.now_ms() + 790, executor.url());
  executor.answer_lead_cancel(given_back({held.id}));
  ASSERT_EQ(del("jobs/" + std::to_string(job_.id)).status, 204);
  canceller_->wait_idle();
  auto calls = executor.calls();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].body, json({{"logIds", {held.id}}, {"reason", "job deleted by admin"}}));
  EXPECT_FALSE(stores_.logs.get(held.id).has_value()) << "gone with its job";
}

// A run on its way to its executor when its job is deleted: asked for again (its row is gone
// with the job, so it is not read again) until the executor, holding it now, drops it.
TEST_F(HeldRunsApi, DeletingAJobDropsARunOnItsWayToItsExecutor) {
  FakeExecutor executor;
  auto on_its_way = put_log(FireState::kSending, clock_.now_ms() + 3'000, executor.url());
  executor.answer_lead_cancel_in_turn({unknown({on_its_way.id}), unknown({on_its_way.id}), given_back({on_its_way.id})});
  ASSERT_EQ(del("jobs/" + std::to_string(job_.id)).status, 204);
  canceller_->wait_idle();
  auto calls = executor.calls();
  ASSERT_EQ(calls.size(), 3u);
  for (const auto& call : calls) {
    EXPECT_EQ(call.body, json({{"logIds", {on_its_way.id}}, {"reason", "job deleted by admin"}}));
  }
  EXPECT_EQ(canceller_->counters().cancelled, 1u);
  EXPECT_EQ(canceller_->counters().rechecked, 2u);
}

TEST_F(LogsApi, KillWithTheExecutorUnreachableEndsTheRunAtOnceWithoutARetry) {
  const std::string gone = "http://127.0.0.1:1/";  // nothing listens: connection refused
  JobLog running;
  running.job_group = job_.job_group;
  running.job_id = job_.id;
  running.state = FireState::kTriggered;
  running.scheduled_time = 1'000;
  running.trigger_time = 1'010;
  running.admin_node = "node-under-test";
  running.executor_address = gone;
  running.executor_fail_retry_count = 2;
  running = fake_.put_log(running);
  auto r = post(path(running, "/kill"));
  ASSERT_EQ(r.status, 204) << r.text;
  auto row = *stores_.logs.get(running.id);
  EXPECT_EQ(row.state, FireState::kFailed);
  EXPECT_NE(row.handle_msg.find("killed by admin; executor " + gone + " could not be told ("), std::string::npos)
      << row.handle_msg;
  EXPECT_NE(row.handle_msg.find("the run may still be going on there"), std::string::npos) << row.handle_msg;
  LogStore::Filter all;
  all.job_id = job_.id;
  EXPECT_EQ(stores_.logs.list(all).total, 1) << "a killed run is not retried";
  // Killing it again finds it ended.
  EXPECT_EQ(post(path(running, "/kill")).status, 409);
}

TEST_F(LogsApi, AFinishedRunsLogEndsWhenNoNewLinesCome) {
  FakeExecutor executor;
  // An XXL-JOB executor may say isEnd false for a finished run's log forever.
  executor.answer({{"code", 200},
                   {"msg", nullptr},
                   {"content", {{"fromLineNum", 3}, {"toLineNum", 2}, {"logContent", ""}, {"isEnd", false}}}});
  auto done = put_log(FireState::kSucceeded, 1'000, executor.url());
  auto r = get(path(done, "/content?fromLine=3"));
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body["isEnd"], true);
  // A running run's log goes on as the executor says.
  auto running = put_log(FireState::kTriggered, 2'000, executor.url());
  EXPECT_EQ(get(path(running, "/content?fromLine=3")).body["isEnd"], false);
  // New lines of a finished run are still read to their end first.
  executor.answer({{"code", 200},
                   {"msg", nullptr},
                   {"content", {{"fromLineNum", 3}, {"toLineNum", 4}, {"logContent", "a\nb\n"}, {"isEnd", false}}}});
  EXPECT_EQ(get(path(done, "/content?fromLine=3")).body["isEnd"], false);
}

TEST_F(LogsApi, KillOfARunThatIsNotRunningIsAConflict) {
  auto done = put_log(FireState::kSucceeded, 1'000, "http://10.0.0.5:9999/");
  auto r = post(path(done, "/kill"));
  EXPECT_EQ(r.status, 409);
  EXPECT_EQ(r.message(), "run " + std::to_string(done.id) + " is not running (state succeeded)");
  EXPECT_EQ(post(path(put_log(FireState::kPending, 2'000), "/kill")).status, 409);
}

TEST_F(LogsApi, KillRefusedByTheExecutorIs502) {
  FakeExecutor executor;
  executor.answer({{"code", 500}, {"msg", "job thread is not running"}, {"content", nullptr}});
  auto log = put_log(FireState::kTriggered, 1'000, executor.url());
  auto r = post(path(log, "/kill"));
  EXPECT_EQ(r.status, 502);
  EXPECT_EQ(r.message(), "executor " + executor.url() + " did not kill the run: job thread is not running");
}

TEST_F(LogsApi, ClearByCountKeepsTheNewest) {
  for (int i = 1; i <= 5; ++i) put_log(FireState::kSucceeded, i * 1'000);
  put_log(FireState::kTriggered, 9'000, "http://10.0.0.5:9999/");
  auto r = post("logs/clear", {{"jobId", job_.id}, {"keep", 2}});
  ASSERT_EQ(r.status, 200) << r.text;
  // The running one counts among the newest but is never deleted.
  EXPECT_EQ(r.body, json({{"deleted", 4}}));
  EXPECT_EQ(get("logs").body["total"], 2);
  EXPECT_EQ(last_audit().action, "log.clear");
}

TEST_F(LogsApi, ClearByAge) {
  for (int i = 1; i <= 5; ++i) put_log(FireState::kFailed, i * 1'000);
  auto r = post("logs/clear", {{"jobGroup", group_.id}, {"before", 3'000}});
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body["deleted"], 2);
}

TEST_F(LogsApi, ClearNeedsExactlyOneOfBeforeAndKeep) {
  auto r = post("logs/clear", {{"jobId", job_.id}});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.field(), "before");
  r = post("logs/clear", {{"jobId", job_.id}, {"before", 1}, {"keep", 1}});
  EXPECT_EQ(r.message(), "keep: give either before or keep, not both");
  EXPECT_EQ(post("logs/clear", {{"keep", -1}}).message(), "keep: must be 0 or more");
  EXPECT_EQ(post("logs/clear", {{"jobId", 999}, {"keep", 1}}).message(), "jobId: job 999 does not exist");
  auto other = add_group("billing");
  EXPECT_EQ(post("logs/clear", {{"jobGroup", other.id}, {"jobId", job_.id}, {"keep", 1}}).message(),
            "jobId: job " + std::to_string(job_.id) + " is not in group " + std::to_string(other.id));
  EXPECT_EQ(post("logs/clear", {{"keep", "10"}}).message(), "keep: expected an integer, got string");
}

TEST_F(LogsApi, CancelTakesBackAPendingTriggeredFire) {
  auto fire = post("jobs/" + std::to_string(job_.id) + "/trigger", {{"delaySeconds", 600}});
  ASSERT_EQ(fire.status, 201);
  const auto id = fire.body["id"].get<std::int64_t>();
  EXPECT_EQ(del("logs/" + std::to_string(id)).status, 204);
  EXPECT_EQ(get("logs/" + std::to_string(id)).body["state"], "cancelled");
  EXPECT_EQ(last_audit().action, "log.cancel");

  auto again = del("logs/" + std::to_string(id));
  EXPECT_EQ(again.status, 409);
  EXPECT_EQ(again.message(), "run " + std::to_string(id) + " has already fired; only a pending fire can be cancelled");

  auto fired = put_log(FireState::kTriggered, 1'000, "http://10.0.0.5:9999/", TriggerType::kManual);
  EXPECT_EQ(del(path(fired)).status, 409);
  auto scheduled = put_log(FireState::kPending, 2'000);
  auto r = del(path(scheduled));
  EXPECT_EQ(r.status, 409);
  EXPECT_NE(r.message().find("SCHEDULE fire"), std::string::npos) << r.message();
  EXPECT_EQ(finished_runs_.counts(), (std::vector<FinishedRuns::Count>{{group_.id, FireState::kCancelled, 1}}))
      << "one run cancelled, of the job's group";
}

// A FIX_DELAY job waits for its fire's end (kAwaitingCompletion); cancelling that fire ends it,
// so the job gets its next time from the cancel, and nothing else follows (no retry, no child).
TEST_F(LogsApi, CancelOfAFixDelayJobsFireGivesTheJobItsNextTime) {
  auto child = add_job(group_.id, "child");
  auto job = add_job(group_.id, "every 30 s after the last run", ScheduleType::kFixDelay, "30");
  fake_.with_state([&](auto& s) {
    Job& j = s.jobs.at(job.id);
    j.trigger_status = 1;
    j.trigger_next_time = kAwaitingCompletion;
    j.executor_fail_retry_count = 2;
    j.child_job_ids = {child.id};
  });
  auto fire = post("jobs/" + std::to_string(job.id) + "/trigger", {{"delaySeconds", 600}});
  ASSERT_EQ(fire.status, 201);
  clock_.set_wall_ms(kStartMs + 5'000);
  EXPECT_EQ(del("logs/" + std::to_string(fire.body["id"].get<std::int64_t>())).status, 204);
  EXPECT_EQ(stores_.jobs.get(job.id)->trigger_next_time, kStartMs + 5'000 + 30'000);
  EXPECT_EQ(stores_.logs.list({}).total, 1);  // no retry, no child fire
}

TEST_F(LogsApi, NormalUserSeesOnlyTheirGroupsLogs) {
  auto other_group = add_group("billing");
  auto other_job = add_job(other_group.id, "invoices");
  add_user("alice", "normal", {group_.id});
  auto mine = put_log(FireState::kSucceeded, 1'000, "http://10.0.0.5:9999/");
  auto hidden = put_log(FireState::kTriggered, 2'000, "http://10.0.0.6:9999/", TriggerType::kSchedule, other_job);

  auto list = get("logs", "alice");
  ASSERT_EQ(list.status, 200);
  EXPECT_EQ(list.body["total"], 1);
  EXPECT_EQ(list.body["items"][0]["id"], mine.id);
  EXPECT_EQ(get("logs?jobGroup=" + std::to_string(other_group.id), "alice").body["total"], 0);
  EXPECT_EQ(get(path(mine), "alice").status, 200);
  EXPECT_EQ(get(path(hidden), "alice").status, 404);
  EXPECT_EQ(get(path(hidden, "/content"), "alice").status, 404);
  EXPECT_EQ(post(path(hidden, "/kill"), json::object(), "alice").status, 404);
  EXPECT_EQ(del(path(hidden), "alice").status, 404);

  // Clearing needs a group or job of their own.
  auto everything = post("logs/clear", {{"keep", 0}}, "alice");
  EXPECT_EQ(everything.status, 403);
  EXPECT_EQ(post("logs/clear", {{"jobGroup", other_group.id}, {"keep", 0}}, "alice").message(),
            "jobGroup: group " + std::to_string(other_group.id) + " does not exist");
  EXPECT_EQ(post("logs/clear", {{"jobGroup", group_.id}, {"keep", 0}}, "alice").body["deleted"], 1);
  EXPECT_TRUE(stores_.logs.get(hidden.id).has_value());
}

}  // namespace
}  // namespace cronwheel::admin
