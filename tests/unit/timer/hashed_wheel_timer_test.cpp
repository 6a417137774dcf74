// What is particular to the wheel: tick rounding, rounds, the per-tick transfer bound and the
// worker's absolute tick deadlines.

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "common/timer/hashed_wheel_timer.h"
#include "tests/support/fake_clock.h"
#include "tests/unit/timer/timer_test_support.h"

namespace cronwheel::timer_test {
namespace {

using common::HashedWheelTimer;
using common::TimerOptions;
using common::WheelOptions;

class HashedWheelTimerTest : public ::testing::Test {
 protected:
  std::size_t process(HashedWheelTimer& timer) {
    return timer.process_until(clock_.steady_now());
  }
  std::size_t step(HashedWheelTimer& timer, std::chrono::nanoseconds d) {
    clock_.advance(d);
    return process(timer);
  }

  testing::FakeClock clock_;
  FireLog log_{clock_};
};

TEST_F(HashedWheelTimerTest, FiresInTheTickAfterItsDeadline) {
  HashedWheelTimer timer(clock_, {.tick = 100ms}, {.manual = true});
  timer.schedule(log_.task(1), 250ms);
  step(timer, 250ms);
  EXPECT_EQ(log_.size(), 0u);
  step(timer, 50ms - 1ns);
  EXPECT_EQ(log_.size(), 0u);
  step(timer, 1ns);  // the end of the tick holding 250 ms
  EXPECT_EQ(log_.ids(), std::vector<int>{1});
  EXPECT_EQ(log_.events()[0].at, common::Clock::SteadyTime{} + 300ms);
}

TEST_F(HashedWheelTimerTest, DeadlineOnATickBoundaryFiresAtThatBoundary) {
  HashedWheelTimer timer(clock_, {.tick = 100ms}, {.manual = true});
  timer.schedule(log_.task(1), 300ms);
  step(timer, 300ms - 1ns);
  EXPECT_EQ(log_.size(), 0u);
  step(timer, 1ns);
  EXPECT_EQ(log_.ids(), std::vector<int>{1});
}

TEST_F(HashedWheelTimerTest, DeadlineBeyondOneTurnWaitsItsRounds) {
  // 8 buckets of 100 ms: one turn is 800 ms. 2.05 s is in tick 20, bucket 4, after 2 turns;
  // bucket 4 is visited at 0.5 s and 1.3 s without firing it.
  HashedWheelTimer timer(clock_, {.tick = 100ms, .wheel_size = 8}, {.manual = true});
  timer.schedule(log_.task(1), 2050ms);
  timer.schedule(log_.task(2), 450ms);  // same bucket, first turn
  for (int t = 1; t <= 20; ++t) {
    step(timer, 100ms);
    if (t == 5) {
      EXPECT_EQ(log_.ids(), std::vector<int>{2});
    }
  }
  EXPECT_EQ(log_.ids(), std::vector<int>{2});
  step(timer, 100ms);  // 2.1 s
  EXPECT_EQ(log_.ids(), (std::vector<int>{2, 1}));
  EXPECT_EQ(log_.events()[1].at, common::Clock::SteadyTime{} + 2100ms);
}

TEST_F(HashedWheelTimerTest, LateWorkerProcessesMissedTicksInOrder) {
  // Processing 3 s at once must visit every bucket of every missed tick, decrementing rounds
  // exactly once per visit, rather than jumping to the current bucket.
  HashedWheelTimer timer(clock_, {.tick = 100ms, .wheel_size = 8}, {.manual = true});
  for (int ms : {2750, 1150, 350, 1950, 50}) {
    timer.schedule(log_.task(ms), std::chrono::milliseconds(ms));
  }
  EXPECT_EQ(step(timer, 3s), 5u);
  EXPECT_EQ(log_.ids(), (std::vector<int>{50, 350, 1150, 1950, 2750}));
  EXPECT_EQ(timer.pending_timeouts(), 0u);
}

TEST_F(HashedWheelTimerTest, BacklogBeyondTheTransferBoundFiresLateButNeverEarlyOrLost) {
  HashedWheelTimer timer(clock_, {.tick = 100ms, .max_transfers_per_tick = 2},
                         {.manual = true});
  for (int i = 0; i < 5; ++i) timer.schedule(log_.task(i), 0ns);
  // Each tick places two; the others wait and are placed late, in the tick being processed.
  step(timer, 100ms);
  EXPECT_EQ(log_.ids(), (std::vector<int>{0, 1}));
  step(timer, 100ms);
  EXPECT_EQ(log_.ids(), (std::vector<int>{0, 1, 2, 3}));
  step(timer, 100ms);
  EXPECT_EQ(log_.ids(), (std::vector<int>{0, 1, 2, 3, 4}));
  // A late step still processes tick by tick, two placements per tick.
  for (int i = 5; i < 11; ++i) timer.schedule(log_.task(i), 0ns);
  EXPECT_EQ(step(timer, 300ms), 6u);
  for (const auto& e : log_.events()) EXPECT_GE(e.at, common::Clock::SteadyTime{} + 100ms);
}

TEST_F(HashedWheelTimerTest, CancelledTimeoutStillInTheBacklogIsDropped) {
  HashedWheelTimer timer(clock_, {.tick = 100ms, .max_transfers_per_tick = 1},
                         {.manual = true});
  std::vector<common::TimerHandle> handles;
  for (int i = 0; i < 4; ++i) handles.push_back(timer.schedule(log_.task(i), 0ns));
  step(timer, 100ms);  // 0 fired; 1, 2 and 3 still wait for a transfer
  EXPECT_EQ(handles[2].cancel(), common::CancelResult::kCancelled);
  step(timer, 500ms);
  EXPECT_EQ(log_.ids(), (std::vector<int>{0, 1, 3}));
  EXPECT_EQ(timer.pending_timeouts(), 0u);
}

TEST_F(HashedWheelTimerTest, CancelledTimeoutLeavesItsBucketAtTheNextStep) {
  HashedWheelTimer timer(clock_, {.tick = 100ms}, {.manual = true});
  auto handle = timer.schedule(log_.task(1), 150ms);
  timer.schedule(log_.task(2), 150ms);
  step(timer, 100ms);  // both placed in tick 1's bucket
  handle.cancel();
  step(timer, 100ms);  // unlinked from the cancellation list, then tick 1 expires
  step(timer, 1s);
  EXPECT_EQ(log_.ids(), std::vector<int>{2});
  EXPECT_TRUE(timer.stop().empty());
}

TEST_F(HashedWheelTimerTest, WorkerSleepsToAbsoluteTickBoundaries) {
  HashedWheelTimer timer(clock_, {.tick = 100ms});
  timer.schedule(log_.task(1), 190ms);
  clock_.advance(150ms);  // wakes the worker mid-tick (its 100 ms boundary passed)
  clock_.wait_for_sleepers(1);
  EXPECT_EQ(log_.size(), 0u);
  // A drifting worker would now sleep until 250 ms; this one sleeps until 200 ms.
  clock_.advance(50ms);
  clock_.wait_for_sleepers(1);
  EXPECT_EQ(log_.ids(), std::vector<int>{1});
  EXPECT_EQ(log_.events()[0].at, common::Clock::SteadyTime{} + 200ms);
}

TEST_F(HashedWheelTimerTest, WheelSizeIsRoundedUpToAPowerOfTwo) {
  HashedWheelTimer timer(clock_, {.tick = 10ms, .wheel_size = 5}, {.manual = true});
  EXPECT_EQ(timer.wheel_size(), 8u);
  EXPECT_EQ(timer.tick(), 10ms);
}

TEST_F(HashedWheelTimerTest, RejectsInvalidOptions) {
  TimerOptions manual{.manual = true};
  EXPECT_THROW(HashedWheelTimer(clock_, {.tick = 0ns}, manual), std::invalid_argument);
  EXPECT_THROW(HashedWheelTimer(clock_, {.wheel_size = 0}, manual), std::invalid_argument);
  EXPECT_THROW(HashedWheelTimer(clock_, {.wheel_size = (std::size_t{1} << 30) + 1}, manual),
               std::invalid_argument);
  EXPECT_THROW(HashedWheelTimer(clock_, {.max_transfers_per_tick = 0}, manual),
               std::invalid_argument);
}

TEST_F(HashedWheelTimerTest, HugeDelaysDoNotOverflow) {
  HashedWheelTimer timer(clock_, {.tick = 100ms}, {.manual = true});
  auto handle = timer.schedule(log_.task(1), std::chrono::nanoseconds::max());
  EXPECT_EQ(handle.deadline(), common::Clock::SteadyTime::max());
  step(timer, 1h);
  EXPECT_EQ(log_.size(), 0u);
  EXPECT_EQ(timer.stop().size(), 1u);
}

}  // namespace
}  // namespace cronwheel::timer_test
