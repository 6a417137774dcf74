#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "common/http/http_client.h"
#include "common/protocol/messages.h"
#include "common/timer/timer.h"
#include "common/util/clock.h"

namespace cronwheel::executor {

// Delivers run results to the admin (POST {admin}/api/callback, XXL-JOB 2.4 body: a bare JSON
// array of HandleCallbackParam): the delivery policy. The spool files themselves (format, locks,
// fsync) are CallbackSpool's (callback_spool.h).
//
// Every result is first appended to a journal (ResultJournal, result_journal.h: one write(2), no
// fsync) in spool_dir, so it survives the death of this process from the moment push() returns:
// start() sends what a process that died left there, and a result an admin accepted (or that was
// spooled) is marked acknowledged there, so it is not sent again after a restart.
//
// Results are sent in batches by a background thread, to the first admin that accepts them
// (HTTP 200 with ReturnT code 200). When none does, the batch is written to a new spool file
// under spool_dir (durably, before it is dropped from memory) and re-sent every retry_interval;
// start() also re-sends what an earlier process left in the spool. A spool file is removed only
// after every result in it was accepted; when part of a file was accepted and an admin then
// failed, the rest is written to a new file before the old one is removed, so a crash in between
// can only cause a result to be sent twice. Together with the admin ignoring a result it already
// has, every result is recorded exactly once.
//
// Batching: each request carries everything queued at the time, up to max_batch results and
// max_batch_bytes of body. A pass
// over the spool comes before the queue once the retry interval is up, so a steady stream of new
// results cannot starve it; after the first failure the pass only counts the files it has not
// seen. A batch neither an admin nor the disk takes stays first in line until the next retry.
//
// Threading: push(), queued(), spooled(), backlog() and has_result() are thread-safe and never
// wait for the network. The
// background thread owns the HTTP clients (one per admin) and is the only one that sends.
// start() and stop() may be called from any thread.
//
// Time: the next retry is a timeout on the injected Timer (the executor's periodic wheel), which
// wakes the background thread; a push or stop() wakes it at once. The injected Clock (the timer's)
// names the spool and journal files. stop()'s flush_timeout is the OS's steady time, not the
// clock's: it bounds real HTTP requests, whose timeouts the OS keeps.
class CallbackSender {
 public:
  struct Options {
    std::vector<std::string> admin_addresses;
    std::string access_token;
    std::filesystem::path spool_dir;
    std::chrono::milliseconds retry_interval{std::chrono::seconds(30)};
    // A request's results, at most: a thousand keep up with 10,000 runs a second from one
    // executor (docs/benchmarks.md, "Results in batches of a thousand"), and
    std::size_t max_batch = 1000;
    // its body's bytes, at most (a bound counted from each result's fields, their text escaped
    // at worst): a cronwheel admin takes a callback body of up to 5 MiB, and a result's message
    // may hold 50 KB. A single result over it still goes alone.
    std::size_t max_batch_bytes = std::size_t{2} << 20;
    // The journal's file sizes (ResultJournal::Options).
    std::size_t journal_truncate_bytes = std::size_t{1} << 20;
    std::size_t journal_segment_bytes = std::size_t{8} << 20;
    common::http::HttpClientOptions http;  // access_token is taken from above
  };

  // Throws std::invalid_argument when there is no admin address, an address is not an http(s)
  // URL, spool_dir is empty, retry_interval is not positive or max_batch or max_batch_bytes is 0.
  // Does no I/O.
  // `timer` must outlive the sender's stop(); a retry due after it finds nothing to wake.
  // `clock` (the one `timer` runs on) must outlive the sender.
  CallbackSender(Options options, common::Timer& timer, const common::Clock& clock);
  ~CallbackSender();  // stop(0): whatever is still queued is spooled

  CallbackSender(const CallbackSender&) = delete;
  CallbackSender& operator=(const CallbackSender&) = delete;

  // Creates spool_dir if needed, moves the results a process that died left in its journal to the
  // spool, counts what earlier processes left there and starts the background thread, which
  // re-sends the spool first. Results pushed before start() wait in memory (and the journal) and
  // go out with the first batches. Throws std::logic_error when called twice or after stop().
  void start();

  // Appends a result to the journal and queues it for delivery. After stop() it is written to the
  // spool directly (on the calling thread, which then waits for the disk, never for the network);
  // the next sender on the same spool_dir delivers it. Results are never dropped, unless the spool
  // cannot be written while stopping, in which case they are logged at error level, whole, and
  // stay in the journal for the next start.
  void push(common::protocol::HandleCallbackParam result);

  // Stops the background thread: what is queued is sent if an admin accepts it within
  // `flush_timeout`, and spooled otherwise. Returns within flush_timeout plus at most one
  // request's HTTP timeouts (a request already under way when stop() is called finishes first;
  // requests made while flushing have their timeouts cut to the time left). When start() was
  // never called, the queued results are spooled without sending. Nothing is sent after stop()
  // returns. Idempotent.
  void stop(std::chrono::milliseconds flush_timeout);

  // Results waiting in memory (queued or being sent), and on disk in the spool files this sender
  // wrote or last read (files of other live senders are not counted). For tests and metrics.
  std::size_t queued() const;
  std::size_t spooled() const;
  // queued() + spooled(), read as one (a result moving from memory to the spool is counted
  // once): the results no admin has accepted yet.
  std::size_t backlog() const;

  // For tests that drive the retries by hand: blocks until the background thread has done all it
  // can before the next push, retry or stop(), that is until it waits with nothing queued (or
  // with a batch neither an admin nor the disk took), no re-send due, and its next retry on the
  // timer. Returns at once before start(), after stop() or once the thread has failed.
  void wait_idle() const;

  // Whether this sender still holds a result for the run `log_id` (queued, being sent, or in a
  // spool file it wrote or read), i.e. the admin will get it from this sender. A result pushed
  // is held from the end of push() until an admin accepted it.
  bool has_result(std::int64_t log_id) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cronwheel::executor
