#pragma once

// Group commit: many threads each ask for one small write (or read), and the requests that
// arrive while one batch is being written go together into the next, written by one call of a
// batch function — one statement and one transaction for many callers instead of one each.
//
// There is no thread and no timer: the caller that finds no batch under way (fewer than
// `max_in_flight` running) runs one itself, with every request queued at that moment (its own
// among them, at most `max_batch`), and hands each caller its answer. A lone caller therefore
// waits for nothing (a batch of one, at once); under load, batches grow with the load and the
// number of database round trips stays at about `max_in_flight` at a time, whatever the number of
// callers.
//
//   GroupCommit<Claim, bool> claims({.max_batch = 1'000}, [&](const std::vector<Claim>& batch) {
//     return store.claim_all(batch);  // one answer per request, in order
//   });
//   bool mine = claims.call(claim);    // from any number of threads
//
// The batch function gets the requests in arrival order and must answer exactly one response
// per request, in that order (anything else throws std::logic_error to every caller of the
// batch). When it throws, every caller of that batch gets the exception: a batch is one
// transaction, so none of it was written.
//
// Thread-safe. The batch function runs on a caller's thread, never two batches at once beyond
// max_in_flight, and never with the group's lock held.

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace cronwheel::common {

template <class Request, class Response>
class GroupCommit {
 public:
  struct Options {
    std::size_t max_batch = 1'000;   // requests in one batch at most
    std::size_t max_in_flight = 1;   // batches running at once at most
  };
  using Batch = std::function<std::vector<Response>(const std::vector<Request>& requests)>;

  GroupCommit(Options options, Batch batch) : options_(options), batch_(std::move(batch)) {
    if (options_.max_batch == 0 || options_.max_in_flight == 0) {
      throw std::invalid_argument("GroupCommit: max_batch and max_in_flight must be positive");
    }
  }

  GroupCommit(const GroupCommit&) = delete;
  GroupCommit& operator=(const GroupCommit&) = delete;

  // Returns this request's response once its batch is written; throws what the batch threw.
  Response call(Request request) {
    Slot slot(std::move(request));
    std::unique_lock lock(mutex_);
    queue_.push_back(&slot);
    for (;;) {
      if (slot.done) break;
      if (in_flight_ < options_.max_in_flight && slot.queued) {
        lead(lock);
        continue;
      }
      slot.wake.wait(lock);
    }
    if (slot.error) std::rethrow_exception(slot.error);
    return std::move(*slot.response);
  }

  // Requests waiting for a batch (not in one yet).
  std::size_t queued() const {
    std::lock_guard lock(mutex_);
    return queue_.size();
  }
  // Batches written so far, and requests in them (for statistics and tests).
  std::size_t batches() const {
    std::lock_guard lock(mutex_);
    return batches_;
  }
  std::size_t requests() const {
    std::lock_guard lock(mutex_);
    return requests_;
  }

 private:
  struct Slot {
    explicit Slot(Request r) : request(std::move(r)) {}
    Request request;
    std::optional<Response> response;
    std::exception_ptr error;
    bool queued = true;
    bool done = false;
    std::condition_variable wake;
  };

  // Runs one batch of the queue's oldest requests; called and returns with `lock` held.
  void lead(std::unique_lock<std::mutex>& lock) {
    std::vector<Slot*> batch;
    const std::size_t n = std::min(options_.max_batch, queue_.size());
    batch.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      batch.push_back(queue_.front());
      batch.back()->queued = false;
      queue_.pop_front();
    }
    ++in_flight_;
    ++batches_;
    requests_ += n;
    lock.unlock();

    std::vector<Request> requests;
    requests.reserve(n);
    for (Slot* s : batch) requests.push_back(std::move(s->request));
    std::exception_ptr error;
    std::vector<Response> responses;
    try {
      responses = batch_(requests);
      if (responses.size() != requests.size()) {
        throw std::logic_error("GroupCommit: the batch function answered " + std::to_string(responses.size()) +
                               " responses to " + std::to_string(requests.size()) + " requests");
      }
    } catch (...) {
      error = std::current_exception();
    }

    lock.lock();
    for (std::size_t i = 0; i < n; ++i) {
      Slot* s = batch[i];
      if (error) {
        s->error = error;
      } else {
        s->response.emplace(std::move(responses[i]));
      }
      s->done = true;
      s->wake.notify_one();
    }
    --in_flight_;
    // The oldest waiting request leads the next batch.
    if (!queue_.empty()) queue_.front()->wake.notify_one();
  }

  const Options options_;
  const Batch batch_;
  mutable std::mutex mutex_;
  std::deque<Slot*> queue_;  // requests not in a batch yet, oldest first
  std::size_t in_flight_ = 0;
  std::size_t batches_ = 0;
  std::size_t requests_ = 0;
};

}  // namespace cronwheel::common
