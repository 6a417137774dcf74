#pragma once

// ScheduleStore (admin/model/schedule_store.h) over PostgreSQL.
//
// Beyond the interface's contract:
//  - The scan is three statements between BEGIN and COMMIT: the lock row, the pre-read (an index-only
//    scan of job_info_due), and one statement that updates every job read (UPDATE ... FROM
//    unnest(...) guarded by trigger_status = 1 and the next time read) and inserts the fires and
//    the records of skipped fires (one unnest, the state and message per row) of
//    the jobs it updated (INSERT ... SELECT ... JOIN the UPDATE's RETURNING, ON CONFLICT DO
//    NOTHING, RETURNING the new ids): no round trip per job or per fire.
//  - Statements are prepared on each new connection: call PgScheduleStore::prepare from the
//    Database's Preparer.
//
// Thread-safe: each call takes its own pooled connection.

#include <pqxx/pqxx>

#include "admin/model/schedule_store.h"
#include "admin/pg/database.h"

namespace cronwheel::admin {

class PgScheduleStore final : public ScheduleStore {
 public:
  explicit PgScheduleStore(Database& db) : db_(db) {}

  static void prepare(pqxx::connection& connection);

  ScanResult scan(std::string_view node, std::int64_t due_before, int limit, const Decide& decide) override;
  std::vector<PendingFireRow> pending(std::string_view node, std::int64_t due_before, int limit) override;
  std::vector<std::int64_t> cancel_pending(const std::vector<SkippedFire>& fires, std::string_view node,
                                           const FollowUpPlanner& plan) override;
  Takeover take_over(const std::vector<std::string>& dead_nodes, std::string_view node) override;
  bool resolve_sending(std::int64_t log_id, std::string_view node, Delivery delivery,
                       std::string_view message) override;

 private:
  Database& db_;
};

}  // namespace cronwheel::admin
