#include "admin/pg/pg_alarm_store.h"

#include <algorithm>
#include <map>

#include "admin/model/record_json.h"
#include "admin/pg/pg_store_support.h"

namespace cronwheel::admin {

using namespace pg;

namespace {

// Runs that ended badly and are undecided, or claimed before $stale_before: what job_log_alarm
// holds (its predicate is the first two conditions), for the run table `l`.
std::string open_alarm(const std::string& stale_before) {
  return "l.state IN ('failed', 'lost', 'cancelled') AND l.alarm_status IN (0, -1)"
         " AND (l.alarm_status = 0 OR l.alarm_time < " + stale_before + ")";
}

// The job `j` has somewhere to send alarms: its own addresses, or a channel of it or its group.
const std::string kJobHasRecipients =
    "(j.alarm_email <> '' OR EXISTS (SELECT 1 FROM alarm_channel c WHERE j.id = ANY (c.jobs) OR j.job_group = ANY "
    "(c.groups)))";

// Of those, the runs that call for an alarm: no retry follows, and the job has recipients.
const std::string kCallsForAlarm =
    " AND (l.state = 'cancelled' OR l.executor_fail_retry_count = 0)"
    " AND EXISTS (SELECT 1 FROM job_info j WHERE j.id = l.job_id AND " + kJobHasRecipients + ")";

void check_exist(pqxx::work& tx, const char* statement, const std::vector<std::int64_t>& ids, const char* field,
                 const char* what) {
  if (ids.empty()) return;
  std::vector<std::int64_t> found;
  for (const auto& row : tx.exec_prepared(statement, bigint_array(ids))) found.push_back(row[0].as<std::int64_t>());
  for (auto id : ids) {
    if (std::find(found.begin(), found.end(), id) == found.end()) {
      throw Conflict(std::string(field) + ": " + what + " " + std::to_string(id) + " does not exist", field);
    }
  }
}

// A channel as the audit log keeps it: its JSON form (never the secret).
nlohmann::json audited(const AlarmChannel& channel) { return to_json(channel); }

}  // namespace

void PgAlarmStore::prepare(pqxx::connection& c) {
  // $1 now, $2 stale_before.
  c.prepare("alarm_not_needed",
            "UPDATE job_log_finished l SET alarm_status = 1, alarm_time = $1 WHERE " + open_alarm("$2") +
                " AND ((l.state <> 'cancelled' AND l.executor_fail_retry_count > 0)"
                "      OR NOT EXISTS (SELECT 1 FROM job_info j WHERE j.id = l.job_id AND " + kJobHasRecipients + "))");
  // Jobs with runs to alarm about and out of their quiet period (every job has its job_alarm
  // row, 0007_alarms.sql). $1 stale_before, $2 quiet_before, $3 limit.
  c.prepare("alarm_jobs",
            "SELECT DISTINCT l.job_id FROM job_log_finished l JOIN job_alarm a ON a.job_id = l.job_id WHERE " +
                open_alarm("$1") + kCallsForAlarm + " AND a.last_sent_at <= $2 ORDER BY l.job_id LIMIT $3");
  // The jobs this node claims: out of their quiet period (re-checked on the newest row version)
  // and not being claimed by another node. $1 jobs, $2 quiet_before, $3 limit.
  c.prepare("alarm_lock_jobs",
            "SELECT job_id, last_sent_at FROM job_alarm WHERE job_id = ANY ($1::bigint[]) AND last_sent_at <= $2 "
            "ORDER BY job_id LIMIT $3 FOR UPDATE SKIP LOCKED");
  // $1 jobs, $2 now, $3 stale_before.
  c.prepare("alarm_claim_runs",
            "UPDATE job_log_finished l SET alarm_status = -1, alarm_time = $2 WHERE l.job_id = ANY ($1::bigint[]) AND " +
                open_alarm("$3") + kCallsForAlarm + " RETURNING l.job_id, l.id");
  c.prepare("alarm_mark_jobs", "UPDATE job_alarm SET last_sent_at = $2 WHERE job_id = ANY ($1::bigint[])");
  c.prepare("alarm_runs", "SELECT " + kLogColumns + " FROM job_log_finished WHERE id = ANY ($1::bigint[]) ORDER BY job_id, id");
  c.prepare("alarm_job_rows", "SELECT " + kJobColumns + " FROM " + kJobTables + " WHERE id = ANY ($1::bigint[]) ORDER BY id");
  // The channels of the claimed jobs, with the job each is for. $1 jobs.
  c.prepare("alarm_job_channels",
            "SELECT j.id AS for_job, " + kChannelColumns + " FROM job_info j JOIN alarm_channel c ON j.id = ANY (c.jobs)"
            " OR j.job_group = ANY (c.groups) WHERE j.id = ANY ($1::bigint[]) ORDER BY j.id, c.id");
  c.prepare("alarm_channel_list", "SELECT " + kChannelColumns + " FROM alarm_channel c ORDER BY c.id");
  c.prepare("alarm_channel_get", "SELECT " + kChannelColumns + " FROM alarm_channel c WHERE c.id = $1");
  c.prepare("alarm_channel_lock", "SELECT " + kChannelColumns + " FROM alarm_channel c WHERE c.id = $1 FOR UPDATE");
  c.prepare("alarm_channel_groups_exist", "SELECT id FROM job_group WHERE id = ANY ($1::bigint[])");
  c.prepare("alarm_channel_jobs_exist", "SELECT id FROM job_info WHERE id = ANY ($1::bigint[])");
  // $1 name, $2 kind, $3 target, $4 secret, $5 groups, $6 jobs, $7 now.
  c.prepare("alarm_channel_insert",
            "INSERT INTO alarm_channel (name, kind, target, secret, groups, jobs, created_at, updated_at) "
            "VALUES ($1, $2, $3, $4, $5::bigint[], $6::bigint[], " + ts("$7") + ", " + ts("$7") + ") RETURNING id");
  c.prepare("alarm_channel_update",
            "UPDATE alarm_channel SET name = $2, kind = $3, target = $4, secret = $5, groups = $6::bigint[], "
            "jobs = $7::bigint[], updated_at = " + ts("$8") + " WHERE id = $1");
  c.prepare("alarm_channel_delete", "DELETE FROM alarm_channel WHERE id = $1");
  // Executor clocks (ClockAlarmClaim). A registration has an estimate beyond the bound $1 when
  // |clock_offset_ms| > $1. A channel takes its alarm when it takes a group of its app name.
  c.prepare("clock_alarm_clear",
            "UPDATE job_registry SET clock_alarm_status = 0, clock_alarm_time = NULL WHERE clock_alarm_status <> 0 "
            "AND (clock_offset_ms IS NULL OR abs(clock_offset_ms) <= $1)");
  // $1 bound, $2 stale_before, $3 limit.
  c.prepare("clock_alarm_lock",
            "SELECT r.id FROM job_registry r WHERE r.registry_group = 'EXECUTOR' AND abs(r.clock_offset_ms) > $1 "
            "AND (r.clock_alarm_status = 0 OR (r.clock_alarm_status = -1 AND r.clock_alarm_time < $2)) "
            "AND EXISTS (SELECT 1 FROM job_group g JOIN alarm_channel c ON g.id = ANY (c.groups) "
            "            WHERE g.app_name = r.registry_key) "
            "ORDER BY r.id LIMIT $3 FOR UPDATE SKIP LOCKED");
  // $1 ids, $2 now.
  c.prepare("clock_alarm_claim",
            "UPDATE job_registry SET clock_alarm_status = -1, clock_alarm_time = $2 WHERE id = ANY ($1::bigint[]) "
            "RETURNING id, registry_key, registry_value, clock_offset_ms, clock_delay_ms");
  // $1 ids: the channels of each registration's app name, with the registration each is for.
  c.prepare("clock_alarm_channels",
            "SELECT DISTINCT r.id AS for_registration, " + kChannelColumns + " FROM job_registry r "
            "JOIN job_group g ON g.app_name = r.registry_key JOIN alarm_channel c ON g.id = ANY (c.groups) "
            "WHERE r.id = ANY ($1::bigint[]) ORDER BY r.id, c.id");
  // $1 id, $2 claimed_at, $3 outcome.
  c.prepare("clock_alarm_finish",
            "UPDATE job_registry SET clock_alarm_status = $3 WHERE id = $1 AND clock_alarm_status = -1 "
            "AND clock_alarm_time = $2");
  // $1 job, $2 claimed_at, $3 outcome, $4 now.
  c.prepare("alarm_finish",
            "UPDATE job_log_finished l SET alarm_status = $3, alarm_time = $4 WHERE l.job_id = $1 AND "
            "l.state IN ('failed', 'lost', 'cancelled') AND l.alarm_status = -1 AND l.alarm_time = $2");
}

std::vector<AlarmClaim> PgAlarmStore::claim(const ClaimRequest& r) {
  const std::int64_t stale_before = r.now - r.stale_ms;
  const std::int64_t quiet_before = r.now - r.quiet_ms;
  return db_.transact([&](pqxx::work& tx) {
    tx.exec_prepared("alarm_not_needed", r.now, stale_before);

    std::vector<std::int64_t> candidates;
    // Twice the jobs wanted: some may be claimed by another node right now.
    for (const auto& row : tx.exec_prepared("alarm_jobs", stale_before, quiet_before, 2 * r.max_jobs)) {
      candidates.push_back(row[0].as<std::int64_t>());
    }
    if (candidates.empty()) return std::vector<AlarmClaim>{};

    std::map<std::int64_t, AlarmClaim> claims;
    std::vector<std::int64_t> locked;
    for (const auto& row : tx.exec_prepared("alarm_lock_jobs", bigint_array(candidates), quiet_before, r.max_jobs)) {
      AlarmClaim claim;
      claim.claimed_at = r.now;
      claim.previous_alarm_at = row[1].as<std::int64_t>();
      locked.push_back(row[0].as<std::int64_t>());
      claims.emplace(locked.back(), std::move(claim));
    }
    if (locked.empty()) return std::vector<AlarmClaim>{};

    // Every run is claimed; the oldest of each job are read back in full.
    std::map<std::int64_t, std::vector<std::int64_t>> runs_of;
    for (const auto& row : tx.exec_prepared("alarm_claim_runs", bigint_array(locked), r.now, stale_before)) {
      runs_of[row[0].as<std::int64_t>()].push_back(row[1].as<std::int64_t>());
    }
    std::vector<std::int64_t> claimed_jobs, listed;
    for (auto& [job, ids] : runs_of) {
      std::sort(ids.begin(), ids.end());
      claimed_jobs.push_back(job);
      claims[job].runs_total = static_cast<std::int64_t>(ids.size());
      const std::size_t n = std::min(ids.size(), static_cast<std::size_t>(std::max(0, r.runs_listed)));
      listed.insert(listed.end(), ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(n));
    }
    if (claimed_jobs.empty()) return std::vector<AlarmClaim>{};
    tx.exec_prepared("alarm_mark_jobs", bigint_array(claimed_jobs), r.now);
    for (const auto& row : tx.exec_prepared("alarm_runs", bigint_array(listed))) {
      JobLog run = log_from(row);
      claims[run.job_id].runs.push_back(std::move(run));
    }
    for (const auto& row : tx.exec_prepared("alarm_job_channels", bigint_array(claimed_jobs))) {
      claims[row["for_job"].as<std::int64_t>()].channels.push_back(channel_from(row));
    }
    std::vector<AlarmClaim> out;
    for (const auto& row : tx.exec_prepared("alarm_job_rows", bigint_array(claimed_jobs))) {
      Job job = job_from(row);
      AlarmClaim& claim = claims[job.id];
      claim.job = std::move(job);
      out.push_back(std::move(claim));
    }
    return out;
  });
}

int PgAlarmStore::finish(std::int64_t job_id, std::int64_t claimed_at, AlarmOutcome outcome, std::int64_t now) {
  const int status = outcome == AlarmOutcome::kSent ? kAlarmSent : kAlarmFailed;
  return db_.transact([&](pqxx::work& tx) {
    return static_cast<int>(tx.exec_prepared("alarm_finish", job_id, claimed_at, status, now).affected_rows());
  });
}

std::vector<AlarmChannel> PgAlarmStore::list_channels() {
  return db_.read([&](pqxx::read_transaction& tx) {
    return all_of<AlarmChannel>(tx.exec_prepared("alarm_channel_list"), channel_from);
  });
}

std::optional<AlarmChannel> PgAlarmStore::get_channel(std::int64_t id) {
  return db_.read([&](pqxx::read_transaction& tx) {
    return first_of<AlarmChannel>(tx.exec_prepared("alarm_channel_get", id), channel_from);
  });
}

AlarmChannel PgAlarmStore::create_channel(const AlarmChannel& ch, const Actor& actor) {
  const auto now = clock_.now_ms();
  return mapped([&] {
    return db_.transact([&](pqxx::work& tx) {
      check_exist(tx, "alarm_channel_groups_exist", ch.groups, "groups", "group");
      check_exist(tx, "alarm_channel_jobs_exist", ch.jobs, "jobs", "job");
      const auto id = tx.exec_prepared1("alarm_channel_insert", ch.name, text(ch.kind), ch.target, ch.secret,
                                        bigint_array(ch.groups), bigint_array(ch.jobs), now)[0]
                          .as<std::int64_t>();
      AlarmChannel created = channel_from(tx.exec_prepared1("alarm_channel_get", id));
      write_audit(tx, now, actor, "alarm_channel.create", "alarm_channel", id, std::nullopt, audited(created));
      return created;
    });
  });
}

AlarmChannel PgAlarmStore::update_channel(const AlarmChannel& ch, const Actor& actor) {
  const auto now = clock_.now_ms();
  return mapped([&] {
    return db_.transact([&](pqxx::work& tx) {
      auto before = first_of<AlarmChannel>(tx.exec_prepared("alarm_channel_lock", ch.id), channel_from);
      if (!before) throw NotFound("alarm channel " + std::to_string(ch.id) + " does not exist");
      check_exist(tx, "alarm_channel_groups_exist", ch.groups, "groups", "group");
      check_exist(tx, "alarm_channel_jobs_exist", ch.jobs, "jobs", "job");
      tx.exec_prepared("alarm_channel_update", ch.id, ch.name, text(ch.kind), ch.target, ch.secret,
                       bigint_array(ch.groups), bigint_array(ch.jobs), now);
      AlarmChannel updated = channel_from(tx.exec_prepared1("alarm_channel_get", ch.id));
      write_audit(tx, now, actor, "alarm_channel.update", "alarm_channel", ch.id, audited(*before), audited(updated));
      return updated;
    });
  });
}

void PgAlarmStore::remove_channel(std::int64_t id, const Actor& actor) {
  const auto now = clock_.now_ms();
  db_.transact([&](pqxx::work& tx) {
    auto before = first_of<AlarmChannel>(tx.exec_prepared("alarm_channel_lock", id), channel_from);
    if (!before) throw NotFound("alarm channel " + std::to_string(id) + " does not exist");
    tx.exec_prepared("alarm_channel_delete", id);
    write_audit(tx, now, actor, "alarm_channel.delete", "alarm_channel", id, audited(*before), std::nullopt);
  });
}

std::vector<ClockAlarmClaim> PgAlarmStore::claim_clock_alarms(std::int64_t now, std::int64_t bound_ms,
                                                              std::int64_t stale_ms, int limit) {
  return db_.transact([&](pqxx::work& tx) {
    tx.exec_prepared("clock_alarm_clear", bound_ms);
    std::vector<std::int64_t> locked;
    for (const auto& row : tx.exec_prepared("clock_alarm_lock", bound_ms, now - stale_ms, limit)) {
      locked.push_back(row[0].as<std::int64_t>());
    }
    if (locked.empty()) return std::vector<ClockAlarmClaim>{};
    std::map<std::int64_t, ClockAlarmClaim> claims;
    for (const auto& row : tx.exec_prepared("clock_alarm_claim", bigint_array(locked), now)) {
      ClockAlarmClaim claim;
      claim.registration_id = row["id"].as<std::int64_t>();
      claim.app_name = row["registry_key"].as<std::string>();
      claim.address = row["registry_value"].as<std::string>();
      claim.offset_ms = row["clock_offset_ms"].as<std::int64_t>();
      claim.delay_ms = row["clock_delay_ms"].is_null() ? 0 : row["clock_delay_ms"].as<std::int64_t>();
      claim.claimed_at = now;
      claims.emplace(claim.registration_id, std::move(claim));
    }
    for (const auto& row : tx.exec_prepared("clock_alarm_channels", bigint_array(locked))) {
      claims[row["for_registration"].as<std::int64_t>()].channels.push_back(channel_from(row));
    }
    std::vector<ClockAlarmClaim> out;
    for (auto& [id, claim] : claims) out.push_back(std::move(claim));
    return out;
  });
}

void PgAlarmStore::finish_clock_alarm(std::int64_t registration_id, std::int64_t claimed_at, AlarmOutcome outcome) {
  const int status = outcome == AlarmOutcome::kSent ? kAlarmSent : kAlarmFailed;
  db_.transact([&](pqxx::work& tx) { tx.exec_prepared("clock_alarm_finish", registration_id, claimed_at, status); });
}

}  // namespace cronwheel::admin
