#pragma once

// Internals of the wheels. Not part of the public API.

#include <chrono>
#include <cstdint>
#include <limits>
#include <stdexcept>

#include "common/util/clock.h"

namespace cronwheel::common::detail {

// Time cut into ticks of one length from an origin (when the wheel was built): boundary k is
// at origin + k * tick. Every conversion saturates instead of overflowing, so a deadline of
// Clock::SteadyTime::max() (a huge delay) is simply a boundary very far away.
class TickScale {
 public:
  // Throws std::invalid_argument for a non-positive tick.
  TickScale(Clock::SteadyTime origin, std::chrono::nanoseconds tick)
      : origin_ns_(std::chrono::duration_cast<std::chrono::nanoseconds>(origin.time_since_epoch())
                       .count()),
        tick_ns_(checked(tick)) {}

  std::chrono::nanoseconds tick() const noexcept { return std::chrono::nanoseconds(tick_ns_); }

  // The first boundary at or after `t` (0 at or before the origin): the tick a timeout due at
  // `t` fires at, so that it never fires early.
  std::int64_t ceil(Clock::SteadyTime t) const noexcept {
    const std::int64_t d = since_origin(t);
    return d <= 0 ? 0 : (d - 1) / tick_ns_ + 1;
  }

  // The last boundary at or before `t` (0 before the origin): how far time has got.
  std::int64_t floor(Clock::SteadyTime t) const noexcept {
    const std::int64_t d = since_origin(t);
    return d <= 0 ? 0 : d / tick_ns_;
  }

  // The time of boundary `k`; Clock::SteadyTime::max() beyond what it can represent.
  Clock::SteadyTime time_of(std::int64_t k) const noexcept {
    std::int64_t offset = 0;
    std::int64_t at = 0;
    if (__builtin_mul_overflow(k, tick_ns_, &offset) ||
        __builtin_add_overflow(origin_ns_, offset, &at)) {
      return Clock::SteadyTime::max();
    }
    return Clock::SteadyTime{} +
           std::chrono::duration_cast<Clock::SteadyTime::duration>(std::chrono::nanoseconds(at));
  }

 private:
  static std::int64_t checked(std::chrono::nanoseconds tick) {
    if (tick <= std::chrono::nanoseconds::zero()) {
      throw std::invalid_argument("wheel tick must be positive");
    }
    return tick.count();
  }

  std::int64_t since_origin(Clock::SteadyTime t) const noexcept {
    const std::int64_t at =
        std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
    std::int64_t d = 0;
    if (__builtin_sub_overflow(at, origin_ns_, &d)) {
      return at > origin_ns_ ? std::numeric_limits<std::int64_t>::max() : 0;
    }
    return d;
  }

  std::int64_t origin_ns_;
  std::int64_t tick_ns_;
};

}  // namespace cronwheel::common::detail
