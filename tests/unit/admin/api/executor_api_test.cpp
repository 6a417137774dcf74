// The executor-facing endpoints over a real HTTP server on 127.0.0.1, with the fake stores:
// XXL-JOB 2.4 bodies and answers, the access token, context paths, malformed bodies.

#include <gtest/gtest.h>

#include <mutex>
#include <optional>
#include <stop_token>

#include <atomic>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "admin/api/executor_api.h"
#include "admin/model/store_errors.h"
#include "common/http/http_client.h"
#include "common/http/http_server.h"
#include "tests/unit/admin/complete/completion_fixture.h"

namespace cronwheel::admin {
namespace {

using nlohmann::json;

constexpr const char* kToken = "s3cret-token";

// A wall clock that moves 7 ms at each reading, from 1000: the first reading an answer holds
// is 1000, the next 1007, so a test tells "received" from "sent".
class SteppingClock final : public common::Clock {
 public:
  std::int64_t now_ms() const override { return 1000 + 7 * readings_++; }
  SteadyTime steady_now() const override { return SteadyTime{}; }
  bool sleep_until(SteadyTime, std::stop_token) override { return false; }
  void restart() { readings_ = 0; }

 private:
  mutable std::atomic<std::int64_t> readings_{0};
};

class ExecutorRoutesTest : public CompletionFixture {
 protected:
  ExecutorRoutesTest() {
    common::http::HttpServerOptions o;
    o.host = "127.0.0.1";
    o.port = 0;
    o.worker_threads = 4;
    o.name = "admin-test";
    server_ = std::make_unique<common::http::HttpServer>(o);
    ExecutorRouteOptions routes;
    routes.registrations_changed = [this] { ++registrations_changed_; };
    routes.registered = [this](const std::string& address) {
      std::lock_guard lock(mutex_);
      registered_.push_back(address);
    };
    routes.refused_full = [this](const std::string&) { ++refused_full_; };
    routes.max_executors_per_group = kMaxExecutors;
    routes.clock = &answer_clock_;
    add_executor_routes(*server_, registry_, completion_, tokens_, routes);
    server_->start();
  }
  ~ExecutorRoutesTest() override { server_->stop(); }

  // Gives the test's group a token of its own ("group-a-token") and adds a group "other-app"
  // without one; answers the new group's id.
  std::int64_t give_the_group_its_token_beside_another() {
    auto group = stores_.groups().get(group_).value();
    group.access_token = "group-a-token";
    stores_.groups().update(group, system_);
    Group other;
    other.app_name = "other-app";
    other.title = "Other";
    return stores_.groups().create(other, system_).id;
  }

  struct Reply {
    int status = 0;
    json body;
    std::optional<std::string> clock_header;  // protocol::kClockHeader
  };

  Reply post(const std::string& path, const std::string& body, const std::string& token = kToken) {
    common::http::HttpClientOptions o;
    o.access_token = token;
    common::http::HttpClient client("http://127.0.0.1:" + std::to_string(server_->port()) + "/", o);
    auto r = client.post_json(path, body);
    EXPECT_EQ(r.transport_error, common::http::TransportError::kNone) << r.error;
    return {r.status, json::parse(r.body, nullptr, false), r.header("X-Cronwheel-Clock")};
  }

  static json registration(const std::string& value = kExecutor, const std::string& app = "demo-app") {
    return {{"registryGroup", "EXECUTOR"}, {"registryKey", app}, {"registryValue", value}};
  }

  static json ok() { return {{"code", 200}, {"msg", nullptr}, {"content", nullptr}}; }
  static json fail(const std::string& msg) { return {{"code", 500}, {"msg", msg}, {"content", nullptr}}; }

