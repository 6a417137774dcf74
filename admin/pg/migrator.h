#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <pqxx/connection>

#include "admin/pg/migrations.h"

namespace cronwheel::admin {

// A migration cannot be applied, or the database's schema does not belong to this binary
// (an applied migration was edited, or the database is newer than the binary).
class MigrationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct MigrationReport {
  int previous_version = 0;  // schema version found before migrating
  int current_version = 0;   // schema version after migrating
  std::vector<std::string> applied;  // names of the migrations this call applied
};

// Brings a database's schema up to date.
//
// Safe when several admin nodes start at once: the whole check-and-apply runs under a
// session-level advisory lock, so one node migrates while the others wait and then find
// nothing to do. Each migration runs in its own transaction together with the row that
// records it in schema_migrations, so a failed migration leaves no trace and is retried
// on the next start.
//
// Every applied migration's checksum is compared with the built-in one: a database migrated
// by a different build of the same version, or by a newer binary, is refused rather than
// silently run against.
class Migrator {
 public:
  explicit Migrator(std::vector<Migration> migrations = embedded_migrations());

  // Applies what is missing. Throws MigrationError, or pqxx errors for connection loss.
  MigrationReport migrate(pqxx::connection& connection) const;

  // The schema version recorded in the database (0 when never migrated).
  static int current_version(pqxx::connection& connection);

  // The advisory-lock key held while migrating.
  static constexpr std::int64_t kLockKey = 0x63726f6e77686c31;  // "cronwhl1"

 private:
  std::vector<Migration> migrations_;
};

// A stable checksum of a migration's text (FNV-1a, 64 bits, hex).
std::string migration_checksum(std::string_view sql);

}  // namespace cronwheel::admin
