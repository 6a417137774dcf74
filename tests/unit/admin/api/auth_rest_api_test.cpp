#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "admin/api/rest_api.h"
#include "common/http/http_server.h"
#include "tests/support/fake_clock.h"
#include "tests/support/fake_stores.h"

namespace cronwheel::admin {
namespace {

using nlohmann::json;

class RestApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    common::http::HttpServerOptions o;
    o.host = "127.0.0.1";
    o.worker_threads = 2;
    server_ = std::make_unique<common::http::HttpServer>(o);
    RestApi::Options options;
    options.passwords.strength = PasswordHasher::Strength::kMinimum;
    api_ = std::make_unique<RestApi>(*server_, fakes_.stores(), clock_, std::move(options));
    User admin;
    admin.username = "admin";
    admin.role = "admin";
    admin.password_hash = api_->passwords().hash("admin-password");
    fakes_.users().create(admin, {std::nullopt, "system", ""});
    server_->start();
  }
  void TearDown() override { server_->stop(); }

  bool has_route(const std::string& method, const std::string& path) const {
    const auto& routes = api_->router().routes();
    return std::any_of(routes.begin(), routes.end(),
                       [&](const ApiRouter::Route& r) { return r.method == method && r.path == path; });
  }

  cronwheel::testing::FakeClock clock_;
  cronwheel::testing::FakeStores fakes_{clock_};
  std::unique_ptr<common::http::HttpServer> server_;
  std::unique_ptr<RestApi> api_;
};

TEST_F(RestApiTest, RegistersTheAuthenticationAndResourceRoutes) {
  for (auto [method, path] : std::vector<std::pair<std::string, std::string>>{
           {"POST", "auth/login"},  {"POST", "auth/logout"}, {"PUT", "auth/password"}, {"GET", "auth/me"},
           {"GET", "users"},        {"POST", "users"},       {"GET", "users/{id}"},    {"PUT", "users/{id}"},
           {"DELETE", "users/{id}"}, {"GET", "tokens"},      {"POST", "tokens"},       {"DELETE", "tokens/{id}"},
           {"GET", "audit"},        {"GET", "groups"},       {"GET", "jobs"},          {"GET", "logs"},
           {"GET", "cron/next"}}) {
    EXPECT_TRUE(has_route(method, path)) << method << " " << path;
  }
  // No route is registered twice.
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& r : api_->router().routes()) EXPECT_TRUE(seen.emplace(r.method, r.path).second) << r.method << " " << r.path;
}

TEST_F(RestApiTest, ASessionFromLoginReachesTheResourceRoutes) {
  httplib::Client client("127.0.0.1", server_->port());
  auto login = client.Post("/api/v1/auth/login", json{{"username", "admin"}, {"password", "admin-password"}}.dump(),
                           "application/json");
  ASSERT_TRUE(login);
  ASSERT_EQ(login->status, 200) << login->body;
  auto cookie = login->get_header_value("Set-Cookie");
  cookie = cookie.substr(0, cookie.find(';'));
  auto groups = client.Get("/api/v1/groups", {{"Cookie", cookie}});
  ASSERT_TRUE(groups);
  EXPECT_EQ(groups->status, 200) << groups->body;
  auto anonymous = client.Get("/api/v1/groups");
  ASSERT_TRUE(anonymous);
  EXPECT_EQ(anonymous->status, 401);
}

}  // namespace
}  // namespace cronwheel::admin
