#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "admin/pg/database.h"
#include "admin/model/trigger_store.h"
#include "common/util/group_commit.h"

namespace cronwheel::admin {

// TriggerStore over PostgreSQL. The statements are prepared on each new connection by
// prepare(), which the Database's Preparer must call (next to PgStores::prepare).
//
// The three calls every fire makes — load_pending, claim (of one executor) and
// record_triggered — are group-committed (common::GroupCommit): the calls the trigger threads
// make while one batch of them is in the database go together into the next, one statement and
// one transaction for the batch, each row still moved only by its own guard. So under load the
// database sees a few round trips at a time, not one per fire and thread, and a lone call waits
// for nothing. The rest (a broadcast's claim, release, failures) are one transaction each.
//
// Thread-safe; a batch takes one pooled connection, and at most Options::max_in_flight batches
// of each kind run at once.
class PgTriggerStore final : public TriggerStore {
 public:
  struct Options {
    std::size_t max_batch = 1'000;
    std::size_t max_in_flight = 1;
  };
  explicit PgTriggerStore(Database& db) : PgTriggerStore(db, Options{}) {}
  PgTriggerStore(Database& db, Options options);

  // Registers the statements this store uses on a new connection.
  static void prepare(pqxx::connection& connection);

  std::optional<LoadedFire> load_pending(std::int64_t log_id, std::string_view node_id) override;
  Claimed claim(const Claim& claim) override;
  // Straight to the database in one statement each, not through the groups.
  std::vector<std::optional<LoadedFire>> load_pending_all(const std::vector<std::int64_t>& log_ids,
                                                          std::string_view node_id) override;
  std::vector<Claimed> claim_all(const std::vector<Claim>& claims) override;
  bool release_claim(std::int64_t log_id, std::string_view node_id, const std::string& note) override;
  bool move_claim(std::int64_t log_id, std::string_view node_id, const std::string& from, const std::string& to,
                  const std::string& note) override;
  Recorded record_triggered(std::int64_t log_id, std::string_view node_id, const std::string& trigger_msg) override;
  std::vector<Recorded> record_triggered_all(const std::vector<Accepted>& accepted) override;
  Recorded record_unconfirmed(std::int64_t log_id, std::string_view node_id, const std::string& trigger_msg) override;
  Failed record_failed(const Failure& failure, const FollowUpPlanner& plan) override;
  bool wait_for_slot(std::int64_t log_id, std::string_view node_id, const std::string& note) override;
  std::map<std::int64_t, std::int64_t> waiting_by_group() override;
  std::optional<std::vector<PendingFire>> admit(std::int64_t group_id, std::string_view node_id,
                                                std::size_t max_candidates, const ChooseAdmitted& choose) override;

  // Batches the loads and the claims were written in so far, and the calls in them.
  struct BatchStats {
    std::size_t batches = 0;
    std::size_t calls = 0;
  };
  BatchStats load_stats() const { return {loads_.batches(), loads_.requests()}; }
  BatchStats claim_stats() const { return {claims_.batches(), claims_.requests()}; }

 private:
  struct Load {
    std::int64_t log_id = 0;
    std::string node_id;
  };
  struct Triggered {
    std::int64_t log_id = 0;
    std::string node_id;
    std::string trigger_msg;
    int trigger_code = 200;  // 500 for record_unconfirmed()
  };
  std::vector<std::optional<LoadedFire>> load_all(const std::vector<Load>& loads);
  std::vector<Recorded> record_all_triggered(const std::vector<Triggered>& answers);

  Database& db_;
  common::GroupCommit<Load, std::optional<LoadedFire>> loads_;
  common::GroupCommit<Claim, Claimed> claims_;
  common::GroupCommit<Triggered, Recorded> triggered_;
};

}  // namespace cronwheel::admin
