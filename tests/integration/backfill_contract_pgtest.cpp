// PgBackfillStore under the backfill contract suite its fake also passes
// (tests/support/backfill_contract_tests.h): runs written once per instant with two nodes
// pumping at once, steps of a backfill another transaction holds skipped, cancel.

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <pqxx/pqxx>

#include "admin/model/run_end.h"
#include "admin/pg/database.h"
#include "admin/pg/pg_backfill_store.h"
#include "admin/pg/pg_completion_store.h"
#include "admin/pg/pg_stores.h"
#include "admin/pg/pg_workflow_store.h"
#include "tests/support/backfill_contract_tests.h"
#include "tests/support/eventually.h"
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
  const std::string& database_url() const { return db_.url(); }
  // How many sessions of the test's database wait for a lock now (from a connection of its own).
  std::int64_t waiting_for_locks() {
    pqxx::connection c(db_.url());
    pqxx::nontransaction tx(c);
    return tx.exec1("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                    "AND wait_event_type = 'Lock'")[0]
        .as<std::int64_t>();
  }
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

// Deleting a job or a workflow (its row, then its backfills with it) while a step of its backfill
// holds the backfill's row: the step took the job's (workflow's) row first, so the deletion waits
// for the step instead of deadlocking with it. The deleting session is one that would not give up
// first (a long deadlock_timeout): had the step taken the rows the other way round, it would be
// the one rolled back, and asked to decide again.
TEST(PgBackfillDeletion, DeletingWhatABackfillRunsWaitsForItsStepInsteadOfDeadlocking) {
  PgBackfillFixture f;
  auto job_named = [&](const std::string& name) {
    admin::Job j;
    j.job_group = f.group();
    j.name = name;
    j.job_desc = name;
    j.schedule_type = admin::ScheduleType::kCron;
    j.schedule_conf = "0 0 * * * ?";
    j.executor_handler = "report";
    return f.stores().jobs.create(j, backfill_contract::kOperator).id;
  };
  const auto job = job_named("deleted");
  admin::Workflow w;
  w.job_group = f.group();
  w.name = "deleted-wf";
  w.schedule_type = admin::ScheduleType::kCron;
  w.schedule_conf = "0 0 * * * ?";
  w.graph.nodes = {{"only", job_named("node-job"), "", false, admin::NodeFailurePolicy::kFail}};
  const auto workflow = f.workflows().create(w, backfill_contract::kOperator).id;
  for (const bool of_workflow : {true, false}) {
    admin::Backfill b;
    if (of_workflow) {
      b.workflow_id = workflow;
      b.params = "{}";
    } else {
      b.job_id = job;
    }
    b.from = backfill_contract::kFrom;
    b.to = backfill_contract::kFrom + backfill_contract::kHour;
    b.total = 1;
    const auto backfill = f.backfills().create(b, backfill_contract::kOperator);
    std::mutex m;
    std::condition_variable cv;
    bool deciding = false;
    int decisions = 0;
    std::string failed;
    std::thread deleting;
    const auto stepped = f.backfills().step(
        backfill.id, "node-a", backfill_contract::kNow,
        [&](const admin::Backfill&, std::int64_t, const admin::BackfillStore::ExistingLookup&) {
          ++decisions;
          if (!deleting.joinable()) {
            deleting = std::thread([&] {
              {
                std::unique_lock lock(m);
                cv.wait(lock, [&] { return deciding; });
              }
              try {
                pqxx::connection c(f.database_url());
                pqxx::work tx(c);
                tx.exec("SET LOCAL deadlock_timeout = '60s'");
                tx.exec_params(of_workflow ? "DELETE FROM workflow WHERE id = $1" : "DELETE FROM job_info WHERE id = $1",
                               of_workflow ? workflow : job);
                tx.commit();
              } catch (const std::exception& e) {
                failed = e.what();
              }
            });
            std::lock_guard lock(m);
            deciding = true;
            cv.notify_all();
          }
          // The deletion waits for a lock the step holds.
          EXPECT_TRUE(eventually([&] { return f.waiting_for_locks() > 0; }, std::chrono::seconds(20)));
          admin::BackfillStep step;
          step.write = {backfill_contract::kFrom};
          step.cursor = backfill_contract::kFrom;
          return step;
        });
    deleting.join();
    const std::string what = of_workflow ? "workflow" : "job";
    EXPECT_TRUE(stepped.stepped) << what;
    EXPECT_EQ(decisions, 1) << what << ": the step's transaction ran once, no deadlock rolled it back";
    EXPECT_EQ(stepped.fires.size(), 1u) << what;
    EXPECT_EQ(failed, "") << what;
    EXPECT_EQ(f.backfills().get(backfill.id), std::nullopt) << what << ": deleted with it, after the step";
  }
}

}  // namespace

namespace backfill_contract {
INSTANTIATE_TYPED_TEST_SUITE_P(Pg, BackfillContract, PgBackfillFixture);
}  // namespace backfill_contract

}  // namespace cronwheel::testing
