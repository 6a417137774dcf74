#include "common/timer/hierarchical_wheel_timer.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

namespace cronwheel::common {

namespace detail {

// What producers, cancellers and the worker share: two intrusive lists, the pending count and
// the worker's wake-up, under one mutex that is only ever held for a few pointer writes.
class HierarchicalWheelCore final : public TimerCore {
 public:
  HierarchicalWheelCore(TimerErrorHandler on_error, std::size_t max_pending,
                        std::size_t max_queued)
      : TimerCore(std::move(on_error)), max_pending_(max_pending), max_queued_(max_queued) {}

  struct Submitted {
    RefPtr<TimeoutNode> node;  // the caller's reference
    std::stop_source wake;     // to stop when the worker must wake now
  };

  // A new timeout, appended to the submission list; the list holds the timer's reference and
  // the caller gets the other. `fire_at` is the tick boundary it fires at: the sleeping worker
  // is woken when that comes before the time it sleeps towards.
  Submitted submit(Clock::SteadyTime deadline, Clock::SteadyTime fire_at, TimerTask&& task) {
    std::size_t pending = 0;
    {
      std::lock_guard lock(mutex_);
      if (closed_) {
        throw TimerRejectedError(TimerRejectedError::Reason::kStopped, "timer is stopped");
      }
      pending = pending_.load(std::memory_order_relaxed);
      if (max_pending_ == 0 || pending < max_pending_) {
        Submitted submitted{make_node(deadline, std::move(task)),
                            std::stop_source(std::nostopstate)};
        TimeoutNode* node = submitted.node.get();
        pending_.fetch_add(1, std::memory_order_relaxed);  // the worker may lower it meanwhile
        node->add_ref();
        if (submitted_tail_ == nullptr) {
          submitted_head_ = node;
        } else {
          submitted_tail_->next = node;
        }
        submitted_tail_ = node;
        earliest_fire_ = std::min(earliest_fire_, fire_at);
        ++queued_;
        if (fire_at < sleeping_until_ || queued_ >= max_queued_) submitted.wake = wake_locked();
        return submitted;
      }
    }
    throw TimerRejectedError(TimerRejectedError::Reason::kTooManyPending,
                             "too many pending timeouts (" + std::to_string(pending + 1) +
                                 "), max is " + std::to_string(max_pending_));
  }

  void on_cancelled(TimeoutNode& node) noexcept override {
    std::stop_source wake(std::nostopstate);
    {
      std::lock_guard lock(mutex_);
      // After stop() nobody drains the list; the timeout is no longer counted either.
      if (closed_) return;
      pending_.fetch_sub(1, std::memory_order_relaxed);
      node.add_ref();
      node.cancel_next = cancelled_head_;
      cancelled_head_ = &node;
      if (++queued_ >= max_queued_) wake = wake_locked();
    }
    // Outside the mutex: waking runs the sleeper's stop callbacks.
    if (wake.stop_possible()) wake.request_stop();
  }

  struct Taken {
    TimeoutNode* submitted_head = nullptr;
    TimeoutNode* submitted_tail = nullptr;
    TimeoutNode* cancelled_head = nullptr;  // through cancel_next, each holding a reference
    Clock::SteadyTime earliest_fire = Clock::SteadyTime::max();  // of the submissions
  };

  // For the worker's step: both lists. The worker counts as awake until it arms again.
  Taken take() noexcept {
    std::lock_guard lock(mutex_);
    Taken taken{submitted_head_, submitted_tail_, cancelled_head_, earliest_fire_};
    submitted_head_ = submitted_tail_ = cancelled_head_ = nullptr;
    earliest_fire_ = Clock::SteadyTime::max();
    queued_ = 0;
    wake_locked();
    return taken;
  }

