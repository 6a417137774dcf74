#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace cronwheel::admin {

// How many calls the REST API makes to one executor group's executors at once (a run's log, a
// kill): at most `per_group`. The executor-call lane (api_router.h) bounds such calls in all;
// this bounds each group's share of it, so that one group whose executors answer slowly, and
// its users asking again and again, hold at most `per_group` lane threads while every other
// group's calls go through. Beyond it, acquire() refuses at once (503 with Retry-After) rather
// than wait: the caller's request would only hold a thread for the same slow executor.
//
// Thread-safe. Memory: one counter per group with a call in flight.
class ExecutorCallLimiter {
 public:
  static constexpr std::size_t kDefaultPerGroup = 4;
  static constexpr int kRetryAfterSeconds = 5;

  explicit ExecutorCallLimiter(std::size_t per_group = kDefaultPerGroup);

  // A place taken for one call; given back when destroyed.
  class Permit {
   public:
    Permit(Permit&& other) noexcept;
    Permit& operator=(Permit&&) = delete;
    Permit(const Permit&) = delete;
    ~Permit();

   private:
    friend class ExecutorCallLimiter;
    Permit(ExecutorCallLimiter* limiter, std::int64_t group) : limiter_(limiter), group_(group) {}
    ExecutorCallLimiter* limiter_;
    std::int64_t group_;
  };

  // A place for a call to `group`'s executors; throws HttpError 503 ("busy", Retry-After
  // kRetryAfterSeconds) naming the group when it has per_group calls in flight already.
  Permit acquire(std::int64_t group);

  // Calls in flight to `group`'s executors now.
  std::size_t in_flight(std::int64_t group) const;

 private:
  void release(std::int64_t group) noexcept;

  const std::size_t per_group_;
  mutable std::mutex mutex_;
  std::unordered_map<std::int64_t, std::size_t> in_flight_;
};

}  // namespace cronwheel::admin
