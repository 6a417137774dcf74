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

// Slows down password guessing without letting anyone lock an account: failed logins make the
// next attempt wait (HTTP 429 with Retry-After), and the wait grows with the failures, but no
// stranger can make an account unusable from its owner's own address. A refused attempt does
// not check the password, so guessing gains nothing while it waits.
//
// Failures are counted within a sliding window under three keys. Each key lets its first
// `free_failures_*` go; every further failure within the window doubles the wait before the
// next attempt, counted from the last failure, from `first_delay` up to that key's cap:
//
//  - (client address, account): the main brake on guessing one account. Cap 15 min, window
//    24 h, so a patient guesser settles at four guesses an hour instead of getting fresh free
//    failures each hour. A success clears it: the address has shown it knows the password, and
//    so the owner's own typos never add up.
//  - client address, whatever the account: password spraying (one address trying many names).
//    More free failures and a 1 h window, because many people may share an address (NAT, a
//    proxy) and their typos should not add up to a wait. Cap 15 min. A success does not clear
//    it, or an attacker holding one valid account could log into it between guesses at others.
//  - account, whatever the address: guessing one account from many addresses. Its cap is short
//    (30 s) and its wait counts from the *asking address's* own last failure on that account, so
//    an address that has not failed there is never held up by it: however many addresses guess
//    at an account, its owner logs in from their own address at once, and after a typo waits at
//    most that short cap. What it does buy: each guessing address loses its free failures on
//    the account. Window 1 h.
//
// An attacker sharing the owner's address (the same NAT) can still slow the owner down through
// the per-address key; nobody else can.
//
// The account is the caller's to name, and must be the account the attempt is really against:
// the stored username of the user the login looks up, or (no such user) the name as typed,
// normalised the way the lookup would treat it. Keying on raw text would let "bob" and a
// variant that reaches the same user be throttled apart. Keys longer than kMaxKeyBytes are cut.
//
// Counts live in this node's memory: with several admin nodes behind a load balancer, each
// node limits on its own, so the effective limit is the per-node limit times the nodes. They
// are also lost on restart. Memory is bounded: each of the three tables tracks at most
// `max_keys` keys, each key at most as many failures as reach its cap; when a table is full,
// keys whose failures all left the window go first, then the key whose newest failure is oldest.
//
// An attempt counts as a failure from the moment it starts (begin_attempt), and is taken back
// only when it proves the password (attempt_succeeded): a burst of concurrent attempts is
// limited as it arrives, not once the first password checks have finished, so it cannot pass
// the limits whole.
//
// Time comes from the injected Clock's steady time. Thread-safe.
class LoginRateLimiter {
 public:
  struct Options {
    std::size_t free_failures_per_pair = 5;
    std::chrono::milliseconds pair_max_delay{std::chrono::minutes(15)};
    std::size_t free_failures_per_address = 20;
    std::chrono::milliseconds address_max_delay{std::chrono::minutes(15)};
    std::size_t free_failures_per_account = 10;
    std::chrono::milliseconds account_max_delay{std::chrono::seconds(30)};
    // The wait after the first failure beyond the free ones; it doubles with each further one.
    std::chrono::milliseconds first_delay{std::chrono::seconds(1)};
    // Failures older than these no longer count: for pairs, and for addresses and accounts.
    std::chrono::milliseconds pair_window{std::chrono::hours(24)};
    std::chrono::milliseconds window{std::chrono::hours(1)};
    std::size_t max_keys = 10'000;  // per table: pairs, addresses, accounts
  };

  static constexpr std::size_t kMaxKeyBytes = 128;

  explicit LoginRateLimiter(common::Clock& clock);
  LoginRateLimiter(common::Clock& clock, Options options);

  // How long a login to `account` from `address` must wait before it may go ahead, rounded up
  // to whole seconds (at least 1); std::nullopt when it may go ahead now.
  std::optional<std::chrono::seconds> retry_after(std::string_view account, std::string_view address);

  using Time = common::Clock::SteadyTime;

  // What begin_attempt() decided: wait (nothing was counted), or go ahead, the attempt counted
  // as a failure at `started` until attempt_succeeded() takes it back.
  struct Attempt {
    std::optional<std::chrono::seconds> retry_after;
    Time started{};
    bool admitted() const noexcept { return !retry_after; }
  };
  // retry_after() and, when it lets the attempt go ahead, record_failure(), as one step.
  Attempt begin_attempt(std::string_view account, std::string_view address);
  // The attempt begun at `started` proved the password: it stops counting against the address
  // and the account, and the (address, account) pair is cleared (see above).
  void attempt_succeeded(std::string_view account, std::string_view address, Time started);

  void record_failure(std::string_view account, std::string_view address);
  // Clears the (address, account) pair only; see above.
  void record_success(std::string_view account, std::string_view address);

  // Keys tracked now (pairs plus addresses plus accounts), for tests and metrics.
  std::size_t tracked_keys() const;

  const Options& options() const noexcept { return options_; }

 private:
  // Failure times of one key, oldest first; never more than its table's `keep`.
  using Failures = std::deque<Time>;

  // One kind of key, with its rule: `free` failures within `window`, then waits doubling to
  // `cap`; failures beyond `keep` (where the wait reaches the cap) need not be remembered.
  struct Table {
    std::size_t free = 0;
    std::chrono::milliseconds cap{0};
    std::chrono::milliseconds window{0};
    std::size_t keep = 0;
    std::unordered_map<std::string, Failures> keys;
  };

  // The wait that `failures` failures within the window impose under `table`'s rule.
  std::chrono::milliseconds backoff(const Table& table, std::size_t failures) const;
  // The key's failures within the window, or nullptr (and the key forgotten) when none are.
  const Failures* live(Table& table, const std::string& key, Time now);
  void add(Table& table, const std::string& key, Time now);
  static void forget_expired(const Table& table, Failures& failures, Time now);
  // Drops one failure recorded at `at` under `key`, if it is still remembered.
  static void take_back(Table& table, const std::string& key, Time at);
  std::optional<std::chrono::seconds> wait_locked(const std::string& account, const std::string& address, Time now);
  void record_locked(const std::string& account, const std::string& address, Time now);
  Table make_table(std::size_t free, std::chrono::milliseconds cap, std::chrono::milliseconds window) const;

  common::Clock& clock_;
  const Options options_;
  mutable std::mutex mutex_;
  Table pairs_;
  Table addresses_;
  Table accounts_;
};

}  // namespace cronwheel::admin
