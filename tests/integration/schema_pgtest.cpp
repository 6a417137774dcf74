#include <gtest/gtest.h>

#include <pqxx/pqxx>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "admin/pg/migrator.h"
#include "admin/pg/pg_store_support.h"
#include "tests/support/test_database.h"

namespace cronwheel::admin {
namespace {

// The schema's constraints reject rows that cannot be right, whoever writes them.
class Schema : public ::testing::Test {
 protected:
  void SetUp() override {
    conn_ = std::make_unique<pqxx::connection>(db_.url());
    Migrator().migrate(*conn_);
    // A fresh database: these get id 1.
    exec("INSERT INTO job_group (app_name, title) VALUES ('demo-app', 'Demo')");
    exec("INSERT INTO job_info (job_group, job_desc, executor_handler) VALUES (1, 'a job', 'echo')");
  }

  void exec(const std::string& sql) {
    pqxx::work tx(*conn_);
    tx.exec(sql);
    tx.commit();
  }

  // Runs `sql` on `c` in a transaction of its own; answers the error, empty when it committed.
  static std::string committed(pqxx::connection& c, const std::string& sql) {
    try {
      pqxx::work tx(c);
      tx.exec(sql);
      tx.commit();
      return "";
    } catch (const std::exception& e) {
      return e.what();
    }
  }
  static constexpr const char* kDeleteJob = "DELETE FROM job_info WHERE id = 1";

