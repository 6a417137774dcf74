#pragma once

// Port: who sent a request. Implemented by CredentialAuthenticator (admin/auth/), used by the
// REST API's router (admin/api/api_router.h), which reads the credentials off the request.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "admin/model/records.h"

namespace cronwheel::admin {

// Who made a request and how they proved it.
struct Principal {
  enum class Method { kSession, kToken };
  User user;
  Method method = Method::kSession;
  std::string session_hash;  // kSession: the session's token hash (hex)
  std::string csrf_token;    // kSession: what X-CSRF-Token must carry on changes
  std::optional<std::int64_t> token_id;  // kToken

  // May this principal see and act on the group's jobs and logs?
  bool may_access_group(std::int64_t group_id) const {
    if (user.is_admin()) return true;
    for (auto g : user.groups) {
      if (g == group_id) return true;
    }
    return false;
  }
};

// The credentials a request carries, as they came: its Authorization header (absent when it
// has none) and every Cookie header it has, in order.
struct Credentials {
  std::optional<std::string> authorization;
  std::vector<std::string> cookie_headers;
};

class Authenticator {
 public:
  virtual ~Authenticator() = default;
  // The principal the credentials prove; std::nullopt when there are none or they are
  // invalid. Throws StoreUnavailable when it cannot tell.
  virtual std::optional<Principal> authenticate(const Credentials& credentials) = 0;
};

}  // namespace cronwheel::admin
