#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "common/util/clock.h"

namespace cronwheel::common {

namespace detail {
class TimeoutNode;
struct HandleAccess;
}  // namespace detail

// The work a timeout runs when it expires.
using TimerTask = std::function<void()>;

// Runs expired tasks. The timer calls it on its worker thread (or on the thread calling
// process_until), outside every timer lock, once per expired timeout, in expiry order. It may
// run the work inline or queue it to a pool; it must return quickly, because the next timeouts
// wait for it. If it throws, the work is dropped and counted in failed_callbacks(); it must not
// have run or queued the work in that case.
using TimerExecutor = std::function<void(std::function<void()>)>;

// Told about every exception a task (or the executor) threw, on the thread where it was caught.
// Its own exceptions are swallowed.
using TimerErrorHandler = std::function<void(std::exception_ptr)>;

// An error handler that logs every exception at error level as "<who>: a task failed: <what>".
TimerErrorHandler logging_timer_errors(std::string who);

// Settings every timer shares.
struct TimerOptions {
  // Empty (the default): tasks run inline on the worker thread, one after the other. Keep them
  // short then: a slow task delays every timeout behind it, as in Netty's HashedWheelTimer.
  // Give a pool (see TimerExecutor) when tasks may block or take long.
  TimerExecutor executor{};
  // 0 means unlimited. Otherwise schedule() throws TimerRejectedError(kTooManyPending) when
  // that many timeouts are already pending (scheduled, neither expired nor cancelled).
  std::size_t max_pending_timeouts = 0;
  // Optional; exceptions are counted in failed_callbacks() either way.
  TimerErrorHandler on_error{};
  // false: the timer starts a worker thread that sleeps on the Clock and processes time.
  // true: no thread; the owner calls process_until() (tests, benchmarks, an event loop).
  bool manual = false;
};

// What TimerHandle::cancel() did.
enum class CancelResult {
  kCancelled,         // this call cancelled it: the task will never run and has been destroyed
  kAlreadyExpired,    // too late: the task was handed to the executor (ran, runs or will run)
  kAlreadyCancelled,  // an earlier cancel won; nothing changed
  kNoTimeout,         // the handle is empty
};
std::string_view to_string(CancelResult result);

enum class TimeoutState {
  kPending,    // waiting for its deadline (also: returned by stop(), never to run)
  kCancelled,  // cancelled before it expired
  kExpired,    // handed to the executor
};
std::string_view to_string(TimeoutState state);

// Thrown by schedule() when the timeout is not accepted. The task is destroyed.
class TimerRejectedError : public std::runtime_error {
 public:
  enum class Reason { kTooManyPending, kStopped };
  TimerRejectedError(Reason reason, const std::string& message);
  Reason reason() const noexcept { return reason_; }

 private:
  Reason reason_;
};

// A reference to one scheduled timeout, returned by Timer::schedule().
//
// Handles share ownership of the timeout (reference counted, like std::shared_ptr), so a
// handle stays valid after the timeout fired, after it was cancelled, after stop() and after
// the timer itself was destroyed: it can never point at memory that was reused. Copies refer to
// the same timeout. Different handle objects may be used from different threads at once; one
// handle object must not be assigned while another thread uses it.
class TimerHandle {
 public:
  TimerHandle() noexcept = default;
  TimerHandle(const TimerHandle& other) noexcept;
  TimerHandle(TimerHandle&& other) noexcept;
  TimerHandle& operator=(const TimerHandle& other) noexcept;
  TimerHandle& operator=(TimerHandle&& other) noexcept;
  ~TimerHandle();

  // Exactly one of "cancel() returned kCancelled" and "the task was handed to the executor"
  // happens: a single compare-and-swap on the timeout's state decides. On kCancelled the task
  // is destroyed here, on the calling thread, and the timer is told to forget the timeout: a
  // wheel appends it to its cancellation list (O(1), a short mutex) and turns its bucket entry
  // into a tombstone at its next step, without walking any bucket.
  // Never blocks on a running task. A timeout that stop() returned is still pending: cancel()
  // returns kCancelled without touching the stopped (or destroyed) timer.
  CancelResult cancel() const;

  // Like cancel(), but hands the task back instead of destroying it: non-empty exactly when
  // this call cancelled the timeout. Lets the owner run or re-schedule what stop() returned.
  TimerTask take_task() const;

  // An empty handle reports kCancelled (it will never run anything).
  TimeoutState state() const noexcept;
  // When it was due (schedule time + delay); the epoch for an empty handle.
  Clock::SteadyTime deadline() const noexcept;

  explicit operator bool() const noexcept { return node_ != nullptr; }

 private:
  friend struct detail::HandleAccess;
  explicit TimerHandle(detail::TimeoutNode* adopted) noexcept : node_(adopted) {}

  detail::TimeoutNode* node_ = nullptr;  // owns one reference
};

// A one-shot timer: run a task once after a delay. HashedWheelTimer (O(1) per operation, tick
// granularity, ticks while idle) and HierarchicalWheelTimer (O(1) schedule and cancel, a delay
// queue of buckets: sleeps until the next one is due) implement it; so does the binary-heap
// timer the benchmarks measure them against (in tests/bench: O(log n), exact).
//
// Thread safety: schedule(), TimerHandle::cancel(), pending_timeouts() and failed_callbacks()
// may be called from any thread, including from a task. stop() from any thread except from a
// task running on the timer's own worker (that would wait for itself: it throws
// std::logic_error). process_until() only on manual timers, from one thread at a time, never
// concurrently with stop().
//
// Callbacks: each expired task is handed, once, to TimerOptions::executor on the worker thread
// (on a manual timer: the thread in process_until()), never under a timer lock. With the
// default inline executor the task runs right there, so tasks of one timer never overlap and
// a slow one delays the rest; with a pool they run on its threads, possibly after stop()
// returned and after the timer was destroyed (what they capture must still be alive). An
// exception from a task is caught, counted in failed_callbacks() and passed to
// TimerOptions::on_error; the worker carries on.
//
// Time comes from the injected Clock, which must outlive the timer.
class Timer {
 public:
  Timer() = default;
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;
  virtual ~Timer() = default;

  // Runs `task` once, no earlier than `delay` from now (negative delays count as zero).
  // Throws TimerRejectedError after stop() or beyond max_pending_timeouts, and
  // std::invalid_argument for an empty task.
  virtual TimerHandle schedule(TimerTask task, std::chrono::nanoseconds delay) = 0;

  // Stops the worker (waiting for the task it is running, if any) and returns the timeouts
  // that were pending: not expired, not cancelled, ordered by deadline. They will never run;
  // their handles still work. Later schedule() calls throw. Only the first call returns
  // anything. Tasks already handed to a pool executor are not waited for.
  virtual std::vector<TimerHandle> stop() = 0;

  // Manual timers only (TimerOptions::manual; std::logic_error otherwise): processes time up
  // to `now`, expiring and handing to the executor every timeout that is due. The worker
  // thread of a non-manual timer runs exactly this after each of its sleeps. Not re-entrant
  // (std::logic_error when a task calls it). Returns the number of tasks handed over.
  virtual std::size_t process_until(Clock::SteadyTime now) = 0;

  // Scheduled, neither expired nor cancelled.
  virtual std::size_t pending_timeouts() const = 0;

  // Exceptions thrown by tasks or by the executor so far.
  virtual std::uint64_t failed_callbacks() const = 0;
};

}  // namespace cronwheel::common
