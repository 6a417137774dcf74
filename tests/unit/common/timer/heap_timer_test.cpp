// What is particular to the heap: exact deadlines and waking the worker for an earlier one.

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "common/timer/heap_timer.h"
#include "tests/support/fake_clock.h"
#include "tests/unit/common/timer/timer_test_support.h"

namespace cronwheel::timer_test {
namespace {

using common::HeapTimer;

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
