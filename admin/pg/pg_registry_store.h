#pragma once

#include <optional>

#include <pqxx/pqxx>

#include "admin/model/registry_store.h"
#include "admin/pg/database.h"
#include "admin/model/stores.h"

namespace cronwheel::admin {

// RegistryStore over PostgreSQL (table job_registry; automatic groups in job_group).
//
// Beyond the contract in stores.h:
//  - ages use the database's clock (now() of the statement's transaction), so every admin node
//    agrees on which registrations are alive whatever its own clock says;
//  - addresses sort in byte order, so every node derives the same list;
//  - refresh() writes an automatic group's list only when it changed (its updated_at, which
//    says when a person last changed the group, is left alone) and locks those groups in id
//    order, so nodes refreshing at the same time queue instead of deadlocking.
//
// Thread-safe: each call takes its own pooled connection. Register prepare() on the Database.
class PgRegistryStore final : public RegistryStore {
 public:
  explicit PgRegistryStore(Database& db) : db_(db) {}

  bool upsert(std::string_view registry_group, std::string_view key, std::string_view value) override;
  Registered register_capped(std::string_view registry_group, std::string_view key, std::string_view value,
                             const std::vector<std::string>& handlers, const std::optional<ClockEstimate>& clock,
                             std::size_t max_live, std::int64_t dead_after_ms) override;
  bool remove(std::string_view registry_group, std::string_view key, std::string_view value) override;
  std::vector<std::string> live_addresses(std::string_view app_name, std::int64_t dead_after_ms) override;
  std::vector<RegistryEntry> live(std::int64_t dead_after_ms) override;
  int refresh(std::int64_t dead_after_ms) override;

  // Registers the statements above on a new connection (part of the Database's Preparer).
  static void prepare(pqxx::connection& connection);

 private:
  Database& db_;
};

// The clock estimate of a job_registry row read with its clock_offset_ms and clock_delay_ms
// columns: none when either is NULL.
std::optional<ClockEstimate> registry_clock_from(const pqxx::row& row);

}  // namespace cronwheel::admin
