#pragma once

#include <chrono>
#include <cstdint>
#include <stop_token>

namespace cronwheel::common {

// The source of time for everything that schedules: the admin's schedule and ring threads,
// the timers and the monitors. Production code uses SystemClock; tests use FakeClock
// (tests/support/fake_clock.h) and move time by hand, so no unit test sleeps.
//
// Two kinds of time:
//  - wall time, epoch milliseconds, for fire times that are stored and compared across nodes;
//  - steady time, for deadlines and waits inside one process (immune to clock steps).
//
// Implementations are thread-safe.
class Clock {
 public:
  using SteadyTime = std::chrono::steady_clock::time_point;

  virtual ~Clock() = default;

  // Wall-clock time in milliseconds since the Unix epoch.
  virtual std::int64_t now_ms() const = 0;

  // Monotonic time.
  virtual SteadyTime steady_now() const = 0;

  // Blocks until steady_now() >= deadline or until `stop` is requested, whichever is first.
  // Returns true when the deadline was reached, false when woken by the stop request.
  // Deadlines are absolute so a loop of waits does not drift.
  virtual bool sleep_until(SteadyTime deadline, std::stop_token stop) = 0;
};

// The operating system's clocks.
class SystemClock final : public Clock {
 public:
  std::int64_t now_ms() const override;
  SteadyTime steady_now() const override;
  bool sleep_until(SteadyTime deadline, std::stop_token stop) override;

  // One shared instance; SystemClock has no state.
  static SystemClock& instance();
};

}  // namespace cronwheel::common
