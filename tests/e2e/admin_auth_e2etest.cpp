// The REST API's authentication as the console and automation use it: the real
// cronwheel-admin on a fresh PostgreSQL database, driven over HTTP.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/admin_process.h"
#include "tests/support/test_database.h"

namespace cronwheel {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::AdminProcess;
using testing::ApiCredentials;
using testing::TestDatabase;

constexpr const char* kPassword = AdminProcess::kPassword;

// A cronwheel-admin with few threads and connections, and the bootstrap admin's password from
// `admin_password` (empty: not configured) plus the environment in `env`.
AdminProcess::Options small_admin(const std::string& db_url, std::string admin_password,
                                  std::vector<std::string> env = {}) {
  return {.db_url = db_url,
          .args = {"--http-threads", "4", "--db-pool-size", "2"},
          .env = std::move(env),
          .admin_password = std::move(admin_password)};
}

class AdminAuthE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    admin_ = std::make_unique<AdminProcess>(small_admin(db_.url(), kPassword));
    ASSERT_GT(admin_->wait_until_listening(), 0) << admin_->process().out() << admin_->process().err();
  }

  void TearDown() override { EXPECT_EQ(admin_->stop(30s), 0) << admin_->process().out(); }

  // Creates a user as `as` and returns its id.
  std::int64_t create_user(const ApiCredentials& as, const std::string& name, const std::string& role) {
    auto r = admin_->post("users", as, {{"username", name}, {"password", name + "-password"}, {"role", role}});
    EXPECT_EQ(r.status, 201) << r.text;
    return r.body.is_object() ? r.body.value("id", std::int64_t{0}) : 0;
  }

  TestDatabase db_;
  std::unique_ptr<AdminProcess> admin_;
};

TEST_F(AdminAuthE2E, FirstStartCreatesAdminWithTheConfiguredPassword) {
  auto r = admin_->try_login("admin", kPassword);
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body["user"]["username"], "admin");
  EXPECT_EQ(r.body["user"]["role"], "admin");
  EXPECT_FALSE(r.body["csrfToken"].get<std::string>().empty());
  EXPECT_NE(admin_->process().out().find("created user admin with the password from CRONWHEEL_ADMIN_PASSWORD"),
            std::string::npos)
      << admin_->process().out();
  EXPECT_EQ(admin_->process().out().find(kPassword), std::string::npos);  // never logged
  EXPECT_EQ(admin_->try_login("admin", "not-the-password").status, 401);
}

TEST_F(AdminAuthE2E, LoginSetsAnHttpOnlySameSiteStrictSessionCookie) {
  auto r = admin_->try_login("admin", kPassword);
  ASSERT_EQ(r.status, 200) << r.text;
  const auto cookie = r.header("Set-Cookie");
  EXPECT_EQ(cookie.rfind("cronwheel_session=", 0), 0u) << cookie;
  EXPECT_NE(cookie.find("; HttpOnly"), std::string::npos) << cookie;
  EXPECT_NE(cookie.find("; SameSite=Strict"), std::string::npos) << cookie;
  EXPECT_NE(cookie.find("; Path=/"), std::string::npos) << cookie;

  ApiCredentials console;
  console.cookie = cookie.substr(0, cookie.find(';'));
  console.csrf = r.body["csrfToken"];
  auto me = admin_->get("auth/me", console);
  EXPECT_EQ(me.status, 200) << me.text;
  EXPECT_EQ(me.body["user"]["username"], "admin");

  auto out = admin_->call("POST", "auth/logout", console);
  EXPECT_EQ(out.status, 204) << out.text;
  EXPECT_EQ(admin_->get("auth/me", console).status, 401);
}

TEST_F(AdminAuthE2E, ACookieChangeWithoutTheCsrfHeaderIs403AndWithItSucceeds) {
  auto console = admin_->login("admin", kPassword);
  const json body = {{"username", "bob"}, {"password", "bob-password"}};
  auto without = admin_->post("users", console.without_csrf(), body);
  EXPECT_EQ(without.status, 403) << without.text;
  EXPECT_EQ(without.body["error"]["code"], "forbidden");
  auto with = admin_->post("users", console, body);
  EXPECT_EQ(with.status, 201) << with.text;
}

TEST_F(AdminAuthE2E, ANormalUserLogsInAndIsRefusedAdminEndpoints) {
  auto admin = admin_->login("admin", kPassword);
  create_user(admin, "bob", "normal");
  auto bob = admin_->login("bob", "bob-password");
  auto me = admin_->get("auth/me", bob);
  ASSERT_EQ(me.status, 200) << me.text;
  EXPECT_EQ(me.body["user"]["role"], "normal");

  EXPECT_EQ(admin_->get("users", bob).status, 403);
  EXPECT_EQ(admin_->get("audit", bob).status, 403);
  auto create = admin_->post("users", bob, {{"username", "eve"}, {"password", "eve-password"}});
  EXPECT_EQ(create.status, 403) << create.text;
  EXPECT_EQ(create.body["error"]["message"], "this needs the admin role");
}

