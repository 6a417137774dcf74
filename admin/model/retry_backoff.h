#pragma once

// How long a failed run waits for its retry (docs/scheduling.md, "Retries"). XXL-JOB retries at
// once; cronwheel waits the job's retryInterval, and a job may ask for exponential back-off with
// a ceiling and jitter instead, as Quartz users do by hand and Temporal's retry policies do.

#include <cstdint>
#include <optional>
#include <string_view>

namespace cronwheel::admin {

enum class RetryBackoff {
  kFixed,        // "FIXED": every retry waits retryInterval
  kExponential,  // "EXPONENTIAL": retry k waits retryInterval × multiplier^(k-1), up to the ceiling
};

std::string_view to_string(RetryBackoff backoff) noexcept;
std::optional<RetryBackoff> parse_retry_backoff(std::string_view name) noexcept;

// A job's retry policy beyond its retry count (Job::executor_fail_retry_count) and interval
// (Job::retry_interval, seconds: the fixed wait, or the first one).
struct RetryPolicy {
  RetryBackoff backoff = RetryBackoff::kFixed;
  double multiplier = 2.0;    // EXPONENTIAL: 1.0-10.0
  int max_interval = 0;       // seconds; 0: no ceiling but kMaxRetryDelaySeconds
  int jitter_percent = 0;     // 0-100: each wait shortened by up to this share, spread over runs

  friend bool operator==(const RetryPolicy&, const RetryPolicy&) = default;
};

inline constexpr double kMinRetryMultiplier = 1.0;
inline constexpr double kMaxRetryMultiplier = 10.0;
// No retry waits longer than 30 days, whatever the policy says.
inline constexpr std::int64_t kMaxRetryDelaySeconds = 30LL * 24 * 3600;

// The wait before retry number `attempt` (1 for the first retry of a run that was not itself a
// retry), in ms, for a job whose interval is `interval_seconds`:
//   FIXED         interval
//   EXPONENTIAL   interval × multiplier^(attempt-1), at most max_interval when it is set
// then at most kMaxRetryDelaySeconds, then shortened by jitter: by jitter_percent × u of itself,
// u in [0, 1) drawn from `jitter_seed` (the failed run's id, so the waits of many runs failing
// together spread out, and the same run always gets the same wait). Attempts below 1 count as 1.
// Pure.
std::int64_t retry_delay_ms(const RetryPolicy& policy, int interval_seconds, int attempt, std::uint64_t jitter_seed);

}  // namespace cronwheel::admin