  // For the worker about to sleep until `until` (what the wheels need): the time to sleep to,
  // earlier when the lists need a step sooner, and `wake` to be stopped by a schedule() or
  // cancel() that needs one.
  Clock::SteadyTime arm(std::stop_source wake, Clock::SteadyTime until) noexcept {
    std::lock_guard lock(mutex_);
    until = std::min(until, earliest_fire_);
    if (queued_ >= max_queued_) until = kAwake;
    wake_ = std::move(wake);
    sleeping_until_ = until;
    return until;
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
  // sleeping_until_ while the worker is awake (or the timer is manual): nothing needs a wake.
  static constexpr Clock::SteadyTime kAwake = Clock::SteadyTime::min();

  // Marks the worker awake and returns the source that wakes it, if it sleeps.
  std::stop_source wake_locked() noexcept {
    sleeping_until_ = kAwake;
    return std::exchange(wake_, std::stop_source(std::nostopstate));
  }

  mutable std::mutex mutex_;
  bool closed_ = false;
  const std::size_t max_pending_;
  const std::size_t max_queued_;
  // Changed under mutex_ except by expired(), which only lowers it: schedule()'s check under
  // the mutex can only overestimate, so the maximum is never exceeded.
  std::atomic<std::size_t> pending_{0};
  TimeoutNode* submitted_head_ = nullptr;
  TimeoutNode* submitted_tail_ = nullptr;
  TimeoutNode* cancelled_head_ = nullptr;
  Clock::SteadyTime earliest_fire_ = Clock::SteadyTime::max();
  std::size_t queued_ = 0;  // schedule() and cancel() calls since the last take()
  std::stop_source wake_{std::nostopstate};
  Clock::SteadyTime sleeping_until_ = kAwake;
};

namespace {

constexpr std::size_t kMaxWheelSize = std::size_t{1} << 16;

// As in the hashed wheel: how far ahead a bucket walk prefetches timeouts, and how many
// expired timeouts are handed to the executor at a time.
constexpr std::size_t kPrefetchDistance = 16;
constexpr std::size_t kDispatchBatch = 32;

// An emptied bucket keeps its array for its next use unless the array is more than this
// many times what it held (and more than kMinRetainedEntries).
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

unsigned checked_bits(std::size_t n) {
  if (n < 2 || n > kMaxWheelSize) {
    throw std::invalid_argument("wheel size must be in [2, 65536], got " + std::to_string(n));
  }
  return static_cast<unsigned>(std::countr_zero(std::bit_ceil(n)));
}

std::size_t checked_queued(std::size_t n) {
  if (n == 0) throw std::invalid_argument("max_queued_operations must be positive");
  return n;
}

std::int64_t since(Clock::SteadyTime t, Clock::SteadyTime origin) noexcept {
  const auto a = std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  const auto b =
      std::chrono::duration_cast<std::chrono::nanoseconds>(origin.time_since_epoch()).count();
  std::int64_t d = 0;
  if (__builtin_sub_overflow(a, b, &d)) return a > b ? std::numeric_limits<std::int64_t>::max() : 0;
  return d;
}

}  // namespace
}  // namespace detail

using detail::TimeoutNode;
using detail::WheelSlot;

// Collects expired timeouts and hands them to the executor in batches, outside every lock,
// while their cache lines are still close.
class HierarchicalWheelTimer::Expirer {
 public:
  Expirer(detail::HierarchicalWheelCore& core, const TimerExecutor& executor) noexcept
      : core_(core), executor_(executor) {}
  Expirer(const Expirer&) = delete;
  Expirer& operator=(const Expirer&) = delete;
  ~Expirer() { dispatch(); }

  // `node`, due and in no bucket, with the reference the caller held.
  void expire(TimeoutNode* node) noexcept {
    if (!node->try_expire()) {
      node->release();  // cancelled meanwhile; its cancellation entry has its own reference
      return;
    }
    batch_[batched_++] = node;
    if (batched_ == detail::kDispatchBatch) dispatch();
  }

  void dispatch() noexcept {
    core_.expired(batched_);
    for (std::size_t k = 0; k < batched_; ++k) detail::hand_over(batch_[k], executor_);
    handed_over_ += batched_;
    batched_ = 0;
  }

  std::size_t handed_over() const noexcept { return handed_over_ + batched_; }

