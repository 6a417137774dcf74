#pragma once

// The authentication, user, token and audit routes on a real HTTP server (127.0.0.1, a free
// port), over in-memory stores and a fake clock (users behind UserStoreWithHook), with two
// users to start from:
//   admin  / "admin-password"  (role admin)
//   alice  / "alice-password"  (role normal, group "alpha-app")

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <utility>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "admin/api/api_router.h"
#include "admin/api/audit_api.h"
#include "admin/api/auth_api.h"
#include "admin/api/tokens_api.h"
#include "admin/api/users_api.h"
#include "admin/auth/credential_authenticator.h"
#include "admin/auth/login_rate_limiter.h"
#include "admin/auth/password_hasher.h"
#include "common/http/http_server.h"
#include "tests/support/fake_clock.h"
#include "tests/support/fake_stores.h"

namespace cronwheel::admin {

struct Reply {
  int status = 0;
  nlohmann::json json;  // null when the body is empty or not JSON
  std::string body;
  httplib::Headers headers;

  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
  }
  std::string error_message() const { return json.is_object() ? json["error"].value("message", "") : ""; }
  std::string error_field() const { return json.is_object() ? json["error"].value("field", "") : ""; }
};

// What a logged-in console holds: the cookie and the CSRF token.
struct Login {
  std::string cookie;  // "cronwheel_session=..."
  std::string csrf;
  nlohmann::json user;

  // Headers of a state-changing request from this console.
  httplib::Headers changing() const { return {{"Cookie", cookie}, {"X-CSRF-Token", csrf}}; }
  httplib::Headers reading() const { return {{"Cookie", cookie}}; }
};

inline httplib::Headers bearer(const std::string& token) { return {{"Authorization", "Bearer " + token}}; }

// A UserStore passing every call to `real`, that first runs `before_change` (when set) on the
// next update or remove: a test puts there what another admin's request, committed a moment
// earlier, did, to play a race out deterministically.
class UserStoreWithHook final : public UserStore {
 public:
  explicit UserStoreWithHook(UserStore& real) : real_(real) {}

  std::function<void()> before_change;

  Page<User> list(const PageRequest& p) override { return real_.list(p); }
  std::optional<User> get(std::int64_t id) override { return real_.get(id); }
  std::optional<User> find_by_username(std::string_view n) override { return real_.find_by_username(n); }
  std::int64_t count() override { return real_.count(); }
  User create(const User& u, const Actor& a) override { return real_.create(u, a); }
  User update(const User& u, const Actor& a) override {
    hook();
    return real_.update(u, a);
  }
  void remove(std::int64_t id, const Actor& a) override {
    hook();
    real_.remove(id, a);
  }
  void set_password(std::int64_t id, const std::string& h, const std::string& k, const Actor& a) override {
    real_.set_password(id, h, k, a);
  }

 private:
  void hook() {
    if (before_change) std::exchange(before_change, nullptr)();  // once
  }
  UserStore& real_;
};

class AuthApiTest : public ::testing::Test {
 protected:
  static constexpr const char* kAdminPassword = "admin-password";
  static constexpr const char* kAlicePassword = "alice-password";

  void SetUp() override {
    common::http::HttpServerOptions o;
    o.host = "127.0.0.1";
    o.worker_threads = 4;
    server_ = std::make_unique<common::http::HttpServer>(o);
    router_ = std::make_unique<ApiRouter>(*server_, authenticator_);
    add_auth_routes(*router_, services_);
    add_users_routes(*router_, services_);
    add_tokens_routes(*router_, services_);
    add_audit_routes(*router_, fakes_.audit());

    const Actor setup{std::nullopt, "system", ""};
    Group alpha;
    alpha.app_name = "alpha-app";
    alpha.title = "Alpha";
    alpha_group_ = fakes_.groups().create(alpha, setup).id;
    User admin;
    admin.username = "admin";
    admin.role = "admin";
    admin.password_hash = passwords_.hash(kAdminPassword);
    admin_id_ = fakes_.users().create(admin, setup).id;
    User alice;
    alice.username = "alice";
    alice.role = "normal";
    alice.groups = {alpha_group_};
    alice.password_hash = passwords_.hash(kAlicePassword);
    alice_id_ = fakes_.users().create(alice, setup).id;

    server_->start();
  }

  void TearDown() override { server_->stop(); }

  Reply call(const std::string& method, const std::string& path, const std::string& body = "",
             const httplib::Headers& headers = {}) {
    httplib::Client client("127.0.0.1", server_->port());
    client.set_connection_timeout(5);
    client.set_read_timeout(30);
    const std::string full = "/api/v1/" + path;
    httplib::Result r = method == "GET"      ? client.Get(full, headers)
                        : method == "PUT"    ? client.Put(full, headers, body, "application/json")
                        : method == "DELETE" ? client.Delete(full, headers)
                                             : client.Post(full, headers, body, "application/json");
    Reply reply;
    if (!r) return reply;
    reply.status = r->status;
    reply.body = r->body;
    reply.headers = r->headers;
    reply.json = nlohmann::json::parse(r->body, nullptr, /*allow_exceptions=*/false);
    if (reply.json.is_discarded()) reply.json = nullptr;
    return reply;
  }

  Reply try_login(const std::string& username, const std::string& password) {
    return call("POST", "auth/login", nlohmann::json{{"username", username}, {"password", password}}.dump());
  }

  // Logs in and returns the console's credentials; fails the test when login fails.
  Login login(const std::string& username, const std::string& password) {
    auto r = try_login(username, password);
    EXPECT_EQ(r.status, 200) << r.body;
    Login out;
    auto cookie = r.header("Set-Cookie");
    out.cookie = cookie.substr(0, cookie.find(';'));
    if (r.json.is_object()) {
      out.csrf = r.json.value("csrfToken", "");
      out.user = r.json["user"];
    }
    return out;
  }
  Login admin_login() { return login("admin", kAdminPassword); }
  Login alice_login() { return login("alice", kAlicePassword); }

  // The actions of the audit entries, oldest first.
  std::vector<std::string> audit_actions() {
    AuditStore::Filter all;
    all.page.limit = 1000;
    std::vector<std::string> actions;
    auto page = fakes_.audit().list(all);
    for (auto it = page.items.rbegin(); it != page.items.rend(); ++it) actions.push_back(it->action);
    return actions;
  }
  std::optional<AuditEntry> last_audit(const std::string& action) {
    AuditStore::Filter all;
    all.page.limit = 1000;
    for (const auto& e : fakes_.audit().list(all).items) {
      if (e.action == action) return e;
    }
    return std::nullopt;
  }

  cronwheel::testing::FakeClock clock_;
  cronwheel::testing::FakeStores fakes_{clock_};
  UserStoreWithHook users_{fakes_.users()};
  PasswordHasher passwords_{{PasswordHasher::Strength::kMinimum, 4}};
  LoginRateLimiter limiter_{clock_};
  CredentialAuthenticator authenticator_{fakes_.sessions(), fakes_.tokens(), clock_, {}};
  AuthServices services_{Stores{fakes_.groups(), fakes_.jobs(), fakes_.logs(), fakes_.scripts(), users_, fakes_.tokens(),
                                fakes_.sessions(), fakes_.audit(), fakes_.overview()},
                         authenticator_, passwords_, limiter_, clock_};
  std::unique_ptr<common::http::HttpServer> server_;
  std::unique_ptr<ApiRouter> router_;
  std::int64_t alpha_group_ = 0;
  std::int64_t admin_id_ = 0;
  std::int64_t alice_id_ = 0;
};

}  // namespace cronwheel::admin
