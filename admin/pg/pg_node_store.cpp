#include "admin/pg/pg_node_store.h"

#include "admin/pg/pg_store_support.h"

namespace cronwheel::admin {

using namespace pg;

void PgNodeStore::prepare(pqxx::connection& c) {
  c.prepare("node_heartbeat",
            "INSERT INTO admin_node (node_id, address, version, started_at, heartbeat_at, lease_until) "
            "VALUES ($1, $2, $3, now(), now(), now() + $4::bigint * interval '1 millisecond') "
            "ON CONFLICT (node_id) DO UPDATE SET address = EXCLUDED.address, version = EXCLUDED.version, "
            "heartbeat_at = now(), lease_until = EXCLUDED.lease_until, "
            "started_at = CASE WHEN $5::boolean THEN now() ELSE admin_node.started_at END");
  c.prepare("node_release",
            "UPDATE admin_node SET lease_until = GREATEST(now(), heartbeat_at) WHERE node_id = $1");
  c.prepare("node_list", "SELECT node_id, address, version, " + ms("started_at", "started_at") + ", " +
                             ms("heartbeat_at", "heartbeat_at") + ", " + ms("lease_until", "lease_until") +
                             " FROM admin_node ORDER BY node_id");
  c.prepare("node_expired", "SELECT node_id FROM admin_node WHERE lease_until <= now() ORDER BY node_id");
}

void PgNodeStore::heartbeat(const AdminNode& node, std::int64_t lease_ms, bool starting) {
  db_.transact([&](pqxx::work& tx) {
    tx.exec_prepared("node_heartbeat", node.node_id, node.address, node.version, lease_ms, starting);
  });
}

void PgNodeStore::release(std::string_view node_id) {
  db_.transact([&](pqxx::work& tx) { tx.exec_prepared("node_release", std::string(node_id)); });
}

std::vector<AdminNode> PgNodeStore::list() {
  return db_.read([&](pqxx::read_transaction& tx) {
    std::vector<AdminNode> nodes;
    for (const auto& r : tx.exec_prepared("node_list")) {
      AdminNode n;
      n.node_id = r["node_id"].as<std::string>();
      n.address = r["address"].as<std::string>();
      n.version = r["version"].as<std::string>();
      n.started_at = r["started_at"].as<std::int64_t>();
      n.heartbeat_at = r["heartbeat_at"].as<std::int64_t>();
      n.lease_until = r["lease_until"].as<std::int64_t>();
      nodes.push_back(std::move(n));
    }
    return nodes;
  });
}

std::vector<std::string> PgNodeStore::expired() {
  return db_.read([&](pqxx::read_transaction& tx) {
    std::vector<std::string> ids;
    for (const auto& r : tx.exec_prepared("node_expired")) ids.push_back(r[0].as<std::string>());
    return ids;
  });
}

}  // namespace cronwheel::admin
