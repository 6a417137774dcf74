#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "common/http/http_server.h"
#include "tests/support/raw_connection.h"

namespace cronwheel::testing {

// Server options for tests: loopback only, an OS-chosen port.
inline common::http::HttpServerOptions loopback_options() {
  common::http::HttpServerOptions options;
  options.host = "127.0.0.1";
  options.port = 0;
  options.worker_threads = 4;
  options.name = "test-http";
  return options;
}

// A loopback port nothing listens on: bound by a server that has since stopped.
inline int unused_loopback_port() {
  common::http::HttpServer server(loopback_options());
  server.start();
  const int port = server.port();
  server.stop();
  return port;
}

// A one-shot gate a handler can block on until the test opens it.
class Gate {
 public:
  void open() {
    {
      std::lock_guard lock(mutex_);
      open_ = true;
    }
    cv_.notify_all();
  }
  // Returns false if the gate stayed closed for `timeout` (a safety net against a hung test).
  bool wait(std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, timeout, [this] { return open_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool open_ = false;
};

}  // namespace cronwheel::testing
