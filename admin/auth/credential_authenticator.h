#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "admin/model/authenticator.h"
#include "admin/model/stores.h"
#include "common/util/clock.h"

namespace cronwheel::admin {

// The REST API's credentials, checked against the stores:
//  - a console session: the cookie `cronwheel_session=<secret>`, looked up by the secret's
//    SHA-256 in the SessionStore (shared by every admin node, so a load balancer may switch
//    nodes). The cookie is HttpOnly and SameSite=Strict, Secure when configured; a session
//    lasts `session_lifetime` from login. Requests with it that change state must carry the
//    session's CSRF token (ApiRouter checks).
//  - an API token: `Authorization: Bearer <secret>`, looked up by its SHA-256 in the
//    TokenStore; revoked and expired tokens do not authenticate (a password change revokes
//    all of the user's tokens).
// A request with an Authorization header is judged by that header alone (a wrong token is
// not rescued by a cookie). Only hashes are stored: a copy of the database lets nobody in.
//
// Thread-safe (the stores are).
class CredentialAuthenticator final : public Authenticator {
 public:
  struct Options {
    std::chrono::milliseconds session_lifetime{std::chrono::hours(12)};
    bool secure_cookie = false;  // add `Secure` to the cookie (the console is served over HTTPS)
  };

  static constexpr const char* kCookieName = "cronwheel_session";
  // API tokens start with this, so secret scanners and people recognize one.
  static constexpr const char* kTokenPrefix = "cw_";

  CredentialAuthenticator(SessionStore& sessions, TokenStore& tokens, common::Clock& clock, Options options);

  std::optional<Principal> authenticate(const Credentials& credentials) override;

  // A session opened for a user who just proved their password: the cookie's secret (shown
  // to the client only, in Set-Cookie) and the CSRF token the client sends back.
  struct NewSession {
    std::string secret;
    std::string csrf_token;
    std::int64_t expires_at = 0;  // epoch ms
  };
  NewSession open_session(const User& user);

  // Ends the principal's session (nothing for token principals).
  void close_session(const Principal& principal);

  // Set-Cookie values: the session's cookie, and one that makes the browser forget it.
  std::string session_cookie(const NewSession& session) const;
  std::string cleared_cookie() const;

  // A new API token secret and the hash to store for it.
  struct NewToken {
    std::string secret;
    std::string hash;
  };
  static NewToken new_token();

  // The raw SessionStore hash of a principal's session (Principal keeps it as hex); empty for
  // token principals.
  static std::string session_store_hash(const Principal& principal);

  const Options& options() const noexcept { return options_; }

 private:
  std::optional<Principal> from_token(std::string_view secret);
  std::optional<Principal> from_session(std::string_view secret);

  SessionStore& sessions_;
  TokenStore& tokens_;
  common::Clock& clock_;
  const Options options_;
};

// The value of cookie `name` among Cookie headers ("a=1; b=2"); the first one wins.
std::optional<std::string> cookie_value(const std::vector<std::string>& cookie_headers, std::string_view name);

}  // namespace cronwheel::admin
