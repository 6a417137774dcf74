#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "admin/model/executor_client.h"
#include "common/http/http_client.h"
#include "common/util/clock.h"

namespace cronwheel::admin {

// ExecutorClient over common/http's HttpClient: XXL-JOB 2.4 calls with the access token
// header, over kept-alive connections (TCP_NODELAY) that are reused across calls.
//
// An HttpClient holds one connection and serves one thread at a time, so each call checks one
// out of a pool kept per (address, access token) and gives it back after; a call finding no idle
// connection opens a new one, up to max_connections_per_address open at once (in use or idle).
// Beyond that a call waits for a connection to be given back (at most connection_wait, then it
// fails without reaching the executor). So hundreds of trigger threads posting to one executor
// share a bounded set of kept-alive connections instead of opening and closing one per call.
// A connection idle for longer than max_idle_time is closed instead of reused, and pools of
// addresses no longer called disappear with their last connection.
//
// A connection whose call failed in transport is closed rather than reused.
//
// One failure is retried, at once and once, on a new connection, for every call (/run included):
// the stale kept-alive connection. The executor closes an idle connection (its keep-alive timeout,
// its per-client connection limit evicting idle ones, a restart) while the admin is about to send
// on it; cpp-httplib checks for the close before sending, but a close that lands between that
// check and the write, or while the request is on the wire, fails the call. It is recognised as:
// the connection was reused, and the executor closed or reset it either before the request was
// written whole (cpp-httplib's Error::Write, fast: the executor cannot have a request it did not
// get whole) or after it was written but before sending a single byte of an answer, well before
// the read timeout (Error::Read with no answer head). The second is the case curl, okhttp and
// Go's transport also retry on a reused connection: an executor that is alive does not read a
// request and then close the connection without answering it, so the executor closed the
// connection before reading the request. If it was not alive (it died while reading), the new
// connection fails too, and the call ends with 502 (may have reached the executor) so that a
// /run is checked with /log before anything is sent again (delivery_check.h).
//
// Nothing else is retried: a read timeout after the request was written (the executor may be
// running it: 502), an answer that broke off after its head, a refused connect (the executor is
// down: a new connect at once fares no better), a send that timed out.
//
// Thread-safe.
class HttpExecutorClient final : public ExecutorClient {
 public:
  struct Options {
    std::chrono::milliseconds connect_timeout{3'000};
    // The executor answers /run as soon as it has queued the run.
    std::chrono::milliseconds read_timeout{10'000};
    std::chrono::milliseconds write_timeout{10'000};
    // Connections open at once per (address, access token), in use or idle.
    std::size_t max_connections_per_address = 64;
    // How long a call waits for one of them when all are in use.
    std::chrono::milliseconds connection_wait{10'000};
    // Shorter than the executors' own keep-alive timeout (cronwheel's: 15 s; XXL-JOB's Java
    // executor: 90 s), so the executor rarely closes a connection the admin is about to use (when
    // it does, by eviction or restart, the call is sent again on a new connection, above).
    std::chrono::milliseconds max_idle_time{5'000};
  };

  // `clock` ages idle connections (steady time). It must outlive the client.
  explicit HttpExecutorClient(common::Clock& clock = common::SystemClock::instance());
  HttpExecutorClient(common::Clock& clock, Options options);
  ~HttpExecutorClient() override;

  HttpExecutorClient(const HttpExecutorClient&) = delete;
  HttpExecutorClient& operator=(const HttpExecutorClient&) = delete;

  Result beat(const std::string& address, const std::string& access_token) override;
  Result idle_beat(const std::string& address, const std::string& access_token, std::int32_t job_id) override;
  Result run(const std::string& address, const std::string& access_token,
             const common::protocol::TriggerParam& trigger) override;
  Result kill(const std::string& address, const std::string& access_token, std::int32_t job_id) override;
  common::protocol::ReturnT<common::protocol::LogResult> log(const std::string& address,
                                                             const std::string& access_token,
                                                             const common::protocol::LogParam& param) override;

  // Idle connections kept now, over every address (metrics and tests).
  std::size_t idle_connections() const;
  // Connections checked out by calls now, over every address.
  std::size_t busy_connections() const;
  // Calls waiting for a connection now, over every address.
  std::size_t waiting_calls() const;
  // Pools (address, token pairs) kept now.
  std::size_t pools() const;

 private:
  using Key = std::pair<std::string, std::string>;  // (address, access token)
  struct Idle {
    std::unique_ptr<common::http::HttpClient> client;
    common::Clock::SteadyTime since;
  };
  struct Pool {
    std::vector<Idle> idle;  // most recently given back last
    std::size_t busy = 0;     // checked out (or being opened) by calls
    std::size_t waiting = 0;  // calls waiting for one
    std::condition_variable freed;
  };

  template <class T>
  common::protocol::ReturnT<T> call(const std::string& address, const std::string& access_token,
                                    std::string_view path, std::string_view body);
  // A new connection (HttpClient) for `key`; throws std::invalid_argument for a bad address.
  std::unique_ptr<common::http::HttpClient> open(const Key& key) const;
  // An idle connection of `key`'s pool, or a new one when fewer than the maximum are open;
  // else waits for one to be given back. Throws std::runtime_error when none comes within
  // connection_wait, std::invalid_argument for a bad address.
  std::unique_ptr<common::http::HttpClient> checkout(const Key& key);
  // Gives a checked-out connection back; null: it was closed (its slot is free again).
  void give_back(const Key& key, std::unique_ptr<common::http::HttpClient> client);
  // The sum of `count(pool)` over every pool, under the mutex.
  template <class Count>
  std::size_t total(Count count) const;
  // Moves every connection idle for too long out of the pools, into `expired`, and drops empty
  // pools. Call with the mutex held; destroy `expired` after releasing it.
  void sweep(common::Clock::SteadyTime now, std::vector<Idle>& expired);

  common::Clock& clock_;
  const Options options_;

  mutable std::mutex mutex_;
  std::map<Key, Pool> pools_;  // node-based: a Pool stays put while calls wait on it
  common::Clock::SteadyTime last_sweep_{};
};

}  // namespace cronwheel::admin