  // Whether the backend `pid` comes to wait for a lock (within 5 s).
  bool waits_for_a_lock(int pid) {
    for (int i = 0; i < 500; ++i) {
      pqxx::nontransaction look(*conn_);
      if (look.exec_params1("SELECT count(*) FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'", pid)[0]
              .as<int>() == 1) {
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

  // Deletes job 1 on another connection while `open` is open, expects the delete to wait for it,
  // then commits `open`; answers the delete's error, empty when it committed.
  std::string delete_job_while_open(pqxx::work& open) {
    pqxx::connection deleter(db_.url());
    const int pid = deleter.backendpid();
    std::string error;
    std::thread thread([&] { error = committed(deleter, kDeleteJob); });
    EXPECT_TRUE(waits_for_a_lock(pid)) << "the delete did not wait for the open transaction";
    open.commit();
    thread.join();
    return error;
  }

  // Runs `sql` expecting PostgreSQL to refuse it; returns the server's message.
  std::string rejected(const std::string& sql) {
    try {
      exec(sql);
    } catch (const pqxx::sql_error& e) {
      return e.what();
    }
    ADD_FAILURE() << "accepted: " << sql;
    return {};
  }

  testing::TestDatabase db_;
  std::unique_ptr<pqxx::connection> conn_;
};

TEST_F(Schema, GroupAppNameMustBeFourToSixtyFourSafeCharacters) {
  EXPECT_NE(rejected("INSERT INTO job_group (app_name, title) VALUES ('abc', 'x')"), "");
  EXPECT_NE(rejected("INSERT INTO job_group (app_name, title) VALUES ('has space', 'x')"), "");
  EXPECT_NE(rejected("INSERT INTO job_group (app_name, title) VALUES ('demo-app', 'dup')"), "");
  exec("INSERT INTO job_group (app_name, title) VALUES ('orders.v2', 'Orders')");
}

TEST_F(Schema, JobScheduleMustBeConsistent) {
  EXPECT_NE(rejected("UPDATE job_schedule SET trigger_status = 1 WHERE job_id = 1"), "");  // NONE schedule
  EXPECT_NE(rejected("UPDATE job_schedule SET trigger_status = 2 WHERE job_id = 1"), "");
  EXPECT_NE(rejected("UPDATE job_schedule SET trigger_next_time = -1 WHERE job_id = 1"), "");
  EXPECT_NE(rejected("UPDATE job_info SET schedule_type = 'FIX_RATE', schedule_conf = 'abc' WHERE id = 1"), "");
  EXPECT_NE(rejected("UPDATE job_info SET schedule_type = 'FIX_DELAY', schedule_conf = '0' WHERE id = 1"), "");
  EXPECT_NE(rejected("UPDATE job_info SET schedule_type = 'CRON', schedule_conf = ' ' WHERE id = 1"), "");
  EXPECT_NE(rejected("UPDATE job_info SET schedule_type = 'HOURLY' WHERE id = 1"), "");
  EXPECT_NE(rejected("UPDATE job_info SET executor_route_strategy = 'NEAREST' WHERE id = 1"), "");
  EXPECT_NE(rejected("UPDATE job_info SET executor_timeout = -1 WHERE id = 1"), "");
  EXPECT_NE(rejected("UPDATE job_info SET child_job_ids = '{1}' WHERE id = 1"), "");
  EXPECT_NE(rejected("UPDATE job_info SET glue_type = 'BEAN', executor_handler = '' WHERE id = 1"), "");
  exec("UPDATE job_info SET schedule_type = 'FIX_RATE', schedule_conf = '30' WHERE id = 1");
  exec("UPDATE job_schedule SET trigger_status = 1 WHERE job_id = 1");
}

// The rule spans job_info and job_schedule: a running job cannot lose its schedule, a job
// inserted running needs one, and the refusal names the rule the API maps to a field.
TEST_F(Schema, AJobWithoutAScheduleCannotRunWhicheverTableChanges) {
  exec("UPDATE job_info SET schedule_type = 'FIX_RATE', schedule_conf = '30' WHERE id = 1");
  exec("UPDATE job_schedule SET trigger_status = 1 WHERE job_id = 1");
  const auto refused = rejected("UPDATE job_info SET schedule_type = 'NONE' WHERE id = 1");
  EXPECT_NE(refused.find("a job without a schedule cannot run"), std::string::npos) << refused;
  EXPECT_NE(rejected("WITH j AS (INSERT INTO job_info (job_group, job_desc, executor_handler) VALUES (1, 'b', 'echo')"
                     " RETURNING id, job_group) INSERT INTO job_schedule (job_id, count_group, trigger_status)"
                     " SELECT id, job_group, 1 FROM j"),
            "");
  try {
    exec("UPDATE job_info SET schedule_type = 'NONE' WHERE id = 1");
    ADD_FAILURE() << "accepted";
  } catch (const pqxx::sql_error& e) {
    EXPECT_EQ(e.sqlstate(), "23514");  // check_violation
  }
  // Stopped, it may lose it.
  exec("UPDATE job_schedule SET trigger_status = 0 WHERE job_id = 1");
  exec("UPDATE job_info SET schedule_type = 'NONE' WHERE id = 1");
}

// Every job has one schedule row, however it was inserted, and it goes with the job.
TEST_F(Schema, EveryJobHasOneScheduleRowFromItsInsertToItsDelete) {
  exec("INSERT INTO job_info (job_group, job_desc, executor_handler) SELECT 1, 'job ' || g, 'echo' "
       "FROM generate_series(1, 50) g");
  pqxx::nontransaction tx(*conn_);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM job_info j JOIN job_schedule s ON s.job_id = j.id"
                     " WHERE s.trigger_status = 0 AND s.count_group = j.job_group")[0].as<int>(), 51);
  tx.exec("DELETE FROM job_info WHERE job_desc LIKE 'job %'");
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM job_schedule")[0].as<int>(), 1);
}

TEST_F(Schema, JobInAGroupThatDoesNotExistIsRefused) {
  EXPECT_NE(rejected("INSERT INTO job_info (job_group, job_desc, executor_handler) VALUES (99, 'x', 'h')"), "");
}

TEST_F(Schema, GroupWithJobsCannotBeDeleted) {
  EXPECT_NE(rejected("DELETE FROM job_group WHERE id = 1"), "");
}

TEST_F(Schema, ScheduledFireIsUniquePerJobTimeAndShard) {
  const std::string fire =
      "INSERT INTO job_log (job_group, job_id, trigger_type, scheduled_time, admin_node) "
      "VALUES (1, 1, 'SCHEDULE', 1700000000000, 'node-a')";
  exec(fire);
  auto message = rejected(fire);
  // Among the runs in flight (sql/0028_active_runs.sql); the statements that insert a scheduled
  // fire also look for it in the history (PgScheduleStore's tests).
  EXPECT_NE(message.find("job_log_active_scheduled_fire"), std::string::npos) << message;
  // A misfire catch-up of the same due time is the same fire.
  EXPECT_NE(rejected("INSERT INTO job_log (job_group, job_id, trigger_type, scheduled_time, admin_node) "
                     "VALUES (1, 1, 'MISFIRE', 1700000000000, 'node-b')"),
            "");
  // Manual fires and retries at the same instant are separate runs.
  exec("INSERT INTO job_log (job_group, job_id, trigger_type, scheduled_time, admin_node) "
       "VALUES (1, 1, 'MANUAL', 1700000000000, 'node-a')");
  exec("INSERT INTO job_log (job_group, job_id, trigger_type, scheduled_time, admin_node) "
       "VALUES (1, 1, 'RETRY', 1700000000000, 'node-a')");
  // Another shard of the same broadcast fire is a separate row.
  exec("INSERT INTO job_log (job_group, job_id, trigger_type, scheduled_time, admin_node, shard_index, shard_total) "
       "VALUES (1, 1, 'SCHEDULE', 1700000000000, 'node-a', 1, 2)");
}

TEST_F(Schema, ImpossibleLogRowsAreRefused) {
  const std::string head = "INSERT INTO job_log (job_group, job_id, trigger_type, scheduled_time, ";
  EXPECT_NE(rejected(head + "admin_node, shard_index, shard_total) VALUES (1, 1, 'MANUAL', 1, 'n', 2, 2)"), "");
  EXPECT_NE(rejected(head + "state) VALUES (1, 1, 'MANUAL', 1, 'pending')"), "");  // pending without owner
  EXPECT_NE(rejected(head + "admin_node, state) VALUES (1, 1, 'MANUAL', 1, 'n', 'triggered')"), "");  // no trigger time
  EXPECT_NE(rejected(head + "admin_node, state) VALUES (1, 1, 'MANUAL', 1, 'n', 'exploded')"), "");
  EXPECT_NE(rejected(head + "admin_node) VALUES (1, 1, 'SOMETIME', 1, 'n')"), "");
}

TEST_F(Schema, DeletingAJobDeletesItsLogsAndScriptHistory) {
  exec("INSERT INTO job_log (job_group, job_id, trigger_type, scheduled_time, admin_node) VALUES (1, 1, 'MANUAL', 1, 'n')");
  exec("INSERT INTO job_log (job_group, job_id, trigger_type, scheduled_time, state, trigger_time) "
       "VALUES (1, 1, 'MANUAL', 2, 'succeeded', now())");
  // Another job's history stays.
  exec("INSERT INTO job_info (job_group, job_desc, executor_handler) VALUES (1, 'another job', 'echo')");
  exec("INSERT INTO job_log (job_group, job_id, trigger_type, scheduled_time, state, trigger_time) "
       "VALUES (1, 2, 'MANUAL', 2, 'failed', now())");
  exec("INSERT INTO job_logglue (job_id, glue_type, glue_source, glue_remark) VALUES (1, 'GLUE_SHELL', 'echo', 'v1')");
  exec("DELETE FROM job_info WHERE id = 1");
  pqxx::nontransaction tx(*conn_);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM job_log WHERE job_id = 1")[0].as<int>(), 0);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM job_log WHERE job_id = 2")[0].as<int>(), 1);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM job_logglue")[0].as<int>(), 0);
}

// The history has no foreign key of its job (sql/0032_history_job_delete.sql); a row written
// into it through the view is still checked, under the key's name.
TEST_F(Schema, AFinishedRunOfAJobThatDoesNotExistIsRefused) {
  const auto message = rejected(
      "INSERT INTO job_log (job_group, job_id, trigger_type, scheduled_time, state, trigger_time) "
      "VALUES (1, 99, 'MANUAL', 1, 'succeeded', now())");
  EXPECT_NE(message.find("job_log_job_id_fkey"), std::string::npos) << message;
  exec("INSERT INTO job_log (job_group, job_id, trigger_type, scheduled_time, state, trigger_time) "
       "VALUES (1, 1, 'MANUAL', 1, 'succeeded', now())");
  EXPECT_NE(rejected("UPDATE job_log SET job_id = 99 WHERE job_id = 1").find("job_log_job_id_fkey"), std::string::npos);
}

// A run that ends while its job is being deleted: the end moves the run from job_log_active to
// the history in a transaction still open when the delete starts, so the delete waits for the
// run's row; once the end commits, the job's history goes too, the row the end wrote with it.
TEST_F(Schema, ARunEndingWhileItsJobIsDeletedLeavesNoHistory) {
  exec("INSERT INTO job_log (job_group, job_id, trigger_type, scheduled_time, admin_node, state, trigger_time) "
       "VALUES (1, 1, 'MANUAL', 1, 'n', 'triggered', now())");
  pqxx::connection ender(db_.url());
  pqxx::work end(ender);
  end.exec(
      "WITH ended AS (DELETE FROM job_log_active a WHERE a.job_id = 1 RETURNING a.*)"
      " INSERT INTO job_log_finished (id, job_group, job_id, state, trigger_type, scheduled_time, admin_node,"
      " trigger_time, handle_time, handle_code)"
      " SELECT id, job_group, job_id, 'succeeded', trigger_type, scheduled_time, admin_node, trigger_time, now(), 200"
      " FROM ended");
  EXPECT_EQ(delete_job_while_open(end), "");
  pqxx::nontransaction tx(*conn_);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM job_log_finished WHERE job_id = 1")[0].as<int>(), 0);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM job_log_active WHERE job_id = 1")[0].as<int>(), 0);
}

