#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "admin/pg/database.h"
#include "admin/pg/pg_completion_store.h"
#include "admin/pg/pg_schedule_store.h"
#include "admin/pg/pg_store_support.h"
#include "admin/pg/pg_stores.h"
#include "admin/pg/pg_trigger_store.h"
#include "tests/support/fake_clock.h"
#include "tests/support/scheduling_contract_tests.h"
#include "tests/support/migrated_database.h"
#include "tests/support/test_database.h"

namespace cronwheel::testing {
namespace {

using scheduling_contract::Port;

void prepare_all(pqxx::connection& c) {
  admin::PgStores::prepare(c);
  admin::PgScheduleStore::prepare(c);
  admin::PgTriggerStore::prepare(c);
  admin::PgCompletionStore::prepare(c);
}

// The scheduling ports' PostgreSQL stores on a fresh, migrated database, under the contract
// suite. Every port sees the same rows.
class PgSchedulingFixture {
 public:
  PgSchedulingFixture()
      : migrated_(migrate_schema(db_)), database_(pool_options(db_, 4), &prepare_all), stores_(database_, clock_), schedule_(database_),
        trigger_(database_), completion_(database_) {}

  admin::ScheduleStore& schedule() { return schedule_; }
  admin::TriggerStore& trigger() { return trigger_; }
  admin::CompletionStore& completion() { return completion_; }

  admin::Group put_group(const admin::Group& group) { return stores_.groups().create(group, system()); }
  // Created through the job store, then its running state written as the scheduler leaves it.
  admin::Job put_job(const admin::Job& job) {
    auto created = stores_.jobs().create(job, system());
    database_.transact([&](pqxx::work& tx) {
      tx.exec_params("UPDATE job_schedule SET trigger_status = $2, trigger_last_time = $3, trigger_next_time = $4 "
                     "WHERE job_id = $1",
                     created.id, job.trigger_status, job.trigger_last_time, job.trigger_next_time);
    });
    return *stores_.jobs().get(created.id);
  }
  // Writes the row the way the scheduling core would, every column as given.
  admin::JobLog put_log(const admin::JobLog& l) {
    auto id = database_.transact([&](pqxx::work& tx) {
      return tx
          .exec_params1(
              "INSERT INTO job_log (job_group, job_id, state, trigger_type, scheduled_time, admin_node, "
              "executor_address, executor_handler, executor_param, shard_index, shard_total, "
              "executor_fail_retry_count, parent_log_id, trigger_time, trigger_code, trigger_msg, handle_time, "
              "handle_code, handle_msg, alarm_status) SELECT job_group, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, "
              "$11, $12, " + admin::pg::ts("$13") + ", $14, $15, " + admin::pg::ts("$16") + ", $17, $18, $19 "
              "FROM job_info WHERE id = $1 RETURNING id",
              l.job_id, admin::pg::text(l.state), admin::pg::text(l.trigger_type), l.scheduled_time, l.admin_node, l.executor_address,
              l.executor_handler, l.executor_param, l.shard_index, l.shard_total, l.executor_fail_retry_count,
              l.parent_log_id, l.trigger_time, l.trigger_code, l.trigger_msg, l.handle_time, l.handle_code,
              l.handle_msg, l.alarm_status)[0]
          .as<std::int64_t>();
    });
    return log(Port::kSchedule, id);
  }

  admin::JobLog log(Port, std::int64_t id) { return stores_.logs().get(id).value(); }
  std::vector<admin::JobLog> logs(Port port) {
    auto ids = database_.read([&](pqxx::read_transaction& tx) {
      std::vector<std::int64_t> out;
      for (const auto& row : tx.exec("SELECT id FROM job_log ORDER BY id")) out.push_back(row[0].as<std::int64_t>());
      return out;
    });
    std::vector<admin::JobLog> out;
    for (auto id : ids) out.push_back(log(port, id));
    return out;
  }
  admin::Job job(Port, std::int64_t id) { return stores_.jobs().get(id).value(); }

  void put_registration(const std::string& address, std::int64_t age_ms) {
    database_.transact([&](pqxx::work& tx) {
      tx.exec_params("INSERT INTO job_registry (registry_group, registry_key, registry_value, updated_at) "
                     "VALUES ('EXECUTOR', 'contract-app', $1, now() - $2::bigint * interval '1 millisecond')",
                     address, age_ms);
    });
  }
  void put_lease(const std::string& node, std::int64_t left_ms) {
    database_.transact([&](pqxx::work& tx) {
      tx.exec_params("INSERT INTO admin_node (node_id, address, version, started_at, heartbeat_at, lease_until) "
                     "VALUES ($1, 'http://127.0.0.1:8080', 'test', now(), now(), "
                     "now() + $2::bigint * interval '1 millisecond')",
                     node, left_ms);
    });
  }

 private:
  static admin::Actor system() { return admin::Actor{std::nullopt, "system", ""}; }

  TestDatabase db_;
  bool migrated_;
  FakeClock clock_;
  admin::Database database_;
  admin::PgStores stores_;
  admin::PgScheduleStore schedule_;
  admin::PgTriggerStore trigger_;
  admin::PgCompletionStore completion_;
};

}  // namespace

namespace scheduling_contract {
INSTANTIATE_TYPED_TEST_SUITE_P(Pg, SchedulingContract, PgSchedulingFixture);
}  // namespace scheduling_contract

}  // namespace cronwheel::testing
