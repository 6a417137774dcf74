#include "admin/route/suspect_addresses.h"

#include <algorithm>

namespace cronwheel::admin {

SuspectAddresses::SuspectAddresses(common::Clock& clock, std::chrono::milliseconds hold) : clock_(clock), hold_(hold) {}

void SuspectAddresses::mark(const std::string& address) {
  const auto now = clock_.steady_now();
  std::lock_guard lock(mutex_);
  if (marked_.size() >= kMaxAddresses && marked_.count(address) == 0) {
    for (auto it = marked_.begin(); it != marked_.end();) {
      it = now - it->second >= hold_ ? marked_.erase(it) : std::next(it);
    }
    if (marked_.size() >= kMaxAddresses) {
      marked_.erase(std::min_element(marked_.begin(), marked_.end(),
                                     [](const auto& a, const auto& b) { return a.second < b.second; }));
    }
  }
  marked_[address] = now;
}

void SuspectAddresses::cleared(const std::string& address) {
  std::lock_guard lock(mutex_);
  marked_.erase(address);
}

bool SuspectAddresses::suspect_locked(const std::string& address, common::Clock::SteadyTime now) {
  auto it = marked_.find(address);
  if (it == marked_.end()) return false;
  if (now - it->second < hold_) return true;
  marked_.erase(it);
  return false;
}

bool SuspectAddresses::suspect(const std::string& address) {
  const auto now = clock_.steady_now();
  std::lock_guard lock(mutex_);
  return suspect_locked(address, now);
}

std::vector<std::string> SuspectAddresses::usable(const std::vector<std::string>& addresses) {
  const auto now = clock_.steady_now();
  std::lock_guard lock(mutex_);
  if (marked_.empty()) return addresses;
  std::vector<std::string> out;
  for (const auto& address : addresses) {
    if (!suspect_locked(address, now)) out.push_back(address);
  }
  return out.empty() ? addresses : out;
}

std::size_t SuspectAddresses::size() const {
  std::lock_guard lock(mutex_);
  return marked_.size();
}

}  // namespace cronwheel::admin
