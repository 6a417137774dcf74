#include "admin/trigger/fire_thread_pool.h"

#include <pthread.h>

namespace cronwheel::admin {

FireThreadPool::FireThreadPool(Options options, Run run) : options_(std::move(options)), run_(std::move(run)) {}

FireThreadPool::~FireThreadPool() { shutdown(); }

bool FireThreadPool::submit(const PendingFire& fire) {
  std::list<std::thread> ended;
  {
    std::lock_guard lock(mutex_);
    if (shut_down_) return false;
    ended.splice(ended.end(), ended_);
    if (idle_ > queue_.size()) {
      // A thread is waiting for work and none has been promised to it yet.
      queue_.push_back(fire);
      work_.notify_one();
    } else if (workers_.size() < options_.max_threads) {
      // The new thread starts with this fire: it never sits in the queue, so it cannot make a
      // submit racing with the thread's start look like a full queue.
      auto self = workers_.emplace(workers_.end());
      const int number = ++spawned_;
      *self = std::thread([this, self, number, fire] { work(self, number, fire); });
    } else if (queue_.size() < options_.queue_capacity + idle_) {
      queue_.push_back(fire);
      work_.notify_one();
    } else {
      return false;
    }
  }
  for (auto& t : ended) t.join();
  return true;
}

void FireThreadPool::work(std::list<std::thread>::iterator self, int number, PendingFire first) {
  const std::string name = options_.name + "-" + std::to_string(number);
  pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
  std::unique_lock lock(mutex_);
  ++running_;
  lock.unlock();
  run_(first);
  lock.lock();
  --running_;
  for (;;) {
    if (queue_.empty() && !shut_down_) {
      ++idle_;
      const bool woken = work_.wait_for(lock, options_.idle_timeout, [&] { return !queue_.empty() || shut_down_; });
      --idle_;
      if (!woken) break;  // idle too long
    }
    if (shut_down_ || queue_.empty()) break;
    PendingFire fire = queue_.front();
    queue_.pop_front();
    ++running_;
    lock.unlock();
    run_(fire);
    lock.lock();
    --running_;
  }
  ended_.splice(ended_.end(), workers_, self);
  exited_.notify_all();
}

std::vector<PendingFire> FireThreadPool::close() noexcept {
  std::lock_guard lock(mutex_);
  shut_down_ = true;
  std::vector<PendingFire> never_started(queue_.begin(), queue_.end());
  queue_.clear();
  work_.notify_all();
  return never_started;
}

void FireThreadPool::join() noexcept {
  std::list<std::thread> ended;
  {
    std::unique_lock lock(mutex_);
    exited_.wait(lock, [&] { return workers_.empty(); });
    ended.splice(ended.end(), ended_);
  }
  for (auto& t : ended) t.join();
}

std::vector<PendingFire> FireThreadPool::shutdown() noexcept {
  auto never_started = close();
  join();
  return never_started;
}

std::size_t FireThreadPool::threads() const {
  std::lock_guard lock(mutex_);
  return workers_.size();
}

std::size_t FireThreadPool::queued() const {
  std::lock_guard lock(mutex_);
  return queue_.size();
}

std::size_t FireThreadPool::room() const {
  std::lock_guard lock(mutex_);
  if (shut_down_) return 0;
  const std::size_t capacity = options_.max_threads + options_.queue_capacity;
  const std::size_t taken = running_ + queue_.size();
  return taken >= capacity ? 0 : capacity - taken;
}

std::size_t FireThreadPool::running() const {
  std::lock_guard lock(mutex_);
  return running_;
}

bool FireThreadPool::wait_for_threads_at_most(std::size_t n, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return exited_.wait_for(lock, timeout, [&] { return workers_.size() <= n; });
}

}  // namespace cronwheel::admin
