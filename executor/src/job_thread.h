#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "common/protocol/messages.h"
#include "common/timer/timer.h"
#include "common/util/clock.h"
#include "executor/src/run_context.h"
#include "executor/src/run_log.h"

namespace cronwheel::executor {

// What a run executes: a BEAN handler or a script. Runs on the job thread; returns when the work
// is done or, once `stop` is requested, as soon as it can. Must not throw (an escaping exception
// is still caught and reported as a failure).
using RunBody = std::function<RunResult(const common::protocol::TriggerParam& trigger,
                                        RunLogWriter& log, std::stop_token stop)>;

// Where run results go (the CallbackSender in the executor). Exactly-once is decided by
// JobRun::reported before anything reaches the sink; the sink only adds close(): a result that
// arrives after close() is dropped and logged instead of reaching a destroyed sender.
//
// Thread-safe; push() is called from job threads, the deadline timer's thread and HTTP workers,
// without locks.
class ResultSink {
 public:
  using Push = std::function<void(common::protocol::HandleCallbackParam)>;
  explicit ResultSink(Push push) : push_(std::move(push)) {}

  void push(common::protocol::HandleCallbackParam result) noexcept;
  void close() noexcept;

 private:
  std::mutex mutex_;
  Push push_;  // empty once closed
};

// One accepted trigger, from /run until its result is reported.
//
// The result is reported exactly once, by whoever gets there first under `mutex`: the job thread
// when the body returns, or, for a stopped run whose body does not return in time, the stop's
// report deadline (or shutdown). Queued runs that are stopped never execute and are reported by
// the one who removed them from the queue.
struct JobRun {
  JobRun(common::protocol::TriggerParam trigger_param, RunBody run_body)
      : trigger(std::move(trigger_param)), body(std::move(run_body)) {}

  const common::protocol::TriggerParam trigger;
  const RunBody body;
  std::stop_source stop_source;  // requested by kill, timeout, COVER_EARLY, replacement, shutdown

