#pragma once

// Port: executor registrations. Implemented by PgRegistryStore (admin/pg/pg_registry_store.h),
// faked by tests/support/fake_registry_store.h. Thread-safe; each method is one short
// transaction; StoreUnavailable when the store cannot be reached.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "admin/model/records.h"
#include "admin/model/store_errors.h"

namespace cronwheel::admin {

// Executor registrations (POST /api/registry from executors) and the automatic groups'
// address lists derived from them. Ages are measured with the database's clock, so every
// admin node agrees on which registrations are alive.
class RegistryStore {
 public:
  virtual ~RegistryStore() = default;
  // Records a registration or refreshes its time (registry_group is "EXECUTOR"). True when the
  // registration is new (no row for it existed), false when it was a heartbeat.
  virtual bool upsert(std::string_view registry_group, std::string_view key, std::string_view value) = 0;
  // upsert(), for executors registering themselves: a registration new to `key` is taken only
  // while the key has fewer than `max_live` registrations made within the last
  // `dead_after_ms` (kFull otherwise, nothing written); renewing one that exists always works.
  // Registrations of one key are counted one at a time, so the cap holds across nodes. The
  // registration's handler names become `handlers` (RegistryEntry::handlers) and its clock
  // estimate `clock` (RegistryEntry::clock, none when not given), new or renewed.
  enum class Registered { kNew, kRenewed, kFull };
  virtual Registered register_capped(std::string_view registry_group, std::string_view key, std::string_view value,
                                     const std::vector<std::string>& handlers,
                                     const std::optional<ClockEstimate>& clock, std::size_t max_live,
                                     std::int64_t dead_after_ms) = 0;
  // Removes a registration; false when there was none.
  virtual bool remove(std::string_view registry_group, std::string_view key, std::string_view value) = 0;
  // The addresses registered for an app name within the last `dead_after_ms`, sorted.
  virtual std::vector<std::string> live_addresses(std::string_view app_name, std::int64_t dead_after_ms) = 0;
  // Every registration made within the last `dead_after_ms`, by key then value.
  virtual std::vector<RegistryEntry> live(std::int64_t dead_after_ms) = 0;
  // Deletes registrations older than `dead_after_ms` and sets the address list of every
  // automatic group (address type 0) to its live addresses, sorted. One transaction. Returns
  // how many groups' lists changed. Not audited: it is the system's own bookkeeping.
  virtual int refresh(std::int64_t dead_after_ms) = 0;
};

}  // namespace cronwheel::admin
