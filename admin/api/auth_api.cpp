#include "admin/api/auth_api.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "admin/api/api_errors.h"
#include "admin/api/json_body.h"
#include "admin/model/record_json.h"

namespace cronwheel::admin {

namespace {

// A name as the client typed it, made safe to keep in the audit log and in the limiter's
// memory: at most kMaxUsernameLength characters, printable ASCII only (anything else becomes
// '?', so no invalid UTF-8 reaches the database).
std::string attempted_username(const std::string& name) {
  std::string out;
  for (char c : name.substr(0, kMaxUsernameLength)) {
    out.push_back(c >= 0x20 && c < 0x7f ? c : '?');
  }
  return out;
}

[[noreturn]] void too_many_attempts(std::chrono::seconds wait) {
  throw rate_limited("too many failed logins; try again in " + std::to_string(wait.count()) + " s",
                     static_cast<int>(wait.count()));
}

AuditEntry login_audit(const std::string& action, const std::optional<User>& user, const std::string& username,
                       const Actor& actor, std::int64_t now) {
  AuditEntry entry;
  entry.at = now;
  entry.action = action;
  entry.entity_type = "user";
  if (user) {
    entry.user_id = user->id;
    entry.entity_id = user->id;
  }
  entry.username = username;
  entry.remote_addr = actor.remote_addr;
  return entry;
}

ApiResponse login(AuthServices& s, ApiRouter::RouteContext& ctx, const common::http::Request& req) {
  JsonBody body(req.body);
  const auto username = body.required_string("username");
  const auto password = body.required_string("password");
  body.finish();

  // Only a name that can be a username is looked up, so the store sees exactly the text a
  // user was created with (a database would cut "bob\u0000x" at the NUL and find bob). Any
  // other name belongs to no user.
  std::optional<User> user;
  if (is_valid_username(username)) user = s.stores.users.find_by_username(username);
  // The limiter counts against the account the attempt is really against: the user found, or
  // else the name as typed, made safe.
  const auto account = user ? user->username : attempted_username(username);
  const auto& address = ctx.request.actor.remote_addr;
  // Counted as a failure from here until the password proves right.
  const auto attempt = s.login_limiter.begin_attempt(account, address);
  if (!attempt.admitted()) too_many_attempts(*attempt.retry_after);

  // An unknown name, or a user without a password (made by a jobs file, until an admin sets
  // one), is checked against a decoy hash, so it costs the same time as a wrong password and the
  // answer's timing does not tell which names exist or have a password.
  const bool has_password = user && !user->password_hash.empty();
  const bool ok = s.passwords.verify(has_password ? user->password_hash : s.passwords.decoy_hash(), password) && has_password;
  if (!ok) {
    s.stores.audit.record(login_audit("auth.login_failed", user, account, ctx.request.actor, s.clock.now_ms()));
    throw unauthorized("wrong username or password");
  }
  s.login_limiter.attempt_succeeded(account, address, attempt.started);

  // Expired sessions are swept here: logins are what adds sessions, so the table stays about
  // as large as the sessions alive.
  try {
    s.stores.sessions.remove_expired();
  } catch (const std::exception& e) {
    spdlog::warn("removing expired sessions failed: {}", e.what());
  }
  auto session = s.authenticator.open_session(*user);
  Actor actor{user->id, user->username, ctx.request.actor.remote_addr};
  s.stores.audit.record(login_audit("auth.login", user, user->username, actor, s.clock.now_ms()));

  ApiResponse response(200, {{"user", to_json(*user)}, {"csrfToken", session.csrf_token}});
  response.headers.emplace_back("Set-Cookie", s.authenticator.session_cookie(session));
  response.headers.emplace_back("Cache-Control", "no-store");
  return response;
}

ApiResponse logout(AuthServices& s, ApiRouter::RouteContext& ctx) {
  const auto& who = ctx.request.who();
  s.authenticator.close_session(who);
  s.stores.audit.record(login_audit("auth.logout", who.user, who.user.username, ctx.request.actor, s.clock.now_ms()));
  ApiResponse response(204);
  response.headers.emplace_back("Set-Cookie", s.authenticator.cleared_cookie());
  return response;
}

ApiResponse change_password(AuthServices& s, ApiRouter::RouteContext& ctx, const common::http::Request& req) {
  JsonBody body(req.body);
  const auto current = body.required_string("currentPassword");
  const auto next = body.required_string("newPassword");
  body.finish();
  check_new_password("newPassword", next);

  const auto& who = ctx.request.who();
  const auto& address = ctx.request.actor.remote_addr;
  // Someone holding a stolen session must not get to guess the password here instead.
  const auto attempt = s.login_limiter.begin_attempt(who.user.username, address);
  if (!attempt.admitted()) too_many_attempts(*attempt.retry_after);
  auto user = s.stores.users.get(who.user.id);
  if (!user) throw unauthorized();
  if (!s.passwords.verify(user->password_hash, current)) {
    throw invalid("currentPassword", "currentPassword: does not match your password");
  }
  s.login_limiter.attempt_succeeded(who.user.username, address, attempt.started);
  // The store also revokes every API token of the user and ends their other sessions: whoever
  // held the old password, or anything made with it, is out.
  s.stores.users.set_password(user->id, s.passwords.hash(next), CredentialAuthenticator::session_store_hash(who),
                              ctx.request.actor);
  return ApiResponse(204);
}

ApiResponse me(ApiRouter::RouteContext& ctx) {
  const auto& who = ctx.request.who();
  nlohmann::json body{{"user", to_json(who.user)}};
  if (who.method == Principal::Method::kSession) body["csrfToken"] = who.csrf_token;
  ApiResponse response(200, std::move(body));
  response.headers.emplace_back("Cache-Control", "no-store");
  return response;
}

}  // namespace

bool is_valid_username(std::string_view name) {
  if (name.empty() || name.size() > kMaxUsernameLength) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '@' || c == '-';
  });
}

void check_new_password(std::string_view field, const std::string& password) {
  const std::string name(field);
  std::size_t characters = 0;  // UTF-8: every byte but continuation bytes starts a character
  for (unsigned char c : password) characters += (c & 0xC0) != 0x80 ? 1 : 0;
  if (characters < PasswordHasher::kMinPasswordLength) {
    throw invalid(field, name + ": must be at least " + std::to_string(PasswordHasher::kMinPasswordLength) +
                             " characters");
  }
  if (password.size() > PasswordHasher::kMaxPasswordBytes) {
    throw invalid(field, name + ": must be at most " + std::to_string(PasswordHasher::kMaxPasswordBytes) + " bytes");
  }
}

void add_auth_routes(ApiRouter& router, AuthServices& services) {
  router.add("POST", "auth/login", Access::kPublic,
             [&services](ApiRouter::RouteContext& ctx, const common::http::Request& req) { return login(services, ctx, req); },
             {}, {.lane = kPasswordLane});
  router.add("POST", "auth/logout", Access::kUser,
             [&services](ApiRouter::RouteContext& ctx, const common::http::Request&) { return logout(services, ctx); });
  router.add("PUT", "auth/password", Access::kUser,
             [&services](ApiRouter::RouteContext& ctx, const common::http::Request& req) {
               return change_password(services, ctx, req);
             },
             {}, {.lane = kPasswordLane});
  router.add("GET", "auth/me", Access::kUser,
             [](ApiRouter::RouteContext& ctx, const common::http::Request&) { return me(ctx); });
}

}  // namespace cronwheel::admin
