#include "admin/pg/pg_trigger_store.h"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <utility>

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
            "WITH " + guard_cte("$1::bigint[] AS run_ids, 'pending'::text AS run_state, $2::text AS run_owner") +
                " SELECT l.*, 0 AS " + kJobStart + ", j.*, 0 AS " + kGroupStart + ", g.* FROM (SELECT " + kLogColumns +
                " FROM job_log_active, guard WHERE id = ANY (guard.run_ids) AND state = guard.run_state"
                " AND admin_node = guard.run_owner) l"
                " JOIN (SELECT " + kJobColumns + " FROM " + kJobTables + ") j ON j.id = l.job_id"
                " JOIN (SELECT " + kGroupColumns + " FROM job_group) g ON g.id = j.job_group");
  // Claims of one node, one executor each: $1 the runs, $3.. what each is sent with. Guarded by
  // the state, the owner and the owner's lease ($9 ms left at least, when the node has a row);
  // answers the runs claimed and what is left of the lease.
  c.prepare("trigger_claim",
            "WITH lease AS (SELECT (extract(epoch FROM lease_until - now()) * 1000)::bigint AS left_ms"
            " FROM admin_node WHERE node_id = $2), " +
                guard_cte("'pending'::text AS run_state, $2::text AS run_owner, $1::bigint[] AS ids,"
                          " $3::text[] AS addresses, $4::text[] AS handlers, $5::text[] AS params,"
                          " $6::integer[] AS indexes, $7::integer[] AS totals, $8::bigint[] AS times") + ", " +
                batch_values_cte("claim", "c", "unnest(guard.ids, guard.addresses, guard.handlers, guard.params,"
                                          " guard.indexes, guard.totals, guard.times) AS c(run_id, address, handler,"
                                          " param, shard_index, shard_total, at_ms)") +
                " UPDATE job_log_active l SET state = 'sending', executor_address = claim.address, executor_handler = claim.handler,"
                " executor_param = claim.param, shard_index = claim.shard_index, shard_total = claim.shard_total,"
                " trigger_time = " + ts("claim.at_ms") +
                " FROM guard, claim WHERE l.id = claim.run_id"
                " AND l.state = guard.run_state AND l.admin_node = guard.run_owner"
                " AND NOT EXISTS (SELECT 1 FROM lease WHERE left_ms < $9)"
                " RETURNING l.id, (SELECT left_ms FROM lease) AS lease_left_ms");
  // One claim of a broadcast: the run becomes shard 0 of as many as addresses.
  c.prepare("trigger_claim_one",
            "WITH lease AS (SELECT (extract(epoch FROM lease_until - now()) * 1000)::bigint AS left_ms"
            " FROM admin_node WHERE node_id = $2), " +
                guard_cte("$1::bigint AS run_id, 'pending'::text AS run_state, $2::text AS run_owner") +
                " UPDATE job_log_active SET state = 'sending', executor_address = $3, executor_handler = $4, executor_param = $5,"
                " shard_index = $6, shard_total = $7, trigger_time = " + ts("$8") +
                " FROM guard WHERE id = guard.run_id AND state = guard.run_state AND admin_node = guard.run_owner"
                " AND NOT EXISTS (SELECT 1 FROM lease WHERE left_ms < $9)"
                " RETURNING id, (SELECT left_ms FROM lease) AS lease_left_ms");
  // The other shards of a broadcast: copies of the claimed row, one per address after the
  // first. A scheduled shard that exists already, in flight or finished, is left as it is (and
  // not returned).
  c.prepare("trigger_insert_shards",
            "INSERT INTO job_log_active (job_group, job_id, state, trigger_type, scheduled_time, admin_node, executor_address,"
            " executor_handler, executor_param, shard_index, shard_total, executor_fail_retry_count, parent_log_id,"
            " trigger_time)"
            " SELECT l.job_group, l.job_id, 'sending', l.trigger_type, l.scheduled_time, l.admin_node, a.address,"
            " l.executor_handler, l.executor_param, (a.n - 1)::integer, l.shard_total, l.executor_fail_retry_count,"
            " l.parent_log_id, l.trigger_time"
            " FROM job_log_active l, unnest($2::text[]) WITH ORDINALITY AS a(address, n) WHERE l.id = $1 AND a.n > 1"
            " AND NOT (l.trigger_type IN ('SCHEDULE', 'MISFIRE') AND " +
                scheduled_fire_finished("l.job_id", "l.scheduled_time", "(a.n - 1)::integer") +
                ") AND NOT (l.trigger_type = 'BACKFILL' AND " +
                backfill_fire_finished("l.backfill_id", "l.scheduled_time", "(a.n - 1)::integer") +
                ")"
            " ON CONFLICT DO NOTHING RETURNING id, executor_address, shard_index, shard_total");
  c.prepare("trigger_release",
            "WITH " + guard_cte("$1::bigint AS run_id, 'sending'::text AS run_state, $2::text AS run_owner") +
                " UPDATE job_log_active SET state = 'pending', trigger_time = NULL, trigger_msg = " + appended_trigger_msg("$3") +
                " FROM guard WHERE id = guard.run_id AND state = guard.run_state AND admin_node = guard.run_owner"
                " RETURNING id");
  c.prepare("trigger_move",
            "WITH " + guard_cte("$1::bigint AS run_id, 'sending'::text AS run_state, $2::text AS run_owner") +
                " UPDATE job_log_active SET executor_address = $4, trigger_msg = " + appended_trigger_msg("$5") +
                " FROM guard WHERE id = guard.run_id AND state = guard.run_state AND admin_node = guard.run_owner"
                " AND executor_address = $3 RETURNING id");
  // sending → triggered for runs of one node ($1, with their messages $3 and trigger codes $4:
  // 200, or 500 for a delivery not confirmed). Answers each run moved.
  c.prepare("trigger_record_triggered",
            "WITH " + guard_cte("$2::text AS run_owner, 'sending'::text AS sending, $1::bigint[] AS ids,"
                                " $3::text[] AS messages, $4::integer[] AS codes") + ", " +
                batch_values_cte("answer", "a", "unnest(guard.ids, guard.messages, guard.codes) AS a(run_id, msg, code)") +
                " UPDATE job_log_active l SET trigger_code = answer.code, trigger_msg = " + appended_trigger_msg("answer.msg") +
                ", state = 'triggered'"
                " FROM guard, answer WHERE l.id = answer.run_id"
                " AND l.admin_node = guard.run_owner AND l.state = guard.sending"
                " RETURNING l.id");
  // The same answers for runs whose result came first (it finished them while /run's answer was
  // on its way): the trigger's code (200: it was delivered) and message only. A failed trigger
  // has code 500, so code 0 on a finished row means a result did it. A statement of its own
  // after the one above, so that it sees a run a result finished while that one waited for it.
  c.prepare("trigger_record_result_first",
            "WITH " + guard_cte("$2::text AS run_owner, '{succeeded,failed}'::text[] AS finished, 0 AS no_code,"
                                " $1::bigint[] AS ids, $3::text[] AS messages") + ", " +
                batch_values_cte("answer", "a", "unnest(guard.ids, guard.messages) AS a(run_id, msg)") +
                " UPDATE job_log_finished l SET trigger_code = 200, trigger_msg = " + appended_trigger_msg("answer.msg") +
                " FROM guard, answer WHERE l.id = answer.run_id"
                " AND l.admin_node = guard.run_owner AND l.state = ANY (guard.finished) AND l.trigger_code = guard.no_code"
                " RETURNING l.id");
  // Concurrency limits (sql/0023_concurrency_limits.sql).
  c.prepare("slot_wait",
            "WITH " + guard_cte("$1::bigint AS run_id, 'pending'::text AS run_state, $2::text AS run_owner,"
                                " false AS waiting") +
                " UPDATE job_log_active SET waiting_slot = true, trigger_msg = " + appended_trigger_msg("$3") +
                " FROM guard WHERE id = guard.run_id AND state = guard.run_state AND admin_node = guard.run_owner"
                " AND waiting_slot = guard.waiting AND NOT slot_admitted RETURNING id");
  // job_log_active_waiting_slot, which holds all it reads: a run waiting is pending (its CHECK);
  // planned without reads of the table whole (waiting_by_group).
  c.prepare("slot_waiting_groups",
            "SELECT job_group, count(*) AS waiting FROM job_log_active WHERE waiting_slot GROUP BY job_group");
  // FOR NO KEY UPDATE: admissions for one group take turns, while fires inserted for it (their
  // foreign key's FOR KEY SHARE) do not wait.
  c.prepare("slot_lock_group", "SELECT max_running FROM job_group WHERE id = $1 FOR NO KEY UPDATE SKIP LOCKED");
  // job_log_active_holding_slot: every run there is pending, sending or triggered.
  c.prepare("slot_holding",
            "SELECT job_id, count(*)::integer AS holding FROM job_log_active WHERE job_group = $1 AND slot_admitted "
            "GROUP BY job_id");
  // job_log_active_waiting_slot, each fire's job by id for its priority and limit.
  c.prepare("slot_candidates",
            "SELECT l.id, l.job_id, l.scheduled_time, j.priority, j.max_concurrent FROM job_log_active l "
            "JOIN job_info j ON j.id = l.job_id WHERE l.job_group = $1 AND l.waiting_slot "
            "ORDER BY j.priority DESC, l.scheduled_time, l.id LIMIT $2");
  c.prepare("slot_admit",
            "WITH " + guard_cte("$1::bigint[] AS run_ids, 'pending'::text AS run_state, true AS waiting") +
                " UPDATE job_log_active SET waiting_slot = false, slot_admitted = true, admin_node = $2"
                " FROM guard WHERE id = ANY (guard.run_ids) AND state = guard.run_state AND waiting_slot = guard.waiting"
                " RETURNING id, job_id, scheduled_time");
  c.prepare("trigger_record_failed",
            end_runs(guard_cte("$1::bigint AS run_id, $2::text AS run_owner, $3::text AS run_state"),
                     "USING guard WHERE a.id = guard.run_id AND a.admin_node = guard.run_owner"
                     " AND a.state = guard.run_state",
                     "",
                     {{"state", "'failed'"},
                      {"trigger_code", "500"},
                      {"trigger_msg", appended_trigger_msg("$4")},
                      {"trigger_time", "COALESCE(trigger_time, " + ts("$5") + ")"},
                      {"executor_handler", "CASE WHEN $3::text = 'pending' THEN $6 ELSE executor_handler END"},
                      {"executor_param", "CASE WHEN $3::text = 'pending' THEN $7 ELSE executor_param END"}}));
}

