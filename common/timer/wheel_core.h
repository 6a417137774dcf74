#pragma once

// Internals of the wheels. Not part of the public API.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <limits>
#include <mutex>
#include <stop_token>
#include <utility>

#include "common/timer/tick_scale.h"
#include "common/timer/timeout_node.h"
#include "common/timer/timer.h"
#include "common/util/clock.h"

namespace cronwheel::common::detail {

// What a wheel's producers, cancellers and worker share: two intrusive lists (submissions,
// cancellations), the pending count and the sleeping worker's wake-up, under the core's mutex,
// which is only ever held for a few pointer writes. The buckets are not here: they belong to
// the worker alone, which takes both lists at each step.
//
// Wake-ups. A worker that ticks (the hashed wheel: it sleeps one tick at a time) is never woken.
// A worker that sleeps until it is needed (the hierarchical wheel) says until when through
// arm(); schedule() then wakes it for a timeout whose tick boundary comes sooner, and
// schedule() or cancel() wakes it once max_queued calls have queued up since its last step, so
// that what they hold does not pile up while it sleeps for hours.
class WheelCore final : public TimerCore {
 public:
  // `ticks`: the wheel's, to find the tick boundary a new timeout fires at. `max_queued`:
  // kTicks for a worker that ticks, otherwise at least 1.
  static constexpr std::size_t kTicks = 0;
  WheelCore(TimerErrorHandler on_error, std::size_t max_pending, const TickScale& ticks,
            std::size_t max_queued)
      : TimerCore(std::move(on_error), max_pending),
        ticks_(ticks),
        wakes_(max_queued != kTicks),
        max_queued_(wakes_ ? max_queued : std::numeric_limits<std::size_t>::max()) {}

  // A new timeout, appended to the submission list; the list holds the timer's reference and
  // the caller gets the other.
  Submitted submit(Clock::SteadyTime deadline, TimerTask&& task) {
    const Clock::SteadyTime fire_at =
        wakes_ ? ticks_.time_of(ticks_.ceil(deadline)) : Clock::SteadyTime::max();
    std::lock_guard lock(mutex_);
    Submitted submitted{admit_locked(pending_.load(std::memory_order_relaxed), deadline,
                                     std::move(task))};
    TimeoutNode* node = submitted.node.get();
    pending_.fetch_add(1, std::memory_order_relaxed);  // the worker may lower it meanwhile
    node->add_ref();
    submitted_.push_back(node);
    earliest_fire_ = std::min(earliest_fire_, fire_at);
    ++queued_;
    if (fire_at < sleeping_until_ || queued_ >= max_queued_) submitted.wake = wake_locked();
    return submitted;
  }

  void on_cancelled(TimeoutNode& node) noexcept override {
    std::stop_source wake(std::nostopstate);
    {
      std::lock_guard lock(mutex_);
      // After stop() nobody drains the list; the timeout is no longer counted either.
      if (closed_) return;
      pending_.fetch_sub(1, std::memory_order_relaxed);
      node.add_ref();
      node.cancel_next = cancelled_head_;
      cancelled_head_ = &node;
      if (++queued_ >= max_queued_) wake = wake_locked();
    }
    // Outside the mutex: waking runs the sleeper's stop callbacks.
    if (wake.stop_possible()) wake.request_stop();
  }

  struct Taken {
    NodeList submitted;                     // each holding the timer's reference
    TimeoutNode* cancelled_head = nullptr;  // through cancel_next, each holding a reference
    Clock::SteadyTime earliest_fire = Clock::SteadyTime::max();  // of the submissions
  };

  // For the worker's step: both lists. The worker counts as awake until it arms again.
  Taken take() noexcept {
    std::lock_guard lock(mutex_);
    Taken taken{{}, std::exchange(cancelled_head_, nullptr), earliest_fire_};
    taken.submitted.splice(submitted_);
    earliest_fire_ = Clock::SteadyTime::max();
    queued_ = 0;
    wake_locked();
    return taken;
  }

