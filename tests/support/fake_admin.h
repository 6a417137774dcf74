#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "common/http/http_server.h"
#include "common/protocol/constants.h"
#include "common/protocol/messages.h"
#include "common/protocol/return_t.h"

namespace cronwheel::testing {

// An admin as an executor sees it: an HTTP server on 127.0.0.1 answering /api/registry,
// /api/registryRemove and /api/callback the way an XXL-JOB 2.4 admin does, recording every
// call. Tests make it refuse (answer 500, or drop the connection by stopping it) to simulate
// an outage, and wait for calls to arrive.
class FakeAdmin {
 public:
  struct Options {
    std::string access_token;  // required on every call when set
    int port = 0;              // 0: any free port (restart on the same port with port())
  };

  FakeAdmin() : FakeAdmin(Options{}) {}
  explicit FakeAdmin(Options options) : options_(std::move(options)) { start(); }
  ~FakeAdmin() { stop(); }

  FakeAdmin(const FakeAdmin&) = delete;
  FakeAdmin& operator=(const FakeAdmin&) = delete;

  // "http://127.0.0.1:<port>/"
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/"; }
  int port() const { return port_; }

  // Stops answering (connections are refused), as a crashed admin would.
  void stop() {
    if (server_) server_->stop();
    server_.reset();
  }
  // Answers again, on the same port as before.
  void start() {
    common::http::HttpServerOptions o;
    o.host = "127.0.0.1";
    o.port = port_ != 0 ? port_ : options_.port;
    o.worker_threads = 8;
    o.error_formatter = common::http::xxl_job_error;
    o.name = "fake-admin";
    server_ = std::make_unique<common::http::HttpServer>(o);
    server_->post("/api/registry", [this](const auto& req, auto& res) { registry(req, res, false); });
    server_->post("/api/registryRemove", [this](const auto& req, auto& res) { registry(req, res, true); });
    server_->post("/api/callback", [this](const auto& req, auto& res) { callback(req, res); });
    server_->start();
    port_ = server_->port();
  }

  // While set, every call is answered {"code":500,...} (the admin is up but refuses).
  void set_refusing(bool refusing) {
    std::lock_guard lock(mutex_);
    refusing_ = refusing;
  }

  // While not empty, the answer to every accepted registration carries it as cronwheel's
  // X-Cronwheel-Clock header ("<received>,<sent>"); XXL-JOB's admin sends none (the default).
  void set_clock_header(std::string value) {
    std::lock_guard lock(mutex_);
    clock_header_ = std::move(value);
  }

  // Called in each accepted registration's handler before it answers (nullptr: nothing), e.g. to
  // move a fake clock as if the exchange took that long.
  void set_on_registration(std::function<void()> hook) {
    std::lock_guard lock(mutex_);
    on_registration_ = std::move(hook);
  }

  std::vector<common::protocol::RegistryParam> registrations() const {
    std::lock_guard lock(mutex_);
    return registrations_;
  }
  std::vector<common::protocol::RegistryParam> removals() const {
    std::lock_guard lock(mutex_);
    return removals_;
  }
  // Every accepted callback, in arrival order, duplicates included.
  std::vector<common::protocol::HandleCallbackParam> callbacks() const {
    std::lock_guard lock(mutex_);
    return callbacks_;
  }
  // Raw bodies of every callback request (accepted or not), as sent.
  std::vector<std::string> callback_bodies() const {
    std::lock_guard lock(mutex_);
    return callback_bodies_;
  }
  int rejected_tokens() const {
    std::lock_guard lock(mutex_);
    return rejected_tokens_;
  }
  // Calls answered with a failure (wrong token or refusing), all endpoints together. Each one
  // wakes wait_until(), so a test can wait for an attempt that was turned away.
  int refused_calls() const {
    std::lock_guard lock(mutex_);
    return refused_calls_;
  }

