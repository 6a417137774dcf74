// PgBackfillStore under the backfill contract suite its fake also passes
// (tests/support/backfill_contract_tests.h): runs written once per instant with two nodes
// pumping at once, steps of a backfill another transaction holds skipped, cancel.

#include <gtest/gtest.h>

#include <pqxx/pqxx>

#include "admin/pg/database.h"
#include "admin/pg/pg_backfill_store.h"
#include "admin/pg/pg_stores.h"
#include "tests/support/backfill_contract_tests.h"
#include "tests/support/fake_clock.h"
#include "tests/support/migrated_database.h"
#include "tests/support/test_database.h"

namespace cronwheel::testing {
namespace {

class PgBackfillFixture {
 public:
  PgBackfillFixture()
      : migrated_(migrate_schema(db_)),
        database_(pool_options(db_, 6), &prepare),
        stores_(database_, clock_),
        store_(database_, clock_) {
    clock_.set_wall_ms(backfill_contract::kNow);
    admin::Group g;
    g.app_name = "backfill-contract";
    g.title = "backfills";
    group_ = stores_.stores().groups.create(g, backfill_contract::kOperator).id;
  }
  static void prepare(pqxx::connection& c) {
    admin::PgStores::prepare(c);
    admin::PgBackfillStore::prepare(c);
  }

  admin::BackfillStore& backfills() { return store_; }
  admin::Stores stores() { return stores_.stores(); }
  std::int64_t group() const { return group_; }
  admin::JobLog put_run(const admin::JobLog& run) {
    return database_.transact([&](pqxx::work& tx) {
      const bool sent = run.state != admin::FireState::kPending && run.state != admin::FireState::kCancelled;
      const auto id = tx.exec_params1(
                            "INSERT INTO job_log (job_group, job_id, state, trigger_type, scheduled_time, admin_node, "
                            "executor_handler, backfill_id, trigger_time) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, "
                            "CASE WHEN $9 THEN now() END) RETURNING id",
                            run.job_group, run.job_id, std::string(to_string(run.state)),
                            std::string(to_string(run.trigger_type)), run.scheduled_time, run.admin_node,
                            run.executor_handler, run.backfill_id, sent)[0]
                          .as<std::int64_t>();
      admin::JobLog out = run;
      out.id = id;
      return out;
    });
  }
  void move(std::int64_t log_id, admin::FireState state) {
    database_.transact([&](pqxx::work& tx) {
      tx.exec_params("UPDATE job_log SET state = $2::text, trigger_time = CASE WHEN $2::text IN ('pending', 'cancelled') "
                     "THEN trigger_time ELSE COALESCE(trigger_time, now()) END WHERE id = $1",
                     log_id, std::string(to_string(state)));
    });
  }

 private:
  TestDatabase db_;
  bool migrated_;
  FakeClock clock_;
  admin::Database database_;
  admin::PgStores stores_;
  admin::PgBackfillStore store_;
  std::int64_t group_ = 0;
};

}  // namespace

namespace backfill_contract {
INSTANTIATE_TYPED_TEST_SUITE_P(Pg, BackfillContract, PgBackfillFixture);
}  // namespace backfill_contract

}  // namespace cronwheel::testing
