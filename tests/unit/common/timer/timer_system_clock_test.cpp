// Both wheels against the operating system's clock (timer_system_clock_tests.h).

#include <gtest/gtest.h>

#include "tests/unit/common/timer/timer_system_clock_tests.h"
#include "tests/unit/common/timer/timer_test_support.h"

namespace cronwheel::timer_test::system_clock {

using Wheels = ::testing::Types<WheelTimerType, HierarchicalWheelTimerType>;
INSTANTIATE_TYPED_TEST_SUITE_P(Wheels, TimerOnSystemClock, Wheels, TimerTypeNames);

}  // namespace cronwheel::timer_test::system_clock
