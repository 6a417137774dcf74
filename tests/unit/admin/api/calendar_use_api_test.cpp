// The calendar fields of jobs and workflows (calendarId, calendarMode) and the previews that go by
// them (jobs/{id}/next-fires, cron/next), on a real HttpServer over FakeStores with a
// FakeCalendarStore: what they refuse, first fire times, skipped fires with their reasons.

#include <gtest/gtest.h>

#include "tests/unit/admin/api/calendar_api_fixture.h"

namespace cronwheel::admin {
namespace {

using nlohmann::json;

// Instants after the fixture's start, 2023-11-14T22:13:20Z (a Tuesday).
constexpr std::int64_t kMidnightAfterStart = 1'700'006'400'000;  // 2023-11-15T00:00:00Z
constexpr std::int64_t kNineOnTheFifteenth = 1'700'038'800'000;
constexpr std::int64_t kNineOnTheSixteenth = 1'700'125'200'000;
constexpr std::int64_t kNineOnTheSeventeenth = 1'700'211'600'000;

class CalendarUseApiTest : public CalendarApiFixture {
 protected:
  CalendarUseApiTest() : CalendarApiFixture("cal-use") {}

  // A calendar "cn-holidays" in UTC excluding `dates` ("2023-11-15" or "--01-01", each named).
  std::int64_t calendar(const std::vector<std::pair<std::string, std::string>>& dates = {}) {
    Calendar c;
    c.name = "cn-holidays";
    for (const auto& [date, name] : dates) {
      CalendarDate d;
      if (date.rfind("--", 0) == 0) {
        d.day = {0, std::stoi(date.substr(2, 2)), std::stoi(date.substr(5, 2)), name};
      } else {
        d.day = {std::stoi(date.substr(0, 4)), std::stoi(date.substr(5, 2)), std::stoi(date.substr(8, 2)), name};
      }
      c.dates.push_back(d);
    }
    return calendars_.create(c, system_).id;
  }

};

TEST_F(CalendarUseApiTest, JobsNameACalendarThatExistsWithAMode) {
  const auto id = calendar();
  json body = {{"jobGroup", group_.id}, {"jobDesc", "d"}, {"scheduleType", "CRON"}, {"scheduleConf", "0 0 9 * * ?"},
               {"executorHandler", "h"}};
  json with_missing = body;
  with_missing["calendarId"] = 999;
  auto refused = post("jobs", with_missing, "alice");
  ASSERT_EQ(refused.status, 400) << refused.text;
  EXPECT_EQ(refused.field(), "calendarId");
  EXPECT_EQ(refused.message(), "calendarId: calendar 999 does not exist");
  json bad_mode = body;
  bad_mode["calendarId"] = id;
  bad_mode["calendarMode"] = "SOMETIMES";
  EXPECT_EQ(post("jobs", bad_mode).field(), "calendarMode");
  json only_without = body;
  only_without["calendarMode"] = "ONLY";
  EXPECT_EQ(post("jobs", only_without).field(), "calendarMode");
  json zero = body;
  zero["calendarId"] = 0;
  EXPECT_EQ(post("jobs", zero).field(), "calendarId");

  // A normal user names any calendar: calendars are everyone's.
  json good = body;
  good["calendarId"] = id;
  good["calendarMode"] = "ONLY";
  auto created = post("jobs", good, "alice");
  ASSERT_EQ(created.status, 201) << created.text;
  EXPECT_EQ(created.body["calendarId"], id);
  EXPECT_EQ(created.body["calendarMode"], "ONLY");
  const std::string job = "jobs/" + created.body["id"].dump();
  EXPECT_EQ(put(job, {{"jobDesc", "kept"}}).body["calendarMode"], "ONLY") << "left out, kept";
  auto cleared = put(job, {{"calendarId", nullptr}});
  ASSERT_EQ(cleared.status, 200) << cleared.text;
  EXPECT_EQ(cleared.body["calendarId"], nullptr);
  EXPECT_EQ(cleared.body["calendarMode"], "SKIP");
  EXPECT_EQ(put(job, {{"calendarId", 999}}).field(), "calendarId");
}

TEST_F(CalendarUseApiTest, NextFiresListTheSkippedTimesWithTheirReason) {
  const auto id = calendar({{"2023-11-15", "Holiday"}});
  const auto job = job_with(id, "0 0 9 * * ?");
  auto r = get("jobs/" + std::to_string(job) + "/next-fires?count=2");
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body, json({{"times", {kNineOnTheSixteenth, kNineOnTheSeventeenth}},
                          {"skipped", {{{"time", kNineOnTheFifteenth}, {"reason", "excluded by calendar cn-holidays: 2023-11-15 Holiday"}}}},
                          {"dst", json::array()},
                          {"end", nullptr}}));
  // Started, it starts after the holiday and still shows what it skips on the way.
  auto started = post("jobs/" + std::to_string(job) + "/start");
  ASSERT_EQ(started.status, 200) << started.text;
  EXPECT_EQ(started.body["triggerNextTime"], kNineOnTheSixteenth);
  EXPECT_EQ(get("jobs/" + std::to_string(job) + "/next-fires?count=2").body, r.body);

