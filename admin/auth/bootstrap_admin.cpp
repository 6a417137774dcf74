#include "admin/auth/bootstrap_admin.h"

#include <spdlog/spdlog.h>

#include <stdexcept>

#include "admin/auth/secrets.h"

namespace cronwheel::admin {

BootstrapResult bootstrap_admin(UserStore& users, const PasswordHasher& passwords,
                                std::string_view configured_password) {
  BootstrapResult result;
  if (users.count() > 0) return result;
  if (!configured_password.empty() && configured_password.size() < PasswordHasher::kMinPasswordLength) {
    throw std::invalid_argument("CRONWHEEL_ADMIN_PASSWORD must be at least " + std::to_string(PasswordHasher::kMinPasswordLength) +
                                " characters");
  }
  const std::string password =
      configured_password.empty() ? random_secret(18) : std::string(configured_password);  // 18 bytes: 24 characters

  User admin;
  admin.username = kBootstrapUsername;
  admin.role = "admin";
  admin.password_hash = passwords.hash(password);
  const Actor system{std::nullopt, "system", ""};
  try {
    users.create(admin, system);
  } catch (const Conflict&) {
    // Another admin node starting at the same moment created it first.
    return result;
  }
  result.created = true;
  if (configured_password.empty()) {
    result.generated_password = true;
    result.password = password;
    spdlog::warn("created user {} with password {} (shown this once; change it with PUT /api/v1/auth/password)",
                 kBootstrapUsername, password);
  } else {
    spdlog::info("created user {} with the password from CRONWHEEL_ADMIN_PASSWORD", kBootstrapUsername);
  }
  return result;
}

}  // namespace cronwheel::admin
