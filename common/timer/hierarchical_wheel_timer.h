#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stop_token>
#include <vector>

#include "common/timer/indexed_heap.h"
#include "common/timer/timeout_node.h"
#include "common/timer/timer.h"
#include "common/timer/wheel_bucket.h"
#include "common/timer/wheel_core.h"
#include "common/timer/wheel_timer_base.h"
#include "common/util/clock.h"

namespace cronwheel::common {

struct HierarchicalWheelOptions {
  // Granularity of the lowest wheel: a timeout fires at the first tick boundary at or after
  // its deadline, so up to one tick late. Unlike HashedWheelTimer's tick, it is not how often
  // the worker wakes: the worker only wakes when a bucket holding timeouts is due, so at most
  // once a tick when many are due and not at all when none is. A coarser tick batches more
  // timeouts per wake and per delay-queue operation (see docs/benchmarks.md).
  std::chrono::nanoseconds tick = std::chrono::milliseconds(1);
  // Buckets per wheel, rounded up to a power of two in [2, 65536]. Wheel k has a tick of
  // tick * wheel_size^k and spans wheel_size of those ticks. The defaults give wheels of
  // 0.5 s, 262 s, 37 h and 2.2 years: a timeout of a day moves down twice before it fires.
  std::size_t wheel_size = 512;
  // A sleeping worker is woken once this many schedule() and cancel() calls have queued up
  // since its last step, even when none of them is due sooner: it would otherwise sleep until
  // the next bucket is due (hours, when nothing is), and what those calls hold (a timeout of
  // 80 bytes each, even cancelled) would pile up meanwhile.
  std::size_t max_queued_operations = 4096;
};

// Kafka's hierarchical timing wheel (kafka.utils.timer.TimingWheel and SystemTimer), for
// timeouts of any length that should cost nothing while none is due.
//
// How it works. Time is cut into ticks of `tick` from the moment the timer was built (S); a
// timeout due at D is due at tick e = ceil((D - S) / tick), the first boundary at or after D.
// Wheel 0 has wheel_size buckets of one tick each; wheel k+1 has wheel_size buckets, each as
// long as the whole of wheel k. The wheels share one current tick c. A timeout goes into the
// lowest wheel that can hold it: wheel k holds ticks whose bucket, e / tick_k, is less than
// wheel_size buckets ahead of c / tick_k. A wheel above the highest existing one is created
// when a timeout first needs it (Kafka's overflow wheel); a timeout already due (e <= c) is
// handed over at once.
//
// Every bucket that holds a timeout is in a delay queue, a binary heap of buckets ordered by
// their expiry (a wheel-0 bucket: its tick; a higher bucket: the first tick it covers). The
// worker sleeps until the head of that queue is due and then, for each due bucket in expiry
// order, moves the clock to the bucket's expiry and empties it: a wheel-0 bucket expires its
// timeouts, a higher one puts each of its timeouts back through the placement above, which
// lands it in a lower wheel (Kafka's reinsert) or, when its tick has come, expires it. So a
// timeout is touched once per wheel it passes through (a few times, whatever its delay), and
// the worker wakes only for buckets that hold something: an empty timer sleeps until it is
// given a timeout or stopped, and a timer whose timeouts are all days away sleeps until the
// first bucket that holds them is due (for the defaults, within 37 h of it).
//
// Guarantees:
//  - Never early: a task runs no earlier than its deadline, normally less than one tick after
//    it (more when the worker was late or busy with callbacks).
//  - No wake-ups while idle: the worker sleeps until the earliest non-empty bucket, not to the
//    next tick. A bucket emptied by cancellations leaves the delay queue at the worker's next
//    step (so a bucket whose timeouts were all cancelled while the worker slept towards it
//    wakes it once, for nothing).
//  - A schedule() due before the bucket the worker sleeps towards wakes it.
//  - Timeouts due at different ticks run in deadline order, also when the worker catches up
//    late. Within one tick, in the order they were placed in the wheel-0 bucket: schedule
//    order for timeouts that went straight there, but one that came down from a higher wheel
//    is placed when that wheel's bucket expired, after any of the same tick scheduled later
//    straight into wheel 0.
//
// Threads. As in HashedWheelTimer, schedule() and cancel() never touch a bucket: schedule()
// appends to a submission list, cancel() to a cancellation list, each under a mutex held for a
// few pointer writes (schedule() also takes the timeout's slot from the pool there). The wheels
// and the delay queue belong to the worker alone (or to the caller of process_until() on a
// manual timer), which at each step takes both lists, turns the entries of cancelled timeouts
// into tombstones (dropping a bucket from the delay queue when that empties it), places the
// submissions, then empties every due bucket. Expired timeouts are handed to the executor in
// batches of a few dozen as the walk goes, outside every lock: tasks may schedule and cancel
// freely (neither touches a bucket), but a task running inline delays everything behind it.
// A submission that does not need an earlier wake waits in its list until the worker wakes
// anyway, or until max_queued_operations calls have queued up.
//
// Memory.
//  - Per timeout: one 80-byte pool slot (timeout_node.h) and one 8-byte bucket entry. A
//    cancelled timeout gives up its task at once; its slot is freed at the worker's next step
//    (at the latest after max_queued_operations further calls), its entry when its bucket is
//    emptied or compacted (a bucket is compacted when tombstones outnumber live entries).
//  - Per wheel, created on demand and kept: wheel_size buckets of 48 bytes plus their arrays.
//    A bucket keeps its array's capacity for its next use unless it exceeds 4x what it held
//    (and 64 entries), so the memory of a burst is returned when its buckets are emptied.
//  - If a bucket or a wheel cannot grow (std::bad_alloc), the timeout waits in a backlog that
//    the worker retries every tick: late, never early, never lost.
//
// How this departs from Kafka:
//  - Never early. Kafka's buckets expire at the start of their interval and a timeout due
//    within the current tick runs at once, up to one tick before its deadline; here deadlines
//    are rounded up to a tick boundary first.
//  - Never idle ticking. Kafka's reaper thread polls the delay queue every 200 ms, so an empty
//    Kafka timer still wakes five times a second; this worker sleeps until the head of the
//    delay queue, and schedule() wakes it when it needs to be earlier.
//  - The delay queue holds only non-empty buckets. Kafka leaves a bucket whose entries were all
//    cancelled in its DelayQueue until it expires; here it is taken out (the heap knows each
//    bucket's position).
//  - The clock moves to the time of the step after the due buckets are emptied, not only to
//    bucket expiries, so a timeout scheduled after a long quiet period lands directly in the
//    lowest wheel that can hold it.
//  - The worker owns the buckets outright: Kafka's add() locks the bucket it inserts into,
//    here schedule() and cancel() go through lists (see Threads); buckets are arrays with
//    tombstones, not linked lists; cancel() destroys the task at once; handles are reference
//    counted and outlive the timer; expiry goes through an executor.
class HierarchicalWheelTimer final : public detail::WheelTimerBase {
 public:
  // Throws std::invalid_argument for a non-positive tick, a wheel size outside [2, 65536] or
  // a zero max_queued_operations. Starts the worker thread unless options.manual.
  explicit HierarchicalWheelTimer(Clock& clock, HierarchicalWheelOptions wheel = {},
                                  TimerOptions options = {});
  // stop(), discarding what it returns. Must not run on the timer's own worker thread.
  ~HierarchicalWheelTimer() override;

