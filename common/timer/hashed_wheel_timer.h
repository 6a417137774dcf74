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
class WheelCore;
}  // namespace detail

struct WheelOptions {
  // Granularity: a timeout fires at the first tick boundary at or after its deadline, so up to
  // one tick late. Also how often an idle worker wakes.
  std::chrono::nanoseconds tick = std::chrono::milliseconds(100);
  // Buckets, rounded up to a power of two. Pick wheel_size * tick at least as long as the
  // usual delay: then every timeout is looked at once, when it expires; a longer delay costs
  // one extra visit (a decrement) per further turn.
  std::size_t wheel_size = 512;
  // At most this many newly scheduled timeouts are moved into buckets per tick (Netty's
  // bound), so a burst of schedule() calls cannot stall a tick; the rest wait for the next
  // tick and are then placed as late timeouts (they still never fire early).
  std::size_t max_transfers_per_tick = 100'000;
};

// A hashed timing wheel in the style of Netty's HashedWheelTimer (Varghese & Lauck, scheme 6)
// for many coarse timeouts: schedule and cancel are O(1), expiry is O(1) per timeout plus one
// decrement per extra turn, whatever the number pending.
//
// How it works. Time is cut into ticks of `tick` from the moment the timer was built (S). Tick
// k ends at S + (k + 1) * tick; the worker processes it once the clock has passed that point:
// it expires bucket k & (wheel_size - 1). A timeout due at D belongs to the first tick whose
// end is at or after D; it is put in that tick's bucket with remaining_rounds = the number of
// whole turns until then, decremented at each visit, expired at zero. A timeout already late
// when it is placed goes into the bucket processed next, never into one already passed.
//
// Guarantees:
//  - Never early: a task runs no earlier than its deadline, normally less than one tick after
//    it (more when the worker was late, busy with callbacks or over the per-tick transfer
//    bound).
//  - No tick is skipped: a worker that wakes late processes every tick it missed, in order.
//  - Ticks do not drift: the worker sleeps to the absolute end of the next tick.
//  - Within one tick, tasks run in the order their timeouts were placed in the bucket, which
//    for timeouts scheduled by one thread is schedule order, not deadline order.
//
// Threads. schedule() and cancel() never touch the buckets: schedule() appends to a submission
// list, cancel() to a cancellation list, each under a mutex held for a few pointer writes. The
// buckets belong to the worker alone (or to the caller of process_until() on a manual timer),
// which at each step takes both lists, places up to max_transfers_per_tick submissions,
// unlinks the cancelled timeouts (O(1) each, intrusive lists), then expires the current bucket.
// Expired tasks are collected first and handed to the executor after, outside every lock, so
// tasks may schedule and cancel freely.
//
// Memory: one allocation per timeout (88 bytes, see timeout_node.h, plus what the task
// captures beyond std::function's inline buffer) and 16 bytes per bucket. Nothing else grows
// with the number pending: the lists are intrusive.
//
// How this departs from Netty: mutex-guarded intrusive lists instead of lock-free queues (a
// handful of instructions under the lock, no allocation beyond the timeout itself, and a
// clean cut-off at stop(), so no timeout is ever accepted and then lost); cancel() destroys
// the task at once instead of at the next tick; handles are reference counted and outlive the
// timer; expiry goes through an executor; a deadline exactly on a tick boundary fires at that
// boundary (Netty waits one more tick).
class HashedWheelTimer final : public Timer {
 public:
  // Throws std::invalid_argument for a non-positive tick, a zero or huge wheel, or a zero
  // transfer bound. Starts the worker thread unless options.manual.
  explicit HashedWheelTimer(Clock& clock, WheelOptions wheel = {}, TimerOptions options = {});
  // stop(), discarding what it returns. Must not run on the timer's own worker thread.
  ~HashedWheelTimer() override;

  TimerHandle schedule(TimerTask task, std::chrono::nanoseconds delay) override;
  std::vector<TimerHandle> stop() override;
  std::size_t process_until(Clock::SteadyTime now) override;
  std::size_t pending_timeouts() const override;
  std::uint64_t failed_callbacks() const override;

  std::chrono::nanoseconds tick() const noexcept { return std::chrono::nanoseconds(tick_ns_); }
  std::size_t wheel_size() const noexcept { return buckets_.size(); }

 private:
  // End of tick k: the time after which tick k may be processed.
  Clock::SteadyTime tick_end(std::int64_t k) const noexcept;
  // Processes every tick that ended by `now`; see process_until().
  std::size_t advance(Clock::SteadyTime now);
  // Takes the submission and cancellation lists, places submissions, unlinks cancelled.
  void collect();
  void place(detail::TimeoutNode* node) noexcept;
  void expire_current_tick(detail::DueList& due) noexcept;
  void run_worker(std::stop_token stop);

  Clock& clock_;
  const Clock::SteadyTime start_;
  const std::int64_t tick_ns_;
  const std::size_t max_transfers_;
  const TimerExecutor executor_;
  const bool manual_;
  detail::RefPtr<detail::WheelCore> core_;

  // Owned by the worker (or the process_until caller): the wheel and its cursor.
  std::vector<detail::ListHook> buckets_;  // sentinels of circular lists
  std::uint64_t mask_;
  std::int64_t tick_ = 0;                          // next tick to process
  detail::TimeoutNode* backlog_head_ = nullptr;    // taken from the core, not yet placed
  detail::TimeoutNode* backlog_tail_ = nullptr;
  std::atomic<bool> processing_{false};            // manual timers: inside process_until

  std::atomic<std::thread::id> worker_id_{};
  std::jthread worker_;  // last: starts after everything above is ready
};

}  // namespace cronwheel::common
