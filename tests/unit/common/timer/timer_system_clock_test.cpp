// The timers against the operating system's clock: the real sleeps, wake-ups and stop
// requests. Short (tens of milliseconds) and tolerant of a loaded machine.

#include <gtest/gtest.h>

#include <chrono>

#include "common/timer/hashed_wheel_timer.h"
#include "common/timer/heap_timer.h"
#include "common/util/clock.h"
#include "tests/unit/common/timer/timer_test_support.h"

namespace cronwheel::timer_test {
namespace {

using common::SystemClock;

TEST(TimerOnSystemClock, WheelFiresAfterTheDelay) {
  auto& clock = SystemClock::instance();
  FireLog log(clock);
  common::HashedWheelTimer timer(clock, {.tick = 1ms, .wheel_size = 64});
  const auto start = clock.steady_now();
  timer.schedule(log.task(1), 20ms);
  ASSERT_TRUE(log.wait_for(1));
  EXPECT_GE(log.events()[0].at - start, 20ms);
}

TEST(TimerOnSystemClock, HeapFiresAfterTheDelayAndWakesForAnEarlierOne) {
  auto& clock = SystemClock::instance();
  FireLog log(clock);
  common::HeapTimer timer(clock);
  timer.schedule(log.task(2), 1h);
  const auto start = clock.steady_now();
  timer.schedule(log.task(1), 20ms);
  ASSERT_TRUE(log.wait_for(1));
  EXPECT_GE(log.events()[0].at - start, 20ms);
  EXPECT_EQ(timer.stop().size(), 1u);
}

TEST(TimerOnSystemClock, StopInterruptsIdleWorkers) {
  auto& clock = SystemClock::instance();
  const auto start = clock.steady_now();
  {
    common::HashedWheelTimer wheel(clock, {.tick = 1h});
    common::HeapTimer heap(clock);
  }
  EXPECT_LT(clock.steady_now() - start, 10s);
}

}  // namespace
}  // namespace cronwheel::timer_test
