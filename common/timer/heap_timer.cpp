#include "common/timer/heap_timer.h"

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

namespace cronwheel::common {

namespace detail {

// The heap and everything around it, under one mutex.
class HeapCore final : public TimerCore {
 public:
  HeapCore(TimerErrorHandler on_error, std::size_t max_pending)
      : TimerCore(std::move(on_error)), max_pending_(max_pending) {}

  struct Pushed {
    RefPtr<TimeoutNode> node;  // the caller's reference
    std::stop_source wake;     // to stop when the worker must wake for this deadline
  };

  // Inserts a new timeout; the heap holds the timer's reference. `wake` is the worker's
  // wake-up source when the node became the earliest deadline before the one the worker
  // sleeps towards.
  Pushed push(Clock::SteadyTime deadline, TimerTask&& task) {
    std::size_t pending = 0;
    {
      std::lock_guard lock(mutex_);
      if (closed_) {
        throw TimerRejectedError(TimerRejectedError::Reason::kStopped, "timer is stopped");
      }
      pending = heap_.size();
      if (max_pending_ == 0 || pending < max_pending_) {
        Pushed pushed{make_node(deadline, std::move(task)), std::stop_source(std::nostopstate)};
        TimeoutNode& node = *pushed.node;
        heap_.push_back(Entry{node.deadline, next_seq_++, &node});  // throws: node freed
        node.add_ref();
        sift_up(heap_.size() - 1);
        if (node.heap_index == 0 && node.deadline < sleeping_until_) {
          sleeping_until_ = node.deadline;
          pushed.wake = wake_;
        }
        return pushed;
      }
    }
    throw TimerRejectedError(TimerRejectedError::Reason::kTooManyPending,
                             "too many pending timeouts (" + std::to_string(pending + 1) +
                                 "), max is " + std::to_string(max_pending_));
  }

  void on_cancelled(TimeoutNode& node) noexcept override {
    std::lock_guard lock(mutex_);
    if (closed_ || node.heap_index == TimeoutNode::kNotInHeap) return;
    remove_at(node.heap_index);
    node.release();  // the heap's reference; the canceller still holds one
  }

  // Moves every timeout due by `now` to `due`, in (deadline, schedule) order.
  void pop_due(Clock::SteadyTime now, DueList& due) noexcept {
    std::lock_guard lock(mutex_);
    while (!heap_.empty() && heap_.front().deadline <= now) {
      TimeoutNode* node = heap_.front().node;
      remove_at(0);
      if (node->try_expire()) {
        due.push_back(node);
      } else {
        node->release();  // cancelled, its canceller not yet here: it will find it gone
      }
    }
  }

  // For the worker about to sleep: the deadline to sleep to, and `wake` to be stopped by a
  // schedule() that needs an earlier wake-up.
  Clock::SteadyTime arm(std::stop_source wake) noexcept {
    std::lock_guard lock(mutex_);
    wake_ = std::move(wake);
    sleeping_until_ = heap_.empty() ? Clock::SteadyTime::max() : heap_.front().deadline;
    return sleeping_until_;
  }

  std::size_t pending() const noexcept {
    std::lock_guard lock(mutex_);
    return heap_.size();
  }

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

  // After close(): empties the heap; the pending timeouts, ordered by deadline.
  std::vector<TimerHandle> take_all() {
    std::lock_guard lock(mutex_);
    std::sort(heap_.begin(), heap_.end(), earlier);
    std::vector<TimerHandle> pending;
    pending.reserve(heap_.size());
    for (auto& entry : heap_) {
      entry.node->heap_index = TimeoutNode::kNotInHeap;
      keep_if_pending(entry.node, pending);
    }
    heap_.clear();
    return pending;
  }

 private:
  // The deadline and sequence number are copied into the array so comparisons stay in it.
  struct Entry {
    Clock::SteadyTime deadline;
    std::uint64_t seq;  // ties run in schedule order
    TimeoutNode* node;  // holds the heap's reference
  };

  static bool earlier(const Entry& a, const Entry& b) noexcept {
    return a.deadline < b.deadline || (a.deadline == b.deadline && a.seq < b.seq);
  }

  void set(std::size_t i, const Entry& e) noexcept {
    heap_[i] = e;
    e.node->heap_index = i;
  }

