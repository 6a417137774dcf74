#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <stop_token>
#include <utility>
#include <vector>

#include "common/timer/indexed_heap.h"
#include "common/timer/timeout_node.h"
#include "common/timer/timer.h"
#include "common/timer/timer_base.h"
#include "common/util/clock.h"

namespace cronwheel::bench {

namespace detail {

// HeapTimer's core: the heap and everything around it, under the core's mutex.
class HeapCore final : public common::detail::TimerCore {
 public:
  HeapCore(common::TimerErrorHandler on_error, std::size_t max_pending)
      : TimerCore(std::move(on_error), max_pending) {}

  // Inserts a new timeout; the heap holds the timer's reference. The wake-up is the worker's
  // when the timeout became the earliest deadline, before the one the worker sleeps towards.
  common::detail::Submitted submit(common::Clock::SteadyTime deadline,
                                   common::TimerTask&& task) {
    std::lock_guard lock(mutex_);
    common::detail::Submitted submitted{admit_locked(heap_.size(), deadline, std::move(task))};
    common::detail::TimeoutNode& node = *submitted.node;
    heap_.push(Entry{node.deadline, next_seq_++, &node});  // throws: the node is freed
    node.add_ref();
    if (node.heap_index == 0 && node.deadline < sleeping_until_) {
      sleeping_until_ = node.deadline;
      submitted.wake = wake_;
    }
    return submitted;
  }

  void on_cancelled(common::detail::TimeoutNode& node) noexcept override {
    std::lock_guard lock(mutex_);
    if (closed_ || node.heap_index == Heap::kRemoved) return;
    heap_.remove(node.heap_index);
    node.release();  // the heap's reference; the canceller still holds one
  }

  // Moves every timeout due by `now` to `due`, in (deadline, schedule) order; returns how many.
  std::size_t pop_due(common::Clock::SteadyTime now, common::detail::NodeList& due) noexcept {
    std::lock_guard lock(mutex_);
    std::size_t n = 0;
    while (!heap_.empty() && heap_.front().deadline <= now) {
      common::detail::TimeoutNode* node = heap_.front().node;
      heap_.remove(0);
      if (node->try_expire()) {
        due.push_back(node);
        ++n;
      } else {
        node->release();  // cancelled, its canceller not yet here: it will find it gone
      }
    }
    return n;
  }

  // For the worker about to sleep: the deadline to sleep to, and `wake` to be stopped by a
  // schedule() that needs an earlier wake-up.
  common::Clock::SteadyTime arm(std::stop_source wake) noexcept {
    std::lock_guard lock(mutex_);
    wake_ = std::move(wake);
    sleeping_until_ = heap_.empty() ? common::Clock::SteadyTime::max() : heap_.front().deadline;
    return sleeping_until_;
  }

  std::size_t pending() const noexcept {
    std::lock_guard lock(mutex_);
    return heap_.size();
  }

  // After close(): empties the heap; the pending timeouts, ordered by deadline.
  std::vector<common::TimerHandle> take_all() {
    std::lock_guard lock(mutex_);
    std::vector<Entry> entries = heap_.take_all();
    std::sort(entries.begin(), entries.end(),
              [](const Entry& a, const Entry& b) { return Order::earlier(a, b); });
    std::vector<common::TimerHandle> pending;
    pending.reserve(entries.size());
    for (const Entry& entry : entries) {
      entry.node->heap_index = Heap::kRemoved;
      common::detail::keep_if_pending(entry.node, pending);
    }
    return pending;
  }

 private:
  // The deadline and sequence number are copied into the array so comparisons stay in it.
  struct Entry {
    common::Clock::SteadyTime deadline;
    std::uint64_t seq;                  // ties run in schedule order
    common::detail::TimeoutNode* node;  // holds the heap's reference
  };
  struct Order {
    static bool earlier(const Entry& a, const Entry& b) noexcept {
      return a.deadline < b.deadline || (a.deadline == b.deadline && a.seq < b.seq);
    }
    static void placed(const Entry& e, std::size_t index) noexcept { e.node->heap_index = index; }
  };
  using Heap = common::detail::IndexedHeap<Entry, Order>;

  Heap heap_{Order{}};
  std::uint64_t next_seq_ = 0;
  std::stop_source wake_{std::nostopstate};
  common::Clock::SteadyTime sleeping_until_ = common::Clock::SteadyTime::max();
};

}  // namespace detail

// The baseline the wheels are measured against (timer_bench, docs/benchmarks.md): a binary
// min-heap of deadlines, like java.util.concurrent's DelayedWorkQueue. Exact (a task runs as
// soon as the clock reaches its deadline) at O(log n) per schedule, cancel and expiry. Not in
// the library: nothing in production uses it.
//
// Every operation takes one mutex. cancel() removes the timeout from the heap at once (each
// timeout knows its index, so no search and no lazily kept corpses). The worker sleeps until
// the earliest deadline; a schedule() that brings the earliest deadline forward wakes it.
// Timeouts with equal deadlines run in schedule order. Expired tasks are collected under the
// mutex and handed to the executor outside it. Timeouts live in the same per-timer NodePool
// and the same TimeoutNode as the wheels', so they compare as structures, not as allocators.
//
// Same contract as common::Timer; see common/timer/timer.h. Its tests: heap_timer_test.
class HeapTimer final : public common::detail::TimerBase<detail::HeapCore> {
 public:
  // Starts the worker thread unless options.manual.
  explicit HeapTimer(common::Clock& clock, common::TimerOptions options = {});
  // stop(), discarding what it returns. Must not run on the timer's own worker thread.
  ~HeapTimer() override;

 private:
  std::size_t advance(common::Clock::SteadyTime now) override;
  std::vector<common::TimerHandle> drain() override;
  void run_worker(std::stop_token stop);
};

}  // namespace cronwheel::bench