  // For a worker that sleeps until it is needed, about to sleep until `until` (what its
  // buckets need): the time to sleep to, earlier when the lists need a step sooner, and `wake`
  // to be stopped by a schedule() or cancel() that needs one.
  Clock::SteadyTime arm(std::stop_source wake, Clock::SteadyTime until) noexcept {
    std::lock_guard lock(mutex_);
    until = std::min(until, earliest_fire_);
    if (queued_ >= max_queued_) until = kAwake;
    wake_ = std::move(wake);
    sleeping_until_ = until;
    return until;
  }

  // The worker handed `n` timeouts to the executor.
  void expired(std::size_t n) noexcept { pending_.fetch_sub(n, std::memory_order_relaxed); }

  std::size_t pending() const noexcept { return pending_.load(std::memory_order_relaxed); }

  // After stop(): nothing is pending any more.
  void clear_pending() noexcept { pending_.store(0, std::memory_order_relaxed); }

 private:
  // sleeping_until_ while the worker is awake (or the timer is manual, or ticks): nothing
  // needs a wake.
  static constexpr Clock::SteadyTime kAwake = Clock::SteadyTime::min();

  // Marks the worker awake and returns the source that wakes it, if it sleeps.
  std::stop_source wake_locked() noexcept {
    sleeping_until_ = kAwake;
    return std::exchange(wake_, std::stop_source(std::nostopstate));
  }

  const TickScale ticks_;
  const bool wakes_;
  const std::size_t max_queued_;
  // Changed under mutex_ except by expired(), which only lowers it: schedule()'s check under
  // the mutex can only overestimate, so the maximum is never exceeded.
  std::atomic<std::size_t> pending_{0};
  NodeList submitted_;
  TimeoutNode* cancelled_head_ = nullptr;
  Clock::SteadyTime earliest_fire_ = Clock::SteadyTime::max();
  std::size_t queued_ = 0;  // schedule() and cancel() calls since the last take()
  std::stop_source wake_{std::nostopstate};
  Clock::SteadyTime sleeping_until_ = kAwake;
};

// Collects the timeouts a wheel's walk expires and hands them to the executor in batches of
// kBatch, outside every lock, while their cache lines are still close, rather than after the
// whole walk. Handing over mid-walk is safe because nothing a task may do (schedule, cancel)
// touches a bucket. What is left is handed over by dispatch() or the destructor.
class ExpiryBatch {
 public:
  static constexpr std::size_t kBatch = 32;

  ExpiryBatch(WheelCore& core, const TimerExecutor& executor) noexcept
      : core_(core), executor_(executor) {}
  ExpiryBatch(const ExpiryBatch&) = delete;
  ExpiryBatch& operator=(const ExpiryBatch&) = delete;
  ~ExpiryBatch() { dispatch(); }

  // `node` is due and in no bucket, and comes with the reference the caller held: it is
  // expired and queued for the executor, or, when it was cancelled meanwhile, released (its
  // cancellation entry has a reference of its own).
  void expire(TimeoutNode* node) noexcept {
    if (!node->try_expire()) {
      node->release();
      return;
    }
    batch_[batched_++] = node;
    if (batched_ == kBatch) dispatch();
  }

  // Hands over what is queued.
  void dispatch() noexcept {
    core_.expired(batched_);
    for (std::size_t k = 0; k < batched_; ++k) hand_over(batch_[k], executor_);
    handed_over_ += batched_;
    batched_ = 0;
  }

  // Expired so far, handed over or queued.
  std::size_t handed_over() const noexcept { return handed_over_ + batched_; }

 private:
  WheelCore& core_;
  const TimerExecutor& executor_;
  TimeoutNode* batch_[kBatch];
  std::size_t batched_ = 0;
  std::size_t handed_over_ = 0;
};

}  // namespace cronwheel::common::detail
