#pragma once

#include <chrono>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "tests/support/process.h"

namespace cronwheel::testing {

// An answer of the admin's REST API.
struct ApiReply {
  int status = 0;  // 0: no answer
  nlohmann::json body;  // null when the body is empty or not JSON
  std::string text;
  httplib::Headers headers;

  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
  }
  std::string error_message() const { return body.is_object() && body.contains("error") ? body["error"].value("message", "") : ""; }
  std::string error_field() const { return body.is_object() && body.contains("error") ? body["error"].value("field", "") : ""; }
};

// How a request proves who sent it: a console session (the cookie, plus the CSRF token on
// changes) or an API token. Empty: anonymous.
struct ApiCredentials {
  std::string cookie;
  std::string csrf;
  std::string bearer;

  static ApiCredentials token(std::string secret) { return {{}, {}, std::move(secret)}; }

  // The same credentials without the CSRF token: a console that forgets the header.
  ApiCredentials without_csrf() const {
    ApiCredentials c = *this;
    c.csrf.clear();
    return c;
  }

  httplib::Headers headers(bool changes_state) const {
    httplib::Headers h;
    if (!cookie.empty()) h.emplace("Cookie", cookie);
    if (!cookie.empty() && changes_state && !csrf.empty()) h.emplace("X-CSRF-Token", csrf);
    if (!bearer.empty()) h.emplace("Authorization", "Bearer " + bearer);
    return h;
  }
};

// A real cronwheel-admin process on 127.0.0.1 and a port of the OS's choosing, for e2e tests.
// The destructor kills it if the test did not stop it.
class AdminProcess {
 public:
  static constexpr const char* kPassword = "e2e-admin-password";

  struct Options {
    std::string db_url = {};
    // Where it listens: a port of the OS's choosing by default; a fixed one (free_port() in
    // wall_time.h) for a node that must come back at the same address after a restart.
    std::string listen = "127.0.0.1:0";
    std::vector<std::string> args = {};  // more flags (--node-id, --http-threads, ...)
    std::vector<std::string> env = {};   // more environment ("NAME=value")
    // The bootstrap admin's password (CRONWHEEL_ADMIN_PASSWORD); empty: not set.
    std::string admin_password = kPassword;
    // Whether a call that gets no answer at all (status 0) is a test failure; off for tests
    // that expect a stopped or unreachable admin.
    bool require_answers = false;
  };

  explicit AdminProcess(Options options)
      : process_(argv(options), environment(options)), require_answers_(options.require_answers) {}

  static std::string binary() { return std::string(CRONWHEEL_BIN_DIR) + "/cronwheel-admin"; }

  // Waits for the "listening on" line; returns the port, or 0 when the process exits or does
  // not get there within `timeout`.
  int wait_until_listening(std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
    static const std::regex listening(R"(listening on http://127\.0\.0\.1:(\d+)/)");
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      std::smatch m;
      const std::string out = process_.out();
      if (std::regex_search(out, m, listening)) return port_ = std::stoi(m[1]);
      if (!process_.running()) return 0;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return 0;
  }

  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/"; }
  Process& process() { return process_; }

  // SIGTERM, then the exit code (-1 if it did not end within `timeout`).
  int stop(std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
    process_.signal(SIGTERM);
    return process_.wait_for_exit(timeout);
  }

  // A call to /api/v1/<path>.
  ApiReply call(const std::string& method, const std::string& path, const ApiCredentials& who = {},
                const std::string& body = "") {
    httplib::Client client("127.0.0.1", port_);
    client.set_connection_timeout(5);
    client.set_read_timeout(30);
    const std::string full = "/api/v1/" + path;
    const auto headers = who.headers(method != "GET");
    httplib::Result r = method == "GET"      ? client.Get(full, headers)
                        : method == "PUT"    ? client.Put(full, headers, body, "application/json")
                        : method == "DELETE" ? client.Delete(full, headers)
                                             : client.Post(full, headers, body, "application/json");
    ApiReply reply;
    if (!r) {
      if (require_answers_) {
        ADD_FAILURE() << method << " " << full << ": no answer: " << httplib::to_string(r.error());
      }
      return reply;
    }
    reply.status = r->status;
    reply.text = r->body;
    reply.headers = r->headers;
    reply.body = nlohmann::json::parse(r->body, nullptr, /*allow_exceptions=*/false);
    if (reply.body.is_discarded()) reply.body = nullptr;
    return reply;
  }
  ApiReply get(const std::string& path, const ApiCredentials& who) { return call("GET", path, who); }
  ApiReply post(const std::string& path, const ApiCredentials& who, const nlohmann::json& body = nlohmann::json::object()) {
    return call("POST", path, who, body.dump());
  }
  ApiReply put(const std::string& path, const ApiCredentials& who, const nlohmann::json& body) {
    return call("PUT", path, who, body.dump());
  }
  ApiReply del(const std::string& path, const ApiCredentials& who) { return call("DELETE", path, who); }

  ApiReply try_login(const std::string& username, const std::string& password) {
    return post("auth/login", {}, {{"username", username}, {"password", password}});
  }

  // Logs in as the console does: the session cookie from Set-Cookie, the CSRF token from the
  // body. A failed login, or a session cookie that is not HttpOnly and SameSite=Strict, is a
  // test failure; a failed login answers empty credentials.
  ApiCredentials login(const std::string& username = "admin", const std::string& password = kPassword) {
    auto r = try_login(username, password);
    EXPECT_EQ(r.status, 200) << r.text;
    ApiCredentials c;
    for (const auto& [name, value] : r.headers) {
      if (name == "Set-Cookie" && value.rfind("cronwheel_session=", 0) == 0) {
        EXPECT_NE(value.find("HttpOnly"), std::string::npos) << value;
        EXPECT_NE(value.find("SameSite=Strict"), std::string::npos) << value;
        c.cookie = value.substr(0, value.find(';'));
      }
    }
    EXPECT_FALSE(c.cookie.empty()) << "no session cookie: " << r.text;
    c.csrf = r.body.is_object() ? r.body.value("csrfToken", "") : "";
    return c;
  }

 private:
  static std::vector<std::string> argv(const Options& o) {
    std::vector<std::string> a{binary(), "--listen", o.listen, "--db-url", o.db_url, "--db-wait", "5"};
    a.insert(a.end(), o.args.begin(), o.args.end());
    return a;
  }
  static std::vector<std::string> environment(const Options& o) {
    std::vector<std::string> e = o.env;
    if (!o.admin_password.empty()) e.push_back("CRONWHEEL_ADMIN_PASSWORD=" + o.admin_password);
    return e;
  }

  Process process_;
  bool require_answers_ = false;
  int port_ = 0;
};

}  // namespace cronwheel::testing
