#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/util/clock.h"

namespace cronwheel::admin {

// Slows down password guessing: after too many failed logins for one username, or from one
// client address, within a sliding window, further attempts are refused (HTTP 429) until the
// oldest counted failure leaves the window. A refused attempt does not check the password, so
// guessing gains nothing while blocked.
//
//  - Per username: counts failures for names that do not exist too, so the limiter does not
//    tell which names exist. A successful login clears the name's count.
//  - Per address: a success does not clear it, or an attacker holding one valid account could
//    log into it between guesses at others. The per-address limit is higher than the
//    per-user one because many people may share an address (NAT, a proxy).
//
// Counts live in this node's memory: with several admin nodes behind a load balancer, each
// node limits on its own, so the effective limit is the per-node limit times the nodes. They
// are also lost on restart. Memory is bounded: at most `max_keys` names and as many addresses
// are tracked; when full, the key whose newest failure is oldest is forgotten.
//
// Time comes from the injected Clock's steady time. Thread-safe.
class LoginRateLimiter {
 public:
  struct Options {
    std::size_t max_failures_per_user = 5;
    std::size_t max_failures_per_address = 20;
    std::chrono::milliseconds window{std::chrono::minutes(15)};
    std::size_t max_keys = 10'000;
  };

  explicit LoginRateLimiter(const common::Clock& clock);
  LoginRateLimiter(const common::Clock& clock, Options options);

  // How long the caller must wait before trying again, rounded up to whole seconds (at least
  // 1); std::nullopt when an attempt may go ahead.
  std::optional<std::chrono::seconds> retry_after(std::string_view username, std::string_view address);

  void record_failure(std::string_view username, std::string_view address);
  void record_success(std::string_view username);

  // Keys tracked now (names plus addresses), for tests and metrics.
  std::size_t tracked_keys() const;

  const Options& options() const noexcept { return options_; }

 private:
  using Time = common::Clock::SteadyTime;
  // Failure times of one key, oldest first; never more than the limit for its kind.
  using Failures = std::deque<Time>;
  using Table = std::unordered_map<std::string, Failures>;

  std::optional<std::chrono::milliseconds> blocked_for(Table& table, const std::string& key, std::size_t limit,
                                                       Time now);
  void add(Table& table, const std::string& key, std::size_t limit, Time now);
  void forget_expired(Failures& failures, Time now) const;

  const common::Clock& clock_;
  const Options options_;
  mutable std::mutex mutex_;
  Table by_user_;
  Table by_address_;
};

}  // namespace cronwheel::admin
