// The hierarchical wheel against the operating system's clock: a real sleep to the next
// bucket, a schedule() that wakes a worker sleeping towards a later one, and stop() waking an
// idle worker. Short (tens of milliseconds) and tolerant of a loaded machine.

#include <gtest/gtest.h>

#include <chrono>

#include "common/timer/hierarchical_wheel_timer.h"
#include "common/util/clock.h"
#include "tests/unit/common/timer/timer_test_support.h"

namespace cronwheel::timer_test {
namespace {

TEST(HierarchicalWheelOnSystemClock, FiresAfterTheDelay) {
  auto& clock = common::SystemClock::instance();
  FireLog log(clock);
  common::HierarchicalWheelTimer timer(clock);
  const auto start = clock.steady_now();
  timer.schedule(log.task(1), 20ms);
  ASSERT_TRUE(log.wait_for(1));
  EXPECT_GE(log.events()[0].at - start, 20ms);
}

TEST(HierarchicalWheelOnSystemClock, ScheduleWakesAWorkerSleepingTowardsALaterBucket) {
  auto& clock = common::SystemClock::instance();
  FireLog log(clock);
  common::HierarchicalWheelTimer timer(clock);
  timer.schedule(log.task(2), 1h);
  const auto start = clock.steady_now();
  timer.schedule(log.task(1), 20ms);
  ASSERT_TRUE(log.wait_for(1));
  EXPECT_GE(log.events()[0].at - start, 20ms);
  EXPECT_EQ(timer.stop().size(), 1u);
}

TEST(HierarchicalWheelOnSystemClock, StopInterruptsAnIdleWorker) {
  auto& clock = common::SystemClock::instance();
  const auto start = clock.steady_now();
  {
    common::HierarchicalWheelTimer timer(clock);
    timer.schedule([] {}, 24h);
  }
  EXPECT_LT(clock.steady_now() - start, 10s);
}

}  // namespace
}  // namespace cronwheel::timer_test
