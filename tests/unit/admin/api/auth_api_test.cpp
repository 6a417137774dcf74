#include "tests/unit/admin/auth/auth_api_fixture.h"

namespace cronwheel::admin {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

TEST_F(AuthApiTest, LoginAnswersTheUserAndACsrfTokenAndSetsTheSessionCookie) {
  auto r = try_login("admin", kAdminPassword);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json["user"]["username"], "admin");
  EXPECT_EQ(r.json["user"]["role"], "admin");
  EXPECT_FALSE(r.json["user"].contains("password"));
  EXPECT_FALSE(r.json["user"].contains("passwordHash"));
  EXPECT_GE(r.json["csrfToken"].get<std::string>().size(), 32u);

  auto cookie = r.header("Set-Cookie");
  EXPECT_EQ(cookie.rfind("cronwheel_session=", 0), 0u) << cookie;
  EXPECT_NE(cookie.find("HttpOnly"), std::string::npos) << cookie;
  EXPECT_NE(cookie.find("SameSite=Strict"), std::string::npos) << cookie;
  EXPECT_EQ(r.header("Cache-Control"), "no-store");
  // The cookie is not the CSRF token: a page that reads one learns nothing of the other.
  EXPECT_EQ(cookie.find(r.json["csrfToken"].get<std::string>()), std::string::npos);
}

TEST_F(AuthApiTest, LoginFailsAlikeForAnUnknownUserAndAWrongPassword) {
  auto wrong = try_login("admin", "not-the-password");
  auto unknown = try_login("nobody", "not-the-password");
  EXPECT_EQ(wrong.status, 401);
  EXPECT_EQ(unknown.status, 401);
  EXPECT_EQ(wrong.body, unknown.body);
  EXPECT_EQ(wrong.error_message(), "wrong username or password");
  EXPECT_TRUE(wrong.header("Set-Cookie").empty());
}

// A user a jobs file made has no password ('') until an admin sets one: nothing logs in as it,
// not even an empty password, and the answer is the one for a wrong password.
TEST_F(AuthApiTest, AUserWithoutAPasswordCannotLogIn) {
  User imported;
  imported.username = "imported";
  imported.role = "admin";
  fakes_.users().create(imported, Actor{std::nullopt, "system", ""});
  for (const char* password : {"", "x", "not-the-password"}) {
    auto r = try_login("imported", password);
    EXPECT_NE(r.status, 200) << password;
  }
  auto r = try_login("imported", "not-the-password");
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(r.error_message(), "wrong username or password");
}

TEST_F(AuthApiTest, LoginRejectsMalformedBodiesNamingTheField) {
  auto missing = call("POST", "auth/login", R"({"username":"admin"})");
  EXPECT_EQ(missing.status, 400);
  EXPECT_EQ(missing.error_field(), "password");
  auto extra = call("POST", "auth/login", R"({"username":"admin","password":"x","remember":true})");
  EXPECT_EQ(extra.status, 400);
  EXPECT_EQ(extra.error_field(), "remember");
  auto type = call("POST", "auth/login", R"({"username":"admin","password":12345678})");
  EXPECT_EQ(type.status, 400);
  EXPECT_EQ(type.error_message(), "password: expected a string, got integer");
  EXPECT_EQ(call("POST", "auth/login", "{").status, 400);
}

