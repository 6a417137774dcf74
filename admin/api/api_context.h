#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "admin/model/authenticator.h"
#include "admin/model/records.h"

namespace cronwheel::admin {

// What a handler gets besides the request: the authenticated principal (absent on public
// routes) and the actor to record changes under.
struct RequestContext {
  std::optional<Principal> principal;
  Actor actor;

  // The principal of an authenticated route (the router guarantees one).
  const Principal& who() const { return *principal; }
};

}  // namespace cronwheel::admin
