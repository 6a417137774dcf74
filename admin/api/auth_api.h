#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "admin/api/api_router.h"
#include "admin/auth/credential_authenticator.h"
#include "admin/auth/login_rate_limiter.h"
#include "admin/auth/password_hasher.h"
#include "admin/model/stores.h"
#include "common/util/clock.h"

namespace cronwheel::admin {

// What the authentication, user and token routes share. Everything referenced outlives the
// router.
struct AuthServices {
  Stores stores;
  CredentialAuthenticator& authenticator;
  const PasswordHasher& passwords;
  LoginRateLimiter& login_limiter;
  common::Clock& clock;
};

// Usernames are 1 to 64 of A-Z a-z 0-9 . _ @ - (as app_user's CHECK constraint).
inline constexpr std::size_t kMaxUsernameLength = 64;
bool is_valid_username(std::string_view name);

// Throws HttpError 400 naming `field` when `password` has fewer than
// PasswordHasher::kMinPasswordLength characters or more than kMaxPasswordBytes bytes.
void check_new_password(std::string_view field, const std::string& password);

// The session routes under /api/v1/auth:
//   POST auth/login    {"username","password"} → 200 {"user":{...},"csrfToken"} and the session
//                      cookie; 401 with one message for an unknown user and a wrong password;
//                      429 with Retry-After while failures from this address make it wait
//                      (LoginRateLimiter, keyed on the account looked up: the stored username,
//                      or for no user the name as typed, made safe). A name that cannot be a
//                      username is not looked up at all. Audited as "auth.login" /
//                      "auth.login_failed".
//   POST auth/logout   ends the caller's session and clears the cookie → 204. "auth.logout".
//   PUT  auth/password {"currentPassword","newPassword"} → 204; ends the caller's other
//                      sessions and revokes all their API tokens (the one making the call
//                      too). A wrong current password is 400 on currentPassword and counts as
//                      a failed login.
//   GET  auth/me       → {"user":{...}} (plus "csrfToken" for a session, so a reloaded console
//                      can pick its token up again).
void add_auth_routes(ApiRouter& router, AuthServices& services);

}  // namespace cronwheel::admin
