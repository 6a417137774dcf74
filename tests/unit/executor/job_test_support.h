#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <stop_token>
#include <thread>

#include "tests/support/eventually.h"

// Helpers the executor's job tests share: waiting on conditions with a generous bound (never a
// bare sleep), and a latch handlers block on until the test releases them.
namespace cronwheel::executor::test {

// Long enough for a loaded 2-core machine; a test that needs it is failing anyway.
inline constexpr std::chrono::seconds kBound{20};

// Polls `condition` until it holds or kBound passes, for states nothing announces (a thread
// having ended, a process having gone).
inline bool eventually(const std::function<bool()>& condition,
                       std::chrono::milliseconds bound = kBound) {
  return cronwheel::testing::eventually(condition, bound, std::chrono::milliseconds(1));
}

// Handlers announce that a run started; tests wait for that, then release the handlers.
// Notifications are sent under the lock: a waiter may destroy the Signals as soon as it wakes.
class Signals {
 public:
  void started(std::int64_t log_id) {
    std::lock_guard lock(mutex_);
    started_.insert(log_id);
    changed_.notify_all();
  }
  bool wait_started(std::int64_t log_id) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, kBound, [&] { return started_.contains(log_id); });
  }
  bool has_started(std::int64_t log_id) const {
    std::lock_guard lock(mutex_);
    return started_.contains(log_id);
  }
  void release() {
    std::lock_guard lock(mutex_);
    released_ = true;
    changed_.notify_all();
  }
  // Waits for release() or a stop request on `stop` (at most kBound).
  void wait_release(std::stop_token stop = {}) {
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, stop, kBound, [&] { return released_; });
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable_any changed_;
  std::set<std::int64_t> started_;
  bool released_ = false;
};

}  // namespace cronwheel::executor::test
