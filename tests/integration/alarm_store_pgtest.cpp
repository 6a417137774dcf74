// PgAlarmStore on a fresh PostgreSQL database: the alarm contract suite, then what only a real
// database shows: two nodes claiming at once, and the upgrade that leaves old failures unalarmed.
#include <gtest/gtest.h>

#include <set>
#include <thread>

#include <pqxx/pqxx>

#include "admin/pg/database.h"
#include "admin/pg/migrations.h"
#include "admin/pg/migrator.h"
#include "admin/pg/pg_alarm_store.h"
#include "admin/pg/pg_store_support.h"
#include "tests/support/alarm_contract_tests.h"
#include "tests/support/fake_clock.h"
#include "tests/support/migrated_database.h"
#include "tests/support/test_database.h"

namespace cronwheel::testing {
namespace {

class PgAlarmFixture {
 public:
  PgAlarmFixture()
      : migrated_(migrate_schema(db_)), database_(pool_options(db_, 2), &prepare), store_(database_, clock_) {
    group_ = database_.transact([](pqxx::work& tx) {
      return tx.exec1("INSERT INTO job_group (app_name, title) VALUES ('alarm-app', 'Alarms') RETURNING id")[0]
          .as<std::int64_t>();
    });
  }

  static void prepare(pqxx::connection& c) {
    admin::PgAlarmStore::prepare(c);
    admin::pg::prepare_audit(c);
  }

  admin::AlarmStore& alarms() { return store_; }
  admin::AlarmChannelStore& channels() { return store_; }
  void remove_job(std::int64_t id) {
    database_.transact([&](pqxx::work& tx) { tx.exec_params("DELETE FROM job_info WHERE id = $1", id); });
  }
  admin::Database& database() { return database_; }
  const TestDatabase& test_database() const { return db_; }

  admin::Job put_job(admin::Job j) {
    j.job_group = group_;
    j.id = database_.transact([&](pqxx::work& tx) {
      return tx
          .exec_params1("INSERT INTO job_info (job_group, job_desc, schedule_type, schedule_conf, executor_handler, "
                        "alarm_email) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
                        j.job_group, j.job_desc, admin::pg::text(j.schedule_type), j.schedule_conf,
                        j.executor_handler, j.alarm_email)[0]
          .as<std::int64_t>();
    });
    return j;
  }
  admin::JobLog put_log(admin::JobLog l) {
    l.id = database_.transact([&](pqxx::work& tx) {
      return tx
          .exec_params1(
              "INSERT INTO job_log (job_group, job_id, state, trigger_type, scheduled_time, admin_node, "
              "executor_address, executor_handler, executor_param, executor_fail_retry_count, trigger_time, "
              "trigger_code, trigger_msg, handle_time, handle_code, handle_msg, alarm_status) VALUES ($1, $2, $3, $4, "
              "$5, $6, $7, $8, $9, $10, " + admin::pg::ts("$11") + ", $12, $13, " + admin::pg::ts("$14") +
                  ", $15, $16, $17) RETURNING id",
              l.job_group, l.job_id, admin::pg::text(l.state), admin::pg::text(l.trigger_type), l.scheduled_time,
              l.admin_node, l.executor_address, l.executor_handler, l.executor_param, l.executor_fail_retry_count,
              l.trigger_time, l.trigger_code, l.trigger_msg, l.handle_time, l.handle_code, l.handle_msg, l.alarm_status)[0]
          .as<std::int64_t>();
    });
    return l;
  }
  int alarm_status(std::int64_t run_id) {
    return database_.read([&](pqxx::read_transaction& tx) {
      return tx.exec_params1("SELECT alarm_status FROM job_log WHERE id = $1", run_id)[0].as<int>();
    });
  }
  void set_alarm(std::int64_t run_id, int status, std::int64_t alarm_time) {
    database_.transact([&](pqxx::work& tx) {
      tx.exec_params("UPDATE job_log SET alarm_status = $2, alarm_time = $3 WHERE id = $1", run_id, status, alarm_time);
    });
  }
  std::int64_t put_registration(std::string app_name, std::string address, std::optional<std::int64_t> offset_ms,
                                std::int64_t delay_ms) {
    return database_.transact([&](pqxx::work& tx) {
      return tx
          .exec_params1("INSERT INTO job_registry (registry_group, registry_key, registry_value, clock_offset_ms, "
                        "clock_delay_ms) VALUES ('EXECUTOR', $1, $2, $3, $4) RETURNING id",
                        app_name, address, offset_ms, offset_ms ? std::optional<std::int64_t>(delay_ms) : std::nullopt)[0]
          .as<std::int64_t>();
    });
  }
  void set_clock_offset(std::int64_t id, std::optional<std::int64_t> offset_ms) {
    database_.transact([&](pqxx::work& tx) {
      tx.exec_params("UPDATE job_registry SET clock_offset_ms = $2 WHERE id = $1", id, offset_ms);
    });
  }
  int clock_alarm_status(std::int64_t id) {
    return database_.read([&](pqxx::read_transaction& tx) {
      return tx.exec_params1("SELECT clock_alarm_status FROM job_registry WHERE id = $1", id)[0].as<int>();
    });
  }

