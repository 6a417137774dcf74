#include "common/timer/timer.h"

#include <utility>

#include <spdlog/spdlog.h>

#include "common/timer/timeout_node.h"

namespace cronwheel::common {

TimerErrorHandler logging_timer_errors(std::string who) {
  return [who = std::move(who)](std::exception_ptr error) {
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      spdlog::error("{}: a task failed: {}", who, e.what());
    } catch (...) {
      spdlog::error("{}: a task failed with a non-standard exception", who);
    }
  };
}

std::string_view to_string(CancelResult result) {
  switch (result) {
    case CancelResult::kCancelled:
      return "cancelled";
    case CancelResult::kAlreadyExpired:
      return "already expired";
    case CancelResult::kAlreadyCancelled:
      return "already cancelled";
    case CancelResult::kNoTimeout:
      return "no timeout";
  }
  return "unknown";
}

std::string_view to_string(TimeoutState state) {
  switch (state) {
    case TimeoutState::kPending:
      return "pending";
    case TimeoutState::kCancelled:
      return "cancelled";
    case TimeoutState::kExpired:
      return "expired";
  }
  return "unknown";
}

TimerRejectedError::TimerRejectedError(Reason reason, const std::string& message)
    : std::runtime_error(message), reason_(reason) {}

TimerHandle::TimerHandle(const TimerHandle& other) noexcept : node_(other.node_) {
  if (node_ != nullptr) node_->add_ref();
}

TimerHandle::TimerHandle(TimerHandle&& other) noexcept
    : node_(std::exchange(other.node_, nullptr)) {}

TimerHandle& TimerHandle::operator=(const TimerHandle& other) noexcept {
  if (other.node_ != nullptr) other.node_->add_ref();
  if (node_ != nullptr) node_->release();
  node_ = other.node_;
  return *this;
}

TimerHandle& TimerHandle::operator=(TimerHandle&& other) noexcept {
  if (this != &other) {
    if (node_ != nullptr) node_->release();
    node_ = std::exchange(other.node_, nullptr);
  }
  return *this;
}

TimerHandle::~TimerHandle() {
  if (node_ != nullptr) node_->release();
}

CancelResult TimerHandle::cancel() const {
  if (node_ == nullptr) return CancelResult::kNoTimeout;
  detail::prefetch_whole(node_);
  std::uint8_t seen = detail::TimeoutNode::kPending;
  if (node_->state.compare_exchange_strong(seen, detail::TimeoutNode::kCancelled,
                                           std::memory_order_acq_rel,
                                           std::memory_order_acquire)) {
    // This thread won the task: destroy it here, outside every timer lock.
    TimerTask dropped = std::move(node_->task);
    node_->task = nullptr;
    node_->core->on_cancelled(*node_);
    return CancelResult::kCancelled;
  }
  return seen == detail::TimeoutNode::kCancelled ? CancelResult::kAlreadyCancelled
                                                 : CancelResult::kAlreadyExpired;
}

TimerTask TimerHandle::take_task() const {
  if (node_ != nullptr) detail::prefetch_whole(node_);
  if (node_ == nullptr || !node_->try_transition(detail::TimeoutNode::kCancelled)) return {};
  TimerTask task = std::move(node_->task);
  node_->task = nullptr;
  node_->core->on_cancelled(*node_);
  return task;
}

TimeoutState TimerHandle::state() const noexcept {
  if (node_ == nullptr) return TimeoutState::kCancelled;
  switch (node_->state.load(std::memory_order_acquire)) {
    case detail::TimeoutNode::kPending:
      return TimeoutState::kPending;
    case detail::TimeoutNode::kExpired:
      return TimeoutState::kExpired;
    default:
      return TimeoutState::kCancelled;
  }
}

Clock::SteadyTime TimerHandle::deadline() const noexcept {
  return node_ == nullptr ? Clock::SteadyTime{} : node_->deadline;
}

}  // namespace cronwheel::common
