#pragma once

// One bounded pool of trigger threads (TriggerPools has a fast and a slow one).
//
// Threads are created on demand, one per fire submitted while none is idle, up to
// `max_threads`; a thread idle for `idle_timeout` ends. When every thread is busy, fires wait in
// a FIFO queue of at most `queue_capacity`; beyond that submit() refuses, and the caller fails
// the fire visibly. So a burst is absorbed by threads first (a trigger is mostly waiting on an
// executor's answer), then by the queue, and the pool never grows without bound.
//
// Thread-safe. The run function is called on the pool's threads, for one fire at a time per
// thread, and must not throw (FireSender::send never does). shutdown() refuses new fires, gives
// back the queued ones (never started) and waits for the running ones to return.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <list>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "admin/model/fire.h"

namespace cronwheel::admin {

class FireThreadPool {
 public:
  struct Options {
    std::string name = "trigger";  // thread names: <name>-<n>, cut to the OS's 15 characters
    std::size_t max_threads = 1;
    std::size_t queue_capacity = 0;
    std::chrono::milliseconds idle_timeout{60'000};
  };
  using Run = std::function<void(const PendingFire&)>;

  FireThreadPool(Options options, Run run);
  ~FireThreadPool();  // shutdown()

  FireThreadPool(const FireThreadPool&) = delete;
  FireThreadPool& operator=(const FireThreadPool&) = delete;

  // Runs `fire` on a pool thread soon; false when the pool is at its maximum with a full queue,
  // or shut down.
  bool submit(const PendingFire& fire);

  // Stops taking fires and answers the queued ones, which never started, in queue order.
  // Running ones go on. Idempotent.
  std::vector<PendingFire> close() noexcept;
  // Waits until every running fire has returned and every thread has ended; call after close().
  void join() noexcept;
  // close() then join(): answers the fires that never started.
  std::vector<PendingFire> shutdown() noexcept;

  std::size_t threads() const;  // alive now
  std::size_t queued() const;   // waiting for a thread
  std::size_t running() const;  // being run now
  // How many more fires submit() takes now at least (threads not yet running a fire, up to the
  // maximum, plus free queue places); 0 when shut down.
  std::size_t room() const;

  // Waits up to `timeout` until at most `n` threads are alive (idle threads ending).
  bool wait_for_threads_at_most(std::size_t n, std::chrono::milliseconds timeout);

 private:
  void work(std::list<std::thread>::iterator self, int number, PendingFire first);

  const Options options_;
  const Run run_;

  mutable std::mutex mutex_;
  std::condition_variable work_;    // a fire was queued, or shutdown
  std::condition_variable exited_;  // a thread ended
  std::deque<PendingFire> queue_;
  std::list<std::thread> workers_;  // alive
  std::list<std::thread> ended_;    // ended, to be joined
  std::size_t idle_ = 0;
  std::size_t running_ = 0;
  int spawned_ = 0;
  bool shut_down_ = false;
};

}  // namespace cronwheel::admin
