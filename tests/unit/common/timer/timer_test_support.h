#pragma once

// Helpers for the timer tests: a look at what a wheel holds, a record of which tasks ran when,
// a fixture for a manual timer, a small thread pool to use as an executor, and the wheels as
// timer types for the shared suites (timer_contract_tests.h, timer_system_clock_tests.h).

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/timer/hashed_wheel_timer.h"
#include "common/timer/hierarchical_wheel_timer.h"
#include "common/timer/timer.h"
#include "common/util/clock.h"
#include "tests/support/fake_clock.h"

namespace cronwheel::common::detail {

// Lets the tests look at what a wheel holds.
struct WheelInspector {
  static HashedWheelTimer::Footprint footprint(const HashedWheelTimer& timer) {
    return timer.footprint();
  }
  static HierarchicalWheelTimer::Footprint footprint(const HierarchicalWheelTimer& timer) {
    return timer.footprint();
  }
};

}  // namespace cronwheel::common::detail

namespace cronwheel::timer_test {

using namespace std::chrono_literals;

// Which tasks ran, in order, and what the clock said when each ran. Thread-safe.
class FireLog {
 public:
  struct Event {
    int id;
    common::Clock::SteadyTime at;
  };

  explicit FireLog(const common::Clock& clock) : clock_(clock) {}

  common::TimerTask task(int id) {
    return [this, id] { record(id); };
  }

  void record(int id) {
    const auto at = clock_.steady_now();
    std::lock_guard lock(mutex_);
    events_.push_back({id, at});
    changed_.notify_all();
  }

  // Waits until at least `n` tasks have run. The limit is only a safety net against a hung
  // test: normally this returns as soon as the worker (or the pool) got there.
  bool wait_for(std::size_t n, std::chrono::seconds limit = 20s) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, limit, [&] { return events_.size() >= n; });
  }

  std::vector<int> ids() const {
    std::lock_guard lock(mutex_);
    std::vector<int> ids;
    for (const auto& e : events_) ids.push_back(e.id);
    return ids;
  }

  std::vector<Event> events() const {
    std::lock_guard lock(mutex_);
    return events_;
  }

  std::size_t size() const {
    std::lock_guard lock(mutex_);
    return events_.size();
  }

 private:
  const common::Clock& clock_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Event> events_;
};

// A fixture for tests of one manual timer on a FakeClock: move time, then process it.
class ManualTimerTest : public ::testing::Test {
 protected:
  std::size_t process(common::Timer& timer) { return timer.process_until(clock_.steady_now()); }
  std::size_t step(common::Timer& timer, std::chrono::nanoseconds d) {
    clock_.advance(d);
    return process(timer);
  }

  testing::FakeClock clock_;
  FireLog log_{clock_};
};

// A fixed pool of threads draining a FIFO queue; the destructor runs what is queued, then
// joins.
class ThreadPool {
 public:
  explicit ThreadPool(std::size_t threads) {
    for (std::size_t i = 0; i < threads; ++i) {
      threads_.emplace_back([this] { work(); });
    }
  }
  ~ThreadPool() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    ready_.notify_all();
    for (auto& t : threads_) t.join();
  }

  void submit(std::function<void()> job) {
    {
      std::lock_guard lock(mutex_);
      jobs_.push_back(std::move(job));
    }
    ready_.notify_one();
  }

  common::TimerExecutor executor() {
    return [this](std::function<void()> job) { submit(std::move(job)); };
  }

 private:
  void work() {
    while (true) {
      std::function<void()> job;
      {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [&] { return done_ || !jobs_.empty(); });
        if (jobs_.empty()) return;
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      job();
    }
  }

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> jobs_;
  bool done_ = false;
  std::vector<std::thread> threads_;
};

// A timer type for the shared suites:
//   struct T {
//     static constexpr const char* kName;  // in the tests' names
//     // How late a task may run after its deadline when time moves in steps of `step`.
//     static constexpr std::chrono::nanoseconds max_lateness(std::chrono::nanoseconds step);
//     static std::unique_ptr<common::Timer> make(common::Clock&, common::TimerOptions);
//     // With a worker that sleeps for an hour or more when nothing is due within a day.
//     static std::unique_ptr<common::Timer> make_sleepy(common::Clock&);
//   };
struct WheelTimerType {
  static constexpr const char* kName = "Wheel";
  // 16 buckets of 100 ms: one turn is 1.6 s, so delays beyond it exercise remaining_rounds.
  static constexpr std::chrono::nanoseconds kTick = 100ms;
  static constexpr std::chrono::nanoseconds max_lateness(std::chrono::nanoseconds step) {
    return kTick + step;
  }
  static std::unique_ptr<common::Timer> make(common::Clock& clock,
                                             common::TimerOptions options) {
    return std::make_unique<common::HashedWheelTimer>(
        clock, common::WheelOptions{.tick = kTick, .wheel_size = 16}, std::move(options));
  }
  // The hashed wheel's worker wakes every tick.
  static std::unique_ptr<common::Timer> make_sleepy(common::Clock& clock) {
    return std::make_unique<common::HashedWheelTimer>(clock, common::WheelOptions{.tick = 1h});
  }
};

struct HierarchicalWheelTimerType {
  static constexpr const char* kName = "Hierarchical";
  // Wheels of 8 buckets over 100 ms ticks: 0.8 s, 6.4 s, 51.2 s. The shared tests' delays (up
  // to ~3 s) sit in the first two wheels and move down once; their hours-long ones go higher.
  static constexpr std::chrono::nanoseconds kTick = 100ms;
  static constexpr std::chrono::nanoseconds max_lateness(std::chrono::nanoseconds step) {
    return kTick + step;
  }
  static std::unique_ptr<common::Timer> make(common::Clock& clock,
                                             common::TimerOptions options) {
    return std::make_unique<common::HierarchicalWheelTimer>(
        clock, common::HierarchicalWheelOptions{.tick = kTick, .wheel_size = 8},
        std::move(options));
  }
  // Its defaults: the worker sleeps until the bucket of the earliest timeout.
  static std::unique_ptr<common::Timer> make_sleepy(common::Clock& clock) {
    return std::make_unique<common::HierarchicalWheelTimer>(clock);
  }
};

// Names the instances of a shared suite after their timer type.
struct TimerTypeNames {
  template <typename T>
  static std::string GetName(int) {
    return T::kName;
  }
};

}  // namespace cronwheel::timer_test