 private:
  detail::HierarchicalWheelCore& core_;
  const TimerExecutor& executor_;
  TimeoutNode* batch_[detail::kDispatchBatch];
  std::size_t batched_ = 0;
  std::size_t handed_over_ = 0;
};

HierarchicalWheelTimer::HierarchicalWheelTimer(Clock& clock, HierarchicalWheelOptions wheel,
                                               TimerOptions options)
    : clock_(clock),
      start_(clock.steady_now()),
      tick_ns_(detail::checked_tick(wheel.tick)),
      bits_(detail::checked_bits(wheel.wheel_size)),
      mask_((std::uint64_t{1} << bits_) - 1),
      max_levels_((63 + bits_ - 1) / bits_),
      executor_(std::move(options.executor)),
      core_(detail::RefPtr<detail::HierarchicalWheelCore>::adopt(new detail::HierarchicalWheelCore(
          std::move(options.on_error), options.max_pending_timeouts,
          detail::checked_queued(wheel.max_queued_operations)))),
      steps_(options.manual) {
  // Creating a wheel must not fail halfway: its slot in wheels_ and its room in the delay
  // queue are taken before it is built (see place()).
  wheels_.reserve(max_levels_);
  wheels_.push_back(std::make_unique<Bucket[]>(wheel_size()));
  queue_.reserve(wheel_size());
  if (!steps_.manual()) {
    worker_ = std::jthread([this](std::stop_token stop) {
      steps_.set_worker();
      run_worker(std::move(stop));
    });
  }
}

HierarchicalWheelTimer::~HierarchicalWheelTimer() { stop(); }

TimerHandle HierarchicalWheelTimer::schedule(TimerTask task, std::chrono::nanoseconds delay) {
  if (!task) throw std::invalid_argument("cannot schedule an empty task");
  const auto deadline = detail::deadline_after(clock_.steady_now(), delay);
  auto submitted = core_->submit(deadline, tick_time(due_tick(deadline)), std::move(task));
  // Outside the mutex: waking runs the sleeper's stop callbacks.
  if (submitted.wake.stop_possible()) submitted.wake.request_stop();
  return detail::HandleAccess::make(std::move(submitted.node));
}

std::size_t HierarchicalWheelTimer::process_until(Clock::SteadyTime now) {
  return steps_.run_manual([&]() -> std::size_t { return core_->closed() ? 0 : advance(now); });
}

std::size_t HierarchicalWheelTimer::pending_timeouts() const { return core_->pending(); }

std::uint64_t HierarchicalWheelTimer::failed_callbacks() const {
  return core_->failed_callbacks();
}

std::int64_t HierarchicalWheelTimer::due_tick(Clock::SteadyTime deadline) const noexcept {
  const std::int64_t d = detail::since(deadline, start_);
  return d <= 0 ? 0 : (d - 1) / tick_ns_ + 1;
}

std::int64_t HierarchicalWheelTimer::ticks_at(Clock::SteadyTime now) const noexcept {
  const std::int64_t d = detail::since(now, start_);
  return d <= 0 ? 0 : d / tick_ns_;
}

Clock::SteadyTime HierarchicalWheelTimer::tick_time(std::int64_t k) const noexcept {
  std::int64_t offset = 0;
  std::int64_t at = 0;
  const std::int64_t origin =
      std::chrono::duration_cast<std::chrono::nanoseconds>(start_.time_since_epoch()).count();
  if (__builtin_mul_overflow(k, tick_ns_, &offset) ||
      __builtin_add_overflow(origin, offset, &at)) {
    return Clock::SteadyTime::max();
  }
  return Clock::SteadyTime{} +
         std::chrono::duration_cast<Clock::SteadyTime::duration>(std::chrono::nanoseconds(at));
}

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
    if (b.entries.size() >= detail::kMaxBucketEntries) return Placed::kFailed;
    try {
      b.entries.push_back(node);
    } catch (...) {
      return Placed::kFailed;
    }
    const auto size = static_cast<std::uint32_t>(b.entries.size());
    b.peak = std::max(b.peak, size);
    node->wheel_slot = WheelSlot{id, size - 1};
    if (b.queue_index == kNotQueued) {
      b.expiry = ve << shift;
      queue_push(id);
    }
    return Placed::kInBucket;
  }
  return Placed::kFailed;  // not reached: the top wheel holds every tick
}

void HierarchicalWheelTimer::place_or_defer(TimeoutNode* node, Expirer& out) noexcept {
  switch (place(node, due_tick(node->deadline))) {
    case Placed::kInBucket:
      return;
    case Placed::kDue:
      out.expire(node);
      return;
    case Placed::kFailed:
      node->wheel_slot.bucket = WheelSlot::kNoBucket;
      node->next = nullptr;
      if (backlog_tail_ == nullptr) {
        backlog_head_ = node;
      } else {
        backlog_tail_->next = node;
      }
      backlog_tail_ = node;
      return;
  }
}