TEST_F(AuthApiTest, RepeatedFailuresBackOffWithRetryAfter) {
  for (int i = 0; i < 6; ++i) EXPECT_EQ(try_login("alice", "guess-" + std::to_string(i)).status, 401);
  auto waiting = try_login("alice", kAlicePassword);  // even the right password must wait
  EXPECT_EQ(waiting.status, 429) << waiting.body;
  EXPECT_EQ(waiting.header("Retry-After"), "1");
  EXPECT_EQ(waiting.json["error"]["code"], "rate_limited");
  EXPECT_TRUE(waiting.header("Set-Cookie").empty());
  clock_.advance(1s);
  EXPECT_EQ(try_login("alice", "guess-6").status, 401);
  EXPECT_EQ(try_login("alice", kAlicePassword).header("Retry-After"), "2");  // doubled
  // Other users are not slowed down by alice's guesser.
  EXPECT_EQ(try_login("admin", kAdminPassword).status, 200);

  clock_.advance(2s);
  EXPECT_EQ(try_login("alice", kAlicePassword).status, 200);
  // A success from this address clears its failures on alice.
  EXPECT_EQ(try_login("alice", "one-typo").status, 401);
  EXPECT_EQ(try_login("alice", kAlicePassword).status, 200);
}

// The review finding: five wrong passwords from anywhere used to lock the right one out for
// 15 minutes, admins included.
TEST_F(AuthApiTest, GuessersOnOtherAddressesCannotLockAnAdminOut) {
  for (int i = 0; i < 1000; ++i) limiter_.record_failure("admin", "203.0.113." + std::to_string(i % 200));
  auto r = try_login("admin", kAdminPassword);  // from 127.0.0.1
  EXPECT_EQ(r.status, 200) << r.body;
  // A typo during the attack costs a short wait, never a lockout.
  EXPECT_EQ(try_login("admin", "typo").status, 401);
  auto wait = try_login("admin", kAdminPassword);
  ASSERT_EQ(wait.status, 429) << wait.body;
  EXPECT_LE(std::stoi(wait.header("Retry-After")), 30);
  clock_.advance(std::chrono::seconds(std::stoi(wait.header("Retry-After"))));
  EXPECT_EQ(try_login("admin", kAdminPassword).status, 200);
}

// The review finding: "alice\u0000x" reached the store as "alice" (libpq cuts text at a NUL),
// logged in as alice, and was throttled apart from her. A name that cannot be a username is
// now never looked up, so it is nobody's.
TEST_F(AuthApiTest, ANameCutShortByTheDatabaseLogsNobodyIn) {
  for (int i = 0; i < 7; ++i) try_login("alice", "guess-" + std::to_string(i));
  ASSERT_EQ(try_login("alice", kAlicePassword).status, 429);
  for (const std::string& name : {std::string("alice\0x", 7), std::string("alice\0", 6)}) {
    auto r = try_login(name, kAlicePassword);
    EXPECT_NE(r.status, 200) << r.body;
    EXPECT_TRUE(r.header("Set-Cookie").empty());
  }
  // Failures under such a name are not alice's: her wait did not grow.
  clock_.advance(2s);
  EXPECT_EQ(try_login("alice", kAlicePassword).status, 200);
}

TEST_F(AuthApiTest, FailedLoginsCountAgainstTheStoredUsername) {
  for (int i = 0; i < 6; ++i) try_login("alice", "guess-" + std::to_string(i));
  EXPECT_TRUE(limiter_.retry_after("alice", "127.0.0.1"));
  for (int i = 0; i < 6; ++i) try_login("ghost", "guess-" + std::to_string(i));
  EXPECT_TRUE(limiter_.retry_after("ghost", "127.0.0.1"));
  EXPECT_FALSE(limiter_.retry_after("Alice", "127.0.0.1"));
}

TEST_F(AuthApiTest, LoginsAndFailedLoginsAreAudited) {
  admin_login();
  try_login("admin", "wrong-password");
  try_login("gh\u00f8st", "wrong-password");  // not a username: never looked up, still audited

  auto ok = last_audit("auth.login");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->user_id, admin_id_);
  EXPECT_EQ(ok->username, "admin");
  EXPECT_EQ(ok->entity_type, "user");
  EXPECT_EQ(ok->entity_id, admin_id_);
  EXPECT_EQ(ok->remote_addr, "127.0.0.1");

  AuditStore::Filter failed;
  failed.page.limit = 10;
  std::vector<AuditEntry> failures;
  for (const auto& e : fakes_.audit().list(failed).items) {
    if (e.action == "auth.login_failed") failures.push_back(e);
  }
  ASSERT_EQ(failures.size(), 2u);
  EXPECT_EQ(failures[0].username, "gh??st");  // only printable ASCII reaches the log
  EXPECT_FALSE(failures[0].user_id);
  EXPECT_EQ(failures[1].username, "admin");
  EXPECT_EQ(failures[1].entity_id, admin_id_);
}

