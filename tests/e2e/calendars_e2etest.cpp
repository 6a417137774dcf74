// Business calendars end to end: the real cronwheel-admin on a fresh PostgreSQL database and a
// real cronwheel-executor. A calendar that excludes today keeps an every-second job from firing
// (no run at all, the preview naming the holiday); taking the holiday out lets it fire within
// seconds.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "common/cron/cron_expression.h"
#include "tests/support/eventually.h"
#include "tests/support/executor_group_e2e.h"
#include "tests/support/wall_time.h"

namespace cronwheel {
namespace {

using namespace std::chrono_literals;
using testing::eventually;
using testing::now_ms;

constexpr auto kCalendarBound = 60s;

// A zone with a fixed offset where it is now between 10:00 and 14:00, so "today" in it stays
// today for the whole test wherever and whenever it runs.
std::string zone_near_noon() {
  const auto hour = static_cast<int>((now_ms() / 3'600'000) % 24);
  int offset = 12 - hour;  // -11 ... 12
  if (offset == 0) return "Etc/UTC";
  // Etc/GMT-5 is UTC+5 (POSIX signs).
  return offset > 0 ? "Etc/GMT-" + std::to_string(offset) : "Etc/GMT+" + std::to_string(-offset);
}

class CalendarsE2e : public testing::ExecutorGroupE2e {
 protected:
  CalendarsE2e()
      : ExecutorGroupE2e({.node_id = "calendars-e2e", .access_token = "calendars-e2e-token", .app_name = "cal-e2e",
                          .group_title = "Calendar jobs", .bound = kCalendarBound}) {}

  std::int64_t runs_of(std::int64_t job) {
    auto runs = admin_->get("logs?jobId=" + std::to_string(job), who_);
    EXPECT_EQ(runs.status, 200) << runs.text;
    return runs.body.value("total", std::int64_t{-1});
  }
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
  ASSERT_TRUE(eventually([&] { return runs_of(job_id) > 0; }, kCalendarBound))
      << admin_->process().out() << admin_->process().err();
  EXPECT_LT(std::chrono::steady_clock::now() - taken_out, 15s) << "the next time came back to today";
  EXPECT_TRUE(eventually(
      [&] {
        auto runs = admin_->get("logs?jobId=" + std::to_string(job_id) + "&status=success", who_);
        return runs.body.value("total", 0) > 0;
      },
      kCalendarBound))
      << "a run succeeded on the executor";
  EXPECT_EQ(admin_->post(job_path + "/stop", who_).status, 200);
}

}  // namespace
}  // namespace cronwheel