// The scan writes its fires without a foreign-key check of their job (sql/0033); every other
// run in flight is checked as the key checked it, under the key's name.
TEST_F(Schema, ARunInFlightOfAJobThatDoesNotExistIsRefused) {
  const std::string head = "INSERT INTO job_log_active (job_group, job_id, trigger_type, scheduled_time, admin_node";
  for (const char* type : {"MANUAL", "API", "RETRY", "PARENT", "WORKFLOW"}) {
    const auto message = rejected(head + ") VALUES (1, 99, '" + type + "', 1, 'n')");
    EXPECT_NE(message.find("job_log_job_id_fkey"), std::string::npos) << type << ": " << message;
  }
  // Another shard of a broadcast fire is a copy written when the fire is sent, not by the scan.
  EXPECT_NE(rejected(head + ", shard_index, shard_total) VALUES (1, 99, 'SCHEDULE', 1, 'n', 1, 2)")
                .find("job_log_job_id_fkey"),
            std::string::npos);
  // Through the view, as before.
  EXPECT_NE(rejected("INSERT INTO job_log (job_group, job_id, trigger_type, scheduled_time, admin_node) "
                     "VALUES (1, 99, 'MANUAL', 1, 'n')")
                .find("job_log_job_id_fkey"),
            std::string::npos);
  exec(head + ") VALUES (1, 1, 'MANUAL', 1, 'n')");
  EXPECT_NE(rejected("UPDATE job_log_active SET job_id = 99 WHERE job_id = 1").find("job_log_job_id_fkey"),
            std::string::npos);
}

