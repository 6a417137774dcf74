// The benchmarks' HeapTimer: the Timer contract and the system-clock suite the wheels pass
// too, then what is particular to the heap: exact deadlines and waking the worker for an
// earlier one.

#include "tests/bench/heap_timer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <utility>
#include <vector>

#include "tests/support/fake_clock.h"
#include "tests/unit/common/timer/timer_contract_tests.h"
#include "tests/unit/common/timer/timer_system_clock_tests.h"
#include "tests/unit/common/timer/timer_test_support.h"

namespace cronwheel::timer_test {

// A timer type for the shared suites (timer_test_support.h).
struct HeapTimerType {
  static constexpr const char* kName = "Heap";
  // Exact: late only by how far the clock moved past the deadline in one step.
  static constexpr std::chrono::nanoseconds max_lateness(std::chrono::nanoseconds step) {
    return step;
  }
  static std::unique_ptr<common::Timer> make(common::Clock& clock,
                                             common::TimerOptions options) {
    return std::make_unique<bench::HeapTimer>(clock, std::move(options));
  }
  // The heap's worker sleeps until the earliest deadline.
  static std::unique_ptr<common::Timer> make_sleepy(common::Clock& clock) {
    return std::make_unique<bench::HeapTimer>(clock);
  }
};

namespace contract {
INSTANTIATE_TYPED_TEST_SUITE_P(Heap, TimerContract, ::testing::Types<HeapTimerType>,
                               TimerTypeNames);
}  // namespace contract

namespace system_clock {
INSTANTIATE_TYPED_TEST_SUITE_P(Heap, TimerOnSystemClock, ::testing::Types<HeapTimerType>,
                               TimerTypeNames);
}  // namespace system_clock

namespace {

using bench::HeapTimer;

TEST(HeapTimerTest, FiresExactlyAtItsDeadline) {
  testing::FakeClock clock;
  FireLog log(clock);
  HeapTimer timer(clock, {.manual = true});
  timer.schedule(log.task(1), 250ms);
  clock.advance(250ms - 1ns);
  EXPECT_EQ(timer.process_until(clock.steady_now()), 0u);
  clock.advance(1ns);
  EXPECT_EQ(timer.process_until(clock.steady_now()), 1u);
  EXPECT_EQ(log.events().at(0).at, common::Clock::SteadyTime{} + 250ms);
}

TEST(HeapTimerTest, EarlierTimeoutWakesTheSleepingWorker) {
  testing::FakeClock clock;
  FireLog log(clock);
  HeapTimer timer(clock);
  timer.schedule(log.task(10), 10s);
  clock.wait_for_sleepers(1);
  timer.schedule(log.task(1), 1s);  // the worker sleeps towards 10 s: it must be woken
  clock.advance(1s);
  ASSERT_TRUE(log.wait_for(1));
  EXPECT_EQ(log.ids(), std::vector<int>{1});
  EXPECT_EQ(log.events()[0].at, common::Clock::SteadyTime{} + 1s);
}

TEST(HeapTimerTest, CancelRemovesFromTheMiddleOfTheHeap) {
  testing::FakeClock clock;
  FireLog log(clock);
  HeapTimer timer(clock, {.manual = true});
  std::vector<common::TimerHandle> handles;
  for (int i = 0; i < 100; ++i) {
    handles.push_back(timer.schedule(log.task(i), std::chrono::milliseconds((i * 37) % 100)));
  }
  std::vector<int> expected;
  for (int i = 0; i < 100; ++i) {
    if (i % 3 == 0) {
      handles[i].cancel();
    } else {
      expected.push_back(i);
    }
  }
  EXPECT_EQ(timer.pending_timeouts(), expected.size());
  clock.advance(1s);
  EXPECT_EQ(timer.process_until(clock.steady_now()), expected.size());
  // Deadline order: i*37 % 100 is a permutation of 0..99.
  std::sort(expected.begin(), expected.end(),
            [](int a, int b) { return (a * 37) % 100 < (b * 37) % 100; });
  EXPECT_EQ(log.ids(), expected);
}

}  // namespace
}  // namespace cronwheel::timer_test
