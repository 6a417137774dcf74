#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <httplib.h>

#include "common/http/http_error.h"

namespace cronwheel::common::http {

struct HttpServerOptions {
  std::string host = "0.0.0.0";
  int port = 0;  // 0: the OS picks a free port; port() reports it after start()

  // Worker threads. A keep-alive connection holds one worker while it is open; when every worker
  // is busy, new connections queue and idle keep-alive connections are closed to make room.
  std::size_t worker_threads = 16;

  // Longest wait for the next bytes of a request (a new connection's first request included),
  // and for send buffer space while answering. Each applies per wait, not to the whole request.
  std::chrono::milliseconds read_timeout{10'000};
  std::chrono::milliseconds write_timeout{10'000};

  // A kept-alive connection is closed after this many requests, or after this long idle.
  // A zero keep_alive_timeout turns keep-alive off (one request per connection).
  std::size_t keep_alive_max_count = 1000;
  std::chrono::milliseconds keep_alive_timeout{15'000};

  // Larger request bodies are answered 413 without being read, and the connection is closed.
  // XXL-JOB's executor accepts 5 MiB.
  std::size_t max_body_bytes = 5 * 1024 * 1024;

  // Shape of every error answer (see http_error.h): rest_error for the admin's REST API,
  // xxl_job_error for the executor.
  ErrorFormatter error_formatter = rest_error;

  // Names the worker threads and prefixes log lines ("executor", "admin-api").
  std::string name = "http";
};

// An HTTP/1.1 server over cpp-httplib, with the behaviour both components need built in:
//  - TCP_NODELAY on every connection (without it a keep-alive POST waits ~40 ms for a delayed
//    ACK);
//  - a fixed worker pool (cpp-httplib's compile-time pool macros do nothing with the Debian
//    library), keep-alive limits, read/write timeouts, a body size limit answered with 413;
//  - every error answered as JSON in the component's shape (options.error_formatter): unknown
//    routes (404), oversized bodies (413), malformed requests (400), and handler exceptions:
//      HttpError                → its status, code and message;
//      protocol::ProtocolError  → 400, its message (it only describes the client's input);
//      anything else            → 500 "internal server error"; what() is logged, never sent;
//  - stop() that returns promptly even while clients hold keep-alive connections open: idle
//    connections are closed at once, requests being received are abandoned, and handlers that
//    are running finish and get their answer written (stop() waits for them).
//
// Threading: register routes before start(); handlers then run concurrently on the worker
// threads. start(), stop() and port() may be called from any thread. A stopped server cannot be
// started again.
class HttpServer {
 public:
  using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;

  explicit HttpServer(HttpServerOptions options = {});
  ~HttpServer();  // stop()

  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // `pattern` is a cpp-httplib route: a path, or a regex whose groups land in
  // Request::matches ("/api/v1/jobs/(\\d+)").
  void get(const std::string& pattern, Handler handler);
  void post(const std::string& pattern, Handler handler);
  void put(const std::string& pattern, Handler handler);
  void del(const std::string& pattern, Handler handler);

  // Binds, starts serving on a background thread and returns once connections are accepted.
  // Throws std::system_error naming host:port when it cannot bind (port taken, bad address), and
  // std::logic_error when called twice.
  void start();

  // Stops accepting, closes idle connections, waits for running handlers and joins every
  // thread. Idempotent; safe before start().
  void stop() noexcept;

  // The bound port (the OS's pick when options.port was 0); 0 before start().
  int port() const noexcept;

  const HttpServerOptions& options() const noexcept;

  // Answers `error` in this server's shape (sets status, body and Content-Type).
  void write_error(httplib::Response& res, const ErrorInfo& error) const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// Sets a JSON body and status.
void write_json(httplib::Response& res, std::string body, int status = 200);

// True when `expected` is empty (no token configured) or the request carries exactly `expected`
// in the XXL-JOB-ACCESS-TOKEN header. Constant time in the token's content.
bool access_token_matches(const httplib::Request& req, std::string_view expected);

}  // namespace cronwheel::common::http
