#pragma once

// NodeStore (admin/model/stores.h) over PostgreSQL: the admin_node table. Leases are set and
// compared with the database's now(), so nodes whose clocks disagree still agree on who is
// alive. Statements are prepared on each new connection: call PgNodeStore::prepare from the
// Database's Preparer. Thread-safe.

#include <pqxx/pqxx>

#include "admin/model/node_store.h"
#include "admin/pg/database.h"
#include "admin/model/stores.h"

namespace cronwheel::admin {

class PgNodeStore final : public NodeStore {
 public:
  explicit PgNodeStore(Database& db) : db_(db) {}

  static void prepare(pqxx::connection& connection);

  void heartbeat(const AdminNode& node, std::int64_t lease_ms, bool starting) override;
  void release(std::string_view node_id) override;
  std::vector<AdminNode> list() override;
  std::vector<std::string> expired() override;

 private:
  Database& db_;
};

}  // namespace cronwheel::admin
