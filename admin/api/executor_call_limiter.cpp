#include "admin/api/executor_call_limiter.h"

#include <algorithm>
#include <string>

#include "admin/api/api_errors.h"

namespace cronwheel::admin {

ExecutorCallLimiter::ExecutorCallLimiter(std::size_t per_group) : per_group_(std::max<std::size_t>(per_group, 1)) {}

ExecutorCallLimiter::Permit::Permit(Permit&& other) noexcept : limiter_(other.limiter_), group_(other.group_) {
  other.limiter_ = nullptr;
}

ExecutorCallLimiter::Permit::~Permit() {
  if (limiter_ != nullptr) limiter_->release(group_);
}

ExecutorCallLimiter::Permit ExecutorCallLimiter::acquire(std::int64_t group) {
  {
    std::lock_guard lock(mutex_);
    auto& count = in_flight_[group];
    if (count < per_group_) {
      ++count;
      return Permit(this, group);
    }
  }
  throw busy("group " + std::to_string(group) + " has " + std::to_string(per_group_) +
                 " calls waiting for its executors already; try again in a few seconds",
             kRetryAfterSeconds);
}

std::size_t ExecutorCallLimiter::in_flight(std::int64_t group) const {
  std::lock_guard lock(mutex_);
  auto it = in_flight_.find(group);
  return it == in_flight_.end() ? 0 : it->second;
}

void ExecutorCallLimiter::release(std::int64_t group) noexcept {
  std::lock_guard lock(mutex_);
  auto it = in_flight_.find(group);
  if (it != in_flight_.end() && --it->second == 0) in_flight_.erase(it);
}

}  // namespace cronwheel::admin
