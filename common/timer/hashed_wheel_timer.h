#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <stop_token>
#include <vector>

#include "common/timer/timeout_node.h"
#include "common/timer/timer.h"
#include "common/timer/wheel_bucket.h"
#include "common/timer/wheel_timer_base.h"
#include "common/util/clock.h"

namespace cronwheel::common {

struct WheelOptions {
  // Granularity: a timeout fires at the first tick boundary at or after its deadline, so up to
  // one tick late. Also how often an idle worker wakes.
  std::chrono::nanoseconds tick = std::chrono::milliseconds(100);
  // Buckets, rounded up to a power of two. Pick wheel_size * tick at least as long as the
  // usual delay: then every timeout is looked at once, when it expires; a longer delay costs
  // one extra visit (a decrement of its bucket entry) per further turn.
  std::size_t wheel_size = 512;
  // At most this many newly scheduled timeouts are moved into buckets per tick (Netty's
  // bound), so a burst of schedule() calls cannot stall a tick; the rest wait for the next
  // tick and are then placed as late timeouts (they still never fire early).
  std::size_t max_transfers_per_tick = 100'000;
};

// A hashed timing wheel in the style of Netty's HashedWheelTimer (Varghese & Lauck, scheme 6)
// for many coarse timeouts: schedule and cancel are O(1), expiry is O(1) per timeout plus one
// decrement per extra turn, whatever the number pending.
//
// How it works. Time is cut into ticks of `tick` from the moment the timer was built (S). Tick
// k ends at S + (k + 1) * tick; the worker processes it once the clock has passed that point:
// it expires bucket k & (wheel_size - 1). A timeout due at D belongs to the first tick whose
// end is at or after D; it is put in that tick's bucket with remaining_rounds = the number of
// whole turns until then, decremented at each visit, expired at zero. A timeout already late
// when it is placed goes into the bucket processed next, never into one already passed.
//
// Guarantees:
//  - Never early: a task runs no earlier than its deadline, normally less than one tick after
//    it (more when the worker was late, busy with callbacks or over the per-tick transfer
//    bound).
//  - No tick is skipped: a worker that wakes late processes every tick it missed, in order.
//  - Ticks do not drift: the worker sleeps to the absolute end of the next tick.
//  - Within one tick, tasks run in the order their timeouts were placed in the bucket, which
//    for timeouts scheduled by one thread is schedule order, not deadline order.
//
// Threads. schedule() and cancel() never touch the buckets: schedule() appends to a submission
// list, cancel() to a cancellation list, each under a mutex held for a few pointer writes
// (schedule() also takes the timeout's slot from the pool there, rarely carving a chunk). The
// buckets belong to the worker alone (or to the caller of process_until() on a manual timer),
// which at each step takes both lists, turns the entries of the cancelled timeouts into
// tombstones (O(1) each: a timeout knows its bucket and position), places up to
// max_transfers_per_tick submissions, then expires the current bucket. Expired timeouts are
// handed to the executor in batches of a few dozen as the walk goes, outside every lock: tasks
// may schedule and cancel freely (neither touches a bucket).
//
// Layout, for costs that stay flat as the count grows. With a million timeouts pending (80
// bytes each), they are far bigger than the caches, so what an operation costs is the number
// of cold cache lines it waits for, one after the other. So:
//  - A bucket is an array of entries {timeout, remaining_rounds}, not a linked list of
//    timeouts. The walk reads the array sequentially, and prefetches the timeout 16 entries
//    ahead, so the misses of the timeouts it expires overlap instead of forming a chain of
//    dependent loads; one memory latency is spread over many timeouts. An entry that waits
//    for a later turn is decided from the array alone: its timeout is not touched (unless
//    it moves down over a gap, see below).
//  - Expired timeouts are handed over in batches of 32, while their lines are still in L1,
//    rather than after the whole bucket.
//  - Timeouts live in a per-timer NodePool (node_pool.h): dense, and freed without touching
//    allocator headers that nothing prefetched.
//  - A cancellation writes one entry (prefetched along the cancellation list) and never walks
//    a bucket. cancel() itself must touch the timeout it cancels: one cold miss per call,
//    like any access to a random timeout (see tests/bench/timer_bench.cpp).
//
// Cancelled entries are tombstones, not swapped out: the walk skips them without touching a
// timeout, and the other entries keep their order (the order guarantee above). Swapping the
// last entry into the hole would also cost a cold write to the moved timeout's position, and
// dropping entries lazily (the worker discarding a cancelled timeout only when its deadline
// comes) would keep each one's memory until then, however early it was cancelled.
// Tombstones at the end of a bucket are dropped at once. Otherwise a bucket is compacted,
// in order, when its tombstones outnumber its live entries (at most two moves per tombstone),
// and every visit of the bucket compacts it as it walks, so moving an entry down means
// updating its timeout's position, a prefetched write.
//
// Memory.
//  - Per timeout: one 80-byte pool slot (see timeout_node.h; plus what the task captures
//    beyond std::function's inline buffer) and one 16-byte entry. A cancelled timeout gives
//    up its task at once, on the cancelling thread; the timer drops its references at the
//    worker's next step (the next tick for a threaded timer, the next process_until() for a
//    manual one), so the slot is free once the last handle is gone too. Its entry lingers as
//    a tombstone until the bucket's next visit (at most one turn, wheel_size ticks) or until
//    the bucket is compacted, whichever comes first: a bucket never holds more than twice its
//    live entries after a step.
//  - Per bucket: 32 bytes plus its array. An array keeps its capacity between turns, up to 4x
//    the most it held during the last turn (and at least 64 entries); beyond that a visit
//    shrinks it, so the memory of a burst is returned one turn after it expired.
//  - The pool keeps its slots for the timer's lifetime (see node_pool.h).
//  - If a bucket cannot grow (std::bad_alloc), the timeout stays in the submission backlog and
//    is placed at a later tick: late, never early, never lost.
//
// How this departs from Netty: mutex-guarded intrusive lists instead of lock-free queues (a
// handful of instructions under the lock, no allocation beyond the timeout itself, and a
// clean cut-off at stop(), so no timeout is ever accepted and then lost); buckets are arrays
// rather than linked lists, and cancellation leaves tombstones; cancel() destroys the task at
// once instead of at the next tick; handles are reference counted and outlive the timer;
// expiry goes through an executor; a deadline exactly on a tick boundary fires at that
// boundary (Netty waits one more tick).
class HashedWheelTimer final : public detail::WheelTimerBase {
 public:
  // Throws std::invalid_argument for a non-positive tick, a zero or huge wheel, or a zero
  // transfer bound. Starts the worker thread unless options.manual.
  explicit HashedWheelTimer(Clock& clock, WheelOptions wheel = {}, TimerOptions options = {});
  // stop(), discarding what it returns. Must not run on the timer's own worker thread.
  ~HashedWheelTimer() override;

