#include "common/http/worker_pool.h"

#include <pthread.h>

#include <algorithm>
#include <exception>
#include <utility>

#include <spdlog/spdlog.h>

namespace cronwheel::common::http {

WorkerPool::WorkerPool(std::size_t threads, std::string thread_name)
    : thread_name_(std::move(thread_name)) {
  if (thread_name_.size() > 15) thread_name_.resize(15);
  threads = std::max<std::size_t>(threads, 1);
  threads_.reserve(threads);
  for (std::size_t i = 0; i < threads; ++i) threads_.emplace_back([this] { run_worker(); });
}

WorkerPool::~WorkerPool() { shutdown(); }

void WorkerPool::enqueue(std::function<void()> task) {
  {
    std::lock_guard lock(mutex_);
    tasks_.push_back(std::move(task));
  }
  wake_.notify_one();
}

void WorkerPool::shutdown() {
  {
    std::lock_guard lock(mutex_);
    shutting_down_ = true;
  }
  wake_.notify_all();
  for (auto& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
}

std::size_t WorkerPool::queued() const {
  std::lock_guard lock(mutex_);
  return tasks_.size();
}

void WorkerPool::run_worker() {
  pthread_setname_np(pthread_self(), thread_name_.c_str());
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return shutting_down_ || !tasks_.empty(); });
      if (tasks_.empty()) return;  // shutting down and drained
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    try {
      task();
    } catch (const std::exception& e) {
      // Connection tasks catch their own errors; this only keeps a surprise from killing the
      // process.
      spdlog::error("http worker: unexpected exception: {}", e.what());
    } catch (...) {
      spdlog::error("http worker: unexpected non-standard exception");
    }
  }
}

}  // namespace cronwheel::common::http