  std::size_t wheel_size() const noexcept { return std::size_t{1} << bits_; }

 private:
  friend struct detail::WheelInspector;

  static constexpr std::uint32_t kNotQueued = static_cast<std::uint32_t>(-1);

  // One slot of one wheel: its entries (a null one is a tombstone) and its place in the delay
  // queue.
  struct Bucket : detail::WheelBucket<detail::TimeoutNode*> {
    std::int64_t expiry = 0;                 // in ticks; meaningful while queued
    std::uint32_t queue_index = kNotQueued;  // position in queue_
  };
  // An element of the delay queue: the bucket's expiry copied so comparisons stay in the
  // array.
  struct Queued {
    std::int64_t expiry;
    std::uint32_t bucket;  // level << bits_ | slot
  };
  // The delay queue's order: by expiry, the higher wheel first at equal expiry; each bucket
  // keeps its position.
  struct QueueOrder {
    HierarchicalWheelTimer* timer;
    bool earlier(const Queued& a, const Queued& b) const noexcept;
    void placed(const Queued& q, std::size_t index) const noexcept;
  };

  Bucket& bucket(std::uint32_t id) noexcept;
  // Puts `node` (pending, in no bucket) in the lowest wheel that holds tick `e`, creating the
  // wheel if needed; kDue when e <= c_. Moves the caller's reference into the bucket, unless
  // kDue or kFailed (out of memory).
  Placed place(detail::TimeoutNode* node, std::int64_t e) noexcept;

  std::size_t advance(Clock::SteadyTime now) override;
  // Places `node` (hands it over when due); when that fails, it waits in the backlog.
  void place_or_defer(detail::TimeoutNode* node, detail::ExpiryBatch& out) noexcept;
  // Empties a due bucket, just taken off the queue, at c_ == its expiry.
  void flush(std::uint32_t id, detail::ExpiryBatch& out) noexcept;
  // When the worker must wake next for what it holds (not counting the lists).
  Clock::SteadyTime next_wake() const noexcept;
  void run_worker(std::stop_token stop);
  void surrender(std::vector<TimerHandle>& unprocessed) override;

  // What the wheels hold, for tests (through detail::WheelInspector). Only from the thread
  // that processes time, or after stop().
  struct Footprint {
    std::vector<std::size_t> live_per_wheel;  // live entries in each wheel created so far
    std::size_t tombstones = 0;
    std::size_t queued_buckets = 0;  // buckets in the delay queue
    std::size_t backlog = 0;
    std::int64_t current_tick = 0;
  };
  Footprint footprint() const;

  const unsigned bits_;             // log2(wheel_size)
  const std::uint64_t mask_;        // wheel_size - 1
  const unsigned max_levels_;       // wheels needed to hold any tick up to 2^63

  // Owned by the worker (or the process_until caller).
  std::int64_t c_ = 0;                                      // the current tick
  std::vector<std::unique_ptr<Bucket[]>> wheels_;           // wheels_[level][slot]
  detail::IndexedHeap<Queued, QueueOrder> queue_{{this}};   // only non-empty buckets
};

}  // namespace cronwheel::common
