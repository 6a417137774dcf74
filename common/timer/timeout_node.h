#pragma once

// Internals of every Timer built on TimeoutNode: the two wheels of this library and the
// binary-heap timer the benchmarks compare them with (in tests/bench). Not part of the public
// API.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <stop_token>
#include <thread>
#include <utility>
#include <vector>

#include "common/timer/node_pool.h"
#include "common/timer/timer.h"
#include "common/util/clock.h"

namespace cronwheel::common::detail {

// An owning pointer to an intrusively reference-counted T (T::add_ref(), T::release()).
// Intrusive rather than std::shared_ptr so a timeout is one allocation and a handle one word.
template <typename T>
class RefPtr {
 public:
  RefPtr() noexcept = default;
  // Takes a new reference.
  explicit RefPtr(T* p) noexcept : p_(p) {
    if (p_ != nullptr) p_->add_ref();
  }
  // Takes over a reference the caller already owns.
  static RefPtr adopt(T* p) noexcept {
    RefPtr r;
    r.p_ = p;
    return r;
  }
  RefPtr(const RefPtr& other) noexcept : RefPtr(other.p_) {}
  RefPtr(RefPtr&& other) noexcept : p_(std::exchange(other.p_, nullptr)) {}
  RefPtr& operator=(RefPtr other) noexcept {
    std::swap(p_, other.p_);
    return *this;
  }
  ~RefPtr() { reset(); }

  void reset() noexcept {
    if (T* p = std::exchange(p_, nullptr)) p->release();
  }
  // Gives up ownership without releasing.
  T* detach() noexcept { return std::exchange(p_, nullptr); }

  T* get() const noexcept { return p_; }
  T* operator->() const noexcept { return p_; }
  T& operator*() const noexcept { return *p_; }
  explicit operator bool() const noexcept { return p_ != nullptr; }

 private:
  T* p_ = nullptr;
};

class TimerCore;

// Where a timeout sits in the wheel: bucket and position in that bucket's array. Written only
// by the wheel's worker.
struct WheelSlot {
  static constexpr std::uint32_t kNoBucket = static_cast<std::uint32_t>(-1);
  std::uint32_t bucket = kNoBucket;  // kNoBucket: not in a bucket (backlog, due, or gone)
  std::uint32_t index = 0;
};

// One scheduled timeout: the handle's target and the timer's bookkeeping in one slot of its
// timer's NodePool (80 bytes on x86-64, plus the task's captures beyond std::function's 16
// inline bytes, which std::function allocates itself).
//
// Ownership: reference counted. The handle holds one reference; the timer holds one while the
// timeout is queued, in a bucket or in the heap; a cancellation list entry holds one; a task
// handed to an executor holds one until it has run.
//
// `state` decides the race between cancel and expiry with one compare-and-swap out of
// kPending. Whoever wins owns `task`: the canceller destroys (or takes) it, the expirer runs it.
class TimeoutNode final {
 public:
  static constexpr std::uint8_t kPending = 0;
  static constexpr std::uint8_t kCancelled = 1;
  static constexpr std::uint8_t kExpired = 2;

  TimeoutNode(RefPtr<TimerCore> owner, Clock::SteadyTime due, TimerTask work) noexcept
      : core(std::move(owner)), deadline(due), task(std::move(work)) {}

  void add_ref() noexcept { refs.fetch_add(1, std::memory_order_relaxed); }
  // Drops `n` references at once.
  void release(std::uint32_t n = 1) noexcept {
    if (refs.fetch_sub(n, std::memory_order_acq_rel) == n) destroy();
  }
  bool try_transition(std::uint8_t to) noexcept {
    std::uint8_t expected = kPending;
    return state.compare_exchange_strong(expected, to, std::memory_order_acq_rel,
                                         std::memory_order_acquire);
  }
  bool try_expire() noexcept { return try_transition(kExpired); }
  bool is_pending() const noexcept { return state.load(std::memory_order_acquire) == kPending; }

  std::atomic<std::uint32_t> refs{1};
  std::atomic<std::uint8_t> state{kPending};
  RefPtr<TimerCore> core;  // never null while the node lives; also owns its memory
  const Clock::SteadyTime deadline;
  TimerTask task;  // owned by the winner of the transition out of kPending

  // Next on the wheel's submission list, or on a NodeList (a backlog, a list of due timeouts).
  // A timeout is on at most one of them at a time, and on none while it sits in a bucket.
  TimeoutNode* next = nullptr;
  // Next on the owning wheel's cancellation list; guarded by that timer's mutex.
  TimeoutNode* cancel_next = nullptr;
  // Where the timer keeps it, written by whoever owns the timer's structure: a wheel's worker
  // (its bucket and position), a heap's mutex (its position in the heap array).
  union {
    WheelSlot wheel_slot{};
    std::size_t heap_index;
  };

