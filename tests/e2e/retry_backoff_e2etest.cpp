// Retries with exponential back-off end to end: the real cronwheel-admin on a fresh PostgreSQL
// database and a real cronwheel-executor running a script that fails. Each retry waits what the
// job's back-off gives it (2 s, then 4 s), and a retry waiting for its time is a durable pending
// run: the admin killed with SIGKILL while it waits and started again at the same address sends
// it once, at its time, and the chain goes on to its last retry, never further.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/support/eventually.h"
#include "tests/support/executor_group_e2e.h"

namespace cronwheel {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::eventually;

constexpr auto kRetryBound = 60s;

class RetryBackoffE2e : public testing::ExecutorGroupE2e {
 protected:
  // The admin listens on a fixed port, so that after restart_admin() the same node is at the
  // same address on the same database.
  RetryBackoffE2e()
      : ExecutorGroupE2e({.node_id = "retry-e2e", .access_token = "retry-e2e-token", .app_name = "retry-e2e",
                          .group_title = "Retry jobs", .fixed_port = true, .require_answers = false,
                          .bound = kRetryBound}) {}

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
  ASSERT_NO_FATAL_FAILURE(restart_admin());

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
