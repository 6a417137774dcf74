#include "executor/src/job_dispatcher.h"

#include <algorithm>
#include <utility>

#include <spdlog/spdlog.h>

#include "common/protocol/job_enums.h"
#include "common/timer/hashed_wheel_timer.h"
#include "executor/src/run_context.h"

namespace cronwheel::executor {

using common::protocol::BlockStrategy;
using common::protocol::GlueType;
using common::protocol::kFailCode;
using common::protocol::TriggerParam;

namespace {

// XXL-JOB's texts (ExecutorBizImpl), so operators see the same messages on either executor.
// The colon after "effect" is a full-width one, as XXL-JOB writes it.
constexpr std::string_view kDiscardLaterRefusal = "block strategy effect：Discard Later";
constexpr std::string_view kCoverEarlyReason = "block strategy effect：Cover Early";
constexpr std::string_view kHandlerChangedReason =
    "change jobhandler or glue type, and terminate the old job thread.";
constexpr std::string_view kScriptChangedReason =
    "change job source or glue type, and terminate the old job thread.";
constexpr std::string_view kKillReason = "scheduling center kill job.";
constexpr std::string_view kShutdownReason = "executor is stopping";
constexpr std::string_view kMakeRoomReason = "idle job thread ended to make room (max-job-threads)";

// The wheel behind every deadline of the dispatcher. A timeout fires at the first tick boundary at
// or after its deadline, so up to one tick late and never early. executorTimeout counts in whole
// seconds and the report grace is 5 s, so a 100 ms tick is a tenth of the shortest deadline,
// while an idle executor wakes only ten times a second; the reap of an ended job thread (due at
// once) waits at most that long, which nobody notices. 512 buckets make one turn 51.2 s: the
// grace and usual timeouts expire on their first visit, a longer one costs a decrement per turn.
// Tasks run inline on the timer's thread: each is a few lock-protected writes, a stop request or
// the join of a thread that has already returned.
std::shared_ptr<common::Timer> make_deadline_timer(common::Clock& clock) {
  common::WheelOptions wheel;
  wheel.tick = std::chrono::milliseconds(100);
  wheel.wheel_size = 512;
  common::TimerOptions options;
  options.on_error = common::logging_timer_errors("executor deadline timer");
  return std::make_shared<common::HashedWheelTimer>(clock, wheel, std::move(options));
}

// handleCode and handleMsg of a script run.
RunResult script_status(const ScriptOutcome& outcome) {
  switch (outcome.kind) {
    case ScriptOutcome::Kind::kExited:
      // An output the script meant to give and could not fails it, as set_output's exception
      // fails a handler that lets it escape: the nodes after it would miss it.
      if (outcome.exit_code == 0 && !outcome.output_refused) return {};
      return {kFailCode, !outcome.message.empty()
                             ? outcome.message
                             : "script exit value(" + std::to_string(outcome.exit_code) +
                                   ") is failed"};
    case ScriptOutcome::Kind::kSignaled:
      return {kFailCode, !outcome.message.empty()
                             ? outcome.message
                             : "script ended by signal " + std::to_string(outcome.exit_code)};
    case ScriptOutcome::Kind::kStopped:
      // Only reported when the stop was not ours; ours carries its own result.
      return {kFailCode, !outcome.message.empty() ? outcome.message : "script stopped"};
    case ScriptOutcome::Kind::kFailedToStart:
      return {kFailCode, !outcome.message.empty() ? outcome.message : "script could not start"};
  }
  return {kFailCode, "script ended in an unknown way"};
}

// How a script run ended, as the admin is told, with the output it left (run_script).
RunResult script_result(const ScriptOutcome& outcome) {
  RunResult result = script_status(outcome);
  result.output = outcome.output;
  return result;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// HandlerRegistry

void HandlerRegistry::set(std::string name, Handler handler) {
  auto shared = std::make_shared<const Handler>(std::move(handler));
  std::lock_guard lock(mutex_);
  handlers_[std::move(name)] = Entry{std::move(shared), next_generation_++};
}

std::optional<HandlerRegistry::Entry> HandlerRegistry::find(const std::string& name) const {
  std::lock_guard lock(mutex_);
  auto it = handlers_.find(name);
  if (it == handlers_.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> HandlerRegistry::names() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> out;
  out.reserve(handlers_.size());
  for (const auto& [name, entry] : handlers_) out.push_back(name);
  return out;
}

// ---------------------------------------------------------------------------------------------
// JobDispatcher

JobDispatcher::JobDispatcher(DispatcherOptions options, DispatcherHooks hooks,
                             std::shared_ptr<const HandlerRegistry> handlers,
                             common::Clock& clock)
    : options_(std::move(options)),
      hooks_(std::move(hooks)),
      handlers_(std::move(handlers)),
      deadlines_(make_deadline_timer(clock)),
      results_(std::make_shared<ResultSink>(hooks_.report)) {
  services_ = std::make_shared<JobServices>(JobServices{
      clock,
      deadlines_,
      hooks_.open_log,
      hooks_.finish_log,
      results_,
      options_.idle_timeout,
      options_.stop_report_grace,
      // An ended thread cannot join itself: the deadline timer's thread does it (nothing, once
      // stop() stopped the timer: stop() joins every thread itself).
      [this] {
        schedule_deadline(*deadlines_, std::chrono::nanoseconds::zero(), [this] { reap(); });
      },
  });
}

JobDispatcher::~JobDispatcher() { stop(std::chrono::milliseconds::zero()); }

std::optional<RunBody> JobDispatcher::make_body(const TriggerParam& trigger, GlueType glue,
                                                std::string& binding, std::string& change_reason,
                                                Answer& refusal) const {
  if (glue == GlueType::kBean) {
    auto entry = handlers_->find(trigger.executor_handler);
    if (!entry) {
      refusal = Answer::fail("job handler [" + trigger.executor_handler + "] not found.");
      return std::nullopt;
    }
    binding = "BEAN " + trigger.executor_handler + " #" + std::to_string(entry->generation);
    change_reason = kHandlerChangedReason;
    return RunBody([handler = entry->handler, commands = hooks_.run_command, &clock = services_->clock](
                       const TriggerParam& t, RunLogWriter& log, std::stop_token stop) {
      return run_handler(*handler, t, log, clock, std::move(stop), commands);
    });
  }
  if (glue == GlueType::kGlueGroovy) {
    refusal = Answer::fail("GLUE_GROOVY is not supported by this executor");
    return std::nullopt;
  }
  // A script glue type.
  if (!options_.allow_scripts || !hooks_.run_script) {
    refusal = Answer::fail(trigger.glue_type +
                           " is refused: script jobs are not allowed on this executor");
    return std::nullopt;
  }
  binding = trigger.glue_type + " " + std::to_string(trigger.glue_updatetime);
  change_reason = kScriptChangedReason;
  ScriptSpec spec;
  spec.glue_type = glue;
  spec.source = trigger.glue_source;
  spec.job_id = trigger.job_id;
  spec.glue_updatetime = trigger.glue_updatetime;
  spec.log_id = trigger.log_id;
  spec.log_date_time = trigger.log_date_time;
  spec.params = trigger.executor_params;
  spec.shard_index = trigger.broadcast_index;
  spec.shard_total = std::max(trigger.broadcast_total, 1);
  spec.script_dir = options_.script_dir;
  spec.run_as = options_.run_as;
  return RunBody([spec = std::move(spec), runner = hooks_.run_script](
                     const TriggerParam&, RunLogWriter& log, std::stop_token stop) {
    return script_result(runner(spec, log, std::move(stop)));
  });
}

JobThread* JobDispatcher::live_thread(std::int32_t job_id) {
  auto it = threads_.find(job_id);
  if (it == threads_.end()) return nullptr;
  if (it->second->retired()) {
    retired_.push_back(std::move(it->second));
    threads_.erase(it);
    return nullptr;
  }
  return it->second.get();
}

std::optional<JobDispatcher::Prepared> JobDispatcher::prepare(const TriggerParam& trigger,
                                                              Answer& refusal) const {
  const auto glue = common::protocol::parse_enum<GlueType>(trigger.glue_type);
  if (!glue) {
    refusal = Answer::fail("glueType[" + trigger.glue_type + "] is not valid.");
    return std::nullopt;
  }
  Prepared prepared;
  auto body = make_body(trigger, *glue, prepared.binding, prepared.change_reason, refusal);
  if (!body) return std::nullopt;
  prepared.strategy = common::protocol::parse_enum<BlockStrategy>(trigger.executor_block_strategy)
                          .value_or(BlockStrategy::kSerialExecution);
  prepared.run = std::make_shared<JobRun>(trigger, std::move(*body));
  return prepared;
}

JobDispatcher::Answer JobDispatcher::run(const TriggerParam& trigger) {
  Answer refusal;
  auto prepared = prepare(trigger, refusal);
  if (!prepared) return refusal;
  // Runs this trigger displaces are settled (reported, stopped) once the lock is released.
  WithdrawnRuns withdrawn;
  Answer answer;
  {
    std::lock_guard lock(mutex_);
    answer = submit_locked(*prepared, withdrawn, nullptr);
  }
  withdrawn.settle();
  return answer;
}

std::vector<JobDispatcher::Answer> JobDispatcher::run_all(const std::vector<TriggerParam>& triggers) {
  std::vector<Answer> answers(triggers.size());
  std::vector<std::optional<Prepared>> prepared(triggers.size());
  for (std::size_t i = 0; i < triggers.size(); ++i) prepared[i] = prepare(triggers[i], answers[i]);
  std::vector<WithdrawnRuns> withdrawn(triggers.size());
  JobThread::DeferredWakes wakes;
  {
    std::lock_guard lock(mutex_);
    for (std::size_t i = 0; i < triggers.size(); ++i) {
      if (prepared[i]) answers[i] = submit_locked(*prepared[i], withdrawn[i], &wakes);
    }
  }
  for (auto& w : withdrawn) w.settle();
  wakes.wake_all();
  return answers;
}

std::optional<std::string> JobDispatcher::check(const TriggerParam& trigger) const {
  const auto glue = common::protocol::parse_enum<GlueType>(trigger.glue_type);
  if (!glue) return "glueType[" + trigger.glue_type + "] is not valid.";
  std::string binding;
  std::string change_reason;
  Answer refusal;
  // make_body only builds the run's body (a closure): dropping it leaves no trace.
  if (!make_body(trigger, *glue, binding, change_reason, refusal)) return refusal.msg;
  return std::nullopt;
}

JobDispatcher::Answer JobDispatcher::submit_locked(const Prepared& prepared, WithdrawnRuns& withdrawn,
                                                   JobThread::DeferredWakes* wake_later) {
  const auto& run = prepared.run;
  const std::string& binding = prepared.binding;
  const std::string& change_reason = prepared.change_reason;
  const BlockStrategy strategy = prepared.strategy;
  const TriggerParam& trigger = run->trigger;
  if (stopped_) return Answer::fail("executor is stopping");

  if (JobThread* thread = live_thread(trigger.job_id)) {
    if (thread->has_log_id(trigger.log_id)) {
      // Received twice at once (the endpoint's check raced): not run again, as the endpoint
      // answers a run it has already.
      Answer answer;
      answer.msg = "run " + std::to_string(trigger.log_id) + " was received already: not run again";
      return answer;
    }
    if (thread->binding() != binding) {
      spdlog::info("executor: job {}: {}", trigger.job_id, change_reason);
      withdrawn = thread->stop_runs(change_reason, false);
      thread->set_binding(binding);
    } else if (strategy == BlockStrategy::kDiscardLater) {
      if (thread->busy()) return Answer::fail(std::string(kDiscardLaterRefusal));
    } else if (strategy == BlockStrategy::kCoverEarly) {
      if (thread->busy()) withdrawn = thread->stop_runs(std::string(kCoverEarlyReason), false);
    }
    // A full queue means nothing was withdrawn above: stopping runs empties the queue.
    switch (thread->submit(run, options_.max_queued_runs_per_job, wake_later)) {
      case JobThread::Submitted::kQueued:
        return Answer::success();
      case JobThread::Submitted::kQueueFull:
        return Answer::fail("job " + std::to_string(trigger.job_id) + " has " +
                            std::to_string(options_.max_queued_runs_per_job) +
                            " runs queued already (max-queued-runs-per-job); run refused");
      case JobThread::Submitted::kRetired:
        // The thread ended (idle) since live_thread() looked: it had nothing, start a new one.
        live_thread(trigger.job_id);
        break;
    }
  }
  if (!make_room_for_a_thread()) {
    return Answer::fail(std::to_string(options_.max_job_threads) +
                        " jobs have runs executing or queued on this executor already "
                        "(max-job-threads); run of job " + std::to_string(trigger.job_id) +
                        " refused");
  }
  const std::int32_t job_id = trigger.job_id;
  auto fresh = std::make_unique<JobThread>(job_id, binding, services_);
  fresh->submit(run, options_.max_queued_runs_per_job, wake_later);  // a new thread accepts
  threads_[job_id] = std::move(fresh);
  return Answer::success();
}

bool JobDispatcher::make_room_for_a_thread() {
  std::size_t alive = 0;
  auto idle = threads_.end();
  for (auto it = threads_.begin(); it != threads_.end(); ++it) {
    if (it->second->retired()) continue;
    ++alive;
    if (idle == threads_.end() && !it->second->busy()) idle = it;
  }
  if (alive < options_.max_job_threads) return true;
  if (idle == threads_.end()) return false;
  // An idle thread has nothing to stop: it ends as soon as it wakes, and the reap after its end
  // joins it. Out of threads_, it is given nothing more.
  idle->second->stop_runs(std::string(kMakeRoomReason), true).settle();
  retired_.push_back(std::move(idle->second));
  threads_.erase(idle);
  return true;
}

JobDispatcher::Answer JobDispatcher::kill(std::int32_t job_id) {
  WithdrawnRuns withdrawn;
  {
    std::lock_guard lock(mutex_);
    JobThread* thread = live_thread(job_id);
    if (thread == nullptr) {
      Answer answer;  // success, as XXL-JOB answers it
      answer.msg = "job thread already killed.";
      return answer;
    }
    withdrawn = thread->stop_runs(std::string(kKillReason), true);
  }
  withdrawn.settle();
  return Answer::success();
}

JobDispatcher::Answer JobDispatcher::idle_beat(std::int32_t job_id) const {
  std::lock_guard lock(mutex_);
  auto it = threads_.find(job_id);
  if (it != threads_.end() && it->second->busy()) {
    return Answer::fail("job thread is running or has trigger queue.");
  }
  return Answer::success();
}

bool JobDispatcher::is_active(std::int64_t log_id) const {
  std::lock_guard lock(mutex_);
  return std::any_of(threads_.begin(), threads_.end(),
                     [&](const auto& entry) { return entry.second->has_log_id(log_id); });
}

std::size_t JobDispatcher::thread_count() const {
  std::lock_guard lock(mutex_);
  return static_cast<std::size_t>(std::count_if(
      threads_.begin(), threads_.end(), [](const auto& entry) { return !entry.second->retired(); }));
}

std::size_t JobDispatcher::pending_deadlines() const { return deadlines_->pending_timeouts(); }

void JobDispatcher::reap() noexcept {
  std::vector<std::unique_ptr<JobThread>> ended;
  {
    std::lock_guard lock(mutex_);
    for (auto it = threads_.begin(); it != threads_.end();) {
      if (it->second->retired()) {
        ended.push_back(std::move(it->second));
        it = threads_.erase(it);
      } else {
        ++it;
      }
    }
    for (auto& thread : retired_) ended.push_back(std::move(thread));
    retired_.clear();
  }
  ended.clear();  // joins: each has left its loop and is returning
}

void JobDispatcher::stop(std::chrono::milliseconds timeout) {
  std::vector<std::unique_ptr<JobThread>> all;
  {
    std::lock_guard lock(mutex_);
    if (stopped_) return;
    stopped_ = true;
    for (auto& [job_id, thread] : threads_) all.push_back(std::move(thread));
    threads_.clear();
    for (auto& thread : retired_) all.push_back(std::move(thread));
    retired_.clear();
  }
  const std::string reason(kShutdownReason);
  for (auto& thread : all) thread->shut_down(reason);
  const auto deadline = services_->clock.steady_now() + timeout;
  for (auto& thread : all) {
    if (!thread->wait_retired(deadline)) thread->abandon();
  }
  // The deadlines still pending will never matter: every run was reported. Cancelling destroys
  // their tasks, which hold the runs and the services.
  for (const auto& pending : deadlines_->stop()) pending.cancel();
  results_->close();
  all.clear();  // joins the threads that ended; abandoned ones were detached
}

}  // namespace cronwheel::executor