 private:
  // Destroys the node and returns its slot to the core's pool.
  void destroy() noexcept;
};

// Starts loading every cache line of `node` (usually two), for writing, so that their misses
// overlap: an access to a cold timeout then costs about one memory latency, not one per line
// (its atomic operations would otherwise fetch the lines one after the other).
inline void prefetch_whole(const TimeoutNode* node) noexcept {
  const char* p = reinterpret_cast<const char*>(node);
  __builtin_prefetch(p, 1, 3);
  __builtin_prefetch(p + sizeof(TimeoutNode) - 1, 1, 3);
}

// The part of a timer that timeouts point back to. It outlives the timer while any timeout
// (and so any handle) does, which is what makes cancel() and late-running tasks safe after
// the timer is destroyed. The timer drains every list of it in stop(), so no reference cycle
// survives the timer.
//
// Each timer's core derives from it and keeps, under mutex_, what producers, cancellers and
// the worker share; this base holds the parts every timer has: admission (stopped, too many
// pending), the slot pool, and the count of failed callbacks.
class TimerCore {
 public:
  // max_pending: TimerOptions::max_pending_timeouts (0: unlimited).
  TimerCore(TimerErrorHandler on_error, std::size_t max_pending)
      : max_pending_(max_pending),
        on_error_(std::move(on_error)),
        pool_(sizeof(TimeoutNode), alignof(TimeoutNode)) {}
  TimerCore(const TimerCore&) = delete;
  TimerCore& operator=(const TimerCore&) = delete;
  virtual ~TimerCore() = default;

  // Called by the canceller after it moved `node` to kCancelled: make the timer forget it.
  // Any thread; O(1) or O(log n); must not throw.
  virtual void on_cancelled(TimeoutNode& node) noexcept = 0;

  // Runs the task of a node this thread expired, then destroys it; counts what it throws.
  void run(TimeoutNode& node) noexcept;
  void report_failure(std::exception_ptr error) noexcept;
  std::uint64_t failed_callbacks() const noexcept {
    return failed_.load(std::memory_order_relaxed);
  }

  // Refuses every later submission (schedule() throws TimerRejectedError(kStopped)) and, in
  // the derived cores, every later cancellation entry. False when it was already closed.
  bool close() noexcept {
    std::lock_guard lock(mutex_);
    if (closed_) return false;
    closed_ = true;
    return true;
  }
  bool closed() const noexcept {
    std::lock_guard lock(mutex_);
    return closed_;
  }

  void add_ref() noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }
  void release() noexcept {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

  // Slots the pool has carved so far; see NodePool::capacity() for when it may be read.
  std::size_t pool_capacity() const noexcept { return pool_.capacity(); }

 protected:
  // A new pending timeout, holding one reference for the caller, once admitted: throws
  // TimerRejectedError when the timer is closed or when `pending` timeouts already wait and
  // that is the maximum, and std::bad_alloc. Call it with mutex_ held (the pool's allocating
  // side is not thread-safe).
  RefPtr<TimeoutNode> admit_locked(std::size_t pending, Clock::SteadyTime deadline,
                                   TimerTask&& task);

  // Guards the derived core's shared state; held for a few pointer writes (the wheels) or one
  // heap operation.
  mutable std::mutex mutex_;
  bool closed_ = false;  // guarded by mutex_

 private:
  friend class TimeoutNode;  // gives its slot back to pool_

  const std::size_t max_pending_;
  std::atomic<std::uint32_t> refs_{1};
  std::atomic<std::uint64_t> failed_{0};
  const TimerErrorHandler on_error_;
  // Holds the memory of every timeout of this timer. It outlives them all: each holds a
  // reference to the core.
  NodePool pool_;
};

// What a core's submit() returns to schedule().
struct Submitted {
  RefPtr<TimeoutNode> node;  // the caller's reference
  // Stopped by schedule(), outside the core's mutex (waking runs the sleeper's stop
  // callbacks), when the worker must wake for the new timeout; empty otherwise.
  std::stop_source wake{std::nostopstate};
};

// Hands `node`, which this thread expired, to `executor` (or runs it inline when the executor
// is empty) and releases the reference the caller held. Called outside every timer lock.
void hand_over(TimeoutNode* node, const TimerExecutor& executor) noexcept;

// A FIFO of timeouts linked through TimeoutNode::next, each holding one reference: a wheel's
// backlog of timeouts waiting to be placed, a heap's timeouts due in one step. Owned by one
// thread at a time (the timer's worker, or whoever holds the timer's mutex).
class NodeList {
 public:
  bool empty() const noexcept { return head_ == nullptr; }
  TimeoutNode* front() const noexcept { return head_; }

  void push_back(TimeoutNode* node) noexcept {
    node->next = nullptr;
    link(node, node);
  }
  // Moves every timeout of `other`, in order, to the end of this list; `other` is left empty.
  void splice(NodeList& other) noexcept {
    if (other.head_ == nullptr) return;
    link(other.head_, other.tail_);
    other.head_ = other.tail_ = nullptr;
  }
  // Unlinks the first timeout and returns it with its reference; null when empty.
  TimeoutNode* pop_front() noexcept {
    TimeoutNode* node = head_;
    if (node == nullptr) return nullptr;
    head_ = node->next;
    if (head_ == nullptr) tail_ = nullptr;
    node->next = nullptr;
    return node;
  }
  // The whole chain, with its references; the list is left empty.
  TimeoutNode* take() noexcept {
    tail_ = nullptr;
    return std::exchange(head_, nullptr);
  }