  void sift_up(std::size_t i) noexcept {
    const Entry moving = heap_[i];
    while (i > 0) {
      const std::size_t parent = (i - 1) / 2;
      if (!earlier(moving, heap_[parent])) break;
      set(i, heap_[parent]);
      i = parent;
    }
    set(i, moving);
  }

  void sift_down(std::size_t i) noexcept {
    const Entry moving = heap_[i];
    const std::size_t n = heap_.size();
    while (true) {
      std::size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && earlier(heap_[child + 1], heap_[child])) ++child;
      if (!earlier(heap_[child], moving)) break;
      set(i, heap_[child]);
      i = child;
    }
    set(i, moving);
  }

  // Removes the entry at `i` (its reference now belongs to the caller).
  void remove_at(std::size_t i) noexcept {
    heap_[i].node->heap_index = TimeoutNode::kNotInHeap;
    const std::size_t last = heap_.size() - 1;
    if (i != last) {
      heap_[i] = heap_[last];
      heap_.pop_back();
      if (i > 0 && earlier(heap_[i], heap_[(i - 1) / 2])) {
        sift_up(i);
      } else {
        sift_down(i);
      }
    } else {
      heap_.pop_back();
    }
  }

  mutable std::mutex mutex_;
  bool closed_ = false;
  const std::size_t max_pending_;
  std::vector<Entry> heap_;
  std::uint64_t next_seq_ = 0;
  std::stop_source wake_{std::nostopstate};
  Clock::SteadyTime sleeping_until_ = Clock::SteadyTime::max();
};

}  // namespace detail

using detail::TimeoutNode;

HeapTimer::HeapTimer(Clock& clock, TimerOptions options)
    : clock_(clock),
      executor_(std::move(options.executor)),
      core_(detail::RefPtr<detail::HeapCore>::adopt(
          new detail::HeapCore(std::move(options.on_error), options.max_pending_timeouts))),
      steps_(options.manual) {
  if (!steps_.manual()) {
    worker_ = std::jthread([this](std::stop_token stop) {
      steps_.set_worker();
      run_worker(std::move(stop));
    });
  }
}

HeapTimer::~HeapTimer() { stop(); }

TimerHandle HeapTimer::schedule(TimerTask task, std::chrono::nanoseconds delay) {
  if (!task) throw std::invalid_argument("cannot schedule an empty task");
  const auto deadline = detail::deadline_after(clock_.steady_now(), delay);
  auto pushed = core_->push(deadline, std::move(task));
  // Outside the mutex: waking runs the sleeper's stop callbacks.
  if (pushed.wake.stop_possible()) pushed.wake.request_stop();
  return detail::HandleAccess::make(std::move(pushed.node));
}

std::size_t HeapTimer::process_until(Clock::SteadyTime now) {
  return steps_.run_manual([&]() -> std::size_t { return core_->closed() ? 0 : advance(now); });
}

std::size_t HeapTimer::pending_timeouts() const { return core_->pending(); }

std::uint64_t HeapTimer::failed_callbacks() const { return core_->failed_callbacks(); }

std::size_t HeapTimer::advance(Clock::SteadyTime now) {
  detail::DueList due;
  core_->pop_due(now, due);
  const std::size_t handed_over = due.size();
  due.dispatch(executor_);
  return handed_over;
}

void HeapTimer::run_worker(std::stop_token stop) {
  while (!stop.stop_requested()) {
    // A fresh source per sleep: schedule() stops it to wake us for an earlier deadline, and
    // stopping the worker is forwarded to it.
    std::stop_source wake;
    const auto deadline = core_->arm(wake);
    {
      std::stop_callback forward(stop, [&wake] { wake.request_stop(); });
      clock_.sleep_until(deadline, wake.get_token());
    }
    if (stop.stop_requested()) return;
    advance(clock_.steady_now());
  }
}

std::vector<TimerHandle> HeapTimer::stop() {
  if (steps_.inside_step()) {
    throw std::logic_error("stop() cannot be called from a task of the same timer");
  }
  if (!core_->close()) return {};
  if (worker_.joinable()) {
    worker_.request_stop();
    worker_.join();
  }
  return core_->take_all();
}

}  // namespace cronwheel::common