namespace {

// The positions of `requests` grouped by a key (their node, mostly one), each group in the order
// of the runs' ids, without a second request for the same run (which gets the answer for "not
// yours": of two calls for one run in one batch only the first may move it). Every batch
// statement locks its rows in id order, so two of them (a claim, the executors' answers, the
// callbacks' results) never wait for each other in a cycle.
template <class Request, class Key>
std::map<Key, std::vector<std::size_t>> by_key(const std::vector<Request>& requests, Key (*key_of)(const Request&)) {
  std::map<Key, std::vector<std::size_t>> groups;
  std::map<Key, std::set<std::int64_t>> seen;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    Key key = key_of(requests[i]);
    if (seen[key].insert(requests[i].log_id).second) groups[key].push_back(i);
  }
  for (auto& [key, positions] : groups) {
    std::sort(positions.begin(), positions.end(),
              [&](std::size_t a, std::size_t b) { return requests[a].log_id < requests[b].log_id; });
  }
  return groups;
}

}  // namespace

PgTriggerStore::PgTriggerStore(Database& db, Options options)
    : db_(db),
      loads_({options.max_batch, options.max_in_flight}, [this](const std::vector<Load>& b) { return load_all(b); }),
      claims_({options.max_batch, options.max_in_flight}, [this](const std::vector<Claim>& b) { return claim_all(b); }),
      triggered_({options.max_batch, options.max_in_flight},
                 [this](const std::vector<Triggered>& b) { return record_all_triggered(b); }) {}