 private:
  void link(TimeoutNode* head, TimeoutNode* tail) noexcept {
    if (tail_ == nullptr) {
      head_ = head;
    } else {
      tail_->next = head;
    }
    tail_ = tail;
  }

  TimeoutNode* head_ = nullptr;
  TimeoutNode* tail_ = nullptr;
};

// Builds handles for the timers (TimerHandle's node constructor is private).
struct HandleAccess {
  static TimerHandle make(RefPtr<TimeoutNode> node) noexcept { return TimerHandle(node.detach()); }
  static TimerHandle adopt(TimeoutNode* node) noexcept { return TimerHandle(node); }
};

// Who drives a timer's steps: its worker thread, or, for a manual timer, the caller of
// process_until(). Every timer refuses the same misuse through it: process_until() on a timer
// with a worker or from inside a step, and stop() from one of the timer's own tasks (which
// would wait for itself). It owns the worker thread, so it is the timer's last member: the
// worker starts once everything it uses is built.
class StepOwner {
 public:
  explicit StepOwner(bool manual) noexcept : manual_(manual) {}

  bool manual() const noexcept { return manual_; }

  // Starts the worker thread, which runs `work(stop_token)` until it is asked to stop; does
  // nothing for a manual timer. Called once, at the end of the timer's constructor.
  template <class Work>
  void start(Work work) {
    if (manual_) return;
    worker_ = std::jthread([this, work = std::move(work)](std::stop_token stop) mutable {
      worker_id_.store(std::this_thread::get_id());
      work(std::move(stop));
    });
  }

  // The first half of every stop(): throws std::logic_error on the thread running a step (a
  // task of this timer), then calls `close()`, which refuses further submissions and returns
  // false when the timer was already stopped (then so does this, at once), and joins the
  // worker, which waits for the task it is running.
  template <class Close>
  bool stop(Close&& close) {
    if (inside_step()) {
      throw std::logic_error("stop() cannot be called from a task of the same timer");
    }
    if (!close()) return false;
    if (worker_.joinable()) {
      worker_.request_stop();
      worker_.join();
    }
    return true;
  }

  // Runs one manual step; throws std::logic_error for a timer with a worker or when already
  // inside a step.
  template <class Step>
  std::size_t run_manual(Step&& step) {
    if (!manual_) {
      throw std::logic_error("process_until() is for timers built with TimerOptions::manual");
    }
    if (processing_.exchange(true)) throw std::logic_error("process_until() is not re-entrant");
    struct Reset {
      std::atomic<bool>& flag;
      ~Reset() { flag.store(false); }
    } reset{processing_};
    return step();
  }

  // True on the thread running a step (a task of this timer runs inline there).
  bool inside_step() const noexcept {
    return manual_ ? processing_.load() : std::this_thread::get_id() == worker_id_.load();
  }

 private:
  const bool manual_;
  std::atomic<bool> processing_{false};
  std::atomic<std::thread::id> worker_id_{};
  std::jthread worker_;
};

// The loop of a worker that sleeps until its timer needs it, for timers whose schedule() and
// cancel() wake the worker when that moves earlier. Before each sleep, `arm(wake)` hands the
// timer a fresh stop_source (stopped to wake the sleeper early; stopping the worker is
// forwarded to it) and returns the time to sleep to; after each sleep, `step(now)` processes
// time. Returns when `stop` is requested.
template <class Arm, class Step>
void sleep_and_step(Clock& clock, std::stop_token stop, Arm&& arm, Step&& step) {
  while (!stop.stop_requested()) {
    std::stop_source wake;
    const auto until = arm(wake);
    {
      std::stop_callback forward(stop, [&wake] { wake.request_stop(); });
      clock.sleep_until(until, wake.get_token());
    }
    if (stop.stop_requested()) return;
    step(clock.steady_now());
  }
}

// now + delay, clamped to the representable range.
Clock::SteadyTime deadline_after(Clock::SteadyTime now, std::chrono::nanoseconds delay) noexcept;

// Orders what stop() returns.
void sort_by_deadline(std::vector<TimerHandle>& handles);

// For a stopped timer's clean-up, on the thread that owns its structures (the worker is gone):
//  - keep_if_pending: a timeout still pending goes into `unprocessed` (its handle adopts the
//    timer's reference); any other (cancelled, expired) has that reference released;
//  - keep_pending_of: the same for every timeout of a list linked through `next` (a submission
//    list or backlog), unlinking each;
//  - release_cancelled: releases the references a cancellation list (linked through
//    `cancel_next`) holds.
void keep_if_pending(TimeoutNode* node, std::vector<TimerHandle>& unprocessed);
void keep_pending_of(TimeoutNode* head, std::vector<TimerHandle>& unprocessed);
void release_cancelled(TimeoutNode* head) noexcept;

}  // namespace cronwheel::common::detail
