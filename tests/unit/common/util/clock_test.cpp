#include <gtest/gtest.h>

#include <thread>

#include "common/util/clock.h"
#include "tests/support/fake_clock.h"

namespace cronwheel {
namespace {

using namespace std::chrono_literals;

TEST(FakeClock, AdvanceMovesWallAndSteadyTimeTogether) {
  testing::FakeClock clock(1'000);
  auto start = clock.steady_now();
  clock.advance(1500ms);
  EXPECT_EQ(clock.now_ms(), 2'500);
  EXPECT_EQ(clock.steady_now() - start, 1500ms);
}

TEST(FakeClock, SleeperWakesOnlyWhenDeadlinePasses) {
  testing::FakeClock clock;
  std::atomic<bool> woke{false};
  std::jthread sleeper([&](std::stop_token st) {
    woke = clock.sleep_until(clock.steady_now() + 10s, st);
  });
  clock.wait_for_sleepers(1);
  clock.advance(9s);
  clock.wait_for_sleepers(1);  // still parked: deadline not reached
  EXPECT_FALSE(woke);
  clock.advance(1s);
  sleeper.join();
  EXPECT_TRUE(woke);
}

TEST(FakeClock, StopRequestWakesSleeperEarly) {
  testing::FakeClock clock;
  std::atomic<int> result{-1};
  std::jthread sleeper([&](std::stop_token st) {
    result = clock.sleep_until(clock.steady_now() + 1h, st) ? 1 : 0;
  });
  clock.wait_for_sleepers(1);
  sleeper.request_stop();
  sleeper.join();
  EXPECT_EQ(result, 0);
}

TEST(SystemClock, StopRequestInterruptsRealSleep) {
  auto& clock = common::SystemClock::instance();
  std::stop_source source;
  std::jthread stopper([&] {
    std::this_thread::sleep_for(20ms);
    source.request_stop();
  });
  auto begin = std::chrono::steady_clock::now();
  EXPECT_FALSE(clock.sleep_until(clock.steady_now() + 60s, source.get_token()));
  EXPECT_LT(std::chrono::steady_clock::now() - begin, 30s);
}

TEST(SystemClock, ReachesDeadline) {
  auto& clock = common::SystemClock::instance();
  auto deadline = clock.steady_now() + 5ms;
  EXPECT_TRUE(clock.sleep_until(deadline, {}));
  EXPECT_GE(clock.steady_now(), deadline);
}

}  // namespace
}  // namespace cronwheel
