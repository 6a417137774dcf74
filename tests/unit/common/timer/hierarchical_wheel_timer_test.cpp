// What is particular to the hierarchical wheel: tick rounding, timeouts moving down the wheels,
// overflow wheels created on demand, delays of hours and days, the delay queue of non-empty
// buckets, and a worker that sleeps until the next such bucket instead of ticking.

#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <stop_token>
#include <utility>
#include <vector>

#include "common/timer/hierarchical_wheel_timer.h"
#include "tests/support/fake_clock.h"
#include "tests/unit/common/timer/timer_test_support.h"

namespace cronwheel::timer_test {
namespace {

using common::CancelResult;
using common::Clock;
using common::HierarchicalWheelOptions;
using common::HierarchicalWheelTimer;
using common::TimerHandle;
using common::TimerOptions;
using common::detail::WheelInspector;

constexpr Clock::SteadyTime at(std::chrono::nanoseconds since_start) {
  return Clock::SteadyTime{} + since_start;
}

// A FakeClock that also records every deadline a thread sleeps towards: what the worker
// plans to do, observed without waiting for it.
class SleepRecordingClock final : public Clock {
 public:
  std::int64_t now_ms() const override { return fake_.now_ms(); }
  SteadyTime steady_now() const override { return fake_.steady_now(); }
  bool sleep_until(SteadyTime deadline, std::stop_token stop) override {
    {
      std::lock_guard lock(mutex_);
      sleeps_.push_back(deadline);
    }
    return fake_.sleep_until(deadline, std::move(stop));
  }

  void advance(std::chrono::nanoseconds d) { fake_.advance(d); }
  // Waits until the worker has reacted to what happened and sleeps again.
  void settle() { fake_.wait_for_sleepers(1); }

  std::vector<SteadyTime> sleeps() const {
    std::lock_guard lock(mutex_);
    return sleeps_;
  }
  SteadyTime last_sleep() const {
    std::lock_guard lock(mutex_);
    return sleeps_.empty() ? SteadyTime{} : sleeps_.back();
  }

