// The executors' side of a real cronwheel-admin on a fresh PostgreSQL database: the real
// cronwheel-executor registers (and its automatic group lists it), results are called back in
// XXL-JOB 2.4's and 3.5's forms and counted once, and the access token is enforced.

#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "admin/pg/pg_store_support.h"
#include "common/http/http_client.h"
#include "tests/support/admin_process.h"
#include "tests/support/eventually.h"
#include "tests/support/process.h"
#include "tests/support/test_database.h"
#include "tests/support/wall_time.h"

namespace cronwheel {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using nlohmann::json;
using testing::AdminProcess;
using testing::ApiCredentials;
using testing::Process;
using testing::eventually;
using testing::TestDatabase;

// Long enough for a loaded 2-core machine; a test that needs it is failing anyway.
constexpr auto kBound = 30s;
constexpr const char* kToken = "e2e-shared-token";
constexpr const char* kAppName = "e2e-executors";

using testing::now_ms;

class AdminExecutorE2e : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    dir_ = fs::temp_directory_path() /
           ("cronwheel-admin-executor-e2e-" + std::to_string(::getpid()) + "-" + std::to_string(++counter));
    fs::remove_all(dir_);
    fs::create_directories(dir_);

    AdminProcess::Options options;
    options.db_url = db_.url();
    options.args = {"--node-id", "e2e-node", "--access-token", kToken, "--registry-refresh-ms", "200"};
    options.require_answers = true;
    admin_ = std::make_unique<AdminProcess>(options);
    ASSERT_GT(admin_->wait_until_listening(), 0) << admin_->process().out() << admin_->process().err();
    who_ = admin_->login();

    auto group = admin_->post("groups", who_, {{"appName", kAppName}, {"title", "E2E executors"}, {"addressType", 0}});
    ASSERT_EQ(group.status, 201) << group.text;
    group_id_ = group.body["id"].get<std::int64_t>();
  }

  void TearDown() override {
    if (executor_) {
      executor_->signal(SIGTERM);
      executor_->wait_for_exit(kBound);
      executor_.reset();
    }
    if (admin_) {
      EXPECT_EQ(admin_->stop(), 0) << admin_->process().out() << admin_->process().err();
    }
    fs::remove_all(dir_);
  }

  // Starts cronwheel-executor against the admin and returns the address it advertises.
  std::string start_executor(const std::string& token) {
    executor_ = std::make_unique<Process>(std::vector<std::string>{
        std::string(CRONWHEEL_BIN_DIR) + "/cronwheel-executor", "--admin", admin_->url(), "--app-name", kAppName,
        "--listen", "127.0.0.1:0", "--access-token", token, "--log-dir", (dir_ / "logs").string()});
    static const std::regex listening(R"(listening on http://127\.0\.0\.1:(\d+)/)");
    int port = 0;
    eventually([&] {
      std::smatch m;
      const std::string out = executor_->out();
      if (std::regex_search(out, m, listening)) port = std::stoi(m[1]);
      return port != 0 || !executor_->running();
    });
    EXPECT_GT(port, 0) << executor_->out() << executor_->err();
    return "http://127.0.0.1:" + std::to_string(port) + "/";
  }

  std::vector<std::string> group_addresses() {
    auto group = admin_->get("groups/" + std::to_string(group_id_), who_);
    EXPECT_EQ(group.status, 200) << group.text;
    return group.body.value("addressList", std::vector<std::string>{});
  }

  // A job of the group, made through the API.
  std::int64_t make_job(const std::string& desc, std::vector<std::int64_t> children = {}) {
    auto job = admin_->post("jobs", who_,
                            {{"jobGroup", group_id_},
                             {"jobDesc", desc},
                             {"scheduleType", "NONE"},
                             {"executorHandler", "echo"},
                             {"childJobId", children}});
    EXPECT_EQ(job.status, 201) << job.text;
    return job.body.value("id", std::int64_t{0});
  }

  // A run the executor accepted, written the way the scheduling core writes it.
  std::int64_t make_triggered_run(std::int64_t job_id) {
    pqxx::connection c(db_.url());
    pqxx::work tx(c);
    auto id = tx.exec_params1("INSERT INTO job_log (job_group, job_id, state, trigger_type, scheduled_time, "
                              "admin_node, executor_address, executor_handler, trigger_time, trigger_code) "
                              "VALUES ($1, $2, 'triggered', 'MANUAL', $3, 'e2e-node', 'http://127.0.0.1:1/', "
                              "'echo', " + admin::pg::ts("$3") + ", 200) RETURNING id",
                              group_id_, job_id, now_ms())[0]
                  .as<std::int64_t>();
    tx.commit();
    return id;
  }

  json log(std::int64_t id) {
    auto r = admin_->get("logs/" + std::to_string(id), who_);
    EXPECT_EQ(r.status, 200) << r.text;
    return r.body;
  }

  // POSTs an executor-facing call; answers the ReturnT body (null when none came).
  json call(const std::string& path, const std::string& body, const std::string& token = kToken) {
    common::http::HttpClientOptions options;
    options.access_token = token;
    common::http::HttpClient client(admin_->url(), options);
    auto r = client.post_json(path, body);
    EXPECT_EQ(r.status, 200) << path << ": " << r.error << r.body;
    return json::parse(r.body, nullptr, false);
  }

  static json ok() { return {{"code", 200}, {"msg", nullptr}, {"content", nullptr}}; }

  TestDatabase db_;
  fs::path dir_;
  std::unique_ptr<AdminProcess> admin_;
  ApiCredentials who_;
  std::int64_t group_id_ = 0;
  std::unique_ptr<Process> executor_;
};

