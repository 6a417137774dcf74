#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace cronwheel::executor {

// What one exchange with the admin says of the two clocks, NTP's way (RFC 5905, "On-wire
// protocol"), all times epoch ms: t0 the executor's clock just before the request was sent, T1
// and T2 the admin's when it received the request and when it answered (its X-Cronwheel-Clock
// header), t3 the executor's clock once the answer was in.
//
//   offset = ((T1 - t0) + (T2 - t3)) / 2   the admin's clock minus the executor's
//   delay  = (t3 - t0) - (T2 - T1)         the round trip on the network, without the admin's time
//
// The offset is exact when the request and the answer took equally long; it is off by at most
// delay / 2 otherwise, which is why the sample of the smallest delay is the best one.
struct ClockSample {
  std::int64_t offset_ms = 0;
  std::int64_t delay_ms = 0;

  friend bool operator==(const ClockSample&, const ClockSample&) = default;
};

// The admin's two times from its X-Cronwheel-Clock header, "<received>,<sent>": two decimal
// numbers of at most 15 digits (epoch ms until the year 33658, so the sums below cannot
// overflow), nothing else. nullopt for anything else (an admin that sends none: XXL-JOB's).
struct AdminTimes {
  std::int64_t received_ms = 0;
  std::int64_t sent_ms = 0;
};
std::optional<AdminTimes> parse_clock_header(std::string_view value) noexcept;

// NTP's clock filter over the last kSamples exchanges with one admin: the estimate is the sample
// of the smallest delay among them, so one exchange slowed by a queue on the way does not move
// it, and a clock step shows within kSamples exchanges.
//
// An exchange whose delay is negative (a clock stepped during it, or an admin that says it took
// longer than the whole round trip) or above kMaxDelayMs (an offset known no better than ±5 s
// says nothing) is not a sample: add() refuses it and the estimate stays as it was.
//
// A value type, not thread-safe: its owner serializes its calls (RegistryClient's lane).
class ClockOffsetEstimator {
 public:
  static constexpr std::size_t kSamples = 8;
  static constexpr std::int64_t kMaxDelayMs = 10'000;

  // The sample of one exchange (the formulas above), whatever its delay. t0..t3 must be at most
  // 15 digits each (parse_clock_header's bound and any clock's reading).
  static ClockSample measure(std::int64_t t0, std::int64_t t1, std::int64_t t2, std::int64_t t3) noexcept;

  // Keeps the exchange's sample, dropping the oldest beyond kSamples; false when it is no sample
  // (see above) and nothing changed.
  bool add(std::int64_t t0, std::int64_t t1, std::int64_t t2, std::int64_t t3) noexcept;

  // The kept sample of the smallest delay (the latest of equal ones); nullopt before the first.
  std::optional<ClockSample> estimate() const noexcept;

  // Forgets every sample (the answering admin changed: its clock is another one).
  void clear() noexcept { count_ = 0; }

 private:
  std::array<ClockSample, kSamples> samples_{};  // a ring; the newest at (next_ + kSamples - 1)
  std::size_t next_ = 0;
  std::size_t count_ = 0;
};

}  // namespace cronwheel::executor
