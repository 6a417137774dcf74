// PgBackfillStore under the backfill contract suite its fake also passes
// (tests/support/backfill_contract_tests.h): runs written once per instant with two nodes
// pumping at once, steps of a backfill another transaction holds skipped, cancel.

#include <gtest/gtest.h>

#include <pqxx/pqxx>

#include "admin/model/run_end.h"
#include "admin/pg/database.h"
#include "admin/pg/pg_backfill_store.h"
#include "admin/pg/pg_completion_store.h"
#include "admin/pg/pg_stores.h"
#include "admin/pg/pg_workflow_store.h"
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
        store_(database_, clock_),
        workflows_(database_, clock_),
        completion_(database_) {
    clock_.set_wall_ms(backfill_contract::kNow);
    admin::Group g;
    g.app_name = "backfill-contract";
    g.title = "backfills";
    group_ = stores_.stores().groups.create(g, backfill_contract::kOperator).id;
  }
  static void prepare(pqxx::connection& c) {
    admin::PgStores::prepare(c);
    admin::PgBackfillStore::prepare(c);
    admin::PgCompletionStore::prepare(c);
    admin::PgWorkflowStore::prepare(c);
  }

  admin::BackfillStore& backfills() { return store_; }
  admin::PgCompletionStore& completion() { return completion_; }
  admin::Stores stores() { return stores_.stores(); }
  admin::WorkflowStore& workflows() { return workflows_; }
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
  admin::PgWorkflowStore workflows_;
  admin::PgCompletionStore completion_;
  std::int64_t group_ = 0;
};

// What the completion writes when a backfill's run fails (pg_follow_ups.h): its retry belongs to
// the backfill, so it counts as unfinished and the backfill is not done before it ends, and it
// keeps the run's logical time (the instant), the logDateTime it is sent with.
TEST(PgBackfillRetries, ARetryOfABackfillsFailedRunBelongsToTheBackfillAndStandsForItsInstant) {
  PgBackfillFixture f;
  admin::Job j;
  j.job_group = f.group();
  j.name = "retried";
  j.job_desc = "retried";
  j.schedule_type = admin::ScheduleType::kCron;
  j.schedule_conf = "0 0 * * * ?";
  j.executor_handler = "report";
  j.executor_fail_retry_count = 1;
  const auto job = f.stores().jobs.create(j, backfill_contract::kOperator).id;
  admin::Backfill b;
  b.job_id = job;
  b.from = backfill_contract::kFrom;
  b.to = backfill_contract::kFrom + backfill_contract::kHour;
  b.total = 1;
  const auto backfill = f.backfills().create(b, backfill_contract::kOperator);
  const auto written = f.backfills().step(backfill.id, "node-a", backfill_contract::kNow,
                                          [](const admin::Backfill&, std::int64_t, const admin::BackfillStore::ExistingLookup&) {
                                            admin::BackfillStep step;
                                            step.write = {backfill_contract::kFrom};
                                            step.cursor = backfill_contract::kFrom;
                                            return step;
                                          });
  ASSERT_EQ(written.fires.size(), 1u);
  f.move(written.fires[0].id, admin::FireState::kTriggered);
  admin::RunResult failed;
  failed.log_id = written.fires[0].id;
  failed.state = admin::FireState::kFailed;
  failed.handle_time = backfill_contract::kNow;
  failed.handle_code = 500;
  failed.handle_msg = "no data for that day";
  const auto recorded =
      f.completion().record(failed, admin::follow_ups_of(admin::RunEnd::kFailed, backfill_contract::kNow, "node-a"));
  ASSERT_EQ(recorded.fires.size(), 1u);
  EXPECT_EQ(recorded.fires[0].trigger_type, admin::TriggerType::kRetry);
  EXPECT_EQ(recorded.fires[0].backfill_id, backfill.id);
  EXPECT_EQ(f.stores().logs.get(recorded.fires[0].id)->backfill_id, backfill.id) << "as stored";
  // Sent with the historical instant as its logDateTime, though due now.
  EXPECT_EQ(written.fires[0].logical_time, backfill_contract::kFrom);
  EXPECT_GE(recorded.fires[0].scheduled_time, backfill_contract::kNow);
  EXPECT_EQ(recorded.fires[0].logical_time, backfill_contract::kFrom);
  EXPECT_EQ(admin::log_date_time(*f.stores().logs.get(recorded.fires[0].id)), backfill_contract::kFrom) << "as stored";
  std::int64_t unfinished = -1;
  f.backfills().step(backfill.id, "node-a", backfill_contract::kNow,
                     [&](const admin::Backfill& read, std::int64_t n, const admin::BackfillStore::ExistingLookup& existing) {
                       unfinished = n;
                       return admin::plan_backfill_step(read, {{}, true}, existing({}), n);
                     });
  EXPECT_EQ(unfinished, 1) << "the retry is the backfill's, unfinished";
  EXPECT_EQ(f.backfills().get(backfill.id)->state, admin::BackfillState::kRunning) << "not done before its retry ends";
}

}  // namespace

namespace backfill_contract {
INSTANTIATE_TYPED_TEST_SUITE_P(Pg, BackfillContract, PgBackfillFixture);
}  // namespace backfill_contract

}  // namespace cronwheel::testing
