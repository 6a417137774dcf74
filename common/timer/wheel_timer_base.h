#pragma once

// Internals of the wheels. Not part of the public API.

#include <cstddef>
#include <vector>

#include "common/timer/tick_scale.h"
#include "common/timer/timeout_node.h"
#include "common/timer/timer.h"
#include "common/timer/timer_base.h"
#include "common/timer/wheel_core.h"
#include "common/util/clock.h"

namespace cronwheel::common::detail {

// Defined by the tests, a friend of both wheels: reads what a wheel holds (its footprint()).
struct WheelInspector;

// An option that counts something and must be positive: `n`, or std::invalid_argument naming
// the option.
std::size_t checked_positive(std::size_t n, const char* option);

// What HashedWheelTimer and HierarchicalWheelTimer share around their buckets: the WheelCore
// whose lists schedule() and cancel() append to, the tick scale, and the backlog, the timeouts
// taken from the submission list that are not placed yet. stop() returns, besides what the
// buckets hold (surrender()), the pending timeouts of the lists and of the backlog.
class WheelTimerBase : public TimerBase<WheelCore> {
 public:
  // Granularity: a timeout fires at the first tick boundary at or after its deadline.
  std::chrono::nanoseconds tick() const noexcept { return ticks_.tick(); }

 protected:
  // `max_queued`: WheelCore's (WheelCore::kTicks for a worker that wakes every tick).
  WheelTimerBase(Clock& clock, const TickScale& ticks, TimerOptions& options,
                 std::size_t max_queued);

  // What a wheel's place() did with a pending timeout, given with the backlog's reference.
  enum class Placed {
    kInBucket,  // the reference moved into a bucket
    kDue,       // not placed: already due; the caller still holds the reference
    kFailed,    // not placed: a bucket or a wheel cannot grow (out of memory); nothing changed
  };

  // Places timeouts from the front of the backlog, in order, until it is empty or `limit`
  // have been taken from it (cancelled ones are released and count too). `place(node)` puts a
  // pending timeout where it belongs and says what it did (Placed); a due one is unlinked and
  // given to `due(node)` with its reference. A timeout that cannot be placed stops the walk:
  // it and those behind it wait for a later step, late but never early and never lost.
  template <class Place, class Due>
  void place_backlog(std::size_t limit, Place&& place, Due&& due) noexcept {
    for (std::size_t n = 0; n < limit; ++n) {
      TimeoutNode* node = backlog_.front();
      if (node == nullptr) return;
      if (!node->is_pending()) {
        backlog_.pop_front();
        node->release();  // cancelled while it waited
        continue;
      }
      const Placed placed = place(node);
      if (placed == Placed::kFailed) return;
      backlog_.pop_front();
      if (placed == Placed::kDue) due(node);
    }
  }

  // For stop(), after the worker is gone: empties every bucket, putting the timeouts still
  // pending into `unprocessed`.
  virtual void surrender(std::vector<TimerHandle>& unprocessed) = 0;

  const TickScale ticks_;
  NodeList backlog_;  // owned by the worker (or the process_until caller)

 private:
  std::vector<TimerHandle> drain() final;
};

}  // namespace cronwheel::common::detail
