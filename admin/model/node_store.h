#pragma once

// Port: the admin nodes and their leases. Implemented by PgNodeStore (admin/pg/pg_node_store.h),
// faked by tests/support/fake_node_store.h. Thread-safe; each method is one short transaction;
// StoreUnavailable when the store cannot be reached.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "admin/model/records.h"
#include "admin/model/store_errors.h"

namespace cronwheel::admin {

// The admin nodes and their leases. Leases are set and compared with the database's clock.
class NodeStore {
 public:
  virtual ~NodeStore() = default;
  // Registers the node or renews its lease: heartbeat_at = now, lease_until = now + lease_ms;
  // started_at is set on the first call after the node's start (`starting` true).
  virtual void heartbeat(const AdminNode& node, std::int64_t lease_ms, bool starting) = 0;
  // Ends the node's lease now (a clean shutdown), so others take over its fires at once.
  virtual void release(std::string_view node_id) = 0;
  virtual std::vector<AdminNode> list() = 0;  // by node id
  // Ids of nodes whose lease has expired.
  virtual std::vector<std::string> expired() = 0;
};

}  // namespace cronwheel::admin
