#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <stop_token>
#include <thread>
#include <unordered_map>
#include <utility>

#include "common/util/clock.h"

namespace cronwheel::executor {

// Runs short tasks at deadlines on one thread of its own: the executor's executorTimeout
// deadlines, the report deadline of a stopped run whose handler does not return, and the
// clean-up of job threads that ended.
//
// Time comes from the injected Clock (FakeClock in tests). Tasks run one at a time, in deadline
// order, outside the watchdog's lock, so a task may schedule or cancel other tasks; they must be
// short and should not throw (an exception is logged and swallowed).
//
// Thread-safe. After stop() nothing runs any more and schedule() accepts nothing.
class Watchdog {
 public:
  using TaskId = std::uint64_t;  // never 0
  using Task = std::function<void()>;

  // `clock` must outlive the watchdog.
  explicit Watchdog(common::Clock& clock);
  ~Watchdog();  // stop()

  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Runs `task` once steady time reaches `deadline` (late is possible, early never). Returns 0,
  // dropping the task, after stop().
  TaskId schedule_at(common::Clock::SteadyTime deadline, Task task);
  TaskId schedule_after(std::chrono::nanoseconds delay, Task task);

  // True when this call removed the task before it started; false when it already ran, is
  // running, was cancelled before, or id is 0.
  bool cancel(TaskId id) noexcept;

  // Ends the thread (waiting for a task that is running, unless called from a task) and destroys
  // the pending tasks without running them. Idempotent.
  void stop() noexcept;

  std::size_t pending() const;
  common::Clock& clock() const noexcept { return clock_; }

 private:
  void loop() noexcept;

  common::Clock& clock_;
  mutable std::mutex mutex_;
  std::map<std::pair<common::Clock::SteadyTime, TaskId>, Task> tasks_;
  std::unordered_map<TaskId, common::Clock::SteadyTime> deadlines_;
  TaskId next_id_ = 1;
  bool stopping_ = false;
  // Interrupts the thread's current sleep: requested when an earlier deadline arrives or on stop.
  std::stop_source wake_;
  std::jthread thread_;
};

}  // namespace cronwheel::executor
