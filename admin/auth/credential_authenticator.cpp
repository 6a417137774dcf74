#include "admin/auth/credential_authenticator.h"

#include <algorithm>
#include <cctype>

#include "admin/auth/secrets.h"

namespace cronwheel::admin {

namespace {

constexpr std::size_t kSecretBytes = 32;
// Longer credentials are not ours; refusing them early keeps hashing junk cheap.
constexpr std::size_t kMaxCredentialLength = 256;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

std::optional<std::string> cookie_value(const std::vector<std::string>& cookie_headers, std::string_view name) {
  for (const std::string& value : cookie_headers) {
    std::string_view header = value;
    while (!header.empty()) {
      auto semicolon = header.find(';');
      auto pair = trim(header.substr(0, semicolon));
      header = semicolon == std::string_view::npos ? std::string_view() : header.substr(semicolon + 1);
      auto equals = pair.find('=');
      if (equals == std::string_view::npos) continue;
      if (trim(pair.substr(0, equals)) == name) return std::string(trim(pair.substr(equals + 1)));
    }
  }
  return std::nullopt;
}

CredentialAuthenticator::CredentialAuthenticator(SessionStore& sessions, TokenStore& tokens,
                                                 common::Clock& clock, Options options)
    : sessions_(sessions), tokens_(tokens), clock_(clock), options_(options) {}

std::optional<Principal> CredentialAuthenticator::authenticate(const Credentials& credentials) {
  if (credentials.authorization) {
    std::string_view value = *credentials.authorization;
    auto space = value.find(' ');
    if (space == std::string_view::npos || !iequals(value.substr(0, space), "Bearer")) return std::nullopt;
    return from_token(trim(value.substr(space + 1)));
  }
  if (auto cookie = cookie_value(credentials.cookie_headers, kCookieName)) return from_session(*cookie);
  return std::nullopt;
}

std::optional<Principal> CredentialAuthenticator::from_token(std::string_view secret) {
  if (secret.empty() || secret.size() > kMaxCredentialLength) return std::nullopt;
  auto found = tokens_.authenticate(secret_hash(secret));
  if (!found) return std::nullopt;
  // As for sessions: the store judges expiry too; a token this node's clock says is over ends
  // here as well.
  if (found->first.expires_at && *found->first.expires_at <= clock_.now_ms()) return std::nullopt;
  Principal p;
  p.method = Principal::Method::kToken;
  p.user = std::move(found->second);
  p.token_id = found->first.id;
  return p;
}

std::optional<Principal> CredentialAuthenticator::from_session(std::string_view secret) {
  if (secret.empty() || secret.size() > kMaxCredentialLength) return std::nullopt;
  auto found = sessions_.find(secret_hash(secret));
  if (!found) return std::nullopt;
  // The store judges expiry by the database's clock; this node's clock may differ a little,
  // and a session it thinks is over ends here too.
  if (found->first.expires_at <= clock_.now_ms()) return std::nullopt;
  Principal p;
  p.method = Principal::Method::kSession;
  p.user = std::move(found->second);
  p.session_hash = to_hex(found->first.token_hash);
  p.csrf_token = std::move(found->first.csrf_token);
  return p;
}

CredentialAuthenticator::NewSession CredentialAuthenticator::open_session(const User& user) {
  NewSession session;
  session.secret = random_secret(kSecretBytes);
  session.csrf_token = random_secret(kSecretBytes);
  session.expires_at = clock_.now_ms() + options_.session_lifetime.count();
  sessions_.create({secret_hash(session.secret), user.id, session.csrf_token, session.expires_at});
  return session;
}

void CredentialAuthenticator::close_session(const Principal& principal) {
  if (principal.method != Principal::Method::kSession) return;
  sessions_.remove(session_store_hash(principal));
}

std::string CredentialAuthenticator::session_cookie(const NewSession& session) const {
  const auto max_age = std::chrono::duration_cast<std::chrono::seconds>(options_.session_lifetime).count();
  std::string cookie = std::string(kCookieName) + "=" + session.secret + "; Path=/; Max-Age=" +
                       std::to_string(max_age) + "; HttpOnly; SameSite=Strict";
  if (options_.secure_cookie) cookie += "; Secure";
  return cookie;
}

std::string CredentialAuthenticator::cleared_cookie() const {
  std::string cookie = std::string(kCookieName) + "=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict";
  if (options_.secure_cookie) cookie += "; Secure";
  return cookie;
}

CredentialAuthenticator::NewToken CredentialAuthenticator::new_token() {
  NewToken token;
  token.secret = kTokenPrefix + random_secret(kSecretBytes);
  token.hash = secret_hash(token.secret);
  return token;
}

std::string CredentialAuthenticator::session_store_hash(const Principal& principal) {
  if (principal.method != Principal::Method::kSession) return {};
  return from_hex(principal.session_hash);
}

}  // namespace cronwheel::admin
