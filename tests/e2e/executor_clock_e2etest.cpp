// The clock offset between a real cronwheel-executor and a real admin on one host, end to end:
// measured by the executor from its registrations, sent with the next one, shown by the API and
// exported in /metrics, and gone from /metrics once the executor has left.

#include <signal.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/http/http_client.h"
#include "tests/support/eventually.h"
#include "tests/support/executor_group_e2e.h"

namespace cronwheel {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

class ExecutorClockE2e : public testing::ExecutorGroupE2e {
 protected:
  ExecutorClockE2e()
      : ExecutorGroupE2e({.node_id = "clock-e2e",
                          .access_token = "clock-e2e-token",
                          .app_name = "clock-e2e",
                          .group_title = "Clock",
                          // A registration a second, so the second (the first to carry an
                          // estimate) comes a second after the first.
                          .executor_args = {"--registry-interval-seconds", "1"},
                          .bound = 20s}) {}

  json executors() {
    auto r = admin_->get("groups/" + std::to_string(group_) + "/executors", who_);
    EXPECT_EQ(r.status, 200) << r.text;
    return r.body.value("items", json::array());
  }

  std::string metrics() {
    common::http::HttpClient client(admin_->url());
    auto r = client.get("metrics");
    EXPECT_EQ(r.status, 200) << r.error << r.body;
    return r.body;
  }
};

TEST_F(ExecutorClockE2e, AnExecutorsClockOffsetIsShownAndExportedWhileItIsRegistered) {
  ASSERT_EQ(executors().size(), 1u);
  const std::string address = executors()[0]["address"];
  ASSERT_TRUE(testing::eventually([&] { return !executors()[0]["clockOffsetMs"].is_null(); }, 10s))
      << executors().dump();
  const json executor = executors()[0];
  // One host, one clock: what is left is the measuring's own error, within half the round trip.
  EXPECT_LT(std::llabs(executor["clockOffsetMs"].get<std::int64_t>()), 500) << executor.dump();
  EXPECT_GE(executor["clockDelayMs"].get<std::int64_t>(), 0) << executor.dump();

  const std::string series =
      R"(cronwheel_executor_clock_offset_seconds{app="clock-e2e",address=")" + address + R"("} )";
  ASSERT_TRUE(testing::eventually([&] { return metrics().find(series) != std::string::npos; }, 10s)) << metrics();

  // Its removal at shutdown takes its series out at the next refresh of the registry.
  executor_->signal(SIGTERM);
  ASSERT_GE(executor_->wait_for_exit(20s), 0);
  EXPECT_TRUE(testing::eventually([&] { return metrics().find(series) == std::string::npos; }, 10s)) << metrics();
}

}  // namespace
}  // namespace cronwheel
