// GET nodes, GET groups/{id}/executors and GET dashboard over the fake stores.

#include <string>

#include <nlohmann/json.hpp>

#include "tests/unit/admin/api/resource_api_fixture.h"

namespace cronwheel::admin {
namespace {

using nlohmann::json;

constexpr std::int64_t kHourMs = 3'600'000;
constexpr std::int64_t kDayMs = 24 * kHourMs;
// kStartMs is 2023-11-14T22:13:20Z; this is that day's start in UTC.
constexpr std::int64_t kTodayUtc = 1'699'920'000'000;

class OverviewApi : public ResourceApiTest {
 protected:
  void SetUp() override {
    ResourceApiTest::SetUp();
    mine_ = add_group("reports");
    theirs_ = add_group("billing");
    add_user("alice", "normal", {mine_.id});
    my_job_ = add_job(mine_.id, "nightly report");
    their_job_ = add_job(theirs_.id, "invoices");
  }

  JobLog run(const Job& job, FireState state, std::int64_t scheduled) {
    JobLog l;
    l.job_id = job.id;
    l.job_group = job.job_group;
    l.state = state;
    l.trigger_type = TriggerType::kSchedule;
    l.scheduled_time = scheduled;
    l.admin_node = "node-under-test";
    if (state != FireState::kPending && state != FireState::kCancelled) l.trigger_time = scheduled + 5;
    if (state == FireState::kSucceeded || state == FireState::kFailed) {
      l.handle_time = scheduled + 10;
      l.handle_code = state == FireState::kSucceeded ? 200 : 500;
    }
    return fake_.put_log(l);
  }

  json days_of(const json& dashboard) {
    json out = json::array();
    for (const auto& d : dashboard["runsPerDay"]) out.push_back({d["day"], d["succeeded"], d["failed"]});
    return out;
  }

