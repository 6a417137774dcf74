// Backfills end to end: the real cronwheel-admin on a fresh PostgreSQL database and a real
// cronwheel-executor. A week of an hourly job's instants (168, ten at a time, the fast echo
// handler) runs each instant exactly once, never more than ten unfinished at a time, each run
// filed by the executor under the day of its instant (its logDateTime); a second backfill of an
// overlapping range with SKIP runs none of them again. A failing run's retry, sent days after its
// instant, is sent with the instant as its logDateTime too. A workflow's backfill runs a workflow
// run per instant whose node runs are each filed under the instant.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/cron/cron_expression.h"
#include "tests/support/eventually.h"
#include "tests/support/executor_group_e2e.h"
#include "tests/support/wall_time.h"

namespace cronwheel {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::eventually;
using testing::now_ms;

constexpr std::int64_t kHour = 3'600'000;

class BackfillE2e : public testing::ExecutorGroupE2e {
 protected:
  BackfillE2e()
      : ExecutorGroupE2e({.node_id = "backfill-e2e", .access_token = "backfill-e2e-token", .app_name = "backfill-e2e",
                          .group_title = "Backfilled jobs"}) {}

  // Waits for backfill `id` to end, checking at every look that it never has more than
  // `max_concurrent` runs unfinished; answers it as it ended.
  json wait_until_ended(std::int64_t id, int max_concurrent) {
    json last;
    const bool ended = eventually(
        [&] {
          auto b = admin_->get("backfills/" + std::to_string(id), who_);
          EXPECT_EQ(b.status, 200) << b.text;
          last = b.body;
          const auto unfinished = last["runs"].value("pending", 0) + last["runs"].value("running", 0);
          EXPECT_LE(unfinished, max_concurrent) << last.dump();
          return last.value("state", "") != "running";
        },
        120s);
    EXPECT_TRUE(ended) << last.dump() << admin_->process().err();
    return last;
  }

  // Every run of the backfill (at most 1000), or of the job.
  std::vector<json> runs(const std::string& query) {
    auto page = admin_->get("logs?limit=1000&" + query, who_);
    EXPECT_EQ(page.status, 200) << page.text;
    return page.body.value("items", std::vector<json>{});
  }

  // A job of the group running `handler`; answers its id.
  std::int64_t job(const std::string& name, const std::string& handler, int retries = 0) {
    auto made = admin_->post("jobs", who_,
                             {{"jobGroup", group_},
                              {"name", name},
                              {"jobDesc", name},
                              {"scheduleType", "CRON"},
                              {"scheduleConf", "0 0 * * * ?"},
                              {"timezone", "UTC"},
                              {"executorHandler", handler},
                              {"executorParam", name},
                              {"executorFailRetryCount", retries},
                              {"retryInterval", 0}});
    EXPECT_EQ(made.status, 201) << made.text;
    return made.body.value("id", std::int64_t{0});
  }

