// PgRetentionStore on a fresh PostgreSQL database: the retention contract suite, then what only
// a real database shows: a node skips the rows another is deleting instead of waiting for them.
#include <gtest/gtest.h>

#include <pqxx/pqxx>

#include "admin/pg/database.h"
#include "admin/pg/pg_retention_store.h"
#include "admin/pg/pg_store_support.h"
#include "tests/support/migrated_database.h"
#include "tests/support/retention_contract_tests.h"
#include "tests/support/test_database.h"

namespace cronwheel::testing {
namespace {

class PgRetentionFixture {
 public:
  PgRetentionFixture()
      : migrated_(migrate_schema(db_)), database_(pool_options(db_, 2), &admin::PgRetentionStore::prepare),
        store_(database_) {
    database_.transact([&](pqxx::work& tx) {
      group_ = tx.exec1("INSERT INTO job_group (app_name, title) VALUES ('keep-app', 'Retention') RETURNING id")[0]
                   .as<std::int64_t>();
      job_ = tx.exec_params1("INSERT INTO job_info (job_group, job_desc, schedule_type, executor_handler) "
                             "VALUES ($1, 'kept', 'NONE', 'report') RETURNING id",
                             group_)[0]
                 .as<std::int64_t>();
    });
  }

  admin::RetentionStore& retention() { return store_; }
  const TestDatabase& test_database() const { return db_; }

  admin::JobLog put_run(admin::JobLog l) {
    l.job_group = group_;
    l.job_id = job_;
    l.id = database_.transact([&](pqxx::work& tx) {
      return tx
          .exec_params1("INSERT INTO job_log (job_group, job_id, state, trigger_type, scheduled_time, admin_node, "
                        "executor_handler, trigger_time, trigger_code, handle_time, handle_code, alarm_status) "
                        "VALUES ($1, $2, $3, $4, $5, $6, $7, " + admin::pg::ts("$8") + ", $9, " +
                            admin::pg::ts("$10") + ", $11, $12) RETURNING id",
                        l.job_group, l.job_id, admin::pg::text(l.state), admin::pg::text(l.trigger_type),
                        l.scheduled_time, l.admin_node, l.executor_handler, l.trigger_time, l.trigger_code,
                        l.handle_time, l.handle_code, l.alarm_status)[0]
          .as<std::int64_t>();
    });
    return l;
  }
  bool exists(std::int64_t id) {
    return database_.read([&](pqxx::read_transaction& tx) {
      return tx.exec_params1("SELECT count(*) FROM job_log WHERE id = $1", id)[0].as<int>() == 1;
    });
  }
  std::int64_t put_workflow_run(admin::WorkflowRunState state, std::int64_t scheduled_time, int alarm_status) {
    return database_.transact([&](pqxx::work& tx) {
      if (workflow_ == 0) {
        workflow_ = tx.exec_params1("INSERT INTO workflow (job_group, name, graph) VALUES ($1, 'kept', "
                                    "'{\"nodes\":[],\"edges\":[]}') RETURNING id",
                                    group_)[0]
                        .as<std::int64_t>();
      }
      const std::int64_t id =
          tx.exec_params1("INSERT INTO workflow_run (workflow_id, job_group, state, trigger_type, scheduled_time, graph, "
                          "alarm_status) VALUES ($1, $2, $3, 'MANUAL', $4, '{\"nodes\":[],\"edges\":[]}', $5) RETURNING id",
                          workflow_, group_, std::string(admin::to_string(state)), scheduled_time, alarm_status)[0]
              .as<std::int64_t>();
      tx.exec_params("INSERT INTO workflow_run_node (run_id, node_key, job_id, state) VALUES ($1, 'a', $2, 'succeeded')",
                     id, job_);
      return id;
    });
  }
  bool workflow_run_exists(std::int64_t id) {
    return database_.read([&](pqxx::read_transaction& tx) {
      return tx.exec_params1("SELECT count(*) FROM workflow_run WHERE id = $1", id)[0].as<int>() +
                 tx.exec_params1("SELECT count(*) FROM workflow_run_node WHERE run_id = $1", id)[0].as<int>() ==
             2;
    });
  }

 private:
  TestDatabase db_;
  bool migrated_;
  admin::Database database_;
  admin::PgRetentionStore store_;
  std::int64_t group_ = 0;
  std::int64_t job_ = 0;
  std::int64_t workflow_ = 0;
};

}  // namespace

namespace retention_contract {
INSTANTIATE_TYPED_TEST_SUITE_P(Pg, RetentionContract, PgRetentionFixture);
}  // namespace retention_contract

namespace {

using retention_contract::kCutoff;

class PgRetentionTest : public retention_contract::RetentionContract<PgRetentionFixture> {};

// Another node in the middle of deleting holds its rows: this node deletes the others, at once.
TEST_F(PgRetentionTest, RowsAnotherNodeIsDeletingAreSkippedNotWaitedFor) {
  auto busy = run(admin::FireState::kSucceeded, kCutoff - 100);
  auto free = run(admin::FireState::kSucceeded, kCutoff - 50);
  pqxx::connection other(f_.test_database().url());
  pqxx::work holding(other);
  holding.exec_params("SELECT 1 FROM job_log_finished WHERE id = $1 FOR UPDATE", busy.id);

  EXPECT_EQ(f_.retention().delete_runs_before(kCutoff, 10), 1);
  EXPECT_FALSE(f_.exists(free.id));
  holding.exec_params("DELETE FROM job_log_finished WHERE id = $1", busy.id);
  holding.commit();
  EXPECT_FALSE(f_.exists(busy.id));
}

}  // namespace
}  // namespace cronwheel::testing
