#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "admin/store/records.h"

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

// What a handler gets besides the request: the authenticated principal (absent on public
// routes) and the actor to record changes under.
struct RequestContext {
  std::optional<Principal> principal;
  Actor actor;

  // The principal of an authenticated route (the router guarantees one).
  const Principal& who() const { return *principal; }
};

}  // namespace cronwheel::admin
