#pragma once

// The Timer contract (common/timer/timer.h) as one typed GoogleTest suite, run against
// HashedWheelTimer and HierarchicalWheelTimer (timer_contract_test.cpp) and against the
// benchmarks' HeapTimer (tests/bench/heap_timer_test.cpp). Time is a FakeClock: manual timers
// are stepped with process_until(), threaded ones by advancing the clock and waiting for the
// worker. Nothing here sleeps.
//
// A binary includes this header once and instantiates the suite with timer types T:
//
//   namespace cronwheel::timer_test::contract {
//   INSTANTIATE_TYPED_TEST_SUITE_P(Heap, TimerContract, ::testing::Types<T>, TimerTypeNames);
//   }
//
// where T is a timer type as timer_test_support.h describes them.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <future>
#include <memory>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "common/timer/timer.h"
#include "tests/support/fake_clock.h"
#include "tests/unit/common/timer/timer_test_support.h"

namespace cronwheel::timer_test {
namespace contract {

using common::CancelResult;
using common::Clock;
using common::TimeoutState;
using common::Timer;
using common::TimerHandle;
using common::TimerOptions;
using common::TimerRejectedError;

template <typename T>
class TimerContract : public ::testing::Test {
 protected:
  std::unique_ptr<Timer> make(TimerOptions options = {}) {
    return T::make(clock_, std::move(options));
  }
  std::unique_ptr<Timer> make_manual(TimerOptions options = {}) {
    options.manual = true;
    return make(std::move(options));
  }
  static std::chrono::nanoseconds max_lateness(std::chrono::nanoseconds step) {
    return T::max_lateness(step);
  }

  // Manual timers: move time and process it.
  std::size_t step(Timer& timer, std::chrono::nanoseconds d) {
    clock_.advance(d);
    return timer.process_until(clock_.steady_now());
  }
  // Threaded timers: move time and wait until the worker has reacted and sleeps again.
  void advance_and_settle(std::chrono::nanoseconds d) {
    clock_.advance(d);
    clock_.wait_for_sleepers(1);
  }

