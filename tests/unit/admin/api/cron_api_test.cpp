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
  EXPECT_EQ(r.body, json({{"times", {1'705'327'200'000, 1'705'413'600'000}}, {"skipped", json::array()}, {"end", nullptr}}));
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
  EXPECT_EQ(r.body, json({{"times", json::array()}, {"skipped", json::array()}, {"end", "the schedule has no further fire time"}}));
}

TEST_F(CronApi, NeedsALogin) { EXPECT_EQ(get("cron/next?expr=0%200%20*%20*%20*%20%3F", "").status, 401); }

}  // namespace
}  // namespace cronwheel::admin
