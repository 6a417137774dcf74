// Concurrency limits end to end: the real cronwheel-admin on a fresh PostgreSQL database and a
// real cronwheel-executor running scripts that take a while. A group that runs at most two at
// once, given a burst of fires of three jobs of different priorities: never more than two run at
// once (read from each run's trigger and result times), every fire runs once, the waiting ones
// say so and are counted in /metrics, and they go out highest priority first.

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "tests/support/eventually.h"
#include "tests/support/executor_group_e2e.h"

namespace cronwheel {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::eventually;

constexpr auto kLimitBound = 90s;

class ConcurrencyLimitsE2e : public testing::ExecutorGroupE2e {
 protected:
  ConcurrencyLimitsE2e()
      : ExecutorGroupE2e({.node_id = "limits-e2e", .access_token = "limits-e2e-token", .app_name = "limits-e2e",
                          .group_title = "Two at a time", .group_fields = {{"maxRunning", 2}}, .bound = kLimitBound}) {}

  std::int64_t script_job(const std::string& name, int priority, const std::string& script) {
    auto job = admin_->post("jobs", who_,
                            {{"jobGroup", group_},
                             {"name", name},
                             {"jobDesc", name},
                             {"scheduleType", "NONE"},
                             {"scheduleConf", ""},
                             {"executorHandler", ""},
                             {"glueType", "GLUE_SHELL"},
                             {"glueSource", script},
                             {"executorBlockStrategy", "SERIAL_EXECUTION"},
                             {"priority", priority}});
    EXPECT_EQ(job.status, 201) << job.text;
    return job.body.value("id", std::int64_t{0});
  }

  std::int64_t trigger(std::int64_t job) {
    auto fired = admin_->post("jobs/" + std::to_string(job) + "/trigger", who_);
    EXPECT_EQ(fired.status, 201) << fired.text;
    return fired.body.value("id", std::int64_t{0});
  }

  json run(std::int64_t id) { return admin_->get("logs/" + std::to_string(id), who_).body; }

  std::string metrics() {
    httplib::Client client("127.0.0.1", admin_->port());
    auto r = client.Get("/metrics");
    return r ? r->body : "";
  }
};

TEST_F(ConcurrencyLimitsE2e, AGroupRunsAtMostItsLimitAtOnceAndGivesFreedSlotsToTheHighestPriority) {
  // The fillers hold both slots until the test opens their gate (a file; at most 30 s), so the
  // whole burst is waiting before a slot frees however slowly a loaded machine triggers it.
  const std::string gate = "/tmp/cronwheel-limits-gate-" + std::to_string(::getpid());
  std::remove(gate.c_str());
  const auto filler = script_job("filler", 0,
                                 "#!/bin/sh\ni=0\nwhile [ ! -e '" + gate + "' ] && [ $i -lt 600 ]; do sleep 0.05; "
                                 "i=$((i+1)); done\n");
  const auto low = script_job("low", 0, "#!/bin/sh\nsleep 1\n");
  const auto mid = script_job("mid", 5, "#!/bin/sh\nsleep 1\n");
  const auto high = script_job("high", 10, "#!/bin/sh\nsleep 1\n");
  // Two fillers take both slots; then a burst, lowest priority first.
  std::vector<std::int64_t> runs{trigger(filler), trigger(filler)};
  for (const auto id : runs) {
    EXPECT_TRUE(eventually(
                    [&] {
                      const json r = run(id);
                      return r.contains("triggerTime") && r["triggerTime"].is_number();  // sent: holds a slot
                    },
                    kLimitBound))
        << run(id).dump();
  }
  std::map<std::int64_t, std::string> job_of_run;
  for (const auto& [job, name] : std::vector<std::pair<std::int64_t, std::string>>{{low, "low"}, {mid, "mid"}, {high, "high"}}) {
    for (int i = 0; i < 2; ++i) {
      const auto id = trigger(job);
      runs.push_back(id);
      job_of_run[id] = name;
    }
  }
  // The burst waits, and says so; /metrics counts it.
  for (const auto& [id, name] : job_of_run) {
    EXPECT_TRUE(eventually([&] { return run(id).value("waitingForSlot", false); }, kLimitBound)) << name << " " << run(id).dump();
  }
  EXPECT_TRUE(eventually(
      [&] {
        return metrics().find("cronwheel_fires_waiting_for_slot{group=\"" + std::to_string(group_) + "\"}") !=
               std::string::npos;
      },
      kLimitBound));

  { std::ofstream open_gate(gate); }

  // Every run ends, once, succeeded.
  ASSERT_TRUE(eventually(
      [&] {
        return std::all_of(runs.begin(), runs.end(), [&](std::int64_t id) { return run(id).value("handleCode", 0) != 0; });
      },
      kLimitBound));
  struct Span {
    std::int64_t start;
    std::int64_t end;
    std::string job;
  };
  std::vector<Span> spans;
  for (auto id : runs) {
    const json r = run(id);
    EXPECT_EQ(r["handleCode"], 200) << r.dump();
    EXPECT_EQ(r["waitingForSlot"], false);
    spans.push_back({r["triggerTime"].get<std::int64_t>(), r["handleTime"].get<std::int64_t>(),
                     job_of_run.count(id) ? job_of_run[id] : "filler"});
  }
  auto total = admin_->get("logs?jobGroup=" + std::to_string(group_), who_);
  EXPECT_EQ(total.body["total"], runs.size()) << "no run twice";

  // At no instant more than two: a run holds its slot from its trigger to its result.
  std::vector<std::pair<std::int64_t, int>> edges;
  for (const auto& s : spans) {
    edges.emplace_back(s.start, +1);
    edges.emplace_back(s.end, -1);
  }
  std::sort(edges.begin(), edges.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : a.second < b.second;  // an end before a start at one instant
  });
  int running = 0, most = 0;
  for (const auto& [at, step] : edges) most = std::max(most, running += step);
  EXPECT_LE(most, 2);
  EXPECT_EQ(most, 2) << "the limit was used";

  // Freed slots went to the highest priority: every high run started before any mid run, and
  // every mid run before any low run.
  auto starts = [&](const std::string& job) {
    std::vector<std::int64_t> out;
    for (const auto& s : spans) {
      if (s.job == job) out.push_back(s.start);
    }
    return out;
  };
  const auto high_starts = starts("high");
  const auto mid_starts = starts("mid");
  const auto low_starts = starts("low");
  EXPECT_LE(*std::max_element(high_starts.begin(), high_starts.end()),
            *std::min_element(mid_starts.begin(), mid_starts.end()));
  EXPECT_LE(*std::max_element(mid_starts.begin(), mid_starts.end()), *std::min_element(low_starts.begin(), low_starts.end()));
  std::remove(gate.c_str());
}

}  // namespace
}  // namespace cronwheel
