#pragma once

#include <pqxx/pqxx>

#include "admin/model/completion_store.h"
#include "admin/pg/database.h"

namespace cronwheel::admin {

// CompletionStore over PostgreSQL (job_log, job_info, job_registry).
//
// How record() makes a result count once: the transition is one
//   UPDATE job_log SET state = <result> ... WHERE id = $1 AND state IN ('triggered', 'sending')
// in READ COMMITTED. Of two concurrent results for one run, the second waits for the first's
// row lock, re-reads the row when the first commits, no longer matches and changes nothing; the
// follow-ups are written only by the transaction whose UPDATE matched. Child jobs are read
// FOR KEY SHARE, so a child deleted at the same time cannot break the new fire's foreign key.
//
// Thread-safe: each call takes its own pooled connection. Register prepare() on the Database.
class PgCompletionStore final : public CompletionStore {
 public:
  explicit PgCompletionStore(Database& db) : db_(db) {}

  Recorded record(const RunResult& result, const Decide& decide) override;
  std::vector<Recorded> record_all(const std::vector<RunResult>& results, const Decide& decide) override;
  std::vector<JobLog> lost_candidates(std::int64_t triggered_before, std::int64_t dead_after_ms, int limit) override;
  bool cancel_not_started(std::int64_t log_id, const std::string& note) override;
  bool return_not_started(std::int64_t log_id, const std::string& node_id, const std::string& note) override;
  std::vector<JobLog> held_runs(std::int64_t job_id, std::int64_t now, int limit) override;
  std::vector<JobLog> triggered_runs(std::int64_t triggered_before, const std::optional<RunCursor>& after,
                                     int limit) override;

  // Registers the statements above on a new connection (part of the Database's Preparer).
  static void prepare(pqxx::connection& connection);

 private:
  Database& db_;
};

}  // namespace cronwheel::admin
