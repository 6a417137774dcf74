#include "executor/src/clock_offset.h"

#include <charconv>

namespace cronwheel::executor {
namespace {

constexpr std::size_t kMaxDigits = 15;

std::optional<std::int64_t> parse_ms(std::string_view text) noexcept {
  if (text.empty() || text.size() > kMaxDigits) return std::nullopt;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;  // from_chars would take a leading '-'
  }
  std::int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

std::optional<AdminTimes> parse_clock_header(std::string_view value) noexcept {
  const auto comma = value.find(',');
  if (comma == std::string_view::npos) return std::nullopt;
  auto received = parse_ms(value.substr(0, comma));
  auto sent = parse_ms(value.substr(comma + 1));
  if (!received || !sent) return std::nullopt;
  return AdminTimes{*received, *sent};
}

ClockSample ClockOffsetEstimator::measure(std::int64_t t0, std::int64_t t1, std::int64_t t2,
                                          std::int64_t t3) noexcept {
  return ClockSample{((t1 - t0) + (t2 - t3)) / 2, (t3 - t0) - (t2 - t1)};
}

bool ClockOffsetEstimator::add(std::int64_t t0, std::int64_t t1, std::int64_t t2, std::int64_t t3) noexcept {
  const ClockSample sample = measure(t0, t1, t2, t3);
  if (sample.delay_ms < 0 || sample.delay_ms > kMaxDelayMs) return false;
  samples_[next_] = sample;
  next_ = (next_ + 1) % kSamples;
  if (count_ < kSamples) ++count_;
  return true;
}

std::optional<ClockSample> ClockOffsetEstimator::estimate() const noexcept {
  std::optional<ClockSample> best;
  // From the oldest kept to the newest, so `<=` leaves the latest of equal delays.
  for (std::size_t i = 0; i < count_; ++i) {
    const ClockSample& sample = samples_[(next_ + kSamples - count_ + i) % kSamples];
    if (!best || sample.delay_ms <= best->delay_ms) best = sample;
  }
  return best;
}

}  // namespace cronwheel::executor
