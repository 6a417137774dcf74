#include <gtest/gtest.h>

#include <chrono>

#include "admin/auth/login_rate_limiter.h"
#include "tests/support/fake_clock.h"

namespace cronwheel::admin {
namespace {

using namespace std::chrono_literals;

class LoginRateLimiterTest : public ::testing::Test {
 protected:
  void fail(int times, const std::string& user = "alice", const std::string& address = "10.0.0.1") {
    for (int i = 0; i < times; ++i) limiter_.record_failure(user, address);
  }

  cronwheel::testing::FakeClock clock_;
  LoginRateLimiter limiter_{clock_};  // 5 per user, 20 per address, 15 minutes
};

TEST_F(LoginRateLimiterTest, AllowsAttemptsBelowTheLimit) {
  EXPECT_FALSE(limiter_.retry_after("alice", "10.0.0.1"));
  fail(4);
  EXPECT_FALSE(limiter_.retry_after("alice", "10.0.0.1"));
}

TEST_F(LoginRateLimiterTest, BlocksAUserAfterFiveFailuresFromAnyAddress) {
  fail(5);
  auto wait = limiter_.retry_after("alice", "10.0.0.1");
  ASSERT_TRUE(wait);
  EXPECT_EQ(*wait, 15min);
  // Another address does not help the guesser, and other users are not affected.
  EXPECT_TRUE(limiter_.retry_after("alice", "10.0.0.2"));
  EXPECT_FALSE(limiter_.retry_after("bob", "10.0.0.2"));
}

TEST_F(LoginRateLimiterTest, RetryAfterIsWhenTheOldestFailureLeavesTheWindow) {
  fail(1);
  clock_.advance(5min);
  fail(4);
  EXPECT_EQ(limiter_.retry_after("alice", "10.0.0.1"), std::optional<std::chrono::seconds>(10min));
  clock_.advance(10min - 1ms);
  EXPECT_EQ(limiter_.retry_after("alice", "10.0.0.1"), std::optional<std::chrono::seconds>(1s));
  clock_.advance(1ms);
  EXPECT_FALSE(limiter_.retry_after("alice", "10.0.0.1"));
  // One more failure blocks again: four of the five are still in the window.
  fail(1);
  EXPECT_EQ(limiter_.retry_after("alice", "10.0.0.1"), std::optional<std::chrono::seconds>(5min));
}

TEST_F(LoginRateLimiterTest, RoundsRetryAfterUpToWholeSeconds) {
  fail(5);
  clock_.advance(15min - 1500ms);
  EXPECT_EQ(limiter_.retry_after("alice", "10.0.0.1"), std::optional<std::chrono::seconds>(2s));
}

TEST_F(LoginRateLimiterTest, FailuresOutsideTheWindowDoNotCount) {
  for (int i = 0; i < 10; ++i) {
    fail(1);
    clock_.advance(4min);
  }
  EXPECT_FALSE(limiter_.retry_after("alice", "10.0.0.1"));
}

TEST_F(LoginRateLimiterTest, SuccessClearsTheUserButNotTheAddress) {
  fail(4, "alice");
  limiter_.record_success("alice");
  fail(4, "alice");
  EXPECT_FALSE(limiter_.retry_after("alice", "10.0.0.1"));

  // Someone with one valid account cannot reset the address count by logging into it.
  LoginRateLimiter limiter(clock_, {.max_failures_per_user = 5, .max_failures_per_address = 6});
  for (int i = 0; i < 6; ++i) {
    limiter.record_failure("victim-" + std::to_string(i), "10.0.0.9");
    limiter.record_success("attacker");
  }
  EXPECT_TRUE(limiter.retry_after("attacker", "10.0.0.9"));
}

TEST_F(LoginRateLimiterTest, BlocksAnAddressGuessingManyNames) {
  for (int i = 0; i < 20; ++i) limiter_.record_failure("user" + std::to_string(i), "10.0.0.66");
  EXPECT_TRUE(limiter_.retry_after("somebody-else", "10.0.0.66"));
  EXPECT_FALSE(limiter_.retry_after("somebody-else", "10.0.0.67"));
}

TEST_F(LoginRateLimiterTest, KeepsItsMemoryBounded) {
  LoginRateLimiter limiter(clock_, {.max_keys = 100});
  for (int i = 0; i < 1000; ++i) {
    limiter.record_failure("user" + std::to_string(i), "10.1." + std::to_string(i / 250) + "." + std::to_string(i % 250));
    clock_.advance(1ms);
  }
  EXPECT_LE(limiter.tracked_keys(), 200u);
  // The newest keys are the ones kept.
  for (int i = 0; i < 4; ++i) limiter.record_failure("user999", "10.9.9.9");
  EXPECT_TRUE(limiter.retry_after("user999", "10.9.9.8"));
}

TEST_F(LoginRateLimiterTest, ExpiredKeysAreForgotten) {
  fail(3, "alice");
  fail(3, "bob", "10.0.0.2");
  EXPECT_EQ(limiter_.tracked_keys(), 4u);
  clock_.advance(16min);
  EXPECT_FALSE(limiter_.retry_after("alice", "10.0.0.1"));
  EXPECT_FALSE(limiter_.retry_after("bob", "10.0.0.2"));
  EXPECT_EQ(limiter_.tracked_keys(), 0u);
}

}  // namespace
}  // namespace cronwheel::admin
