#include "admin/model/retry_backoff.h"

#include <algorithm>
#include <cmath>

namespace cronwheel::admin {

namespace {

// splitmix64's finaliser: a seed's bits spread over the whole word, so consecutive run ids give
// unrelated jitters.
std::uint64_t mix(std::uint64_t x) noexcept {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

std::string_view to_string(RetryBackoff backoff) noexcept {
  return backoff == RetryBackoff::kExponential ? "EXPONENTIAL" : "FIXED";
}

std::optional<RetryBackoff> parse_retry_backoff(std::string_view name) noexcept {
  if (name == "FIXED") return RetryBackoff::kFixed;
  if (name == "EXPONENTIAL") return RetryBackoff::kExponential;
  return std::nullopt;
}

std::int64_t retry_delay_ms(const RetryPolicy& policy, int interval_seconds, int attempt, std::uint64_t jitter_seed) {
  const double ceiling = static_cast<double>(kMaxRetryDelaySeconds);
  double seconds = std::clamp(static_cast<double>(interval_seconds), 0.0, ceiling);
  if (policy.backoff == RetryBackoff::kExponential && attempt > 1) {
    const double multiplier = std::clamp(policy.multiplier, kMinRetryMultiplier, kMaxRetryMultiplier);
    // pow overflows to infinity for absurd attempts; the clamp below holds either way.
    seconds *= std::pow(multiplier, static_cast<double>(attempt - 1));
    if (policy.max_interval > 0) seconds = std::min(seconds, static_cast<double>(policy.max_interval));
  }
  seconds = std::min(seconds, ceiling);
  double ms = seconds * 1000.0;
  const int jitter = std::clamp(policy.jitter_percent, 0, 100);
  if (jitter > 0) {
    const double u = static_cast<double>(mix(jitter_seed) >> 11) / 9007199254740992.0;  // [0, 1), 53 bits
    ms -= ms * (jitter / 100.0) * u;
  }
  return static_cast<std::int64_t>(std::llround(ms));
}

}  // namespace cronwheel::admin
