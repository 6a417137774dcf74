#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace cronwheel::common::http {

// HttpServer's handler threads: a fixed set of workers running tasks in arrival order, one
// complete request per task (the server's I/O thread only hands over requests that have fully
// arrived, so a task never waits for a client).
//
// Thread-safe. shutdown() lets the workers finish every queued task, then joins them.
class WorkerPool final {
 public:
  // `thread_name` names the worker threads (truncated to the OS limit of 15 characters).
  WorkerPool(std::size_t threads, std::string thread_name);
  ~WorkerPool();  // shutdown()

  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  void enqueue(std::function<void()> task);
  void shutdown();

  std::size_t queued() const;

 private:
  void run_worker();

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> tasks_;
  bool shutting_down_ = false;
  std::string thread_name_;
  std::vector<std::thread> threads_;
};

}  // namespace cronwheel::common::http
