// RecurringTask on a manual hierarchical wheel and a FakeClock: runs at their deadlines, never
// two at once, never one task behind another, a missed deadline skipped rather than replayed,
// wake() and stop().

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "common/timer/hierarchical_wheel_timer.h"
#include "common/timer/recurring_task.h"
#include "tests/support/fake_clock.h"

namespace cronwheel {
namespace {

using namespace std::chrono_literals;
using common::RecurringTask;

// Records when each run began (time since the clock's start); a test can wait for the n-th.
class Runs {
 public:
  explicit Runs(testing::FakeClock& clock) : clock_(clock) {}

  RecurringTask::Body body() {
    return [this](std::stop_token) { record(); };
  }
  void record() {
    std::lock_guard lock(mutex_);
    at_.push_back(clock_.steady_now() - common::Clock::SteadyTime{});
    changed_.notify_all();
  }
  std::chrono::nanoseconds wait_for(std::size_t n) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return at_.size() >= n; });
    return at_[n - 1];
  }
  std::vector<std::chrono::nanoseconds> at() {
    std::lock_guard lock(mutex_);
    return at_;
  }
  std::size_t count() { return at().size(); }

 private:
  testing::FakeClock& clock_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::chrono::nanoseconds> at_;
};

// A latch a body waits on until the test opens it.
class Gate {
 public:
  void open() {
    std::lock_guard lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }
  void pass() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return open_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool open_ = false;
};

class RecurringTaskTest : public ::testing::Test {
 protected:
  // Moves time, lets the timer hand over what is due, and waits until the runs it asked for are
  // over and their next deadlines are on the timer.
  void advance(std::chrono::nanoseconds d) {
    clock_.advance(d);
    timer_.process_until(clock_.steady_now());
    tasks_.wait_idle();
  }
  // The same without waiting for the lanes (a body is held at a gate).
  void advance_only(std::chrono::nanoseconds d) {
    clock_.advance(d);
    timer_.process_until(clock_.steady_now());
  }

  testing::FakeClock clock_;
  common::HierarchicalWheelTimer timer_{clock_, {}, {.manual = true}};
  common::RecurringTasks tasks_{timer_, clock_};
  Runs runs_{clock_};
};

TEST_F(RecurringTaskTest, RunsAtOnceThenAtEveryDeadline) {
  RecurringTask task(tasks_, {"refresh", 30s}, runs_.body());
  task.start();
  tasks_.wait_idle();
  EXPECT_EQ(runs_.at(), (std::vector<std::chrono::nanoseconds>{0s}));
  EXPECT_EQ(timer_.pending_timeouts(), 1u);
  advance(29s);
  EXPECT_EQ(runs_.count(), 1u) << "not before the interval";
  advance(1s);
  advance(30s);
  EXPECT_EQ(runs_.at(), (std::vector<std::chrono::nanoseconds>{0s, 30s, 60s}));
  EXPECT_EQ(timer_.pending_timeouts(), 1u) << "one deadline on the timer at a time";
}

TEST_F(RecurringTaskTest, FirstDelaySetsThePhaseOfEveryDeadline) {
  RecurringTask task(tasks_, {"lease", 3s, 1500ms}, runs_.body());
  task.start();
  tasks_.wait_idle();
  EXPECT_EQ(runs_.count(), 0u);
  advance(1500ms);
  advance(3s);
  advance(3s);
  EXPECT_EQ(runs_.at(), (std::vector<std::chrono::nanoseconds>{1500ms, 4500ms, 7500ms}));
}

TEST_F(RecurringTaskTest, ALateHandOverDoesNotMoveTheFollowingDeadlines) {
  RecurringTask task(tasks_, {"feeder", 10s, 10s}, runs_.body());
  task.start();
  tasks_.wait_idle();
  advance(13s);  // the timer got to it 3 s late
  advance(7s);
  EXPECT_EQ(runs_.at(), (std::vector<std::chrono::nanoseconds>{13s, 20s})) << "absolute deadlines: no drift";
}

TEST_F(RecurringTaskTest, AnOverrunSkipsTheMissedDeadlinesInsteadOfReplayingThem) {
  RecurringTask task(tasks_, {"refresh", 10s}, [&](std::stop_token) {
    runs_.record();
    if (runs_.count() == 1) clock_.advance(25s);  // the first run takes 25 s
  });
  task.start();
  tasks_.wait_idle();
  timer_.process_until(clock_.steady_now());  // at 25 s: the deadlines of 10 s and 20 s are gone
  tasks_.wait_idle();
  EXPECT_EQ(runs_.count(), 1u);
  advance(4s);
  EXPECT_EQ(runs_.count(), 1u);
  advance(1s);
  EXPECT_EQ(runs_.at(), (std::vector<std::chrono::nanoseconds>{0s, 30s})) << "the next deadline in phase";
}

TEST_F(RecurringTaskTest, RunsNeverOverlapAndDeadlinesReachedDuringARunAreSkipped) {
  Gate gate;
  std::atomic<int> inside{0}, most{0};
  RecurringTask task(tasks_, {"refresh", 10s}, [&](std::stop_token) {
    most = std::max(most.load(), ++inside);
    runs_.record();
    if (runs_.count() == 1) gate.pass();
    --inside;
  });
  task.start();
  runs_.wait_for(1);
  advance_only(10s);  // the lane is busy: nothing queues behind it
  advance_only(10s);
  gate.open();
  tasks_.wait_idle();
  EXPECT_EQ(runs_.count(), 1u);
  EXPECT_EQ(most.load(), 1);
  advance(10s);  // 30 s: the first deadline after the run ended
  EXPECT_EQ(runs_.at(), (std::vector<std::chrono::nanoseconds>{0s, 30s}));
}

