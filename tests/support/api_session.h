#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

namespace cronwheel::testing {

// An answer of the admin's REST API (status 0: no answer; body null when not JSON).
struct Reply {
  int status = 0;
  nlohmann::json body;
  std::string text;
};

// A console session (cookie + CSRF token) on one admin, for programs that drive the REST API
// outside GoogleTest (load benchmarks, the chaos soak). Shared by threads that each keep their
// own keep-alive connection (client()).
class Api {
 public:
  explicit Api(int port) : port_(port) {}

  // Logs in; throws std::runtime_error when the admin refuses or does not answer.
  void login(const std::string& username, const std::string& password) {
    httplib::Client c("127.0.0.1", port_);
    c.set_connection_timeout(5);
    c.set_read_timeout(30);
    auto r = c.Post("/api/v1/auth/login", nlohmann::json{{"username", username}, {"password", password}}.dump(),
                    "application/json");
    if (!r || r->status != 200) {
      throw std::runtime_error("login failed: " + (r ? r->body : httplib::to_string(r.error())));
    }
    for (const auto& [name, value] : r->headers) {
      if (name == "Set-Cookie" && value.rfind("cronwheel_session=", 0) == 0) cookie_ = value.substr(0, value.find(';'));
    }
    csrf_ = nlohmann::json::parse(r->body).value("csrfToken", "");
    if (cookie_.empty()) throw std::runtime_error("login answered no session cookie");
  }

  // One POST on the calling thread's own connection; retried a few times when there is no answer
  // or a 5xx, so only for calls that are safe to repeat.
  Reply post(httplib::Client& client, const std::string& path, const nlohmann::json& body) const {
    httplib::Headers headers{{"Cookie", cookie_}, {"X-CSRF-Token", csrf_}};
    Reply reply;
    for (int attempt = 1; attempt <= 5; ++attempt) {
      auto r = client.Post("/api/v1/" + path, headers, body.dump(), "application/json");
      if (r) {
        reply.status = r->status;
        reply.text = r->body;
        reply.body = nlohmann::json::parse(r->body, nullptr, false);
        if (r->status < 500) return reply;
      } else {
        reply.text = httplib::to_string(r.error());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100 * attempt));
    }
    return reply;
  }

  Reply get(httplib::Client& client, const std::string& path) const {
    Reply reply;
    auto r = client.Get("/api/v1/" + path, httplib::Headers{{"Cookie", cookie_}});
    if (!r) {
      reply.text = httplib::to_string(r.error());
      return reply;
    }
    reply.status = r->status;
    reply.text = r->body;
    reply.body = nlohmann::json::parse(r->body, nullptr, false);
    return reply;
  }

  std::unique_ptr<httplib::Client> client() const {
    auto c = std::make_unique<httplib::Client>("127.0.0.1", port_);
    c->set_connection_timeout(5);
    c->set_read_timeout(60);
    c->set_keep_alive(true);
    c->set_tcp_nodelay(true);
    return c;
  }

 private:
  int port_;
  std::string cookie_;
  std::string csrf_;
};

// Runs `count` calls of `call(api, client, i)` on `threads` threads, each with its own connection
// to one of the admins (round robin). Throws the first failure once all threads ended.
inline void in_parallel(const std::vector<Api>& apis, int threads, int count,
                        const std::function<void(const Api&, httplib::Client&, int)>& call) {
  std::atomic<int> next{0};
  std::mutex error_mutex;
  std::string error;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      const Api& api = apis[static_cast<std::size_t>(t) % apis.size()];
      auto client = api.client();
      for (int i = next++; i < count; i = next++) {
        try {
          call(api, *client, i);
        } catch (const std::exception& e) {
          std::lock_guard lock(error_mutex);
          if (error.empty()) error = e.what();
          next = count;
        }
      }
    });
  }
  for (auto& t : pool) t.join();
  if (!error.empty()) throw std::runtime_error(error);
}

}  // namespace cronwheel::testing