std::size_t HierarchicalWheelTimer::advance(Clock::SteadyTime now) {
  const std::int64_t n = ticks_at(now);
  Expirer out(*core_, executor_);

  // Submissions and cancellations first, then every bucket due by n in expiry order, each at
  // its own tick, so timeouts run in deadline order even when the step is late.
  const bool had_backlog = backlog_head_ != nullptr;
  auto taken = core_->take();

  // Cancellations never fail, so the taken list is always consumed. Their entries are
  // scattered over the buckets: fetch those a few cancellations ahead.
  auto prefetch_entry = [this](const TimeoutNode& node) {
    if (node.wheel_slot.bucket == WheelSlot::kNoBucket) return;
    const auto& entries = bucket(node.wheel_slot.bucket).entries;
    __builtin_prefetch(entries.data() + node.wheel_slot.index, 1, 3);
  };
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
      node->release();  // the cancellation list's; still queued or in the backlog
    }
    node = next;
  }

  // Bring the clock forward before placing, as far as it can go without passing a queued
  // bucket or a new timeout (which would then all be "due" and run in submission order): a
  // timeout scheduled after a quiet spell then goes straight to the lowest wheel that holds
  // it instead of coming down from a higher one.
  if (!had_backlog) {
    std::int64_t target = n;
    if (!queue_.empty()) target = std::min(target, queue_.front().expiry - 1);
    if (taken.submitted_head != nullptr) {
      target = std::min(target, ticks_at(taken.earliest_fire) - 1);
    }
    c_ = std::max(c_, target);
  }

  if (taken.submitted_head != nullptr) {
    if (backlog_tail_ == nullptr) {
      backlog_head_ = taken.submitted_head;
    } else {
      backlog_tail_->next = taken.submitted_head;
    }
    backlog_tail_ = taken.submitted_tail;
  }
  while (backlog_head_ != nullptr) {
    TimeoutNode* node = backlog_head_;
    if (node->is_pending()) {
      const Placed placed = place(node, due_tick(node->deadline));
      // A wheel that cannot grow leaves the rest for the next tick: late, never lost.
      if (placed == Placed::kFailed) break;
      backlog_head_ = node->next;
      node->next = nullptr;
      if (placed == Placed::kDue) out.expire(node);
    } else {
      backlog_head_ = node->next;
      node->next = nullptr;
      node->release();  // cancelled while queued
    }
  }
  if (backlog_head_ == nullptr) backlog_tail_ = nullptr;

  while (!queue_.empty() && queue_.front().expiry <= n) {
    const Queued due = queue_.front();
    queue_remove(0);
    c_ = std::max(c_, due.expiry);
    flush(due.bucket, out);
  }
  // Every bucket due by n is empty now, so the wheels may move on to n.
  c_ = std::max(c_, n);
  out.dispatch();
  return out.handed_over();
}

void HierarchicalWheelTimer::remove_cancelled(TimeoutNode& node) noexcept {
  Bucket& b = bucket(node.wheel_slot.bucket);
  b.entries[node.wheel_slot.index] = nullptr;
  node.wheel_slot.bucket = WheelSlot::kNoBucket;
  ++b.tombstones;
  // Tombstones at the end go at once; the others when they outnumber the live entries.
  while (!b.entries.empty() && b.entries.back() == nullptr) {
    b.entries.pop_back();
    --b.tombstones;
  }
  if (2 * std::size_t{b.tombstones} > b.entries.size()) compact(b);
  // An empty bucket leaves the delay queue: nothing wakes the worker for it.
  if (b.entries.empty() && b.queue_index != kNotQueued) queue_remove(b.queue_index);
}

void HierarchicalWheelTimer::compact(Bucket& b) noexcept {
  TimeoutNode** entries = b.entries.data();
  const std::size_t n = b.entries.size();
  std::size_t kept = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (i + detail::kPrefetchDistance < n && kept != i) {
      if (const TimeoutNode* ahead = entries[i + detail::kPrefetchDistance]) {
        detail::prefetch_whole(ahead);
      }
    }
    TimeoutNode* node = entries[i];
    if (node == nullptr) continue;
    if (kept != i) {
      node->wheel_slot.index = static_cast<std::uint32_t>(kept);
      entries[kept] = node;
    }
    ++kept;
  }
  b.entries.erase(b.entries.begin() + static_cast<std::ptrdiff_t>(kept), b.entries.end());
  b.tombstones = 0;
}

void HierarchicalWheelTimer::flush(std::uint32_t id, Expirer& out) noexcept {
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
  b.entries.clear();
  b.tombstones = 0;
  // Give back the memory of a burst; keep an array that fits what the bucket usually holds.
  if (b.entries.capacity() > detail::kMinRetainedEntries &&
      b.entries.capacity() > detail::kShrinkRatio * std::size_t{b.peak}) {
    std::vector<TimeoutNode*>().swap(b.entries);
  }
  b.peak = 0;
}

Clock::SteadyTime HierarchicalWheelTimer::next_wake() const noexcept {
  auto at = queue_.empty() ? Clock::SteadyTime::max() : tick_time(queue_.front().expiry);
  // What could not be placed is retried at every tick.
  if (backlog_head_ != nullptr) at = std::min(at, tick_time(c_ + 1));
  return at;
}