  // The preview of a draft job with the calendar.
  auto draft = get("cron/next?expr=0%200%209%20*%20*%20%3F&count=2&calendarId=" + std::to_string(id));
  ASSERT_EQ(draft.status, 200) << draft.text;
  EXPECT_EQ(draft.body, r.body);
  EXPECT_EQ(get("cron/next?expr=0%200%209%20*%20*%20%3F&calendarId=999").field(), "calendarId");
  EXPECT_EQ(get("cron/next?expr=0%200%209%20*%20*%20%3F&calendarMode=ONLY").field(), "calendarMode");
  EXPECT_EQ(get("cron/next?expr=0%200%209%20*%20*%20%3F&count=1").body["skipped"], json::array()) << "no calendar";
}

TEST_F(CalendarUseApiTest, AJobStartedOnAHolidayFiresAfterItAndShowsWhatItSkipsOnTheWay) {
  const auto id = calendar({{"2023-11-14", "Today"}});
  const auto job = job_with(id, "*/10 * * * * ?");
  auto started = post("jobs/" + std::to_string(job) + "/start");
  ASSERT_EQ(started.status, 200) << started.text;
  EXPECT_EQ(started.body["triggerNextTime"], kMidnightAfterStart);
  auto preview = get("jobs/" + std::to_string(job) + "/next-fires?count=2").body;
  EXPECT_EQ(preview["times"], json({kMidnightAfterStart, kMidnightAfterStart + 10'000}));
  ASSERT_EQ(preview["skipped"].size(), 2u) << preview;
  EXPECT_EQ(preview["skipped"][0], json({{"time", kStartMs + 10'000}, {"reason", "excluded by calendar cn-holidays: 2023-11-14 Today"}}));
  EXPECT_EQ(preview["skipped"][1]["time"], kStartMs + 20'000);
}

TEST_F(CalendarUseApiTest, ARunningJobGivenACalendarGetsItsNextTimeFromIt) {
  const auto id = calendar({{"2023-11-14", "Today"}});
  auto created = post("jobs", {{"jobGroup", group_.id}, {"jobDesc", "ticks"}, {"scheduleType", "CRON"},
                               {"scheduleConf", "*/10 * * * * ?"}, {"executorHandler", "h"}});
  ASSERT_EQ(created.status, 201) << created.text;
  const std::string job = "jobs/" + created.body["id"].dump();
  ASSERT_EQ(post(job + "/start").body["triggerNextTime"], kStartMs + 10'000);
  auto given = put(job, {{"calendarId", id}});
  ASSERT_EQ(given.status, 200) << given.text;
  EXPECT_EQ(given.body["triggerNextTime"], kMidnightAfterStart);
  auto taken = put(job, {{"calendarId", nullptr}});
  EXPECT_EQ(taken.body["triggerNextTime"], kStartMs + 10'000);
}

TEST_F(CalendarUseApiTest, ACalendarThatLetsNoFireThroughRefusesTheStartSayingSo) {
  const auto id = calendar({{"--01-01", "New Year"}});
  const auto job = job_with(id, "0 0 12 1 1 ?");  // noon on 1 January only
  auto refused = post("jobs/" + std::to_string(job) + "/start");
  ASSERT_EQ(refused.status, 400) << refused.text;
  EXPECT_EQ(refused.field(), "calendarId");
  EXPECT_NE(refused.message().find("calendar cn-holidays lets no fire through within ten years"), std::string::npos)
      << refused.message();
  auto preview = get("jobs/" + std::to_string(job) + "/next-fires?count=2");
  EXPECT_EQ(preview.body["times"], json::array());
  EXPECT_EQ(preview.body["end"], "calendar cn-holidays lets no fire through within ten years");
}

TEST_F(CalendarUseApiTest, WorkflowsNameACalendarThatExists) {
  const auto id = calendar({{"2023-11-15", "Holiday"}});
  const auto node_job = job_with(id, "0 0 9 * * ?");
  json body = {{"jobGroup", group_.id},
               {"name", "etl"},
               {"scheduleType", "CRON"},
               {"scheduleConf", "0 0 9 * * ?"},
               {"nodes", {{{"key", "a"}, {"jobId", node_job}}}},
               {"calendarId", 999}};
  auto refused = post("workflows", body);
  ASSERT_EQ(refused.status, 400) << refused.text;
  EXPECT_EQ(refused.field(), "calendarId");
  auto checked = post("workflows/check", body);
  EXPECT_EQ(checked.body["problems"], json({{{"field", "calendarId"}, {"message", "calendar 999 does not exist"}}}));
  body["calendarId"] = id;
  body["calendarMode"] = "ONLY";
  auto created = post("workflows", body);
  ASSERT_EQ(created.status, 201) << created.text;
  EXPECT_EQ(created.body["calendarId"], id);
  EXPECT_EQ(created.body["calendarMode"], "ONLY");
  const std::string flow = "workflows/" + created.body["id"].dump();
  auto started = post(flow + "/start");
  ASSERT_EQ(started.status, 200) << started.text;
  EXPECT_EQ(started.body["triggerNextTime"], kNineOnTheSixteenth) << "not on the holiday";
  body["calendarId"] = nullptr;
  body["calendarMode"] = "SKIP";
  body["version"] = created.body["version"];
  body["scheduleConf"] = "*/10 * * * * ?";
  auto changed = put(flow, body);
  ASSERT_EQ(changed.status, 200) << changed.text;
  EXPECT_EQ(changed.body["calendarId"], nullptr);
  EXPECT_EQ(changed.body["triggerNextTime"], kStartMs + 10'000);
}

}  // namespace
}  // namespace cronwheel::admin
