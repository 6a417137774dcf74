#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "common/util/periodic_task.h"
#include "tests/support/fake_clock.h"

namespace cronwheel {
namespace {

using namespace std::chrono_literals;

// Records the steady time of every run, so a test can wait for the n-th.
class Runs {
 public:
  explicit Runs(testing::FakeClock& clock) : clock_(clock) {}

  common::PeriodicTask::Body body() {
    return [this](std::stop_token) {
      std::lock_guard lock(mutex_);
      at_.push_back(clock_.steady_now() - common::Clock::SteadyTime{});
      changed_.notify_all();
    };
  }

  // Waits for the n-th run; returns when it ran, in time since the clock's start.
  std::chrono::nanoseconds wait_for(std::size_t n) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return at_.size() >= n; });
    return at_[n - 1];
  }

  std::size_t count() {
    std::lock_guard lock(mutex_);
    return at_.size();
  }

 private:
  testing::FakeClock& clock_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::chrono::nanoseconds> at_;
};

TEST(PeriodicTask, RunsAtOnceThenEveryInterval) {
  testing::FakeClock clock;
  Runs runs(clock);
  common::PeriodicTask task(clock, 30s, runs.body());
  task.start();
  EXPECT_EQ(runs.wait_for(1), 0s);
  clock.wait_for_sleepers(1);
  clock.advance(29s);
  clock.wait_for_sleepers(1);
  EXPECT_EQ(runs.count(), 1u);
  clock.advance(1s);
  EXPECT_EQ(runs.wait_for(2), 30s);
  clock.wait_for_sleepers(1);
  clock.advance(30s);
  EXPECT_EQ(runs.wait_for(3), 60s);
}

TEST(PeriodicTask, WakeRunsNowWithoutMovingTheNextDeadline) {
  testing::FakeClock clock;
  Runs runs(clock);
  common::PeriodicTask task(clock, 30s, runs.body());
  task.start();
  runs.wait_for(1);
  clock.wait_for_sleepers(1);
  clock.advance(10s);
  clock.wait_for_sleepers(1);
  task.wake();
  EXPECT_EQ(runs.wait_for(2), 10s);
  clock.wait_for_sleepers(1);
  clock.advance(20s);  // the deadline of the first run's phase, not 10 s + 30 s
  EXPECT_EQ(runs.wait_for(3), 30s);
}

TEST(PeriodicTask, WakesDuringARunMakeOneMoreRun) {
  testing::FakeClock clock;
  std::atomic<int> runs{0};
  std::mutex mutex;
  std::condition_variable cv;
  bool in_first = false, release_first = false;
  common::PeriodicTask task(clock, 30s, [&](std::stop_token) {
    std::unique_lock lock(mutex);
    if (++runs == 1) {
      in_first = true;
      cv.notify_all();
      cv.wait(lock, [&] { return release_first; });
    }
    cv.notify_all();
  });
  task.start();
  {
    std::unique_lock lock(mutex);
    cv.wait(lock, [&] { return in_first; });
  }
  task.wake();
  task.wake();
  {
    std::lock_guard lock(mutex);
    release_first = true;
  }
  cv.notify_all();
  {
    std::unique_lock lock(mutex);
    cv.wait(lock, [&] { return runs >= 2; });
  }
  clock.wait_for_sleepers(1);  // parked again after exactly one more run
  EXPECT_EQ(runs, 2);
}

TEST(PeriodicTask, AnOverrunSkipsTheMissedRuns) {
  testing::FakeClock clock;
  std::atomic<int> runs{0};
  common::PeriodicTask task(clock, 10s, [&](std::stop_token) {
    if (++runs == 1) clock.advance(35s);  // the first run takes three and a half intervals
  });
  task.start();
  clock.wait_for_sleepers(1);
  EXPECT_EQ(runs, 1);  // not three runs back to back
  clock.advance(5s);   // 40 s: the next deadline in phase
  clock.wait_for_sleepers(1);
  EXPECT_EQ(runs, 2);
}

TEST(PeriodicTask, StopEndsTheWaitAtOnceAndIsIdempotent) {
  testing::FakeClock clock;
  Runs runs(clock);
  common::PeriodicTask task(clock, 1h, runs.body());
  task.start();
  clock.wait_for_sleepers(1);
  task.stop();  // returns although the fake clock never moves
  task.stop();
  task.wake();  // harmless once stopped
  EXPECT_EQ(runs.count(), 1u);
}

TEST(PeriodicTask, RefusesANonPositiveIntervalAndASecondStart) {
  testing::FakeClock clock;
  EXPECT_THROW(common::PeriodicTask(clock, 0s, [](std::stop_token) {}), std::invalid_argument);
  common::PeriodicTask task(clock, 1s, [](std::stop_token) {});
  task.start();
  EXPECT_THROW(task.start(), std::logic_error);
}

}  // namespace
}  // namespace cronwheel
