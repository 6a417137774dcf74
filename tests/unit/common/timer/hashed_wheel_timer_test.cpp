// What is particular to the wheel: tick rounding, rounds, the per-tick transfer bound, the
// worker's absolute tick deadlines, and the bucket arrays: tombstones, compaction, positions
// and the memory they hold.

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <stdexcept>
#include <vector>

#include "common/timer/hashed_wheel_timer.h"
#include "tests/support/fake_clock.h"
#include "tests/unit/common/timer/timer_test_support.h"

namespace cronwheel::timer_test {
namespace {

using common::CancelResult;
using common::HashedWheelTimer;
using common::TimerHandle;
using common::detail::WheelInspector;
using common::TimerOptions;
using common::WheelOptions;

class HashedWheelTimerTest : public ManualTimerTest {};

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

// --- bucket arrays ---------------------------------------------------------------------------

TEST_F(HashedWheelTimerTest, CancelledEntryStaysATombstoneUntilItsBucketIsVisited) {
  HashedWheelTimer timer(clock_, {.tick = 100ms}, {.manual = true});
  timer.schedule(log_.task(1), 250ms);
  auto middle = timer.schedule(log_.task(2), 250ms);
  timer.schedule(log_.task(3), 250ms);
  process(timer);  // all three placed in tick 2's bucket
  EXPECT_EQ(WheelInspector::footprint(timer).entries, 3u);
  EXPECT_EQ(middle.cancel(), CancelResult::kCancelled);
  process(timer);
  auto held = WheelInspector::footprint(timer);
  EXPECT_EQ(held.entries, 3u);
  EXPECT_EQ(held.tombstones, 1u);
  step(timer, 300ms);
  EXPECT_EQ(log_.ids(), (std::vector<int>{1, 3}));
  held = WheelInspector::footprint(timer);
  EXPECT_EQ(held.entries, 0u);
  EXPECT_EQ(held.tombstones, 0u);
}

TEST_F(HashedWheelTimerTest, TombstonesAtTheEndOfABucketGoAtOnce) {
  HashedWheelTimer timer(clock_, {.tick = 100ms}, {.manual = true});
  timer.schedule(log_.task(1), 250ms);
  auto second = timer.schedule(log_.task(2), 250ms);
  auto third = timer.schedule(log_.task(3), 250ms);
  process(timer);
  third.cancel();
  second.cancel();
  process(timer);
  const auto held = WheelInspector::footprint(timer);
  EXPECT_EQ(held.entries, 1u);
  EXPECT_EQ(held.tombstones, 0u);
  step(timer, 300ms);
  EXPECT_EQ(log_.ids(), std::vector<int>{1});
}

TEST_F(HashedWheelTimerTest, CompactionKeepsOrderAndLaterCancelsFindTheMovedEntries) {
  HashedWheelTimer timer(clock_, {.tick = 100ms}, {.manual = true});
  std::vector<TimerHandle> handles;
  for (int i = 0; i < 100; ++i) handles.push_back(timer.schedule(log_.task(i), 250ms));
  process(timer);
  // Cancel the even ones and 1 and 3, newest first: the worker takes the cancellation list
  // newest first, so it tombstones the bucket front to back, and compacts it once the
  // tombstones outnumber the live entries, moving the survivors (5, 7, 9...) down.
  std::vector<int> doomed = {1, 3};
  for (int i = 0; i < 100; i += 2) doomed.push_back(i);
  std::sort(doomed.rbegin(), doomed.rend());
  for (int i : doomed) EXPECT_EQ(handles[i].cancel(), CancelResult::kCancelled);
  process(timer);
  auto held = WheelInspector::footprint(timer);
  EXPECT_EQ(held.entries - held.tombstones, 48u);
  EXPECT_LT(held.entries, 100u);
  EXPECT_LE(2 * held.tombstones, held.entries);
  // Cancelling entries that moved must hit them, not whatever now sits at their old place.
  for (int i : {7, 21, 99}) EXPECT_EQ(handles[i].cancel(), CancelResult::kCancelled);
  process(timer);
  held = WheelInspector::footprint(timer);
  EXPECT_EQ(held.entries - held.tombstones, 45u);
  EXPECT_LE(2 * held.tombstones, held.entries);
  step(timer, 300ms);
  std::vector<int> expected;
  for (int i = 5; i < 99; i += 2) {
    if (i != 7 && i != 21) expected.push_back(i);
  }
  EXPECT_EQ(log_.ids(), expected);
  EXPECT_EQ(WheelInspector::footprint(timer).entries, 0u);
}

TEST_F(HashedWheelTimerTest, WaitingEntriesMovedByTheWalkCanStillBeCancelled) {
  // 4 buckets of 100 ms. Bucket 2 holds, in order: x (due this turn), y (next turn), z (this
  // turn), w (two turns on). Visiting it at 300 ms expires x and z and moves y and w down;
  // x's task then cancels y, which must find y at its new position.
  HashedWheelTimer timer(clock_, {.tick = 100ms, .wheel_size = 4}, {.manual = true});
  TimerHandle y;
  CancelResult from_task = CancelResult::kNoTimeout;
  timer.schedule(
      [&] {
        log_.record(1);
        from_task = y.cancel();
      },
      250ms);
  y = timer.schedule(log_.task(2), 650ms);
  timer.schedule(log_.task(3), 250ms);
  timer.schedule(log_.task(4), 1050ms);
  step(timer, 300ms);
  EXPECT_EQ(log_.ids(), (std::vector<int>{1, 3}));
  EXPECT_EQ(from_task, CancelResult::kCancelled);
  step(timer, 800ms);
  EXPECT_EQ(log_.ids(), (std::vector<int>{1, 3, 4}));
  EXPECT_EQ(log_.events()[2].at, common::Clock::SteadyTime{} + 1100ms);
  EXPECT_EQ(WheelInspector::footprint(timer).entries, 0u);
}

TEST_F(HashedWheelTimerTest, TaskCancellingALaterTimeoutOfItsOwnTickWinsOrLosesCleanly) {
  // Tasks run while their tick's bucket is still being walked (in batches). Whichever way
  // the race goes, exactly one of "cancelled" and "ran" happens, and the others run in order.
  HashedWheelTimer timer(clock_, {.tick = 100ms}, {.manual = true});
  std::vector<TimerHandle> handles(200);
  std::vector<CancelResult> results;
  handles[0] = timer.schedule(
      [&] {
        log_.record(0);
        for (int i : {1, 40, 120, 199}) results.push_back(handles[i].cancel());
      },
      150ms);
  for (int i = 1; i < 200; ++i) handles[i] = timer.schedule(log_.task(i), 150ms);
  step(timer, 200ms);
  ASSERT_EQ(results.size(), 4u);
  std::vector<int> expected;
  std::size_t r = 0;
  for (int i = 0; i < 200; ++i) {
    const bool cancelled = (i == 1 || i == 40 || i == 120 || i == 199) &&
                           results[r++] == CancelResult::kCancelled;
    if (!cancelled) expected.push_back(i);
  }
  EXPECT_EQ(log_.ids(), expected);
  EXPECT_EQ(timer.pending_timeouts(), 0u);
  EXPECT_EQ(WheelInspector::footprint(timer).entries, 0u);
}

TEST_F(HashedWheelTimerTest, CancelledTimeoutsGiveTheirMemoryBackByTheNextStep) {
  HashedWheelTimer timer(clock_, {.tick = 100ms, .wheel_size = 16}, {.manual = true});
  constexpr int kCount = 10'000;
  std::vector<TimerHandle> handles;
  // Up to ~2 turns, so some entries wait a round.
  for (int i = 0; i < kCount; ++i) {
    handles.push_back(timer.schedule(log_.task(i), std::chrono::milliseconds(i % 3000)));
  }
  process(timer);
  const auto full = WheelInspector::footprint(timer);
  EXPECT_EQ(full.entries, static_cast<std::size_t>(kCount));
  EXPECT_GE(full.pool_slots, static_cast<std::size_t>(kCount));
  // Cancelled oldest first: the worker meets them newest first, each at the end of its
  // bucket.
  for (auto& h : handles) h.cancel();
  handles.clear();
  process(timer);
  EXPECT_EQ(WheelInspector::footprint(timer).entries, 0u);
  // Their slots are reused, not added to.
  for (int i = 0; i < kCount; ++i) {
    handles.push_back(timer.schedule(log_.task(i), std::chrono::milliseconds(i % 3000)));
  }
  process(timer);
  EXPECT_EQ(WheelInspector::footprint(timer).pool_slots, full.pool_slots);
  // Cancelled newest first: the worker meets them front to back, leaving tombstones that
  // compaction keeps below half of each bucket, and a visit clears.
  for (auto it = handles.rbegin(); it != handles.rend(); ++it) it->cancel();
  handles.clear();
  process(timer);
  const auto cancelled = WheelInspector::footprint(timer);
  EXPECT_LE(cancelled.entries, static_cast<std::size_t>(kCount) / 2);
  EXPECT_EQ(cancelled.entries, cancelled.tombstones);
  step(timer, 1600ms);  // one turn: every bucket visited
  EXPECT_EQ(WheelInspector::footprint(timer).entries, 0u);
  EXPECT_EQ(log_.size(), 0u);
  EXPECT_EQ(timer.pending_timeouts(), 0u);
}

TEST_F(HashedWheelTimerTest, BucketArraysShrinkOneTurnAfterABurst) {
  HashedWheelTimer timer(clock_, {.tick = 100ms, .wheel_size = 8}, {.manual = true});
  for (int i = 0; i < 1000; ++i) timer.schedule(log_.task(i), 150ms);
  step(timer, 200ms);
  EXPECT_EQ(log_.size(), 1000u);
  // Kept for one turn, in case the burst repeats...
  EXPECT_GE(WheelInspector::footprint(timer).capacity, 1000u);
  // ...and given back at the next visit when it did not.
  step(timer, 800ms);
  EXPECT_LT(WheelInspector::footprint(timer).capacity, 64u);
}

}  // namespace
}  // namespace cronwheel::timer_test
