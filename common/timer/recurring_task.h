#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>

#include "common/timer/timer.h"
#include "common/util/clock.h"

namespace cronwheel::common {

// Periodic work whose deadlines are on one shared Timer and whose runs are on lanes of their
// own: the admin's lease renewal, takeover of dead nodes' fires, registry refresh, lost-result
// check and pending-fire feeder (docs/architecture.md, "The threads of an admin node").
//
// Why lanes. The bodies make blocking database and HTTP calls. Run inline on the timer's worker
// they would queue behind one another (a slow registry refresh would hold up the lease
// renewal, as any slow task holds up a Netty HashedWheelTimer), and on a shared pool a few slow
// ones could still take every thread. So the timer only keeps the deadlines: the task a deadline
// fires (inline on the timer's worker) marks its RecurringTask's run as requested and returns,
// and each RecurringTask runs its body on a thread of its own, its lane, which waits on a
// condition variable and never on the clock. One task's runs never wait for another's.

class RecurringTask;

// What the recurring tasks of a process share: the Timer their deadlines go on, the Clock that
// timer runs on, and how many of them are at work. The composition root owns it (with the
// timer); rooms with periodic work are given it when built.
//
// The timer must hand expired tasks over inline (TimerOptions::executor left empty): the tasks
// RecurringTask puts on it take one mutex and notify a lane.
class RecurringTasks {
 public:
  // `clock` must be the one `timer` runs on. Both must outlive this object, and this object
  // every RecurringTask made with it.
  RecurringTasks(Timer& timer, Clock& clock) noexcept : timer_(timer), clock_(clock) {}

  RecurringTasks(const RecurringTasks&) = delete;
  RecurringTasks& operator=(const RecurringTasks&) = delete;

  Timer& timer() const noexcept { return timer_; }
  Clock& clock() const noexcept { return clock_; }

  // Blocks until no task has a run requested or under way; each has put its next deadline on
  // the timer by then. For driving a manual timer: advance the clock, process_until(), then
  // wait_idle() before looking at what the runs did. (A deadline's task marks its run as
  // requested inside process_until(), so nothing handed over is missed.)
  void wait_idle();
  // The same for at least `n` of the started tasks, while others may be held in a run: like
  // FakeClock::wait_for_sleepers(n).
  void wait_idle_tasks(std::size_t n);

 private:
  friend class RecurringTask;
  void busy_changed(bool busy) noexcept;
  void live_changed(bool live) noexcept;

  Timer& timer_;
  Clock& clock_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::size_t busy_ = 0;  // tasks with a run requested or under way
  std::size_t live_ = 0;  // tasks started and not stopped
};

// A body run at start() (or `first_delay` after it) and then every `interval`, until stopped.
//
// Guarantees:
//  - Runs of one task never overlap, and never wait for another task's: each task has its lane.
//  - Deadlines are absolute, in the phase of the first one (start + first_delay + k * interval),
//    so runs do not drift, however long they take and however late the timer hands them over
//    (a timer is late by up to its tick, never early).
//  - A run that overran its interval skips the deadlines it missed: the next run is at the first
//    deadline after it ended, not at once, and missed runs are never made back to back.
//  - wake() asks for a run as soon as the lane is free, without moving the following deadlines.
//    Several wakes before that run make one run; a wake during a run makes one more after it.
//  - stop() cancels the next deadline, requests the stop token the body was given, waits for a
//    run under way to end and joins the lane. It is idempotent; concurrent calls all wait.
//
// The body gets the lane's stop token, to end a long run early. It must not throw (it reports
// its own failures: it knows what they mean); an exception that escapes is logged and the task
// carries on. If the timer was stopped, the task stops recurring (logged once).
//
// Thread-safe: start(), stop() and wake() from any thread, except stop() from the body itself
// (it would wait for itself).
class RecurringTask {
 public:
  using Body = std::function<void(std::stop_token)>;
  struct Options {
    std::string name;                          // names the task in log lines
    std::chrono::milliseconds interval{0};     // between deadlines; must be positive
    std::chrono::milliseconds first_delay{0};  // from start() to the first run; 0: at once
  };

  // Throws std::invalid_argument for a non-positive interval, a negative first delay or an
  // empty body.
  RecurringTask(RecurringTasks& tasks, Options options, Body body);
  ~RecurringTask();  // stop()

  RecurringTask(const RecurringTask&) = delete;
  RecurringTask& operator=(const RecurringTask&) = delete;

  // Starts the lane and puts the first deadline on the timer (or asks for a run at once).
  // Throws std::logic_error when called twice or after stop().
  void start();
  void stop() noexcept;
  // Does nothing before start() or after stop().
  void wake() noexcept;

  const Options& options() const noexcept;

 private:
  struct State;  // shared with the timeouts on the timer, which may outlive this object

  std::shared_ptr<State> state_;
  std::mutex stop_mutex_;  // makes every stop() wait until the lane is joined
  std::jthread lane_;      // guarded by State::mutex
};

}  // namespace cronwheel::common
