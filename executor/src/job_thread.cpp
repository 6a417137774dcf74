#include "executor/src/job_thread.h"

#include <pthread.h>

#include <algorithm>
#include <deque>
#include <exception>
#include <initializer_list>
#include <unordered_set>
#include <utility>

#include <spdlog/spdlog.h>

#include "executor/src/clock_condition.h"

namespace cronwheel::executor {

using common::protocol::HandleCallbackParam;
using common::protocol::kFailCode;
using common::protocol::kTimeoutCode;
using common::protocol::TriggerParam;

namespace {

// Stands in for a run log that could not be opened: the run still executes (a full disk must not
// stop every job), its log lines are lost.
class DiscardingLog final : public RunLogWriter {
 public:
  void append(std::string_view) override {}
};

HandleCallbackParam to_callback(const TriggerParam& trigger, RunResult result) {
  return {trigger.log_id, trigger.log_date_time, result.code, truncate_handle_msg(std::move(result.msg)),
          std::move(result.output), std::nullopt};
}

// Lines stamped with one time, in one write: a run's opening and closing lines cost one system
// call each instead of one per line.
std::string log_lines(const common::Clock& clock, std::initializer_list<std::string_view> messages) {
  const std::int64_t now_ms = clock.now_ms();
  std::string text;
  for (auto message : messages) {
    if (!text.empty()) text += '\n';
    text += log_line(now_ms, message);
  }
  return text;
}

void append_quietly(RunLogWriter& log, const common::Clock& clock,
                    std::initializer_list<std::string_view> messages) noexcept {
  try {
    log.append(log_lines(clock, messages));
  } catch (const std::exception& e) {
    spdlog::warn("executor: cannot write a run log line: {}", e.what());
  } catch (...) {
  }
}

void append_closing_quietly(RunLogWriter& log, const common::Clock& clock,
                            std::initializer_list<std::string_view> messages) noexcept {
  try {
    log.append_closing(log_lines(clock, messages));
  } catch (const std::exception& e) {
    spdlog::warn("executor: cannot write a run log line: {}", e.what());
  } catch (...) {
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// ResultSink

void ResultSink::push(HandleCallbackParam result) noexcept {
  std::lock_guard lock(mutex_);
  if (!push_) {
    spdlog::error("executor: result of log {} arrived after shutdown and is dropped (code {}: {})",
                  result.log_id, result.handle_code, result.handle_msg);
    return;
  }
  try {
    push_(std::move(result));
  } catch (const std::exception& e) {
    spdlog::error("executor: cannot queue the result of log {}: {}", result.log_id, e.what());
  } catch (...) {
    spdlog::error("executor: cannot queue the result of log {}", result.log_id);
  }
}

void ResultSink::close() noexcept {
  Push closed;
  std::lock_guard lock(mutex_);
  closed.swap(push_);
}

// ---------------------------------------------------------------------------------------------
// Reporting and stopping runs

common::TimerHandle schedule_deadline(common::Timer& deadlines, std::chrono::nanoseconds delay,
                                      common::TimerTask task) {
  try {
    return deadlines.schedule(std::move(task), delay);
  } catch (const common::TimerRejectedError&) {
    return {};
  }
}

bool report_once(JobRun& run, RunResult result, const JobServices& services) {
  common::TimerHandle timeout_deadline;
  common::TimerHandle report_deadline;
  {
    std::lock_guard lock(run.mutex);
    if (run.reported) return false;
    run.reported = true;
    timeout_deadline = std::move(run.timeout_deadline);
    report_deadline = std::move(run.report_deadline);
  }
  // A deadline that already fired (kAlreadyExpired) finds the run reported and does nothing.
  timeout_deadline.cancel();
  report_deadline.cancel();
  services.results->push(to_callback(run.trigger, std::move(result)));
  return true;
}

void stop_run(const std::shared_ptr<JobRun>& run, RunResult result,
              const std::shared_ptr<const JobServices>& services) {
  {
    std::lock_guard lock(run->mutex);
    if (run->stopped || run->reported) return;
    run->stopped = true;
    run->stop_result = std::move(result);
  }
  run->stop_source.request_stop();

  // The body normally returns soon and the job thread reports the stop result. One that ignores
  // its stop token is reported after the grace period; it keeps its thread until it returns.
  const auto grace = services->stop_report_grace;
  auto deadline = schedule_deadline(*services->deadlines, grace, [run, services, grace] {
    RunResult stop_result;
    {
      std::lock_guard lock(run->mutex);
      stop_result = run->stop_result;
    }
    if (report_once(*run, std::move(stop_result), *services)) {
      spdlog::warn(
          "executor: job {} run {} did not return within {} ms of being stopped; reported as "
          "stopped, the job's next run waits until it returns",
          run->trigger.job_id, run->trigger.log_id, grace.count());
    }
  });
  bool reported = false;
  {
    std::lock_guard lock(run->mutex);
    reported = run->reported;
    if (!reported) run->report_deadline = deadline;
  }
  if (reported) deadline.cancel();  // reported in the meantime: nobody else would cancel it
}

// ---------------------------------------------------------------------------------------------
// JobThread

struct JobThread::State {
  State(std::int32_t id, std::string initial_binding, std::shared_ptr<const JobServices> s)
      : job_id(id),
        services(std::move(s)),
        changed(services->clock),
        binding(std::move(initial_binding)),
        idle_deadline(services->clock.steady_now() + services->idle_timeout) {}

  void loop() noexcept;
  void execute(const std::shared_ptr<JobRun>& run) noexcept;

  const std::int32_t job_id;
  const std::shared_ptr<const JobServices> services;

  mutable std::mutex mutex;  // guards what follows
  // Notified when a run is queued, the thread is told to end, and when it has ended. Its waits
  // (the idle wait, wait_retired) are on the services' clock.
  mutable ClockCondition changed;
  std::string binding;
  std::deque<std::shared_ptr<JobRun>> queue;
  std::shared_ptr<JobRun> current;  // executing (set from dequeue until its body returned)
  std::unordered_set<std::int64_t> log_ids;  // of `queue` and `current`
  common::Clock::SteadyTime idle_deadline;
  bool end_when_idle = false;
  bool shutdown = false;
  bool retired = false;
};

void JobThread::State::loop() noexcept {
  const std::string name = "job-" + std::to_string(job_id);
  pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
  std::unique_lock lock(mutex);
  for (;;) {
    if (queue.empty()) {
      // After shutdown the dispatcher may be gone when an abandoned thread gets here: nothing
      // but this state and the clock (which outlives every job thread: JobServices) is touched.
      // The predicate holds then, so the wait returns at once.
      const bool woken = changed.wait_until(lock, idle_deadline, [this] {
        return shutdown || end_when_idle || !queue.empty();
      });
      if (!woken || queue.empty()) break;  // idle for idle_timeout, or told to end
      continue;
    }
    auto run = std::move(queue.front());
    queue.pop_front();
    current = run;
    lock.unlock();
    execute(run);
    lock.lock();
    current.reset();
    log_ids.erase(run->trigger.log_id);
    if (!shutdown) idle_deadline = services->clock.steady_now() + services->idle_timeout;
  }
  retired = true;
  const bool tell_owner = !shutdown;
  lock.unlock();
  changed.notify_all();
  if (!tell_owner) return;  // an abandoned thread may get here after the process log is gone
  spdlog::debug("executor: job thread of job {} ended", job_id);
  if (services->on_thread_ended) {
    try {
      services->on_thread_ended();
    } catch (...) {
      spdlog::error("executor: job thread of job {}: on_thread_ended failed", job_id);
    }
  }
}

void JobThread::State::execute(const std::shared_ptr<JobRun>& run) noexcept {
  const TriggerParam& trigger = run->trigger;
  std::unique_ptr<RunLogWriter> log;
  try {
    if (services->open_log) log = services->open_log(trigger);
  } catch (const std::exception& e) {
    spdlog::error("executor: job {} run {}: cannot open the run log, running without it: {}",
                  trigger.job_id, trigger.log_id, e.what());
  } catch (...) {
    spdlog::error("executor: job {} run {}: cannot open the run log, running without it",
                  trigger.job_id, trigger.log_id);
  }
  if (!log) log = std::make_unique<DiscardingLog>();

  const common::Clock& clock = services->clock;
  {
    const std::string param = "----------- Param: " + trigger.executor_params;
    const std::string shard = trigger.broadcast_total > 1
                                  ? "----------- Shard: " + std::to_string(trigger.broadcast_index) + "/" +
                                        std::to_string(trigger.broadcast_total)
                                  : std::string();
    constexpr std::string_view start = "----------- cronwheel job execute start -----------";
    if (shard.empty()) {
      append_quietly(*log, clock, {start, param});
    } else {
      append_quietly(*log, clock, {start, param, shard});
    }
  }

  if (trigger.executor_timeout > 0) {
    auto deadline = schedule_deadline(
        *services->deadlines, std::chrono::seconds(trigger.executor_timeout), [run, s = services] {
          stop_run(run,
                   {kTimeoutCode, "job execute timeout (executorTimeout " +
                                      std::to_string(run->trigger.executor_timeout) + " s)"},
                   s);
        });
    bool reported = false;
    {
      std::lock_guard lock(run->mutex);
      reported = run->reported;  // stopped and reported before it started
      if (!reported) run->timeout_deadline = deadline;
    }
    if (reported) deadline.cancel();
  }

  RunResult result;
  if (run->stop_source.stop_requested()) {
    result = {kFailCode, "stopped before it started"};  // replaced by the stop result below
  } else {
    try {
      result = run->body(trigger, *log, run->stop_source.get_token());
    } catch (const std::exception& e) {
      result = {kFailCode, e.what()};
    } catch (...) {
      result = {kFailCode, "unknown exception"};
    }
  }

  RunResult final_result;
  bool stopped = false;
  {
    std::lock_guard lock(run->mutex);
    stopped = run->stopped;
    final_result = stopped ? run->stop_result : std::move(result);
  }
  // First, where cutting a long message cannot take it away.
  if (auto cap = log->truncated_at()) {
    final_result.msg = "log truncated at " + std::to_string(*cap) + " bytes (max-run-log-bytes)" +
                       (final_result.msg.empty() ? "" : "; ") + final_result.msg;
  }
  // Bounded before it goes into the closing lines, which the log's cap does not bound.
  final_result.msg = truncate_handle_msg(std::move(final_result.msg));
  // The end lines go in before the result is reported, so an admin reading the log after the
  // callback sees all of it; past the log's cap too.
  {
    const std::string result_line = "----------- Result: handleCode=" + std::to_string(final_result.code) +
                                    ", handleMsg = " + final_result.msg;
    if (stopped) {
      append_closing_quietly(*log, clock,
                             {"----------- stopped: " + final_result.msg,
                              "----------- cronwheel job execute end(stopped) -----------", result_line});
    } else {
      append_closing_quietly(*log, clock, {"----------- cronwheel job execute end(finish) -----------", result_line});
    }
  }
  // Through the open file when it can: no path to look up again.
  const bool marked = log->mark_finished();
  log.reset();
  if (!marked && services->finish_log) {
    try {
      services->finish_log(trigger);
    } catch (...) {
      spdlog::error("executor: job {} run {}: cannot mark the run log finished", trigger.job_id,
                    trigger.log_id);
    }
  }
  try {
    report_once(*run, std::move(final_result), *services);
  } catch (const std::exception& e) {
    spdlog::error("executor: job {} run {}: cannot report the result: {}", trigger.job_id,
                  trigger.log_id, e.what());
  }
}

// ---------------------------------------------------------------------------------------------
// WithdrawnRuns

WithdrawnRuns& WithdrawnRuns::operator=(WithdrawnRuns&& other) noexcept {
  if (this != &other) {
    settle();
    reason_ = std::move(other.reason_);
    queued_ = std::move(other.queued_);
    executing_ = std::move(other.executing_);
    services_ = std::move(other.services_);
    other.queued_.clear();
    other.executing_.reset();
  }
  return *this;
}

void WithdrawnRuns::settle() noexcept {
  if (!services_) return;
  try {
    for (const auto& run : queued_) {
      report_once(*run, {kFailCode, reason_ + std::string(kKilledQueuedSuffix)}, *services_);
    }
    if (executing_) {
      stop_run(executing_, {kFailCode, reason_ + std::string(kKilledRunningSuffix)}, services_);
    }
  } catch (const std::exception& e) {
    spdlog::error("executor: cannot settle stopped runs ({}): {}", reason_, e.what());
  }
  queued_.clear();
  executing_.reset();
  services_.reset();
}

JobThread::JobThread(std::int32_t job_id, std::string binding,
                     std::shared_ptr<const JobServices> services)
    : state_(std::make_shared<State>(job_id, std::move(binding), std::move(services))) {
  // The thread owns a reference to the state: an abandoned (detached) thread keeps using it.
  thread_ = std::jthread([state = state_] { state->loop(); });
}

JobThread::~JobThread() = default;  // joins unless abandoned

std::int32_t JobThread::job_id() const noexcept { return state_->job_id; }

JobThread::Submitted JobThread::submit(std::shared_ptr<JobRun> run, std::size_t max_queued,
                                       DeferredWakes* wake_later) {
  {
    std::lock_guard lock(state_->mutex);
    if (state_->retired || state_->shutdown) return Submitted::kRetired;
    if (state_->queue.size() >= max_queued) return Submitted::kQueueFull;
    state_->log_ids.insert(run->trigger.log_id);
    state_->queue.push_back(std::move(run));
    state_->end_when_idle = false;
  }
  // Notified without the lock, so that the woken thread does not block on it at once.
  if (wake_later != nullptr) {
    wake_later->states_.push_back(state_);
  } else {
    state_->changed.notify_all();
  }
  return Submitted::kQueued;
}

void JobThread::DeferredWakes::wake_all() noexcept {
  std::sort(states_.begin(), states_.end());
  states_.erase(std::unique(states_.begin(), states_.end()), states_.end());
  for (const auto& state : states_) state->changed.notify_all();
  states_.clear();
}

bool JobThread::busy() const {
  std::lock_guard lock(state_->mutex);
  return state_->current != nullptr || !state_->queue.empty();
}

bool JobThread::has_log_id(std::int64_t log_id) const {
  std::lock_guard lock(state_->mutex);
  return state_->log_ids.contains(log_id);
}

bool JobThread::retired() const {
  std::lock_guard lock(state_->mutex);
  return state_->retired;
}

std::string JobThread::binding() const {
  std::lock_guard lock(state_->mutex);
  return state_->binding;
}

void JobThread::set_binding(std::string binding) {
  std::lock_guard lock(state_->mutex);
  state_->binding = std::move(binding);
}

WithdrawnRuns JobThread::stop_runs(const std::string& reason, bool end_thread) {
  WithdrawnRuns withdrawn;
  withdrawn.reason_ = reason;
  withdrawn.services_ = state_->services;
  std::lock_guard lock(state_->mutex);
  for (auto& run : state_->queue) {
    state_->log_ids.erase(run->trigger.log_id);
    withdrawn.queued_.push_back(std::move(run));
  }
  state_->queue.clear();
  withdrawn.executing_ = state_->current;
  if (end_thread) {
    state_->end_when_idle = true;
    state_->changed.notify_all();
  }
  return withdrawn;
}

void JobThread::shut_down(const std::string& reason) {
  {
    std::lock_guard lock(state_->mutex);
    state_->shutdown = true;
  }
  stop_runs(reason, true).settle();
}

bool JobThread::wait_retired(common::Clock::SteadyTime deadline) const {
  std::unique_lock lock(state_->mutex);
  return state_->changed.wait_until(lock, deadline, [this] { return state_->retired; });
}

void JobThread::abandon() noexcept {
  std::shared_ptr<JobRun> executing;
  {
    std::lock_guard lock(state_->mutex);
    executing = state_->current;
  }
  if (executing) {
    try {
      RunResult result;
      {
        std::lock_guard lock(executing->mutex);
        result = executing->stopped
                     ? executing->stop_result
                     : RunResult{kFailCode, "executor is stopping" + std::string(kKilledRunningSuffix)};
      }
      if (report_once(*executing, std::move(result), *state_->services)) {
        spdlog::warn("executor: job {} run {} did not return before shutdown ended; reported as "
                     "stopped and left running",
                     executing->trigger.job_id, executing->trigger.log_id);
      }
    } catch (...) {
      spdlog::error("executor: cannot report the abandoned run of job {}", state_->job_id);
    }
  }
  if (thread_.joinable()) thread_.detach();
}

}  // namespace cronwheel::executor