// A fire the scan writes for a job being deleted: the scan holds the job's schedule row (its
// advance) when it writes the fire, the delete's cascade to job_schedule waits for it, and the
// delete then takes the fire with the job.
TEST_F(Schema, AScheduledFireWrittenWhileItsJobIsDeletedGoesWithTheJob) {
  pqxx::connection scanner(db_.url());
  pqxx::work scan(scanner);
  scan.exec("UPDATE job_schedule SET trigger_last_time = 1000 WHERE job_id = 1");
  pqxx::connection deleter(db_.url());
  const int deleter_pid = deleter.backendpid();
  std::string error;
  std::thread thread([&] { error = committed(deleter, kDeleteJob); });
  // The job's row is gone (uncommitted) before its cascade waits for the schedule row; the scan's
  // snapshot still reads it, as the scan's insert does.
  EXPECT_TRUE(waits_for_a_lock(deleter_pid));
  scan.exec("INSERT INTO job_log_active (job_group, job_id, trigger_type, scheduled_time, admin_node) "
            "SELECT job_group, id, 'SCHEDULE', 1000, 'n' FROM job_info WHERE id = 1");
  scan.commit();
  thread.join();
  EXPECT_EQ(error, "");
  pqxx::nontransaction tx(*conn_);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM job_log_active WHERE job_id = 1")[0].as<int>(), 0);
}

