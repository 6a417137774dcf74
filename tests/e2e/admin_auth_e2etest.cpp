// The REST API's authentication as the console and automation use it: the real
// cronwheel-admin on a fresh PostgreSQL database, driven over HTTP.

#include <gtest/gtest.h>

#include <chrono>
#include <regex>
#include <string>
#include <thread>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "tests/support/process.h"
#include "tests/support/test_database.h"

namespace cronwheel {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::Process;
using testing::TestDatabase;

const std::string kAdmin = std::string(CRONWHEEL_BIN_DIR) + "/cronwheel-admin";
constexpr const char* kPassword = "e2e-admin-password";

struct Reply {
  int status = 0;
  json body;
  std::string text;
  httplib::Headers headers;

  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
  }
};

// What a logged-in console keeps.
struct Console {
  std::string cookie;
  std::string csrf;
  httplib::Headers reading() const { return {{"Cookie", cookie}}; }
  httplib::Headers changing() const { return {{"Cookie", cookie}, {"X-CSRF-Token", csrf}}; }
};

httplib::Headers bearer(const std::string& token) { return {{"Authorization", "Bearer " + token}}; }

// A cronwheel-admin process on 127.0.0.1 and a port of the OS's choosing.
class Admin {
 public:
  Admin(const std::string& db_url, std::vector<std::string> env)
      : process_({kAdmin, "--listen", "127.0.0.1:0", "--db-url", db_url, "--db-wait", "5", "--http-threads", "4",
                  "--db-pool-size", "2"},
                 std::move(env)) {}

  // Waits for the "listening on" line; false when the process exits or does not get there.
  bool wait_until_listening(std::chrono::milliseconds timeout = 60s) {
    static const std::regex listening(R"(listening on http://127\.0\.0\.1:(\d+)/)");
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      std::smatch m;
      const std::string out = process_.out();
      if (std::regex_search(out, m, listening)) {
        port_ = std::stoi(m[1]);
        return true;
      }
      if (!process_.running()) return false;
      std::this_thread::sleep_for(20ms);
    }
    return false;
  }

  Reply call(const std::string& method, const std::string& path, const std::string& body = "",
             const httplib::Headers& headers = {}) {
    httplib::Client client("127.0.0.1", port_);
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
    reply.text = r->body;
    reply.headers = r->headers;
    reply.body = json::parse(r->body, nullptr, /*allow_exceptions=*/false);
    if (reply.body.is_discarded()) reply.body = nullptr;
    return reply;
  }

  Reply try_login(const std::string& username, const std::string& password) {
    return call("POST", "auth/login", json{{"username", username}, {"password", password}}.dump());
  }

  Console login(const std::string& username, const std::string& password) {
    auto r = try_login(username, password);
    EXPECT_EQ(r.status, 200) << r.text;
    auto cookie = r.header("Set-Cookie");
    return {cookie.substr(0, cookie.find(';')), r.body.is_object() ? r.body.value("csrfToken", "") : ""};
  }

  Process& process() { return process_; }
  int port() const { return port_; }

 private:
  Process process_;
  int port_ = 0;
};

class AdminAuthE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    admin_ = std::make_unique<Admin>(db_.url(), std::vector<std::string>{std::string("CRONWHEEL_ADMIN_PASSWORD=") + kPassword});
    ASSERT_TRUE(admin_->wait_until_listening()) << admin_->process().out() << admin_->process().err();
  }

  void TearDown() override {
    admin_->process().signal(SIGTERM);
    EXPECT_EQ(admin_->process().wait_for_exit(30s), 0) << admin_->process().out();
  }

  // Creates a user as `as` and returns its id.
  std::int64_t create_user(const Console& as, const std::string& name, const std::string& role) {
    auto r = admin_->call("POST", "users", json{{"username", name}, {"password", name + "-password"}, {"role", role}}.dump(),
                          as.changing());
    EXPECT_EQ(r.status, 201) << r.text;
    return r.body.is_object() ? r.body.value("id", std::int64_t{0}) : 0;
  }

  TestDatabase db_;
  std::unique_ptr<Admin> admin_;
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

  Console console{cookie.substr(0, cookie.find(';')), r.body["csrfToken"]};
  auto me = admin_->call("GET", "auth/me", "", console.reading());
  EXPECT_EQ(me.status, 200) << me.text;
  EXPECT_EQ(me.body["user"]["username"], "admin");

  auto out = admin_->call("POST", "auth/logout", "", console.changing());
  EXPECT_EQ(out.status, 204) << out.text;
  EXPECT_EQ(admin_->call("GET", "auth/me", "", console.reading()).status, 401);
}

TEST_F(AdminAuthE2E, ACookieChangeWithoutTheCsrfHeaderIs403AndWithItSucceeds) {
  auto console = admin_->login("admin", kPassword);
  const auto body = json{{"username", "bob"}, {"password", "bob-password"}}.dump();
  auto without = admin_->call("POST", "users", body, console.reading());
  EXPECT_EQ(without.status, 403) << without.text;
  EXPECT_EQ(without.body["error"]["code"], "forbidden");
  auto with = admin_->call("POST", "users", body, console.changing());
  EXPECT_EQ(with.status, 201) << with.text;
}

