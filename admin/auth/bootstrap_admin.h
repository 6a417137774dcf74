#pragma once

#include <string>
#include <string_view>

#include "admin/auth/password_hasher.h"
#include "admin/model/stores.h"

namespace cronwheel::admin {

// The first user of a new installation.
struct BootstrapResult {
  bool created = false;             // false: users existed already (or another node won)
  bool generated_password = false;  // no password was configured, so one was drawn
  std::string password;             // the generated one; empty otherwise
};

inline constexpr const char* kBootstrapUsername = "admin";

// When there is no user at all, creates `admin` (role admin) with `configured_password`
// (CRONWHEEL_ADMIN_PASSWORD), or with a random one when that is empty, and logs that it did:
// a generated password is printed once to the log ("created user admin with password ..."),
// a configured one never is. Audited as "user.create" by the system.
//
// Safe when several admin nodes start at once: the one whose insert loses on the unique
// username reports created = false. A configured password shorter than PasswordHasher::kMinPasswordLength
// throws std::invalid_argument (start-up fails rather than leave a weak admin password).
BootstrapResult bootstrap_admin(UserStore& users, const PasswordHasher& passwords, std::string_view configured_password);

}  // namespace cronwheel::admin
