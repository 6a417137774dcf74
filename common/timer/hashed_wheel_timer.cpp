#include "common/timer/hashed_wheel_timer.h"

#include <algorithm>
#include <bit>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

namespace cronwheel::common {

namespace detail {

// What producers, cancellers and the worker share: two intrusive lists and the pending
// count, under one mutex that is only ever held for a few pointer writes.
class WheelCore final : public TimerCore {
 public:
  WheelCore(TimerErrorHandler on_error, std::size_t max_pending)
      : TimerCore(std::move(on_error)), max_pending_(max_pending) {}

  // Appends `node` to the submission list, taking a reference for the timer.
  void submit(TimeoutNode& node) {
    std::size_t pending = 0;
    {
      std::lock_guard lock(mutex_);
      if (closed_) {
        throw TimerRejectedError(TimerRejectedError::Reason::kStopped, "timer is stopped");
      }
      pending = pending_.load(std::memory_order_relaxed);
      if (max_pending_ == 0 || pending < max_pending_) {
        pending_.fetch_add(1, std::memory_order_relaxed);  // the worker may lower it meanwhile
        node.add_ref();
        node.next = nullptr;
        if (submitted_tail_ == nullptr) {
          submitted_head_ = &node;
        } else {
          submitted_tail_->next = &node;
        }
        submitted_tail_ = &node;
        return;
      }
    }
    throw TimerRejectedError(TimerRejectedError::Reason::kTooManyPending,
                             "too many pending timeouts (" + std::to_string(pending + 1) +
                                 "), max is " + std::to_string(max_pending_));
  }

  void on_cancelled(TimeoutNode& node) noexcept override {
    std::lock_guard lock(mutex_);
    // After stop() nobody drains the list; the timeout is no longer counted either.
    if (closed_) return;
    pending_.fetch_sub(1, std::memory_order_relaxed);
    node.add_ref();
    node.cancel_next = cancelled_head_;
    cancelled_head_ = &node;
  }

  struct Taken {
    TimeoutNode* submitted_head = nullptr;
    TimeoutNode* submitted_tail = nullptr;
    TimeoutNode* cancelled_head = nullptr;  // through cancel_next, each holding a reference
  };

  Taken take() noexcept {
    std::lock_guard lock(mutex_);
    Taken taken{submitted_head_, submitted_tail_, cancelled_head_};
    submitted_head_ = submitted_tail_ = cancelled_head_ = nullptr;
    return taken;
  }

  // The worker handed `n` timeouts to the executor.
  void expired(std::size_t n) noexcept { pending_.fetch_sub(n, std::memory_order_relaxed); }

  std::size_t pending() const noexcept { return pending_.load(std::memory_order_relaxed); }

  // Refuses further submissions and cancellation entries. False when already closed.
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
  void clear_pending() noexcept { pending_.store(0, std::memory_order_relaxed); }

