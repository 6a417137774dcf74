#pragma once

// What the three servers of http_engine_load serve, and the limits they all apply, so that
// only the HTTP engine differs between them: today's common::http::HttpServer, Boost.Beast on
// Asio, and libmicrohttpd. Each server is one translation unit that maps its engine's request
// onto find_route() and handle() and its engine's limits onto the constants below.
//
// Routes:
//   GET  /healthz  answers at once;
//   POST /run      parses its JSON body (~300 bytes, as XXL-JOB's trigger), answers {"code":200};
//   GET  /slow     sleeps kSlowHandlerTime on the lane's threads, never on a server worker.
// Errors are answered in the admin's REST shape (http_error.h's rest_error).

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <limits>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace cronwheel::bench::http_engines {

using namespace std::chrono_literals;

// HttpServerOptions' defaults, which both components run with.
inline constexpr std::size_t kWorkerThreads = 16;
inline constexpr std::size_t kMaxHeadBytes = 16 * 1024;
inline constexpr std::size_t kMaxBodyBytes = 5 * 1024 * 1024;
inline constexpr std::size_t kRunMaxBodyBytes = 64 * 1024;  // the route's own, smaller limit
inline constexpr std::chrono::milliseconds kHeadTimeout = 10s;     // from accept, or the first byte
inline constexpr std::chrono::milliseconds kRequestTimeout = 60s;  // head and body together
inline constexpr std::chrono::milliseconds kKeepAliveTimeout = 15s;
inline constexpr std::chrono::milliseconds kWriteTimeout = 10s;
inline constexpr std::size_t kKeepAliveMaxCount = 1000;
inline constexpr std::size_t kMaxConnections = 4096;
inline constexpr std::size_t kMaxConnectionsPerAddress = 256;

// The lane /slow runs on: 8 threads and up to 32 requests waiting; one more is answered 503.
inline constexpr std::size_t kLaneThreads = 8;
inline constexpr std::size_t kLaneMaxWaiting = 32;
inline constexpr std::chrono::milliseconds kSlowHandlerTime = 2s;

enum class Route { kHealthz, kRun, kSlow, kNotFound, kMethodNotAllowed };

// `path` without the query. HEAD is not served (no route needs it here).
Route find_route(std::string_view method, std::string_view path);

// The largest body the route takes.
std::size_t body_limit(Route route);

// True for routes whose handler runs on the lane's threads.
bool runs_on_lane(Route route);

struct Answer {
  int status = 200;
  std::string body;  // JSON
};

// Runs the route's handler. Blocks for kSlowHandlerTime on kSlow: call it on a worker or lane
// thread, never on a thread that does I/O. kNotFound and kMethodNotAllowed answer their errors.
Answer handle(Route route, const std::string& body);

// An error in the admin's REST shape: {"error":{"code":"...","message":"..."}}.
Answer error_answer(int status, std::string_view code, std::string_view message);

// The server's port from argv[1] ("0", or none: the OS picks one).
int listen_port(int argc, char** argv);

// Prints "listening on 127.0.0.1:<port>", the line http_engine_load waits for.
void announce(int port);

// Blocks SIGTERM and SIGINT in this thread and every thread it starts later; call it first in
// main(). wait_for_stop_signal() then returns when one arrives.
void block_stop_signals();
void wait_for_stop_signal();

// A fixed set of threads running tasks in arrival order, taking in at most `threads +
// max_waiting` tasks at once (running or waiting): try_submit() refuses one more. The Beast and
// libmicrohttpd servers' workers (unbounded, as HttpServer's) and lane (bounded, as a LaneOptions).
// Thread-safe. The destructor runs what is queued, then joins.
class TaskPool {
 public:
  TaskPool(std::size_t threads, std::size_t max_waiting = std::numeric_limits<std::size_t>::max());
  ~TaskPool();
  TaskPool(const TaskPool&) = delete;
  TaskPool& operator=(const TaskPool&) = delete;

  bool try_submit(std::function<void()> task);

 private:
  void run();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> tasks_;
  std::size_t inside_ = 0;
  std::size_t capacity_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace cronwheel::bench::http_engines
