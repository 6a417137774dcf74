#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "common/http/route_table.h"

namespace cronwheel {
namespace {

using common::http::RouteTable;

TEST(RouteTable, LiteralAndParameterSegments) {
  RouteTable table;
  auto list = table.add("GET", "/api/v1/jobs");
  auto one = table.add("GET", "/api/v1/jobs/{id}");
  auto start = table.add("POST", "/api/v1/jobs/{id}/start");

  auto r = table.match("GET", "/api/v1/jobs");
  ASSERT_TRUE(r.match);
  EXPECT_EQ(r.match->route, list);

  r = table.match("GET", "/api/v1/jobs/42");
  ASSERT_TRUE(r.match);
  EXPECT_EQ(r.match->route, one);
  ASSERT_NE(r.match->params.find("id"), nullptr);
  EXPECT_EQ(*r.match->params.find("id"), "42");
  EXPECT_EQ(r.match->params.find("other"), nullptr);

  r = table.match("POST", "/api/v1/jobs/7/start");
  ASSERT_TRUE(r.match);
  EXPECT_EQ(r.match->route, start);
}

TEST(RouteTable, NoMatchForOtherPathsOrEmptySegments) {
  RouteTable table;
  table.add("GET", "/api/v1/jobs/{id}");
  EXPECT_FALSE(table.match("GET", "/api/v1/jobs/").match);
  EXPECT_FALSE(table.match("GET", "/api/v1/jobs").match);
  EXPECT_FALSE(table.match("GET", "/api/v1/jobs/1/2").match);
  EXPECT_FALSE(table.match("GET", "api/v1/jobs/1").match);
  EXPECT_FALSE(table.match("GET", "").match);
}

TEST(RouteTable, LiteralBeatsParameter) {
  RouteTable table;
  auto by_id = table.add("POST", "/logs/{id}");
  auto clear = table.add("POST", "/logs/clear");
  EXPECT_EQ(table.match("POST", "/logs/clear").match->route, clear);
  EXPECT_EQ(table.match("POST", "/logs/12").match->route, by_id);
}

TEST(RouteTable, RestMatchesAnyContextPath) {
  RouteTable table;
  auto registry = table.add("POST", "/**/api/registry");
  EXPECT_EQ(table.match("POST", "/api/registry").match->route, registry);
  EXPECT_EQ(table.match("POST", "/xxl-job-admin/api/registry").match->route, registry);
  EXPECT_EQ(table.match("POST", "/a/b/c/api/registry").match->route, registry);
  EXPECT_FALSE(table.match("POST", "/api/registry/x").match);
  EXPECT_FALSE(table.match("POST", "/registry").match);
}

TEST(RouteTable, TrailingRestIsAFallbackThatLosesToEverythingElse) {
  RouteTable table;
  auto fallback = table.add("GET", "/**");
  auto health = table.add("GET", "/healthz");
  EXPECT_EQ(table.match("GET", "/healthz").match->route, health);
  EXPECT_EQ(table.match("GET", "/jobs/12/edit").match->route, fallback);
  EXPECT_EQ(table.match("GET", "/").match->route, fallback);
}

TEST(RouteTable, OtherMethodsAreReportedForA405) {
  RouteTable table;
  table.add("GET", "/healthz");
  table.add("DELETE", "/healthz");
  auto r = table.match("POST", "/healthz");
  EXPECT_FALSE(r.match);
  EXPECT_EQ(r.allowed_methods, (std::vector<std::string>{"GET", "DELETE"}));
  EXPECT_TRUE(table.match("POST", "/nothing").allowed_methods.empty());
}

TEST(RouteTable, HeadUsesGetRoutes) {
  RouteTable table;
  auto health = table.add("GET", "/healthz");
  auto r = table.match("HEAD", "/healthz");
  ASSERT_TRUE(r.match);
  EXPECT_EQ(r.match->route, health);
}

TEST(RouteTable, BadPatternsAreRefused) {
  RouteTable table;
  EXPECT_THROW(table.add("GET", "healthz"), std::invalid_argument);
  EXPECT_THROW(table.add("GET", "/**/a/**"), std::invalid_argument);
  EXPECT_THROW(table.add("GET", "/a/{}"), std::invalid_argument);
}

TEST(RouteTable, LongPathsMatchInLinearTime) {
  // Nothing recurses per character: a path of a million segments is just a slow miss.
  RouteTable table;
  table.add("POST", "/**/api/callback");
  table.add("GET", "/api/v1/jobs/{id}");
  std::string path;
  for (int i = 0; i < 200'000; ++i) path += "/a";
  EXPECT_FALSE(table.match("POST", path).match);
  EXPECT_TRUE(table.match("POST", path + "/api/callback").match);
  EXPECT_FALSE(table.match("GET", "/api/v1/jobs/" + std::string(1'000'000, '1') + "/x").match);
}

}  // namespace
}  // namespace cronwheel