  testing::FakeClock clock_;
  FireLog log_{clock_};
};

TYPED_TEST_SUITE_P(TimerContract);

// --- timing, on manual timers -------------------------------------------------------------

TYPED_TEST_P(TimerContract, NeverFiresEarly) {
  auto timer = this->make_manual();
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<std::int64_t> delay_ns(0, 3'000'000'000);  // up to ~2 turns
  std::uniform_int_distribution<std::int64_t> step_ns(1, 150'000'000);
  constexpr int kCount = 2000;
  std::vector<TimerHandle> handles;
  for (int i = 0; i < kCount; ++i) {
    handles.push_back(timer->schedule(this->log_.task(i), std::chrono::nanoseconds(delay_ns(rng))));
    if (i % 100 == 0) this->step(*timer, std::chrono::nanoseconds(step_ns(rng)));
  }
  std::chrono::nanoseconds largest_step{0};
  while (this->log_.size() < kCount && this->clock_.steady_now() < Clock::SteadyTime{} + 10s) {
    auto d = std::chrono::nanoseconds(step_ns(rng));
    largest_step = std::max(largest_step, d);
    this->step(*timer, d);
  }
  ASSERT_EQ(this->log_.size(), static_cast<std::size_t>(kCount));
  for (const auto& e : this->log_.events()) {
    const auto deadline = handles[e.id].deadline();
    EXPECT_GE(e.at, deadline) << "timeout " << e.id << " ran early";
    EXPECT_LE(e.at - deadline, this->max_lateness(std::chrono::nanoseconds(150'000'000)))
        << "timeout " << e.id << " ran too late";
  }
}

TYPED_TEST_P(TimerContract, FiresOnceWithinItsLatenessBound) {
  auto timer = this->make_manual();
  auto handle = timer->schedule(this->log_.task(1), 250ms);
  EXPECT_EQ(this->step(*timer, 250ms - 1ns), 0u);
  EXPECT_EQ(this->log_.size(), 0u);
  this->step(*timer, 1ns + this->max_lateness(0ns));
  EXPECT_EQ(this->log_.ids(), std::vector<int>{1});
  EXPECT_EQ(handle.state(), TimeoutState::kExpired);
  this->step(*timer, 10s);
  EXPECT_EQ(this->log_.size(), 1u);
}

TYPED_TEST_P(TimerContract, ZeroAndNegativeDelaysFireAtTheNextStep) {
  auto timer = this->make_manual();
  this->step(*timer, 1s);
  timer->schedule(this->log_.task(1), 0ns);
  timer->schedule(this->log_.task(2), -5s);
  this->step(*timer, this->max_lateness(0ns));
  EXPECT_EQ(this->log_.ids(), (std::vector<int>{1, 2}));
}

TYPED_TEST_P(TimerContract, EqualDeadlinesRunInScheduleOrder) {
  auto timer = this->make_manual();
  for (int i = 0; i < 5; ++i) timer->schedule(this->log_.task(i), 300ms);
  this->step(*timer, 300ms + this->max_lateness(0ns));
  EXPECT_EQ(this->log_.ids(), (std::vector<int>{0, 1, 2, 3, 4}));
}

TYPED_TEST_P(TimerContract, LateProcessingRunsEverythingDueInDeadlineOrder) {
  auto timer = this->make_manual();
  // Deadlines in different ticks (and two beyond one turn of the test wheel), scheduled out
  // of order, processed in one late step.
  const std::vector<int> delays_ms = {750, 50, 2950, 330, 1750, 120, 990};
  for (int ms : delays_ms) timer->schedule(this->log_.task(ms), std::chrono::milliseconds(ms));
  EXPECT_EQ(this->step(*timer, 5s), delays_ms.size());
  auto sorted = delays_ms;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(this->log_.ids(), sorted);
}

// --- cancellation ---------------------------------------------------------------------------

TYPED_TEST_P(TimerContract, CancelBeforeExpiryPreventsRun) {
  auto timer = this->make_manual();
  auto keep = timer->schedule(this->log_.task(1), 500ms);
  auto drop = timer->schedule(this->log_.task(2), 500ms);
  this->step(*timer, 200ms);
  EXPECT_EQ(drop.cancel(), CancelResult::kCancelled);
  EXPECT_EQ(drop.state(), TimeoutState::kCancelled);
  this->step(*timer, 2s);
  EXPECT_EQ(this->log_.ids(), std::vector<int>{1});
  EXPECT_EQ(timer->pending_timeouts(), 0u);
}

TYPED_TEST_P(TimerContract, CancelRightAfterScheduleBeforeAnyStepPreventsRun) {
  auto timer = this->make_manual();
  auto handle = timer->schedule(this->log_.task(1), 0ns);
  EXPECT_EQ(handle.cancel(), CancelResult::kCancelled);
  this->step(*timer, 1s);
  EXPECT_EQ(this->log_.size(), 0u);
}

TYPED_TEST_P(TimerContract, CancelAfterExpiryReportsAlreadyExpired) {
  auto timer = this->make_manual();
  auto handle = timer->schedule(this->log_.task(1), 100ms);
  this->step(*timer, 1s);
  EXPECT_EQ(handle.cancel(), CancelResult::kAlreadyExpired);
  EXPECT_EQ(handle.state(), TimeoutState::kExpired);
  EXPECT_EQ(this->log_.size(), 1u);
}

TYPED_TEST_P(TimerContract, SecondCancelReportsAlreadyCancelled) {
  auto timer = this->make_manual();
  auto handle = timer->schedule(this->log_.task(1), 100ms);
  auto copy = handle;
  EXPECT_EQ(handle.cancel(), CancelResult::kCancelled);
  EXPECT_EQ(copy.cancel(), CancelResult::kAlreadyCancelled);
  EXPECT_TRUE(copy.take_task() == nullptr);
}

TYPED_TEST_P(TimerContract, EmptyHandleCancelReportsNoTimeout) {
  TimerHandle handle;
  EXPECT_FALSE(handle);
  EXPECT_EQ(handle.cancel(), CancelResult::kNoTimeout);
  EXPECT_EQ(handle.state(), TimeoutState::kCancelled);
  EXPECT_EQ(common::to_string(CancelResult::kAlreadyExpired), "already expired");
}

TYPED_TEST_P(TimerContract, CancelReleasesTheTaskAtOnce) {
  auto timer = this->make_manual();
  auto resource = std::make_shared<int>(42);
  auto handle = timer->schedule([resource] {}, 10s);
  EXPECT_EQ(resource.use_count(), 2);
  handle.cancel();
  EXPECT_EQ(resource.use_count(), 1);
}

TYPED_TEST_P(TimerContract, ExpiryReleasesTheTaskAfterItRan) {
  auto timer = this->make_manual();
  auto resource = std::make_shared<int>(42);
  auto handle = timer->schedule([resource] {}, 100ms);
  this->step(*timer, 1s);
  EXPECT_EQ(resource.use_count(), 1);  // even though the handle is still alive
}

TYPED_TEST_P(TimerContract, PendingCountFollowsScheduleCancelAndExpiry) {
  auto timer = this->make_manual();
  auto a = timer->schedule(this->log_.task(1), 100ms);
  auto b = timer->schedule(this->log_.task(2), 5s);
  auto c = timer->schedule(this->log_.task(3), 5s);
  EXPECT_EQ(timer->pending_timeouts(), 3u);
  c.cancel();
  EXPECT_EQ(timer->pending_timeouts(), 2u);
  this->step(*timer, 1s);
  EXPECT_EQ(timer->pending_timeouts(), 1u);
}

TYPED_TEST_P(TimerContract, HandleOutlivesTheTimer) {
  TimerHandle expired;
  TimerHandle pending;
  {
    auto timer = this->make_manual();
    expired = timer->schedule(this->log_.task(1), 100ms);
    pending = timer->schedule(this->log_.task(2), 1h);
    this->step(*timer, 1s);
  }
  EXPECT_EQ(expired.cancel(), CancelResult::kAlreadyExpired);
  EXPECT_EQ(pending.state(), TimeoutState::kPending);
  EXPECT_EQ(pending.cancel(), CancelResult::kCancelled);
  EXPECT_EQ(pending.cancel(), CancelResult::kAlreadyCancelled);
  EXPECT_EQ(this->log_.ids(), std::vector<int>{1});
}

TYPED_TEST_P(TimerContract, OldHandlesAreNotConfusedByReusedMemory) {
  auto timer = this->make_manual();
  auto expired = timer->schedule(this->log_.task(1), 100ms);
  auto cancelled = timer->schedule(this->log_.task(2), 100ms);
  const auto expired_deadline = expired.deadline();
  const auto cancelled_deadline = cancelled.deadline();
  EXPECT_EQ(cancelled.cancel(), CancelResult::kCancelled);
  this->step(*timer, 1s);
  // Many timeouts come and go; the timer recycles their memory for one another.
  for (int round = 0; round < 10; ++round) {
    std::vector<TimerHandle> churn;
    for (int i = 0; i < 100; ++i) churn.push_back(timer->schedule(this->log_.task(100), 100ms));
    for (int i = 0; i < 100; i += 2) churn[i].cancel();
    this->step(*timer, 1s);
  }
  auto fresh = timer->schedule(this->log_.task(3), 100ms);
  // The old handles still see their own timeouts, and acting on them leaves the new one be.
  EXPECT_EQ(expired.state(), TimeoutState::kExpired);
  EXPECT_EQ(expired.deadline(), expired_deadline);
  EXPECT_EQ(expired.cancel(), CancelResult::kAlreadyExpired);
  EXPECT_EQ(cancelled.state(), TimeoutState::kCancelled);
  EXPECT_EQ(cancelled.deadline(), cancelled_deadline);
  EXPECT_EQ(cancelled.cancel(), CancelResult::kAlreadyCancelled);
  EXPECT_TRUE(cancelled.take_task() == nullptr);
  this->step(*timer, 1s);
  EXPECT_EQ(fresh.state(), TimeoutState::kExpired);
  const auto ids = this->log_.ids();
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 1), 1);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 2), 0);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 3), 1);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 100), 500);
}