  std::size_t wheel_size() const noexcept { return buckets_.size(); }

 private:
  friend struct detail::WheelInspector;

  // One entry of a bucket: what the tick walk needs to decide, next to the timeout it
  // refers to. node == nullptr marks a cancelled entry (a tombstone) that the next visit or
  // compaction drops.
  struct Entry {
    detail::TimeoutNode* node;         // holds the bucket's reference
    std::int64_t remaining_rounds;     // turns to wait before expiring
  };
  using Bucket = detail::WheelBucket<Entry>;

  // Processes every tick that ended by `now`; see process_until().
  std::size_t advance(Clock::SteadyTime now) override;
  // Takes the submission and cancellation lists, places submissions, unlinks cancelled.
  void collect();
  // Appends `node` to its bucket: kInBucket, or kFailed when the bucket cannot grow.
  Placed place(detail::TimeoutNode* node) noexcept;
  // Expires the current tick's bucket, handing its due timeouts to the executor. Returns how
  // many it handed over.
  std::size_t expire_current_tick() noexcept;
  void run_worker(std::stop_token stop);
  void surrender(std::vector<TimerHandle>& unprocessed) override;

  // What the wheel holds, for tests (through detail::WheelInspector). Only from the thread
  // that processes time (a manual timer's process_until caller), or after stop().
  struct Footprint {
    std::size_t entries = 0;      // in all buckets, tombstones included
    std::size_t tombstones = 0;
    std::size_t capacity = 0;     // entries the bucket arrays have room for
    std::size_t pool_slots = 0;   // timeout slots the pool has carved
  };
  Footprint footprint() const noexcept;

  const std::size_t max_transfers_;
  // Owned by the worker (or the process_until caller): the wheel and its cursor.
  std::vector<Bucket> buckets_;
  std::uint64_t mask_;
  std::int64_t tick_ = 0;  // next tick to process
};

}  // namespace cronwheel::common
