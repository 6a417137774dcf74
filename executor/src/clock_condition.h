#pragma once

#include <list>
#include <mutex>
#include <stop_token>

#include "common/util/clock.h"

namespace cronwheel::executor {

// A condition variable whose timed waits run on a common::Clock: a wait ends when notify_all()
// is called or when the clock reaches its deadline, so a FakeClock's advance() in a test ends it
// exactly as time passing does in production (std::condition_variable::wait_until only knows the
// OS's clocks). Each wait parks in Clock::sleep_until with a stop source of its own, which
// notify_all() requests: a FakeClock counts such a wait as a sleeper (wait_for_sleepers).
//
// Contract, as for std::condition_variable: change what the predicate reads under the mutex of
// the lock the waiter holds, then call notify_all() (holding that mutex or not). A waiter checks
// the predicate and registers its stop source under that mutex before releasing it, so a change
// made after its check always finds it registered: no wake-up is lost.
//
// The predicate is checked before the clock is first read, so a waiter whose predicate already
// holds never touches the clock. notify_all() never touches the clock either: it may be called
// after the clock is gone.
//
// Thread-safe.
class ClockCondition {
 public:
  using SteadyTime = common::Clock::SteadyTime;

  // `clock` must outlive every wait (not notify_all()).
  explicit ClockCondition(common::Clock& clock) noexcept : clock_(clock) {}

  ClockCondition(const ClockCondition&) = delete;
  ClockCondition& operator=(const ClockCondition&) = delete;

  // Waits, with `lock` released meanwhile, until `ready()` holds or the clock reaches `deadline`.
  // Returns ready() as last checked (under the lock, which is held again on return).
  template <typename Lock, typename Predicate>
  bool wait_until(Lock& lock, SteadyTime deadline, Predicate ready) {
    while (!ready()) {
      if (clock_.steady_now() >= deadline) return false;
      std::list<std::stop_source>::iterator mine;
      {
        std::lock_guard guard(waiters_mutex_);
        mine = waiters_.emplace(waiters_.end());
      }
      const std::stop_token token = mine->get_token();
      lock.unlock();
      clock_.sleep_until(deadline, token);
      {
        std::lock_guard guard(waiters_mutex_);
        waiters_.erase(mine);
      }
      lock.lock();
    }
    return true;
  }

  // Ends every wait under way; each then checks its predicate again.
  void notify_all() noexcept {
    std::lock_guard guard(waiters_mutex_);
    for (auto& waiter : waiters_) waiter.request_stop();
  }

 private:
  common::Clock& clock_;
  std::mutex waiters_mutex_;  // guards waiters_; never held while sleeping
  std::list<std::stop_source> waiters_;
};

}  // namespace cronwheel::executor
