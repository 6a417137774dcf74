#include "admin/auth/login_rate_limiter.h"

#include <algorithm>

namespace cronwheel::admin {

namespace {

std::string bounded(std::string_view key) {
  return std::string(key.substr(0, LoginRateLimiter::kMaxKeyBytes));
}

// Length-prefixed, so no address and account can make the key of another pair.
std::string pair_key(const std::string& address, const std::string& account) {
  return std::to_string(address.size()) + ":" + address + account;
}

}  // namespace

LoginRateLimiter::LoginRateLimiter(common::Clock& clock) : LoginRateLimiter(clock, Options{}) {}

LoginRateLimiter::LoginRateLimiter(common::Clock& clock, Options options)
    : clock_(clock),
      options_(options),
      pairs_(make_table(options.free_failures_per_pair, options.pair_max_delay, options.pair_window)),
      addresses_(make_table(options.free_failures_per_address, options.address_max_delay, options.window)),
      accounts_(make_table(options.free_failures_per_account, options.account_max_delay, options.window)) {}

LoginRateLimiter::Table LoginRateLimiter::make_table(std::size_t free, std::chrono::milliseconds cap,
                                                     std::chrono::milliseconds window) const {
  Table table;
  table.free = free;
  table.cap = std::max(cap, std::chrono::milliseconds(0));
  table.window = window;
  // Failures past the one whose wait reaches the cap change nothing, so they need no memory.
  std::size_t doublings = 0;
  for (auto d = std::max(options_.first_delay, std::chrono::milliseconds(1)); d < table.cap; d *= 2) ++doublings;
  table.keep = free + 1 + doublings;
  return table;
}

std::chrono::milliseconds LoginRateLimiter::backoff(const Table& table, std::size_t failures) const {
  if (failures <= table.free) return std::chrono::milliseconds(0);
  auto delay = std::max(options_.first_delay, std::chrono::milliseconds(1));
  for (std::size_t i = table.free + 1; i < failures && delay < table.cap; ++i) delay *= 2;
  return std::min(delay, table.cap);
}

void LoginRateLimiter::forget_expired(const Table& table, Failures& failures, Time now) {
  while (!failures.empty() && failures.front() + table.window <= now) failures.pop_front();
}

const LoginRateLimiter::Failures* LoginRateLimiter::live(Table& table, const std::string& key, Time now) {
  auto it = table.keys.find(key);
  if (it == table.keys.end()) return nullptr;
  forget_expired(table, it->second, now);
  if (it->second.empty()) {
    table.keys.erase(it);
    return nullptr;
  }
  return &it->second;
}

std::optional<std::chrono::seconds> LoginRateLimiter::retry_after(std::string_view account, std::string_view address) {
  const Time now = clock_.steady_now();
  const auto acct = bounded(account);
  const auto addr = bounded(address);
  std::lock_guard lock(mutex_);
  return wait_locked(acct, addr, now);
}

std::optional<std::chrono::seconds> LoginRateLimiter::wait_locked(const std::string& acct, const std::string& addr,
                                                                  Time now) {
  Time until = now;
  const Failures* on_account = live(accounts_, acct, now);
  if (const Failures* pair = live(pairs_, pair_key(addr, acct), now)) {
    until = std::max(until, pair->back() + backoff(pairs_, pair->size()));
    // The account's wait runs from this address's own last failure on it: an address that
    // has not failed on the account is not held up by guessers elsewhere.
    if (on_account) until = std::max(until, pair->back() + backoff(accounts_, on_account->size()));
  }
  if (const Failures* from_address = live(addresses_, addr, now)) {
    until = std::max(until, from_address->back() + backoff(addresses_, from_address->size()));
  }
  if (until <= now) return std::nullopt;
  // Round up: a client that waits exactly Retry-After seconds must not be refused again.
  auto seconds = std::chrono::ceil<std::chrono::seconds>(until - now);
  return std::max(seconds, std::chrono::seconds(1));
}

LoginRateLimiter::Attempt LoginRateLimiter::begin_attempt(std::string_view account, std::string_view address) {
  const Time now = clock_.steady_now();
  const auto acct = bounded(account);
  const auto addr = bounded(address);
  std::lock_guard lock(mutex_);
  Attempt attempt;
  attempt.retry_after = wait_locked(acct, addr, now);
  if (attempt.admitted()) {
    record_locked(acct, addr, now);
    attempt.started = now;
  }
  return attempt;
}

void LoginRateLimiter::attempt_succeeded(std::string_view account, std::string_view address, Time started) {
  const auto acct = bounded(account);
  const auto addr = bounded(address);
  std::lock_guard lock(mutex_);
  pairs_.keys.erase(pair_key(addr, acct));
  take_back(addresses_, addr, started);
  take_back(accounts_, acct, started);
}

void LoginRateLimiter::take_back(Table& table, const std::string& key, Time at) {
  auto it = table.keys.find(key);
  if (it == table.keys.end()) return;
  auto& failures = it->second;
  // Newest first: the attempt is usually among the last few.
  for (auto f = failures.rbegin(); f != failures.rend(); ++f) {
    if (*f == at) {
      failures.erase(std::next(f).base());
      break;
    }
  }
  if (failures.empty()) table.keys.erase(it);
}

void LoginRateLimiter::add(Table& table, const std::string& key, Time now) {
  auto it = table.keys.find(key);
  if (it == table.keys.end()) {
    if (table.keys.size() >= options_.max_keys) {
      // Full: drop keys whose failures all expired; if that frees nothing, the key whose newest
      // failure is oldest (the least recently active attacker or user).
      for (auto e = table.keys.begin(); e != table.keys.end();) {
        forget_expired(table, e->second, now);
        e = e->second.empty() ? table.keys.erase(e) : std::next(e);
      }
      if (!table.keys.empty() && table.keys.size() >= options_.max_keys) {
        auto stalest = std::min_element(table.keys.begin(), table.keys.end(), [](const auto& a, const auto& b) {
          return a.second.back() < b.second.back();
        });
        table.keys.erase(stalest);
      }
    }
    it = table.keys.emplace(key, Failures{}).first;
  }
  auto& failures = it->second;
  forget_expired(table, failures, now);
  failures.push_back(now);
  // Keeping the newest `keep` counts min(keep, failures in the window) exactly, which is all
  // backoff() needs.
  while (failures.size() > table.keep) failures.pop_front();
}

void LoginRateLimiter::record_failure(std::string_view account, std::string_view address) {
  const Time now = clock_.steady_now();
  const auto acct = bounded(account);
  const auto addr = bounded(address);
  std::lock_guard lock(mutex_);
  record_locked(acct, addr, now);
}

void LoginRateLimiter::record_locked(const std::string& acct, const std::string& addr, Time now) {
  add(pairs_, pair_key(addr, acct), now);
  add(addresses_, addr, now);
  add(accounts_, acct, now);
}

void LoginRateLimiter::record_success(std::string_view account, std::string_view address) {
  const auto key = pair_key(bounded(address), bounded(account));
  std::lock_guard lock(mutex_);
  pairs_.keys.erase(key);
}

std::size_t LoginRateLimiter::tracked_keys() const {
  std::lock_guard lock(mutex_);
  return pairs_.keys.size() + addresses_.keys.size() + accounts_.keys.size();
}

}  // namespace cronwheel::admin