TEST_F(AuthApiTest, CookieRequestsThatChangeStateNeedTheCsrfTokenFromLogin) {
  auto admin = admin_login();
  const std::string body = json{{"name", "ci"}}.dump();
  auto without = call("POST", "tokens", body, admin.reading());
  EXPECT_EQ(without.status, 403) << without.body;
  EXPECT_NE(without.error_message().find("X-CSRF-Token"), std::string::npos);
  auto wrong = call("POST", "tokens", body, {{"Cookie", admin.cookie}, {"X-CSRF-Token", admin.csrf + "x"}});
  EXPECT_EQ(wrong.status, 403);
  EXPECT_EQ(call("POST", "tokens", body, admin.changing()).status, 201);
  // Reads need no token.
  EXPECT_EQ(call("GET", "tokens", "", admin.reading()).status, 200);
}

TEST_F(AuthApiTest, EachLoginHasItsOwnCsrfToken) {
  auto first = admin_login();
  auto second = admin_login();
  EXPECT_NE(first.csrf, second.csrf);
  EXPECT_NE(first.cookie, second.cookie);
  auto mixed = call("POST", "tokens", json{{"name", "x"}}.dump(), {{"Cookie", first.cookie}, {"X-CSRF-Token", second.csrf}});
  EXPECT_EQ(mixed.status, 403);
}

TEST_F(AuthApiTest, RequestsWithoutValidCredentialsAre401) {
  EXPECT_EQ(call("GET", "auth/me").status, 401);
  EXPECT_EQ(call("GET", "auth/me", "", {{"Cookie", "cronwheel_session=forged"}}).status, 401);
  auto r = call("GET", "auth/me", "", bearer("cw_forged"));
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(r.json["error"]["code"], "unauthorized");
}

TEST_F(AuthApiTest, MeTellsWhoIsLoggedInAndTheirCsrfToken) {
  auto alice = alice_login();
  auto r = call("GET", "auth/me", "", alice.reading());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json["user"]["username"], "alice");
  EXPECT_EQ(r.json["user"]["groups"], json::array({alpha_group_}));
  EXPECT_EQ(r.json["csrfToken"], alice.csrf);
}

TEST_F(AuthApiTest, LogoutEndsTheSessionAndClearsTheCookie) {
  auto alice = alice_login();
  EXPECT_EQ(call("POST", "auth/logout", "", alice.reading()).status, 403);  // CSRF applies
  auto r = call("POST", "auth/logout", "", alice.changing());
  EXPECT_EQ(r.status, 204) << r.body;
  EXPECT_NE(r.header("Set-Cookie").find("cronwheel_session=;"), std::string::npos) << r.header("Set-Cookie");
  EXPECT_NE(r.header("Set-Cookie").find("Max-Age=0"), std::string::npos);
  EXPECT_EQ(call("GET", "auth/me", "", alice.reading()).status, 401);
  EXPECT_TRUE(last_audit("auth.logout"));
}

TEST_F(AuthApiTest, SessionsEndAfterTwelveHours) {
  auto alice = alice_login();
  clock_.advance(12h);
  EXPECT_EQ(call("GET", "auth/me", "", alice.reading()).status, 401);
}