// Any other run written while its job is being deleted: the writer holds the job's row (KEY
// SHARE) until it commits; the delete waits for it and takes the run with the job. Written after
// the delete started, the run waits for the delete and is refused.
TEST_F(Schema, ARunWrittenWhileItsJobIsDeletedGoesWithTheJobOrIsRefused) {
  {
    pqxx::connection writer(db_.url());
    pqxx::work write(writer);
    write.exec("INSERT INTO job_log_active (job_group, job_id, trigger_type, scheduled_time, admin_node) "
               "VALUES (1, 1, 'MANUAL', 1, 'n')");
    EXPECT_EQ(delete_job_while_open(write), "");
    pqxx::nontransaction tx(*conn_);
    EXPECT_EQ(tx.exec1("SELECT count(*) FROM job_log_active")[0].as<int>(), 0);
  }
  exec("INSERT INTO job_info (job_group, job_desc, executor_handler) VALUES (1, 'another job', 'echo')");
  pqxx::connection deleter(db_.url());
  pqxx::work del(deleter);
  del.exec("DELETE FROM job_info WHERE id = 2");
  pqxx::connection writer(db_.url());
  const int writer_pid = writer.backendpid();
  std::string error;
  std::thread thread([&] {
    error = committed(writer, "INSERT INTO job_log_active (job_group, job_id, trigger_type, scheduled_time, admin_node) "
                              "VALUES (1, 2, 'RETRY', 1, 'n')");
  });
  EXPECT_TRUE(waits_for_a_lock(writer_pid));
  del.commit();
  thread.join();
  EXPECT_NE(error.find("job_log_job_id_fkey"), std::string::npos) << error;
  pqxx::nontransaction tx(*conn_);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM job_log_active")[0].as<int>(), 0);
}

TEST_F(Schema, DueJobsQueryWalksTheDueIndexSlotBySlotInDueOrder) {
  exec("INSERT INTO job_info (job_group, job_desc, executor_handler, schedule_type, schedule_conf) "
       "SELECT 1, 'job ' || g, 'echo', 'FIX_RATE', '10' FROM generate_series(1, 5000) g");
  exec("UPDATE job_schedule s SET trigger_status = n.g % 2, trigger_next_time = 1700000000000 + n.g * 1000 "
       "FROM job_info j, LATERAL (SELECT substr(j.job_desc, 5)::int AS g) n "
       "WHERE j.id = s.job_id AND j.job_desc LIKE 'job %'");
  pqxx::nontransaction tx(*conn_);
  tx.exec("VACUUM ANALYZE job_info");
  tx.exec("VACUUM ANALYZE job_schedule");
  std::string plan;
  for (const auto& row : tx.exec(
           "EXPLAIN SELECT job_id, trigger_last_time, trigger_next_time FROM job_schedule "
           "WHERE trigger_status = 1 AND due_slot <= 1700000100000 / 10000 AND trigger_next_time <= 1700000100000 "
           "ORDER BY due_slot, trigger_next_time LIMIT 300")) {
    plan += row[0].as<std::string>() + "\n";
  }
  // The index up to the window's last slot, never the table whole; the rows read are sorted by
  // their next time (a few seconds' worth: the planner sorts them whole or slot by slot).
  EXPECT_NE(plan.find("Index Scan using job_schedule_due"), std::string::npos) << plan;
  EXPECT_NE(plan.find("Index Cond: (due_slot <= "), std::string::npos) << plan;
  EXPECT_EQ(plan.find("Seq Scan"), std::string::npos) << plan;
}