TEST_F(AdminExecutorE2e, ExecutorRegistersAndItsAutomaticGroupListsItUntilItStops) {
  const std::string address = start_executor(kToken);

  EXPECT_TRUE(eventually([&] { return group_addresses() == std::vector<std::string>{address}; }))
      << "group lists " << json(group_addresses()).dump() << "\n"
      << executor_->out() << executor_->err();

  // A clean stop removes the registration; the next refresh empties the list.
  executor_->signal(SIGTERM);
  EXPECT_EQ(executor_->wait_for_exit(kBound), 0) << executor_->out() << executor_->err();
  EXPECT_TRUE(eventually([&] { return group_addresses().empty(); })) << json(group_addresses()).dump();
}

TEST_F(AdminExecutorE2e, ExecutorWithAWrongTokenIsRefusedAndNotListed) {
  start_executor("not-the-token");

  EXPECT_TRUE(eventually([&] { return executor_->out().find("The access token is wrong.") != std::string::npos ||
                                      executor_->err().find("The access token is wrong.") != std::string::npos; }))
      << executor_->out() << executor_->err();
  pqxx::connection c(db_.url());
  pqxx::read_transaction tx(c);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM job_registry")[0].as<int>(), 0);
  EXPECT_TRUE(group_addresses().empty());
}

TEST_F(AdminExecutorE2e, CallbacksInBothFormsRecordResultsOnceAndFireChildJobs) {
  const auto child = make_job("child job");
  const auto parent = make_job("parent job", {child});
  const auto first = make_triggered_run(parent);
  const auto second = make_triggered_run(parent);

  // XXL-JOB 2.4: a bare array, logDateTim as spelled there.
  json bare = json::array({{{"logId", first}, {"logDateTim", now_ms()}, {"handleCode", 200}, {"handleMsg", "done"}}});
  EXPECT_EQ(call("api/callback", bare.dump()), ok());
  auto done = log(first);
  EXPECT_EQ(done["state"], "succeeded") << done.dump();
  EXPECT_EQ(done["handleCode"], 200);
  EXPECT_EQ(done["handleMsg"], "done");
  EXPECT_TRUE(done["handleTime"].is_number());

  // The child job got one PARENT fire.
  auto children = admin_->get("logs?jobId=" + std::to_string(child), who_);
  ASSERT_EQ(children.body["total"], 1) << children.text;
  EXPECT_EQ(children.body["items"][0]["triggerType"], "PARENT");
  EXPECT_EQ(children.body["items"][0]["parentLogId"], first);

  // Repeated (with another verdict): nothing changes, no second child fire.
  json repeated = json::array({{{"logId", first}, {"logDateTim", now_ms()}, {"handleCode", 500}, {"handleMsg", "x"}}});
  EXPECT_EQ(call("api/callback", repeated.dump()), ok());
  EXPECT_EQ(log(first), done);
  EXPECT_EQ(admin_->get("logs?jobId=" + std::to_string(child), who_).body["total"], 1);

  // XXL-JOB 3.5: {"callbackList":[...]}, under a context path; 502 is a timeout, a failure.
  json wrapped = {{"callbackList",
                   json::array({{{"logId", second}, {"logDateTime", now_ms()}, {"handleCode", 502},
                                 {"handleMsg", "job timeout"}}})}};
  EXPECT_EQ(call("xxl-job-admin/api/callback", wrapped.dump()), ok());
  auto timed_out = log(second);
  EXPECT_EQ(timed_out["state"], "failed") << timed_out.dump();
  EXPECT_EQ(timed_out["handleCode"], 502);
  EXPECT_EQ(timed_out["handleMsg"], "job timeout");
  EXPECT_EQ(admin_->get("logs?jobId=" + std::to_string(child), who_).body["total"], 1) << "no child after a failure";
}