 private:

  TestDatabase db_;
  FakeClock clock_{1'800'000'000'000};
  bool migrated_;
  admin::Database database_;
  admin::PgAlarmStore store_;
  std::int64_t group_ = 0;
};

}  // namespace

namespace alarm_contract {
INSTANTIATE_TYPED_TEST_SUITE_P(Pg, AlarmContract, PgAlarmFixture);
}  // namespace alarm_contract

namespace {

using alarm_contract::kNow;
using alarm_contract::request;

class PgAlarmStoreTest : public alarm_contract::AlarmContract<PgAlarmFixture> {};

// Another node in the middle of its claim holds the job's job_alarm row: this node claims the
// other jobs and leaves that one alone, without waiting for it.
TEST_F(PgAlarmStoreTest, AJobAnotherNodeIsClaimingIsSkippedNotWaitedFor) {
  auto busy = job();
  auto free = job();
  auto busy_run = run(busy, admin::FireState::kFailed);
  auto free_run = run(free, admin::FireState::kFailed);
  pqxx::connection other(f_.test_database().url());
  pqxx::work holding(other);
  holding.exec_params("SELECT 1 FROM job_alarm WHERE job_id = $1 FOR UPDATE", busy.id);  // until commit

  auto claims = f_.alarms().claim(request());
  ASSERT_EQ(claims.size(), 1u);
  EXPECT_EQ(claims[0].job.id, free.id);
  EXPECT_EQ(f_.alarm_status(free_run.id), admin::kAlarmClaimed);
  EXPECT_EQ(f_.alarm_status(busy_run.id), admin::kAlarmUndecided);
  // As if the other node claimed it: it is in its quiet period now.
  holding.exec_params("UPDATE job_alarm SET last_sent_at = $2 WHERE job_id = $1", busy.id, kNow);
  holding.commit();
  EXPECT_TRUE(f_.alarms().claim(request(kNow + 1)).empty());
}

// Another node in the middle of claiming an executor's clock alarm holds its registration: this
// node claims the others and leaves that one alone, without waiting for it.
TEST_F(PgAlarmStoreTest, AClockAlarmAnotherNodeIsClaimingIsSkippedNotWaitedFor) {
  auto j = job();
  channel("ops", {j.job_group}, {});
  const auto busy = f_.put_registration("alarm-app", "http://10.0.0.5:9999/", 5'000, 1);
  const auto free = f_.put_registration("alarm-app", "http://10.0.0.6:9999/", 5'000, 1);
  pqxx::connection other(f_.test_database().url());
  pqxx::work holding(other);
  holding.exec_params("SELECT 1 FROM job_registry WHERE id = $1 FOR UPDATE", busy);  // until commit

  auto claims = f_.alarms().claim_clock_alarms(kNow, 1'000, alarm_contract::kStale, 100);
  ASSERT_EQ(claims.size(), 1u);
  EXPECT_EQ(claims[0].registration_id, free);
  EXPECT_EQ(f_.clock_alarm_status(busy), 0);
  holding.commit();
  EXPECT_EQ(f_.alarms().claim_clock_alarms(kNow + 1, 1'000, alarm_contract::kStale, 100).size(), 1u);
  EXPECT_EQ(f_.clock_alarm_status(busy), admin::kAlarmClaimed);
}

// Two nodes claiming at the same moment, over and over: every run is claimed exactly once.
TEST_F(PgAlarmStoreTest, TwoNodesClaimingTogetherClaimEachRunOnce) {
  std::vector<std::int64_t> all;
  for (int j = 0; j < 20; ++j) {
    auto jb = job();
    for (int r = 0; r < 3; ++r) all.push_back(run(jb, admin::FireState::kFailed).id);
  }
  admin::Database second_db(pool_options(f_.test_database(), 1), &admin::PgAlarmStore::prepare);
  admin::PgAlarmStore second(second_db, common::SystemClock::instance());
  std::vector<admin::AlarmClaim> a, b;
  auto r = request();
  r.max_jobs = 3;
  std::thread other([&] {
    for (int i = 0; i < 10; ++i) {
      auto got = second.claim(r);
      b.insert(b.end(), got.begin(), got.end());
    }
  });
  for (int i = 0; i < 10; ++i) {
    auto got = f_.alarms().claim(r);
    a.insert(a.end(), got.begin(), got.end());
  }
  other.join();
  std::multiset<std::int64_t> claimed_jobs;
  std::int64_t runs = 0;
  for (const auto* claims : {&a, &b}) {
    for (const auto& c : *claims) {
      claimed_jobs.insert(c.job.id);
      runs += c.runs_total;
    }
  }
  EXPECT_EQ(claimed_jobs.size(), 20u);
  EXPECT_EQ(std::set<std::int64_t>(claimed_jobs.begin(), claimed_jobs.end()).size(), 20u);
  EXPECT_EQ(runs, 60);
  for (auto id : all) EXPECT_EQ(f_.alarm_status(id), admin::kAlarmClaimed);
}

// Upgrading a database with failures in its history alarms none of them; runs that fail after
// the upgrade do.
TEST(AlarmMigration, RunsThatEndedBeforeItAreNotAlarmed) {
  TestDatabase db;
  pqxx::connection c(db.url());
  auto before = admin::embedded_migrations();
  ASSERT_GE(before.size(), 7u);
  ASSERT_EQ(before[6].name, "0007_alarms.sql");
  before.resize(6);
  admin::Migrator(before).migrate(c);
  {
    pqxx::work tx(c);
    tx.exec("INSERT INTO job_group (app_name, title) VALUES ('demo-app', 'Demo')");
    tx.exec("INSERT INTO job_info (job_group, job_desc, executor_handler, alarm_email) "
            "VALUES (1, 'report', 'h', 'ops@example.com')");
    tx.exec("INSERT INTO job_log (job_group, job_id, state, trigger_type, scheduled_time, admin_node, trigger_time) "
            "SELECT 1, 1, (ARRAY['succeeded', 'failed', 'lost', 'cancelled', 'triggered'])[g % 5 + 1], 'SCHEDULE', "
            "g * 1000, 'n', now() FROM generate_series(0, 49) g");
    tx.commit();
  }
  admin::Migrator().migrate(c);
  {
    pqxx::work tx(c);
    auto r = tx.exec1("SELECT count(*) FILTER (WHERE alarm_status = 1), count(*) FILTER (WHERE alarm_status = 0) "
                      "FROM job_log");
    EXPECT_EQ(r[0].as<int>(), 30);  // failed, lost, cancelled
    EXPECT_EQ(r[1].as<int>(), 20);  // succeeded, still running
    tx.exec("INSERT INTO job_log (job_group, job_id, state, trigger_type, scheduled_time, admin_node, trigger_time) "
            "VALUES (1, 1, 'failed', 'SCHEDULE', 99000, 'n', now())");
    tx.commit();
  }
  admin::Database database(pool_options(db, 1), &admin::PgAlarmStore::prepare);
  admin::PgAlarmStore store(database, common::SystemClock::instance());
  auto claims = store.claim(request());
  ASSERT_EQ(claims.size(), 1u);
  EXPECT_EQ(claims[0].runs_total, 1);
  EXPECT_EQ(claims[0].runs[0].scheduled_time, 99000);
}

}  // namespace
}  // namespace cronwheel::testing
