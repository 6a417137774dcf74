// RecurringTask on a real hierarchical wheel and the system clock: the timer's worker hands
// deadlines to the lanes while a slow run holds another lane.

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "common/timer/hierarchical_wheel_timer.h"
#include "common/timer/recurring_task.h"

namespace cronwheel {
namespace {

using namespace std::chrono_literals;

TEST(RecurringTaskOnTheSystemClock, RunsEveryIntervalWhileAnotherTaskIsStuck) {
  auto& clock = common::SystemClock::instance();
  common::HierarchicalWheelTimer timer(clock);
  common::RecurringTasks tasks(timer, clock);

  std::mutex mutex;
  std::condition_variable changed;
  int quick_runs = 0;
  common::RecurringTask stuck(tasks, {"stuck", 20ms}, [](std::stop_token stop) {
    std::mutex m;
    std::condition_variable_any cv;
    std::unique_lock lock(m);
    cv.wait(lock, stop, [] { return false; });  // until stop()
  });
  common::RecurringTask quick(tasks, {"quick", 20ms, 20ms}, [&](std::stop_token) {
    std::lock_guard lock(mutex);
    ++quick_runs;
    changed.notify_all();
  });
  const auto started = std::chrono::steady_clock::now();
  stuck.start();
  quick.start();
  {
    std::unique_lock lock(mutex);
    ASSERT_TRUE(changed.wait_for(lock, 10s, [&] { return quick_runs >= 5; }));
  }
  EXPECT_GE(std::chrono::steady_clock::now() - started, 100ms) << "never early";
  stuck.stop();
  quick.stop();
  timer.stop();
}

}  // namespace
}  // namespace cronwheel
