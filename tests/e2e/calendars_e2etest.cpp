// Business calendars end to end: the real cronwheel-admin on a fresh PostgreSQL database and a
// real cronwheel-executor. A calendar that excludes today keeps an every-second job from firing
// (no run at all, the preview naming the holiday); taking the holiday out lets it fire within
// seconds.

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/cron/cron_expression.h"
#include "tests/support/admin_process.h"
#include "tests/support/eventually.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_database.h"

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

constexpr auto kBound = 60s;
constexpr const char* kToken = "calendars-e2e-token";
constexpr const char* kApp = "cal-e2e";

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// A zone with a fixed offset where it is now between 10:00 and 14:00, so "today" in it stays
// today for the whole test wherever and whenever it runs.
std::string zone_near_noon() {
  const auto hour = static_cast<int>((now_ms() / 3'600'000) % 24);
  int offset = 12 - hour;  // -11 ... 12
  if (offset == 0) return "Etc/UTC";
  // Etc/GMT-5 is UTC+5 (POSIX signs).
  return offset > 0 ? "Etc/GMT-" + std::to_string(offset) : "Etc/GMT+" + std::to_string(-offset);
}

class CalendarsE2e : public ::testing::Test {
 protected:
  void SetUp() override {
    AdminProcess::Options options;
    options.db_url = db_.url();
    options.args = {"--node-id", "calendars-e2e", "--access-token", kToken, "--registry-refresh-ms", "200"};
    options.require_answers = true;
    admin_ = std::make_unique<AdminProcess>(options);
    ASSERT_GT(admin_->wait_until_listening(), 0) << admin_->process().out() << admin_->process().err();
    who_ = admin_->login();
    auto group = admin_->post("groups", who_, {{"appName", kApp}, {"title", "Calendar jobs"}, {"addressType", 0}});
    ASSERT_EQ(group.status, 201) << group.text;
    group_ = group.body["id"].get<std::int64_t>();

    executor_ = std::make_unique<Process>(std::vector<std::string>{
        std::string(CRONWHEEL_BIN_DIR) + "/cronwheel-executor", "--admin", admin_->url(), "--app-name", kApp, "--listen",
        "127.0.0.1:0", "--access-token", kToken, "--log-dir", (work_.path() / "logs").string()});
    ASSERT_TRUE(eventually(
        [&] {
          auto g = admin_->get("groups/" + std::to_string(group_), who_);
          return !g.body.value("addressList", std::vector<std::string>{}).empty() || !executor_->running();
        },
        kBound));
    ASSERT_TRUE(executor_->running()) << executor_->out() << executor_->err();
  }

  void TearDown() override {
    if (executor_) {
      executor_->signal(SIGTERM);
      executor_->wait_for_exit(kBound);
    }
    if (admin_) {
      EXPECT_EQ(admin_->stop(), 0) << admin_->process().out() << admin_->process().err();
    }
  }

  std::int64_t runs_of(std::int64_t job) {
    auto runs = admin_->get("logs?jobId=" + std::to_string(job), who_);
    EXPECT_EQ(runs.status, 200) << runs.text;
    return runs.body.value("total", std::int64_t{-1});
  }

  TestDatabase db_;
  TempDir work_;
  std::unique_ptr<AdminProcess> admin_;
  std::unique_ptr<Process> executor_;
  ApiCredentials who_;
  std::int64_t group_ = 0;
};

TEST_F(CalendarsE2e, AHolidayTodaySkipsEveryFireAndTakingItOutLetsThemHappen) {
  const std::string zone = zone_near_noon();
  const std::string today = common::format_iso8601(now_ms(), zone).substr(0, 10);
  auto calendar = admin_->post("calendars", who_,
                               {{"name", "e2e-holidays"},
                                {"timeZone", zone},
                                {"excludedDates", {{{"date", today}, {"name", "Test Holiday"}}}}});
  ASSERT_EQ(calendar.status, 201) << calendar.text;
  const auto calendar_id = calendar.body["id"].get<std::int64_t>();

  auto job = admin_->post("jobs", who_,
                          {{"jobGroup", group_},
                           {"name", "every-second"},
                           {"jobDesc", "every second, not on holidays"},
                           {"scheduleType", "CRON"},
                           {"scheduleConf", "* * * * * ?"},
                           {"timezone", zone},
                           {"executorHandler", "echo"},
                           {"calendarId", calendar_id},
                           {"calendarMode", "SKIP"}});
  ASSERT_EQ(job.status, 201) << job.text;
  EXPECT_EQ(job.body["calendarId"], calendar_id);
  const auto job_id = job.body["id"].get<std::int64_t>();
  const std::string job_path = "jobs/" + std::to_string(job_id);
  auto started = admin_->post(job_path + "/start", who_);
  ASSERT_EQ(started.status, 200) << started.text;
  // Its first fire is tomorrow's first second in its zone.
  const std::string first = common::format_iso8601(started.body["triggerNextTime"].get<std::int64_t>(), zone);
  EXPECT_NE(first.find("T00:00:00"), std::string::npos) << first;
  EXPECT_NE(first.substr(0, 10), today) << first;

  // The preview names the holiday for each fire it skips.
  auto preview = admin_->get(job_path + "/next-fires?count=3", who_);
  ASSERT_EQ(preview.status, 200) << preview.text;
  ASSERT_EQ(preview.body["skipped"].size(), 3u) << preview.text;
  for (const auto& skipped : preview.body["skipped"]) {
    EXPECT_EQ(skipped["reason"], "excluded by calendar e2e-holidays: " + today + " Test Holiday");
  }

  // Five seconds of an every-second job on its holiday: not one run, skipped or otherwise.
  const auto watch_until = std::chrono::steady_clock::now() + 5s;
  while (std::chrono::steady_clock::now() < watch_until) {
    ASSERT_EQ(runs_of(job_id), 0) << "a fire on the holiday";
    std::this_thread::sleep_for(200ms);
  }

  // The holiday taken out: runs start within a few seconds.
  auto changed = admin_->put("calendars/" + std::to_string(calendar_id), who_,
                             {{"name", "e2e-holidays"}, {"timeZone", zone}, {"version", 1}});
  ASSERT_EQ(changed.status, 200) << changed.text;
  const auto taken_out = std::chrono::steady_clock::now();
  ASSERT_TRUE(eventually([&] { return runs_of(job_id) > 0; }, kBound))
      << admin_->process().out() << admin_->process().err();
  EXPECT_LT(std::chrono::steady_clock::now() - taken_out, 15s) << "the next time came back to today";
  EXPECT_TRUE(eventually(
      [&] {
        auto runs = admin_->get("logs?jobId=" + std::to_string(job_id) + "&status=success", who_);
        return runs.body.value("total", 0) > 0;
      },
      kBound))
      << "a run succeeded on the executor";
  EXPECT_EQ(admin_->post(job_path + "/stop", who_).status, 200);
}

}  // namespace
}  // namespace cronwheel
