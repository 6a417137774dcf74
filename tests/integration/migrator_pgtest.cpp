#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include <pqxx/pqxx>

#include "admin/pg/migrator.h"
#include "tests/support/test_database.h"

namespace cronwheel::admin {
namespace {

using testing::TestDatabase;

int count(pqxx::connection& c, const std::string& sql) {
  pqxx::nontransaction tx(c);
  return tx.exec1(sql)[0].as<int>();
}

bool table_exists(pqxx::connection& c, const std::string& table) {
  pqxx::nontransaction tx(c);
  return tx.exec_params1("SELECT to_regclass($1) IS NOT NULL", table)[0].as<bool>();
}

TEST(Migrator, MigratesAnEmptyDatabaseToTheLatestVersion) {
  TestDatabase db;
  pqxx::connection c(db.url());
  EXPECT_EQ(Migrator::current_version(c), 0);

  auto report = Migrator().migrate(c);

  const int latest = static_cast<int>(embedded_migrations().size());
  EXPECT_EQ(report.previous_version, 0);
  EXPECT_EQ(report.current_version, latest);
  EXPECT_EQ(static_cast<int>(report.applied.size()), latest);
  EXPECT_EQ(Migrator::current_version(c), latest);
  for (const char* table : {"job_group", "job_info", "job_log", "job_run_report", "job_logglue",
                            "job_registry", "app_user", "user_group", "user_session", "api_token",
                            "job_lock", "admin_node", "audit_log"}) {
    EXPECT_TRUE(table_exists(c, table)) << table;
  }
  EXPECT_EQ(count(c, "SELECT count(*) FROM job_lock WHERE lock_name = 'schedule_lock'"), 1);
}

TEST(Migrator, SecondRunAppliesNothing) {
  TestDatabase db;
  pqxx::connection c(db.url());
  Migrator().migrate(c);
  auto again = Migrator().migrate(c);
  EXPECT_TRUE(again.applied.empty());
  EXPECT_EQ(again.previous_version, again.current_version);
}

TEST(Migrator, ConcurrentStartsApplyEachMigrationOnce) {
  TestDatabase db;
  constexpr int kNodes = 4;
  std::atomic<int> applied{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> nodes;
  for (int i = 0; i < kNodes; ++i) {
    nodes.emplace_back([&] {
      try {
        pqxx::connection c(db.url());
        applied += static_cast<int>(Migrator().migrate(c).applied.size());
      } catch (const std::exception& e) {
        ADD_FAILURE() << e.what();
        ++failures;
      }
    });
  }
  for (auto& t : nodes) t.join();

  pqxx::connection c(db.url());
  const int latest = static_cast<int>(embedded_migrations().size());
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(applied, latest);
  EXPECT_EQ(count(c, "SELECT count(*) FROM schema_migrations"), latest);
  EXPECT_EQ(count(c, "SELECT count(*) FROM job_lock"), 3);  // the schedule, apply and workflow scan locks, once each
}

TEST(Migrator, RefusesADatabaseWhoseAppliedMigrationWasEdited) {
  TestDatabase db;
  pqxx::connection c(db.url());
  Migrator({{1, "0001_t.sql", "CREATE TABLE t (a int);"}}).migrate(c);

  Migrator edited({{1, "0001_t.sql", "CREATE TABLE t (a bigint);"}});
  try {
    edited.migrate(c);
    FAIL() << "an edited migration was accepted";
  } catch (const MigrationError& e) {
    EXPECT_NE(std::string(e.what()).find("0001_t.sql"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("different contents"), std::string::npos) << e.what();
  }
}

TEST(Migrator, RefusesADatabaseNewerThanTheBinary) {
  TestDatabase db;
  pqxx::connection c(db.url());
  Migrator({{1, "0001_a.sql", "CREATE TABLE a (x int);"}, {2, "0002_b.sql", "CREATE TABLE b (x int);"}})
      .migrate(c);
  try {
    Migrator({{1, "0001_a.sql", "CREATE TABLE a (x int);"}}).migrate(c);
    FAIL() << "an older binary accepted a newer schema";
  } catch (const MigrationError& e) {
    EXPECT_NE(std::string(e.what()).find("newer"), std::string::npos) << e.what();
  }
}

TEST(Migrator, FailedMigrationLeavesNoTraceAndIsRetriedLater) {
  TestDatabase db;
  pqxx::connection c(db.url());
  Migrator ok({{1, "0001_a.sql", "CREATE TABLE a (x int);"}});
  ok.migrate(c);

  Migrator broken({{1, "0001_a.sql", "CREATE TABLE a (x int);"},
                   {2, "0002_b.sql", "CREATE TABLE b (x int); SELECT no_such_function();"}});
  EXPECT_THROW(broken.migrate(c), MigrationError);
  EXPECT_EQ(Migrator::current_version(c), 1);
  EXPECT_FALSE(table_exists(c, "b"));

  Migrator fixed({{1, "0001_a.sql", "CREATE TABLE a (x int);"},
                  {2, "0002_b.sql", "CREATE TABLE b (x int);"}});
  EXPECT_EQ(fixed.migrate(c).applied.size(), 1u);
  EXPECT_TRUE(table_exists(c, "b"));
}

TEST(Migrator, RejectsAGapInVersions) {
  EXPECT_THROW(Migrator({{2, "0002_a.sql", "SELECT 1"}}), MigrationError);
}

}  // namespace
}  // namespace cronwheel::admin
