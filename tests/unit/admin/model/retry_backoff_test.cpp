// The wait before a retry: fixed, exponential with a ceiling, and jitter.
#include "admin/model/retry_backoff.h"

#include <gtest/gtest.h>

#include <set>

namespace cronwheel::admin {
namespace {

RetryPolicy exponential(double multiplier = 2.0, int max_interval = 0, int jitter = 0) {
  return RetryPolicy{RetryBackoff::kExponential, multiplier, max_interval, jitter};
}

TEST(RetryBackoff, FixedWaitsTheIntervalEveryTime) {
  for (int attempt : {0, 1, 2, 7}) EXPECT_EQ(retry_delay_ms(RetryPolicy{}, 30, attempt, 1), 30'000) << attempt;
  EXPECT_EQ(retry_delay_ms(RetryPolicy{}, 0, 3, 1), 0);
}

TEST(RetryBackoff, ExponentialMultipliesTheIntervalForEachRetryAfterTheFirst) {
  EXPECT_EQ(retry_delay_ms(exponential(), 10, 1, 1), 10'000);
  EXPECT_EQ(retry_delay_ms(exponential(), 10, 2, 1), 20'000);
  EXPECT_EQ(retry_delay_ms(exponential(), 10, 3, 1), 40'000);
  EXPECT_EQ(retry_delay_ms(exponential(), 10, 0, 1), 10'000) << "an attempt below 1 is the first";
  EXPECT_EQ(retry_delay_ms(exponential(1.5), 10, 3, 1), 22'500);
  EXPECT_EQ(retry_delay_ms(exponential(1.0), 10, 9, 1), 10'000);
}

TEST(RetryBackoff, TheCeilingHoldsAndNothingWaitsLongerThanThirtyDays) {
  EXPECT_EQ(retry_delay_ms(exponential(2.0, 60), 10, 3, 1), 40'000);
  EXPECT_EQ(retry_delay_ms(exponential(2.0, 60), 10, 4, 1), 60'000);
  EXPECT_EQ(retry_delay_ms(exponential(2.0, 60), 10, 100, 1), 60'000);
  const std::int64_t month = kMaxRetryDelaySeconds * 1000;
  EXPECT_EQ(retry_delay_ms(exponential(10.0), 3600, 5000, 1), month) << "pow overflowing is still capped";
  EXPECT_EQ(retry_delay_ms(RetryPolicy{}, 2'000'000'000, 1, 1), month);
  // Out-of-range multipliers (a row written around the API) are held to 1-10.
  EXPECT_EQ(retry_delay_ms(exponential(0.1), 10, 3, 1), 10'000);
  EXPECT_EQ(retry_delay_ms(exponential(1e9), 10, 2, 1), 100'000);
}

TEST(RetryBackoff, JitterShortensEachWaitByUpToItsShareAndSpreadsRunsOut) {
  std::set<std::int64_t> waits;
  for (std::uint64_t run = 1; run <= 1000; ++run) {
    const auto wait = retry_delay_ms(exponential(2.0, 0, 50), 10, 2, run);
    EXPECT_GT(wait, 10'000) << run;  // 20 s shortened by less than half
    EXPECT_LE(wait, 20'000) << run;
    waits.insert(wait);
    EXPECT_EQ(retry_delay_ms(exponential(2.0, 0, 50), 10, 2, run), wait) << "the same run, the same wait";
  }
  EXPECT_GT(waits.size(), 900u) << "consecutive run ids get different waits";
  // Both halves of the range are used.
  EXPECT_LT(*waits.begin(), 12'000);
  EXPECT_GT(*waits.rbegin(), 18'000);
  EXPECT_EQ(retry_delay_ms(exponential(2.0, 0, 0), 10, 2, 12345), 20'000) << "no jitter, no change";
  const auto full = retry_delay_ms(RetryPolicy{RetryBackoff::kFixed, 2.0, 0, 100}, 10, 1, 99);
  EXPECT_GE(full, 0);
  EXPECT_LE(full, 10'000);
}

TEST(RetryBackoff, NamesRoundTrip) {
  for (auto backoff : {RetryBackoff::kFixed, RetryBackoff::kExponential}) {
    EXPECT_EQ(parse_retry_backoff(to_string(backoff)), backoff);
  }
  EXPECT_EQ(parse_retry_backoff("exponential"), std::nullopt);
  EXPECT_EQ(parse_retry_backoff(""), std::nullopt);
}

}  // namespace
}  // namespace cronwheel::admin
