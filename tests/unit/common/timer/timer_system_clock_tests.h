#pragma once

// The timers against the operating system's clock, as one typed GoogleTest suite: the real
// sleeps, the wake-ups for an earlier timeout, and stop() interrupting an idle worker. Run on
// both wheels (timer_system_clock_test.cpp) and on the benchmarks' HeapTimer
// (tests/bench/heap_timer_test.cpp). Short (tens of milliseconds) and tolerant of a loaded
// machine: only "never early" and "stop does not wait for the sleep" are asserted.
//
// A binary instantiates it, in namespace cronwheel::timer_test::system_clock, with timer
// types as timer_test_support.h describes them.

#include <gtest/gtest.h>

#include <chrono>

#include "common/util/clock.h"
#include "tests/unit/common/timer/timer_test_support.h"

namespace cronwheel::timer_test::system_clock {

template <typename T>
class TimerOnSystemClock : public ::testing::Test {
 protected:
  common::SystemClock& clock_ = common::SystemClock::instance();
  FireLog log_{clock_};
};

TYPED_TEST_SUITE_P(TimerOnSystemClock);

TYPED_TEST_P(TimerOnSystemClock, FiresAfterTheDelay) {
  auto timer = TypeParam::make(this->clock_, {});
  const auto start = this->clock_.steady_now();
  timer->schedule(this->log_.task(1), 20ms);
  ASSERT_TRUE(this->log_.wait_for(1));
  EXPECT_GE(this->log_.events()[0].at - start, 20ms);
}

// A worker that sleeps towards the later timeout (the hierarchical wheel, the heap) must be
// woken for the earlier one.
TYPED_TEST_P(TimerOnSystemClock, ATimeoutScheduledBehindALaterOneFiresWithoutWaitingForIt) {
  auto timer = TypeParam::make(this->clock_, {});
  timer->schedule(this->log_.task(2), 1h);
  const auto start = this->clock_.steady_now();
  timer->schedule(this->log_.task(1), 20ms);
  ASSERT_TRUE(this->log_.wait_for(1));
  EXPECT_GE(this->log_.events()[0].at - start, 20ms);
  EXPECT_EQ(timer->stop().size(), 1u);
}

TYPED_TEST_P(TimerOnSystemClock, StopInterruptsAnIdleWorker) {
  const auto start = this->clock_.steady_now();
  {
    auto timer = TypeParam::make_sleepy(this->clock_);
    timer->schedule([] {}, 24h);
  }
  EXPECT_LT(this->clock_.steady_now() - start, 10s);
}

REGISTER_TYPED_TEST_SUITE_P(TimerOnSystemClock,
                            FiresAfterTheDelay,
                            ATimeoutScheduledBehindALaterOneFiresWithoutWaitingForIt,
                            StopInterruptsAnIdleWorker);

}  // namespace cronwheel::timer_test::system_clock
