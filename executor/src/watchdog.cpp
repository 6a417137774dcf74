#include "executor/src/watchdog.h"

#include <pthread.h>

#include <exception>
#include <vector>

#include <spdlog/spdlog.h>

namespace cronwheel::executor {
namespace {

// With nothing scheduled the thread still wakes now and then; a new task wakes it at once.
constexpr auto kIdleWait = std::chrono::hours(1);

}  // namespace

Watchdog::Watchdog(common::Clock& clock) : clock_(clock) {
  thread_ = std::jthread([this] { loop(); });
}

Watchdog::~Watchdog() { stop(); }

Watchdog::TaskId Watchdog::schedule_at(common::Clock::SteadyTime deadline, Task task) {
  std::lock_guard lock(mutex_);
  if (stopping_) return 0;
  const TaskId id = next_id_++;
  const bool earliest = tasks_.empty() || deadline < tasks_.begin()->first.first;
  tasks_.emplace(std::pair{deadline, id}, std::move(task));
  deadlines_.emplace(id, deadline);
  if (earliest) wake_.request_stop();
  return id;
}

Watchdog::TaskId Watchdog::schedule_after(std::chrono::nanoseconds delay, Task task) {
  const auto now = clock_.steady_now();
  return schedule_at(now + std::chrono::duration_cast<common::Clock::SteadyTime::duration>(delay),
                     std::move(task));
}

bool Watchdog::cancel(TaskId id) noexcept {
  Task removed;  // destroyed outside the lock: it may own the last reference to anything
  {
    std::lock_guard lock(mutex_);
    auto it = deadlines_.find(id);
    if (it == deadlines_.end()) return false;
    auto node = tasks_.extract(std::pair{it->second, id});
    deadlines_.erase(it);
    if (!node.empty()) removed = std::move(node.mapped());
  }
  return true;
}

void Watchdog::stop() noexcept {
  decltype(tasks_) dropped;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    wake_.request_stop();
  }
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
  {
    std::lock_guard lock(mutex_);
    dropped.swap(tasks_);
    deadlines_.clear();
  }
}

std::size_t Watchdog::pending() const {
  std::lock_guard lock(mutex_);
  return tasks_.size();
}

void Watchdog::loop() noexcept {
  pthread_setname_np(pthread_self(), "job-watchdog");
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    const auto now = clock_.steady_now();
    if (!tasks_.empty() && tasks_.begin()->first.first <= now) {
      auto node = tasks_.extract(tasks_.begin());
      deadlines_.erase(node.key().second);
      lock.unlock();
      try {
        node.mapped()();
      } catch (const std::exception& e) {
        spdlog::error("executor watchdog: a task failed: {}", e.what());
      } catch (...) {
        spdlog::error("executor watchdog: a task failed with a non-standard exception");
      }
      node = {};  // destroy the task before taking the lock again
      lock.lock();
      continue;
    }
    const auto deadline = tasks_.empty() ? now + kIdleWait : tasks_.begin()->first.first;
    wake_ = std::stop_source();
    const auto token = wake_.get_token();
    lock.unlock();
    clock_.sleep_until(deadline, token);
    lock.lock();
  }
}

}  // namespace cronwheel::executor
