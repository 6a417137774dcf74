#include "executor/src/callback_sender.h"

#include <algorithm>
#include <condition_variable>
#include <memory>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <stop_token>
#include <string_view>
#include <system_error>
#include <thread>
#include <unordered_set>
#include <utility>

#include <spdlog/spdlog.h>

#include "common/http/xxl_job_call.h"
#include "common/protocol/constants.h"
#include "executor/src/callback_spool.h"
#include "executor/src/result_journal.h"

namespace cronwheel::executor {
namespace {

using common::http::HttpClient;
using common::http::HttpClientOptions;
using common::protocol::CallbackBatch;
using common::protocol::HandleCallbackParam;
// The flush at stop() bounds real HTTP requests, so it counts the OS's time (see the header).
using SteadyClock = std::chrono::steady_clock;
using Results = std::vector<HandleCallbackParam>;

// A result waiting in memory, with its number in the journal (0: the journal could not take it).
struct Queued {
  std::uint64_t seq = 0;
  HandleCallbackParam result;
};

// Results taken from the queue together, and their journal numbers.
struct Batch {
  Results results;
  std::vector<std::uint64_t> seqs;
};

// At least the bytes `result` takes in a callback body: its text fields escaped at worst (a
// control character as \u00XX, a byte of invalid UTF-8 as U+FFFD), its numbers at their widest
// and its field names.
std::size_t json_bytes_bound(const HandleCallbackParam& result) {
  auto text = [](std::string_view s) {
    std::size_t n = 2;  // the quotes
    for (char c : s) {
      const auto byte = static_cast<unsigned char>(c);
      n += byte < 0x20 ? 6 : (c == '"' || c == '\\') ? 2 : byte >= 0x80 ? 3 : 1;
    }
    return n;
  };
  return 160 + text(result.handle_msg) + (result.output ? text(*result.output) : 0) +
         (result.not_started ? text(*result.not_started) : 0);
}

// How many of `results`, from `from` on, go in one request: at most `max_count`, and no more
// than `max_bytes` of them by json_bytes_bound(); at least one.
template <typename Results, typename Get>
std::size_t batch_size(const Results& results, std::size_t from, std::size_t max_count, std::size_t max_bytes,
                       Get get) {
  std::size_t n = 0, bytes = 0;
  while (from + n < results.size() && n < max_count) {
    bytes += json_bytes_bound(get(results[from + n]));
    if (n > 0 && bytes > max_bytes) break;
    ++n;
  }
  return n;
}

// What the background thread waits on, shared with the retry's timeout on the timer, which may
// come due after the sender is gone (it holds this weakly).
struct Wake {
  std::mutex mutex;  // the sender's: guards its queue and state too
  std::condition_variable changed;
  bool resend_due = false;  // the retry interval is up: re-send the spool
};

}  // namespace

struct CallbackSender::Impl {
  Impl(Options opts, common::Timer& timer_ref, const common::Clock& clock)
      : options(std::move(opts)),
        timer(timer_ref),
        spool(options.spool_dir, options.max_batch, clock),
        journal({options.spool_dir, options.journal_truncate_bytes, options.journal_segment_bytes},
                clock) {
    if (options.admin_addresses.empty()) {
      throw std::invalid_argument("callback sender: no admin address");
    }
    if (options.spool_dir.empty()) {
      throw std::invalid_argument("callback sender: spool_dir is empty");
    }
    if (options.retry_interval <= std::chrono::milliseconds::zero()) {
      throw std::invalid_argument("callback sender: retry_interval must be positive");
    }
    if (options.max_batch == 0 || options.max_batch_bytes == 0) {
      throw std::invalid_argument("callback sender: max_batch and max_batch_bytes must be positive");
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
  // them by hand (they also stay in the journal, which the next start reads). True when spooled.
  bool spool_or_log(const Results& results) {
    if (results.empty()) return true;
    if (spool.write(results)) return true;
    spdlog::error("callback: {} result(s) could be neither delivered nor spooled: {}",
                  results.size(), common::protocol::to_json_string(CallbackBatch{results}));
    return false;
  }

  // A batch was accepted by an admin or spooled: it no longer needs the journal nor memory.
  // The spool (when it took the batch) knows its log ids already, so has_result() never misses it.
  void settled(const Batch& batch) {
    journal.acknowledge(batch.seqs);
    std::lock_guard lock(mutex);
    for (const auto& r : batch.results) {
      if (auto it = pending_ids.find(r.log_id); it != pending_ids.end()) pending_ids.erase(it);
    }
  }

  // What a process that died left in its journal goes to the spool (durably) and is sent like any
  // spooled result; its journal files are removed only then.
  void adopt_orphans() {
    for (auto& orphan : journal.orphans()) {
      if (!orphan.results.empty()) {
        if (!spool.write(orphan.results)) {
          spdlog::error("result journal: {} result(s) of {} could not be spooled; kept for the next start",
                        orphan.results.size(), orphan.instance);
          continue;
        }
        spdlog::warn(
            "result journal: {} result(s) of an executor process that ended before delivering them ({}) "
            "to re-send",
            orphan.results.size(), orphan.instance);
      }
      journal.remove(orphan);
    }
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
        auto end = sent + batch_size(*results, sent, options.max_batch, options.max_batch_bytes,
                                     [](const HandleCallbackParam& r) -> const HandleCallbackParam& { return r; });
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

  // The first results in line, up to `limit` of them and, unless `bounded` is false, as many
  // as fit in a request's max_batch_bytes.
  Batch take_batch_locked(std::size_t limit, bool bounded = true) {
    auto count = bounded ? batch_size(queue, 0, limit, options.max_batch_bytes,
                                      [](const Queued& q) -> const HandleCallbackParam& { return q.result; })
                         : std::min(queue.size(), limit);
    Batch batch;
    batch.results.reserve(count);
    batch.seqs.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
      batch.results.push_back(std::move(queue[i].result));
      batch.seqs.push_back(queue[i].seq);
    }
    queue.erase(queue.begin(), queue.begin() + static_cast<std::ptrdiff_t>(count));
    in_flight = batch.results.size();
    return batch;
  }

  // Puts a batch back first in line.
  void requeue_locked(Batch& batch) {
    std::deque<Queued> front;
    for (std::size_t i = 0; i < batch.results.size(); ++i) {
      front.push_back({batch.seqs[i], std::move(batch.results[i])});
    }
    queue.insert(queue.begin(), std::make_move_iterator(front.begin()), std::make_move_iterator(front.end()));
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
          waiting = true;
          idle.notify_all();
          wake->changed.wait(lock);  // a push, the retry's timeout or stop()
          waiting = false;
          continue;
        }
        Batch batch = take_batch_locked(options.max_batch);
        lock.unlock();
        bool done = send(batch.results);
        lock.lock();
        // Spooled with the lock held, and in_flight cleared in the same step, so that backlog()
        // never counts a result both in flight and spooled (and refuses a run it should take).
        if (!done) done = spool.write(batch.results).has_value();
        in_flight = 0;
        if (done) {
          lock.unlock();
          settled(batch);
          lock.lock();
        }
        if (!done) {
          // Neither an admin nor the disk took it: keep it first in line and try again at the
          // next retry instead of spinning.
          requeue_locked(batch);
          held = true;
        }
      }
      lock.unlock();
      flush();
    } catch (const std::exception& e) {
      // Only allocation failures get here; stop() spools what is left in the queue.
      spdlog::critical("callback sender thread failed: {}", e.what());
    }
    std::lock_guard lock(mutex);
    worker_done = true;
    idle.notify_all();
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
      Batch batch = take_batch_locked(may_send ? options.max_batch : queue.size(), may_send);
      lock.unlock();
      bool sent = may_send && send_before(batch.results, deadline);
      if (may_send && !sent) admin_up = false;
      if (sent || spool_or_log(batch.results)) settled(batch);
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
  ResultJournal journal;  // every result pushed, until it is accepted or spooled

