#pragma once

#include <chrono>
#include <functional>
#include <mutex>
#include <stop_token>
#include <thread>

#include "common/util/clock.h"

namespace cronwheel::common {

// A thread that runs `body` at once, then every `interval` on the injected Clock, until
// stopped: the executor's registration heartbeat (executor/src/registry_client.h), one
// blocking HTTP call every 30 s in a process whose only timer is the dispatcher's wheel of
// short, inline tasks. Periodic work of a process that shares one timer among several such
// loops belongs on common::RecurringTask (common/timer/recurring_task.h) instead, as the
// admin's lease renewal, feeder and monitors are.
//
// Deadlines are absolute, so runs do not drift; after a run that overran its interval the
// missed runs are skipped rather than made back to back. wake() asks for a run now (something
// changed that the next run would pick up late), without moving the following deadlines.
//
// `body` gets the thread's stop token, to end a long run early, and must not throw (it
// reports its own failures: it knows what they mean). start() and stop() may be called from
// any thread; start() twice throws std::logic_error; stop() wakes the thread at once, waits
// for a run under way to finish and is idempotent.
class PeriodicTask {
 public:
  using Body = std::function<void(std::stop_token)>;

  // Throws std::invalid_argument for a non-positive interval.
  PeriodicTask(Clock& clock, std::chrono::milliseconds interval, Body body);
  ~PeriodicTask();  // stop()

  PeriodicTask(const PeriodicTask&) = delete;
  PeriodicTask& operator=(const PeriodicTask&) = delete;

  void start();
  void stop() noexcept;

  // Makes the thread run the body as soon as the run under way (if any) is over. Several
  // wakes before that make one run. Does nothing before start() or after stop().
  void wake() noexcept;

  std::chrono::milliseconds interval() const noexcept { return interval_; }

 private:
  void run(std::stop_token stop);

  Clock& clock_;
  const std::chrono::milliseconds interval_;
  const Body body_;

  std::mutex mutex_;  // guards everything below
  bool started_ = false;
  bool wake_requested_ = false;
  std::stop_source sleep_;  // the wait in progress; wake() ends it
  std::jthread thread_;
};

}  // namespace cronwheel::common
