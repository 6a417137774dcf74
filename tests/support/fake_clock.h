#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <list>
#include <stop_token>

#include "common/util/clock.h"

namespace cronwheel::testing {

// A clock that only moves when a test says so. Threads blocked in sleep_until() wake when
// advance() passes their deadline (or their stop token fires), so code with worker threads
// can be driven deterministically: advance, then wait for the effect.
//
// wait_for_sleepers(n) lets a test wait until n threads are parked in sleep_until(), i.e.
// until the code under test has finished reacting to the last advance.
class FakeClock final : public common::Clock {
 public:
  explicit FakeClock(std::int64_t start_ms = 1'700'000'000'000) : wall_ms_(start_ms) {}

  std::int64_t now_ms() const override {
    std::lock_guard lock(mutex_);
    return wall_ms_ + std::chrono::duration_cast<std::chrono::milliseconds>(offset_).count();
  }

  SteadyTime steady_now() const override {
    std::lock_guard lock(mutex_);
    return SteadyTime{} + offset_;
  }

  bool sleep_until(SteadyTime deadline, std::stop_token stop) override {
    std::unique_lock lock(mutex_);
    auto it = sleepers_.insert(sleepers_.end(), Sleeper{deadline, stop});
    changed_.notify_all();
    bool reached = changed_.wait(lock, stop, [&] { return SteadyTime{} + offset_ >= deadline; });
    sleepers_.erase(it);
    changed_.notify_all();
    return reached;
  }

  // Moves both wall and steady time forward by `d` and wakes every sleeper whose deadline
  // has passed.
  void advance(std::chrono::nanoseconds d) {
    std::lock_guard lock(mutex_);
    offset_ += d;
    changed_.notify_all();
  }

  // Steps wall time only (an NTP correction); steady time is unaffected.
  void set_wall_ms(std::int64_t ms) {
    std::lock_guard lock(mutex_);
    wall_ms_ = ms - std::chrono::duration_cast<std::chrono::milliseconds>(offset_).count();
  }

  // Blocks until at least `n` threads are parked in sleep_until() with a deadline still in
  // the future: after an advance(), this is how a test waits for worker threads to finish
  // reacting to it and go back to sleep.
  void wait_for_sleepers(std::size_t n) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] {
      auto now = SteadyTime{} + offset_;
      std::size_t parked = 0;
      // A sleeper whose deadline passed or whose stop was requested is about to return.
      for (const auto& s : sleepers_) parked += s.deadline > now && !s.stop.stop_requested() ? 1 : 0;
      return parked >= n;
    });
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable_any changed_;
  std::int64_t wall_ms_;
  std::chrono::nanoseconds offset_{0};
  struct Sleeper {
    SteadyTime deadline;
    std::stop_token stop;
  };
  std::list<Sleeper> sleepers_;
};

}  // namespace cronwheel::testing
