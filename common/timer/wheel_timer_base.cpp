#include "common/timer/wheel_timer_base.h"

#include <stdexcept>
#include <string>
#include <utility>

namespace cronwheel::common::detail {

std::size_t checked_positive(std::size_t n, const char* option) {
  if (n == 0) throw std::invalid_argument(std::string(option) + " must be positive");
  return n;
}

WheelTimerBase::WheelTimerBase(Clock& clock, const TickScale& ticks, TimerOptions& options,
                               std::size_t max_queued)
    : TimerBase(clock, options,
                RefPtr<WheelCore>::adopt(new WheelCore(std::move(options.on_error),
                                                       options.max_pending_timeouts, ticks,
                                                       max_queued))),
      ticks_(ticks) {}

std::vector<TimerHandle> WheelTimerBase::drain() {
  // Nothing else touches the wheel now. Drop what was cancelled, return what is pending.
  std::vector<TimerHandle> unprocessed;
  unprocessed.reserve(core_->pending());
  auto taken = core_->take();
  release_cancelled(taken.cancelled_head);
  keep_pending_of(backlog_.take(), unprocessed);
  keep_pending_of(taken.submitted.take(), unprocessed);  // the order is sorted out below
  surrender(unprocessed);
  core_->clear_pending();
  sort_by_deadline(unprocessed);
  return unprocessed;
}

}  // namespace cronwheel::common::detail
