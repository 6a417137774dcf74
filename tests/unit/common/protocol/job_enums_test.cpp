#include <gtest/gtest.h>

#include "common/protocol/job_enums.h"
#include "common/protocol/protocol_error.h"

namespace cronwheel {
namespace {

using namespace common::protocol;

template <class E>
void expect_round_trip(std::initializer_list<std::pair<E, std::string_view>> expected) {
  for (const auto& [value, name] : expected) {
    EXPECT_EQ(to_string(value), name);
    auto parsed = parse_enum<E>(name);
    ASSERT_TRUE(parsed.has_value()) << name;
    EXPECT_EQ(*parsed, value) << name;
  }
}

TEST(JobEnums, BlockStrategyWireNamesRoundTrip) {
  expect_round_trip<BlockStrategy>({{BlockStrategy::kSerialExecution, "SERIAL_EXECUTION"},
                                    {BlockStrategy::kDiscardLater, "DISCARD_LATER"},
                                    {BlockStrategy::kCoverEarly, "COVER_EARLY"}});
}

TEST(JobEnums, GlueTypeWireNamesRoundTrip) {
  expect_round_trip<GlueType>({{GlueType::kBean, "BEAN"},
                               {GlueType::kGlueGroovy, "GLUE_GROOVY"},
                               {GlueType::kGlueShell, "GLUE_SHELL"},
                               {GlueType::kGluePython, "GLUE_PYTHON"},
                               {GlueType::kGluePhp, "GLUE_PHP"},
                               {GlueType::kGlueNodejs, "GLUE_NODEJS"},
                               {GlueType::kGluePowershell, "GLUE_POWERSHELL"}});
}

TEST(JobEnums, RouteStrategyWireNamesRoundTrip) {
  expect_round_trip<RouteStrategy>({{RouteStrategy::kFirst, "FIRST"},
                                    {RouteStrategy::kLast, "LAST"},
                                    {RouteStrategy::kRound, "ROUND"},
                                    {RouteStrategy::kRandom, "RANDOM"},
                                    {RouteStrategy::kConsistentHash, "CONSISTENT_HASH"},
                                    {RouteStrategy::kLeastFrequentlyUsed, "LEAST_FREQUENTLY_USED"},
                                    {RouteStrategy::kLeastRecentlyUsed, "LEAST_RECENTLY_USED"},
                                    {RouteStrategy::kFailover, "FAILOVER"},
                                    {RouteStrategy::kBusyover, "BUSYOVER"},
                                    {RouteStrategy::kShardingBroadcast, "SHARDING_BROADCAST"}});
}

TEST(JobEnums, MisfireStrategyWireNamesRoundTrip) {
  expect_round_trip<MisfireStrategy>({{MisfireStrategy::kDoNothing, "DO_NOTHING"},
                                      {MisfireStrategy::kFireOnceNow, "FIRE_ONCE_NOW"}});
}

TEST(JobEnums, ScheduleTypeWireNamesRoundTrip) {
  expect_round_trip<ScheduleType>({{ScheduleType::kNone, "NONE"},
                                   {ScheduleType::kCron, "CRON"},
                                   {ScheduleType::kFixRate, "FIX_RATE"},
                                   {ScheduleType::kFixDelay, "FIX_DELAY"}});
}

TEST(JobEnums, ParseIsExactAndCaseSensitiveLikeJava) {
  EXPECT_FALSE(parse_enum<BlockStrategy>("serial_execution").has_value());
  EXPECT_FALSE(parse_enum<BlockStrategy>(" SERIAL_EXECUTION").has_value());
  EXPECT_FALSE(parse_enum<BlockStrategy>("").has_value());
  EXPECT_FALSE(parse_enum<GlueType>("GLUE_RUBY").has_value());
}

TEST(JobEnums, ParseOrThrowNamesFieldValueAndChoices) {
  EXPECT_EQ(parse_enum_or_throw<ScheduleType>("CRON", "scheduleType"), ScheduleType::kCron);
  try {
    parse_enum_or_throw<BlockStrategy>("FOO", "executorBlockStrategy");
    FAIL() << "expected ProtocolError";
  } catch (const ProtocolError& e) {
    EXPECT_EQ(e.field(), "executorBlockStrategy");
    EXPECT_STREQ(e.what(),
                 "executorBlockStrategy: unknown value 'FOO', expected one of SERIAL_EXECUTION, "
                 "DISCARD_LATER, COVER_EARLY");
  }
}

TEST(JobEnums, EnumChoicesListsWireNamesInOrder) {
  EXPECT_EQ(enum_choices<MisfireStrategy>(), "DO_NOTHING, FIRE_ONCE_NOW");
  EXPECT_EQ(enum_choices<ScheduleType>(), "NONE, CRON, FIX_RATE, FIX_DELAY");
}

TEST(JobEnums, OnlyGlueScriptTypesAreScripts) {
  EXPECT_FALSE(is_script(GlueType::kBean));
  EXPECT_FALSE(is_script(GlueType::kGlueGroovy));
  EXPECT_TRUE(is_script(GlueType::kGlueShell));
  EXPECT_TRUE(is_script(GlueType::kGluePython));
  EXPECT_TRUE(is_script(GlueType::kGluePhp));
  EXPECT_TRUE(is_script(GlueType::kGlueNodejs));
  EXPECT_TRUE(is_script(GlueType::kGluePowershell));
}

}  // namespace
}  // namespace cronwheel
