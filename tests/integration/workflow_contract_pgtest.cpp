// PgWorkflowStore under the workflow contract suite its fake also passes
// (tests/support/workflow_contract_tests.h), with the completion store ending node runs.

#include <gtest/gtest.h>

#include <pqxx/pqxx>

#include "admin/model/run_end.h"
#include "admin/pg/database.h"
#include "admin/pg/pg_completion_store.h"
#include "admin/pg/pg_stores.h"
#include "admin/pg/pg_workflow_store.h"
#include "tests/support/fake_clock.h"
#include "tests/support/migrated_database.h"
#include "tests/support/test_database.h"
#include "tests/support/workflow_contract_tests.h"

namespace cronwheel::testing {
namespace {

class PgWorkflowFixture {
 public:
  PgWorkflowFixture()
      : migrated_(migrate_schema(db_)),
        database_(pool_options(db_, 4), &prepare),
        stores_(database_, clock_),
        store_(database_, clock_),
        completion_(database_) {
    clock_.set_wall_ms(workflow_contract::kNow);
    admin::Group g;
    g.app_name = "wf-contract";
    g.title = "workflows";
    group_ = stores_.stores().groups.create(g, workflow_contract::kAuthor).id;
  }
  static void prepare(pqxx::connection& c) {
    admin::PgStores::prepare(c);
    admin::PgCompletionStore::prepare(c);
    admin::PgWorkflowStore::prepare(c);
  }

  admin::WorkflowStore& workflows() { return store_; }
  std::int64_t group() const { return group_; }
  std::int64_t job(const std::string& name) {
    admin::Job j;
    j.job_group = group_;
    j.name = name;
    j.job_desc = name;
    j.executor_handler = "echo";
    return stores_.stores().jobs.create(j, workflow_contract::kAuthor).id;
  }
  void sent(std::int64_t log_id) {
    database_.transact([&](pqxx::work& tx) {
      tx.exec_params("UPDATE job_log SET state = 'triggered', trigger_time = now(), trigger_code = 200 "
                     "WHERE id = $1 AND state = 'pending'",
                     log_id);
    });
  }
  std::vector<admin::JobLog> end(std::int64_t log_id, bool ok, const std::string& message,
                                 std::optional<std::string> output, std::int64_t now) {
    admin::RunResult r;
    r.log_id = log_id;
    r.state = ok ? admin::FireState::kSucceeded : admin::FireState::kFailed;
    r.handle_time = now;
    r.handle_code = ok ? 200 : 500;
    r.handle_msg = message;
    r.output = std::move(output);
    return completion_.record(r, admin::follow_ups_of(ok ? admin::RunEnd::kSucceeded : admin::RunEnd::kFailed, now, "node-a"))
        .fires;
  }
  std::optional<admin::JobLog> node_run(std::int64_t log_id) { return stores_.stores().logs.get(log_id); }
  std::int64_t calendar(const std::string& name) {
    return database_.transact([&](pqxx::work& tx) {
      return tx.exec_params1("INSERT INTO calendar (name) VALUES ($1) RETURNING id", name)[0].as<std::int64_t>();
    });
  }

 private:
  TestDatabase db_;
  bool migrated_;
  FakeClock clock_;
  admin::Database database_;
  admin::PgStores stores_;
  admin::PgWorkflowStore store_;
  admin::PgCompletionStore completion_;
  std::int64_t group_ = 0;
};

}  // namespace

namespace workflow_contract {
INSTANTIATE_TYPED_TEST_SUITE_P(Pg, WorkflowContract, PgWorkflowFixture);
}  // namespace workflow_contract

}  // namespace cronwheel::testing
