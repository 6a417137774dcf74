#include "admin/pg/pg_registry_store.h"

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "admin/pg/pg_store_support.h"

namespace cronwheel::admin {

using namespace pg;

namespace {

// "updated within the last $n milliseconds", by the database's clock.
std::string alive(const std::string& param) {
  return "updated_at > now() - " + param + "::bigint * interval '1 millisecond'";
}

const std::string kEntryColumns = "id, registry_group, registry_key, registry_value, " +
                                   ms("updated_at", "updated_at") + ", array_to_json(handlers)::text AS handlers, clock_offset_ms, clock_delay_ms, lead_dispatch";

}  // namespace

std::optional<ClockEstimate> registry_clock_from(const pqxx::row& r) {
  if (r["clock_offset_ms"].is_null() || r["clock_delay_ms"].is_null()) return std::nullopt;
  return ClockEstimate{r["clock_offset_ms"].as<std::int64_t>(), r["clock_delay_ms"].as<std::int64_t>(),
                       r["lead_dispatch"].as<bool>()};
}

namespace {

RegistryEntry entry_from(const pqxx::row& r) {
  RegistryEntry e;
  e.id = r["id"].as<std::int64_t>();
  e.registry_group = r["registry_group"].as<std::string>();
  e.registry_key = r["registry_key"].as<std::string>();
  e.registry_value = r["registry_value"].as<std::string>();
  e.updated_at = r["updated_at"].as<std::int64_t>();
  e.handlers = nlohmann::json::parse(r["handlers"].as<std::string>()).get<std::vector<std::string>>();
  e.clock = registry_clock_from(r);
  return e;
}

}  // namespace

void PgRegistryStore::prepare(pqxx::connection& c) {
  c.prepare("registry_upsert",
            "INSERT INTO job_registry (registry_group, registry_key, registry_value, updated_at) "
            "VALUES ($1, $2, $3, now()) ON CONFLICT (registry_group, registry_key, registry_value) "
            "DO UPDATE SET updated_at = now() RETURNING (xmax = 0) AS inserted");
  // Registrations of one key wait for each other here, so the count below stays true until the
  // insert commits (on every node).
  c.prepare("registry_lock_key",
            "SELECT pg_advisory_xact_lock(hashtextextended('job_registry:' || $1::text || ':' || $2::text, 0))");
  c.prepare("registry_insert_capped",
            "INSERT INTO job_registry (registry_group, registry_key, registry_value, updated_at, handlers, "
            "clock_offset_ms, clock_delay_ms, lead_dispatch) "
            "SELECT $1::text, $2::text, $3::text, now(), $6::text[], $7::bigint, $8::bigint, $9::boolean WHERE EXISTS (SELECT 1 FROM job_registry WHERE "
            "registry_group = $1::text AND registry_key = $2::text AND registry_value = $3::text) OR "
            "(SELECT count(*) FROM job_registry WHERE registry_group = $1::text AND registry_key = $2::text AND " +
                alive("$5") + ") < $4::bigint "
            "ON CONFLICT (registry_group, registry_key, registry_value) "
            "DO UPDATE SET updated_at = now(), handlers = EXCLUDED.handlers, clock_offset_ms = EXCLUDED.clock_offset_ms, "
            "clock_delay_ms = EXCLUDED.clock_delay_ms, lead_dispatch = EXCLUDED.lead_dispatch RETURNING (xmax = 0) AS inserted");
  c.prepare("registry_remove",
            "DELETE FROM job_registry WHERE registry_group = $1 AND registry_key = $2 AND registry_value = $3");
  c.prepare("registry_live_addresses",
            "SELECT registry_value FROM job_registry WHERE registry_group = 'EXECUTOR' AND registry_key = $1 AND " +
                alive("$2") + " ORDER BY registry_value COLLATE \"C\"");
  c.prepare("registry_live", "SELECT " + kEntryColumns + " FROM job_registry WHERE " + alive("$1") +
                                 " ORDER BY registry_key COLLATE \"C\", registry_value COLLATE \"C\", registry_group");
  c.prepare("registry_delete_dead", "DELETE FROM job_registry WHERE NOT (" + alive("$1") + ")");
  // The automatic groups whose list differs from their live registrations get the live list.
  // The groups are locked in id order (LockRows runs above the sort), so two nodes refreshing
  // at once wait for each other rather than deadlock; a group changed meanwhile is re-checked.
  c.prepare("registry_refresh_groups",
            "WITH live AS ("
            "  SELECT registry_key, array_agg(registry_value::text ORDER BY registry_value COLLATE \"C\") AS addresses"
            "  FROM job_registry WHERE registry_group = 'EXECUTOR' AND " + alive("$1") + " GROUP BY registry_key),"
            " target AS ("
            "  SELECT g.id, COALESCE(l.addresses, '{}'::text[]) AS addresses"
            "  FROM job_group g LEFT JOIN live l ON l.registry_key = g.app_name"
            "  WHERE g.address_type = 0 AND g.address_list IS DISTINCT FROM COALESCE(l.addresses, '{}'::text[])"
            "  ORDER BY g.id FOR UPDATE OF g)"
            " UPDATE job_group g SET address_list = t.addresses FROM target t"
            " WHERE g.id = t.id AND g.address_type = 0");
}

bool PgRegistryStore::upsert(std::string_view registry_group, std::string_view key, std::string_view value) {
  return mapped([&] {
    return db_.transact([&](pqxx::work& tx) {
      // xmax is 0 on a row version the statement inserted and set on one it updated (MVCC), so
      // the two arms of the upsert are told apart without a second query; a db test checks it.
      return tx.exec_prepared1("registry_upsert", std::string(registry_group), std::string(key), std::string(value))[0]
          .as<bool>();
    });
  });
}

RegistryStore::Registered PgRegistryStore::register_capped(std::string_view registry_group, std::string_view key,
                                                            std::string_view value,
                                                            const std::vector<std::string>& handlers,
                                                            const std::optional<ClockEstimate>& clock,
                                                            std::size_t max_live, std::int64_t dead_after_ms) {
  return mapped([&] {
    return db_.transact([&](pqxx::work& tx) {
      const std::string group(registry_group), k(key);
      tx.exec_prepared("registry_lock_key", group, k);
      auto rows = tx.exec_prepared("registry_insert_capped", group, k, std::string(value),
                                   static_cast<std::int64_t>(max_live), dead_after_ms, text_array(handlers),
                                   clock ? std::optional<std::int64_t>(clock->offset_ms) : std::nullopt,
                                   clock ? std::optional<std::int64_t>(clock->delay_ms) : std::nullopt,
                                   clock && clock->lead_dispatch);
      if (rows.empty()) return Registered::kFull;
      return rows[0][0].as<bool>() ? Registered::kNew : Registered::kRenewed;
    });
  });
}

bool PgRegistryStore::remove(std::string_view registry_group, std::string_view key, std::string_view value) {
  return db_.transact([&](pqxx::work& tx) {
    return tx.exec_prepared("registry_remove", std::string(registry_group), std::string(key), std::string(value))
               .affected_rows() > 0;
  });
}

std::vector<std::string> PgRegistryStore::live_addresses(std::string_view app_name, std::int64_t dead_after_ms) {
  return db_.read([&](pqxx::read_transaction& tx) {
    std::vector<std::string> out;
    for (const auto& row : tx.exec_prepared("registry_live_addresses", std::string(app_name), dead_after_ms)) {
      out.push_back(row[0].as<std::string>());
    }
    return out;
  });
}

std::vector<RegistryEntry> PgRegistryStore::live(std::int64_t dead_after_ms) {
  return db_.read([&](pqxx::read_transaction& tx) {
    return all_of<RegistryEntry>(tx.exec_prepared("registry_live", dead_after_ms), entry_from);
  });
}

int PgRegistryStore::refresh(std::int64_t dead_after_ms) {
  return db_.transact([&](pqxx::work& tx) {
    // One transaction, so now() is one instant: what is deleted as dead and what counts as live
    // split the registrations exactly.
    tx.exec_prepared("registry_delete_dead", dead_after_ms);
    return static_cast<int>(tx.exec_prepared("registry_refresh_groups", dead_after_ms).affected_rows());
  });
}

}  // namespace cronwheel::admin
