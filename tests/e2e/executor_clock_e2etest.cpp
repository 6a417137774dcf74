// The clock offset between a real cronwheel-executor and a real admin on one host, end to end:
// measured by the executor from its registrations, sent with the next one, shown by the API and
// exported in /metrics, and gone from /metrics once the executor has left. And what it allows:
// lead dispatch, each second's fires handed to the executor ahead and started by it at the
// instant, each once.

#include <signal.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <set>
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

// Lead dispatch end to end: once the executor knows the admin's clock it says it takes lead
// dispatch; a job due every second is then handed over ahead of each second, started by the
// executor no earlier than its instant, run once per second and recorded as such.
TEST_F(ExecutorClockE2e, FiresAreHandedOverAheadAndStartedByTheExecutorAtTheirInstantOnce) {
  ASSERT_TRUE(testing::eventually([&] { return executors().at(0).value("leadDispatch", false); }, 15s))
      << executors().dump();
  // The script says when it started, by this host's clock (the admin's and the executor's).
  auto job = admin_->post("jobs", who_,
                          {{"jobGroup", group_},
                           {"name", "every-second"},
                           {"jobDesc", "every second"},
                           {"scheduleType", "CRON"},
                           {"scheduleConf", "* * * * * ?"},
                           {"executorHandler", ""},
                           {"glueType", "GLUE_SHELL"},
                           {"glueSource", "#!/bin/sh\nprintf '{\"startedAt\":%s}' \"$(date +%s%3N)\" > \"$CRONWHEEL_OUTPUT_FILE\"\n"},
                           {"executorBlockStrategy", "SERIAL_EXECUTION"}});
  ASSERT_EQ(job.status, 201) << job.text;
  const std::string id = std::to_string(job.body.value("id", std::int64_t{0}));
  ASSERT_EQ(admin_->post("jobs/" + id + "/start", who_).status, 200);
  auto led_runs = [&] {
    int n = 0;
    auto r = admin_->get("logs?jobId=" + id + "&limit=1000", who_);
    for (const auto& run : r.body.value("items", json::array())) {
      if (run.value("handleCode", 0) == 200 && run.value("triggerMsg", "").find("Lead: handed over") != std::string::npos) ++n;
    }
    return n;
  };
  ASSERT_TRUE(testing::eventually([&] { return led_runs() >= 3; }, 20s));
  ASSERT_EQ(admin_->post("jobs/" + id + "/stop", who_).status, 200);

  // Every run the job had (some may still be ending): each second once, none started early. The
  // seconds decided and not yet sent at the stop (the scan decides 5 s ahead), pending or held by
  // the executor, were cancelled by it and never ran.
  auto cancelled = [](const json& run) { return run.value("state", "") == "cancelled"; };
  ASSERT_TRUE(testing::eventually(
      [&] {
        auto r = admin_->get("logs?jobId=" + id + "&limit=1000", who_);
        for (const auto& run : r.body.value("items", json::array())) {
          if (run.value("handleCode", 0) == 0 && !cancelled(run)) return false;
        }
        return true;
      },
      20s));
  auto all = admin_->get("logs?jobId=" + id + "&limit=1000", who_).body.value("items", json::array());
  std::set<std::int64_t> seconds;
  int led = 0, led_seconds_ahead = 0, stopped = 0;
  for (const auto& run : all) {
    const auto scheduled = run["scheduledTime"].get<std::int64_t>();
    EXPECT_TRUE(seconds.insert(scheduled).second) << "second " << scheduled << " ran twice";
    if (cancelled(run)) {
      ++stopped;
      EXPECT_NE(run.value("triggerMsg", "").find("Cancelled: job stopped by"), std::string::npos) << run.dump();
      EXPECT_EQ(run.value("handleCode", 0), 0) << run.dump();
      continue;
    }
    EXPECT_EQ(run["handleCode"], 200) << run.dump();
    if (run.value("triggerMsg", "").find("Lead: handed over") == std::string::npos) continue;
    ++led;
    // "Lead: handed over N ms ahead": a second decided seconds ahead is handed over as soon as
    // the ring holds it (--lead-horizon-ms), not only in its last 800 ms.
    const std::string msg = run.value("triggerMsg", "");
    const std::string::size_type at = msg.find("Lead: handed over ") + std::string("Lead: handed over ").size();
    if (std::stoll(msg.substr(at)) > 1'000) ++led_seconds_ahead;
    EXPECT_EQ(run["triggerTime"], scheduled) << "its trigger time is its instant";
    auto detail = admin_->get("logs/" + std::to_string(run["id"].get<std::int64_t>()), who_).body;
    ASSERT_TRUE(detail.contains("output") && detail["output"].is_string()) << detail.dump();
    const json output = json::parse(detail["output"].get<std::string>(), nullptr, false);
    ASSERT_TRUE(output.contains("startedAt")) << detail.dump();
    EXPECT_GE(output["startedAt"].get<std::int64_t>(), scheduled) << "started before its instant";
  }
  EXPECT_GE(led, 3);
  EXPECT_GE(led_seconds_ahead, 1) << "every second was handed over within its last second";
  EXPECT_GE(stopped, 1) << "the stop cancelled no decided second";
  EXPECT_NE(metrics().find("cronwheel_fires_led_total"), std::string::npos);
}

}  // namespace
}  // namespace cronwheel