TEST_F(AdminAuthE2E, ATokenAuthenticatesUntilItIsRevoked) {
  auto console = admin_->login("admin", kPassword);
  auto created = admin_->post("tokens", console, {{"name", "ci"}});
  ASSERT_EQ(created.status, 201) << created.text;
  const auto token = created.body["token"].get<std::string>();
  const auto bot = ApiCredentials::token(token);
  const auto id = created.body["id"].get<std::int64_t>();

  // Automation needs neither cookie nor CSRF header.
  EXPECT_EQ(admin_->get("users", bot).status, 200);
  auto made = admin_->post("users", bot, {{"username", "robot"}, {"password", "robot-password"}});
  EXPECT_EQ(made.status, 201) << made.text;
  auto listed = admin_->get("tokens", bot);
  EXPECT_EQ(listed.text.find(token), std::string::npos);

  EXPECT_EQ(admin_->del("tokens/" + std::to_string(id), console).status, 204);
  auto after = admin_->get("users", bot);
  EXPECT_EQ(after.status, 401) << after.text;
}

// PostgreSQL gets text parameters as C strings: a name with a NUL in it used to reach the
// database cut short, log in as that user and be throttled apart from them.
TEST_F(AdminAuthE2E, ANameWithANulLogsNobodyIn) {
  // admin now waits before each attempt from here; the variant must not sidestep that.
  for (int i = 0; i < 8; ++i) admin_->try_login("admin", "guess-" + std::to_string(i));
  auto r = admin_->call("POST", "auth/login", {}, R"({"username":"admin\u0000x","password":")" + std::string(kPassword) + "\"}");
  EXPECT_NE(r.status, 200) << r.text;
  EXPECT_TRUE(r.header("Set-Cookie").empty()) << r.text;
}

TEST_F(AdminAuthE2E, APasswordChangeRevokesTokensAndEndsOtherSessions) {
  auto console = admin_->login("admin", kPassword);
  auto other = admin_->login("admin", kPassword);
  auto created = admin_->post("tokens", console, {{"name", "ci"}, {"expiresInDays", 30}});
  ASSERT_EQ(created.status, 201) << created.text;
  EXPECT_TRUE(created.body["expiresAt"].is_number()) << created.text;
  const auto bot = ApiCredentials::token(created.body["token"].get<std::string>());
  ASSERT_EQ(admin_->get("auth/me", bot).status, 200);

  auto changed = admin_->put("auth/password", console, {{"currentPassword", kPassword}, {"newPassword", "a-new-password"}});
  ASSERT_EQ(changed.status, 204) << changed.text;
  EXPECT_EQ(admin_->get("auth/me", bot).status, 401);
  EXPECT_EQ(admin_->get("auth/me", other).status, 401);
  EXPECT_EQ(admin_->get("auth/me", console).status, 200);
  auto tokens = admin_->get("tokens", console);
  ASSERT_EQ(tokens.status, 200) << tokens.text;
  EXPECT_FALSE(tokens.body["items"][0]["revokedAt"].is_null()) << tokens.text;
  EXPECT_EQ(admin_->post("tokens", console, {{"name", "ci"}, {"expiresInDays", 0}}).body["error"]["field"], "expiresInDays");
}

TEST_F(AdminAuthE2E, TheLastAdminStaysAnAdmin) {
  auto console = admin_->login("admin", kPassword);
  auto bob = create_user(console, "bob", "admin");
  auto bob_console = admin_->login("bob", "bob-password");
  const auto admin_id = admin_->get("auth/me", console).body["user"]["id"].get<std::int64_t>();
  // bob demotes admin, then admin (still logged in, no longer an admin) cannot touch bob.
  EXPECT_EQ(admin_->put("users/" + std::to_string(admin_id), bob_console, {{"role", "normal"}}).status, 200);
  EXPECT_EQ(admin_->put("users/" + std::to_string(bob), console, {{"role", "normal"}}).status, 403);
  // bob may not demote or delete himself, the last admin.
  EXPECT_EQ(admin_->put("users/" + std::to_string(bob), bob_console, {{"role", "normal"}}).status, 409);
  EXPECT_EQ(admin_->del("users/" + std::to_string(bob), bob_console).status, 409);
}

