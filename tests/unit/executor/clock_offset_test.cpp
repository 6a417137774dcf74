#include "executor/src/clock_offset.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

// NTP's offset and delay from fixed times, and its clock filter over the last eight exchanges.
namespace cronwheel::executor {
namespace {

constexpr std::int64_t kT = 1'780'000'000'000;  // an executor's epoch ms

struct Exchange {
  const char* what;
  std::int64_t t0, t1, t2, t3;  // relative to kT
  ClockSample expected;
};

TEST(ClockOffsetEstimator, MeasuresOffsetAndDelayAsNtpDoes) {
  const std::vector<Exchange> cases = {
      {"same clocks, 10 ms each way, 2 ms at the admin", 0, 10, 12, 22, {0, 20}},
      {"admin 500 ms ahead", 0, 510, 512, 22, {500, 20}},
      {"admin 3 s behind", 0, -2990, -2988, 22, {-3000, 20}},
      {"slow way there: off by half the asymmetry", 0, 30, 30, 40, {10, 40}},
      {"no time at all", 0, 0, 0, 0, {0, 0}},
      {"an odd sum truncates toward zero", 0, 1, 1, 1, {0, 1}},
      {"the admin says it took longer than the round trip", 0, 5, 50, 20, {17, -25}},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(ClockOffsetEstimator::measure(kT + c.t0, kT + c.t1, kT + c.t2, kT + c.t3), c.expected) << c.what;
  }
}

TEST(ClockOffsetEstimator, HasNoEstimateBeforeItsFirstSample) {
  ClockOffsetEstimator estimator;
  EXPECT_EQ(estimator.estimate(), std::nullopt);
}

TEST(ClockOffsetEstimator, AnswersTheSampleOfTheSmallestDelay) {
  ClockOffsetEstimator estimator;
  ASSERT_TRUE(estimator.add(kT, kT + 110, kT + 110, kT + 20));   // offset 100, delay 20
  ASSERT_TRUE(estimator.add(kT, kT + 103, kT + 103, kT + 6));    // offset 100, delay 6
  ASSERT_TRUE(estimator.add(kT, kT + 160, kT + 160, kT + 200));  // offset 60, delay 200: queued
  EXPECT_EQ(estimator.estimate(), (ClockSample{100, 6}));
  ASSERT_TRUE(estimator.add(kT, kT + 102, kT + 102, kT + 6));  // offset 99, delay 6: as good, newer
  EXPECT_EQ(estimator.estimate(), (ClockSample{99, 6}));
}

TEST(ClockOffsetEstimator, KeepsOnlyTheLastEightSamples) {
  ClockOffsetEstimator estimator;
  ASSERT_TRUE(estimator.add(kT, kT + 1, kT + 1, kT + 2));  // delay 2, the best, then forgotten
  for (int i = 0; i < 7; ++i) ASSERT_TRUE(estimator.add(kT, kT + 5 + i, kT + 5 + i, kT + 10 + i));
  EXPECT_EQ(estimator.estimate()->delay_ms, 2) << "eight kept, the first among them";
  ASSERT_TRUE(estimator.add(kT, kT + 500, kT + 500, kT + 30));  // the ninth: offset 485, delay 30
  EXPECT_EQ(estimator.estimate(), (ClockSample{0, 10})) << "the first is gone; the best of the rest";
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(estimator.add(kT, kT + 500, kT + 500, kT + 30));
  EXPECT_EQ(estimator.estimate(), (ClockSample{485, 30})) << "a clock step shows within eight exchanges";
}

TEST(ClockOffsetEstimator, IgnoresExchangesOfNegativeOrAbsurdDelay) {
  const std::vector<Exchange> refused = {
      {"negative delay", 0, 5, 50, 20, {}},
      {"an executor clock stepped back during the exchange", 0, 1, 1, -100, {}},
      {"over ten seconds", 0, 1, 1, 10'002, {}},
  };
  for (const auto& c : refused) {
    ClockOffsetEstimator estimator;
    ASSERT_TRUE(estimator.add(kT, kT + 50, kT + 50, kT + 20));  // offset 40, delay 20
    EXPECT_FALSE(estimator.add(kT + c.t0, kT + c.t1, kT + c.t2, kT + c.t3)) << c.what;
    EXPECT_EQ(estimator.estimate(), (ClockSample{40, 20})) << c.what;
  }
  ClockOffsetEstimator estimator;
  EXPECT_TRUE(estimator.add(kT, kT + 1, kT + 1, kT + 10'000)) << "ten seconds exactly is a sample";
  EXPECT_FALSE(ClockOffsetEstimator{}.add(kT, kT + 5, kT + 50, kT + 20));
}

TEST(ClockOffsetEstimator, ClearForgetsEverySample) {
  ClockOffsetEstimator estimator;
  ASSERT_TRUE(estimator.add(kT, kT + 1, kT + 1, kT + 2));
  estimator.clear();
  EXPECT_EQ(estimator.estimate(), std::nullopt);
  ASSERT_TRUE(estimator.add(kT, kT + 50, kT + 50, kT + 20));
  EXPECT_EQ(estimator.estimate(), (ClockSample{40, 20}));
}

TEST(ClockHeader, ReadsTheAdminsReceivedAndSentTimes) {
  auto times = parse_clock_header("1780000000000,1780000000003");
  ASSERT_TRUE(times.has_value());
  EXPECT_EQ(times->received_ms, 1'780'000'000'000);
  EXPECT_EQ(times->sent_ms, 1'780'000'000'003);
  EXPECT_TRUE(parse_clock_header("0,0").has_value());
  EXPECT_TRUE(parse_clock_header("999999999999999,1").has_value()) << "15 digits";
}

TEST(ClockHeader, RefusesAnythingElse) {
  for (const std::string bad : {"", ",", "1", "1,", ",1", "1,2,3", "-1,2", "1,-2", "+1,2", " 1,2", "1 ,2",
                                "1,2 ", "0x10,2", "1.5,2", "1000000000000000,1", "1,99999999999999999999",
                                "a,b"}) {
    EXPECT_EQ(parse_clock_header(bad).has_value(), false) << "'" << bad << "'";
  }
}

}  // namespace
}  // namespace cronwheel::executor
