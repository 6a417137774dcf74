#include "common/timer/hashed_wheel_timer.h"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <string>
#include <utility>

namespace cronwheel::common {

namespace {

constexpr std::size_t kMaxHashedWheelSize = std::size_t{1} << 30;

std::size_t checked_wheel_size(std::size_t n) {
  if (n == 0 || n > kMaxHashedWheelSize) {
    throw std::invalid_argument("wheel size must be in [1, 2^30], got " + std::to_string(n));
  }
  return std::bit_ceil(n);
}

}  // namespace

using detail::TimeoutNode;
using detail::WheelSlot;

HashedWheelTimer::HashedWheelTimer(Clock& clock, WheelOptions wheel, TimerOptions options)
    : WheelTimerBase(clock, detail::TickScale(clock.steady_now(), wheel.tick), options,
                     detail::WheelCore::kTicks),
      max_transfers_(
          detail::checked_positive(wheel.max_transfers_per_tick, "max_transfers_per_tick")),
      buckets_(checked_wheel_size(wheel.wheel_size)),
      mask_(buckets_.size() - 1) {
  steps_.start([this](std::stop_token stop) { run_worker(std::move(stop)); });
}

HashedWheelTimer::~HashedWheelTimer() { stop(); }

std::size_t HashedWheelTimer::advance(Clock::SteadyTime now) {
  // collect() runs once before each tick processed, which bounds the transfers per tick, and
  // once even when no tick has ended, so a manual caller's submissions and cancellations
  // reach the wheel without waiting for a boundary. Tick k ends at boundary k + 1.
  collect();
  std::size_t handed_over = 0;
  while (ticks_.time_of(tick_ + 1) <= now) {
    handed_over += expire_current_tick();
    ++tick_;
    if (ticks_.time_of(tick_ + 1) > now) break;
    collect();
  }
  return handed_over;
}

void HashedWheelTimer::collect() {
  auto taken = core_->take();
  backlog_.splice(taken.submitted);
  // Cancellations first: they never fail, so the taken list is always consumed.
  detail::retire_cancelled(
      taken.cancelled_head, [this](std::uint32_t id) -> Bucket& { return buckets_[id]; },
      [](Bucket&) {});
  // A late timeout goes to the next tick processed, so none is due here.
  place_backlog(
      max_transfers_, [this](TimeoutNode* node) { return place(node); },
      [](TimeoutNode*) {});
}

HashedWheelTimer::Placed HashedWheelTimer::place(TimeoutNode* node) noexcept {
  // The tick whose end is the first boundary at or after the deadline; already late: the next
  // tick processed, never one that has passed.
  const std::int64_t target = std::max(ticks_.ceil(node->deadline) - 1, tick_);
  const std::int64_t rounds = (target - tick_) / static_cast<std::int64_t>(buckets_.size());
  const auto index = static_cast<std::uint64_t>(target) & mask_;
  return buckets_[index].add(Entry{node, rounds}, static_cast<std::uint32_t>(index))
             ? Placed::kInBucket
             : Placed::kFailed;
}

std::size_t HashedWheelTimer::expire_current_tick() noexcept {
  Bucket& bucket = buckets_[static_cast<std::uint64_t>(tick_) & mask_];
  Entry* entries = bucket.entries.data();
  const std::size_t n = bucket.entries.size();
  detail::ExpiryBatch out(*core_, executor_);
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
    entry.node->wheel_slot.bucket = WheelSlot::kNoBucket;
    out.expire(entry.node);  // the bucket's reference moves on
  }
  bucket.finish_visit(kept);
  out.dispatch();
  return out.handed_over();
}

void HashedWheelTimer::surrender(std::vector<TimerHandle>& unprocessed) {
  for (auto& bucket : buckets_) bucket.surrender(unprocessed);
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
  while (clock_.sleep_until(ticks_.time_of(tick_ + 1), stop)) {
    advance(clock_.steady_now());
  }
}

}  // namespace cronwheel::common