  static constexpr std::size_t kMaxExecutors = 3;
  std::atomic<int> registrations_changed_{0};
  std::atomic<int> refused_full_{0};
  std::mutex mutex_;
  std::vector<std::string> registered_;
  ExecutorTokens tokens_{stores_.groups(), stores_.logs(), kToken};
  SteppingClock answer_clock_;
  std::unique_ptr<common::http::HttpServer> server_;
};

TEST_F(ExecutorRoutesTest, RegistryRecordsTheExecutor) {
  auto r = post("/api/registry", registration().dump());

  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, ok());
  EXPECT_EQ(registry_.live_addresses("demo-app", 90'000), (std::vector<std::string>{kExecutor}));
}

TEST_F(ExecutorRoutesTest, ARegistrationsAnswerSaysWhenTheAdminReceivedAndAnsweredIt) {
  answer_clock_.restart();
  auto r = post("/api/registry", registration().dump());
  EXPECT_EQ(r.body, ok());
  EXPECT_EQ(r.clock_header, "1000,1007") << "the first reading when the handler began, the last as it answered";

  // A refused registration was still an exchange with this admin's clock.
  answer_clock_.restart();
  auto refused = post("/api/registry", registration().dump(), "wrong");
  EXPECT_EQ(refused.body, fail("The access token is wrong."));
  EXPECT_EQ(refused.clock_header, "1000,1007");

  // Under a context path too; the other endpoints carry no clock.
  EXPECT_TRUE(post("/xxl-job-admin/api/registry", registration().dump()).clock_header.has_value());
  EXPECT_EQ(post("/api/registryRemove", registration().dump()).clock_header, std::nullopt);
  EXPECT_EQ(post("/api/callback", "[]").clock_header, std::nullopt);
}

TEST_F(ExecutorRoutesTest, ARegistrationKeepsTheClockEstimateItSaysWithinADay) {
  auto with_clock = registration();
  with_clock["clockOffsetMs"] = -2'500;
  with_clock["clockDelayMs"] = 8;
  EXPECT_EQ(post("/api/registry", with_clock.dump()).body, ok());
  ASSERT_EQ(registry_.live(90'000).size(), 1u);
  EXPECT_EQ(registry_.live(90'000)[0].clock, (ClockEstimate{-2'500, 8}));

  auto hostile = registration();
  hostile["clockOffsetMs"] = 9'000'000'000'000;
  hostile["clockDelayMs"] = 8;
  EXPECT_EQ(post("/api/registry", hostile.dump()).body,
            fail("invalid request body: clockOffsetMs: must be between -86400000 and 86400000 (a day, in ms)"));
  EXPECT_EQ(registry_.live(90'000)[0].clock, (ClockEstimate{-2'500, 8})) << "nothing written";

  EXPECT_EQ(post("/api/registry", registration().dump()).body, ok()) << "as XXL-JOB's executors register";
  EXPECT_EQ(registry_.live(90'000)[0].clock, std::nullopt);
}

TEST_F(ExecutorRoutesTest, RegistryRemoveDeletesTheRegistration) {
  post("/api/registry", registration().dump());

  auto r = post("/api/registryRemove", registration().dump());

  EXPECT_EQ(r.body, ok());
  EXPECT_TRUE(registry_.live_addresses("demo-app", 90'000).empty());
  EXPECT_EQ(post("/api/registryRemove", registration().dump()).body, ok()) << "removing twice is fine";
}

TEST_F(ExecutorRoutesTest, NewRegistrationsAndRemovalsAreAnnouncedButHeartbeatsAreNot) {
  post("/api/registry", registration().dump());
  EXPECT_EQ(registrations_changed_, 1) << "a new executor: its group's list should be refreshed now";
  post("/api/registry", registration().dump());
  post("/api/registry", registration().dump());
  EXPECT_EQ(registrations_changed_, 1) << "heartbeats of a known executor change no list";
  post("/api/registry", registration("http://10.0.0.9:9999/").dump());
  EXPECT_EQ(registrations_changed_, 2);
  post("/api/registryRemove", registration().dump());
  EXPECT_EQ(registrations_changed_, 3);
  post("/api/registryRemove", registration().dump());
  EXPECT_EQ(registrations_changed_, 3) << "removing what is not there changes nothing";
  post("/api/registry", registration("not a url").dump());
  EXPECT_EQ(registrations_changed_, 3);
}

TEST_F(ExecutorRoutesTest, AGroupTakesAtMostItsCapOfExecutorsAndKeepsRenewingThem) {
  for (int i = 1; i <= 3; ++i) {
    EXPECT_EQ(post("/api/registry", registration("http://10.0.0." + std::to_string(i) + ":9999/").dump()).body, ok());
  }
  auto refused = post("/api/registry", registration("http://10.0.0.4:9999/").dump());
  EXPECT_EQ(refused.status, 200);
  EXPECT_EQ(refused.body["code"], 500);
  EXPECT_EQ(refused.body["msg"], "demo-app has 3 executors registered, the most a group takes; "
                                 "http://10.0.0.4:9999/ is not registered");
  EXPECT_EQ(refused_full_, 1);
  EXPECT_EQ(registry_.live_addresses("demo-app", 90'000).size(), 3u);
  // Those it has renew as ever; another group is not held back by this one's cap.
  EXPECT_EQ(post("/api/registry", registration("http://10.0.0.2:9999/").dump()).body, ok());
  EXPECT_EQ(post("/api/registry", registration("http://10.0.0.4:9999/", "other-app").dump()).body, ok());
  // A dead registration leaves room.
  clock_.advance(std::chrono::seconds(91));
  EXPECT_EQ(post("/api/registry", registration("http://10.0.0.4:9999/").dump()).body, ok());
  std::lock_guard lock(mutex_);
  EXPECT_EQ(registered_.size(), 6u) << "every registration taken is announced, renewals too";
}

TEST_F(ExecutorRoutesTest, ARegistrationKeepsTheHandlersItSaysAndRefusesNamesThatCannotBeOnes) {
  auto with = registration();
  with["handlers"] = {"echo", "reportHandler"};
  EXPECT_EQ(post("/api/registry", with.dump()).body, ok());
  auto live = registry_.live(90'000);
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live[0].handlers, (std::vector<std::string>{"echo", "reportHandler"}));
  with["handlers"] = {"echo", "bad\nname"};
  EXPECT_EQ(post("/api/registry", with.dump()).body, fail("handlers[1]: must not contain control characters"));
  with["handlers"] = {std::string(256, 'h')};
  EXPECT_EQ(post("/api/registry", with.dump()).body, fail("handlers[0]: at most 255 characters"));
}

TEST_F(ExecutorRoutesTest, EndpointsAnswerUnderAContextPath) {
  EXPECT_EQ(post("/xxl-job-admin/api/registry", registration().dump()).body, ok());
  EXPECT_EQ(registry_.live_addresses("demo-app", 90'000).size(), 1u);
  EXPECT_EQ(post("/ops/xxl-job-admin/api/registryRemove", registration().dump()).body, ok());
  EXPECT_TRUE(registry_.live_addresses("demo-app", 90'000).empty());
  EXPECT_EQ(post("/xxl-job-admin/api/callback", "[]").body, ok());
}

TEST_F(ExecutorRoutesTest, WrongOrMissingTokenIsRefusedAndNothingIsRecorded) {
  auto run = make_run(make_job("job"));
  for (const std::string& token : {std::string("wrong"), std::string()}) {
    auto r = post("/api/registry", registration().dump(), token);
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, fail("The access token is wrong.")) << token;
    json callbacks = json::array({{{"logId", run.id}, {"logDateTim", 1}, {"handleCode", 200}, {"handleMsg", ""}}});
    EXPECT_EQ(post("/api/callback", callbacks.dump(), token).body,
              fail("The access token is wrong for 1 of the 1 results."));
    EXPECT_EQ(post("/api/registryRemove", registration().dump(), token).body, fail("The access token is wrong."));
  }
  EXPECT_TRUE(registry_.live(90'000).empty());
  EXPECT_EQ(log(run.id).state, FireState::kTriggered);
}

TEST_F(ExecutorRoutesTest, AGroupWithItsOwnTokenAcceptsOnlyThatToken) {
  const auto other_id = give_the_group_its_token_beside_another();

  // Registrations: the group's own token for its appName; the admin's for a group without one.
  EXPECT_EQ(post("/api/registry", registration().dump(), kToken).body, fail("The access token is wrong."));
  EXPECT_TRUE(registry_.live(90'000).empty());
  EXPECT_EQ(post("/api/registry", registration().dump(), "group-a-token").body, ok());
  EXPECT_EQ(post("/api/registry", registration(kExecutor, "other-app").dump(), "group-a-token").body,
            fail("The access token is wrong."));
  EXPECT_EQ(post("/api/registry", registration(kExecutor, "no-group-yet").dump(), "group-a-token").body,
            fail("The access token is wrong."));
  EXPECT_EQ(post("/api/registry", registration(kExecutor, "other-app").dump(), kToken).body, ok());
  EXPECT_EQ(post("/api/registryRemove", registration().dump(), kToken).body, fail("The access token is wrong."));
  EXPECT_EQ(registry_.live_addresses("demo-app", 90'000).size(), 1u);

  // Results: a batch of both groups' runs under group A's token records A's run only.
  auto mine = make_run(make_job("mine"));
  Job foreign_job = make_job("theirs");
  foreign_job.job_group = other_id;
  foreign_job = update(foreign_job);
  auto theirs = make_run(foreign_job);
  json both = json::array({{{"logId", mine.id}, {"handleCode", 200}}, {{"logId", theirs.id}, {"handleCode", 200}}});
  EXPECT_EQ(post("/api/callback", both.dump(), "group-a-token").body,
            fail("The access token is wrong for 1 of the 2 results."));
  EXPECT_EQ(log(mine.id).state, FireState::kSucceeded);
  EXPECT_EQ(log(theirs.id).state, FireState::kTriggered);
  // The admin's token does not speak for group A either.
  auto another = make_run(make_job("mine-again"));
  json one = json::array({{{"logId", another.id}, {"handleCode", 200}}});
  EXPECT_EQ(post("/api/callback", one.dump(), kToken).body, fail("The access token is wrong for 1 of the 1 results."));
  EXPECT_EQ(log(another.id).state, FireState::kTriggered);
}

TEST_F(ExecutorRoutesTest, AGroupsExecutorsAreCalledWithTheTokenTheyAccept) {
  const auto other_id = give_the_group_its_token_beside_another();
  EXPECT_EQ(tokens_.for_group_id(group_), "group-a-token");
  EXPECT_EQ(tokens_.for_group_id(other_id), kToken) << "no token of its own: the admin's";
  EXPECT_EQ(tokens_.for_group_id(987'654), kToken) << "no such group";
}

// The one rule every caller of a group's executors uses (the trigger, the takeover, the log and
// kill routes, ExecutorTokens): the group's own token, else the admin's.
TEST(ExecutorToken, IsTheGroupsOwnElseTheAdmins) {
  EXPECT_EQ(executor_token(std::string("group-token"), "admin-token"), "group-token");
  EXPECT_EQ(executor_token(std::nullopt, "admin-token"), "admin-token");
  EXPECT_EQ(executor_token(std::string(), "admin-token"), "admin-token") << "an empty token is none";
  EXPECT_EQ(executor_token(std::nullopt, ""), "") << "neither: none";
}

TEST_F(ExecutorRoutesTest, NoTokenConfiguredAcceptsEveryCaller) {
  common::http::HttpServerOptions o;
  o.host = "127.0.0.1";
  common::http::HttpServer open(o);
  ExecutorTokens none(stores_.groups(), stores_.logs(), "");
  add_executor_routes(open, registry_, completion_, none);
  open.start();
  common::http::HttpClient client("http://127.0.0.1:" + std::to_string(open.port()) + "/");

  auto r = client.post_json("api/registry", registration().dump());

  EXPECT_EQ(json::parse(r.body), ok());
  open.stop();
}

TEST_F(ExecutorRoutesTest, MalformedBodiesAreReturnT500NamingTheProblem) {
  auto bad_type = post("/api/registry", R"({"registryGroup":"EXECUTOR","registryKey":5,"registryValue":"http://h/"})");
  EXPECT_EQ(bad_type.status, 200);
  EXPECT_EQ(bad_type.body["code"], 500);
  EXPECT_NE(bad_type.body["msg"].get<std::string>().find("registryKey"), std::string::npos) << bad_type.body;

  auto not_json = post("/api/callback", "{not json");
  EXPECT_EQ(not_json.body["code"], 500);
  EXPECT_NE(not_json.body["msg"].get<std::string>().find("invalid request body"), std::string::npos);

  auto bad_element = post("/api/callback", R"({"callbackList":[{"logId":"x"}]})");
  EXPECT_EQ(bad_element.body["code"], 500);
  EXPECT_NE(bad_element.body["msg"].get<std::string>().find("callbackList[0].logId"), std::string::npos)
      << bad_element.body;

  EXPECT_EQ(post("/api/registry", "").body["code"], 500);
  // The admin keeps serving.
  EXPECT_EQ(post("/api/registry", registration().dump()).body, ok());
}

TEST_F(ExecutorRoutesTest, RegistrationsTheStoreCannotHoldAreRefusedByField) {
  auto msg = [&](json body) { return post("/api/registry", body.dump()).body.value("msg", ""); };
  EXPECT_EQ(msg(registration("http://h/", "")), "registryKey: must not be empty");
  EXPECT_EQ(msg(registration("")), "registryValue: must not be empty");
  EXPECT_EQ(msg(registration("10.0.0.1:9999")), "registryValue: not an http:// or https:// URL");
  EXPECT_EQ(msg(registration("http://h:99999/")), "registryValue: the port must be 1-65535");
  EXPECT_EQ(msg(registration("http://h/", std::string(256, 'a'))), "registryKey: at most 255 characters");
  EXPECT_EQ(msg(registration("http://h/", std::string("a\0b", 3))), "registryKey: must not contain control characters");
  // A line break would forge lines in the admin's log.
  EXPECT_EQ(msg(registration("http://h/", "app\n[error] forged")), "registryKey: must not contain control characters");
  auto other = registration();
  other["registryGroup"] = "WORKER";
  EXPECT_EQ(msg(other), "registryGroup: must be EXECUTOR or ADMIN");
  EXPECT_TRUE(registry_.live(90'000).empty());
  // 255 characters, not bytes: a name of 255 two-byte characters fits.
  std::string wide;
  for (int i = 0; i < 255; ++i) wide += "\xC3\xA9";
  EXPECT_EQ(post("/api/registry", registration("http://h/", wide).dump()).body, ok());
}

TEST_F(ExecutorRoutesTest, CallbackAsABareArrayRecordsEveryResult) {
  auto job = make_job("job");
  auto a = make_run(job);
  auto b = make_run(job);
  json body = json::array({{{"logId", a.id}, {"logDateTim", 1}, {"handleCode", 200}, {"handleMsg", "ok"}},
                           {{"logId", b.id}, {"logDateTime", 1}, {"handleCode", 500}, {"handleMsg", "bad"}}});

  EXPECT_EQ(post("/api/callback", body.dump()).body, ok());

  EXPECT_EQ(log(a.id).state, FireState::kSucceeded);
  EXPECT_EQ(log(a.id).handle_msg, "ok");
  EXPECT_EQ(log(b.id).state, FireState::kFailed);
  EXPECT_EQ(log(b.id).handle_code, 500);
}

TEST_F(ExecutorRoutesTest, CallbackListFormOfXxlJob35IsAccepted) {
  auto run = make_run(make_job("job"));
  json body = {{"callbackList", json::array({{{"logId", run.id}, {"logDateTim", 1}, {"handleCode", 502}}})}};

  EXPECT_EQ(post("/api/callback", body.dump()).body, ok());

  EXPECT_EQ(log(run.id).state, FireState::kFailed);
  EXPECT_EQ(log(run.id).handle_code, 502);
}

TEST_F(ExecutorRoutesTest, RepeatedAndUnknownCallbacksAreAnsweredSuccessAndChangeNothing) {
  auto run = make_run(make_job("job"));
  json first = json::array({{{"logId", run.id}, {"handleCode", 200}, {"handleMsg", "first"}}});
  json again = json::array({{{"logId", run.id}, {"handleCode", 500}, {"handleMsg", "again"}},
                            {{"logId", 987654}, {"handleCode", 200}}});
  post("/api/callback", first.dump());
  const auto recorded = log(run.id);

  EXPECT_EQ(post("/api/callback", again.dump()).body, ok());

  EXPECT_EQ(log(run.id), recorded);
  EXPECT_EQ(completion_.counters().duplicates, 1);
  EXPECT_EQ(completion_.counters().unknown, 1);
}

// Completion over a store whose database is down.
class UnavailableCompletionStore final : public CompletionStore {
 public:
  Recorded record(const RunResult&, const Decide&) override { throw StoreUnavailable("database connection lost"); }
  std::vector<Recorded> record_all(const std::vector<RunResult>&, const Decide&) override {
    throw StoreUnavailable("database connection lost");
  }
  bool return_not_started(std::int64_t, const std::string&, const std::string&) override {
    throw StoreUnavailable("database connection lost");
  }
  bool cancel_not_started(std::int64_t, const std::string&) override { throw StoreUnavailable("database connection lost"); }
  std::vector<JobLog> held_runs(std::int64_t, std::int64_t, int) override { return {}; }
  std::vector<JobLog> lost_candidates(std::int64_t, std::int64_t, int) override { return {}; }
  std::vector<JobLog> triggered_runs(std::int64_t, const std::optional<RunCursor>&, int) override { return {}; }
};

TEST_F(ExecutorRoutesTest, CallbackWhileTheDatabaseIsDownAsksTheExecutorToSendAgain) {
  UnavailableCompletionStore down;
  Completion completion(down, clock_, Completion::Options{"n", {}});
  common::http::HttpServerOptions o;
  o.host = "127.0.0.1";
  common::http::HttpServer server(o);
  ExecutorTokens none(stores_.groups(), stores_.logs(), "");
  add_executor_routes(server, registry_, completion, none);
  server.start();
  common::http::HttpClient client("http://127.0.0.1:" + std::to_string(server.port()) + "/");

  auto r = client.post_json("api/callback", R"([{"logId":1,"handleCode":200}])");

  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(json::parse(r.body), fail("the database is unavailable; try again shortly"));
  server.stop();
}

}  // namespace
}  // namespace cronwheel::admin
