#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/http/http_client.h"
#include "common/util/clock.h"

namespace cronwheel::common::http {

struct AsyncHttpClientOptions {
  std::chrono::milliseconds connect_timeout{3'000};
  // The longest wait for the next bytes of the answer (per wait, as HttpClient's), and for the
  // request to be taken by the server.
  std::chrono::milliseconds read_timeout{10'000};
  std::chrono::milliseconds write_timeout{10'000};
  // The largest answer body read; a larger one ends the request (kTooLarge) and its connection.
  std::size_t max_answer_bytes = 8 * 1024 * 1024;
  // Connections open at once to one origin (scheme, host and port), in use or idle. A request
  // finding them all in use waits for one (at most connection_wait, then it fails unsent).
  std::size_t max_connections_per_origin = 64;
  std::chrono::milliseconds connection_wait{10'000};
  // An idle kept-alive connection is closed after this long instead of being reused. Shorter
  // than the servers' own keep-alive timeouts, so a server rarely closes one as it is used.
  std::chrono::milliseconds max_idle_time{5'000};
  // Names the I/O thread ("<name>-io") and prefixes log lines.
  std::string name = "http-client";
};

// One request: POST or GET to `base_url` + `path`, resolved as HttpClient resolves them
// ("http://10.0.0.5:8080/xxl-job-admin/" + "api/callback" → /xxl-job-admin/api/callback).
struct AsyncHttpRequest {
  std::string method = "POST";
  std::string base_url;
  std::string path;
  std::string body;  // sent with Content-Type: application/json when the method is POST
  std::vector<std::pair<std::string, std::string>> headers;
};

// An asynchronous HTTP/1.1 client on Boost.Beast and Asio: one I/O thread keeps every request
// in flight (connect, send, wait for the answer) without a thread per request, so one caller
// can have hundreds outstanding. Kept-alive connections are pooled per origin and reused
// (TCP_NODELAY on each); answers come back as HttpClient's HttpResult, with the same
// classification of failures (TransportError, request_written, answer_head_received,
// reused_connection) and the same messages, so callers decide about retries the same way.
// Nothing is retried here.
//
// http:// only: a request for an https:// URL completes with kOther at once (HttpClient, on
// cpp-httplib with OpenSSL, serves those).
//
// Thread-safe. Callbacks run on the I/O thread: they must not block (send the next request from
// one, hand work to another thread, or fulfil a promise). Destroying the client completes every
// request still in flight with kOther ("the client stopped"), then joins the thread.
class AsyncHttpClient {
 public:
  using Callback = std::function<void(HttpResult)>;

  // `clock` ages idle connections (steady time); it must outlive the client. Deadlines of
  // connects, sends and answers are on Asio's own steady timers.
  explicit AsyncHttpClient(AsyncHttpClientOptions options = {}, Clock& clock = SystemClock::instance());
  ~AsyncHttpClient();

  AsyncHttpClient(const AsyncHttpClient&) = delete;
  AsyncHttpClient& operator=(const AsyncHttpClient&) = delete;

  // Starts `request`; `done` runs exactly once with its result. Never throws for the request's
  // content: a malformed URL or a header holding CR, LF or NUL completes with kOther.
  void send(AsyncHttpRequest request, Callback done);

  // send(), then waits for the result on the calling thread (never on the I/O thread).
  HttpResult send_and_wait(AsyncHttpRequest request);

  struct Stats {
    std::size_t idle = 0;     // kept-alive connections waiting for a request
    std::size_t busy = 0;     // connections carrying a request (or being opened for one)
    std::size_t waiting = 0;  // requests waiting for a connection
    std::size_t origins = 0;  // origins with a connection or a waiting request
  };
  Stats stats() const;

  const AsyncHttpClientOptions& options() const noexcept;

 private:
  class Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace cronwheel::common::http
