#pragma once

// Port: the runs that call for an alarm, claimed once across admin nodes (docs/alarms.md).
// Implemented by PgAlarmStore (admin/pg/pg_alarm_store.h), faked by
// tests/support/fake_alarm_store.h; both pass tests/support/alarm_contract_tests.h.
// Thread-safe; each method is one short transaction; StoreUnavailable when the store cannot be
// reached.

#include <cstdint>
#include <string>
#include <vector>

#include "admin/model/alarm_channel_store.h"
#include "admin/model/records.h"
#include "admin/model/store_errors.h"

namespace cronwheel::admin {

// A run calls for an alarm when it ended `failed` or `lost` with no retry left
// (executor_fail_retry_count 0), or was `cancelled` by its job's misfire strategy (an
// operator's cancel is decided "no alarm" when it happens), and its job has recipients
// (Job::alarm_email not empty, or an alarm channel takes its group's or its own alarms).
// JobLog::alarm_status: 0 undecided, 1 no alarm needed, 2 sent,
// 3 failed, -1 claimed (being sent).
inline constexpr int kAlarmUndecided = 0;
inline constexpr int kAlarmNotNeeded = 1;
inline constexpr int kAlarmSent = 2;
inline constexpr int kAlarmFailed = 3;
inline constexpr int kAlarmClaimed = -1;

// The runs of one job that a node claimed to alarm about together.
struct AlarmClaim {
  Job job;                              // as it is now
  std::int64_t claimed_at = 0;          // the claim's time (epoch ms): finish() names it
  std::int64_t previous_alarm_at = 0;   // when the job's previous alarm was claimed; 0: never
  std::int64_t runs_total = 0;          // runs claimed, all of them
  std::vector<JobLog> runs;             // the oldest of them (by id), at most runs_listed
  std::vector<AlarmChannel> channels;   // the channels of the job's group or of the job, by id

  friend bool operator==(const AlarmClaim&, const AlarmClaim&) = default;
};

enum class AlarmOutcome { kSent, kFailed };

// An executor whose clock is off the admin's by more than the bound, claimed for its alarm
// (docs/alarms.md, "Executor clocks").
struct ClockAlarmClaim {
  std::int64_t registration_id = 0;
  std::string app_name;
  std::string address;
  std::int64_t offset_ms = 0;  // the admin's clock minus the executor's, as the executor measured it
  std::int64_t delay_ms = 0;   // the round trip it was measured over
  std::int64_t claimed_at = 0;
  std::vector<AlarmChannel> channels;  // the channels taking the alarms of a group of its app name, by id

  friend bool operator==(const ClockAlarmClaim&, const ClockAlarmClaim&) = default;
};

class AlarmStore {
 public:
  struct ClaimRequest {
    std::int64_t now = 0;       // epoch ms, this node's clock
    std::int64_t quiet_ms = 0;  // a job whose last alarm was claimed less than this ago waits
    std::int64_t stale_ms = 0;  // a claim not finished this long ago is claimed again
    int max_jobs = 100;         // jobs claimed at most
    int runs_listed = 20;       // runs returned per job at most (all are claimed)
  };

  virtual ~AlarmStore() = default;

  // In one transaction:
  //  1. undecided runs (and claims older than stale_ms) that ended badly but call for no alarm
  //     (a retry follows; the job has no recipients and no channel) are decided: alarm_status 1;
  //  2. for at most max_jobs jobs whose last alarm was claimed at least quiet_ms ago (or never),
  //     every run that calls for an alarm and is undecided, or claimed more than stale_ms ago,
  //     is claimed: alarm_status -1, alarm_time now; the job's last alarm is now.
  // Jobs another node is claiming at the same moment are skipped, not waited for: two nodes
  // claim disjoint sets of jobs, and a job is claimed at most once per quiet period (again only
  // after stale_ms, when the node that claimed it never finished). Jobs by id.
  virtual std::vector<AlarmClaim> claim(const ClaimRequest& request) = 0;

  // Records the outcome of the job's runs claimed at `claimed_at`: alarm_status 2 (sent) or 3
  // (failed), alarm_time `now`. Runs claimed again since (a stale claim taken over) are left to
  // their new claim. Returns the runs recorded.
  virtual int finish(std::int64_t job_id, std::int64_t claimed_at, AlarmOutcome outcome, std::int64_t now) = 0;

  // Executor clocks, in one transaction, over the registrations that exist (the registry's
  // refresh deletes dead ones):
  //  1. a registration whose clock estimate is within `bound_ms` (or that has none) has its
  //     alarm state cleared (0), so a later drift alarms again;
  //  2. at most `limit` registrations, by id, whose estimate is beyond `bound_ms` (|offset| >
  //     bound) and whose alarm is none, or claimed more than `stale_ms` ago by a node that never
  //     finished it, and for which a channel takes the alarms of a group of its app name, are
  //     claimed: clock_alarm_status -1 at `now`.
  // Registrations another node is claiming at the same moment are skipped, not waited for. One
  // without a channel is claimed once one is added, as long as its clock is still off.
  virtual std::vector<ClockAlarmClaim> claim_clock_alarms(std::int64_t now, std::int64_t bound_ms,
                                                          std::int64_t stale_ms, int limit) = 0;
  // Records the outcome of the clock alarm claimed at `claimed_at`: 2 sent, 3 failed. A claim
  // taken over since, or a registration gone or cleared since, is left as it is.
  virtual void finish_clock_alarm(std::int64_t registration_id, std::int64_t claimed_at, AlarmOutcome outcome) = 0;
};

}  // namespace cronwheel::admin
