#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>

#include "admin/auth/login_rate_limiter.h"
#include "tests/support/fake_clock.h"

namespace cronwheel::admin {
namespace {

using namespace std::chrono_literals;
using Wait = std::optional<std::chrono::seconds>;

constexpr const char* kHome = "10.0.0.1";       // the account owner's address
constexpr const char* kAttacker = "10.0.0.66";  // somebody else's

class LoginRateLimiterTest : public ::testing::Test {
 protected:
  void fail(int times, const std::string& account = "alice", const std::string& address = kHome) {
    for (int i = 0; i < times; ++i) limiter_.record_failure(account, address);
  }
  // Fails as a patient guesser would: waiting out each Retry-After before the next guess.
  void fail_patiently(int times, const std::string& account = "alice", const std::string& address = kHome) {
    for (int i = 0; i < times; ++i) {
      if (auto wait = limiter_.retry_after(account, address)) clock_.advance(*wait);
      limiter_.record_failure(account, address);
    }
  }

  cronwheel::testing::FakeClock clock_;
  // Defaults: per pair 5 free in 24 h, then 1 s doubling to 15 min; per address 20 free in
  // 1 h, to 15 min; per account 10 free in 1 h, to 30 s.
  LoginRateLimiter limiter_{clock_};
};

TEST_F(LoginRateLimiterTest, AllowsTheFreeFailuresThenWaitsDoubling) {
  EXPECT_EQ(limiter_.retry_after("alice", kHome), std::nullopt);
  fail(5);
  EXPECT_EQ(limiter_.retry_after("alice", kHome), std::nullopt);
  for (auto expected : {1s, 2s, 4s, 8s, 16s}) {
    fail(1);
    EXPECT_EQ(limiter_.retry_after("alice", kHome), Wait(expected));
    clock_.advance(expected - 1ms);
    EXPECT_EQ(limiter_.retry_after("alice", kHome), Wait(1s));
    clock_.advance(1ms);
    EXPECT_EQ(limiter_.retry_after("alice", kHome), std::nullopt) << "after " << expected.count() << " s";
  }
}

TEST_F(LoginRateLimiterTest, TheWaitIsCappedAndNeverAHardBlock) {
  fail_patiently(40);
  EXPECT_EQ(limiter_.retry_after("alice", kHome), Wait(15min));
  clock_.advance(15min);
  EXPECT_EQ(limiter_.retry_after("alice", kHome), std::nullopt);
}

TEST_F(LoginRateLimiterTest, RoundsRetryAfterUpToWholeSeconds) {
  fail(8);  // 4 s
  clock_.advance(1500ms);
  EXPECT_EQ(limiter_.retry_after("alice", kHome), Wait(3s));
}

TEST_F(LoginRateLimiterTest, AGuesserElsewhereDoesNotSlowTheOwnerDown) {
  // Far more failures on alice than any limit, from another address...
  fail(100, "alice", kAttacker);
  EXPECT_EQ(limiter_.retry_after("alice", kAttacker), Wait(15min));
  // ...and from many others.
  for (int i = 0; i < 500; ++i) fail(3, "alice", "192.0.2." + std::to_string(i % 250) + "/" + std::to_string(i));
  // The owner, at home, goes ahead at once.
  EXPECT_EQ(limiter_.retry_after("alice", kHome), std::nullopt);
  // A typo during the attack costs the owner the account's short wait, never more.
  for (int typo = 0; typo < 5; ++typo) {
    fail(1);
    auto wait = limiter_.retry_after("alice", kHome);
    ASSERT_TRUE(wait);
    EXPECT_LE(*wait, 30s);
    clock_.advance(*wait);
    EXPECT_EQ(limiter_.retry_after("alice", kHome), std::nullopt);
  }
  limiter_.record_success("alice", kHome);
  EXPECT_EQ(limiter_.retry_after("alice", kHome), std::nullopt);
  // The guesser still waits.
  EXPECT_TRUE(limiter_.retry_after("alice", kAttacker));
}

TEST_F(LoginRateLimiterTest, AnAccountUnderAttackCostsEachGuessingAddressItsFreeFailures) {
  for (int i = 0; i < 11; ++i) fail(1, "alice", "192.0.2." + std::to_string(i));
  // A new guesser's first failure on alice already makes it wait.
  fail(1, "alice", "198.51.100.7");
  EXPECT_TRUE(limiter_.retry_after("alice", "198.51.100.7"));
  // Not so on another account, nor for an address that has not failed on alice.
  EXPECT_EQ(limiter_.retry_after("bob", "198.51.100.7"), std::nullopt);
  EXPECT_EQ(limiter_.retry_after("alice", "198.51.100.8"), std::nullopt);
}

TEST_F(LoginRateLimiterTest, SprayingManyAccountsFromOneAddressBacksOff) {
  for (int i = 0; i < 20; ++i) limiter_.record_failure("user" + std::to_string(i), kAttacker);
  EXPECT_EQ(limiter_.retry_after("somebody-else", kAttacker), std::nullopt);
  limiter_.record_failure("user20", kAttacker);
  EXPECT_EQ(limiter_.retry_after("somebody-else", kAttacker), Wait(1s));
  limiter_.record_failure("user21", kAttacker);
  EXPECT_EQ(limiter_.retry_after("somebody-else", kAttacker), Wait(2s));
  EXPECT_EQ(limiter_.retry_after("somebody-else", kHome), std::nullopt);
}

TEST_F(LoginRateLimiterTest, SuccessClearsThePairButNotTheAddress) {
  fail(7);
  EXPECT_TRUE(limiter_.retry_after("alice", kHome));
  limiter_.record_success("alice", kHome);
  EXPECT_EQ(limiter_.retry_after("alice", kHome), std::nullopt);
  // Only that pair: the same account from another address still waits.
  fail(7, "alice", kAttacker);
  limiter_.record_success("alice", kHome);
  EXPECT_TRUE(limiter_.retry_after("alice", kAttacker));

  // Someone with one valid account cannot reset the address count by logging into it.
  for (int i = 0; i < 22; ++i) {
    limiter_.record_failure("victim-" + std::to_string(i), "10.0.0.9");
    limiter_.record_success("attacker", "10.0.0.9");
  }
  EXPECT_TRUE(limiter_.retry_after("attacker", "10.0.0.9"));
}

TEST_F(LoginRateLimiterTest, FailuresOutsideTheWindowDoNotCount) {
  fail(7);
  EXPECT_EQ(limiter_.retry_after("alice", kHome), Wait(2s));
  clock_.advance(24h);
  EXPECT_EQ(limiter_.retry_after("alice", kHome), std::nullopt);
  EXPECT_EQ(limiter_.tracked_keys(), 0u);
  fail(1);
  EXPECT_EQ(limiter_.retry_after("alice", kHome), std::nullopt) << "the old failures count no more";

  // A busy shared address: a typo every five minutes, each by someone else, never adds up
  // to a wait.
  for (int i = 0; i < 100; ++i) {
    limiter_.record_failure("colleague" + std::to_string(i), "10.0.0.200");
    clock_.advance(5min);
  }
  EXPECT_EQ(limiter_.retry_after("newcomer", "10.0.0.200"), std::nullopt);
}

TEST_F(LoginRateLimiterTest, APatientGuesserSettlesAtTheCap) {
  // Pair failures count for a day: waiting out the cap does not earn fresh free failures.
  fail_patiently(30);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(limiter_.retry_after("alice", kAttacker), std::nullopt);  // another address
    EXPECT_EQ(limiter_.retry_after("alice", kHome), Wait(15min)) << i;
    fail_patiently(1);
  }
}

TEST_F(LoginRateLimiterTest, AnAddressAndAnAccountCannotPoseAsAnotherPair) {
  fail(7, "alice", "10.0.0.1");
  EXPECT_TRUE(limiter_.retry_after("alice", "10.0.0.1"));
  EXPECT_EQ(limiter_.retry_after("0.0.0.1alice", "1"), std::nullopt);
  EXPECT_EQ(limiter_.retry_after("1alice", "10.0.0."), std::nullopt);
}

TEST_F(LoginRateLimiterTest, KeepsItsMemoryBounded) {
  LoginRateLimiter limiter(clock_, {.max_keys = 100});
  for (int i = 0; i < 1000; ++i) {
    limiter.record_failure("user" + std::to_string(i), "10.1." + std::to_string(i / 250) + "." + std::to_string(i % 250));
    clock_.advance(1ms);
  }
  EXPECT_LE(limiter.tracked_keys(), 300u);
  // The newest keys are the ones kept.
  for (int i = 0; i < 6; ++i) limiter.record_failure("user999", "10.9.9.9");
  EXPECT_TRUE(limiter.retry_after("user999", "10.9.9.9"));
  // However long the names, a key keeps only its first kMaxKeyBytes.
  const std::string long_name(100'000, 'x');
  for (int i = 0; i < 6; ++i) limiter.record_failure(long_name, "10.9.9.8");
  EXPECT_TRUE(limiter.retry_after(long_name.substr(0, LoginRateLimiter::kMaxKeyBytes) + "y", "10.9.9.8"));
}

TEST_F(LoginRateLimiterTest, ExpiredKeysAreForgotten) {
  fail(3, "alice");
  fail(3, "bob", "10.0.0.2");
  EXPECT_EQ(limiter_.tracked_keys(), 6u);  // two pairs, two addresses, two accounts
  clock_.advance(24h);
  EXPECT_EQ(limiter_.retry_after("alice", kHome), std::nullopt);
  EXPECT_EQ(limiter_.retry_after("bob", "10.0.0.2"), std::nullopt);
  EXPECT_EQ(limiter_.tracked_keys(), 0u);
}

TEST_F(LoginRateLimiterTest, AttemptsCountFromTheirStartSoABurstIsLimitedAsItArrives) {
  // 64 logins arrive together, none finished yet: the pair's 5 free ones and the one that starts
  // the wait go ahead, as they would one after the other; the rest wait.
  int admitted = 0;
  for (int i = 0; i < 64; ++i) admitted += limiter_.begin_attempt("alice", kAttacker).admitted() ? 1 : 0;
  EXPECT_EQ(admitted, 6);
  auto refused = limiter_.begin_attempt("alice", kAttacker);
  EXPECT_FALSE(refused.admitted());
  EXPECT_EQ(refused.retry_after, Wait(1s));
}

TEST_F(LoginRateLimiterTest, ABurstOfUnknownNamesFromOneAddressPassesOnlyTheAddressesFreeAttempts) {
  int admitted = 0;
  for (int i = 0; i < 64; ++i) {
    admitted += limiter_.begin_attempt("nobody-" + std::to_string(i), kAttacker).admitted() ? 1 : 0;
  }
  EXPECT_EQ(admitted, 21);
}

TEST_F(LoginRateLimiterTest, ASucceededAttemptNoLongerCounts) {
  // Many people behind one address log in correctly: their attempts never add up.
  for (int i = 0; i < 100; ++i) {
    const auto user = "user-" + std::to_string(i);
    auto attempt = limiter_.begin_attempt(user, kHome);
    ASSERT_TRUE(attempt.admitted()) << i;
    limiter_.attempt_succeeded(user, kHome, attempt.started);
    clock_.advance(1ms);
  }
  EXPECT_EQ(limiter_.tracked_keys(), 0u);
}

TEST_F(LoginRateLimiterTest, AnAttemptNeverTakenBackStaysAFailure) {
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(limiter_.begin_attempt("alice", kHome).admitted());
  auto right = limiter_.begin_attempt("alice", kHome);
  EXPECT_FALSE(right.admitted()) << "six unfinished or failed attempts started the wait";
}

TEST_F(LoginRateLimiterTest, ASuccessTakesBackOnlyItsOwnAttempt) {
  // Four failures from the address on other names, then alice's attempt that succeeds.
  for (int i = 0; i < 4; ++i) limiter_.begin_attempt("guess-" + std::to_string(i), kHome);
  clock_.advance(1ms);
  auto mine = limiter_.begin_attempt("alice", kHome);
  ASSERT_TRUE(mine.admitted());
  limiter_.attempt_succeeded("alice", kHome, mine.started);
  // The address keeps its four failures: 16 more go free and one starts the wait, then it waits.
  for (int i = 0; i < 17; ++i) {
    ASSERT_TRUE(limiter_.begin_attempt("other-" + std::to_string(i), kHome).admitted()) << i;
  }
  EXPECT_FALSE(limiter_.begin_attempt("other-x", kHome).admitted());
}

}  // namespace
}  // namespace cronwheel::admin