  // Where the executor filed run `id` when it was sent with a logDateTime on the day of `at`.
  std::filesystem::path log_file(std::int64_t id, std::int64_t at) const {
    return logs_dir() / common::format_iso8601(at, "UTC").substr(0, 10) / (std::to_string(id) + ".log");
  }
};

TEST_F(BackfillE2e, AFailingRunsRetryIsSentWithTheInstantAsItsLogDateTimeDaysLater) {
  const auto job_id = job("failing-report", "fail", 1);
  // Three days ago at noon: the executor's day directory of it is not today's.
  const std::int64_t instant = (now_ms() / (24 * kHour)) * (24 * kHour) - 3 * 24 * kHour + 12 * kHour;
  auto made = admin_->post("jobs/" + std::to_string(job_id) + "/backfill", who_, {{"from", instant}, {"to", instant + kHour}});
  ASSERT_EQ(made.status, 201) << made.text;
  const auto id = made.body["id"].get<std::int64_t>();
  const json ended = wait_until_ended(id, 1);
  EXPECT_EQ(ended["state"], "done") << ended.dump();
  EXPECT_EQ(ended["runs"]["failed"], 2) << "the run and its retry: " << ended.dump();

  const auto backfilled = runs("backfillId=" + std::to_string(id));
  ASSERT_EQ(backfilled.size(), 2u);
  const json& retry = backfilled[0]["triggerType"] == "RETRY" ? backfilled[0] : backfilled[1];
  const json& first = backfilled[0]["triggerType"] == "RETRY" ? backfilled[1] : backfilled[0];
  ASSERT_EQ(retry["triggerType"], "RETRY") << retry.dump();
  EXPECT_EQ(first["scheduledTime"], instant);
  EXPECT_GT(retry["scheduledTime"].get<std::int64_t>(), instant + 2 * 24 * kHour) << "due when the run failed";
  EXPECT_EQ(retry["parentLogId"], first["id"]);
  for (const json* run : {&first, &retry}) {
    const auto run_id = (*run)["id"].get<std::int64_t>();
    EXPECT_EQ((*run)["handleCode"], 500) << run->dump();
    EXPECT_EQ((*run)["logDateTime"], instant) << run->dump();
    EXPECT_TRUE(std::filesystem::exists(log_file(run_id, instant)))
        << "run " << run_id << " was sent with the instant's day: " << log_file(run_id, instant);
    EXPECT_FALSE(std::filesystem::exists(log_file(run_id, now_ms()))) << "not today's";
    // Read back through the same logDateTime.
    auto content = admin_->get("logs/" + std::to_string(run_id) + "/content", who_);
    ASSERT_EQ(content.status, 200) << content.text;
    EXPECT_NE(content.text.find("failing: failing-report"), std::string::npos) << content.text;
  }
}

TEST_F(BackfillE2e, AWorkflowsBackfillRunsEachInstantOnceWithEveryNodeRunFiledUnderTheInstant) {
  const auto extract = job("extract", "echo");
  const auto load = job("load", "echo");
  auto workflow = admin_->post("workflows", who_,
                               {{"jobGroup", group_},
                                {"name", "nightly-etl"},
                                {"scheduleType", "CRON"},
                                {"scheduleConf", "0 0 * * * ?"},
                                {"timezone", "UTC"},
                                {"params", json::array({{{"name", "region"}, {"default", "eu"}}})},
                                {"nodes", json::array({{{"key", "extract"}, {"jobId", extract}, {"params", "${params.region}"}},
                                                       {{"key", "load"}, {"jobId", load}}})},
                                {"edges", json::array({{{"from", "extract"}, {"to", "load"}}})}});
  ASSERT_EQ(workflow.status, 201) << workflow.text;
  const auto workflow_id = workflow.body["id"].get<std::int64_t>();
  const std::string path = "workflows/" + std::to_string(workflow_id) + "/backfill";
  // Four hours of two days ago.
  const std::int64_t from = (now_ms() / (24 * kHour)) * (24 * kHour) - 2 * 24 * kHour + 6 * kHour;
  const std::int64_t to = from + 4 * kHour;
  auto dry = admin_->post(path, who_, {{"from", from}, {"to", to}, {"dryRun", true}});
  ASSERT_EQ(dry.status, 200) << dry.text;
  EXPECT_EQ(dry.body["instants"], (std::vector<std::int64_t>{from, from + kHour, from + 2 * kHour, from + 3 * kHour}));
  auto made = admin_->post(path, who_, {{"from", from}, {"to", to}, {"maxConcurrent", 2}, {"inputs", {{"region", "apac"}}}});
  ASSERT_EQ(made.status, 201) << made.text;
  EXPECT_EQ(made.body["kind"], "workflow");
  EXPECT_EQ(made.body["workflowName"], "nightly-etl");
  const auto id = made.body["id"].get<std::int64_t>();
  const json ended = wait_until_ended(id, 2);
  EXPECT_EQ(ended["state"], "done") << ended.dump();
  EXPECT_EQ(ended["written"], 4);
  EXPECT_EQ(ended["runs"]["succeeded"], 4) << ended.dump();

  auto listed = admin_->get("workflow-runs?backfillId=" + std::to_string(id), who_);
  ASSERT_EQ(listed.status, 200) << listed.text;
  const auto workflow_runs = listed.body.value("items", std::vector<json>{});
  ASSERT_EQ(workflow_runs.size(), 4u);
  std::map<std::int64_t, int> per_instant;
  for (const auto& listed_run : workflow_runs) {
    const auto at = listed_run["scheduledTime"].get<std::int64_t>();
    ++per_instant[at];
    EXPECT_EQ(listed_run["triggerType"], "BACKFILL");
    EXPECT_EQ(listed_run["backfillId"], id);
    EXPECT_EQ(listed_run["state"], "succeeded") << listed_run.dump();
    auto run = admin_->get("workflow-runs/" + std::to_string(listed_run["id"].get<std::int64_t>()), who_);
    ASSERT_EQ(run.status, 200) << run.text;
    ASSERT_EQ(run.body["nodes"].size(), 2u);
    EXPECT_EQ(run.body["nodes"][0]["param"], "apac") << "the backfill's inputs";
    for (const auto& node : run.body["nodes"]) {
      const auto node_run = node["runId"].get<std::int64_t>();
      auto log = admin_->get("logs/" + std::to_string(node_run), who_);
      ASSERT_EQ(log.status, 200) << log.text;
      EXPECT_EQ(log.body["logDateTime"], at) << log.body.dump();
      EXPECT_GT(log.body["scheduledTime"].get<std::int64_t>(), to) << "due when its run started";
      EXPECT_TRUE(std::filesystem::exists(log_file(node_run, at))) << "node " << node["key"] << ": " << log_file(node_run, at);
    }
  }
  ASSERT_EQ(per_instant.size(), 4u);
  for (const auto& [at, n] : per_instant) EXPECT_EQ(n, 1) << common::format_iso8601(at, "UTC");

  auto of_workflow = admin_->get("backfills?workflowId=" + std::to_string(workflow_id), who_);
  ASSERT_EQ(of_workflow.status, 200) << of_workflow.text;
  ASSERT_EQ(of_workflow.body["total"], 1);
  EXPECT_EQ(of_workflow.body["items"][0]["kind"], "workflow");
  auto audit = admin_->get("audit?entityType=backfill", who_);
  EXPECT_EQ(audit.body["total"], 1);
}

TEST_F(BackfillE2e, AWeekOfHourlyInstantsRunsEachOnceAsIfOnTimeAndAnOverlappingSkipRunsNoneAgain) {
  auto job = admin_->post("jobs", who_,
                          {{"jobGroup", group_},
                           {"name", "hourly-report"},
                           {"jobDesc", "an hourly report, backfilled"},
                           {"scheduleType", "CRON"},
                           {"scheduleConf", "0 0 * * * ?"},
                           {"timezone", "UTC"},
                           {"executorHandler", "echo"},
                           {"executorParam", "report"}});
  ASSERT_EQ(job.status, 201) << job.text;
  const auto job_id = job.body["id"].get<std::int64_t>();
  const std::string backfill_path = "jobs/" + std::to_string(job_id) + "/backfill";
  // A week ending five hours ago, on the hour: 168 instants over eight UTC days.
  const std::int64_t to = (now_ms() / kHour) * kHour - 5 * kHour;
  const std::int64_t from = to - 168 * kHour;

  auto dry = admin_->post(backfill_path, who_, {{"from", from}, {"to", to}, {"dryRun", true}});
  ASSERT_EQ(dry.status, 200) << dry.text;
  EXPECT_EQ(dry.body["total"], 168);
  EXPECT_EQ(dry.body["toRun"], 168);
  EXPECT_TRUE(dry.body["existing"].empty());
  const auto instants = dry.body["instants"].get<std::vector<std::int64_t>>();
  ASSERT_EQ(instants.size(), 168u);
  EXPECT_EQ(instants.front(), from);
  EXPECT_EQ(instants.back(), to - kHour);

  auto made = admin_->post(backfill_path, who_, {{"from", from}, {"to", to}, {"maxConcurrent", 10}});
  ASSERT_EQ(made.status, 201) << made.text;
  const auto id = made.body["id"].get<std::int64_t>();
  const json ended = wait_until_ended(id, 10);
  EXPECT_EQ(ended["state"], "done") << ended.dump();
  EXPECT_EQ(ended["written"], 168);
  EXPECT_EQ(ended["skipped"], 0);
  EXPECT_EQ(ended["runs"]["succeeded"], 168) << ended.dump();
  EXPECT_EQ(ended["reason"], "every instant dealt with: 168 runs written, 0 instants skipped");

  // Each instant exactly once, run as if on time: scheduled at the instant, filed by the
  // executor under the instant's day (the logDateTime it was sent with).
  const auto backfilled = runs("backfillId=" + std::to_string(id));
  ASSERT_EQ(backfilled.size(), 168u);
  std::map<std::int64_t, int> per_instant;
  for (const auto& run : backfilled) {
    const auto at = run["scheduledTime"].get<std::int64_t>();
    ++per_instant[at];
    EXPECT_EQ(run["triggerType"], "BACKFILL");
    EXPECT_EQ(run["state"], "succeeded") << run.dump();
    EXPECT_EQ(run["backfillId"], id);
    EXPECT_GT(run["triggerTime"].get<std::int64_t>(), to) << "sent now, not at the instant";
    const auto day = common::format_iso8601(at, "UTC").substr(0, 10);
    const auto file = logs_dir() / day / (std::to_string(run["id"].get<std::int64_t>()) + ".log");
    EXPECT_TRUE(std::filesystem::exists(file)) << file << " for the run at " << common::format_iso8601(at, "UTC");
  }
  ASSERT_EQ(per_instant.size(), 168u);
  for (const auto& [at, n] : per_instant) EXPECT_EQ(n, 1) << common::format_iso8601(at, "UTC");
  EXPECT_EQ(per_instant.begin()->first, from);
  // The console reads a run's log back through the same logDateTime.
  auto content = admin_->get("logs/" + std::to_string(backfilled.front()["id"].get<std::int64_t>()) + "/content", who_);
  ASSERT_EQ(content.status, 200) << content.text;
  EXPECT_NE(content.text.find("params: report"), std::string::npos) << content.text;

  // An overlapping range with SKIP: every instant in it ran already, none runs again.
  auto again = admin_->post(backfill_path, who_, {{"from", from + 100 * kHour}, {"to", to}, {"maxConcurrent", 10}});
  ASSERT_EQ(again.status, 201) << again.text;
  const auto second = again.body["id"].get<std::int64_t>();
  const json skipped = wait_until_ended(second, 10);
  EXPECT_EQ(skipped["state"], "done") << skipped.dump();
  EXPECT_EQ(skipped["written"], 0);
  EXPECT_EQ(skipped["skipped"], 68);
  EXPECT_TRUE(runs("backfillId=" + std::to_string(second)).empty());
  EXPECT_EQ(runs("jobId=" + std::to_string(job_id)).size(), 168u) << "one run per instant in all";

  // Both are listed, newest first, with who asked for them; the audit log has them.
  auto listed = admin_->get("backfills?jobId=" + std::to_string(job_id), who_);
  ASSERT_EQ(listed.status, 200) << listed.text;
  ASSERT_EQ(listed.body["total"], 2);
  EXPECT_EQ(listed.body["items"][0]["id"], second);
  EXPECT_EQ(listed.body["items"][0]["createdBy"], "admin");
  auto audit = admin_->get("audit?entityType=backfill", who_);
  ASSERT_EQ(audit.status, 200) << audit.text;
  EXPECT_EQ(audit.body["total"], 2);
}

}  // namespace
}  // namespace cronwheel
