// The Timer contract (timer_contract_tests.h) on both wheels.

#include <gtest/gtest.h>

#include "tests/unit/common/timer/timer_contract_tests.h"
#include "tests/unit/common/timer/timer_test_support.h"

namespace cronwheel::timer_test::contract {

using Wheels = ::testing::Types<WheelTimerType, HierarchicalWheelTimerType>;
INSTANTIATE_TYPED_TEST_SUITE_P(Wheels, TimerContract, Wheels, TimerTypeNames);

}  // namespace cronwheel::timer_test::contract
