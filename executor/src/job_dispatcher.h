#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/protocol/job_enums.h"
#include "common/protocol/messages.h"
#include "common/protocol/return_t.h"
#include "common/timer/timer.h"
#include "common/util/clock.h"
#include "cronwheel/executor.h"
#include "executor/src/job_thread.h"
#include "executor/src/run_log.h"
#include "executor/src/script_runner.h"

namespace cronwheel::executor {

// The BEAN handlers registered with Executor::handle(). Thread-safe; registering a name again
// replaces its handler for later triggers (and, like a changed executorHandler, makes the job's
// next trigger replace the work of its job thread).
class HandlerRegistry {
 public:
  struct Entry {
    std::shared_ptr<const Handler> handler;
    std::uint64_t generation = 0;  // distinct for every registration
  };

  void set(std::string name, Handler handler);
  std::optional<Entry> find(const std::string& name) const;
  // Every registered name, sorted.
  std::vector<std::string> names() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, Entry, std::less<>> handlers_;
  std::uint64_t next_generation_ = 1;
};

struct DispatcherOptions {
  bool allow_scripts = false;
  std::filesystem::path script_dir;  // where run_script writes script files
  std::shared_ptr<const RunAsUser> run_as;  // who scripts run as; null: this process's user
  std::chrono::milliseconds idle_timeout{90'000};
  std::chrono::milliseconds stop_report_grace{5'000};
  // Runs waiting on one job's thread (not counting the executing one); at least 1.
  std::size_t max_queued_runs_per_job = 64;
  // Job threads alive at once; at least 1.
  std::size_t max_job_threads = 512;
};

// How the dispatcher reaches the rest of the executor; injected so that job threads and
// dispatch are tested without files, processes or an admin.
struct DispatcherHooks {
  // Opens a run's log (RunLogStore::open); may throw.
  std::function<std::unique_ptr<RunLogWriter>(const common::protocol::TriggerParam&)> open_log;
  // Marks a run's log complete (RunLogStore::mark_finished); must not throw.
  std::function<void(const common::protocol::TriggerParam&)> finish_log;
  // Receives every run's result exactly once (CallbackSender::push). Called from job threads,
  // the deadline timer's thread and HTTP workers, without the dispatcher's locks; must return
  // quickly.
  std::function<void(common::protocol::HandleCallbackParam)> report;
  // Runs a script to completion (run_script). Empty: script glue types are refused.
  std::function<ScriptOutcome(const ScriptSpec&, RunLogWriter&, std::stop_token)> run_script;
  // Runs a command for a BEAN handler (RunContext::run_command). Optional.
  CommandRunner run_command;
};

// The executor's side of /run, /kill and /idleBeat, with XXL-JOB 2.4's semantics
// (ExecutorBizImpl): one JobThread per job id, created on the job's first trigger.
//
// run():
//  - BEAN runs the registered executorHandler; GLUE_SHELL/PYTHON/NODEJS/PHP/POWERSHELL run the
//    trigger's glueSource as a script when allowed (run_script, with the trigger's log id,
//    logDateTime, params and shard); GLUE_GROOVY, unknown glue types and unknown handlers are
//    refused. A script succeeds when it exits 0 and its output, if it left one, was taken
//    (ScriptOutcome::output_refused); it fails otherwise, with the outcome's message.
//  - A trigger whose logId is queued or executing on the job's thread is refused, before anything
//    else is done.
//  - A trigger bound to different work than the job's thread (another handler or glue type, a
//    new glueUpdatetime, a re-registered handler) stops the thread's runs ("change ... and
//    terminate the old job thread.") and the thread takes the new binding.
//  - Block strategies on a busy thread: SERIAL_EXECUTION queues; DISCARD_LATER refuses;
//    COVER_EARLY stops the executing and queued runs and queues the new one. An unknown or
//    missing strategy is SERIAL_EXECUTION.
//  - Bounds: a run that would make more than max_queued_runs_per_job runs wait on its job's
//    thread is refused ("job 7 has 64 runs queued already (max-queued-runs-per-job); run
//    refused"). A job without a thread gets one only while fewer than max_job_threads are
//    alive; at the limit an idle thread of another job (nothing executing or queued) is ended
//    to make room, and without one the run is refused ("512 jobs have runs executing or queued
//    on this executor already (max-job-threads); run of job 7 refused"). A refused run leaves
//    nothing behind: no thread, no queue entry, no log, no result (the admin records the
//    refusal as the trigger's failure).
//  - Success is answered once the run is queued; its result goes to hooks.report.
// Runs of a job never overlap: a stopped run whose body has not returned yet holds the job's
// thread, and the next run starts when it returns (its result is reported at the latest
// stop_report_grace after the stop).
//
// Thread-safe. stop() ends everything; the destructor calls stop(0).
class JobDispatcher {
 public:
  using Answer = common::protocol::ReturnT<std::string>;

  // `clock` (deadlines, idle job threads, stop()'s wait, run log stamps) must outlive the
  // dispatcher and every job thread its stop() abandons.
  JobDispatcher(DispatcherOptions options, DispatcherHooks hooks,
                std::shared_ptr<const HandlerRegistry> handlers, common::Clock& clock);
  ~JobDispatcher();

  JobDispatcher(const JobDispatcher&) = delete;
  JobDispatcher& operator=(const JobDispatcher&) = delete;

  Answer run(const common::protocol::TriggerParam& trigger);
  // run() for each trigger, in order, with one answer each. The runs are all queued before any
  // job thread is woken: lead dispatch starts the fires of one instant this way, so that the
  // first ones do not delay the hand-over of the others by competing for the CPU with it.
  std::vector<Answer> run_all(const std::vector<common::protocol::TriggerParam>& triggers);
  // What run() would refuse before looking at the job's thread, with run()'s message: an invalid
  // glue type, GLUE_GROOVY, an unknown BEAN handler, scripts not allowed. nullopt when run() would
  // go on (it may still refuse at the job's thread: block strategy, bounds, stopping). Changes
  // nothing; lead dispatch asks it when a fire is handed over, long before run().
  std::optional<std::string> check(const common::protocol::TriggerParam& trigger) const;
  // Stops the job's executing and queued runs ("scheduling center kill job.") and ends its
  // thread. Success also when there is nothing to kill.
  Answer kill(std::int32_t job_id);
  // Fails while the job has a run executing or queued.
  Answer idle_beat(std::int32_t job_id) const;

  // `log_id` is queued or executing (its log may still grow).
  bool is_active(std::int64_t log_id) const;
  // Job threads currently alive.
  std::size_t thread_count() const;
  // Deadlines scheduled and neither fired nor cancelled: executorTimeouts, report deadlines of
  // stopped runs, reaps of ended job threads. For tests and metrics.
  std::size_t pending_deadlines() const;

  // Refuses further triggers, stops every executing run and reports every queued one as not
  // executed ("executor is stopping"), waits up to `timeout` (on the clock) for the job threads to
  // end, reports the runs still executing after that as stopped and abandons their threads
  // (they end whenever their handlers return, reporting nothing more). After stop() returns no
  // result reaches hooks.report any more. Idempotent.
  void stop(std::chrono::milliseconds timeout);

 private:
  // The job's live thread, or nullptr; a retired one is moved to retired_. Under mutex_.
  JobThread* live_thread(std::int32_t job_id);
  // A trigger made into a run, before its job's thread is looked at.
  struct Prepared {
    std::shared_ptr<JobRun> run;
    std::string binding;        // what the job's thread must run (handler or script version)
    std::string change_reason;  // why its runs are withdrawn when the binding changed
    common::protocol::BlockStrategy strategy = common::protocol::BlockStrategy::kSerialExecution;
  };
  // run()'s checks before the job's thread (the glue type, the body); nullopt with `refusal` set.
  std::optional<Prepared> prepare(const common::protocol::TriggerParam& trigger, Answer& refusal) const;
  // Under mutex_: applies the binding and the block strategy, queues the run. What it takes off the
  // job's thread lands in `withdrawn`, for the caller to settle without the lock; the job thread's
  // wake goes to `wake_later` when given (JobThread::submit).
  Answer submit_locked(const Prepared& prepared, WithdrawnRuns& withdrawn,
                       JobThread::DeferredWakes* wake_later);
  std::optional<RunBody> make_body(const common::protocol::TriggerParam& trigger,
                                   common::protocol::GlueType glue, std::string& binding,
                                   std::string& change_reason, Answer& refusal) const;
  void reap() noexcept;
  // Under mutex_: whether a new job thread may start, after ending an idle one if the limit
  // requires it (see run()).
  bool make_room_for_a_thread();

  const DispatcherOptions options_;
  const DispatcherHooks hooks_;
  const std::shared_ptr<const HandlerRegistry> handlers_;
  // The deadlines of runs and the reaping of ended job threads: a hashed wheel on the injected
  // clock (see make_deadline_timer() in job_dispatcher.cpp for its tick).
  std::shared_ptr<common::Timer> deadlines_;
  std::shared_ptr<ResultSink> results_;
  std::shared_ptr<JobServices> services_;

  mutable std::mutex mutex_;  // guards what follows; taken before any JobThread's lock
  std::unordered_map<std::int32_t, std::unique_ptr<JobThread>> threads_;
  std::vector<std::unique_ptr<JobThread>> retired_;  // ended, waiting to be joined
  bool stopped_ = false;
};

}  // namespace cronwheel::executor
