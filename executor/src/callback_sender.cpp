#include "executor/src/callback_sender.h"

#include <algorithm>
#include <condition_variable>
#include <memory>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <stop_token>
#include <system_error>
#include <thread>
#include <utility>

#include <spdlog/spdlog.h>

#include "common/http/xxl_job_call.h"
#include "common/protocol/constants.h"
#include "executor/src/callback_spool.h"

namespace cronwheel::executor {
namespace {

using common::http::HttpClient;
using common::http::HttpClientOptions;
using common::protocol::CallbackBatch;
using common::protocol::HandleCallbackParam;
using SteadyClock = std::chrono::steady_clock;
using Results = std::vector<HandleCallbackParam>;

// What the background thread waits on, shared with the retry's timeout on the timer, which may
// come due after the sender is gone (it holds this weakly).
struct Wake {
  std::mutex mutex;  // the sender's: guards its queue and state too
  std::condition_variable changed;
  bool resend_due = false;  // the retry interval is up: re-send the spool
};

}  // namespace

struct CallbackSender::Impl {
  Impl(Options opts, common::Timer& timer_ref)
      : options(std::move(opts)), timer(timer_ref), spool(options.spool_dir, options.max_batch) {
    if (options.admin_addresses.empty()) {
      throw std::invalid_argument("callback sender: no admin address");
    }
    if (options.spool_dir.empty()) {
      throw std::invalid_argument("callback sender: spool_dir is empty");
    }
    if (options.retry_interval <= std::chrono::milliseconds::zero()) {
      throw std::invalid_argument("callback sender: retry_interval must be positive");
    }
    if (options.max_batch == 0) {
      throw std::invalid_argument("callback sender: max_batch must be positive");
    }
    options.http.access_token = options.access_token;
    clients = make_clients(options.http);  // throws std::invalid_argument for a bad URL
  }

  std::vector<HttpClient> make_clients(const HttpClientOptions& http) const {
    std::vector<HttpClient> out;
    out.reserve(options.admin_addresses.size());
    for (const auto& address : options.admin_addresses) out.emplace_back(address, http);
    return out;
  }

  // ---- sending (background thread only) ----

  // Asks one admin to take a batch (`body`, `count` results); true when it accepted it.
  static bool offer(HttpClient& admin, const std::string& body, std::size_t count) {
    auto answer =
        common::http::post_xxl_job<std::string>(admin, common::protocol::kCallbackPath, body);
    if (answer.is_success()) {
      spdlog::debug("callback: {} result(s) accepted by {}", count, admin.base_url());
      return true;
    }
    spdlog::warn("callback: {} result(s) not accepted by {}: {}", count, admin.base_url(),
                 answer.msg);
    return false;
  }

  // Sends one batch to the admins in order; true once one accepted it.
  bool send(const Results& batch) {
    const std::string body = common::protocol::to_json_string(CallbackBatch{batch});
    for (auto& admin : clients) {
      if (offer(admin, body, batch.size())) return true;
    }
    return false;
  }

  // send(), but giving up at `deadline`: each request's HTTP timeouts are cut to the time left.
  bool send_before(const Results& batch, SteadyClock::time_point deadline) {
    const std::string body = common::protocol::to_json_string(CallbackBatch{batch});
    const auto& http = options.http;
    for (std::size_t i = 0; i < clients.size(); ++i) {
      auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now());
      if (left <= std::chrono::milliseconds::zero()) return false;
      if (left >= http.connect_timeout && left >= http.read_timeout && left >= http.write_timeout) {
        if (offer(clients[i], body, batch.size())) return true;
        continue;
      }
      HttpClientOptions cut = http;
      cut.connect_timeout = std::min(http.connect_timeout, left);
      cut.read_timeout = std::min(http.read_timeout, left);
      cut.write_timeout = std::min(http.write_timeout, left);
      HttpClient quick(options.admin_addresses[i], cut);
      if (offer(quick, body, batch.size())) return true;
    }
    return false;
  }

  // ---- what goes to the spool (any thread) ----

  // Writes results that cannot be sent; as a last resort logs them, so an operator can replay
  // them by hand.
  void spool_or_log(const Results& results) {
    if (results.empty()) return;
    if (spool.write(results)) return;
    spdlog::error("callback: {} result(s) could be neither delivered nor spooled: {}",
                  results.size(), common::protocol::to_json_string(CallbackBatch{results}));
  }

