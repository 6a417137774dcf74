#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <stop_token>
#include <thread>
#include <vector>

#include "common/timer/timeout_node.h"
#include "common/timer/timer.h"
#include "common/util/clock.h"

namespace cronwheel::common {

namespace detail {
class HeapCore;
}  // namespace detail

// The baseline the wheel is measured against: a binary min-heap of deadlines, like
// java.util.concurrent's DelayedWorkQueue. Exact (a task runs as soon as the clock reaches its
// deadline) at O(log n) per schedule, cancel and expiry.
//
// Every operation takes one mutex. cancel() removes the timeout from the heap at once (each
// timeout knows its index, so no search and no lazily kept corpses). The worker sleeps until
// the earliest deadline; a schedule() that brings the earliest deadline forward wakes it.
// Timeouts with equal deadlines run in schedule order. Expired tasks are collected under the
// mutex and handed to the executor outside it. Timeouts live in the same kind of per-timer
// NodePool as the wheel's, so the two compare as structures, not as allocators.
//
// Same contract as Timer; see timer.h.
class HeapTimer final : public Timer {
 public:
  // Starts the worker thread unless options.manual.
  explicit HeapTimer(Clock& clock, TimerOptions options = {});
  // stop(), discarding what it returns. Must not run on the timer's own worker thread.
  ~HeapTimer() override;

  TimerHandle schedule(TimerTask task, std::chrono::nanoseconds delay) override;
  std::vector<TimerHandle> stop() override;
  std::size_t process_until(Clock::SteadyTime now) override;
  std::size_t pending_timeouts() const override;
  std::uint64_t failed_callbacks() const override;

 private:
  std::size_t advance(Clock::SteadyTime now);
  void run_worker(std::stop_token stop);

  Clock& clock_;
  const TimerExecutor executor_;
  detail::RefPtr<detail::HeapCore> core_;
  detail::StepOwner steps_;
  std::jthread worker_;  // last: starts after everything above is ready
};

}  // namespace cronwheel::common