TEST_F(AdminExecutorE2e, WrongTokenIsRefusedAndTheRunKeepsWaitingForItsResult) {
  const auto run = make_triggered_run(make_job("guarded job"));
  json body = json::array({{{"logId", run}, {"logDateTim", now_ms()}, {"handleCode", 200}, {"handleMsg", "forged"}}});

  const json refused = {{"code", 500}, {"msg", "The access token is wrong."}, {"content", nullptr}};
  const json result_refused = {{"code", 500}, {"msg", "The access token is wrong for 1 of the 1 results."}, {"content", nullptr}};
  EXPECT_EQ(call("api/callback", body.dump(), "forged-token"), result_refused);
  EXPECT_EQ(call("api/callback", body.dump(), ""), result_refused);
  EXPECT_EQ(call("api/registry",
                 json({{"registryGroup", "EXECUTOR"}, {"registryKey", kAppName}, {"registryValue", "http://evil:1/"}})
                     .dump(),
                 "forged-token"),
            refused);

  EXPECT_EQ(log(run)["state"], "triggered");
  EXPECT_TRUE(group_addresses().empty());
}

TEST_F(AdminExecutorE2e, AGroupsOwnTokenIsTheOnlyKeyToItsRegistrationsRunsAndResults) {
  auto put = admin_->put("groups/" + std::to_string(group_id_), who_,
                         {{"title", "E2E executors"}, {"accessToken", "group-only-token"}});
  ASSERT_EQ(put.status, 200) << put.text;

  // The admin's own token no longer speaks for this group.
  start_executor(kToken);
  EXPECT_TRUE(eventually([&] { return executor_->out().find("The access token is wrong.") != std::string::npos ||
                                      executor_->err().find("The access token is wrong.") != std::string::npos; }))
      << executor_->out() << executor_->err();
  EXPECT_TRUE(group_addresses().empty());
  const auto forged = make_triggered_run(make_job("forged result"));
  json body = json::array({{{"logId", forged}, {"logDateTim", now_ms()}, {"handleCode", 200}, {"handleMsg", "x"}}});
  EXPECT_EQ(call("api/callback", body.dump(), kToken)["code"], 500);
  EXPECT_EQ(log(forged)["state"], "triggered");
  executor_->signal(SIGTERM);
  EXPECT_EQ(executor_->wait_for_exit(kBound), 0);

  // An executor holding the group's token registers, gets the group's runs and reports them.
  const std::string address = start_executor("group-only-token");
  ASSERT_TRUE(eventually([&] { return group_addresses() == std::vector<std::string>{address}; }))
      << executor_->out() << executor_->err();
  const auto job = make_job("runs with the group token");
  auto fire = admin_->post("jobs/" + std::to_string(job) + "/trigger", who_, json::object());
  ASSERT_EQ(fire.status, 201) << fire.text;
  const auto run = fire.body["id"].get<std::int64_t>();
  EXPECT_TRUE(eventually([&] { return log(run)["state"] == "succeeded"; })) << log(run).dump();
}

// The sample value of `series` in the admin's /metrics text, fetched without a login; -1 when
// absent.
double metric(const std::string& admin_url, const std::string& series) {
  common::http::HttpClient client(admin_url);
  auto r = client.get("metrics");
  EXPECT_EQ(r.status, 200) << r.error << r.body;
  std::istringstream in(r.body);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  }
  return -1;
}

TEST_F(AdminExecutorE2e, MetricsCountTheFiresSentAndTheResultsTakenWithoutALogin) {
  start_executor(kToken);
  ASSERT_TRUE(eventually([&] { return group_addresses().size() == 1; }));
  EXPECT_EQ(metric(admin_->url(), "cronwheel_scheduler_running"), 1);
  const auto job = make_job("measured job");

  ASSERT_EQ(admin_->post("jobs/" + std::to_string(job) + "/trigger", who_, json::object()).status, 201);

  // A send is counted when its pool thread is done with it, which may be after the executor ran
  // the job and its result was recorded: each counter is waited for.
  ASSERT_TRUE(eventually([&] {
    return metric(admin_->url(), "cronwheel_results_total{outcome=\"recorded\"}") >= 1 &&
           metric(admin_->url(), "cronwheel_sends_total{outcome=\"triggered\"}") >= 1;
  }));
  EXPECT_EQ(metric(admin_->url(), "cronwheel_results_total{outcome=\"recorded\"}"), 1);
  EXPECT_EQ(metric(admin_->url(), "cronwheel_sends_total{outcome=\"triggered\"}"), 1);
  EXPECT_EQ(metric(admin_->url(), "cronwheel_trigger_pool_fires_total{pool=\"fast\"}"), 1);
  EXPECT_GE(metric(admin_->url(), "cronwheel_heartbeats_total"), 1);
}

TEST_F(AdminExecutorE2e, MalformedCallbackIsAnsweredAndTheAdminKeepsServing) {
  auto answer = call("api/callback", R"([{"logId":"seven","handleCode":200}])");
  EXPECT_EQ(answer["code"], 500);
  EXPECT_NE(answer.value("msg", "").find("[0].logId"), std::string::npos) << answer.dump();

  EXPECT_EQ(call("api/callback", "not json at all")["code"], 500);
  EXPECT_EQ(admin_->get("groups/" + std::to_string(group_id_), who_).status, 200);
  EXPECT_TRUE(admin_->process().running());
}

}  // namespace
}  // namespace cronwheel