  Group mine_;
  Group theirs_;
  Job my_job_;
  Job their_job_;
};

TEST_F(OverviewApi, NodesListEveryNodeWithItsLeaseAndTheLastScan) {
  fake_.put_node({"node-b", "http://10.0.0.2:8080/", "1.0.0", kStartMs - 60'000, kStartMs - 20'000, kStartMs - 5'000});
  fake_.put_node({"node-a", "http://10.0.0.1:8080/", "1.0.0", kStartMs - 90'000, kStartMs - 1'000, kStartMs + 14'000});
  auto before_scan = get("nodes", "alice");
  ASSERT_EQ(before_scan.status, 200) << before_scan.text;
  EXPECT_EQ(before_scan.body["lastScan"], nullptr);

  fake_.put_last_scan({"node-a", kStartMs - 400});
  auto r = get("nodes", "alice");  // any user: nothing in it belongs to a group
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body["total"], 2);
  EXPECT_EQ(r.body["items"][0], (json{{"nodeId", "node-a"},
                                      {"address", "http://10.0.0.1:8080/"},
                                      {"version", "1.0.0"},
                                      {"startedAt", kStartMs - 90'000},
                                      {"heartbeatAt", kStartMs - 1'000},
                                      {"leaseUntil", kStartMs + 14'000},
                                      {"alive", true}}));
  EXPECT_EQ(r.body["items"][1]["nodeId"], "node-b");
  EXPECT_EQ(r.body["items"][1]["alive"], false);
  EXPECT_EQ(r.body["lastScan"], (json{{"nodeId", "node-a"}, {"at", kStartMs - 400}}));
}

TEST_F(OverviewApi, NodesNeedALogin) { EXPECT_EQ(get("nodes", "").status, 401); }

TEST_F(OverviewApi, GroupExecutorsAreItsAppsLiveRegistrations) {
  fake_.put_registration({0, "EXECUTOR", "reports", "http://10.0.0.7:9999/", kStartMs - 2'000, {}, ClockEstimate{-1'500, 4, true}});
  fake_.put_registration({0, "EXECUTOR", "reports", "http://10.0.0.5:9999/", kStartMs - 30'000});  // XXL-JOB's
  fake_.put_registration({0, "EXECUTOR", "reports", "http://10.0.0.6:9999/", kStartMs - 91'000});  // dead
  fake_.put_registration({0, "EXECUTOR", "billing", "http://10.0.0.9:9999/", kStartMs - 1'000});
  const auto path = "groups/" + std::to_string(mine_.id) + "/executors";
  auto r = get(path, "alice");
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body, (json{{"items",
                           {{{"address", "http://10.0.0.5:9999/"},
                             {"updatedAt", kStartMs - 30'000},
                             {"clockOffsetMs", nullptr},
                             {"clockDelayMs", nullptr},
                             {"leadDispatch", false}},
                            {{"address", "http://10.0.0.7:9999/"},
                             {"updatedAt", kStartMs - 2'000},
                             {"clockOffsetMs", -1'500},
                             {"clockDelayMs", 4},
                             {"leadDispatch", true}}}},
                          {"total", 2}}));
  auto page = get(path + "?offset=1&limit=1", "alice");
  EXPECT_EQ(page.body["total"], 2);
  ASSERT_EQ(page.body["items"].size(), 1u);
  EXPECT_EQ(page.body["items"][0]["address"], "http://10.0.0.7:9999/");
  EXPECT_EQ(get(path + "?limit=0", "alice").field(), "limit");
  EXPECT_EQ(get(path + "?address=x", "alice").field(), "address");
}

TEST_F(OverviewApi, AGroupsHandlersAreWhatItsLiveExecutorsSaidTheyRun) {
  fake_.put_registration({0, "EXECUTOR", "reports", "http://10.0.0.7:9999/", kStartMs - 2'000, {"shell", "echo"}});
  fake_.put_registration({0, "EXECUTOR", "reports", "http://10.0.0.8:9999/", kStartMs - 2'000, {"reportHandler"}});
  fake_.put_registration({0, "EXECUTOR", "reports", "http://10.0.0.6:9999/", kStartMs - 91'000, {"old"}});  // dead
  auto r = get("groups/" + std::to_string(mine_.id) + "/handlers", "alice");
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body, (json{{"handlers", {"echo", "reportHandler", "shell"}}}));
  EXPECT_EQ(get("groups/" + std::to_string(theirs_.id) + "/handlers", "alice").status, 404);
}

TEST_F(OverviewApi, AnotherGroupsExecutorsAreAnsweredLikeAMissingGroup) {
  fake_.put_registration({0, "EXECUTOR", "billing", "http://10.0.0.9:9999/", kStartMs - 1'000});
  auto theirs = get("groups/" + std::to_string(theirs_.id) + "/executors", "alice");
  auto missing = get("groups/999999/executors", "alice");
  EXPECT_EQ(theirs.status, 404);
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(theirs.body["error"]["code"], missing.body["error"]["code"]);
  EXPECT_EQ(theirs.text.find("10.0.0.9"), std::string::npos);
  EXPECT_EQ(get("groups/" + std::to_string(theirs_.id) + "/executors").body["total"], 1);  // the admin
}

TEST_F(OverviewApi, DashboardDefaultsToTheLastSevenDaysInUtc) {
  run(my_job_, FireState::kSucceeded, kTodayUtc + kHourMs);
  run(my_job_, FireState::kFailed, kTodayUtc - 6 * kDayMs);
  run(my_job_, FireState::kSucceeded, kTodayUtc - 7 * kDayMs);  // the eighth day back: outside
  run(my_job_, FireState::kTriggered, kTodayUtc + 2 * kHourMs);
  run(my_job_, FireState::kPending, kTodayUtc + 23 * kHourMs);
  auto r = get("dashboard");
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body["from"], "2023-11-08");
  EXPECT_EQ(r.body["to"], "2023-11-14");
  EXPECT_EQ(r.body["timezone"], "UTC");
  EXPECT_EQ(days_of(r.body), json::parse(R"([["2023-11-08",0,1],["2023-11-09",0,0],["2023-11-10",0,0],
    ["2023-11-11",0,0],["2023-11-12",0,0],["2023-11-13",0,0],["2023-11-14",1,0]])"));
  EXPECT_EQ(r.body["runsToday"],
            (json{{"day", "2023-11-14"}, {"succeeded", 1}, {"failed", 0}, {"running", 1}, {"pending", 1}}));
  EXPECT_EQ(r.body["jobs"], (json{{"enabled", 0}, {"total", 2}}));
  EXPECT_EQ(r.body["executorsOnline"], 0);
  EXPECT_EQ(r.body["nodesAlive"], 0);
  ASSERT_EQ(r.body["latestFailures"].size(), 1u);
}

TEST_F(OverviewApi, DashboardCutsDaysAtTheZonesMidnight) {
  // 00:30 in Kolkata on the 15th is 19:00 UTC on the 14th; the clock's now is 03:43 there.
  run(my_job_, FireState::kSucceeded, kTodayUtc + 19 * kHourMs);
  run(my_job_, FireState::kFailed, kTodayUtc + 18 * kHourMs + 20 * 60'000);  // 23:50 on the 14th there
  auto kolkata = get("dashboard?from=2023-11-14&to=2023-11-15&timezone=Asia/Kolkata");
  ASSERT_EQ(kolkata.status, 200) << kolkata.text;
  EXPECT_EQ(days_of(kolkata.body), json::parse(R"([["2023-11-14",0,1],["2023-11-15",1,0]])"));
  EXPECT_EQ(kolkata.body["runsToday"]["day"], "2023-11-15");
  EXPECT_EQ(kolkata.body["runsToday"]["succeeded"], 1);
  auto utc = get("dashboard?from=2023-11-14&to=2023-11-15");
  EXPECT_EQ(days_of(utc.body), json::parse(R"([["2023-11-14",1,1],["2023-11-15",0,0]])"));
}

TEST_F(OverviewApi, DashboardDaysFollowDaylightSavingTime) {
  // New York's 2023-11-05 lasts 25 hours: from 04:00Z (midnight EDT) to 05:00Z the next day
  // (midnight EST).
  constexpr std::int64_t kNov5 = 1'699'156'800'000;
  run(my_job_, FireState::kSucceeded, kNov5 + 24 * kHourMs + 30 * 60'000);  // 23:30 EST on the 5th
  run(my_job_, FireState::kFailed, kNov5 + 25 * kHourMs + 30 * 60'000);     // 00:30 EST on the 6th
  auto r = get("dashboard?from=2023-11-05&to=2023-11-06&timezone=America/New_York");
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(days_of(r.body), json::parse(R"([["2023-11-05",1,0],["2023-11-06",0,1]])"));
}

TEST_F(OverviewApi, DashboardOfANormalUserCountsOnlyTheirGroups) {
  run(my_job_, FireState::kSucceeded, kTodayUtc + kHourMs);
  run(their_job_, FireState::kFailed, kTodayUtc + kHourMs);
  run(their_job_, FireState::kTriggered, kTodayUtc + 2 * kHourMs);
  fake_.put_registration({0, "EXECUTOR", "reports", "http://10.0.0.5:9999/", kStartMs - 1'000});
  fake_.put_registration({0, "EXECUTOR", "billing", "http://10.0.0.9:9999/", kStartMs - 1'000});
  fake_.put_node({"node-a", "", "", kStartMs - 9'000, kStartMs - 1'000, kStartMs + 14'000});
  auto alice = get("dashboard", "alice");
  ASSERT_EQ(alice.status, 200) << alice.text;
  EXPECT_EQ(alice.body["jobs"]["total"], 1);
  EXPECT_EQ(alice.body["runsToday"],
            (json{{"day", "2023-11-14"}, {"succeeded", 1}, {"failed", 0}, {"running", 0}, {"pending", 0}}));
  EXPECT_EQ(alice.body["executorsOnline"], 1);
  EXPECT_EQ(alice.body["nodesAlive"], 1);
  EXPECT_TRUE(alice.body["latestFailures"].empty());
  EXPECT_EQ(alice.text.find("invoices"), std::string::npos);
  auto admin = get("dashboard");
  EXPECT_EQ(admin.body["jobs"]["total"], 2);
  EXPECT_EQ(admin.body["executorsOnline"], 2);
  EXPECT_EQ(admin.body["runsToday"]["failed"], 1);
}

TEST_F(OverviewApi, DashboardFailuresNameTheirJobAndKeepMessagesShort) {
  JobLog l = run(their_job_, FireState::kFailed, kTodayUtc + kHourMs);
  l.handle_msg = std::string(2'000, 'x');
  l.trigger_msg = "trigger ok";
  fake_.put_log(l);
  auto r = get("dashboard");
  ASSERT_EQ(r.body["latestFailures"].size(), 1u);
  const auto& f = r.body["latestFailures"][0];
  EXPECT_EQ(f["id"], l.id);
  EXPECT_EQ(f["jobId"], their_job_.id);
  EXPECT_EQ(f["jobDesc"], "invoices");
  EXPECT_EQ(f["jobGroup"], theirs_.id);
  EXPECT_EQ(f["state"], "failed");
  EXPECT_EQ(f["scheduledTime"], kTodayUtc + kHourMs);
  EXPECT_EQ(f["triggerTime"], kTodayUtc + kHourMs + 5);
  EXPECT_EQ(f["handleCode"], 500);
  EXPECT_EQ(f["triggerMsg"], "trigger ok");
  EXPECT_EQ(f["handleMsg"].get<std::string>().size(), 512u);
}

TEST_F(OverviewApi, DashboardRefusesEveryBadParameterNamingIt) {
  const std::pair<std::string, std::string> cases[] = {
      {"from=2023-13-01", "from"},
      {"from=2023-02-29", "from"},
      {"from=20231101", "from"},
      {"from=2023-11-1", "from"},
      {"from=2023-11-01T00:00", "from"},
      {"from=+023-11-01", "from"},
      {"from=1969-12-31", "from"},
      {"to=yesterday", "to"},
      {"from=2023-11-10&to=2023-11-09", "from"},
      {"from=2022-11-13&to=2023-11-14", "to"},  // 367 days
      {"timezone=Mars/Base", "timezone"},
      {"timezone=../../etc/passwd", "timezone"},
      {"timezone=", "timezone"},
      {"timezone=" + std::string(65, 'A'), "timezone"},
      {"timezone=Europe%2FBerlin%00", "timezone"},
      {"zone=UTC", "zone"},
  };
  for (const auto& [query, field] : cases) {
    auto r = get("dashboard?" + query);
    EXPECT_EQ(r.status, 400) << query << ": " << r.text;
    EXPECT_EQ(r.field(), field) << query;
  }
  EXPECT_EQ(get("dashboard?from=2022-11-14&to=2023-11-14").body["runsPerDay"].size(), 366u);
  EXPECT_EQ(get("dashboard?from=2023-11-14&to=2023-11-14").body["runsPerDay"].size(), 1u);
  EXPECT_EQ(get("dashboard?to=2023-11-01").body["from"], "2023-10-26");
  EXPECT_EQ(get("dashboard?timezone=Europe/Berlin").status, 200);
}

}  // namespace
}  // namespace cronwheel::admin
