#include "tests/bench/heap_timer.h"

#include <stop_token>
#include <utility>

namespace cronwheel::bench {

using common::Clock;
using common::TimerHandle;
using common::TimerOptions;
using common::detail::NodeList;
using common::detail::RefPtr;
using common::detail::TimeoutNode;

HeapTimer::HeapTimer(Clock& clock, TimerOptions options)
    : TimerBase(clock, options,
                RefPtr<detail::HeapCore>::adopt(new detail::HeapCore(
                    std::move(options.on_error), options.max_pending_timeouts))) {
  steps_.start([this](std::stop_token stop) { run_worker(std::move(stop)); });
}

HeapTimer::~HeapTimer() { stop(); }

std::size_t HeapTimer::advance(Clock::SteadyTime now) {
  NodeList due;
  const std::size_t handed_over = core_->pop_due(now, due);
  while (TimeoutNode* node = due.pop_front()) common::detail::hand_over(node, executor_);
  return handed_over;
}

std::vector<TimerHandle> HeapTimer::drain() { return core_->take_all(); }

void HeapTimer::run_worker(std::stop_token stop) {
  common::detail::sleep_and_step(
      clock_, std::move(stop),
      [this](std::stop_source wake) { return core_->arm(std::move(wake)); },
      [this](Clock::SteadyTime now) { advance(now); });
}

}  // namespace cronwheel::bench
