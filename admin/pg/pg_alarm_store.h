#pragma once

// AlarmStore (admin/model/alarm_store.h) over PostgreSQL: job_log's alarm_status and
// alarm_time, read through the job_log_alarm index of undecided and claimed runs, and the
// job_alarm row of each job, which a claim holds locked (FOR UPDATE SKIP LOCKED) so that two
// nodes never claim the same job at once. Statements are prepared on each new connection: call
// PgAlarmStore::prepare from the Database's Preparer. Thread-safe.
//
// It keeps the alarm channels too (admin/model/alarm_channel_store.h, table alarm_channel): a
// claim reads the channels of the jobs it claims in its own transaction. Executors' clock alarms
// live on their registrations (job_registry's clock_alarm_status and clock_alarm_time), locked
// the same way while claimed.

#include <pqxx/pqxx>

#include "admin/model/alarm_store.h"
#include "admin/pg/database.h"
#include "common/util/clock.h"

namespace cronwheel::admin {

class PgAlarmStore final : public AlarmStore, public AlarmChannelStore {
 public:
  // `clock` stamps the channels' changes and their audit entries.
  PgAlarmStore(Database& db, common::Clock& clock) : db_(db), clock_(clock) {}

  static void prepare(pqxx::connection& connection);

  std::vector<AlarmClaim> claim(const ClaimRequest& request) override;
  int finish(std::int64_t job_id, std::int64_t claimed_at, AlarmOutcome outcome, std::int64_t now) override;
  std::vector<ClockAlarmClaim> claim_clock_alarms(std::int64_t now, std::int64_t bound_ms, std::int64_t stale_ms,
                                                  int limit) override;
  void finish_clock_alarm(std::int64_t registration_id, std::int64_t claimed_at, AlarmOutcome outcome) override;

  std::vector<AlarmChannel> list_channels() override;
  std::optional<AlarmChannel> get_channel(std::int64_t id) override;
  AlarmChannel create_channel(const AlarmChannel& channel, const Actor& actor) override;
  AlarmChannel update_channel(const AlarmChannel& channel, const Actor& actor) override;
  void remove_channel(std::int64_t id, const Actor& actor) override;

 private:
  Database& db_;
  common::Clock& clock_;
};

}  // namespace cronwheel::admin
