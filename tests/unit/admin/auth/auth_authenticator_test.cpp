#include <gtest/gtest.h>

#include <chrono>

#include "admin/auth/credential_authenticator.h"
#include "admin/auth/password_hasher.h"
#include "admin/auth/secrets.h"
#include "tests/support/fake_clock.h"
#include "tests/support/fake_stores.h"

namespace cronwheel::admin {
namespace {

using namespace std::chrono_literals;

class CredentialAuthenticatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    PasswordHasher hasher({PasswordHasher::Strength::kMinimum, 1});
    User u;
    u.username = "alice";
    u.password_hash = hasher.hash("alice-password");
    alice_ = fakes_.users().create(u, system_);
  }

  static Credentials with_cookie(const std::string& secret) {
    return Credentials{std::nullopt, {std::string(CredentialAuthenticator::kCookieName) + "=" + secret}};
  }
  static Credentials with_authorization(const std::string& value) { return Credentials{value, {}}; }

  // A token created the way POST tokens does; returns its secret.
  std::string create_token(const std::string& name, std::int64_t* id = nullptr,
                           std::optional<std::int64_t> expires_at = std::nullopt) {
    auto token = CredentialAuthenticator::new_token();
    auto stored = fakes_.tokens().create(alice_.id, name, token.hash, expires_at, system_);
    if (id != nullptr) *id = stored.id;
    return token.secret;
  }

  const Actor system_{std::nullopt, "system", ""};
  cronwheel::testing::FakeClock clock_;
  cronwheel::testing::FakeStores fakes_{clock_};
  CredentialAuthenticator auth_{fakes_.sessions(), fakes_.tokens(), clock_, {}};
  User alice_;
};

TEST_F(CredentialAuthenticatorTest, SessionCookieAuthenticatesItsUser) {
  auto session = auth_.open_session(alice_);
  auto who = auth_.authenticate(with_cookie(session.secret));
  ASSERT_TRUE(who);
  EXPECT_EQ(who->user.username, "alice");
  EXPECT_EQ(who->method, Principal::Method::kSession);
  EXPECT_EQ(who->csrf_token, session.csrf_token);
  EXPECT_EQ(who->session_hash, to_hex(secret_hash(session.secret)));
  EXPECT_EQ(CredentialAuthenticator::session_store_hash(*who), secret_hash(session.secret));
  EXPECT_NE(session.csrf_token, session.secret);
}

TEST_F(CredentialAuthenticatorTest, SessionExpiresAfterItsLifetime) {
  auto session = auth_.open_session(alice_);
  EXPECT_EQ(session.expires_at, clock_.now_ms() + 12 * 3600 * 1000);
  clock_.advance(12h - 1s);
  EXPECT_TRUE(auth_.authenticate(with_cookie(session.secret)));
  clock_.advance(1s);
  EXPECT_FALSE(auth_.authenticate(with_cookie(session.secret)));
}

TEST_F(CredentialAuthenticatorTest, ClosedSessionNoLongerAuthenticates) {
  auto session = auth_.open_session(alice_);
  auto who = auth_.authenticate(with_cookie(session.secret));
  ASSERT_TRUE(who);
  auth_.close_session(*who);
  EXPECT_FALSE(auth_.authenticate(with_cookie(session.secret)));
}

TEST_F(CredentialAuthenticatorTest, OnlyTheSecretsHashIsStored) {
  auto session = auth_.open_session(alice_);
  EXPECT_TRUE(fakes_.sessions().find(secret_hash(session.secret)));
  // The stored key is the hash: the secret itself is not a key of anything.
  EXPECT_FALSE(fakes_.sessions().find(secret_hash(secret_hash(session.secret))));
}

TEST_F(CredentialAuthenticatorTest, BearerTokenAuthenticatesItsUser) {
  std::int64_t id = 0;
  auto secret = create_token("ci", &id);
  EXPECT_EQ(secret.rfind(CredentialAuthenticator::kTokenPrefix, 0), 0u) << secret;
  auto who = auth_.authenticate(with_authorization("Bearer " + secret));
  ASSERT_TRUE(who);
  EXPECT_EQ(who->user.id, alice_.id);
  EXPECT_EQ(who->method, Principal::Method::kToken);
  EXPECT_EQ(who->token_id, id);
  EXPECT_TRUE(who->csrf_token.empty());
  // The scheme is case-insensitive (RFC 7235).
  EXPECT_TRUE(auth_.authenticate(with_authorization("bearer " + secret)));
}

