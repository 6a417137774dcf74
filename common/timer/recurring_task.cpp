#include "common/timer/recurring_task.h"

#include <exception>
#include <stdexcept>
#include <utility>

#include <spdlog/spdlog.h>

namespace cronwheel::common {

void RecurringTasks::wait_idle() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return busy_ == 0; });
}

void RecurringTasks::wait_idle_tasks(std::size_t n) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this, n] { return live_ >= busy_ + n; });
}

void RecurringTasks::busy_changed(bool busy) noexcept {
  std::lock_guard lock(mutex_);
  if (busy) {
    ++busy_;
  } else {
    --busy_;
  }
  changed_.notify_all();
}

void RecurringTasks::live_changed(bool live) noexcept {
  std::lock_guard lock(mutex_);
  if (live) {
    ++live_;
  } else {
    --live_;
  }
  changed_.notify_all();
}

struct RecurringTask::State : std::enable_shared_from_this<State> {
  State(RecurringTasks& tasks_ref, Options options_in, Body body_in)
      : tasks(tasks_ref), options(std::move(options_in)), body(std::move(body_in)) {}

  RecurringTasks& tasks;
  const Options options;
  const Body body;

  std::mutex mutex;  // guards everything below, and RecurringTask::lane_
  std::condition_variable_any work;
  bool started = false;
  bool stopped = false;
  bool requested = false;  // a run is asked for and has not begun
  bool running = false;
  bool busy = false;       // requested or running, as counted by `tasks`
  bool timer_gone = false;
  Clock::SteadyTime next{};      // the next deadline
  Clock::SteadyTime timeout_for{};  // the deadline `timeout` was scheduled for
  TimerHandle timeout;

  void set_busy(bool now_busy) noexcept {
    if (busy == now_busy) return;
    busy = now_busy;
    tasks.busy_changed(now_busy);
  }

  void request() noexcept {
    requested = true;
    set_busy(true);
    work.notify_one();
  }

  // The timer's task for deadline `at`, on the timer's worker: marks a run as requested unless
  // the deadline is stale (moved on since) or a run is under way (which then skips it).
  void deadline_reached(Clock::SteadyTime at) noexcept {
    std::lock_guard lock(mutex);
    if (stopped || at != next || running) return;
    request();
  }

  // After a run: moves `next` past now when the run reached it and makes sure a timeout is on
  // the timer for it. Under `mutex`.
  void plan_next() noexcept {
    const auto now = tasks.clock().steady_now();
    const auto interval = std::chrono::duration_cast<Clock::SteadyTime::duration>(options.interval);
    if (next <= now) next += ((now - next) / interval + 1) * interval;
    if (timeout && timeout.state() == TimeoutState::kPending && timeout_for == next) return;
    timeout.cancel();  // a stale one; if it is already firing, deadline_reached ignores it
    schedule_timeout(now);
  }

  void schedule_timeout(Clock::SteadyTime now) noexcept {
    if (timer_gone) return;
    try {
      timeout = tasks.timer().schedule(
          [weak = weak_from_this(), at = next] {
            if (auto self = weak.lock()) self->deadline_reached(at);
          },
          next - now);
      timeout_for = next;
    } catch (const std::exception& e) {
      timer_gone = true;
      timeout = {};
      spdlog::error("{}: no further runs, its timer refused the next deadline: {}", options.name, e.what());
    }
  }

  void run_body(const std::stop_token& stop) noexcept {
    try {
      body(stop);
    } catch (const std::exception& e) {
      spdlog::error("{}: a run failed: {}", options.name, e.what());
    } catch (...) {
      spdlog::error("{}: a run failed with a non-standard exception", options.name);
    }
  }

  void lane(std::stop_token stop) noexcept {
    std::unique_lock lock(mutex);
    for (;;) {
      work.wait(lock, stop, [this] { return requested; });
      if (stop.stop_requested()) break;
      requested = false;
      running = true;
      lock.unlock();
      run_body(stop);
      lock.lock();
      running = false;
      if (stop.stop_requested()) break;
      plan_next();
      if (!requested) set_busy(false);
    }
    requested = false;
    set_busy(false);
  }
};

RecurringTask::RecurringTask(RecurringTasks& tasks, Options options, Body body) {
  if (options.interval.count() <= 0) throw std::invalid_argument(options.name + ": interval must be positive");
  if (options.first_delay.count() < 0) throw std::invalid_argument(options.name + ": first delay must not be negative");
  if (!body) throw std::invalid_argument(options.name + ": no body");
  state_ = std::make_shared<State>(tasks, std::move(options), std::move(body));
}

RecurringTask::~RecurringTask() { stop(); }

const RecurringTask::Options& RecurringTask::options() const noexcept { return state_->options; }

void RecurringTask::start() {
  State& s = *state_;
  std::lock_guard lock(s.mutex);
  if (s.started || s.stopped) throw std::logic_error(s.options.name + ": start() called twice or after stop()");
  s.started = true;
  s.tasks.live_changed(true);
  const auto now = s.tasks.clock().steady_now();
  s.next = now + s.options.first_delay;
  if (s.options.first_delay.count() == 0) {
    s.request();  // the lane plans the next deadline once this run is over
  } else {
    s.schedule_timeout(now);
  }
  lane_ = std::jthread([state = state_](std::stop_token stop) { state->lane(std::move(stop)); });
}

void RecurringTask::stop() noexcept {
  std::lock_guard stopping(stop_mutex_);
  State& s = *state_;
  std::jthread lane;
  TimerHandle timeout;
  {
    std::lock_guard lock(s.mutex);
    if (s.started && !s.stopped) s.tasks.live_changed(false);
    s.stopped = true;
    s.requested = false;
    lane = std::move(lane_);
    timeout = std::move(s.timeout);
  }
  timeout.cancel();
  if (lane.joinable()) {
    lane.request_stop();
    lane.join();
  }
  std::lock_guard lock(s.mutex);
  s.set_busy(false);
}

void RecurringTask::wake() noexcept {
  State& s = *state_;
  std::lock_guard lock(s.mutex);
  if (!s.started || s.stopped) return;
  s.request();
}

}  // namespace cronwheel::common
