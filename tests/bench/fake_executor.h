#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <queue>
#include <string>
#include <thread>
#include <vector>

#include "common/http/http_server.h"
#include "common/protocol/messages.h"

namespace cronwheel::bench {

// One /run as the fake executor received it.
struct Receipt {
  std::int64_t job_id = 0;
  std::int64_t scheduled_ms = 0;  // logDateTime: the fire's scheduled instant (epoch ms)
  std::int64_t log_id = 0;
  std::int64_t received_us = 0;   // system clock when the handler got the request (epoch µs)
  std::int64_t ended_us = 0;      // system clock when its result was queued for the callback; 0: still held
};

// An executor that does nothing but answer, for load benchmarks of the admin: an HttpServer of
// common/http on 127.0.0.1 (TCP_NODELAY, one I/O thread and a few workers) that speaks XXL-JOB 2.4's
// executor side. /run is answered success at once, after noting the receipt time, as the real
// executor answers before its job thread runs the handler; the run lasts `hold` (none by
// default), then its result (success) is queued, its end time noted, and called back to the
// admin the way the real executor's CallbackSender does it: one background thread, everything queued at the time in one request of at most
// `max_batch` results, to the first admin of the list that accepts it. A batch no admin accepts
// is retried after a short pause, never dropped. /beat and /idleBeat answer success, /kill and
// /log answer what an idle executor would.
//
// No run logs, no job threads, no spool: the point is that the executor costs next to nothing, so
// what a benchmark measures is the admin and its database.
//
// Threading: receipts() and the counters from any thread. start() once; stop() is idempotent and
// gives the callback thread at most `flush_timeout` to deliver what is queued; runs still held
// then never end (as on an executor stopped mid-run).
class FakeExecutor {
 public:
  struct Options {
    std::vector<std::string> admin_urls;  // "http://127.0.0.1:PORT/", in order of preference
    std::string access_token;
    std::size_t worker_threads = 4;
    std::size_t max_batch = 100;  // as the real executor's CallbackSender
    std::chrono::milliseconds hold{0};  // how long each run lasts, from its receipt to its result
  };

  explicit FakeExecutor(Options options);
  ~FakeExecutor();

  FakeExecutor(const FakeExecutor&) = delete;
  FakeExecutor& operator=(const FakeExecutor&) = delete;

  void start();
  void stop(std::chrono::milliseconds flush_timeout) noexcept;

  // "http://127.0.0.1:PORT/" once started.
  std::string address() const;

  // Everything received so far (a copy), in order of arrival per worker.
  std::vector<Receipt> receipts() const;
  std::size_t received() const { return received_.load(); }
  std::uint64_t callbacks_sent() const { return callbacks_sent_.load(); }
  std::uint64_t callback_requests() const { return callback_requests_.load(); }
  std::uint64_t callback_retries() const { return callback_retries_.load(); }
  // Results queued or being delivered; runs still held are not counted.
  std::size_t callbacks_queued() const;
  std::size_t held() const;

 private:
  // A run being held: its result is queued at `due_us`.
  struct Held {
    std::int64_t due_us = 0;
    std::size_t receipt = 0;  // index in receipts_
    common::protocol::HandleCallbackParam result;
    bool operator>(const Held& o) const { return due_us > o.due_us; }
  };

  void end_run(std::size_t receipt, common::protocol::HandleCallbackParam result);
  void run_callbacks();
  void run_holds();

  const Options options_;
  std::unique_ptr<common::http::HttpServer> server_;

  mutable std::mutex receipts_mutex_;
  std::vector<Receipt> receipts_;
  std::atomic<std::size_t> received_{0};

  mutable std::mutex queue_mutex_;
  std::condition_variable queue_changed_;
  std::vector<common::protocol::HandleCallbackParam> queue_;
  std::size_t in_flight_ = 0;
  std::priority_queue<Held, std::vector<Held>, std::greater<>> held_;  // guarded by queue_mutex_
  std::condition_variable held_changed_;
  std::thread hold_thread_;
  bool stopping_ = false;
  std::chrono::steady_clock::time_point flush_deadline_{};
  std::thread callback_thread_;
  std::atomic<std::uint64_t> callbacks_sent_{0};
  std::atomic<std::uint64_t> callback_requests_{0};
  std::atomic<std::uint64_t> callback_retries_{0};
  bool started_ = false;
  bool stopped_ = false;
};

}  // namespace cronwheel::bench