  std::mutex mutex;           // guards what follows
  bool stopped = false;       // a stop was decided; stop_result is what the run is reported as
  RunResult stop_result;
  bool reported = false;
  // Pending deadlines, cancelled by whoever reports. Both tasks hold the run (and the services):
  // cancelling destroys them, which breaks that cycle.
  common::TimerHandle timeout_deadline;  // executorTimeout
  common::TimerHandle report_deadline;   // the report deadline of a stopped run
};

// What every job thread of one dispatcher shares. Held by shared_ptr by the dispatcher, by each
// job thread and by deadline tasks, so it outlives a job thread abandoned at shutdown. The hooks
// must stay usable as long: open_log and finish_log share ownership of what they use (an
// abandoned handler may return after the executor is gone); `results` is closed at shutdown;
// on_thread_ended is never called after shutdown.
struct JobServices {
  // The time of the job threads' idle waits, of wait_retired(), of the deadlines below and of the
  // run log lines' stamps. Must outlive every job thread, abandoned ones included (an abandoned
  // run still stamps its closing log lines when its body returns).
  common::Clock& clock;
  // Runs the deadlines of runs (executorTimeout, the report deadline of a stopped run) and the
  // clean-up of ended job threads, on `clock`. Tasks run one at a time on the timer's thread and
  // must be short. Stopped by the dispatcher's stop(); schedule_deadline() then schedules nothing.
  std::shared_ptr<common::Timer> deadlines;
  // Opens a run's log; may throw (the run then goes on with a log that discards).
  std::function<std::unique_ptr<RunLogWriter>(const common::protocol::TriggerParam&)> open_log;
  // Marks a run's log complete (RunLogStore::mark_finished), after its last line and before its
  // result is reported, when its writer could not mark it itself (RunLogWriter::mark_finished).
  // Optional; must not throw.
  std::function<void(const common::protocol::TriggerParam&)> finish_log;
  std::shared_ptr<ResultSink> results;
  // A job thread with nothing to do for this long ends.
  std::chrono::milliseconds idle_timeout{90'000};
  // A stopped run whose body has not returned after this long is reported anyway (with its stop
  // reason); the body keeps the job thread until it returns.
  std::chrono::milliseconds stop_report_grace{5'000};
  // Called on a job thread that just ended (not at shutdown), outside every lock; the thread is
  // about to return and may be joined.
  std::function<void()> on_thread_ended;
};

// The reason texts are XXL-JOB's, so an operator sees the same messages on either executor.
inline constexpr std::string_view kKilledRunningSuffix = " [job running, killed]";
inline constexpr std::string_view kKilledQueuedSuffix =
    " [job not executed, in the job queue, killed.]";

// Stops `run` unless it is already stopped or reported: its result becomes `result`, its stop
// token is requested (a script's process group is ended by the script runner), and a report
// deadline is set stop_report_grace ahead. Thread-safe; no locks held on entry.
void stop_run(const std::shared_ptr<JobRun>& run, RunResult result,
              const std::shared_ptr<const JobServices>& services);

// Reports `result` for `run` unless something was reported already, and cancels the run's
// pending deadlines. Returns whether this call reported.
bool report_once(JobRun& run, RunResult result, const JobServices& services);

// Schedules `task` on `deadlines` after `delay`; an empty handle (the task dropped) once the timer
// was stopped, i.e. once the dispatcher is shutting down, when no deadline matters any more.
common::TimerHandle schedule_deadline(common::Timer& deadlines, std::chrono::nanoseconds delay,
                                      common::TimerTask task);

// Runs taken from a job thread by JobThread::stop_runs(). settle() reports the queued ones as
// not executed and stops the executing one; the caller runs it after releasing its own locks,
// because stopping a run runs the stop callbacks registered on its token (a handler's own code,
// the script runner's kill) on the calling thread. The destructor settles what was not settled.
class WithdrawnRuns {
 public:
  WithdrawnRuns() = default;
  WithdrawnRuns(WithdrawnRuns&& other) noexcept = default;
  WithdrawnRuns& operator=(WithdrawnRuns&& other) noexcept;  // settles what this held first
  ~WithdrawnRuns() { settle(); }

  WithdrawnRuns(const WithdrawnRuns&) = delete;
  WithdrawnRuns& operator=(const WithdrawnRuns&) = delete;

  void settle() noexcept;

 private:
  friend class JobThread;
  std::string reason_;
  std::vector<std::shared_ptr<JobRun>> queued_;
  std::shared_ptr<JobRun> executing_;
  std::shared_ptr<const JobServices> services_;
};

// The worker of one job id: a FIFO queue of runs executed one at a time on a std::jthread of its
// own.
//
// Guarantees:
//  - Runs of this job execute one after the other in submission order, never overlapping: a run
//    that was stopped keeps the thread until its body returns, and the next run waits for it.
//  - Every submitted run is reported exactly once: its own result, its stop result (kill,
//    timeout, COVER_EARLY, replacement, shutdown), or "not executed" when it is removed from the
//    queue.
//  - The thread ends by itself after idle_timeout without runs, after stop_runs(..., true) once
//    the running body returned and nothing new was queued, or after shut_down(). An ended
//    (retired) thread accepts nothing: submit() returns false and the owner starts a new one.
//
// `binding` names what the thread runs (the handler or the script version); the dispatcher
// compares it to decide when a trigger replaces the thread's work.
//
// All methods are thread-safe. The owner (JobDispatcher) destroys a JobThread only after it
// retired or was abandoned; the destructor joins.
class JobThread {
  struct State;

 public:
  JobThread(std::int32_t job_id, std::string binding, std::shared_ptr<const JobServices> services);
  ~JobThread();

  JobThread(const JobThread&) = delete;
  JobThread& operator=(const JobThread&) = delete;

  std::int32_t job_id() const noexcept;

  enum class Submitted {
    kQueued,
    kRetired,    // the thread has retired or is shutting down: nothing done
    kQueueFull,  // `max_queued` runs wait already: nothing done
  };
  // Job threads to wake once the caller has released its locks, each once however many runs it
  // was given (see submit()). Wakes what it holds when destroyed; keeps the threads' states alive,
  // so a thread may have ended and its JobThread be gone by then.
  class DeferredWakes {
   public:
    DeferredWakes() = default;
    ~DeferredWakes() { wake_all(); }
    DeferredWakes(const DeferredWakes&) = delete;
    DeferredWakes& operator=(const DeferredWakes&) = delete;

    void wake_all() noexcept;

   private:
    friend class JobThread;
    std::vector<std::shared_ptr<State>> states_;
  };

  // Queues `run` unless `max_queued` runs (not counting the executing one) wait already. The
  // thread is woken at once or, given `wake_later`, when that is woken: runs handed over together
  // are then all queued before any job thread competes for the CPU with the one handing them over.
  Submitted submit(std::shared_ptr<JobRun> run, std::size_t max_queued, DeferredWakes* wake_later = nullptr);

  // A run is executing (even one already stopped and reported) or queued.
  bool busy() const;
  // `log_id` is queued or executing here.
  bool has_log_id(std::int64_t log_id) const;
  bool retired() const;

  std::string binding() const;
  void set_binding(std::string binding);

  // Takes the queued runs off the queue and the executing run out of reach of a normal report;
  // settling the result stops the executing run (reported as "<reason> [job running, killed]")
  // and reports every queued run as "<reason> [job not executed, in the job queue, killed.]".
  // With `end_thread` the thread ends as soon as it is idle, unless a run is submitted first.
  [[nodiscard]] WithdrawnRuns stop_runs(const std::string& reason, bool end_thread);

  // stop_runs(reason, true) settled at once, and the thread accepts nothing more. Call without
  // locks held.
  void shut_down(const std::string& reason);

  // Waits until the thread has ended or the services' clock reaches `deadline`. True when it
  // ended.
  bool wait_retired(common::Clock::SteadyTime deadline) const;

  // After shut_down(), for a thread whose body did not return in time: reports the executing run
  // now (with its stop result) and detaches the thread, which finishes on its own whenever the
  // body returns and then reports nothing more.
  void abandon() noexcept;

 private:
  std::shared_ptr<State> state_;
  std::jthread thread_;
};

}  // namespace cronwheel::executor