 private:
  mutable std::mutex mutex_;
  bool closed_ = false;
  const std::size_t max_pending_;
  // Changed under mutex_ except by expired(), which only lowers it: schedule()'s check under
  // the mutex can only overestimate, so the maximum is never exceeded.
  std::atomic<std::size_t> pending_{0};
  TimeoutNode* submitted_head_ = nullptr;
  TimeoutNode* submitted_tail_ = nullptr;
  TimeoutNode* cancelled_head_ = nullptr;
};

namespace {

constexpr std::size_t kMaxWheelSize = std::size_t{1} << 30;

void unlink(ListHook& hook) noexcept {
  hook.prev->next = hook.next;
  hook.next->prev = hook.prev;
  hook.prev = hook.next = nullptr;
}

void link_last(ListHook& bucket, ListHook& hook) noexcept {
  hook.prev = bucket.prev;
  hook.next = &bucket;
  bucket.prev->next = &hook;
  bucket.prev = &hook;
}

std::int64_t checked_tick(std::chrono::nanoseconds tick) {
  if (tick <= std::chrono::nanoseconds::zero()) {
    throw std::invalid_argument("wheel tick must be positive");
  }
  return tick.count();
}

std::size_t checked_wheel_size(std::size_t n) {
  if (n == 0 || n > kMaxWheelSize) {
    throw std::invalid_argument("wheel size must be in [1, 2^30], got " + std::to_string(n));
  }
  return std::bit_ceil(n);
}

std::size_t checked_transfers(std::size_t n) {
  if (n == 0) throw std::invalid_argument("max_transfers_per_tick must be positive");
  return n;
}

}  // namespace
}  // namespace detail

using detail::ListHook;
using detail::TimeoutNode;

HashedWheelTimer::HashedWheelTimer(Clock& clock, WheelOptions wheel, TimerOptions options)
    : clock_(clock),
      start_(clock.steady_now()),
      tick_ns_(detail::checked_tick(wheel.tick)),
      max_transfers_(detail::checked_transfers(wheel.max_transfers_per_tick)),
      executor_(std::move(options.executor)),
      manual_(options.manual),
      core_(detail::RefPtr<detail::WheelCore>::adopt(
          new detail::WheelCore(std::move(options.on_error), options.max_pending_timeouts))),
      buckets_(detail::checked_wheel_size(wheel.wheel_size)),
      mask_(buckets_.size() - 1) {
  for (auto& bucket : buckets_) bucket.prev = bucket.next = &bucket;
  if (!manual_) {
    worker_ = std::jthread([this](std::stop_token stop) {
      worker_id_.store(std::this_thread::get_id());
      run_worker(std::move(stop));
    });
  }
}

HashedWheelTimer::~HashedWheelTimer() { stop(); }

TimerHandle HashedWheelTimer::schedule(TimerTask task, std::chrono::nanoseconds delay) {
  if (!task) throw std::invalid_argument("cannot schedule an empty task");
  const auto deadline = detail::deadline_after(clock_.steady_now(), delay);
  auto node = detail::RefPtr<TimeoutNode>::adopt(new TimeoutNode(
      detail::RefPtr<detail::TimerCore>(core_.get()), deadline, std::move(task)));
  core_->submit(*node);
  return detail::HandleAccess::make(std::move(node));
}

std::size_t HashedWheelTimer::process_until(Clock::SteadyTime now) {
  if (!manual_) {
    throw std::logic_error("process_until() is for timers built with TimerOptions::manual");
  }
  if (processing_.exchange(true)) {
    throw std::logic_error("process_until() is not re-entrant");
  }
  struct Reset {
    std::atomic<bool>& flag;
    ~Reset() { flag.store(false); }
  } reset{processing_};
  if (core_->closed()) return 0;
  return advance(now);
}

std::size_t HashedWheelTimer::pending_timeouts() const { return core_->pending(); }

std::uint64_t HashedWheelTimer::failed_callbacks() const { return core_->failed_callbacks(); }

Clock::SteadyTime HashedWheelTimer::tick_end(std::int64_t k) const noexcept {
  return start_ + std::chrono::duration_cast<Clock::SteadyTime::duration>(
                      std::chrono::nanoseconds((k + 1) * tick_ns_));
}

std::size_t HashedWheelTimer::advance(Clock::SteadyTime now) {
  // collect() runs once before each tick processed, which bounds the transfers per tick, and
  // once even when no tick has ended, so a manual caller's submissions and cancellations
  // reach the wheel without waiting for a boundary.
  collect();
  std::size_t handed_over = 0;
  while (tick_end(tick_) <= now) {
    detail::DueList due;
    expire_current_tick(due);
    ++tick_;
    handed_over += due.size();
    core_->expired(due.size());
    due.dispatch(executor_);  // outside every lock; the next tick waits for this one's tasks
    if (tick_end(tick_) > now) break;
    collect();
  }
  return handed_over;
}

void HashedWheelTimer::collect() {
  auto taken = core_->take();
  if (taken.submitted_head != nullptr) {
    if (backlog_tail_ == nullptr) {
      backlog_head_ = taken.submitted_head;
    } else {
      backlog_tail_->next = taken.submitted_head;
    }
    backlog_tail_ = taken.submitted_tail;
  }

  for (std::size_t n = 0; n < max_transfers_ && backlog_head_ != nullptr; ++n) {
    TimeoutNode* node = backlog_head_;
    backlog_head_ = static_cast<TimeoutNode*>(node->next);
    if (backlog_head_ == nullptr) backlog_tail_ = nullptr;
    node->next = nullptr;
    if (node->is_pending()) {
      place(node);  // the timer's reference moves into the bucket
    } else {
      node->release();  // cancelled while queued
    }
  }

  // Cancelled timeouts leave their bucket now, not when the wheel comes round to them. One
  // still in the backlog is dropped when it reaches the front.
  for (TimeoutNode* node = taken.cancelled_head; node != nullptr;) {
    TimeoutNode* next = node->cancel_next;
    if (node->prev != nullptr) {
      detail::unlink(*node);
      node->release();  // the bucket's reference
    }
    node->release();  // the cancellation list's reference
    node = next;
  }
}

void HashedWheelTimer::place(TimeoutNode* node) noexcept {
  // The tick whose end is the first boundary at or after the deadline: ceil(d / tick) - 1.
  const std::int64_t since_start =
      std::chrono::duration_cast<std::chrono::nanoseconds>(node->deadline - start_).count();
  std::int64_t target = since_start > 0 ? (since_start - 1) / tick_ns_ : 0;
  // Already late: the next tick processed, never one that has passed.
  target = std::max(target, tick_);
  node->remaining_rounds =
      (target - tick_) / static_cast<std::int64_t>(buckets_.size());
  detail::link_last(buckets_[static_cast<std::uint64_t>(target) & mask_], *node);
}

void HashedWheelTimer::expire_current_tick(detail::DueList& due) noexcept {
  ListHook& bucket = buckets_[static_cast<std::uint64_t>(tick_) & mask_];
  for (ListHook* hook = bucket.next; hook != &bucket;) {
    auto* node = static_cast<TimeoutNode*>(hook);
    hook = hook->next;
    if (node->remaining_rounds > 0 && node->is_pending()) {
      --node->remaining_rounds;
      continue;
    }
    detail::unlink(*node);
    if (node->try_expire()) {
      due.push_back(node);  // the bucket's reference moves to the due list
    } else {
      // Cancelled since the last collect(); its cancellation entry has its own reference.
      node->release();
    }
  }
}

void HashedWheelTimer::run_worker(std::stop_token stop) {
  while (clock_.sleep_until(tick_end(tick_), stop)) {
    advance(clock_.steady_now());
  }
}

std::vector<TimerHandle> HashedWheelTimer::stop() {
  if (manual_ ? processing_.load() : std::this_thread::get_id() == worker_id_.load()) {
    throw std::logic_error("stop() cannot be called from a task of the same timer");
  }
  if (!core_->close()) return {};
  if (worker_.joinable()) {
    worker_.request_stop();
    worker_.join();
  }

  // Nothing else touches the wheel now. Drop what was cancelled, return what is pending.
  std::vector<TimerHandle> unprocessed;
  unprocessed.reserve(core_->pending());
  auto keep_or_drop = [&unprocessed](TimeoutNode* node) {
    if (node->is_pending()) {
      unprocessed.push_back(detail::HandleAccess::adopt(node));
    } else {
      node->release();
    }
  };
  auto taken = core_->take();
  for (TimeoutNode* node = taken.cancelled_head; node != nullptr;) {
    TimeoutNode* next = node->cancel_next;
    node->release();
    node = next;
  }
  if (taken.submitted_head != nullptr) {
    if (backlog_tail_ == nullptr) {
      backlog_head_ = taken.submitted_head;
    } else {
      backlog_tail_->next = taken.submitted_head;
    }
    backlog_tail_ = taken.submitted_tail;
  }
  for (TimeoutNode* node = backlog_head_; node != nullptr;) {
    auto* next = static_cast<TimeoutNode*>(node->next);
    node->next = nullptr;
    keep_or_drop(node);
    node = next;
  }
  backlog_head_ = backlog_tail_ = nullptr;
  for (auto& bucket : buckets_) {
    while (bucket.next != &bucket) {
      auto* node = static_cast<TimeoutNode*>(bucket.next);
      detail::unlink(*node);
      keep_or_drop(node);
    }
  }
  core_->clear_pending();
  detail::sort_by_deadline(unprocessed);
  return unprocessed;
}

}  // namespace cronwheel::common
