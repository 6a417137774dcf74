#pragma once

#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace cronwheel::testing {

// Runs `server` (bound already) on a thread of its own and returns once it accepts connections.
// cpp-httplib's stop() does nothing to a server whose listen has not started yet, so stopping
// one that was just started would leave its thread in accept() for ever: wait for it first.
inline std::thread serve_in_background(httplib::Server& server) {
  std::thread thread([&server] { server.listen_after_bind(); });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!server.is_running()) {
    if (std::chrono::steady_clock::now() > deadline) {
      server.stop();
      thread.detach();
      throw std::runtime_error("test HTTP server did not start listening within 30 s");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return thread;
}

// A real HTTP server on 127.0.0.1 (a port of the OS's choosing) that takes webhook POSTs on any
// path and keeps every request: path, the signature headers and the body. fail_next(n) answers
// the next n requests 503. Stopped and joined by the destructor.
class WebhookReceiver {
 public:
  struct Request {
    std::string path;
    std::string content_type;
    std::string timestamp;  // X-Cronwheel-Timestamp
    std::string signature;  // X-Cronwheel-Signature
    std::string body;
    int answered = 0;  // the status it was answered with
  };

  WebhookReceiver() {
    server_.set_tcp_nodelay(true);
    server_.Post(R"(/.*)", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lock(mutex_);
      Request r{req.path, req.get_header_value("Content-Type"), req.get_header_value("X-Cronwheel-Timestamp"),
                req.get_header_value("X-Cronwheel-Signature"), req.body, 200};
      if (failures_ > 0) {
        --failures_;
        r.answered = 503;
        res.status = 503;
        res.set_content("receiver busy", "text/plain");
      } else {
        res.set_content("ok", "text/plain");
      }
      requests_.push_back(std::move(r));
      changed_.notify_all();
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    if (port_ <= 0) throw std::runtime_error("webhook receiver: cannot bind 127.0.0.1");
    thread_ = serve_in_background(server_);
  }
  ~WebhookReceiver() {
    server_.stop();
    thread_.join();
  }
  WebhookReceiver(const WebhookReceiver&) = delete;
  WebhookReceiver& operator=(const WebhookReceiver&) = delete;

  std::string url(const std::string& path = "/hook") const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  void fail_next(int n) {
    std::lock_guard lock(mutex_);
    failures_ = n;
  }
  std::vector<Request> requests() {
    std::lock_guard lock(mutex_);
    return requests_;
  }
  // True once at least n requests arrived within `timeout`.
  bool wait_for(std::size_t n, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return requests_.size() >= n; });
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Request> requests_;
  int failures_ = 0;
};

}  // namespace cronwheel::testing