std::optional<TriggerStore::LoadedFire> PgTriggerStore::load_pending(std::int64_t log_id, std::string_view node_id) {
  return loads_.call({log_id, std::string(node_id)});
}

std::vector<std::optional<TriggerStore::LoadedFire>> PgTriggerStore::load_all(const std::vector<Load>& loads) {
  auto groups = by_key<Load, std::string>(loads, [](const Load& l) { return l.node_id; });
  return db_.read([&](pqxx::read_transaction& tx) {
    std::vector<std::optional<LoadedFire>> out(loads.size());
    for (const auto& [node, positions] : groups) {
      std::map<std::int64_t, std::size_t> position_of;
      std::vector<std::int64_t> ids;
      for (auto i : positions) {
        position_of[loads[i].log_id] = i;
        ids.push_back(loads[i].log_id);
      }
      const auto rows = tx.exec_prepared("trigger_load", bigint_array(ids), node);
      if (rows.empty()) continue;
      const auto job_start = rows.column_number(kJobStart);
      const auto group_start = rows.column_number(kGroupStart);
      for (const auto& row : rows) {
        LoadedFire fire{log_from(row.slice(0, job_start)), job_from(row.slice(job_start + 1, group_start)),
                        group_from(row.slice(group_start + 1, row.size()))};
        out[position_of.at(fire.log.id)] = std::move(fire);
      }
    }
    return out;
  });
}

