#include "admin/pg/pg_trigger_store.h"

#include <algorithm>
#include <stdexcept>

#include "admin/model/fire.h"
#include "admin/pg/pg_follow_ups.h"
#include "admin/pg/pg_guard.h"
#include "admin/pg/pg_store_support.h"

namespace cronwheel::admin {

using namespace pg;

namespace {

// Marker columns between the log's, the job's and the group's columns of trigger_load.
constexpr const char* kJobStart = "job_columns_start";
constexpr const char* kGroupStart = "group_columns_start";

}  // namespace

void PgTriggerStore::prepare(pqxx::connection& c) {
  prepare_follow_ups(c);
  // One round trip for the row, its job and its group. Each record's column list is read in a
  // subquery under its own names, and the result row is sliced at the marker columns so the
  // shared row readers (log_from, job_from, group_from) find their columns by name. Every
  // statement here finds its run by id alone, its guards compare with `guard` (pg_guard.h).
  c.prepare("trigger_load",
            "WITH " + guard_cte("$1::bigint AS run_id, 'pending'::text AS run_state, $2::text AS run_owner") +
                " SELECT l.*, 0 AS " + kJobStart + ", j.*, 0 AS " + kGroupStart + ", g.* FROM (SELECT " + kLogColumns +
                " FROM job_log, guard WHERE id = guard.run_id AND state = guard.run_state AND admin_node = guard.run_owner) l"
                " JOIN (SELECT " + kJobColumns + " FROM job_info) j ON j.id = l.job_id"
                " JOIN (SELECT " + kGroupColumns + " FROM job_group) g ON g.id = j.job_group");
  // Guarded by the state, the owner and the owner's lease ($9 ms left at least, when the node
  // has a row); answers what is left of the lease.
  c.prepare("trigger_claim",
            "WITH lease AS (SELECT (extract(epoch FROM lease_until - now()) * 1000)::bigint AS left_ms"
            " FROM admin_node WHERE node_id = $2), " +
                guard_cte("$1::bigint AS run_id, 'pending'::text AS run_state, $2::text AS run_owner") +
                " UPDATE job_log SET state = 'sending', executor_address = $3, executor_handler = $4, executor_param = $5,"
                " shard_index = $6, shard_total = $7, trigger_time = " + ts("$8") +
                " FROM guard WHERE id = guard.run_id AND state = guard.run_state AND admin_node = guard.run_owner"
                " AND NOT EXISTS (SELECT 1 FROM lease WHERE left_ms < $9)"
                " RETURNING id, (SELECT left_ms FROM lease) AS lease_left_ms");
  // The other shards of a broadcast: copies of the claimed row, one per address after the
  // first. A scheduled shard that exists already is left as it is (and not returned).
  c.prepare("trigger_insert_shards",
            "INSERT INTO job_log (job_group, job_id, state, trigger_type, scheduled_time, admin_node, executor_address,"
            " executor_handler, executor_param, shard_index, shard_total, executor_fail_retry_count, parent_log_id,"
            " trigger_time)"
            " SELECT l.job_group, l.job_id, 'sending', l.trigger_type, l.scheduled_time, l.admin_node, a.address,"
            " l.executor_handler, l.executor_param, (a.n - 1)::integer, l.shard_total, l.executor_fail_retry_count,"
            " l.parent_log_id, l.trigger_time"
            " FROM job_log l, unnest($2::text[]) WITH ORDINALITY AS a(address, n) WHERE l.id = $1 AND a.n > 1"
            " ON CONFLICT DO NOTHING RETURNING id, executor_address, shard_index, shard_total");
  c.prepare("trigger_release",
            "WITH " + guard_cte("$1::bigint AS run_id, 'sending'::text AS run_state, $2::text AS run_owner") +
                " UPDATE job_log SET state = 'pending', trigger_time = NULL, trigger_msg = " + appended_trigger_msg("$3") +
                " FROM guard WHERE id = guard.run_id AND state = guard.run_state AND admin_node = guard.run_owner"
                " RETURNING id");
  // sending → triggered; or, when the run's result came first, the trigger's code and message
  // only (a failed trigger has code 500, so code 0 on a finished row means a callback did it).
  c.prepare("trigger_record_triggered",
            "WITH " + guard_cte("$1::bigint AS run_id, $2::text AS run_owner, 'sending'::text AS sending,"
                                " '{succeeded,failed}'::text[] AS finished, 0 AS no_code") +
                " UPDATE job_log SET trigger_code = 200, trigger_msg = " + appended_trigger_msg("$3") + ","
                " state = CASE WHEN state = 'sending' THEN 'triggered' ELSE state END"
                " FROM guard WHERE id = guard.run_id AND admin_node = guard.run_owner"
                " AND (state = guard.sending OR (state = ANY (guard.finished) AND trigger_code = guard.no_code))"
                " RETURNING state");
  c.prepare("trigger_record_failed",
            "WITH " + guard_cte("$1::bigint AS run_id, $2::text AS run_owner, $3::text AS run_state") +
            " UPDATE job_log SET state = 'failed', trigger_code = 500, trigger_msg = " + appended_trigger_msg("$4") + ","
            " trigger_time = COALESCE(trigger_time, " + ts("$5") + "),"
            " executor_handler = CASE WHEN $3::text = 'pending' THEN $6 ELSE executor_handler END,"
            " executor_param = CASE WHEN $3::text = 'pending' THEN $7 ELSE executor_param END"
            " FROM guard WHERE id = guard.run_id AND admin_node = guard.run_owner AND state = guard.run_state"
            " RETURNING " + kLogColumns);
}

std::optional<TriggerStore::LoadedFire> PgTriggerStore::load_pending(std::int64_t log_id, std::string_view node_id) {
  return db_.read([&](pqxx::read_transaction& tx) -> std::optional<LoadedFire> {
    auto rows = tx.exec_prepared("trigger_load", log_id, std::string(node_id));
    if (rows.empty()) return std::nullopt;
    const pqxx::row& row = rows[0];
    const auto job_start = row.column_number(kJobStart);
    const auto group_start = row.column_number(kGroupStart);
    return LoadedFire{log_from(row.slice(0, job_start)), job_from(row.slice(job_start + 1, group_start)),
                      group_from(row.slice(group_start + 1, row.size()))};
  });
}

TriggerStore::Claimed PgTriggerStore::claim(const Claim& c) {
  if (c.addresses.empty()) throw std::invalid_argument("a claim needs at least one address");
  const bool broadcast = c.addresses.size() > 1;
  const int shard_index = broadcast ? 0 : c.shard_index;
  const int shard_total = broadcast ? static_cast<int>(c.addresses.size()) : c.shard_total;
  return db_.transact([&](pqxx::work& tx) {
    Claimed out;
    auto claimed = tx.exec_prepared("trigger_claim", c.log_id, c.node_id, c.addresses.front(), c.executor_handler,
                                    c.executor_param, shard_index, shard_total, c.trigger_time, c.min_lease_ms);
    if (claimed.empty()) return out;
    const auto& lease = claimed[0]["lease_left_ms"];
    if (!lease.is_null()) out.lease_left_ms = lease.as<std::int64_t>();
    out.shards.push_back({c.log_id, c.addresses.front(), shard_index, shard_total});
    if (broadcast) {
      for (const auto& row : tx.exec_prepared("trigger_insert_shards", c.log_id, text_array(c.addresses))) {
        out.shards.push_back({row["id"].as<std::int64_t>(), row["executor_address"].as<std::string>(),
                              row["shard_index"].as<int>(), row["shard_total"].as<int>()});
      }
      std::sort(out.shards.begin(), out.shards.end(),
                [](const Shard& a, const Shard& b) { return a.shard_index < b.shard_index; });
    }
    return out;
  });
}

bool PgTriggerStore::release_claim(std::int64_t log_id, std::string_view node_id, const std::string& note) {
  return db_.transact([&](pqxx::work& tx) {
    return !tx.exec_prepared("trigger_release", log_id, std::string(node_id), note).empty();
  });
}

TriggerStore::Recorded PgTriggerStore::record_triggered(std::int64_t log_id, std::string_view node_id,
                                                        const std::string& trigger_msg) {
  return db_.transact([&](pqxx::work& tx) {
    auto rows = tx.exec_prepared("trigger_record_triggered", log_id, std::string(node_id), trigger_msg);
    if (rows.empty()) return Recorded::kNotOurs;
    return enum_of<FireState>(rows[0][0]) == FireState::kTriggered ? Recorded::kRecorded : Recorded::kResultFirst;
  });
}

TriggerStore::Failed PgTriggerStore::record_failed(const Failure& f, const FollowUpPlanner& plan) {
  if (f.from != FireState::kPending && f.from != FireState::kSending) {
    throw std::invalid_argument("a trigger fails from pending or sending, not " + text(f.from));
  }
  return db_.transact([&](pqxx::work& tx) {
    Failed out;
    auto rows = tx.exec_prepared("trigger_record_failed", f.log_id, f.node_id, text(f.from), f.trigger_msg, f.now,
                                 f.executor_handler, f.executor_param);
    if (rows.empty()) return out;
    out.recorded = Recorded::kRecorded;
    auto written = write_follow_ups(tx, log_from(rows[0]), plan);
    out.fires = std::move(written.fires);
    out.next_time_set = written.next_time_set;
    return out;
  });
}

}  // namespace cronwheel::admin