  // One pass over the spool: re-sends each file, oldest first, removing it once all of it was
  // accepted. After the first failure the pass only counts the files it has not seen yet.
  void resend_spool(const std::stop_token& stop) {
    auto names = spool.list();
    spool.keep_only(names);
    bool admin_up = true;
    for (const auto& name : names) {
      if (stop.stop_requested()) return;
      if (!admin_up && spool.counted(name)) continue;
      bool gone = false;
      auto fd = spool.lock(name, gone);
      if (!fd) {
        if (gone) spool.forget(name);
        continue;
      }
      auto results = spool.read(*fd, name);  // counts it
      if (!results) continue;
      if (!admin_up) continue;

      std::size_t sent = 0;
      while (sent < results->size()) {
        auto end = std::min(results->size(), sent + options.max_batch);
        Results batch(results->begin() + static_cast<std::ptrdiff_t>(sent),
                      results->begin() + static_cast<std::ptrdiff_t>(end));
        if (!send(batch)) {
          admin_up = false;
          break;
        }
        sent = end;
      }
      if (sent == 0 && !results->empty()) continue;
      if (sent < results->size()) {
        // Keep the rest in a file of its own before the old one goes; if that fails the old file
        // stays and its accepted part is sent again later (the admin ignores repeats).
        Results rest(results->begin() + static_cast<std::ptrdiff_t>(sent), results->end());
        if (!spool.write(rest)) continue;
      }
      if (!spool.remove(name)) continue;
      if (!results->empty()) {
        spdlog::info("callback spool: {} spooled result(s) delivered from {}", sent, name);
      }
    }
  }

  // ---- the background thread ----

  Results take_batch_locked(std::size_t limit) {
    auto count = std::min(queue.size(), limit);
    Results batch(std::make_move_iterator(queue.begin()),
                  std::make_move_iterator(queue.begin() + static_cast<std::ptrdiff_t>(count)));
    queue.erase(queue.begin(), queue.begin() + static_cast<std::ptrdiff_t>(count));
    in_flight = batch.size();
    return batch;
  }

  // Puts the next retry on the timer: its task only marks the re-send as due and wakes the
  // background thread. A stopped timer refuses it: then no further retry comes (logged).
  void schedule_resend() {
    try {
      resend = timer.schedule(
          [weak = std::weak_ptr<Wake>(wake)] {
            if (auto w = weak.lock()) {
              {
                std::lock_guard lock(w->mutex);
                w->resend_due = true;
              }
              w->changed.notify_all();
            }
          },
          options.retry_interval);
    } catch (const std::exception& e) {
      spdlog::error("callback sender: no further retries of the spool: {}", e.what());
    }
  }

  void run(const std::stop_token& stop) noexcept {
    try {
      resend_spool(stop);
      schedule_resend();
      // stop() ends the wait at once, as a push does.
      std::stop_callback on_stop(stop, [this] { interrupt_wait(); });
      std::unique_lock lock(mutex);
      while (!stop.stop_requested()) {
        if (wake->resend_due) {
          // Before the queue, so a steady stream of new results cannot starve the spool.
          wake->resend_due = false;
          held = false;
          lock.unlock();
          resend_spool(stop);
          schedule_resend();
          lock.lock();
          continue;
        }
        if (queue.empty() || held) {
          wake->changed.wait(lock);  // a push, the retry's timeout or stop()
          continue;
        }
        Results batch = take_batch_locked(options.max_batch);
        lock.unlock();
        bool done = send(batch) || spool.write(batch).has_value();
        lock.lock();
        in_flight = 0;
        if (!done) {
          // Neither an admin nor the disk took it: keep it first in line and try again at the
          // next retry instead of spinning.
          queue.insert(queue.begin(), std::make_move_iterator(batch.begin()),
                       std::make_move_iterator(batch.end()));
          held = true;
        }
      }
      lock.unlock();
      flush();
    } catch (const std::exception& e) {
      // Only allocation failures get here; stop() spools what is left in the queue.
      spdlog::critical("callback sender thread failed: {}", e.what());
    }
  }