TEST_F(Schema, UserPasswordMustBeAnArgon2Hash) {
  EXPECT_NE(rejected("INSERT INTO app_user (username, password_hash) VALUES ('bob', 'plaintext')"), "");
  EXPECT_NE(rejected("INSERT INTO app_user (username, password_hash, role) VALUES ('bob', '$argon2id$x', 'root')"), "");
  exec("INSERT INTO app_user (username, password_hash) VALUES ('bob', '$argon2id$v=19$m=65536,t=2,p=1$x$y')");
}

// The migrations before `version`: a database as an older release left it.
std::vector<Migration> migrations_before(int version) {
  std::vector<Migration> out;
  for (const auto& m : embedded_migrations()) {
    if (m.version < version) out.push_back(m);
  }
  return out;
}

// A database upgraded past migration 0024 (a run's logical time) keeps what its job backfills
// were doing: their runs, and the retries of them however deep, stand for their instants, so a
// retry still pending is sent with its run's instant as logDateTime. Other runs keep none.
TEST(SchemaUpgrade, BackfillRunsAndTheirRetriesWrittenBeforeLogicalTimesGetTheirInstant) {
  testing::TestDatabase db;
  pqxx::connection c(db.url());
  Migrator(migrations_before(24)).migrate(c);
  {
    pqxx::work tx(c);
    tx.exec("INSERT INTO job_group (app_name, title) VALUES ('demo-app', 'Demo')");
    tx.exec("INSERT INTO job_info (job_group, job_desc, executor_handler) VALUES (1, 'a job', 'echo')");
    tx.exec("INSERT INTO backfill (job_id, from_time, to_time, on_existing, max_concurrent, total) "
            "VALUES (1, 946684800000, 946771200000, 'SKIP', 1, 24)");
    auto run = [&](const std::string& type, std::int64_t at, const std::string& backfill, const std::string& parent) {
      return tx.exec("INSERT INTO job_log (job_group, job_id, state, trigger_type, scheduled_time, admin_node, "
                     "backfill_id, parent_log_id) VALUES (1, 1, 'pending', '" + type + "', " + std::to_string(at) +
                     ", 'node-a', " + backfill + ", " + parent + ") RETURNING id")[0][0]
          .as<std::int64_t>();
    };
    const auto instant = run("BACKFILL", 946688400000, "1", "NULL");                 // id 1
    const auto retry = run("RETRY", 1'800'000'000'000, "1", std::to_string(instant));  // id 2
    run("RETRY", 1'800'000'060'000, "1", std::to_string(retry));                      // id 3
    const auto scheduled = run("SCHEDULE", 1'800'000'000'000, "NULL", "NULL");      // id 4
    run("RETRY", 1'800'000'120'000, "NULL", std::to_string(scheduled));              // id 5
    tx.commit();
  }
  Migrator().migrate(c);
  pqxx::work tx(c);
  const auto rows = tx.exec("SELECT id, logical_time FROM job_log ORDER BY id");
  ASSERT_EQ(rows.size(), 5u);
  for (int i = 0; i < 3; ++i) {
    ASSERT_FALSE(rows[i][1].is_null()) << "run " << rows[i][0].as<std::int64_t>();
    EXPECT_EQ(rows[i][1].as<std::int64_t>(), 946688400000) << "run " << rows[i][0].as<std::int64_t>();
  }
  EXPECT_TRUE(rows[3][1].is_null()) << "a scheduled run keeps its scheduled time";
  EXPECT_TRUE(rows[4][1].is_null()) << "a retry of a scheduled run keeps its own time";
}