TEST_F(AdminAuthE2E, ANormalUserLogsInAndIsRefusedAdminEndpoints) {
  auto admin = admin_->login("admin", kPassword);
  create_user(admin, "bob", "normal");
  auto bob = admin_->login("bob", "bob-password");
  auto me = admin_->call("GET", "auth/me", "", bob.reading());
  ASSERT_EQ(me.status, 200) << me.text;
  EXPECT_EQ(me.body["user"]["role"], "normal");

  EXPECT_EQ(admin_->call("GET", "users", "", bob.reading()).status, 403);
  EXPECT_EQ(admin_->call("GET", "audit", "", bob.reading()).status, 403);
  auto create = admin_->call("POST", "users", json{{"username", "eve"}, {"password", "eve-password"}}.dump(), bob.changing());
  EXPECT_EQ(create.status, 403) << create.text;
  EXPECT_EQ(create.body["error"]["message"], "this needs the admin role");
}

TEST_F(AdminAuthE2E, ATokenAuthenticatesUntilItIsRevoked) {
  auto console = admin_->login("admin", kPassword);
  auto created = admin_->call("POST", "tokens", json{{"name", "ci"}}.dump(), console.changing());
  ASSERT_EQ(created.status, 201) << created.text;
  const auto token = created.body["token"].get<std::string>();
  const auto id = created.body["id"].get<std::int64_t>();

  // Automation needs neither cookie nor CSRF header.
  EXPECT_EQ(admin_->call("GET", "users", "", bearer(token)).status, 200);
  auto made = admin_->call("POST", "users", json{{"username", "robot"}, {"password", "robot-password"}}.dump(), bearer(token));
  EXPECT_EQ(made.status, 201) << made.text;
  auto listed = admin_->call("GET", "tokens", "", bearer(token));
  EXPECT_EQ(listed.text.find(token), std::string::npos);

  EXPECT_EQ(admin_->call("DELETE", "tokens/" + std::to_string(id), "", console.changing()).status, 204);
  auto after = admin_->call("GET", "users", "", bearer(token));
  EXPECT_EQ(after.status, 401) << after.text;
}

TEST_F(AdminAuthE2E, AuditListsEveryChangeWithWhoAndWhat) {
  auto console = admin_->login("admin", kPassword);
  auto bob = create_user(console, "bob", "normal");
  admin_->call("PUT", "users/" + std::to_string(bob), json{{"role", "admin"}}.dump(), console.changing());
  auto token = admin_->call("POST", "tokens", json{{"name", "ci"}}.dump(), console.changing());
  admin_->call("DELETE", "tokens/" + std::to_string(token.body["id"].get<std::int64_t>()), "", console.changing());
  admin_->try_login("admin", "wrong-password");

  auto r = admin_->call("GET", "audit?limit=100", "", console.reading());
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

  auto filtered = admin_->call("GET", "audit?entityType=user&entityId=" + std::to_string(bob), "", console.reading());
  EXPECT_EQ(filtered.body["total"], 2) << filtered.text;
}

TEST_F(AdminAuthE2E, MalformedBodiesAreRefusedNamingTheField) {
  auto console = admin_->login("admin", kPassword);
  auto unknown = admin_->call("POST", "auth/login", R"({"username":"admin","password":"x","otp":"1"})");
  EXPECT_EQ(unknown.status, 400);
  EXPECT_EQ(unknown.body["error"]["field"], "otp");
  auto type = admin_->call("POST", "users", R"({"username":"bob","password":"bob-password","groups":"all"})",
                           console.changing());
  EXPECT_EQ(type.status, 400);
  EXPECT_EQ(type.body["error"]["message"], "groups: expected an array of integers, got string");
  auto broken = admin_->call("POST", "tokens", R"({"name":)", console.changing());
  EXPECT_EQ(broken.status, 400);
  EXPECT_EQ(broken.body["error"]["code"], "invalid");
  auto short_password = admin_->call("PUT", "auth/password", R"({"currentPassword":"x","newPassword":"short"})",
                                     console.changing());
  EXPECT_EQ(short_password.status, 400);
  EXPECT_EQ(short_password.body["error"]["field"], "newPassword");
}

TEST_F(AdminAuthE2E, ASessionIsValidOnEveryAdminNode) {
  auto console = admin_->login("admin", kPassword);
  Admin second(db_.url(), {});
  ASSERT_TRUE(second.wait_until_listening()) << second.process().out();
  EXPECT_EQ(second.call("GET", "auth/me", "", console.reading()).status, 200);
  auto r = second.call("POST", "tokens", json{{"name", "from-node-2"}}.dump(), console.changing());
  EXPECT_EQ(r.status, 201) << r.text;
  // The second node found users and created no admin of its own.
  EXPECT_EQ(second.process().out().find("created user admin"), std::string::npos) << second.process().out();
  second.process().signal(SIGTERM);
  EXPECT_EQ(second.process().wait_for_exit(30s), 0);
}

TEST(AdminAuthBootstrap, PrintsAGeneratedPasswordOnceWhenNoneIsConfigured) {
  TestDatabase db;
  std::string password;
  {
    Admin admin(db.url(), {"CRONWHEEL_ADMIN_PASSWORD="});
    ASSERT_TRUE(admin.wait_until_listening()) << admin.process().out() << admin.process().err();
    static const std::regex created(R"(created user admin with password (\S+))");
    std::smatch m;
    const auto out = admin.process().out();
    ASSERT_TRUE(std::regex_search(out, m, created)) << out;
    password = m[1];
    EXPECT_EQ(admin.try_login("admin", password).status, 200);
    admin.process().signal(SIGTERM);
    EXPECT_EQ(admin.process().wait_for_exit(30s), 0);
  }
  // A restart keeps the user and prints nothing.
  Admin again(db.url(), {"CRONWHEEL_ADMIN_PASSWORD="});
  ASSERT_TRUE(again.wait_until_listening()) << again.process().out();
  EXPECT_EQ(again.process().out().find("created user admin"), std::string::npos);
  EXPECT_EQ(again.try_login("admin", password).status, 200);
}

}  // namespace
}  // namespace cronwheel
