#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>

namespace cronwheel::common::http {

// The task queue HttpServer gives cpp-httplib (through Server::new_task_queue): a fixed set of
// worker threads, one accepted connection per task. A keep-alive connection occupies its worker
// for as long as it stays open, so connections beyond the pool size wait in the queue; an idle
// keep-alive connection gives its worker up when claim_yield() says a connection is waiting.
//
// Thread-safe. shutdown() lets the workers finish every queued task, then joins them.
class WorkerPool final : public httplib::TaskQueue {
 public:
  // `thread_name` names the worker threads (truncated to the OS limit of 15 characters).
  WorkerPool(std::size_t threads, std::string thread_name);
  ~WorkerPool() override;

  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  void enqueue(std::function<void()> task) override;
  void shutdown() override;

  // True at most once per queued task: the caller may close an idle keep-alive connection so a
  // waiting one gets its worker.
  bool claim_yield();

  std::size_t queued() const;

 private:
  void run_worker();

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> tasks_;
  std::size_t yield_claims_ = 0;  // never more than tasks_.size()
  bool shutting_down_ = false;
  std::string thread_name_;
  std::vector<std::thread> threads_;
};

}  // namespace cronwheel::common::http