TriggerStore::Claimed PgTriggerStore::claim(const Claim& c) {
  if (c.addresses.empty()) throw std::invalid_argument("a claim needs at least one address");
  if (c.addresses.size() == 1) return claims_.call(c);
  // A broadcast: the run and its other shards, in one transaction of its own.
  const int shard_total = static_cast<int>(c.addresses.size());
  return db_.transact([&](pqxx::work& tx) {
    Claimed out;
    auto claimed = tx.exec_prepared("trigger_claim_one", c.log_id, c.node_id, c.addresses.front(), c.executor_handler,
                                    c.executor_param, 0, shard_total, c.trigger_time, c.min_lease_ms);
    if (claimed.empty()) return out;
    const auto& lease = claimed[0]["lease_left_ms"];
    if (!lease.is_null()) out.lease_left_ms = lease.as<std::int64_t>();
    out.shards.push_back({c.log_id, c.addresses.front(), 0, shard_total});
    for (const auto& row : tx.exec_prepared("trigger_insert_shards", c.log_id, text_array(c.addresses))) {
      out.shards.push_back({row["id"].as<std::int64_t>(), row["executor_address"].as<std::string>(),
                            row["shard_index"].as<int>(), row["shard_total"].as<int>()});
    }
    std::sort(out.shards.begin(), out.shards.end(),
              [](const Shard& a, const Shard& b) { return a.shard_index < b.shard_index; });
    return out;
  });
}

std::vector<std::optional<TriggerStore::LoadedFire>> PgTriggerStore::load_pending_all(
    const std::vector<std::int64_t>& log_ids, std::string_view node_id) {
  std::vector<Load> loads;
  loads.reserve(log_ids.size());
  for (auto id : log_ids) loads.push_back({id, std::string(node_id)});
  return load_all(loads);
}