  // Ends the background thread's wait (stop()). Taking the mutex first means the thread is
  // either waiting (and is woken) or has yet to look at its stop token.
  void interrupt_wait() noexcept {
    { std::lock_guard lock(mutex); }
    wake->changed.notify_all();
  }

  // After stop(): sends what is queued while time is left, spools the rest, and hands later
  // pushes over to the spool (stopped).
  void flush() {
    bool admin_up = true;
    std::unique_lock lock(mutex);
    while (!queue.empty()) {
      auto deadline = flush_deadline;
      bool may_send = admin_up && SteadyClock::now() < deadline;
      // Once nothing more is sent, everything left goes to one file.
      Results batch = take_batch_locked(may_send ? options.max_batch : queue.size());
      lock.unlock();
      bool sent = may_send && send_before(batch, deadline);
      if (may_send && !sent) admin_up = false;
      if (!sent) spool_or_log(batch);
      lock.lock();
      in_flight = 0;
    }
    stopped = true;
  }

  Options options;
  std::vector<HttpClient> clients;  // used by the background thread only

  common::Timer& timer;        // the retries'; flushing at stop() counts real time
  common::TimerHandle resend;  // the next retry; the background thread's, then stop()'s
  CallbackSpool spool;

  std::shared_ptr<Wake> wake = std::make_shared<Wake>();
  std::mutex& mutex = wake->mutex;
  std::deque<HandleCallbackParam> queue;
  std::size_t in_flight = 0;  // results taken from the queue and not yet sent or spooled
  bool held = false;          // the last batch could not be sent nor spooled: wait for the retry
  bool started = false;
  bool stopped = false;  // pushes go straight to the spool
  SteadyClock::time_point flush_deadline;

  std::mutex lifecycle_mutex;  // serializes start() and stop()
  std::jthread worker;
};

CallbackSender::CallbackSender(Options options, common::Timer& timer)
    : impl_(std::make_unique<Impl>(std::move(options), timer)) {}

CallbackSender::~CallbackSender() {
  try {
    stop(std::chrono::milliseconds::zero());
  } catch (const std::exception& e) {
    spdlog::error("callback sender: stop failed: {}", e.what());
  } catch (...) {
    spdlog::error("callback sender: stop failed");
  }
}

void CallbackSender::start() {
  std::lock_guard lifecycle(impl_->lifecycle_mutex);
  {
    std::lock_guard lock(impl_->mutex);
    if (impl_->started || impl_->stopped) {
      throw std::logic_error("callback sender: start() called twice or after stop()");
    }
    impl_->started = true;
  }
  impl_->spool.create_dir();
  impl_->spool.recount();
  if (auto left = spooled(); left > 0) {
    spdlog::info("callback spool: {} result(s) from an earlier run to re-send", left);
  }
  impl_->worker = std::jthread([impl = impl_.get()](std::stop_token stop) { impl->run(stop); });
}

void CallbackSender::push(common::protocol::HandleCallbackParam result) {
  std::unique_lock lock(impl_->mutex);
  if (impl_->stopped) {
    lock.unlock();
    impl_->spool_or_log({std::move(result)});
    return;
  }
  impl_->queue.push_back(std::move(result));
  lock.unlock();
  impl_->wake->changed.notify_all();
}

void CallbackSender::stop(std::chrono::milliseconds flush_timeout) {
  std::lock_guard lifecycle(impl_->lifecycle_mutex);
  {
    std::lock_guard lock(impl_->mutex);
    if (impl_->stopped) return;
    impl_->flush_deadline = SteadyClock::now() + flush_timeout;
  }
  if (impl_->worker.joinable()) {
    impl_->worker.request_stop();
    impl_->worker.join();
  }
  impl_->resend.cancel();  // the thread is gone: its handle is ours
  // Never started, or the thread failed: spool what is left.
  Results left;
  {
    std::lock_guard lock(impl_->mutex);
    left.assign(std::make_move_iterator(impl_->queue.begin()),
                std::make_move_iterator(impl_->queue.end()));
    impl_->queue.clear();
    impl_->stopped = true;
  }
  impl_->spool_or_log(left);
}

std::size_t CallbackSender::queued() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->queue.size() + impl_->in_flight;
}

std::size_t CallbackSender::spooled() const { return impl_->spool.total(); }

}  // namespace cronwheel::executor
