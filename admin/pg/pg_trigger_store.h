#pragma once

#include <pqxx/pqxx>

#include "admin/pg/database.h"
#include "admin/model/trigger_store.h"

namespace cronwheel::admin {

// TriggerStore over PostgreSQL. Every method is one Database::transact()/read() call; the
// statements are prepared on each new connection by prepare(), which the Database's Preparer
// must call (next to PgStores::prepare). Thread-safe: each call takes its own pooled
// connection.
class PgTriggerStore final : public TriggerStore {
 public:
  explicit PgTriggerStore(Database& db) : db_(db) {}

  // Registers the statements this store uses on a new connection.
  static void prepare(pqxx::connection& connection);

  std::optional<LoadedFire> load_pending(std::int64_t log_id, std::string_view node_id) override;
  Claimed claim(const Claim& claim) override;
  bool release_claim(std::int64_t log_id, std::string_view node_id, const std::string& note) override;
  Recorded record_triggered(std::int64_t log_id, std::string_view node_id, const std::string& trigger_msg) override;
  Failed record_failed(const Failure& failure, const FollowUpPlanner& plan) override;

 private:
  Database& db_;
};

}  // namespace cronwheel::admin