TEST_F(CredentialAuthenticatorTest, RevokedTokenNoLongerAuthenticates) {
  std::int64_t id = 0;
  auto secret = create_token("ci", &id);
  ASSERT_TRUE(fakes_.tokens().revoke(alice_.id, id, system_));
  EXPECT_FALSE(auth_.authenticate(with_authorization("Bearer " + secret)));
}

TEST_F(CredentialAuthenticatorTest, ExpiredTokenNoLongerAuthenticates) {
  auto secret = create_token("ci", nullptr, clock_.now_ms() + 60'000);
  const auto bearer = with_authorization("Bearer " + secret);
  EXPECT_TRUE(auth_.authenticate(bearer));

  // A node whose clock runs ahead of the store's ends the token by its own clock too.
  cronwheel::testing::FakeClock ahead(clock_.now_ms() + 60'000);
  CredentialAuthenticator node(fakes_.sessions(), fakes_.tokens(), ahead, {});
  EXPECT_FALSE(node.authenticate(bearer));

  clock_.advance(60s);
  EXPECT_FALSE(auth_.authenticate(bearer));
}

TEST_F(CredentialAuthenticatorTest, UnknownOrMalformedCredentialsDoNotAuthenticate) {
  EXPECT_FALSE(auth_.authenticate(Credentials{}));
  EXPECT_FALSE(auth_.authenticate(with_cookie("")));
  EXPECT_FALSE(auth_.authenticate(with_cookie("not-a-session")));
  EXPECT_FALSE(auth_.authenticate(with_cookie(std::string(5000, 'a'))));
  EXPECT_FALSE(auth_.authenticate(with_authorization("Bearer ")));
  EXPECT_FALSE(auth_.authenticate(with_authorization("Bearer cw_unknown")));
  EXPECT_FALSE(auth_.authenticate(with_authorization("Basic YWRtaW46YWRtaW4=")));
}

TEST_F(CredentialAuthenticatorTest, AnAuthorizationHeaderIsJudgedAlone) {
  auto session = auth_.open_session(alice_);
  auto req = with_cookie(session.secret);
  req.authorization = "Bearer cw_wrong";
  EXPECT_FALSE(auth_.authenticate(req));

  auto secret = create_token("ci");
  auto both = with_cookie(session.secret);
  both.authorization = "Bearer " + secret;
  auto who = auth_.authenticate(both);
  ASSERT_TRUE(who);
  EXPECT_EQ(who->method, Principal::Method::kToken);  // no CSRF token: the bearer decides
}

TEST_F(CredentialAuthenticatorTest, FindsTheSessionCookieAmongOthers) {
  auto session = auth_.open_session(alice_);
  Credentials req{std::nullopt,
                  {"theme=dark; cronwheel_session_old=x", "lang=en;  cronwheel_session=" + session.secret + " ; other=1"}};
  EXPECT_TRUE(auth_.authenticate(req));
  EXPECT_EQ(cookie_value(req.cookie_headers, "lang"), "en");
  EXPECT_EQ(cookie_value(req.cookie_headers, "missing"), std::nullopt);
}

TEST_F(CredentialAuthenticatorTest, CookieIsHttpOnlyAndSameSiteStrict) {
  auto session = auth_.open_session(alice_);
  auto cookie = auth_.session_cookie(session);
  EXPECT_EQ(cookie.rfind("cronwheel_session=" + session.secret + ";", 0), 0u) << cookie;
  EXPECT_NE(cookie.find("; HttpOnly"), std::string::npos) << cookie;
  EXPECT_NE(cookie.find("; SameSite=Strict"), std::string::npos) << cookie;
  EXPECT_NE(cookie.find("; Path=/"), std::string::npos) << cookie;
  EXPECT_NE(cookie.find("; Max-Age=43200"), std::string::npos) << cookie;
  EXPECT_EQ(cookie.find("Secure"), std::string::npos) << cookie;

  CredentialAuthenticator secure(fakes_.sessions(), fakes_.tokens(), clock_, {.secure_cookie = true});
  EXPECT_NE(secure.session_cookie(session).find("; Secure"), std::string::npos);
  EXPECT_NE(secure.cleared_cookie().find("Max-Age=0"), std::string::npos);
}

TEST_F(CredentialAuthenticatorTest, DeletedUsersSessionsAndTokensEnd) {
  auto session = auth_.open_session(alice_);
  auto secret = create_token("ci");
  fakes_.users().remove(alice_.id, system_);
  EXPECT_FALSE(auth_.authenticate(with_cookie(session.secret)));
  EXPECT_FALSE(auth_.authenticate(with_authorization("Bearer " + secret)));
}

}  // namespace
}  // namespace cronwheel::admin