  // Waits until `predicate` holds (checked on every recorded call) or `timeout` passes.
  bool wait_until(const std::function<bool(const FakeAdmin&)>& predicate,
                  std::chrono::milliseconds timeout = std::chrono::seconds(20)) const {
    std::unique_lock lock(mutex_);
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      const auto seen = generation_;
      lock.unlock();
      bool done = predicate(*this);
      lock.lock();
      if (done) return true;
      // Wait for a call recorded after the predicate looked.
      if (!changed_.wait_until(lock, deadline, [&] { return generation_ != seen; })) {
        lock.unlock();
        return predicate(*this);
      }
    }
  }

  // Waits for the result of `log_id`; returns it, or nullopt after `timeout`.
  std::optional<common::protocol::HandleCallbackParam> wait_for_result(
      std::int64_t log_id, std::chrono::milliseconds timeout = std::chrono::seconds(20)) const {
    std::optional<common::protocol::HandleCallbackParam> found;
    wait_until(
        [&](const FakeAdmin& admin) {
          for (const auto& c : admin.callbacks()) {
            if (c.log_id == log_id) {
              found = c;
              return true;
            }
          }
          return false;
        },
        timeout);
    return found;
  }

 private:
  bool authorized(const cronwheel::common::http::Request& req, cronwheel::common::http::Response& res) {
    if (common::http::access_token_matches(req, options_.access_token)) return true;
    {
      std::lock_guard lock(mutex_);
      ++rejected_tokens_;
      ++refused_calls_;
      ++generation_;
    }
    changed_.notify_all();
    answer(res, common::protocol::ReturnT<std::string>::fail("The access token is wrong."));
    return false;
  }

  static void answer(cronwheel::common::http::Response& res, const common::protocol::ReturnT<std::string>& r) {
    common::http::write_json(res, common::protocol::to_json_string(r));
  }

  bool refuse(cronwheel::common::http::Response& res) {
    {
      std::lock_guard lock(mutex_);
      if (!refusing_) return false;
      ++refused_calls_;
      ++generation_;
    }
    changed_.notify_all();
    answer(res, common::protocol::ReturnT<std::string>::fail("admin is refusing calls (test)"));
    return true;
  }

  void registry(const cronwheel::common::http::Request& req, cronwheel::common::http::Response& res, bool remove) {
    if (!authorized(req, res) || refuse(res)) return;
    auto param = common::protocol::parse<common::protocol::RegistryParam>(req.body);
    std::function<void()> hook;
    {
      std::lock_guard lock(mutex_);
      if (!remove) hook = on_registration_;
    }
    if (hook) hook();
    {
      std::lock_guard lock(mutex_);
      (remove ? removals_ : registrations_).push_back(param);
      ++generation_;
      if (!remove && !clock_header_.empty()) res.set_header(common::protocol::kClockHeader, clock_header_);
    }
    changed_.notify_all();
    answer(res, common::protocol::ReturnT<std::string>::success());
  }

  void callback(const cronwheel::common::http::Request& req, cronwheel::common::http::Response& res) {
    {
      std::lock_guard lock(mutex_);
      callback_bodies_.push_back(req.body);
    }
    if (!authorized(req, res) || refuse(res)) return;
    auto batch = common::protocol::parse<common::protocol::CallbackBatch>(req.body);
    {
      std::lock_guard lock(mutex_);
      for (auto& c : batch.callbacks) callbacks_.push_back(c);
      ++generation_;
    }
    changed_.notify_all();
    answer(res, common::protocol::ReturnT<std::string>::success());
  }

  Options options_;
  int port_ = 0;
  std::function<void()> on_registration_;  // guarded by mutex_
  std::unique_ptr<common::http::HttpServer> server_;
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  bool refusing_ = false;
  std::string clock_header_;
  int rejected_tokens_ = 0;
  int refused_calls_ = 0;
  std::uint64_t generation_ = 0;  // bumped on every recorded call
  std::vector<common::protocol::RegistryParam> registrations_;
  std::vector<common::protocol::RegistryParam> removals_;
  std::vector<common::protocol::HandleCallbackParam> callbacks_;
  std::vector<std::string> callback_bodies_;
};

}  // namespace cronwheel::testing