TEST_F(AuthApiTest, PasswordChangeKeepsThisSessionAndEndsTheOthersAndEveryToken) {
  auto here = alice_login();
  auto elsewhere = alice_login();
  auto token = call("POST", "tokens", json{{"name", "ci"}}.dump(), here.changing()).json["token"].get<std::string>();
  ASSERT_EQ(call("GET", "auth/me", "", bearer(token)).status, 200);
  auto r = call("PUT", "auth/password", json{{"currentPassword", kAlicePassword}, {"newPassword", "a-new-password"}}.dump(),
                here.changing());
  ASSERT_EQ(r.status, 204) << r.body;
  EXPECT_EQ(call("GET", "auth/me", "", here.reading()).status, 200);
  EXPECT_EQ(call("GET", "auth/me", "", elsewhere.reading()).status, 401);
  EXPECT_EQ(call("GET", "auth/me", "", bearer(token)).status, 401);
  auto tokens = call("GET", "tokens", "", here.reading());
  EXPECT_FALSE(tokens.json["items"][0]["revokedAt"].is_null()) << tokens.body;
  EXPECT_EQ(try_login("alice", kAlicePassword).status, 401);
  EXPECT_EQ(try_login("alice", "a-new-password").status, 200);
  auto audit = last_audit("user.password");
  ASSERT_TRUE(audit);
  EXPECT_EQ(audit->entity_id, alice_id_);
  EXPECT_EQ(audit->after->find("argon2"), std::string::npos) << *audit->after;
}

TEST_F(AuthApiTest, PasswordChangeChecksTheCurrentPasswordAndTheNewOnesLength) {
  auto alice = alice_login();
  auto wrong = call("PUT", "auth/password", json{{"currentPassword", "wrong"}, {"newPassword", "a-new-password"}}.dump(),
                    alice.changing());
  EXPECT_EQ(wrong.status, 400);
  EXPECT_EQ(wrong.error_field(), "currentPassword");
  auto shorter = call("PUT", "auth/password", json{{"currentPassword", kAlicePassword}, {"newPassword", "short"}}.dump(),
                      alice.changing());
  EXPECT_EQ(shorter.status, 400);
  EXPECT_EQ(shorter.error_message(), "newPassword: must be at least 8 characters");
  // Eight characters, not eight bytes: "ééé" is six bytes and three characters.
  auto accents = call("PUT", "auth/password", json{{"currentPassword", kAlicePassword}, {"newPassword", "éééééé"}}.dump(),
                      alice.changing());
  EXPECT_EQ(accents.status, 400);
  EXPECT_EQ(try_login("alice", kAlicePassword).status, 200);
}

TEST_F(AuthApiTest, GuessingTheCurrentPasswordIsRateLimitedToo) {
  auto alice = alice_login();
  for (int i = 0; i < 6; ++i) {
    call("PUT", "auth/password", json{{"currentPassword", "guess" + std::to_string(i)}, {"newPassword", "whatever-1"}}.dump(),
         alice.changing());
  }
  auto r = call("PUT", "auth/password", json{{"currentPassword", kAlicePassword}, {"newPassword", "whatever-1"}}.dump(),
                alice.changing());
  EXPECT_EQ(r.status, 429);
  EXPECT_EQ(r.header("Retry-After"), "1");
}

TEST_F(AuthApiTest, TokenPrincipalsChangeStateWithoutCsrf) {
  auto admin = admin_login();
  auto created = call("POST", "tokens", json{{"name", "automation"}}.dump(), admin.changing());
  ASSERT_EQ(created.status, 201) << created.body;
  auto token = created.json["token"].get<std::string>();
  auto r = call("PUT", "auth/password", json{{"currentPassword", kAdminPassword}, {"newPassword", "rotated-password"}}.dump(),
                bearer(token));
  EXPECT_EQ(r.status, 204) << r.body;
  // A password changed with a token keeps no session: every console must log in again. The
  // token itself goes with the old password too.
  EXPECT_EQ(call("GET", "auth/me", "", admin.reading()).status, 401);
  EXPECT_EQ(call("GET", "auth/me", "", bearer(token)).status, 401);
}

}  // namespace
}  // namespace cronwheel::admin
