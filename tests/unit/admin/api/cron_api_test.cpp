#include <nlohmann/json.hpp>

#include "tests/unit/admin/api/resource_api_fixture.h"

namespace cronwheel::admin {
namespace {

using nlohmann::json;

class CronApi : public ResourceApiTest {};

TEST_F(CronApi, PreviewsFireTimesInAZone) {
  // 2024-01-15T00:00Z; 09:00 New York is 14:00Z in January.
  auto r = get("cron/next?expr=0%200%209%20*%20*%20%3F&tz=America/New_York&from=1705276800000&count=2");
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body, json({{"times", {1'705'327'200'000, 1'705'413'600'000}},
                          {"skipped", json::array()},
                          {"dst", json::array()},
                          {"end", nullptr}}));
}

TEST_F(CronApi, ADraftsDstPolicyChangesThePreviewAndItsNote) {
  // 02:30 every day from 2024-03-09T00:00Z; New York's clocks skip 02:00-03:00 on the 10th.
  const std::string base = "cron/next?expr=0%2030%202%20*%20*%20%3F&tz=America/New_York&from=1709942400000&count=2";
  auto r = get(base);
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body["times"], json({1'709'969'400'000, 1'710'138'600'000}));  // the 9th, then the 11th
  ASSERT_EQ(r.body["dst"].size(), 1u);
  EXPECT_NE(r.body["dst"][0]["note"].get<std::string>().find("no fire for it that day"), std::string::npos);
  r = get(base + "&dstGap=FIRE_AFTER&dstRepeat=ONCE");
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body["times"], json({1'709'969'400'000, 1'710'054'000'000}));  // the 9th, then 03:00 EDT on the 10th
  EXPECT_NE(r.body["dst"][0]["note"].get<std::string>().find("it fires at 03:00"), std::string::npos);

  // Every second Sunday of March at 02:30 falls in New York's gap: no time at all, and the note
  // says why.
  r = get("cron/next?expr=0%2030%202%20%3F%203%201%232&tz=America/New_York&from=1709942400000&count=2");
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body["times"], json::array());
  EXPECT_EQ(r.body["end"], "the schedule has no further fire time");
  ASSERT_FALSE(r.body["dst"].empty()) << r.text;
  EXPECT_EQ(r.body["dst"][0]["note"],
            "2024-03-10: the clocks in America/New_York go forward from 02:00 to 03:00, so 02:30 does not happen: no "
            "fire for it that day");

  r = get(base + "&dstGap=LATER");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.field(), "dstGap");
  EXPECT_EQ(get(base + "&dstRepeat=").field(), "dstRepeat");
}

TEST_F(CronApi, DefaultsToUtcNowAndFiveTimes) {
  auto r = get("cron/next?expr=0%200%20*%20*%20*%20%3F");
  ASSERT_EQ(r.status, 200) << r.text;
  ASSERT_EQ(r.body["times"].size(), 5u);
  EXPECT_EQ(r.body["times"][0], 1'700'002'800'000);  // 23:00Z after 22:13:20Z
}

TEST_F(CronApi, ErrorsNameExprOrTz) {
  auto r = get("cron/next?expr=0%2060%20*%20*%20*%20%3F");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.field(), "expr");
  EXPECT_EQ(r.message(), "expr: minutes: 60 is out of range 0-59");

  r = get("cron/next?expr=0%200%20*%20*%20*%20%3F&tz=Mars/Base");
  EXPECT_EQ(r.field(), "tz");
  EXPECT_EQ(r.message(), "tz: unknown time zone 'Mars/Base'");

  r = get("cron/next");
  EXPECT_EQ(r.field(), "expr");
  EXPECT_EQ(r.message(), "expr: is required (a Quartz cron expression)");

  EXPECT_EQ(get("cron/next?expr=0%200%20*%20*%20*%20%3F&count=0").field(), "count");
  EXPECT_EQ(get("cron/next?expr=0%200%20*%20*%20*%20%3F&count=101").field(), "count");
  EXPECT_EQ(get("cron/next?expr=0%200%20*%20*%20*%20%3F&from=-1").field(), "from");
  EXPECT_EQ(get("cron/next?expr=0%200%20*%20*%20*%20%3F&from=soon").message(), "from: expected an integer, got \"soon\"");
}

TEST_F(CronApi, AnExpressionThatEndedHasNoTimes) {
  auto r = get("cron/next?expr=0%200%200%201%201%20%3F%202020");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.body, json({{"times", json::array()},
                          {"skipped", json::array()},
                          {"dst", json::array()},
                          {"end", "the schedule has no further fire time"}}));
}

TEST_F(CronApi, NeedsALogin) { EXPECT_EQ(get("cron/next?expr=0%200%20*%20*%20*%20%3F", "").status, 401); }

}  // namespace
}  // namespace cronwheel::admin
