#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

#include "admin/model/executor_client.h"
#include "common/http/async_http_client.h"
#include "common/http/http_client.h"
#include "common/util/clock.h"

namespace cronwheel::admin {

// ExecutorClient over common/http's AsyncHttpClient (Boost.Beast on Asio): XXL-JOB 2.4 calls
// with the access token header, over kept-alive connections (TCP_NODELAY) pooled per executor
// and reused across calls. Each call here waits for its answer on the calling thread; the
// sending, the connection pool and every wait on the network are the client's one I/O thread's.
//
// At most max_connections_per_address connections are open to one executor at once (in use or
// idle); a call beyond them waits for one to come free (at most connection_wait, then it fails
// without reaching the executor). So hundreds of trigger threads posting to one executor share a
// bounded set of kept-alive connections instead of opening and closing one per call. A
// connection idle for longer than max_idle_time is closed instead of reused, and the pools of
// executors no longer called disappear with their last connection. A connection whose call
// failed in transport is closed rather than reused.
//
// An https:// executor address is called with common/http's blocking HttpClient (cpp-httplib
// with OpenSSL), on a connection of its own per call.
//
// One failure is retried, at once and once, on a new connection, for every call (/run included):
// the stale kept-alive connection. The executor closes an idle connection (its keep-alive timeout,
// its per-client connection limit evicting idle ones, a restart) while the admin is about to send
// on it, and the call fails. It is recognised as: the connection was reused, and the executor
// closed or reset it either before the request was written whole (the executor cannot have a
// request it did not get whole) or after it was written but before sending a single byte of an
// answer, well before the read timeout. The second is the case curl, okhttp and Go's transport
// also retry on a reused connection: an executor that is alive does not read a request and then
// close the connection without answering it, so the executor closed the connection before
// reading the request. If it was not alive (it died while reading), the new connection fails
// too, and the call ends with 502 (may have reached the executor) so that a /run is checked with
// /log before anything is sent again (delivery_check.h).
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
    // Connections open at once per executor, in use or idle.
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
  LeadResult lead(const std::string& address, const std::string& access_token,
                  const common::protocol::LeadRequest& request) override;
  LeadCancelResult cancel_lead(const std::string& address, const std::string& access_token,
                               const common::protocol::LeadCancelParam& param) override;

  // Idle connections kept now, over every executor (metrics and tests).
  std::size_t idle_connections() const;
  // Connections carrying a call now, over every executor.
  std::size_t busy_connections() const;
  // Calls waiting for a connection now, over every executor.
  std::size_t waiting_calls() const;
  // Executors with a connection or a waiting call now.
  std::size_t pools() const;

 private:
  template <class T>
  common::protocol::ReturnT<T> call(const std::string& address, const std::string& access_token,
                                    std::string_view path, std::string_view body);
  common::http::HttpResult post(const std::string& address, const std::string& access_token, std::string_view path,
                                std::string_view body);

  const Options options_;
  common::http::AsyncHttpClient client_;
};

}  // namespace cronwheel::admin
