#include "admin/pg/pg_alarm_store.h"

#include <algorithm>
#include <map>

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

// Of those, the runs that call for an alarm: no retry follows, and the job has recipients.
const std::string kCallsForAlarm =
    " AND (l.state = 'cancelled' OR l.executor_fail_retry_count = 0)"
    " AND EXISTS (SELECT 1 FROM job_info j WHERE j.id = l.job_id AND j.alarm_email <> '')";

}  // namespace

void PgAlarmStore::prepare(pqxx::connection& c) {
  // $1 now, $2 stale_before.
  c.prepare("alarm_not_needed",
            "UPDATE job_log l SET alarm_status = 1, alarm_time = $1 WHERE " + open_alarm("$2") +
                " AND ((l.state <> 'cancelled' AND l.executor_fail_retry_count > 0)"
                "      OR NOT EXISTS (SELECT 1 FROM job_info j WHERE j.id = l.job_id AND j.alarm_email <> ''))");
  // Jobs with runs to alarm about and out of their quiet period (every job has its job_alarm
  // row, 0007_alarms.sql). $1 stale_before, $2 quiet_before, $3 limit.
  c.prepare("alarm_jobs",
            "SELECT DISTINCT l.job_id FROM job_log l JOIN job_alarm a ON a.job_id = l.job_id WHERE " +
                open_alarm("$1") + kCallsForAlarm + " AND a.last_sent_at <= $2 ORDER BY l.job_id LIMIT $3");
  // The jobs this node claims: out of their quiet period (re-checked on the newest row version)
  // and not being claimed by another node. $1 jobs, $2 quiet_before, $3 limit.
  c.prepare("alarm_lock_jobs",
            "SELECT job_id, last_sent_at FROM job_alarm WHERE job_id = ANY ($1::bigint[]) AND last_sent_at <= $2 "
            "ORDER BY job_id LIMIT $3 FOR UPDATE SKIP LOCKED");
  // $1 jobs, $2 now, $3 stale_before.
  c.prepare("alarm_claim_runs",
            "UPDATE job_log l SET alarm_status = -1, alarm_time = $2 WHERE l.job_id = ANY ($1::bigint[]) AND " +
                open_alarm("$3") + kCallsForAlarm + " RETURNING l.job_id, l.id");
  c.prepare("alarm_mark_jobs", "UPDATE job_alarm SET last_sent_at = $2 WHERE job_id = ANY ($1::bigint[])");
  c.prepare("alarm_runs", "SELECT " + kLogColumns + " FROM job_log WHERE id = ANY ($1::bigint[]) ORDER BY job_id, id");
  c.prepare("alarm_job_rows", "SELECT " + kJobColumns + " FROM job_info WHERE id = ANY ($1::bigint[]) ORDER BY id");
  // $1 job, $2 claimed_at, $3 outcome, $4 now.
  c.prepare("alarm_finish",
            "UPDATE job_log l SET alarm_status = $3, alarm_time = $4 WHERE l.job_id = $1 AND "
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

}  // namespace cronwheel::admin