std::vector<TriggerStore::Claimed> PgTriggerStore::claim_all(const std::vector<Claim>& claims) {
  for (const auto& c : claims) {
    if (c.addresses.size() != 1) throw std::invalid_argument("claim_all claims one executor per fire");
  }
  // Claims are grouped by node and lease margin: the statement checks one node's lease.
  auto groups = by_key<Claim, std::pair<std::string, std::int64_t>>(
      claims, [](const Claim& c) { return std::pair{c.node_id, c.min_lease_ms}; });
  return db_.transact([&](pqxx::work& tx) {
    std::vector<Claimed> out(claims.size());
    for (const auto& [key, positions] : groups) {
      std::map<std::int64_t, std::size_t> position_of;
      std::vector<std::int64_t> ids, at;
      std::vector<std::string> addresses, handlers, params, indexes, totals;
      for (auto i : positions) {
        const Claim& c = claims[i];
        position_of[c.log_id] = i;
        ids.push_back(c.log_id);
        addresses.push_back(c.addresses.front());
        handlers.push_back(c.executor_handler);
        params.push_back(c.executor_param);
        indexes.push_back(std::to_string(c.shard_index));
        totals.push_back(std::to_string(c.shard_total));
        at.push_back(c.trigger_time);
      }
      for (const auto& row : tx.exec_prepared("trigger_claim", bigint_array(ids), key.first, text_array(addresses),
                                              text_array(handlers), text_array(params), text_array(indexes),
                                              text_array(totals), bigint_array(at), key.second)) {
        const Claim& c = claims[position_of.at(row["id"].as<std::int64_t>())];
        Claimed& claimed = out[position_of.at(c.log_id)];
        if (!row["lease_left_ms"].is_null()) claimed.lease_left_ms = row["lease_left_ms"].as<std::int64_t>();
        claimed.shards.push_back({c.log_id, c.addresses.front(), c.shard_index, c.shard_total});
      }
    }
    return out;
  });
}

bool PgTriggerStore::release_claim(std::int64_t log_id, std::string_view node_id, const std::string& note) {
  return db_.transact([&](pqxx::work& tx) {
    return !tx.exec_prepared("trigger_release", log_id, std::string(node_id), note).empty();
  });
}

bool PgTriggerStore::move_claim(std::int64_t log_id, std::string_view node_id, const std::string& from,
                                const std::string& to, const std::string& note) {
  return db_.transact([&](pqxx::work& tx) {
    return !tx.exec_prepared("trigger_move", log_id, std::string(node_id), from, to, note).empty();
  });
}

TriggerStore::Recorded PgTriggerStore::record_triggered(std::int64_t log_id, std::string_view node_id,
                                                        const std::string& trigger_msg) {
  return triggered_.call({log_id, std::string(node_id), trigger_msg});
}

std::vector<TriggerStore::Recorded> PgTriggerStore::record_triggered_all(const std::vector<Accepted>& accepted) {
  if (accepted.empty()) return {};
  std::vector<Triggered> answers;
  answers.reserve(accepted.size());
  for (const auto& a : accepted) answers.push_back({a.log_id, a.node_id, a.trigger_msg});
  return record_all_triggered(answers);
}

TriggerStore::Recorded PgTriggerStore::record_unconfirmed(std::int64_t log_id, std::string_view node_id,
                                                          const std::string& trigger_msg) {
  return record_all_triggered({{log_id, std::string(node_id), trigger_msg, 500}}).front();
}