// --- stop and limits ------------------------------------------------------------------------

TYPED_TEST_P(TimerContract, StopReturnsUnprocessedTimeouts) {
  auto timer = this->make_manual();
  auto fired = timer->schedule(this->log_.task(1), 100ms);
  auto cancelled = timer->schedule(this->log_.task(2), 200ms);
  auto late = timer->schedule(this->log_.task(3), 10s);
  auto early = timer->schedule(this->log_.task(4), 5s);
  cancelled.cancel();
  this->step(*timer, 300ms);
  // Scheduled after the last step: for the wheel still in the submission list.
  auto queued = timer->schedule(this->log_.task(5), 1s);

  auto unprocessed = timer->stop();
  ASSERT_EQ(unprocessed.size(), 3u);
  EXPECT_EQ(unprocessed[0].deadline(), queued.deadline());
  EXPECT_EQ(unprocessed[1].deadline(), early.deadline());
  EXPECT_EQ(unprocessed[2].deadline(), late.deadline());
  for (const auto& h : unprocessed) EXPECT_EQ(h.state(), TimeoutState::kPending);
  EXPECT_EQ(timer->pending_timeouts(), 0u);
  EXPECT_EQ(timer->process_until(this->clock_.steady_now() + 1h), 0u);
  EXPECT_EQ(this->log_.ids(), std::vector<int>{1});

  // The owner may take the tasks back and run them elsewhere.
  auto task = unprocessed[0].take_task();
  ASSERT_TRUE(task != nullptr);
  task();
  EXPECT_EQ(this->log_.ids(), (std::vector<int>{1, 5}));
  EXPECT_EQ(unprocessed[1].cancel(), CancelResult::kCancelled);

  EXPECT_TRUE(timer->stop().empty());
  try {
    timer->schedule(this->log_.task(6), 1s);
    FAIL() << "schedule after stop was accepted";
  } catch (const TimerRejectedError& e) {
    EXPECT_EQ(e.reason(), TimerRejectedError::Reason::kStopped);
  }
}

