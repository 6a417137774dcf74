#pragma once

// Internals of the timers. Not part of the public API.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

#include "common/timer/timeout_node.h"
#include "common/timer/timer.h"
#include "common/util/clock.h"

namespace cronwheel::common::detail {

// The Timer operations that every timer built on TimeoutNode performs the same way, around its
// core: a TimerCore that also offers
//   Submitted submit(Clock::SteadyTime deadline, TimerTask&& task);  // under its mutex
//   std::size_t pending() const noexcept;
// What differs between timers is how they keep their timeouts: advance() and drain().
//
// A derived timer starts its worker with steps_.start() at the end of its constructor, and
// calls stop() first thing in its destructor (drain() is its own, so the base cannot).
template <class Core>
class TimerBase : public Timer {
 public:
  TimerHandle schedule(TimerTask task, std::chrono::nanoseconds delay) final {
    if (!task) throw std::invalid_argument("cannot schedule an empty task");
    Submitted submitted =
        core_->submit(deadline_after(clock_.steady_now(), delay), std::move(task));
    if (submitted.wake.stop_possible()) submitted.wake.request_stop();
    return HandleAccess::make(std::move(submitted.node));
  }

  std::vector<TimerHandle> stop() final {
    if (!steps_.stop([this] { return core_->close(); })) return {};
    return drain();
  }

  std::size_t process_until(Clock::SteadyTime now) final {
    return steps_.run_manual([&]() -> std::size_t { return core_->closed() ? 0 : advance(now); });
  }

  std::size_t pending_timeouts() const final { return core_->pending(); }

  std::uint64_t failed_callbacks() const final { return core_->failed_callbacks(); }

 protected:
  // Takes the executor and `manual` from `options`; the rest of them are the core's.
  TimerBase(Clock& clock, TimerOptions& options, RefPtr<Core> core)
      : clock_(clock),
        executor_(std::move(options.executor)),
        core_(std::move(core)),
        steps_(options.manual) {}

  // Processes time up to `now`: hands every timeout due by then to the executor and returns
  // how many. Runs on the thread that owns the timer's structure: the worker after each of its
  // sleeps, or the caller of process_until().
  virtual std::size_t advance(Clock::SteadyTime now) = 0;

  // The second half of stop(), once the core is closed and the worker gone: empties the
  // timer's structure and returns the timeouts still pending, ordered by deadline.
  virtual std::vector<TimerHandle> drain() = 0;

  Clock& clock_;
  const TimerExecutor executor_;
  const RefPtr<Core> core_;
  StepOwner steps_;
};

}  // namespace cronwheel::common::detail
