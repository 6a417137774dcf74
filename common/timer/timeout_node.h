#pragma once

// Internals shared by HashedWheelTimer and HeapTimer. Not part of the public API.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <stdexcept>
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
  static constexpr std::size_t kNotInHeap = static_cast<std::size_t>(-1);

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

  // Next on the wheel's submission list or backlog, or on a DueList. A timeout is on at most
  // one of them at a time, and on none while it sits in a bucket.
  TimeoutNode* next = nullptr;
  // Next on the owning wheel's cancellation list; guarded by that timer's mutex.
  TimeoutNode* cancel_next = nullptr;
  union {
    WheelSlot wheel_slot{};  // wheel: where it sits (worker only)
    std::size_t heap_index;  // heap: position in the heap array (heap mutex)
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
class TimerCore {
 public:
  explicit TimerCore(TimerErrorHandler on_error)
      : on_error_(std::move(on_error)), pool_(sizeof(TimeoutNode), alignof(TimeoutNode)) {}
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

  void add_ref() noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }
  void release() noexcept {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

  // Slots the pool has carved so far; see NodePool::capacity() for when it may be read.
  std::size_t pool_capacity() const noexcept { return pool_.capacity(); }

 protected:
  // A new pending timeout, holding one reference for the caller. The derived core calls it
  // under its mutex (the pool's allocation side is not thread-safe). Throws std::bad_alloc.
  RefPtr<TimeoutNode> make_node(Clock::SteadyTime deadline, TimerTask&& task);

 private:
  friend class TimeoutNode;  // gives its slot back to pool_

  std::atomic<std::uint32_t> refs_{1};
  std::atomic<std::uint64_t> failed_{0};
  const TimerErrorHandler on_error_;
  // Holds the memory of every timeout of this timer. It outlives them all: each holds a
  // reference to the core.
  NodePool pool_;
};

// Hands `node`, which this thread expired, to `executor` (or runs it inline when the executor
// is empty) and releases the reference the caller held. Called outside every timer lock.
void hand_over(TimeoutNode* node, const TimerExecutor& executor) noexcept;

// A singly linked list of expired nodes (through TimeoutNode::next), each holding one
// reference.
class DueList {
 public:
  void push_back(TimeoutNode* node) noexcept {
    node->next = nullptr;
    if (tail_ == nullptr) {
      head_ = node;
    } else {
      tail_->next = node;
    }
    tail_ = node;
    ++size_;
  }
  std::size_t size() const noexcept { return size_; }

  // Hands every node to `executor` (or runs it inline when the executor is empty), in order,
  // and releases the list's references. Called outside every timer lock.
  void dispatch(const TimerExecutor& executor) noexcept;

 private:
  TimeoutNode* head_ = nullptr;
  TimeoutNode* tail_ = nullptr;
  std::size_t size_ = 0;
};

// Builds handles for the timers (TimerHandle's node constructor is private).
struct HandleAccess {
  static TimerHandle make(RefPtr<TimeoutNode> node) noexcept { return TimerHandle(node.detach()); }
  static TimerHandle adopt(TimeoutNode* node) noexcept { return TimerHandle(node); }
};

// Who drives a timer's steps: its worker thread, or, for a manual timer, the caller of
// process_until(). Every timer refuses the same misuse through it: process_until() on a timer
// with a worker or from inside a step, and stop() from one of the timer's own tasks (which
// would wait for itself).
class StepOwner {
 public:
  explicit StepOwner(bool manual) noexcept : manual_(manual) {}

  bool manual() const noexcept { return manual_; }

  // Runs one manual step; throws std::logic_error for a timer with a worker or when already
  // inside a step.
  template <class Step>
  std::size_t run_manual(Step&& step) {
    if (!manual_) throw std::logic_error("process_until() is for timers built with TimerOptions::manual");
    if (processing_.exchange(true)) throw std::logic_error("process_until() is not re-entrant");
    struct Reset {
      std::atomic<bool>& flag;
      ~Reset() { flag.store(false); }
    } reset{processing_};
    return step();
  }

  // Called by the worker thread before its first step.
  void set_worker() noexcept { worker_id_.store(std::this_thread::get_id()); }

  // True on the thread running a step (a task of this timer runs inline there).
  bool inside_step() const noexcept {
    return manual_ ? processing_.load() : std::this_thread::get_id() == worker_id_.load();
  }

 private:
  const bool manual_;
  std::atomic<bool> processing_{false};
  std::atomic<std::thread::id> worker_id_{};
};

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
