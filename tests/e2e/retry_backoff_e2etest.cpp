// Retries with exponential back-off end to end: the real cronwheel-admin on a fresh PostgreSQL
// database and a real cronwheel-executor running a script that fails. Each retry waits what the
// job's back-off gives it (2 s, then 4 s), and a retry waiting for its time is a durable pending
// run: the admin killed with SIGKILL while it waits and started again at the same address sends
// it once, at its time, and the chain goes on to its last retry, never further.

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/admin_process.h"
#include "tests/support/eventually.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_database.h"
#include "tests/support/wall_time.h"

namespace cronwheel {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::AdminProcess;
using testing::ApiCredentials;
using testing::eventually;
using testing::Process;
using testing::TempDir;
using testing::TestDatabase;

constexpr auto kRetryBound = 60s;
constexpr const char* kRetryToken = "retry-e2e-token";
constexpr const char* kRetryApp = "retry-e2e";

class RetryBackoffE2e : public ::testing::Test {
 protected:
  void SetUp() override {
    port_ = testing::free_port();
    ASSERT_GT(port_, 0);
    start_admin();
    auto group = admin_->post("groups", who_, {{"appName", kRetryApp}, {"title", "Retry jobs"}, {"addressType", 0}});
    ASSERT_EQ(group.status, 201) << group.text;
    group_ = group.body["id"].get<std::int64_t>();
    executor_ = std::make_unique<Process>(std::vector<std::string>{
        std::string(CRONWHEEL_BIN_DIR) + "/cronwheel-executor", "--admin", admin_->url(), "--app-name", kRetryApp,
        "--listen", "127.0.0.1:0", "--access-token", kRetryToken, "--log-dir", (work_.path() / "logs").string()});
    ASSERT_TRUE(eventually(
        [&] {
          auto g = admin_->get("groups/" + std::to_string(group_), who_);
          return !g.body.value("addressList", std::vector<std::string>{}).empty() || !executor_->running();
        },
        kRetryBound));
    ASSERT_TRUE(executor_->running()) << executor_->out() << executor_->err();
  }

  void TearDown() override {
    if (executor_) {
      executor_->signal(SIGTERM);
      executor_->wait_for_exit(kRetryBound);
    }
    if (admin_ && admin_->process().running()) {
      EXPECT_EQ(admin_->stop(), 0) << admin_->process().out() << admin_->process().err();
    }
  }

  // The same node, at the same address, on the same database.
  void start_admin() {
    AdminProcess::Options options;
    options.db_url = db_.url();
    options.listen = "127.0.0.1:" + std::to_string(port_);
    options.args = {"--node-id", "retry-e2e", "--access-token", kRetryToken, "--registry-refresh-ms", "200"};
    admin_ = std::make_unique<AdminProcess>(options);
    ASSERT_EQ(admin_->wait_until_listening(), port_) << admin_->process().out() << admin_->process().err();
    who_ = admin_->login();
  }

  json run(std::int64_t id) {
    auto r = admin_->get("logs/" + std::to_string(id), who_);
    EXPECT_EQ(r.status, 200) << r.text;
    return r.body;
  }

  // The run's retry once the run has failed and its retry is written.
  json retry_of(std::int64_t id) {
    json retry;
    EXPECT_TRUE(eventually(
        [&] {
          retry = run(id)["retry"];
          return !retry.is_null();
        },
        kRetryBound))
        << "run " << id << " got no retry: " << run(id).dump();
    return retry;
  }

  // The run once it has ended.
  json ended(std::int64_t id) {
    json r;
    EXPECT_TRUE(eventually(
        [&] {
          r = run(id);
          return r.value("handleCode", 0) != 0;
        },
        kRetryBound))
        << run(id).dump();
    return r;
  }

  TestDatabase db_;
  TempDir work_;
  int port_ = 0;
  std::unique_ptr<AdminProcess> admin_;
  std::unique_ptr<Process> executor_;
  ApiCredentials who_;
  std::int64_t group_ = 0;
};

TEST_F(RetryBackoffE2e, ARetryWaitsItsBackOffAndSurvivesAnAdminKilledWhileItWaits) {
  auto job = admin_->post("jobs", who_,
                          {{"jobGroup", group_},
                           {"name", "always-fails"},
                           {"jobDesc", "fails every time"},
                           {"scheduleType", "NONE"},
                           {"scheduleConf", ""},
                           {"executorHandler", ""},
                           {"glueType", "GLUE_SHELL"},
                           {"glueSource", "#!/bin/sh\nexit 3\n"},
                           {"executorFailRetryCount", 2},
                           {"retryInterval", 2},
                           {"retryBackoff", "EXPONENTIAL"},
                           {"retryMultiplier", 2}});
  ASSERT_EQ(job.status, 201) << job.text;
  const auto job_id = job.body["id"].get<std::int64_t>();
  auto fired = admin_->post("jobs/" + std::to_string(job_id) + "/trigger", who_);
  ASSERT_EQ(fired.status, 201) << fired.text;
  const auto first = fired.body["id"].get<std::int64_t>();

  // The first run fails; its retry is due 2 s after the failure was recorded.
  const json first_run = ended(first);
  EXPECT_EQ(first_run["handleCode"], 500) << first_run.dump();
  const json retry = retry_of(first);
  const auto retry_id = retry["id"].get<std::int64_t>();
  EXPECT_EQ(retry["scheduledTime"].get<std::int64_t>() - first_run["handleTime"].get<std::int64_t>(), 2'000)
      << retry.dump() << first_run.dump();

  // Killed while the retry waits, and started again.
  ASSERT_EQ(run(retry_id)["state"], "pending") << "the retry went out before the admin was killed";
  admin_->process().signal(SIGKILL);
  admin_->process().wait_for_exit(kRetryBound);
  start_admin();

  // The retry runs once, not before its time, fails, and the second waits 4 s.
  const json retried = ended(retry_id);
  EXPECT_EQ(retried["triggerType"], "RETRY");
  EXPECT_GE(retried["triggerTime"].get<std::int64_t>(), retry["scheduledTime"].get<std::int64_t>()) << retried.dump();
  const json second = retry_of(retry_id);
  EXPECT_EQ(second["scheduledTime"].get<std::int64_t>() - retried["handleTime"].get<std::int64_t>(), 4'000)
      << second.dump() << retried.dump();
  const json last = ended(second["id"].get<std::int64_t>());
  EXPECT_EQ(last["handleCode"], 500);

  // Three runs in all: the first and its two retries, each once; the last has no retry.
  auto runs = admin_->get("logs?jobId=" + std::to_string(job_id), who_);
  ASSERT_EQ(runs.status, 200) << runs.text;
  EXPECT_EQ(runs.body["total"], 3) << runs.text;
  EXPECT_TRUE(run(second["id"].get<std::int64_t>())["retry"].is_null());
}

}  // namespace
}  // namespace cronwheel
