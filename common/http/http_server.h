#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/http/http_error.h"
#include "common/http/message.h"
#include "common/http/route_table.h"

namespace cronwheel::common::http {

struct HttpServerOptions {
  std::string host = "0.0.0.0";
  int port = 0;  // 0: the OS picks a free port; port() reports it after start()

  // Threads that run handlers. A worker only ever gets a request that has fully arrived, so
  // slow or idle clients never hold one.
  std::size_t worker_threads = 16;

  // The request line and headers must arrive within head_timeout of the request's first byte
  // (of accepting the connection, for its first request); the whole request, body included,
  // within request_timeout, never pausing longer than read_timeout. An answer the client does
  // not take for write_timeout is abandoned with the connection.
  std::chrono::milliseconds head_timeout{10'000};
  std::chrono::milliseconds request_timeout{60'000};
  std::chrono::milliseconds read_timeout{10'000};
  std::chrono::milliseconds write_timeout{10'000};

  // A kept-alive connection is closed after this many requests, or after this long idle.
  // A zero keep_alive_timeout turns keep-alive off (one request per connection).
  std::size_t keep_alive_max_count = 1000;
  std::chrono::milliseconds keep_alive_timeout{15'000};

  // Request bodies larger than their route's limit (RouteOptions::max_body_bytes, or this
  // default) are answered 413 without being read. XXL-JOB's executor accepts 5 MiB.
  std::size_t max_body_bytes = 5 * 1024 * 1024;
  // The request line and headers together; the request target alone.
  std::size_t max_head_bytes = 16 * 1024;
  std::size_t max_target_bytes = 8 * 1024;

  // Open connections in all and per client address. Over either limit, the oldest connection
  // waiting for a request (of that address, or of all) is closed to make room; with none
  // waiting the new one is answered 503. Also capped by the process's open file limit.
  std::size_t max_connections = 4096;
  std::size_t max_connections_per_address = 256;

  // Shape of every error answer (see http_error.h): rest_error for the admin's REST API,
  // xxl_job_error for the executor.
  ErrorFormatter error_formatter = rest_error;

  // Names the threads and prefixes log lines ("executor", "admin-api").
  std::string name = "http";
};

// A lane: threads of their own for routes whose handlers wait long (on a password hash, on an
// executor's answer), so that those waits never hold the workers that answer everything else
// (the health check, executors, other users). A lane bounds what it takes in and never queues
// without limit:
//  - at most `threads + max_waiting` requests are in the lane at once (waiting or running), and
//    at most `max_per_address` of them from one client address: one more is answered
//    503 + Retry-After at once, by a server worker, without running its handler;
//  - a request that waited longer than `max_wait` for a lane thread is answered the same way
//    when its turn comes, without running its handler (its client has likely given up, and
//    running it would only make the next ones later).
// The 503's body is the server's error shape with code "busy" and `busy_message`.
struct LaneOptions {
  std::size_t threads = 2;
  std::size_t max_waiting = 16;
  std::size_t max_per_address = 4;
  std::chrono::milliseconds max_wait{5'000};
  std::chrono::seconds retry_after{1};
  std::string busy_message = "the server is busy; try again";
};

// Per-route settings.
struct RouteOptions {
  // Largest request body the route takes; unset: HttpServerOptions::max_body_bytes.
  std::optional<std::size_t> max_body_bytes = {};
  // The lane (HttpServer::add_lane) whose threads run the handler; empty: the server's workers.
  std::string lane = {};
};

// An HTTP/1.1 server with the behaviour both components need built in:
//  - Boost.Beast's parser on Boost.Asio: one I/O thread accepts every connection and receives
//    every request whole (head and body), asynchronously; a fixed pool of workers runs handlers
//    on complete requests only. The worker that made an answer to a kept-alive request sends it
//    itself when the socket takes it at once without waiting, and arms the read of the next
//    request (and the keep-alive deadline) itself, so a request costs the I/O thread one wake-up,
//    not two; any other answer (one the socket does not take at once, one that ends the
//    connection) the I/O thread sends, asynchronously. No worker ever waits on a socket:
//    hundreds of slow, idle or trickling clients cost sockets and buffered bytes, never a worker,
//    so the health check, executors and users keep being answered;
//  - deadlines: the request head within head_timeout of its first byte (of accepting the
//    connection, for its first request), the whole request within request_timeout with no pause
//    longer than read_timeout (408 at either), an idle kept-alive connection closed after
//    keep_alive_timeout, an answer the client does not take for write_timeout abandoned;
//  - limits on the head (431), the target (414), the number of headers, and each route's body
//    (413 on the declared Content-Length, before the body is read); chunked request bodies are
//    refused (411); TCP_NODELAY on every connection (without it a keep-alive POST waits ~40 ms
//    for a delayed ACK);
//  - at most max_connections_per_address connections per client address and max_connections
//    in all: one over either limit makes room by closing the oldest connection of that address
//    (or of all) that is waiting for a request; with none waiting, the newcomer is answered 503.
//    So a client holding hundreds of idle or slow connections loses its oldest ones, and anyone
//    connecting afresh gets in;
//  - routing by path patterns matched segment by segment (route_table.h), never by regular
//    expressions on the client's path;
//  - every error answered as JSON in the component's shape (options.error_formatter): unknown
//    routes (404), wrong methods (405, naming the allowed ones), oversized bodies (413),
//    malformed requests (400), and handler exceptions:
//      HttpError                → its status, code and message;
//      protocol::ProtocolError  → 400, its message (it only describes the client's input);
//      anything else            → 500 "internal server error"; what() is logged, never sent;
//    a refusal the server answers before any handler ends the connection (what follows on it
//    cannot be trusted to start a request), reading and dropping what the client still sends
//    for a moment so the answer is not lost to a reset;
//  - lanes (LaneOptions): routes whose handlers wait long run on threads of their own, bounded,
//    answering 503 + Retry-After beyond their bounds;
//  - answers go whole and as the handler made them (no byte ranges, no compression on the fly),
//    each with X-Content-Type-Options: nosniff; a HEAD request gets a GET's headers only;
//  - stop() that returns promptly even while clients hold connections open: connections waiting
//    for a request are closed at once, and handlers that are running finish and get their answer
//    sent (stop() waits for them).
// Handlers see the request and make the answer as the plain values of message.h.
//
// Threading: register routes before start(); handlers then run concurrently on the worker
// threads. start(), stop() and port() may be called from any thread. A stopped server cannot be
// started again.
class HttpServer {
 public:
  using Handler = std::function<void(const Request&, Response&)>;
  using ParamHandler = std::function<void(const Request&, Response&, const PathParams&)>;

  explicit HttpServer(HttpServerOptions options = {});
  ~HttpServer();  // stop()

  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // `pattern` is a path pattern (route_table.h): "/healthz", "/api/v1/jobs/{id}/start",
  // "**/api/registry". `method` is GET, POST, PUT or DELETE; a GET route answers HEAD too.
  void route(const std::string& method, const std::string& pattern, ParamHandler handler,
             RouteOptions route_options = {});
  void get(const std::string& pattern, Handler handler, RouteOptions route_options = {});
  void post(const std::string& pattern, Handler handler, RouteOptions route_options = {});
  void put(const std::string& pattern, Handler handler, RouteOptions route_options = {});
  void del(const std::string& pattern, Handler handler, RouteOptions route_options = {});
  // GET and HEAD requests for a path that no route matches, with any method, go to `handler`
  // instead of being answered 404 (a path that routes serve with other methods still answers
  // 405). For serving files under whatever paths are left (the admin's console). Replaces an
  // earlier fallback; before start().
  void fallback_get(Handler handler, RouteOptions route_options = {});

  // Declares a lane that routes name in RouteOptions::lane (see LaneOptions). Before the routes
  // that use it and before start(); throws std::logic_error for a name given twice.
  void add_lane(const std::string& name, LaneOptions lane_options);

  // Binds the listening socket now, so port() is known before start() (a server on port 0
  // learns its port here); connections wait in the backlog until start(). Optional: start()
  // binds when this was not called. Throws like start(); a no-op when already bound.
  void bind();

  // Binds (unless bind() did), starts serving on background threads and returns once
  // connections are accepted.
  // Throws std::system_error naming host:port when it cannot bind (port taken, bad address), and
  // std::logic_error when called twice.
  void start();

  // Stops accepting, closes idle connections, waits for running handlers and joins every
  // thread. Idempotent; safe before start().
  void stop() noexcept;

  // The bound port (the OS's pick when options.port was 0); 0 before bind() or start().
  int port() const noexcept;

  const HttpServerOptions& options() const noexcept;

  // Connections now open and served, and how many were evicted, refused or timed out.
  struct ConnectionStats {
    std::size_t open = 0;          // connections now
    std::size_t serving = 0;       // of which with a worker or waiting for one
    std::uint64_t evicted = 0;     // closed to make room for a newer one
    std::uint64_t refused = 0;     // answered 503: no room
    std::uint64_t timed_out = 0;   // a request that did not arrive in time (answered 408)
  };
  ConnectionStats connection_stats() const;

  // Each lane's requests now in it and the requests it refused since start.
  struct LaneStats {
    std::string name;
    std::size_t inside = 0;         // waiting or running
    std::uint64_t refused_full = 0;  // the lane (or the client's share of it) was full
    std::uint64_t refused_late = 0;  // waited longer than max_wait
  };
  std::vector<LaneStats> lane_stats() const;

  // Answers `error` in this server's shape (sets status, body and Content-Type).
  void write_error(Response& res, const ErrorInfo& error) const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// Sets a JSON body and status.
void write_json(Response& res, std::string body, int status = 200);

// True when `expected` is empty (no token configured) or the request carries exactly `expected`
// in the XXL-JOB-ACCESS-TOKEN header. Constant time in the token's content.
bool access_token_matches(const Request& req, std::string_view expected);

}  // namespace cronwheel::common::http