TYPED_TEST_P(TimerContract, RejectsBeyondMaxPending) {
  auto timer = this->make_manual({.max_pending_timeouts = 2});
  auto a = timer->schedule(this->log_.task(1), 100ms);
  auto b = timer->schedule(this->log_.task(2), 5s);
  try {
    timer->schedule(this->log_.task(3), 1s);
    FAIL() << "a third pending timeout was accepted";
  } catch (const TimerRejectedError& e) {
    EXPECT_EQ(e.reason(), TimerRejectedError::Reason::kTooManyPending);
    EXPECT_STREQ(e.what(), "too many pending timeouts (3), max is 2");
  }
  b.cancel();  // a cancelled timeout frees its place at once
  auto c = timer->schedule(this->log_.task(4), 5s);
  EXPECT_THROW(timer->schedule(this->log_.task(5), 1s), TimerRejectedError);
  this->step(*timer, 1s);  // so does an expired one
  auto d = timer->schedule(this->log_.task(6), 5s);
  EXPECT_EQ(timer->pending_timeouts(), 2u);
}

TYPED_TEST_P(TimerContract, RejectsAnEmptyTask) {
  auto timer = this->make_manual();
  EXPECT_THROW(timer->schedule(common::TimerTask{}, 1s), std::invalid_argument);
  EXPECT_EQ(timer->pending_timeouts(), 0u);
}

// --- tasks and executors --------------------------------------------------------------------

TYPED_TEST_P(TimerContract, TaskExceptionIsCountedAndLaterTimeoutsStillRun) {
  std::vector<std::string> errors;
  auto timer = this->make_manual({.on_error = [&](std::exception_ptr e) {
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& ex) {
      errors.push_back(ex.what());
    }
  }});
  timer->schedule([] { throw std::runtime_error("boom"); }, 100ms);
  timer->schedule(this->log_.task(2), 100ms);
  timer->schedule(this->log_.task(3), 900ms);
  this->step(*timer, 2s);
  EXPECT_EQ(this->log_.ids(), (std::vector<int>{2, 3}));
  EXPECT_EQ(timer->failed_callbacks(), 1u);
  EXPECT_EQ(errors, std::vector<std::string>{"boom"});
}

