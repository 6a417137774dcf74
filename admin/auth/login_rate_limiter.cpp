#include "admin/auth/login_rate_limiter.h"

#include <algorithm>

namespace cronwheel::admin {

LoginRateLimiter::LoginRateLimiter(const common::Clock& clock) : LoginRateLimiter(clock, Options{}) {}

LoginRateLimiter::LoginRateLimiter(const common::Clock& clock, Options options)
    : clock_(clock), options_(options) {}

void LoginRateLimiter::forget_expired(Failures& failures, Time now) const {
  while (!failures.empty() && failures.front() + options_.window <= now) failures.pop_front();
}

std::optional<std::chrono::milliseconds> LoginRateLimiter::blocked_for(Table& table, const std::string& key,
                                                                       std::size_t limit, Time now) {
  auto it = table.find(key);
  if (it == table.end()) return std::nullopt;
  forget_expired(it->second, now);
  if (it->second.empty()) {
    table.erase(it);
    return std::nullopt;
  }
  if (it->second.size() < limit) return std::nullopt;
  // Blocked until the oldest counted failure leaves the window.
  return std::chrono::duration_cast<std::chrono::milliseconds>(it->second.front() + options_.window - now);
}

std::optional<std::chrono::seconds> LoginRateLimiter::retry_after(std::string_view username,
                                                                  std::string_view address) {
  const Time now = clock_.steady_now();
  std::lock_guard lock(mutex_);
  auto user = blocked_for(by_user_, std::string(username), options_.max_failures_per_user, now);
  auto addr = blocked_for(by_address_, std::string(address), options_.max_failures_per_address, now);
  if (!user && !addr) return std::nullopt;
  const auto wait = std::max(user.value_or(std::chrono::milliseconds(0)), addr.value_or(std::chrono::milliseconds(0)));
  // Round up: a client that waits exactly Retry-After seconds must not be refused again.
  auto seconds = std::chrono::ceil<std::chrono::seconds>(wait);
  return std::max(seconds, std::chrono::seconds(1));
}

void LoginRateLimiter::add(Table& table, const std::string& key, std::size_t limit, Time now) {
  auto it = table.find(key);
  if (it == table.end()) {
    if (table.size() >= options_.max_keys) {
      // Full: drop keys whose failures all expired; if that frees nothing, the key whose newest
      // failure is oldest (the least recently active attacker or user).
      for (auto e = table.begin(); e != table.end();) {
        forget_expired(e->second, now);
        e = e->second.empty() ? table.erase(e) : std::next(e);
      }
      if (table.size() >= options_.max_keys) {
        auto stalest = std::min_element(table.begin(), table.end(), [](const auto& a, const auto& b) {
          return a.second.back() < b.second.back();
        });
        table.erase(stalest);
      }
    }
    it = table.emplace(key, Failures{}).first;
  }
  auto& failures = it->second;
  forget_expired(failures, now);
  failures.push_back(now);
  // Only the newest `limit` matter: the block ends when the oldest of them expires.
  while (failures.size() > limit) failures.pop_front();
}

void LoginRateLimiter::record_failure(std::string_view username, std::string_view address) {
  const Time now = clock_.steady_now();
  std::lock_guard lock(mutex_);
  add(by_user_, std::string(username), options_.max_failures_per_user, now);
  add(by_address_, std::string(address), options_.max_failures_per_address, now);
}

void LoginRateLimiter::record_success(std::string_view username) {
  std::lock_guard lock(mutex_);
  by_user_.erase(std::string(username));
}

std::size_t LoginRateLimiter::tracked_keys() const {
  std::lock_guard lock(mutex_);
  return by_user_.size() + by_address_.size();
}

}  // namespace cronwheel::admin