// Runs in flight and finished runs live in two tables (0028), read together through the view
// job_log, which routes plain SQL writes by the run's state.
TEST_F(Schema, TheViewOfRunsPutsEachRowInTheTableOfItsStateAndMovesItWhenThatChanges) {
  auto table_of = [&](std::int64_t id) {
    pqxx::nontransaction tx(*conn_);
    const bool active = tx.exec_params1("SELECT count(*) FROM job_log_active WHERE id = $1", id)[0].as<int>() == 1;
    const bool finished = tx.exec_params1("SELECT count(*) FROM job_log_finished WHERE id = $1", id)[0].as<int>() == 1;
    return std::string(active ? "active" : "") + (finished ? "finished" : "");
  };
  auto insert = [&](const std::string& state) {
    pqxx::work tx(*conn_);
    const auto id = tx.exec("INSERT INTO job_log (job_group, job_id, state, trigger_type, scheduled_time, admin_node, "
                            "trigger_time) VALUES (1, 1, '" + state + "', 'MANUAL', 1700000000000, 'node-a', now()) "
                            "RETURNING id")[0][0]
                        .as<std::int64_t>();
    tx.commit();
    return id;
  };
  auto report_total = [&] {
    pqxx::nontransaction tx(*conn_);
    return tx.exec1("SELECT coalesce(sum(succeeded_00 + succeeded_15 + succeeded_30 + succeeded_45), 0)"
                    " FROM job_run_report")[0]
        .as<int>();
  };
  const auto pending = insert("pending");
  const auto done = insert("succeeded");
  EXPECT_EQ(table_of(pending), "active");
  EXPECT_EQ(table_of(done), "finished");
  EXPECT_EQ(report_total(), 1);

  exec("UPDATE job_log SET state = 'triggered' WHERE id = " + std::to_string(pending));
  EXPECT_EQ(table_of(pending), "active");
  exec("UPDATE job_log SET state = 'succeeded', handle_code = 200, handle_time = now() WHERE id = " +
       std::to_string(pending));
  EXPECT_EQ(table_of(pending), "finished");
  EXPECT_EQ(report_total(), 2);  // a run counts once it has finished
  exec("UPDATE job_log SET alarm_status = 1 WHERE id = " + std::to_string(pending));
  EXPECT_EQ(report_total(), 2);
  exec("UPDATE job_log SET state = 'triggered' WHERE id = " + std::to_string(done));
  EXPECT_EQ(table_of(done), "active");
  EXPECT_EQ(report_total(), 1);  // and counts no more when it is back in flight
  {
    pqxx::nontransaction tx(*conn_);
    EXPECT_EQ(tx.exec1("SELECT count(*) FROM job_log")[0].as<int>(), 2);
  }
  exec("DELETE FROM job_log WHERE id IN (" + std::to_string(pending) + ", " + std::to_string(done) + ")");
  EXPECT_EQ(table_of(pending), "");
  EXPECT_EQ(table_of(done), "");
  // Each table keeps to its states.
  EXPECT_NE(rejected("INSERT INTO job_log_active (job_group, job_id, state, trigger_type, scheduled_time) "
                     "VALUES (1, 1, 'cancelled', 'MANUAL', 1)"),
            "");
  EXPECT_NE(rejected("INSERT INTO job_log_finished (job_group, job_id, state, trigger_type, scheduled_time, "
                     "admin_node) VALUES (1, 1, 'pending', 'MANUAL', 1, 'node-a')"),
            "");
}