  std::shared_ptr<Wake> wake = std::make_shared<Wake>();
  std::mutex& mutex = wake->mutex;
  std::deque<Queued> queue;
  std::size_t in_flight = 0;  // results taken from the queue and not yet sent or spooled
  std::unordered_multiset<std::int64_t> pending_ids;  // log ids of the queued and in-flight results
  bool held = false;          // the last batch could not be sent nor spooled: wait for the retry
  bool waiting = false;       // the background thread waits for a push, a retry or stop()
  bool worker_done = false;   // the background thread has ended
  std::condition_variable idle;  // notified when `waiting` or `worker_done` is set
  bool started = false;
  bool stopped = false;  // pushes go straight to the spool
  SteadyClock::time_point flush_deadline;

  std::mutex lifecycle_mutex;  // serializes start() and stop()
  std::jthread worker;
};

CallbackSender::CallbackSender(Options options, common::Timer& timer, const common::Clock& clock)
    : impl_(std::make_unique<Impl>(std::move(options), timer, clock)) {}

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
  impl_->adopt_orphans();
  impl_->spool.recount();
  if (auto left = spooled(); left > 0) {
    spdlog::info("callback spool: {} result(s) from an earlier run to re-send", left);
  }
  impl_->worker = std::jthread([impl = impl_.get()](std::stop_token stop) { impl->run(stop); });
}

void CallbackSender::push(common::protocol::HandleCallbackParam result) {
  // First in the journal: from here on the result survives this process. After stop() the journal
  // is closed and takes nothing (0); the result then goes to the spool.
  const std::uint64_t seq = impl_->journal.append(result);
  std::unique_lock lock(impl_->mutex);
  if (impl_->stopped) {
    lock.unlock();
    if (impl_->spool_or_log({result})) impl_->journal.acknowledge({seq});
    return;
  }
  impl_->pending_ids.insert(result.log_id);
  impl_->queue.push_back({seq, std::move(result)});
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
  Batch left;
  {
    std::lock_guard lock(impl_->mutex);
    left = impl_->take_batch_locked(impl_->queue.size());
    impl_->in_flight = 0;
    impl_->stopped = true;
  }
  if (impl_->spool_or_log(left.results)) impl_->settled(left);
  // Empty and removed when everything was delivered or spooled; what was not stays for the next
  // start.
  impl_->journal.close();
}

std::size_t CallbackSender::queued() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->queue.size() + impl_->in_flight;
}

std::size_t CallbackSender::spooled() const { return impl_->spool.total(); }

std::size_t CallbackSender::backlog() const {
  // Under the mutex: the background thread spools a batch and clears in_flight under it too.
  std::lock_guard lock(impl_->mutex);
  return impl_->queue.size() + impl_->in_flight + impl_->spool.total();
}

void CallbackSender::wait_idle() const {
  std::unique_lock lock(impl_->mutex);
  impl_->idle.wait(lock, [impl = impl_.get()] {
    if (!impl->started || impl->worker_done || impl->stopped) return true;
    return impl->waiting && !impl->wake->resend_due && (impl->queue.empty() || impl->held);
  });
}

bool CallbackSender::has_result(std::int64_t log_id) const {
  {
    std::lock_guard lock(impl_->mutex);
    if (impl_->pending_ids.contains(log_id)) return true;
  }
  return impl_->spool.holds(log_id);
}

}  // namespace cronwheel::executor
