#include "admin/pg/migrator.h"

#include <cstdio>
#include <map>

#include <pqxx/pqxx>

namespace cronwheel::admin {

std::string migration_checksum(std::string_view sql) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (unsigned char c : sql) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

Migrator::Migrator(std::vector<Migration> migrations) : migrations_(std::move(migrations)) {
  for (std::size_t i = 0; i < migrations_.size(); ++i) {
    if (migrations_[i].version != static_cast<int>(i) + 1) {
      throw MigrationError("migration " + std::string(migrations_[i].name) + ": expected version " +
                           std::to_string(i + 1));
    }
  }
}

namespace {

constexpr const char* kCreateMigrationsTable = R"sql(
  CREATE TABLE IF NOT EXISTS schema_migrations (
    version     integer      PRIMARY KEY CHECK (version > 0),
    name        text         NOT NULL,
    checksum    text         NOT NULL,
    applied_at  timestamptz  NOT NULL DEFAULT now()
  ))sql";

// Holds the migration advisory lock for its lifetime. If the connection breaks, PostgreSQL
// releases the lock itself.
class AdvisoryLock {
 public:
  explicit AdvisoryLock(pqxx::connection& connection) : connection_(connection) {
    pqxx::nontransaction tx(connection_);
    tx.exec_params("SELECT pg_advisory_lock($1)", Migrator::kLockKey);
  }
  ~AdvisoryLock() {
    try {
      pqxx::nontransaction tx(connection_);
      tx.exec_params("SELECT pg_advisory_unlock($1)", Migrator::kLockKey);
    } catch (const std::exception&) {
      // The connection is gone, and with it the lock.
    }
  }
  AdvisoryLock(const AdvisoryLock&) = delete;
  AdvisoryLock& operator=(const AdvisoryLock&) = delete;

 private:
  pqxx::connection& connection_;
};

struct Applied {
  std::string name;
  std::string checksum;
};

std::map<int, Applied> read_applied(pqxx::connection& connection) {
  pqxx::nontransaction tx(connection);
  std::map<int, Applied> applied;
  for (const auto& row : tx.exec("SELECT version, name, checksum FROM schema_migrations")) {
    applied[row[0].as<int>()] = {row[1].as<std::string>(), row[2].as<std::string>()};
  }
  return applied;
}

}  // namespace

MigrationReport Migrator::migrate(pqxx::connection& connection) const {
  AdvisoryLock lock(connection);
  {
    pqxx::nontransaction tx(connection);
    tx.exec(kCreateMigrationsTable);
  }
  auto applied = read_applied(connection);

  MigrationReport report;
  report.previous_version = applied.empty() ? 0 : applied.rbegin()->first;
  const int known = static_cast<int>(migrations_.size());
  if (report.previous_version > known) {
    throw MigrationError("database schema version " + std::to_string(report.previous_version) +
                         " is newer than this cronwheel-admin knows (" + std::to_string(known) +
                         "); run a newer cronwheel-admin");
  }
  for (const auto& [version, row] : applied) {
    const Migration& migration = migrations_[version - 1];
    if (row.checksum != migration_checksum(migration.sql)) {
      throw MigrationError("migration " + std::string(migration.name) +
                           " was applied with different contents (checksum " + row.checksum +
                           ", this binary has " + migration_checksum(migration.sql) +
                           "); applied migrations must never be edited");
    }
  }

  for (const Migration& migration : migrations_) {
    if (applied.count(migration.version)) continue;
    try {
      pqxx::work tx(connection);
      tx.exec(std::string(migration.sql));
      tx.exec_params("INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)",
                     migration.version, std::string(migration.name),
                     migration_checksum(migration.sql));
      tx.commit();
    } catch (const pqxx::broken_connection&) {
      throw;
    } catch (const pqxx::sql_error& e) {
      throw MigrationError("migration " + std::string(migration.name) + " failed: " + e.what());
    }
    report.applied.emplace_back(migration.name);
  }
  report.current_version = known;
  return report;
}

int Migrator::current_version(pqxx::connection& connection) {
  pqxx::nontransaction tx(connection);
  auto exists = tx.exec1("SELECT to_regclass('schema_migrations') IS NOT NULL");
  if (!exists[0].as<bool>()) return 0;
  return tx.exec1("SELECT coalesce(max(version), 0) FROM schema_migrations")[0].as<int>();
}

}  // namespace cronwheel::admin
