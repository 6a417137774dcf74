#pragma once

#include <memory>
#include <string>

#include "common/util/clock.h"
#include "cronwheel/executor.h"

namespace cronwheel::executor {

// The executor behind the public Executor (cronwheel/executor.h), on an injected clock. Executor
// is an ExecutorCore on common::SystemClock; tests build one on a FakeClock and move its time by
// hand. Everything else (options, guarantees, threading, lifecycle) is Executor's, as documented
// there.
//
// On the clock: executorTimeout and the report deadline of a stopped run, the idle timeout of job
// threads, how long stop() waits for handlers (shutdown_timeout), the registration heartbeat,
// the callbacks' retries, the run log retention, and every time stamp: run log lines, the check
// of a run's logDateTime, executorStartTime, the names of spool and journal files.
//
// On the OS's clocks, because the OS is what they time: HTTP timeouts (the admin's calls, the
// flush of results at stop(), which cuts them to what is left of shutdown_timeout), a script's
// TERM-to-KILL grace, and stop()'s wait for the process groups of script runs.
class ExecutorCore {
 public:
  // As Executor's constructor. `clock` must outlive this object and every handler its stop()
  // abandoned (such a handler's run still stamps its closing log lines when it returns).
  ExecutorCore(ExecutorOptions options, common::Clock& clock);
  ~ExecutorCore();  // stop()

  ExecutorCore(const ExecutorCore&) = delete;
  ExecutorCore& operator=(const ExecutorCore&) = delete;

  // As Executor's.
  void handle(std::string name, Handler handler);
  void start();
  void stop();
  int port() const;
  const std::string& address() const;

  // For tests that move the clock by hand: blocks until the background work has done all it can
  // without time passing: the periodic work (the registration heartbeat, the run log retention)
  // has no run requested or under way (common::RecurringTasks::wait_idle), and the results'
  // sender has sent or spooled everything pushed to it (CallbackSender::wait_idle); their next
  // deadlines are on the clock then. Job threads and timers are not waited for: they sleep on
  // the clock when idle, which a FakeClock tells (wait_for_sleepers), so wait for that first:
  // a job thread pushes its run's result before it sleeps. Returns at once unless started and
  // not stopped.
  void wait_idle() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cronwheel::executor