TYPED_TEST_P(TimerContract, ThrowingExecutorIsCountedAndDoesNotStopTheTimer) {
  int calls = 0;
  auto timer = this->make_manual({.executor = [&](std::function<void()> job) {
    if (++calls == 1) throw std::runtime_error("pool is full");
    job();
  }});
  timer->schedule(this->log_.task(1), 100ms);
  timer->schedule(this->log_.task(2), 900ms);
  this->step(*timer, 2s);
  EXPECT_EQ(this->log_.ids(), std::vector<int>{2});
  EXPECT_EQ(timer->failed_callbacks(), 1u);
}

TYPED_TEST_P(TimerContract, TasksMayScheduleAndCancelOtherTimeouts) {
  auto timer = this->make_manual();
  TimerHandle victim = timer->schedule(this->log_.task(99), 1s);
  timer->schedule(
      [&] {
        this->log_.record(1);
        victim.cancel();
        timer->schedule(this->log_.task(2), 0ns);
      },
      100ms);
  this->step(*timer, 500ms);
  this->step(*timer, 2s);
  EXPECT_EQ(this->log_.ids(), (std::vector<int>{1, 2}));
}

TYPED_TEST_P(TimerContract, StopAndProcessFromInsideATaskAreRejected) {
  auto timer = this->make_manual();
  timer->schedule([&] { timer->stop(); }, 100ms);
  timer->schedule([&] { timer->process_until(this->clock_.steady_now()); }, 100ms);
  timer->schedule(this->log_.task(1), 900ms);
  this->step(*timer, 2s);
  EXPECT_EQ(timer->failed_callbacks(), 2u);
  EXPECT_EQ(this->log_.ids(), std::vector<int>{1});
}

TYPED_TEST_P(TimerContract, ProcessUntilIsOnlyForManualTimers) {
  auto timer = this->make();
  EXPECT_THROW(timer->process_until(this->clock_.steady_now()), std::logic_error);
}

// --- the worker thread ----------------------------------------------------------------------

TYPED_TEST_P(TimerContract, WorkerRunsDueTimeoutsWhenTheClockAdvances) {
  auto timer = this->make();
  timer->schedule(this->log_.task(1), 250ms);
  timer->schedule(this->log_.task(2), 2500ms);
  this->advance_and_settle(250ms - 1ns);
  EXPECT_EQ(this->log_.size(), 0u);
  this->clock_.advance(1ns + this->max_lateness(0ns));
  ASSERT_TRUE(this->log_.wait_for(1));
  this->clock_.advance(3s);
  ASSERT_TRUE(this->log_.wait_for(2));
  this->clock_.wait_for_sleepers(1);
  EXPECT_EQ(this->log_.ids(), (std::vector<int>{1, 2}));
  for (const auto& e : this->log_.events()) EXPECT_GE(e.at, Clock::SteadyTime{} + 250ms);
}

TYPED_TEST_P(TimerContract, LateWorkerCatchesUpEveryMissedTick) {
  auto timer = this->make();
  // One timeout in each of ten ticks and two beyond a turn of the test wheel; the clock then
  // jumps past all of them at once, as if the worker had been descheduled.
  std::vector<int> expected;
  for (int ms = 50; ms < 1000; ms += 100) expected.push_back(ms);
  expected.push_back(1650);
  expected.push_back(3050);
  for (auto it = expected.rbegin(); it != expected.rend(); ++it) {
    timer->schedule(this->log_.task(*it), std::chrono::milliseconds(*it));
  }
  this->clock_.advance(4s);
  ASSERT_TRUE(this->log_.wait_for(expected.size()));
  this->clock_.wait_for_sleepers(1);
  EXPECT_EQ(this->log_.ids(), expected);
  EXPECT_EQ(timer->pending_timeouts(), 0u);
}

