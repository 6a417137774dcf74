// What a script job gets of its run and gives back, end to end: the real cronwheel-admin on a fresh
// PostgreSQL database and a real cronwheel-executor running GLUE_SHELL jobs. The JSON a script
// leaves in its CRONWHEEL_OUTPUT_FILE is the run's `output` (GET /api/v1/logs/{id}); the script
// sees its run's logical time as CRONWHEEL_LOG_DATE_TIME, which for a backfill's run is the
// historical instant it stands for, not when it ran; an output that is not JSON fails the run,
// saying why.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

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

// Writes everything the script knows of its run as its output.
constexpr const char* kReportingScript =
    "#!/bin/bash\n"
    "printf '{\"at\":%s,\"job\":%s,\"run\":%s,\"shard\":\"%s/%s\",\"args\":\"%s\"}\\n' "
    "\"$CRONWHEEL_LOG_DATE_TIME\" \"$CRONWHEEL_JOB_ID\" \"$CRONWHEEL_LOG_ID\" "
    "\"$CRONWHEEL_SHARD_INDEX\" \"$CRONWHEEL_SHARD_TOTAL\" \"$*\" > \"$CRONWHEEL_OUTPUT_FILE\"\n"
    "echo reported\n";

class ExecutorScriptOutputE2e : public testing::ExecutorGroupE2e {
 protected:
  ExecutorScriptOutputE2e()
      : ExecutorGroupE2e({.node_id = "script-output-e2e", .access_token = "script-output-e2e-token",
                          .app_name = "script-output-e2e", .group_title = "Script outputs"}) {}

  // A GLUE_SHELL job running `script` with `param`, on an hourly schedule it is not started on.
  std::int64_t script_job(const std::string& name, const std::string& script, const std::string& param) {
    auto created = admin_->post("jobs", who_,
                                {{"jobGroup", group_},
                                 {"name", name},
                                 {"jobDesc", name},
                                 {"scheduleType", "CRON"},
                                 {"scheduleConf", "0 0 * * * ?"},
                                 {"timezone", "UTC"},
                                 {"executorHandler", ""},
                                 {"executorParam", param},
                                 {"glueType", "GLUE_SHELL"},
                                 {"glueSource", script},
                                 {"glueRemark", "e2e"}});
    EXPECT_EQ(created.status, 201) << created.text;
    return created.body.value("id", std::int64_t{0});
  }

  // A run's output: the JSON text its executor reported (null when it reported none).
  static json output_of(const json& run) {
    if (!run.contains("output") || !run["output"].is_string()) return nullptr;
    return json::parse(run["output"].get<std::string>(), nullptr, /*allow_exceptions=*/false);
  }

  // The run once its result is in.
  json ended(std::int64_t id) {
    json run;
    const bool done = eventually(
        [&] {
          auto r = admin_->get("logs/" + std::to_string(id), who_);
          EXPECT_EQ(r.status, 200) << r.text;
          run = r.body;
          return run.value("handleCode", 0) != 0;
        },
        30s);
    EXPECT_TRUE(done) << run.dump() << "\n--- executor\n" << executor_->err();
    return run;
  }
};

TEST_F(ExecutorScriptOutputE2e, AShellScriptsOutputIsItsRunsAndABackfilledRunSeesItsInstant) {
  const auto job = script_job("reporting", kReportingScript, "daily");
  ASSERT_GT(job, 0);

  // Triggered now: its logical time is the run's scheduled time.
  auto fire = admin_->post("jobs/" + std::to_string(job) + "/trigger", who_, json::object());
  ASSERT_EQ(fire.status, 201) << fire.text;
  const auto manual_id = fire.body["id"].get<std::int64_t>();
  const json manual = ended(manual_id);
  ASSERT_EQ(manual["handleCode"], 200) << manual.dump();
  EXPECT_EQ(manual["state"], "succeeded");
  EXPECT_EQ(output_of(manual), (json{{"at", manual["scheduledTime"]},
                                     {"job", job},
                                     {"run", manual_id},
                                     {"shard", "0/1"},
                                     {"args", "daily 0 1"}}))
      << manual.dump();

  // A backfill of one instant five hours ago: the script sees that instant, not now.
  const std::int64_t instant = (now_ms() / kHour) * kHour - 5 * kHour;
  auto made = admin_->post("jobs/" + std::to_string(job) + "/backfill", who_,
                           {{"from", instant}, {"to", instant + kHour}});
  ASSERT_EQ(made.status, 201) << made.text;
  const auto backfill = made.body["id"].get<std::int64_t>();
  std::vector<json> runs;
  ASSERT_TRUE(eventually(
      [&] {
        auto page = admin_->get("logs?backfillId=" + std::to_string(backfill), who_);
        runs = page.body.value("items", std::vector<json>{});
        return runs.size() == 1;
      },
      30s))
      << admin_->process().err();
  const auto backfilled_id = runs.front()["id"].get<std::int64_t>();
  const json backfilled = ended(backfilled_id);
  ASSERT_EQ(backfilled["handleCode"], 200) << backfilled.dump();
  EXPECT_EQ(backfilled["scheduledTime"], instant);
  EXPECT_EQ(output_of(backfilled), (json{{"at", instant},
                                         {"job", job},
                                         {"run", backfilled_id},
                                         {"shard", "0/1"},
                                         {"args", "daily 0 1"}}))
      << backfilled.dump();
  EXPECT_GT(backfilled["triggerTime"].get<std::int64_t>(), instant + 4 * kHour) << "it ran now";
}

TEST_F(ExecutorScriptOutputE2e, AScriptWhoseOutputIsNotJsonFailsItsRunSayingWhy) {
  const auto job = script_job("not-json", "#!/bin/bash\necho 'rows: 42' > \"$CRONWHEEL_OUTPUT_FILE\"\n", "");
  ASSERT_GT(job, 0);
  auto fire = admin_->post("jobs/" + std::to_string(job) + "/trigger", who_, json::object());
  ASSERT_EQ(fire.status, 201) << fire.text;
  const json run = ended(fire.body["id"].get<std::int64_t>());
  EXPECT_EQ(run["handleCode"], 500) << run.dump();
  EXPECT_EQ(run["state"], "failed");
  const auto message = run.value("handleMsg", std::string());
  EXPECT_EQ(message.rfind("exit code 0; output refused: CRONWHEEL_OUTPUT_FILE: not JSON: ", 0), 0u) << message;
  EXPECT_TRUE(run["output"].is_null()) << run.dump();
}

}  // namespace
}  // namespace cronwheel