TEST_F(AdminAuthE2E, AuditListsEveryChangeWithWhoAndWhat) {
  auto console = admin_->login("admin", kPassword);
  auto bob = create_user(console, "bob", "normal");
  admin_->put("users/" + std::to_string(bob), console, {{"role", "admin"}});
  auto token = admin_->post("tokens", console, {{"name", "ci"}});
  admin_->del("tokens/" + std::to_string(token.body["id"].get<std::int64_t>()), console);
  admin_->try_login("admin", "wrong-password");

  auto r = admin_->get("audit?limit=100", console);
  ASSERT_EQ(r.status, 200) << r.text;
  std::vector<std::string> actions;
  for (const auto& e : r.body["items"]) actions.push_back(e["action"]);
  // Newest first; the bootstrap user's creation by the system comes first of all.
  const std::vector<std::string> expected{"auth.login_failed", "token.revoke", "token.create", "user.update",
                                          "user.create",       "auth.login",   "user.create"};
  EXPECT_EQ(actions, expected) << r.text;
  const auto& update = r.body["items"][3];
  EXPECT_EQ(update["username"], "admin");
  EXPECT_EQ(update["remoteAddr"], "127.0.0.1");
  EXPECT_EQ(update["entityType"], "user");
  EXPECT_EQ(update["entityId"], bob);
  EXPECT_EQ(update["before"]["role"], "normal");
  EXPECT_EQ(update["after"]["role"], "admin");
  EXPECT_EQ(r.body["items"].back()["username"], "system");
  EXPECT_EQ(r.text.find("argon2"), std::string::npos);

  auto filtered = admin_->get("audit?entityType=user&entityId=" + std::to_string(bob), console);
  EXPECT_EQ(filtered.body["total"], 2) << filtered.text;
}

TEST_F(AdminAuthE2E, MalformedBodiesAreRefusedNamingTheField) {
  auto console = admin_->login("admin", kPassword);
  auto unknown = admin_->call("POST", "auth/login", {}, R"({"username":"admin","password":"x","otp":"1"})");
  EXPECT_EQ(unknown.status, 400);
  EXPECT_EQ(unknown.body["error"]["field"], "otp");
  auto type = admin_->call("POST", "users", console, R"({"username":"bob","password":"bob-password","groups":"all"})");
  EXPECT_EQ(type.status, 400);
  EXPECT_EQ(type.body["error"]["message"], "groups: expected an array of integers, got string");
  auto broken = admin_->call("POST", "tokens", console, R"({"name":)");
  EXPECT_EQ(broken.status, 400);
  EXPECT_EQ(broken.body["error"]["code"], "invalid");
  auto short_password =
      admin_->call("PUT", "auth/password", console, R"({"currentPassword":"x","newPassword":"short"})");
  EXPECT_EQ(short_password.status, 400);
  EXPECT_EQ(short_password.body["error"]["field"], "newPassword");
}

TEST_F(AdminAuthE2E, ASessionIsValidOnEveryAdminNode) {
  auto console = admin_->login("admin", kPassword);
  AdminProcess second(small_admin(db_.url(), ""));
  ASSERT_GT(second.wait_until_listening(), 0) << second.process().out();
  EXPECT_EQ(second.get("auth/me", console).status, 200);
  auto r = second.post("tokens", console, {{"name", "from-node-2"}});
  EXPECT_EQ(r.status, 201) << r.text;
  // The second node found users and created no admin of its own.
  EXPECT_EQ(second.process().out().find("created user admin"), std::string::npos) << second.process().out();
  EXPECT_EQ(second.stop(30s), 0);
}

TEST(AdminAuthBootstrap, PrintsAGeneratedPasswordOnceWhenNoneIsConfigured) {
  TestDatabase db;
  std::string password;
  {
    AdminProcess admin(small_admin(db.url(), "", {"CRONWHEEL_ADMIN_PASSWORD="}));
    ASSERT_GT(admin.wait_until_listening(), 0) << admin.process().out() << admin.process().err();
    static const std::regex created(R"(created user admin with password (\S+))");
    std::smatch m;
    const auto out = admin.process().out();
    ASSERT_TRUE(std::regex_search(out, m, created)) << out;
    password = m[1];
    EXPECT_EQ(admin.try_login("admin", password).status, 200);
    EXPECT_EQ(admin.stop(30s), 0);
  }
  // A restart keeps the user and prints nothing.
  AdminProcess again(small_admin(db.url(), "", {"CRONWHEEL_ADMIN_PASSWORD="}));
  ASSERT_GT(again.wait_until_listening(), 0) << again.process().out();
  EXPECT_EQ(again.process().out().find("created user admin"), std::string::npos);
  EXPECT_EQ(again.try_login("admin", password).status, 200);
}

}  // namespace
}  // namespace cronwheel
