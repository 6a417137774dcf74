#include "common/timer/hierarchical_wheel_timer.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

namespace cronwheel::common {

namespace {

constexpr std::size_t kMaxLevelSize = std::size_t{1} << 16;

unsigned checked_bits(std::size_t n) {
  if (n < 2 || n > kMaxLevelSize) {
    throw std::invalid_argument("wheel size must be in [2, 65536], got " + std::to_string(n));
  }
  return static_cast<unsigned>(std::countr_zero(std::bit_ceil(n)));
}

}  // namespace

using detail::ExpiryBatch;
using detail::TimeoutNode;
using detail::WheelSlot;

HierarchicalWheelTimer::HierarchicalWheelTimer(Clock& clock, HierarchicalWheelOptions wheel,
                                               TimerOptions options)
    : WheelTimerBase(clock, detail::TickScale(clock.steady_now(), wheel.tick), options,
                     detail::checked_positive(wheel.max_queued_operations,
                                              "max_queued_operations")),
      bits_(checked_bits(wheel.wheel_size)),
      mask_((std::uint64_t{1} << bits_) - 1),
      max_levels_((63 + bits_ - 1) / bits_) {
  // Creating a wheel must not fail halfway: its slot in wheels_ and its room in the delay
  // queue are taken before it is built (see place()).
  wheels_.reserve(max_levels_);
  wheels_.push_back(std::make_unique<Bucket[]>(wheel_size()));
  queue_.reserve(wheel_size());
  steps_.start([this](std::stop_token stop) { run_worker(std::move(stop)); });
}

HierarchicalWheelTimer::~HierarchicalWheelTimer() { stop(); }

HierarchicalWheelTimer::Bucket& HierarchicalWheelTimer::bucket(std::uint32_t id) noexcept {
  return wheels_[id >> bits_][id & mask_];
}

HierarchicalWheelTimer::Placed HierarchicalWheelTimer::place(TimeoutNode* node,
                                                             std::int64_t e) noexcept {
  if (e <= c_) return Placed::kDue;
  const std::int64_t span = std::int64_t{1} << bits_;
  for (unsigned level = 0; level < max_levels_; ++level) {
    const unsigned shift = level * bits_;
    // The bucket (virtual tick of this wheel) holding e, against the wheel's current one.
    // Nothing before this wheel could hold e, so ve > vc; ve - vc < span keeps every live
    // bucket of the wheel on its own slot.
    const std::int64_t ve = e >> shift;
    const std::int64_t vc = c_ >> shift;
    if (ve - vc >= span) continue;
    try {
      while (wheels_.size() <= level) {
        // An overflow wheel, created the first time a timeout needs it.
        auto wheel = std::make_unique<Bucket[]>(wheel_size());
        queue_.reserve((wheels_.size() + 1) << bits_);
        wheels_.push_back(std::move(wheel));  // capacity reserved: cannot throw
      }
    } catch (...) {
      return Placed::kFailed;
    }
    const auto id = static_cast<std::uint32_t>((std::uint64_t{level} << bits_) |
                                               (static_cast<std::uint64_t>(ve) & mask_));
    Bucket& b = bucket(id);
    if (!b.add(node, id)) return Placed::kFailed;
    if (b.queue_index == kNotQueued) {
      b.expiry = ve << shift;
      // Room for every bucket of every wheel was reserved when the wheel was created.
      queue_.push(Queued{b.expiry, id});
    }
    return Placed::kInBucket;
  }
  return Placed::kFailed;  // not reached: the top wheel holds every tick
}

void HierarchicalWheelTimer::place_or_defer(TimeoutNode* node, ExpiryBatch& out) noexcept {
  switch (place(node, ticks_.ceil(node->deadline))) {
    case Placed::kInBucket:
      return;
    case Placed::kDue:
      out.expire(node);
      return;
    case Placed::kFailed:
      node->wheel_slot.bucket = WheelSlot::kNoBucket;
      backlog_.push_back(node);
      return;
  }
}

std::size_t HierarchicalWheelTimer::advance(Clock::SteadyTime now) {
  const std::int64_t n = ticks_.floor(now);
  ExpiryBatch out(*core_, executor_);

  // Submissions and cancellations first, then every bucket due by n in expiry order, each at
  // its own tick, so timeouts run in deadline order even when the step is late.
  const bool had_backlog = !backlog_.empty();
  auto taken = core_->take();

  // Cancellations never fail, so the taken list is always consumed. An emptied bucket leaves
  // the delay queue: nothing wakes the worker for it.
  detail::retire_cancelled(
      taken.cancelled_head, [this](std::uint32_t id) -> Bucket& { return bucket(id); },
      [this](Bucket& b) {
        if (b.entries.empty() && b.queue_index != kNotQueued) queue_.remove(b.queue_index);
      });

  // Bring the clock forward before placing, as far as it can go without passing a queued
  // bucket or a new timeout (which would then all be "due" and run in submission order): a
  // timeout scheduled after a quiet spell then goes straight to the lowest wheel that holds
  // it instead of coming down from a higher one.
  if (!had_backlog) {
    std::int64_t target = n;
    if (!queue_.empty()) target = std::min(target, queue_.front().expiry - 1);
    if (!taken.submitted.empty()) {
      target = std::min(target, ticks_.floor(taken.earliest_fire) - 1);
    }
    c_ = std::max(c_, target);
  }

  // A wheel that cannot grow leaves the rest for the next tick: late, never lost.
  backlog_.splice(taken.submitted);
  place_backlog(
      std::numeric_limits<std::size_t>::max(),
      [this](TimeoutNode* node) { return place(node, ticks_.ceil(node->deadline)); },
      [&out](TimeoutNode* node) { out.expire(node); });

  while (!queue_.empty() && queue_.front().expiry <= n) {
    const Queued due = queue_.front();
    queue_.remove(0);
    c_ = std::max(c_, due.expiry);
    flush(due.bucket, out);
  }
  // Every bucket due by n is empty now, so the wheels may move on to n.
  c_ = std::max(c_, n);
  out.dispatch();
  return out.handed_over();
}

void HierarchicalWheelTimer::flush(std::uint32_t id, ExpiryBatch& out) noexcept {
  Bucket& b = bucket(id);
  const bool lowest = (id >> bits_) == 0;
  TimeoutNode** entries = b.entries.data();
  const std::size_t n = b.entries.size();
  // Safe to hand tasks over mid-walk: no lock is held, nothing a task may do touches a
  // bucket, and a higher bucket's timeouts only ever go to lower wheels, never into `b`.
  for (std::size_t i = 0; i < n; ++i) {
    if (i + detail::kPrefetchDistance < n) {
      if (const TimeoutNode* ahead = entries[i + detail::kPrefetchDistance]) {
        detail::prefetch_whole(ahead);
      }
    }
    TimeoutNode* node = entries[i];
    if (node == nullptr) continue;  // a tombstone
    node->wheel_slot.bucket = WheelSlot::kNoBucket;
    if (lowest) {
      out.expire(node);  // the bucket's reference moves on
    } else if (node->is_pending()) {
      place_or_defer(node, out);  // down a wheel (or due now)
    } else {
      node->release();  // cancelled since the last step; its cancellation entry has a reference
    }
  }
  b.finish_visit(0);
}

Clock::SteadyTime HierarchicalWheelTimer::next_wake() const noexcept {
  auto at = queue_.empty() ? Clock::SteadyTime::max() : ticks_.time_of(queue_.front().expiry);
  // What could not be placed is retried at every tick.
  if (!backlog_.empty()) at = std::min(at, ticks_.time_of(c_ + 1));
  return at;
}

void HierarchicalWheelTimer::run_worker(std::stop_token stop) {
  detail::sleep_and_step(
      clock_, std::move(stop),
      [this](std::stop_source wake) { return core_->arm(std::move(wake), next_wake()); },
      [this](Clock::SteadyTime now) { advance(now); });
}

bool HierarchicalWheelTimer::QueueOrder::earlier(const Queued& a,
                                                 const Queued& b) const noexcept {
  // At equal expiry the higher wheel first: its timeouts due at that tick were scheduled
  // before those placed straight into the lower bucket.
  const unsigned bits = timer->bits_;
  return a.expiry < b.expiry || (a.expiry == b.expiry && (a.bucket >> bits) > (b.bucket >> bits));
}

void HierarchicalWheelTimer::QueueOrder::placed(const Queued& q, std::size_t index) const noexcept {
  // IndexedHeap::kRemoved becomes kNotQueued.
  timer->bucket(q.bucket).queue_index = static_cast<std::uint32_t>(index);
}

void HierarchicalWheelTimer::surrender(std::vector<TimerHandle>& unprocessed) {
  for (auto& wheel : wheels_) {
    for (std::size_t slot = 0; slot < wheel_size(); ++slot) {
      wheel[slot].surrender(unprocessed);
      wheel[slot].queue_index = kNotQueued;
    }
  }
  queue_.clear();
}

HierarchicalWheelTimer::Footprint HierarchicalWheelTimer::footprint() const {
  Footprint f;
  for (const auto& wheel : wheels_) {
    std::size_t live = 0;
    for (std::size_t slot = 0; slot < wheel_size(); ++slot) {
      live += wheel[slot].live();
      f.tombstones += wheel[slot].tombstones;
    }
    f.live_per_wheel.push_back(live);
  }
  f.queued_buckets = queue_.size();
  for (const TimeoutNode* node = backlog_.front(); node != nullptr; node = node->next) {
    ++f.backlog;
  }
  f.current_tick = c_;
  return f;
}

}  // namespace cronwheel::common
