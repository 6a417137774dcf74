#include "common/timer/timeout_node.h"

#include <algorithm>
#include <limits>
#include <new>
#include <string>

namespace cronwheel::common::detail {

void TimeoutNode::destroy() noexcept {
  // Keep the core, and so the pool, alive until the slot is back in it.
  RefPtr<TimerCore> owner = std::move(core);
  this->~TimeoutNode();
  owner->pool_.deallocate(this);
}

RefPtr<TimeoutNode> TimerCore::admit_locked(std::size_t pending, Clock::SteadyTime deadline,
                                             TimerTask&& task) {
  if (closed_) throw TimerRejectedError(TimerRejectedError::Reason::kStopped, "timer is stopped");
  if (max_pending_ != 0 && pending >= max_pending_) {
    throw TimerRejectedError(TimerRejectedError::Reason::kTooManyPending,
                             "too many pending timeouts (" + std::to_string(pending + 1) +
                                 "), max is " + std::to_string(max_pending_));
  }
  void* slot = pool_.allocate();
  return RefPtr<TimeoutNode>::adopt(
      new (slot) TimeoutNode(RefPtr<TimerCore>(this), deadline, std::move(task)));
}

void TimerCore::run(TimeoutNode& node) noexcept {
  try {
    node.task();
  } catch (...) {
    report_failure(std::current_exception());
  }
  // Destroy the captures now rather than when the last handle goes away.
  try {
    node.task = nullptr;
  } catch (...) {
    report_failure(std::current_exception());
  }
}

void TimerCore::report_failure(std::exception_ptr error) noexcept {
  failed_.fetch_add(1, std::memory_order_relaxed);
  if (!on_error_) return;
  try {
    on_error_(std::move(error));
  } catch (...) {
    // The handler's own failure has nowhere to go; the count above already has it.
  }
}

void hand_over(TimeoutNode* node, const TimerExecutor& executor) noexcept {
  if (!executor) {
    node->core->run(*node);
  } else {
    try {
      // The closure holds its own reference: the node (and its core) stay alive until the
      // task has run, even if the timer is destroyed first.
      executor([ref = RefPtr<TimeoutNode>(node)] { ref->core->run(*ref); });
    } catch (...) {
      node->core->report_failure(std::current_exception());
    }
  }
  node->release();
}

Clock::SteadyTime deadline_after(Clock::SteadyTime now, std::chrono::nanoseconds delay) noexcept {
  using Duration = Clock::SteadyTime::duration;
  if (delay <= std::chrono::nanoseconds::zero()) return now;
  const auto room = Clock::SteadyTime::max() - now;
  if (delay >= std::chrono::duration_cast<std::chrono::nanoseconds>(room)) {
    return Clock::SteadyTime::max();
  }
  return now + std::chrono::duration_cast<Duration>(delay);
}

void keep_if_pending(TimeoutNode* node, std::vector<TimerHandle>& unprocessed) {
  if (node->is_pending()) {
    unprocessed.push_back(HandleAccess::adopt(node));
  } else {
    node->release();
  }
}

void keep_pending_of(TimeoutNode* head, std::vector<TimerHandle>& unprocessed) {
  for (TimeoutNode* node = head; node != nullptr;) {
    TimeoutNode* next = node->next;
    node->next = nullptr;
    keep_if_pending(node, unprocessed);
    node = next;
  }
}

void release_cancelled(TimeoutNode* head) noexcept {
  for (TimeoutNode* node = head; node != nullptr;) {
    TimeoutNode* next = node->cancel_next;
    node->release();
    node = next;
  }
}

void sort_by_deadline(std::vector<TimerHandle>& handles) {
  std::stable_sort(handles.begin(), handles.end(),
                   [](const TimerHandle& a, const TimerHandle& b) {
                     return a.deadline() < b.deadline();
                   });
}

}  // namespace cronwheel::common::detail