TYPED_TEST_P(TimerContract, SlowCallbackDoesNotDelayOthers) {
  ThreadPool pool(2);
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  auto timer = this->make({.executor = pool.executor()});
  timer->schedule(
      [&] {
        this->log_.record(1);
        released.wait();  // a task that blocks until the test lets it go
        this->log_.record(3);
      },
      100ms);
  timer->schedule(this->log_.task(2), 300ms);

  this->clock_.advance(100ms + this->max_lateness(0ns));
  ASSERT_TRUE(this->log_.wait_for(1));  // the slow task is running on the pool
  this->clock_.advance(200ms + this->max_lateness(0ns));
  ASSERT_TRUE(this->log_.wait_for(2));  // and the next one ran while it was still blocked
  EXPECT_EQ(this->log_.ids(), (std::vector<int>{1, 2}));
  release.set_value();
  ASSERT_TRUE(this->log_.wait_for(3));
  timer->stop();
}

TYPED_TEST_P(TimerContract, ManyProducersConcurrently) {
  auto timer = this->make();
  constexpr int kProducers = 4;
  constexpr int kPerProducer = 2500;
  constexpr int kTotal = kProducers * kPerProducer;
  std::vector<TimerHandle> handles(kTotal);
  std::vector<std::atomic<int>> runs(kTotal);
  std::atomic<int> done_producers{0};
  {
    std::vector<std::jthread> producers;
    for (int p = 0; p < kProducers; ++p) {
      producers.emplace_back([&, p] {
        std::mt19937 rng(p);
        std::uniform_int_distribution<int> delay_ms(0, 3000);
        for (int i = p * kPerProducer; i < (p + 1) * kPerProducer; ++i) {
          handles[i] = timer->schedule(
              [&, i] {
                runs[i].fetch_add(1);
                this->log_.record(i);
              },
              std::chrono::milliseconds(delay_ms(rng)));
        }
        done_producers.fetch_add(1);
      });
    }
    // Time moves while they schedule.
    while (done_producers.load() < kProducers) this->advance_and_settle(10ms);
  }
  this->clock_.advance(4s);
  ASSERT_TRUE(this->log_.wait_for(kTotal));
  this->clock_.wait_for_sleepers(1);
  for (int i = 0; i < kTotal; ++i) EXPECT_EQ(runs[i].load(), 1) << "timeout " << i;
  for (const auto& e : this->log_.events()) {
    EXPECT_GE(e.at, handles[e.id].deadline()) << "timeout " << e.id << " ran early";
  }
  EXPECT_EQ(timer->pending_timeouts(), 0u);
}

TYPED_TEST_P(TimerContract, CancelFromAnotherThreadRacesSafely) {
  auto timer = this->make();
  constexpr int kCount = 10'000;
  std::vector<TimerHandle> handles;
  std::vector<std::atomic<int>> runs(kCount);
  for (int i = 0; i < kCount; ++i) {
    handles.push_back(timer->schedule([&runs, i] { runs[i].fetch_add(1); },
                                      std::chrono::milliseconds(i % 1000)));
  }
  // Two cancellers race each other and the worker, over the same timeouts, in different
  // orders, while time moves across all the deadlines.
  std::vector<CancelResult> first(kCount);
  std::vector<CancelResult> second(kCount);
  auto cancel_all = [&](std::vector<CancelResult>& results, unsigned seed) {
    std::vector<int> order(kCount);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), std::mt19937(seed));
    for (int i : order) results[i] = handles[i].cancel();
  };
  {
    std::jthread a([&] { cancel_all(first, 1); });
    std::jthread b([&] { cancel_all(second, 2); });
    for (int t = 0; t < 120; ++t) this->advance_and_settle(10ms);
  }
  for (int i = 0; i < kCount; ++i) {
    const bool a_won = first[i] == CancelResult::kCancelled;
    const bool b_won = second[i] == CancelResult::kCancelled;
    ASSERT_FALSE(a_won && b_won) << "timeout " << i << " cancelled twice";
    if (a_won) {
      EXPECT_EQ(second[i], CancelResult::kAlreadyCancelled);
    } else if (b_won) {
      EXPECT_EQ(first[i], CancelResult::kAlreadyCancelled);
    } else {
      EXPECT_EQ(first[i], CancelResult::kAlreadyExpired);
      EXPECT_EQ(second[i], CancelResult::kAlreadyExpired);
    }
  }
  // Everything is due by now; wait until the worker has run what expired.
  this->advance_and_settle(2s);
  for (int i = 0; i < kCount; ++i) {
    const bool cancelled = first[i] == CancelResult::kCancelled ||
                           second[i] == CancelResult::kCancelled;
    EXPECT_EQ(runs[i].load(), cancelled ? 0 : 1) << "timeout " << i;
  }
  EXPECT_EQ(timer->pending_timeouts(), 0u);
  EXPECT_TRUE(timer->stop().empty());
}