// The statements that end a run copy every column of it from one table to the other
// (pg::end_runs): their list is the tables' own.
TEST_F(Schema, TheRunTablesHaveTheColumnsARunsEndCopies) {
  pqxx::nontransaction tx(*conn_);
  for (const char* table : {"job_log_active", "job_log_finished", "job_log"}) {
    std::vector<std::string> columns;
    for (const auto& row : tx.exec_params("SELECT column_name FROM information_schema.columns WHERE table_name = $1 "
                                          "ORDER BY ordinal_position",
                                          table)) {
      columns.push_back(row[0].as<std::string>());
    }
    EXPECT_EQ(columns, pg::kRunColumnNames) << table;
  }
}

}  // namespace
// A database upgraded past migration 0027 keeps every job's schedule (running or stopped, its
// last and next fire time) in job_schedule, and its per-group counts.
TEST(SchemaUpgrade, EveryJobKeepsItsScheduleAndItsGroupsCountsInJobSchedule) {
  testing::TestDatabase db;
  pqxx::connection c(db.url());
  Migrator(migrations_before(27)).migrate(c);
  {
    pqxx::work tx(c);
    tx.exec("INSERT INTO job_group (app_name, title) VALUES ('demo-app', 'Demo'), ('other-app', 'Other')");
    tx.exec("INSERT INTO job_info (job_group, job_desc, executor_handler, schedule_type, schedule_conf, trigger_status, "
            "trigger_last_time, trigger_next_time) SELECT 1 + g % 2, 'job ' || g, 'echo', 'FIX_RATE', '10', "
            "(g % 3 = 0)::int, g * 1000, g * 2000 FROM generate_series(1, 30) g");
    tx.commit();
  }
  Migrator().migrate(c);
  pqxx::nontransaction tx(c);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM job_info j JOIN job_schedule s ON s.job_id = j.id "
                     "WHERE s.trigger_status = (substr(j.job_desc, 5)::int % 3 = 0)::int "
                     "AND s.trigger_last_time = substr(j.job_desc, 5)::int * 1000 "
                     "AND s.trigger_next_time = substr(j.job_desc, 5)::int * 2000 AND s.count_group = j.job_group")[0]
                .as<int>(),
            30);
  EXPECT_EQ(tx.exec1("SELECT string_agg(job_group || ':' || total || ':' || enabled, ' ' ORDER BY job_group) "
                     "FROM job_count")[0]
                .as<std::string>(),
            "1:15:5 2:15:5");
  // The counts follow job_schedule from here on.
  tx.exec("UPDATE job_schedule SET trigger_status = 1 WHERE trigger_status = 0");
  EXPECT_EQ(tx.exec1("SELECT sum(enabled) FROM job_count")[0].as<int>(), 30);
}

// A database upgraded past migration 0028 has its runs in flight in job_log_active and its
// finished ones in job_log_finished, each with its id, all of them in the view job_log; the
// next run takes the next id.
TEST(SchemaUpgrade, RunsInFlightMoveToTheirTableWithTheirIds) {
  testing::TestDatabase db;
  pqxx::connection c(db.url());
  Migrator(migrations_before(28)).migrate(c);
  const std::vector<std::string> states = {"pending", "sending", "triggered", "succeeded", "failed", "lost",
                                           "cancelled"};
  {
    pqxx::work tx(c);
    tx.exec("INSERT INTO job_group (app_name, title) VALUES ('demo-app', 'Demo')");
    tx.exec("INSERT INTO job_info (job_group, job_desc, executor_handler) VALUES (1, 'a job', 'echo')");
    for (std::size_t i = 0; i < states.size(); ++i) {
      tx.exec("INSERT INTO job_log (job_group, job_id, state, trigger_type, scheduled_time, admin_node, trigger_time, "
              "handle_time, handle_code) VALUES (1, 1, '" + states[i] + "', 'SCHEDULE', " + std::to_string(1000 * (i + 1)) +
              ", 'node-a', now(), now(), 200)");
    }
    tx.commit();
  }
  Migrator().migrate(c);
  pqxx::nontransaction tx(c);
  EXPECT_EQ(tx.exec1("SELECT string_agg(id || ':' || state, ' ' ORDER BY id) FROM job_log_active")[0].as<std::string>(),
            "1:pending 2:sending 3:triggered");
  EXPECT_EQ(tx.exec1("SELECT string_agg(id || ':' || state, ' ' ORDER BY id) FROM job_log_finished")[0].as<std::string>(),
            "4:succeeded 5:failed 6:lost 7:cancelled");
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM job_log")[0].as<int>(), 7);
  EXPECT_EQ(tx.exec1("INSERT INTO job_log_active (job_group, job_id, trigger_type, scheduled_time, admin_node) "
                     "VALUES (1, 1, 'MANUAL', 1, 'node-a') RETURNING id")[0]
                .as<int>(),
            8);
}

}  // namespace cronwheel::admin