std::vector<TriggerStore::Recorded> PgTriggerStore::record_all_triggered(const std::vector<Triggered>& answers) {
  auto groups = by_key<Triggered, std::string>(answers, [](const Triggered& t) { return t.node_id; });
  return db_.transact([&](pqxx::work& tx) {
    std::vector<Recorded> out(answers.size(), Recorded::kNotOurs);
    for (const auto& [node, positions] : groups) {
      std::map<std::int64_t, std::size_t> position_of;
      std::vector<std::int64_t> ids;
      std::vector<std::string> messages;
      std::vector<std::int64_t> codes;
      for (auto i : positions) {
        position_of[answers[i].log_id] = i;
        ids.push_back(answers[i].log_id);
        messages.push_back(answers[i].trigger_msg);
        codes.push_back(answers[i].trigger_code);
      }
      std::vector<std::int64_t> rest_ids;
      std::vector<std::string> rest_messages;
      std::set<std::int64_t> moved;
      for (const auto& row : tx.exec_prepared("trigger_record_triggered", bigint_array(ids), node, text_array(messages),
                                              bigint_array(codes))) {
        moved.insert(row["id"].as<std::int64_t>());
      }
      for (std::size_t k = 0; k < ids.size(); ++k) {
        if (moved.contains(ids[k])) {
          out[position_of.at(ids[k])] = Recorded::kRecorded;
        } else {
          rest_ids.push_back(ids[k]);
          rest_messages.push_back(messages[k]);
        }
      }
      if (rest_ids.empty()) continue;
      for (const auto& row :
           tx.exec_prepared("trigger_record_result_first", bigint_array(rest_ids), node, text_array(rest_messages))) {
        out[position_of.at(row["id"].as<std::int64_t>())] = Recorded::kResultFirst;
      }
    }
    return out;
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

bool PgTriggerStore::wait_for_slot(std::int64_t log_id, std::string_view node_id, const std::string& note) {
  return db_.transact(
      [&](pqxx::work& tx) { return !tx.exec_prepared("slot_wait", log_id, std::string(node_id), note).empty(); });
}

std::map<std::int64_t, std::int64_t> PgTriggerStore::waiting_by_group() {
  return db_.read([&](pqxx::read_transaction& tx) {
    std::map<std::int64_t, std::int64_t> out;
    // Planned on the run table as a node finds it at start, empty (a plan without parameters is
    // kept until the table is next analysed), a read of all of job_log_active looks as cheap as
    // the index of the few runs waiting; under load the table holds a minute of deleted runs
    // until autovacuum comes, and that read took most of a second, every second. So this
    // statement, and the plan it keeps, never reads the table whole.
    tx.exec("SET LOCAL enable_seqscan = off");
    for (const auto& r : tx.exec_prepared("slot_waiting_groups")) {
      out[r["job_group"].as<std::int64_t>()] = r["waiting"].as<std::int64_t>();
    }
    return out;
  });
}

std::optional<std::vector<PendingFire>> PgTriggerStore::admit(std::int64_t group_id, std::string_view node_id,
                                                              std::size_t max_candidates,
                                                              const ChooseAdmitted& choose) {
  return db_.transact([&](pqxx::work& tx) -> std::optional<std::vector<PendingFire>> {
    const auto locked = tx.exec_prepared("slot_lock_group", group_id);
    if (locked.empty()) return std::nullopt;  // another node admits for it now (or it is gone)
    const int group_limit = locked[0]["max_running"].as<int>();
    std::map<std::int64_t, int> holding;
    for (const auto& r : tx.exec_prepared("slot_holding", group_id)) {
      holding[r["job_id"].as<std::int64_t>()] = r["holding"].as<int>();
    }
    std::vector<SlotCandidate> candidates;
    for (const auto& r : tx.exec_prepared("slot_candidates", group_id, static_cast<std::int64_t>(max_candidates))) {
      candidates.push_back({r["id"].as<std::int64_t>(), r["job_id"].as<std::int64_t>(), r["priority"].as<int>(),
                            r["scheduled_time"].as<std::int64_t>(), r["max_concurrent"].as<int>()});
    }
    std::vector<PendingFire> admitted;
    if (candidates.empty()) return admitted;
    const auto chosen = choose(group_limit, holding, std::move(candidates));
    if (chosen.empty()) return admitted;
    std::map<std::int64_t, PendingFire> moved;
    for (const auto& r : tx.exec_prepared("slot_admit", bigint_array(chosen), std::string(node_id))) {
      const auto id = r["id"].as<std::int64_t>();
      moved[id] = PendingFire{id, r["job_id"].as<std::int64_t>(), r["scheduled_time"].as<std::int64_t>()};
    }
    for (auto id : chosen) {
      if (auto it = moved.find(id); it != moved.end()) admitted.push_back(it->second);
    }
    return admitted;
  });
}

}  // namespace cronwheel::admin