 private:
  testing::FakeClock fake_;
  mutable std::mutex mutex_;
  std::vector<SteadyTime> sleeps_;
};

// Wheels of 8 buckets over 100 ms ticks: 0.8 s, 6.4 s, 51.2 s, 409.6 s...
constexpr HierarchicalWheelOptions kSmallWheels{.tick = std::chrono::milliseconds(100),
                                                .wheel_size = 8};

class HierarchicalWheelTimerTest : public ManualTimerTest {
 protected:
  std::size_t step_to(HierarchicalWheelTimer& timer, std::chrono::nanoseconds since_start) {
    clock_.advance(at(since_start) - clock_.steady_now());
    return process(timer);
  }
  static std::vector<std::size_t> live_per_wheel(const HierarchicalWheelTimer& timer) {
    return WheelInspector::footprint(timer).live_per_wheel;
  }
  static std::size_t queued_buckets(const HierarchicalWheelTimer& timer) {
    return WheelInspector::footprint(timer).queued_buckets;
  }
};

using Wheels = std::vector<std::size_t>;

// --- timing and levels, on manual timers ------------------------------------------------------

TEST_F(HierarchicalWheelTimerTest, FiresAtTheFirstTickBoundaryAtOrAfterItsDeadline) {
  HierarchicalWheelTimer timer(clock_, kSmallWheels, {.manual = true});
  timer.schedule(log_.task(1), 250ms);
  timer.schedule(log_.task(2), 300ms);  // exactly on a boundary: fires at that boundary
  step_to(timer, 300ms - 1ns);
  EXPECT_EQ(log_.size(), 0u);
  step_to(timer, 300ms);
  EXPECT_EQ(log_.ids(), (std::vector<int>{1, 2}));
  EXPECT_EQ(log_.events()[0].at, at(300ms));
}

TEST_F(HierarchicalWheelTimerTest, TimeoutMovesDownOneWheelAtATimeAndFiresOnTime) {
  HierarchicalWheelTimer timer(clock_, kSmallWheels, {.manual = true});
  // 10 s is tick 100: beyond wheel 1 (64 ticks), so in wheel 2's bucket [6.4 s, 12.8 s).
  timer.schedule(log_.task(1), 10s);
  process(timer);
  EXPECT_EQ(live_per_wheel(timer), (Wheels{0, 0, 1}));
  step_to(timer, 6400ms - 1ns);
  EXPECT_EQ(live_per_wheel(timer), (Wheels{0, 0, 1}));
  // Its bucket expires at 6.4 s: the timeout goes down to wheel 1's bucket [9.6 s, 10.4 s).
  step_to(timer, 6400ms);
  EXPECT_EQ(live_per_wheel(timer), (Wheels{0, 1, 0}));
  step_to(timer, 9600ms);
  EXPECT_EQ(live_per_wheel(timer), (Wheels{1, 0, 0}));
  step_to(timer, 10s - 1ns);
  EXPECT_EQ(log_.size(), 0u);
  EXPECT_EQ(step_to(timer, 10s), 1u);
  EXPECT_EQ(log_.events().at(0).at, at(10s));
  EXPECT_EQ(live_per_wheel(timer), (Wheels{0, 0, 0}));
  EXPECT_EQ(queued_buckets(timer), 0u);
}

TEST_F(HierarchicalWheelTimerTest, OverflowWheelsAreCreatedWhenATimeoutFirstNeedsThem) {
  HierarchicalWheelTimer timer(clock_, kSmallWheels, {.manual = true});
  EXPECT_EQ(live_per_wheel(timer).size(), 1u);
  timer.schedule(log_.task(1), 500ms);
  process(timer);
  EXPECT_EQ(live_per_wheel(timer), (Wheels{1}));
  timer.schedule(log_.task(2), 5s);
  process(timer);
  EXPECT_EQ(live_per_wheel(timer), (Wheels{1, 1}));
  // 1 h is tick 36,000: wheel 5 (each of its buckets is 8^5 ticks, 54.6 min). The wheels in
  // between are created with it, empty.
  timer.schedule(log_.task(3), 1h);
  process(timer);
  EXPECT_EQ(live_per_wheel(timer), (Wheels{1, 1, 0, 0, 0, 1}));
  step(timer, 2h);
  EXPECT_EQ(log_.ids(), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(live_per_wheel(timer), (Wheels{0, 0, 0, 0, 0, 0}));  // wheels are kept
}

TEST_F(HierarchicalWheelTimerTest, DelaysOfHoursAndDaysFireOnTimeAfterAFewMoves) {
  // The defaults: 1 ms ticks, wheels of 0.5 s, 262 s, 37 h and 2.2 years.
  HierarchicalWheelTimer timer(clock_, {}, {.manual = true});
  const std::vector<std::chrono::nanoseconds> delays = {90min + 7ms, 26h + 1ms,
                                                        3 * 24h + 17ms, 9 * 24h + 250ms};
  for (std::size_t i = 0; i < delays.size(); ++i) {
    timer.schedule(log_.task(static_cast<int>(i)), delays[i]);
  }
  process(timer);
  EXPECT_EQ(live_per_wheel(timer), (Wheels{0, 0, 2, 2}));
  // Big steps up to just before each deadline never fire it; the step onto it does.
  for (std::size_t i = 0; i < delays.size(); ++i) {
    while (clock_.steady_now() + 7h < at(delays[i])) step(timer, 7h);
    step_to(timer, delays[i] - 1ns);
    EXPECT_EQ(log_.size(), i) << "timeout " << i << " fired early";
    step_to(timer, delays[i]);
    ASSERT_EQ(log_.size(), i + 1) << "timeout " << i << " did not fire on time";
    EXPECT_EQ(log_.events()[i].at, at(delays[i]));
  }
  EXPECT_EQ(timer.pending_timeouts(), 0u);
  EXPECT_EQ(queued_buckets(timer), 0u);
}

TEST_F(HierarchicalWheelTimerTest, LateStepRunsTimeoutsOfEveryWheelInDeadlineOrder) {
  HierarchicalWheelTimer timer(clock_, kSmallWheels, {.manual = true});
  const std::vector<int> delays_ms = {47'000, 350, 6'450, 2'750, 1'150, 120'000, 50, 9'950};
  for (int ms : delays_ms) timer.schedule(log_.task(ms), std::chrono::milliseconds(ms));
  process(timer);
  EXPECT_EQ(live_per_wheel(timer).size(), 4u);
  EXPECT_EQ(step(timer, 1h), delays_ms.size());
  EXPECT_EQ(log_.ids(), (std::vector<int>{50, 350, 1'150, 2'750, 6'450, 9'950, 47'000, 120'000}));
}

TEST_F(HierarchicalWheelTimerTest, TimeoutScheduledAfterAQuietSpellGoesStraightToTheLowestWheel) {
  HierarchicalWheelTimer timer(clock_, kSmallWheels, {.manual = true});
  clock_.advance(10h);  // nothing processed meanwhile
  timer.schedule(log_.task(1), 500ms);
  process(timer);
  // Placed against the current time, not against the last step 10 h ago (which would have
  // needed wheel 5).
  EXPECT_EQ(live_per_wheel(timer), (Wheels{1}));
  step(timer, 500ms);
  EXPECT_EQ(log_.ids(), std::vector<int>{1});
}

// --- cancellation ------------------------------------------------------------------------------

TEST_F(HierarchicalWheelTimerTest, CancellingTheLastTimeoutOfABucketTakesItOffTheDelayQueue) {
  HierarchicalWheelTimer timer(clock_, kSmallWheels, {.manual = true});
  auto first = timer.schedule(log_.task(1), 300ms);
  auto second = timer.schedule(log_.task(2), 300ms);
  timer.schedule(log_.task(3), 600ms);
  process(timer);
  EXPECT_EQ(queued_buckets(timer), 2u);
  EXPECT_EQ(first.cancel(), CancelResult::kCancelled);
  process(timer);
  EXPECT_EQ(queued_buckets(timer), 2u);  // the 300 ms bucket still holds the second
  EXPECT_EQ(second.cancel(), CancelResult::kCancelled);
  process(timer);
  EXPECT_EQ(queued_buckets(timer), 1u);
  EXPECT_EQ(live_per_wheel(timer), (Wheels{1}));
  step(timer, 1s);
  EXPECT_EQ(log_.ids(), std::vector<int>{3});
}

TEST_F(HierarchicalWheelTimerTest, TimeoutCancelledAfterMovingDownIsFoundInItsNewBucket) {
  HierarchicalWheelTimer timer(clock_, kSmallWheels, {.manual = true});
  auto handle = timer.schedule(log_.task(1), 10s);
  timer.schedule(log_.task(2), 10s);
  process(timer);
  EXPECT_EQ(live_per_wheel(timer), (Wheels{0, 0, 2}));
  step_to(timer, 6400ms);  // both moved from wheel 2 to wheel 1
  EXPECT_EQ(live_per_wheel(timer), (Wheels{0, 2, 0}));
  EXPECT_EQ(handle.cancel(), CancelResult::kCancelled);
  process(timer);
  EXPECT_EQ(live_per_wheel(timer), (Wheels{0, 1, 0}));
  step(timer, 1min);
  EXPECT_EQ(log_.ids(), std::vector<int>{2});
  EXPECT_EQ(timer.pending_timeouts(), 0u);
}

TEST_F(HierarchicalWheelTimerTest, TimeoutCancelledByATaskOfTheSameStepDoesNotMoveDown) {
  HierarchicalWheelTimer timer(clock_, kSmallWheels, {.manual = true});
  auto resource = std::make_shared<int>(1);
  TimerHandle victim = timer.schedule([resource] {}, 10s);  // wheel 2, expires at 6.4 s
  timer.schedule(
      [&] {
        log_.record(1);
        EXPECT_EQ(victim.cancel(), CancelResult::kCancelled);
      },
      6s);
  // Enough other timeouts of the 6 s tick that the step hands the first ones, the canceller
  // among them, to the executor before it reaches the victim's bucket.
  int others = 0;
  for (int i = 0; i < 100; ++i) timer.schedule([&others] { ++others; }, 6s);
  process(timer);
  // One step runs the 6 s task, which cancels the victim, and then expires the victim's
  // bucket before the cancellation was collected: the victim must neither move nor run.
  step_to(timer, 20s);
  EXPECT_EQ(others, 100);
  EXPECT_EQ(log_.ids(), std::vector<int>{1});
  EXPECT_EQ(resource.use_count(), 1);
  EXPECT_EQ(live_per_wheel(timer), (Wheels{0, 0, 0}));
  EXPECT_EQ(queued_buckets(timer), 0u);
  EXPECT_EQ(timer.pending_timeouts(), 0u);
  EXPECT_TRUE(timer.stop().empty());
}

TEST_F(HierarchicalWheelTimerTest, CancelledEntriesAreTombstonesUntilTheyOutnumberTheLiveOnes) {
  HierarchicalWheelTimer timer(clock_, kSmallWheels, {.manual = true});
  std::vector<TimerHandle> handles;
  for (int i = 0; i < 4; ++i) handles.push_back(timer.schedule(log_.task(i), 500ms));
  process(timer);
  handles[1].cancel();
  process(timer);
  auto held = WheelInspector::footprint(timer);
  EXPECT_EQ(held.live_per_wheel, (Wheels{3}));
  EXPECT_EQ(held.tombstones, 1u);
  // The last entry goes at once; the first makes two tombstones for one live entry.
  handles[0].cancel();
  handles[3].cancel();
  process(timer);
  held = WheelInspector::footprint(timer);
  EXPECT_EQ(held.live_per_wheel, (Wheels{1}));
  EXPECT_EQ(held.tombstones, 0u);
  // The compaction moved the survivor; a later cancel still finds it.
  EXPECT_EQ(handles[2].cancel(), CancelResult::kCancelled);
  process(timer);
  EXPECT_EQ(queued_buckets(timer), 0u);
  step(timer, 1s);
  EXPECT_EQ(log_.size(), 0u);
}

// --- options and limits --------------------------------------------------------------------------

TEST_F(HierarchicalWheelTimerTest, RejectsInvalidOptions) {
  TimerOptions manual{.manual = true};
  EXPECT_THROW(HierarchicalWheelTimer(clock_, {.tick = 0ns}, manual), std::invalid_argument);
  EXPECT_THROW(HierarchicalWheelTimer(clock_, {.wheel_size = 1}, manual), std::invalid_argument);
  EXPECT_THROW(HierarchicalWheelTimer(clock_, {.wheel_size = 65537}, manual),
               std::invalid_argument);
  EXPECT_THROW(HierarchicalWheelTimer(clock_, {.max_queued_operations = 0}, manual),
               std::invalid_argument);
}

TEST_F(HierarchicalWheelTimerTest, WheelSizeIsRoundedUpToAPowerOfTwo) {
  HierarchicalWheelTimer timer(clock_, {.tick = 10ms, .wheel_size = 5}, {.manual = true});
  EXPECT_EQ(timer.wheel_size(), 8u);
  EXPECT_EQ(timer.tick(), 10ms);
}

TEST_F(HierarchicalWheelTimerTest, HugeDelaysDoNotOverflow) {
  HierarchicalWheelTimer timer(clock_, kSmallWheels, {.manual = true});
  auto handle = timer.schedule(log_.task(1), std::chrono::nanoseconds::max());
  auto almost = timer.schedule(log_.task(2), std::chrono::nanoseconds::max() - 1h);
  EXPECT_EQ(handle.deadline(), Clock::SteadyTime::max());
  step(timer, 1h);
  step(timer, 24h * 365 * 200);  // 200 years
  EXPECT_EQ(log_.size(), 0u);
  EXPECT_EQ(timer.stop().size(), 2u);
}

// --- the worker -----------------------------------------------------------------------------

class HierarchicalWheelWorkerTest : public ::testing::Test {
 protected:
  SleepRecordingClock clock_;
  FireLog log_{clock_};
};

TEST_F(HierarchicalWheelWorkerTest, WorkerSleepsUntilTheNextNonEmptyBucketNotTheNextTick) {
  HierarchicalWheelTimer timer(clock_, kSmallWheels);
  clock_.settle();  // idle: the schedules below wake it
  timer.schedule(log_.task(1), 250ms);
  timer.schedule(log_.task(2), 10s);
  clock_.settle();
  // A ticking worker would wake at 100 ms; this one sleeps to the 250 ms timeout's tick.
  EXPECT_EQ(clock_.last_sleep(), at(300ms));
  clock_.advance(300ms);
  ASSERT_TRUE(log_.wait_for(1));
  clock_.settle();
  // Then straight to wheel 2's bucket holding the 10 s timeout, 61 ticks later...
  EXPECT_EQ(clock_.last_sleep(), at(6400ms));
  const auto sleeps = clock_.sleeps().size();
  clock_.advance(6400ms - 300ms);
  clock_.settle();
  // ...which moves it down to wheel 1: one wake, one sleep, to that bucket...
  EXPECT_EQ(clock_.sleeps().size(), sleeps + 1);
  EXPECT_EQ(clock_.last_sleep(), at(9600ms));
  clock_.advance(9600ms - 6400ms);
  clock_.settle();
  EXPECT_EQ(clock_.last_sleep(), at(10s));  // ...and to its own tick in wheel 0
  clock_.advance(400ms);
  ASSERT_TRUE(log_.wait_for(2));
  clock_.settle();
  EXPECT_EQ(log_.events()[1].at, at(10s));
  EXPECT_EQ(clock_.last_sleep(), Clock::SteadyTime::max());  // nothing left: until stopped
}

TEST_F(HierarchicalWheelWorkerTest, IdleWorkerSleepsUntilStopped) {
  {
    HierarchicalWheelTimer timer(clock_, kSmallWheels);
    clock_.settle();
    EXPECT_EQ(clock_.sleeps(), std::vector<Clock::SteadyTime>{Clock::SteadyTime::max()});
    clock_.advance(30 * 24h);
    clock_.settle();
    EXPECT_EQ(clock_.sleeps().size(), 1u);
  }
  // The destructor's stop() interrupted that one sleep.
  EXPECT_EQ(clock_.sleeps().size(), 1u);
}

TEST_F(HierarchicalWheelWorkerTest, WorkerWithOnlyDistantTimeoutsSleepsUntilTheirBucket) {
  HierarchicalWheelTimer timer(clock_, kSmallWheels);
  clock_.settle();
  for (int h = 5; h <= 24; ++h) timer.schedule(log_.task(h), std::chrono::hours(h));
  clock_.settle();
  // 5 h is tick 180,000, in wheel 5's bucket of ticks [163,840, 196,608), 4 h 33 min to
  // 5 h 28 min: the first wake.
  const auto first = clock_.last_sleep();
  EXPECT_EQ(first, at(16384s));
  const auto sleeps = clock_.sleeps().size();
  clock_.advance(first - clock_.steady_now() - 1ns);
  clock_.settle();
  EXPECT_EQ(clock_.sleeps().size(), sleeps);
  EXPECT_EQ(log_.size(), 0u);
}

TEST_F(HierarchicalWheelWorkerTest, ScheduleDueBeforeTheWorkersWakeWakesIt) {
  HierarchicalWheelTimer timer(clock_, kSmallWheels);
  clock_.settle();
  timer.schedule(log_.task(2), 10s);
  clock_.settle();
  EXPECT_EQ(clock_.last_sleep(), at(6400ms));
  timer.schedule(log_.task(1), 200ms);
  clock_.settle();
  EXPECT_EQ(clock_.last_sleep(), at(200ms));
  clock_.advance(200ms);
  ASSERT_TRUE(log_.wait_for(1));
  EXPECT_EQ(log_.events()[0].at, at(200ms));
}

TEST_F(HierarchicalWheelWorkerTest, QueuedCallsWakeTheWorkerOnceTheyReachTheLimit) {
  HierarchicalWheelTimer timer(clock_,
                               {.tick = 100ms, .wheel_size = 8, .max_queued_operations = 4});
  clock_.settle();
  std::vector<TimerHandle> handles;
  handles.push_back(timer.schedule(log_.task(0), 1h));
  clock_.settle();
  const auto sleeps = clock_.sleeps().size();
  // Due after the bucket the worker sleeps towards: they wait in the submission list...
  for (int i = 1; i <= 2; ++i) handles.push_back(timer.schedule(log_.task(i), 2h));
  EXPECT_EQ(handles[1].cancel(), CancelResult::kCancelled);
  clock_.settle();
  EXPECT_EQ(clock_.sleeps().size(), sleeps);
  EXPECT_EQ(WheelInspector::footprint(timer).live_per_wheel.back(), 1u);
  // ...until the fourth call since the worker's last step.
  handles.push_back(timer.schedule(log_.task(3), 2h));
  clock_.settle();
  EXPECT_EQ(clock_.sleeps().size(), sleeps + 1);
  const auto held = WheelInspector::footprint(timer);
  EXPECT_EQ(held.live_per_wheel.back(), 3u);
  EXPECT_EQ(timer.pending_timeouts(), 3u);
}

}  // namespace
}  // namespace cronwheel::timer_test
