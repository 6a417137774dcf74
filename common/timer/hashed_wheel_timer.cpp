#include "common/timer/hashed_wheel_timer.h"

#include <algorithm>
#include <bit>
#include <limits>
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

  // A new timeout, appended to the submission list; the list holds the timer's reference and
  // the caller gets the other.
  RefPtr<TimeoutNode> submit(Clock::SteadyTime deadline, TimerTask&& task) {
    std::size_t pending = 0;
    {
      std::lock_guard lock(mutex_);
      if (closed_) {
        throw TimerRejectedError(TimerRejectedError::Reason::kStopped, "timer is stopped");
      }
      pending = pending_.load(std::memory_order_relaxed);
      if (max_pending_ == 0 || pending < max_pending_) {
        RefPtr<TimeoutNode> node = make_node(deadline, std::move(task));
        pending_.fetch_add(1, std::memory_order_relaxed);  // the worker may lower it meanwhile
        node->add_ref();
        if (submitted_tail_ == nullptr) {
          submitted_head_ = node.get();
        } else {
          submitted_tail_->next = node.get();
        }
        submitted_tail_ = node.get();
        return node;
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

// How many entries ahead of the one being processed a bucket walk prefetches the timeout
// of. Far enough to cover a memory access with the work of the entries in between, near
// enough that the prefetched lines are still in L1 when their turn comes (see the header).
constexpr std::size_t kPrefetchDistance = 16;

// Expired timeouts handed to the executor at a time (see expire_current_tick).
constexpr std::size_t kDispatchBatch = 32;

// Buckets never shrink below this many entries' capacity (1 KiB), nor when their capacity is
// within 4x of what they held during the last turn: growing again is what costs.
constexpr std::size_t kMinRetainedEntries = 64;
constexpr std::size_t kShrinkRatio = 4;

// A bucket's positions fit in WheelSlot::index.
constexpr std::size_t kMaxBucketEntries = std::numeric_limits<std::uint32_t>::max();

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

using detail::TimeoutNode;
using detail::WheelSlot;

HashedWheelTimer::HashedWheelTimer(Clock& clock, WheelOptions wheel, TimerOptions options)
    : clock_(clock),
      start_(clock.steady_now()),
      tick_ns_(detail::checked_tick(wheel.tick)),
      max_transfers_(detail::checked_transfers(wheel.max_transfers_per_tick)),
      executor_(std::move(options.executor)),
      core_(detail::RefPtr<detail::WheelCore>::adopt(
          new detail::WheelCore(std::move(options.on_error), options.max_pending_timeouts))),
      buckets_(detail::checked_wheel_size(wheel.wheel_size)),
      mask_(buckets_.size() - 1),
      steps_(options.manual) {
  if (!steps_.manual()) {
    worker_ = std::jthread([this](std::stop_token stop) {
      steps_.set_worker();
      run_worker(std::move(stop));
    });
  }
}

HashedWheelTimer::~HashedWheelTimer() { stop(); }

TimerHandle HashedWheelTimer::schedule(TimerTask task, std::chrono::nanoseconds delay) {
  if (!task) throw std::invalid_argument("cannot schedule an empty task");
  const auto deadline = detail::deadline_after(clock_.steady_now(), delay);
  return detail::HandleAccess::make(core_->submit(deadline, std::move(task)));
}

std::size_t HashedWheelTimer::process_until(Clock::SteadyTime now) {
  return steps_.run_manual([&]() -> std::size_t { return core_->closed() ? 0 : advance(now); });
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
    handed_over += expire_current_tick();
    ++tick_;
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

  // Cancellations first: they never fail, so the taken list is always consumed. A timeout
  // in a bucket leaves a tombstone there now (its memory goes with the last handle); one
  // still in the backlog is dropped when it reaches the front.
  // The entries they leave are scattered over the buckets: fetch those a few cancellations
  // ahead, so the misses overlap instead of queueing behind each release.
  TimeoutNode* ahead = taken.cancelled_head;
  for (std::size_t k = 0; k < detail::kPrefetchDistance && ahead != nullptr; ++k) {
    prefetch_entry(*ahead);
    ahead = ahead->cancel_next;
  }
  for (TimeoutNode* node = taken.cancelled_head; node != nullptr;) {
    TimeoutNode* next = node->cancel_next;
    if (ahead != nullptr) {
      prefetch_entry(*ahead);
      ahead = ahead->cancel_next;
    }
    if (node->wheel_slot.bucket != WheelSlot::kNoBucket) {
      remove_cancelled(*node);
      node->release(2);  // the bucket's reference and the cancellation list's
    } else {
      node->release();  // the cancellation list's reference
    }
    node = next;
  }

  for (std::size_t n = 0; n < max_transfers_ && backlog_head_ != nullptr; ++n) {
    TimeoutNode* node = backlog_head_;
    if (node->is_pending()) {
      // The timer's reference moves into the bucket. A bucket that cannot grow leaves the
      // timeout at the front of the backlog for a later tick: late, never lost or early.
      if (!place(node)) break;
    } else {
      node->release();  // cancelled while queued
    }
    backlog_head_ = node->next;
    if (backlog_head_ == nullptr) backlog_tail_ = nullptr;
    node->next = nullptr;
  }
}

bool HashedWheelTimer::place(TimeoutNode* node) noexcept {
  // The tick whose end is the first boundary at or after the deadline: ceil(d / tick) - 1.
  const std::int64_t since_start =
      std::chrono::duration_cast<std::chrono::nanoseconds>(node->deadline - start_).count();
  std::int64_t target = since_start > 0 ? (since_start - 1) / tick_ns_ : 0;
  // Already late: the next tick processed, never one that has passed.
  target = std::max(target, tick_);
  const std::int64_t rounds = (target - tick_) / static_cast<std::int64_t>(buckets_.size());
  const auto index = static_cast<std::uint64_t>(target) & mask_;
  Bucket& bucket = buckets_[index];
  if (bucket.entries.size() >= detail::kMaxBucketEntries) return false;
  try {
    bucket.entries.push_back(Entry{node, rounds});
  } catch (...) {
    return false;
  }
  const auto size = static_cast<std::uint32_t>(bucket.entries.size());
  bucket.peak = std::max(bucket.peak, size);
  node->wheel_slot = WheelSlot{static_cast<std::uint32_t>(index), size - 1};
  return true;
}

void HashedWheelTimer::prefetch_entry(const TimeoutNode& node) const noexcept {
  if (node.wheel_slot.bucket == WheelSlot::kNoBucket) return;
  const auto& entries = buckets_[node.wheel_slot.bucket].entries;
  __builtin_prefetch(entries.data() + node.wheel_slot.index, 1, 3);
  __builtin_prefetch(entries.data() + entries.size() - 1, 0, 3);
}

void HashedWheelTimer::remove_cancelled(TimeoutNode& node) noexcept {
  Bucket& bucket = buckets_[node.wheel_slot.bucket];
  bucket.entries[node.wheel_slot.index].node = nullptr;
  node.wheel_slot.bucket = WheelSlot::kNoBucket;
  ++bucket.tombstones;
  // Tombstones at the end go at once (the common case of a timeout cancelled soon after it
  // was scheduled); the others when they outnumber the live entries, which bounds a bucket
  // to twice its live entries at the cost of at most two moves per tombstone.
  while (!bucket.entries.empty() && bucket.entries.back().node == nullptr) {
    bucket.entries.pop_back();
    --bucket.tombstones;
  }
  if (2 * std::size_t{bucket.tombstones} > bucket.entries.size()) compact(bucket);
}

void HashedWheelTimer::compact(Bucket& bucket) noexcept {
  Entry* entries = bucket.entries.data();
  const std::size_t n = bucket.entries.size();
  std::size_t kept = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (i + detail::kPrefetchDistance < n && kept != i) {
      if (const TimeoutNode* ahead = entries[i + detail::kPrefetchDistance].node) {
        detail::prefetch_whole(ahead);
      }
    }
    const Entry entry = entries[i];
    if (entry.node == nullptr) continue;
    if (kept != i) {
      entry.node->wheel_slot.index = static_cast<std::uint32_t>(kept);
      entries[kept] = entry;
    }
    ++kept;
  }
  bucket.entries.erase(bucket.entries.begin() + static_cast<std::ptrdiff_t>(kept),
                       bucket.entries.end());
  bucket.tombstones = 0;
}

std::size_t HashedWheelTimer::expire_current_tick() noexcept {
  Bucket& bucket = buckets_[static_cast<std::uint64_t>(tick_) & mask_];
  Entry* entries = bucket.entries.data();
  const std::size_t n = bucket.entries.size();
  // Expired timeouts are handed over in small batches while their cache lines are still
  // close, rather than after the whole bucket. Safe mid-walk: no lock is held, and nothing a
  // task may do (schedule, cancel) touches the buckets.
  TimeoutNode* batch[detail::kDispatchBatch];
  std::size_t batched = 0;
  std::size_t handed_over = 0;
  auto dispatch = [&] {
    core_->expired(batched);
    for (std::size_t k = 0; k < batched; ++k) detail::hand_over(batch[k], executor_);
    handed_over += batched;
    batched = 0;
  };
  std::size_t kept = 0;
  for (std::size_t i = 0; i < n; ++i) {
    // Prefetch the timeouts this walk will touch a few entries from now: those that expire
    // and those that will move down over a gap. Entries that merely wait stay untouched.
    if (i + detail::kPrefetchDistance < n) {
      const Entry& ahead = entries[i + detail::kPrefetchDistance];
      if (ahead.node != nullptr && (ahead.remaining_rounds == 0 || kept != i)) {
        detail::prefetch_whole(ahead.node);
      }
    }
    Entry entry = entries[i];
    if (entry.node == nullptr) continue;  // a tombstone
    if (entry.remaining_rounds > 0) {
      // Not this turn. A cancellation that raced in since collect() is handled by the next.
      --entry.remaining_rounds;
      if (kept != i) entry.node->wheel_slot.index = static_cast<std::uint32_t>(kept);
      entries[kept++] = entry;
      continue;
    }
    TimeoutNode* node = entry.node;
    node->wheel_slot.bucket = WheelSlot::kNoBucket;
    if (node->try_expire()) {
      batch[batched++] = node;  // the bucket's reference moves to the batch
      if (batched == detail::kDispatchBatch) dispatch();
    } else {
      // Cancelled since the last collect(); its cancellation entry has its own reference.
      node->release();
    }
  }
  bucket.entries.erase(bucket.entries.begin() + static_cast<std::ptrdiff_t>(kept),
                       bucket.entries.end());
  bucket.tombstones = 0;
  // Give back memory a burst left behind, once a whole turn has shown it is not needed.
  if (bucket.entries.capacity() > detail::kMinRetainedEntries &&
      bucket.entries.capacity() > detail::kShrinkRatio * std::size_t{bucket.peak}) {
    try {
      bucket.entries.shrink_to_fit();
    } catch (...) {
      // Keeping the larger array is fine.
    }
  }
  bucket.peak = static_cast<std::uint32_t>(kept);
  dispatch();
  return handed_over;
}

HashedWheelTimer::Footprint HashedWheelTimer::footprint() const noexcept {
  Footprint f;
  for (const Bucket& bucket : buckets_) {
    f.entries += bucket.entries.size();
    f.tombstones += bucket.tombstones;
    f.capacity += bucket.entries.capacity();
  }
  f.pool_slots = core_->pool_capacity();
  return f;
}

void HashedWheelTimer::run_worker(std::stop_token stop) {
  while (clock_.sleep_until(tick_end(tick_), stop)) {
    advance(clock_.steady_now());
  }
}

std::vector<TimerHandle> HashedWheelTimer::stop() {
  if (steps_.inside_step()) {
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
  auto taken = core_->take();
  detail::release_cancelled(taken.cancelled_head);
  detail::keep_pending_of(backlog_head_, unprocessed);
  detail::keep_pending_of(taken.submitted_head, unprocessed);  // the order is sorted out below
  backlog_head_ = backlog_tail_ = nullptr;
  for (auto& bucket : buckets_) {
    for (const Entry& entry : bucket.entries) {
      if (entry.node == nullptr) continue;
      entry.node->wheel_slot.bucket = WheelSlot::kNoBucket;
      detail::keep_if_pending(entry.node, unprocessed);
    }
    bucket.entries.clear();
    bucket.tombstones = 0;
  }
  core_->clear_pending();
  detail::sort_by_deadline(unprocessed);
  return unprocessed;
}

}  // namespace cronwheel::common