TEST_F(RecurringTaskTest, ASlowTaskDoesNotDelayAnotherTasksRuns) {
  Gate gate;
  Runs slow_runs(clock_);
  RecurringTask registry(tasks_, {"registry refresh", 30s}, [&](std::stop_token) {
    slow_runs.record();
    gate.pass();  // a refresh stuck on the database
  });
  RecurringTask lease(tasks_, {"lease renewal", 3s, 3s}, runs_.body());
  registry.start();
  lease.start();
  slow_runs.wait_for(1);
  tasks_.wait_idle_tasks(1);
  for (int k = 1; k <= 12; ++k) {
    advance_only(3s);
    tasks_.wait_idle_tasks(1);  // the lease renewal, done and waiting for its next deadline
    EXPECT_EQ(runs_.count(), static_cast<std::size_t>(k));
    EXPECT_EQ(runs_.at().back(), k * 3s);
  }
  EXPECT_EQ(slow_runs.count(), 1u) << "its 30 s deadline passed during its run: skipped";
  gate.open();
  tasks_.wait_idle();
  for (int k = 0; k < 8; ++k) advance(3s);  // to 60 s
  EXPECT_EQ(slow_runs.at(), (std::vector<std::chrono::nanoseconds>{0s, 60s}));
  EXPECT_EQ(runs_.count(), 20u);
}

TEST_F(RecurringTaskTest, WakeRunsNowWithoutMovingTheNextDeadline) {
  RecurringTask task(tasks_, {"refresh", 30s}, runs_.body());
  task.start();
  tasks_.wait_idle();
  advance(10s);
  task.wake();
  tasks_.wait_idle();
  advance(20s);
  EXPECT_EQ(runs_.at(), (std::vector<std::chrono::nanoseconds>{0s, 10s, 30s}));
}

TEST_F(RecurringTaskTest, WakesDuringARunMakeOneMoreRunAfterIt) {
  Gate gate;
  RecurringTask task(tasks_, {"refresh", 30s}, [&](std::stop_token) {
    runs_.record();
    if (runs_.count() == 1) gate.pass();
  });
  task.start();
  runs_.wait_for(1);
  task.wake();
  task.wake();
  task.wake();
  gate.open();
  tasks_.wait_idle();
  EXPECT_EQ(runs_.count(), 2u);
  advance(30s);
  EXPECT_EQ(runs_.count(), 3u) << "the deadlines kept their phase";
}

TEST_F(RecurringTaskTest, StopWaitsForTheRunUnderWayAndIsIdempotent) {
  std::atomic<bool> finished{false};
  std::mutex mutex;
  std::condition_variable_any stopped;
  RecurringTask task(tasks_, {"lost results", 60s}, [&](std::stop_token stop) {
    runs_.record();
    std::unique_lock lock(mutex);
    stopped.wait(lock, stop, [] { return false; });  // a long pass, ended by the stop token
    finished = true;
  });
  task.start();
  runs_.wait_for(1);
  task.stop();
  EXPECT_TRUE(finished.load()) << "stop() returned before the run it interrupted ended";
  EXPECT_EQ(timer_.pending_timeouts(), 0u) << "the next deadline is cancelled";
  task.stop();
  task.wake();
  advance(120s);
  EXPECT_EQ(runs_.count(), 1u);
  EXPECT_THROW(task.start(), std::logic_error);
}

TEST_F(RecurringTaskTest, StopWhileIdleCancelsTheDeadline) {
  RecurringTask task(tasks_, {"refresh", 30s, 30s}, runs_.body());
  task.wake();  // before start(): nothing
  task.start();
  EXPECT_THROW(task.start(), std::logic_error);
  tasks_.wait_idle();
  task.stop();
  EXPECT_EQ(timer_.pending_timeouts(), 0u);
  advance(60s);
  EXPECT_EQ(runs_.count(), 0u);
}

TEST_F(RecurringTaskTest, AnExceptionFromTheBodyIsLoggedAndTheTaskCarriesOn) {
  RecurringTask task(tasks_, {"refresh", 10s}, [&](std::stop_token) {
    runs_.record();
    throw std::runtime_error("database down");
  });
  task.start();
  tasks_.wait_idle();
  advance(10s);
  EXPECT_EQ(runs_.count(), 2u);
}

TEST_F(RecurringTaskTest, AStoppedTimerEndsTheRecurrenceQuietly) {
  RecurringTask task(tasks_, {"refresh", 10s}, runs_.body());
  timer_.stop();
  task.start();  // the first run needs no deadline; the next one is refused
  tasks_.wait_idle();
  EXPECT_EQ(runs_.count(), 1u);
  task.wake();
  tasks_.wait_idle();
  EXPECT_EQ(runs_.count(), 2u) << "wake() still works";
}

TEST_F(RecurringTaskTest, RejectsBadOptions) {
  EXPECT_THROW(RecurringTask(tasks_, {"t", 0s}, runs_.body()), std::invalid_argument);
  EXPECT_THROW(RecurringTask(tasks_, {"t", 1s, -1s}, runs_.body()), std::invalid_argument);
  EXPECT_THROW(RecurringTask(tasks_, {"t", 1s}, {}), std::invalid_argument);
}

}  // namespace
}  // namespace cronwheel