TYPED_TEST_P(TimerContract, StopFromAWorkerTaskIsRejected) {
  auto timer = this->make();
  std::atomic<bool> rejected{false};
  timer->schedule(
      [&] {
        try {
          timer->stop();
        } catch (const std::logic_error&) {
          rejected = true;
        }
        this->log_.record(1);
      },
      100ms);
  this->clock_.advance(1s);
  ASSERT_TRUE(this->log_.wait_for(1));
  EXPECT_TRUE(rejected.load());
}

TYPED_TEST_P(TimerContract, TasksQueuedInAPoolMayRunAfterTheTimerIsGone) {
  std::promise<void> open;
  std::shared_future<void> opened = open.get_future().share();
  ThreadPool pool(1);
  pool.submit([opened] { opened.wait(); });  // hold the pool until the timer is destroyed
  {
    auto timer = this->make({.executor = pool.executor(), .on_error = [](std::exception_ptr) {}});
    timer->schedule(this->log_.task(1), 100ms);
    timer->schedule([] { throw std::runtime_error("late failure"); }, 100ms);
    this->clock_.advance(1s);
    this->clock_.wait_for_sleepers(1);
    // Both tasks are queued in the pool; for the heap the worker may still be on its way.
    while (timer->pending_timeouts() != 0) std::this_thread::yield();
    timer->stop();
  }
  open.set_value();
  ASSERT_TRUE(this->log_.wait_for(1));
}

REGISTER_TYPED_TEST_SUITE_P(TimerContract,
                            NeverFiresEarly,
                            FiresOnceWithinItsLatenessBound,
                            ZeroAndNegativeDelaysFireAtTheNextStep,
                            EqualDeadlinesRunInScheduleOrder,
                            LateProcessingRunsEverythingDueInDeadlineOrder,
                            CancelBeforeExpiryPreventsRun,
                            CancelRightAfterScheduleBeforeAnyStepPreventsRun,
                            CancelAfterExpiryReportsAlreadyExpired,
                            SecondCancelReportsAlreadyCancelled,
                            EmptyHandleCancelReportsNoTimeout,
                            CancelReleasesTheTaskAtOnce,
                            ExpiryReleasesTheTaskAfterItRan,
                            PendingCountFollowsScheduleCancelAndExpiry,
                            HandleOutlivesTheTimer,
                            OldHandlesAreNotConfusedByReusedMemory,
                            StopReturnsUnprocessedTimeouts,
                            RejectsBeyondMaxPending,
                            RejectsAnEmptyTask,
                            TaskExceptionIsCountedAndLaterTimeoutsStillRun,
                            ThrowingExecutorIsCountedAndDoesNotStopTheTimer,
                            TasksMayScheduleAndCancelOtherTimeouts,
                            StopAndProcessFromInsideATaskAreRejected,
                            ProcessUntilIsOnlyForManualTimers,
                            WorkerRunsDueTimeoutsWhenTheClockAdvances,
                            LateWorkerCatchesUpEveryMissedTick,
                            SlowCallbackDoesNotDelayOthers,
                            ManyProducersConcurrently,
                            CancelFromAnotherThreadRacesSafely,
                            StopFromAWorkerTaskIsRejected,
                            TasksQueuedInAPoolMayRunAfterTheTimerIsGone);

}  // namespace contract
}  // namespace cronwheel::timer_test
