// Run retention end to end: a real cronwheel-admin with --run-retention-days 1 deletes the
// finished runs older than a day, soon after it starts, and keeps the rest.

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include <httplib.h>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "admin/pg/pg_store_support.h"
#include "tests/support/admin_process.h"
#include "tests/support/eventually.h"
#include "tests/support/test_database.h"
#include "tests/support/wall_time.h"

namespace cronwheel {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::AdminProcess;
using testing::TestDatabase;

using testing::now_ms;

TEST(RunRetentionE2e, FinishedRunsOlderThanTheRetentionAreDeletedAndTheRestKept) {
  TestDatabase db;
  AdminProcess admin({.db_url = db.url(), .args = {"--run-retention-days", "1"}, .require_answers = true});
  ASSERT_GT(admin.wait_until_listening(), 0) << admin.process().out() << admin.process().err();
  auto who = admin.login();
  auto group = admin.post("groups", who, {{"appName", "keep-app"}, {"title", "Kept"}});
  ASSERT_EQ(group.status, 201) << group.text;
  auto job = admin.post("jobs", who,
                        {{"jobGroup", group.body["id"]}, {"jobDesc", "old runs"}, {"scheduleType", "NONE"},
                         {"executorHandler", "report"}});
  ASSERT_EQ(job.status, 201) << job.text;

  pqxx::connection c(db.url());
  auto insert = [&](const std::string& state, std::int64_t scheduled_time) {
    pqxx::work tx(c);
    auto id = tx.exec_params1("INSERT INTO job_log (job_group, job_id, state, trigger_type, scheduled_time, "
                              "admin_node, executor_address, trigger_time, trigger_code, alarm_status) "
                              "VALUES ($1, $2, $3, 'SCHEDULE', $4, 'gone-node', 'http://127.0.0.1:1/', " +
                                  admin::pg::ts("$4") + ", 200, 1) RETURNING id",
                              group.body["id"].get<std::int64_t>(), job.body["id"].get<std::int64_t>(), state,
                              scheduled_time)[0]
                  .as<std::int64_t>();
    tx.commit();
    return id;
  };
  const std::int64_t day = 24LL * 3600 * 1000;
  const auto old_done = insert("succeeded", now_ms() - 2 * day);
  const auto old_failed = insert("failed", now_ms() - 3 * day);
  const auto old_running = insert("triggered", now_ms() - 2 * day);  // still running: kept
  const auto recent = insert("succeeded", now_ms() - day / 2);

  auto exists = [&](std::int64_t id) { return admin.get("logs/" + std::to_string(id), who).status == 200; };
  // The first pass is 10 s after the start.
  ASSERT_TRUE(testing::eventually([&] { return !exists(old_done) && !exists(old_failed); }, 60s))
      << admin.process().err();
  EXPECT_TRUE(exists(old_running));
  EXPECT_TRUE(exists(recent));

  httplib::Client client("127.0.0.1", admin.port());
  auto metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("cronwheel_runs_deleted_total 2"), std::string::npos) << metrics->body;
  EXPECT_EQ(admin.stop(20s), 0) << admin.process().err();
}

}  // namespace
}  // namespace cronwheel