void HierarchicalWheelTimer::run_worker(std::stop_token stop) {
  while (!stop.stop_requested()) {
    // A fresh source per sleep: schedule() and cancel() stop it to wake us early, and
    // stopping the worker is forwarded to it.
    std::stop_source wake;
    const auto until = core_->arm(wake, next_wake());
    {
      std::stop_callback forward(stop, [&wake] { wake.request_stop(); });
      clock_.sleep_until(until, wake.get_token());
    }
    if (stop.stop_requested()) return;
    advance(clock_.steady_now());
  }
}

// --- the delay queue ------------------------------------------------------------------------

bool HierarchicalWheelTimer::earlier(const Queued& a, const Queued& b) const noexcept {
  // At equal expiry the higher wheel first: its timeouts due at that tick were scheduled
  // before those placed straight into the lower bucket.
  return a.expiry < b.expiry || (a.expiry == b.expiry && (a.bucket >> bits_) > (b.bucket >> bits_));
}

void HierarchicalWheelTimer::queue_set(std::size_t i, const Queued& q) noexcept {
  queue_[i] = q;
  bucket(q.bucket).queue_index = static_cast<std::uint32_t>(i);
}

void HierarchicalWheelTimer::queue_push(std::uint32_t id) noexcept {
  // Room for every bucket of every wheel was reserved when the wheel was created.
  queue_.push_back(Queued{bucket(id).expiry, id});
  sift_up(queue_.size() - 1);
}

void HierarchicalWheelTimer::queue_remove(std::size_t i) noexcept {
  bucket(queue_[i].bucket).queue_index = kNotQueued;
  const std::size_t last = queue_.size() - 1;
  if (i != last) {
    queue_[i] = queue_[last];
    queue_.pop_back();
    if (i > 0 && earlier(queue_[i], queue_[(i - 1) / 2])) {
      sift_up(i);
    } else {
      sift_down(i);
    }
  } else {
    queue_.pop_back();
  }
}

void HierarchicalWheelTimer::sift_up(std::size_t i) noexcept {
  const Queued moving = queue_[i];
  while (i > 0) {
    const std::size_t parent = (i - 1) / 2;
    if (!earlier(moving, queue_[parent])) break;
    queue_set(i, queue_[parent]);
    i = parent;
  }
  queue_set(i, moving);
}

void HierarchicalWheelTimer::sift_down(std::size_t i) noexcept {
  const Queued moving = queue_[i];
  const std::size_t n = queue_.size();
  while (true) {
    std::size_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && earlier(queue_[child + 1], queue_[child])) ++child;
    if (!earlier(queue_[child], moving)) break;
    queue_set(i, queue_[child]);
    i = child;
  }
  queue_set(i, moving);
}

HierarchicalWheelTimer::Footprint HierarchicalWheelTimer::footprint() const {
  Footprint f;
  for (const auto& wheel : wheels_) {
    std::size_t live = 0;
    for (std::size_t slot = 0; slot < wheel_size(); ++slot) {
      live += wheel[slot].entries.size() - wheel[slot].tombstones;
      f.tombstones += wheel[slot].tombstones;
    }
    f.live_per_wheel.push_back(live);
  }
  f.queued_buckets = queue_.size();
  for (const TimeoutNode* node = backlog_head_; node != nullptr; node = node->next) ++f.backlog;
  f.current_tick = c_;
  return f;
}

std::vector<TimerHandle> HierarchicalWheelTimer::stop() {
  if (steps_.inside_step()) {
    throw std::logic_error("stop() cannot be called from a task of the same timer");
  }
  if (!core_->close()) return {};
  if (worker_.joinable()) {
    worker_.request_stop();
    worker_.join();
  }

  // Nothing else touches the wheels now. Drop what was cancelled, return what is pending.
  std::vector<TimerHandle> unprocessed;
  unprocessed.reserve(core_->pending());
  auto taken = core_->take();
  detail::release_cancelled(taken.cancelled_head);
  detail::keep_pending_of(backlog_head_, unprocessed);
  detail::keep_pending_of(taken.submitted_head, unprocessed);  // the order is sorted out below
  backlog_head_ = backlog_tail_ = nullptr;
  for (auto& wheel : wheels_) {
    for (std::size_t slot = 0; slot < wheel_size(); ++slot) {
      Bucket& b = wheel[slot];
      for (TimeoutNode* node : b.entries) {
        if (node == nullptr) continue;
        node->wheel_slot.bucket = WheelSlot::kNoBucket;
        detail::keep_if_pending(node, unprocessed);
      }
      b.entries.clear();
      b.tombstones = 0;
      b.queue_index = kNotQueued;
    }
  }
  queue_.clear();
  core_->clear_pending();
  detail::sort_by_deadline(unprocessed);
  return unprocessed;
}

}  // namespace cronwheel::common
