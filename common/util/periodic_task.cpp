#include "common/util/periodic_task.h"

#include <stdexcept>
#include <utility>

namespace cronwheel::common {

PeriodicTask::PeriodicTask(Clock& clock, std::chrono::milliseconds interval, Body body)
    : clock_(clock), interval_(interval), body_(std::move(body)) {
  if (interval_.count() <= 0) throw std::invalid_argument("periodic task interval must be positive");
}

PeriodicTask::~PeriodicTask() { stop(); }

void PeriodicTask::start() {
  std::lock_guard lock(mutex_);
  if (started_) throw std::logic_error("PeriodicTask::start called twice");
  started_ = true;
  thread_ = std::jthread([this](std::stop_token stop) { run(std::move(stop)); });
}

void PeriodicTask::stop() noexcept {
  std::jthread thread;
  {
    std::lock_guard lock(mutex_);
    thread = std::move(thread_);
  }
  if (thread.joinable()) {
    thread.request_stop();
    thread.join();
  }
}

void PeriodicTask::wake() noexcept {
  std::lock_guard lock(mutex_);
  wake_requested_ = true;
  sleep_.request_stop();
}

void PeriodicTask::run(std::stop_token stop) {
  auto next = clock_.steady_now();
  while (!stop.stop_requested()) {
    {
      std::lock_guard lock(mutex_);
      wake_requested_ = false;  // this run covers every wake so far
    }
    body_(stop);
    // The first deadline still ahead, in the phase of the first run: a woken run leaves it
    // where it was, an overrun skips the deadlines it missed.
    const auto now = clock_.steady_now();
    if (next <= now) next += ((now - next) / interval_ + 1) * interval_;

    std::stop_source sleep;
    {
      std::lock_guard lock(mutex_);
      if (wake_requested_) continue;  // woken during the run: run again now
      sleep_ = sleep;
    }
    std::stop_callback forward(stop, [&sleep] { sleep.request_stop(); });
    clock_.sleep_until(next, sleep.get_token());
  }
}

}  // namespace cronwheel::common
