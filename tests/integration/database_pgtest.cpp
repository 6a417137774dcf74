#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <optional>
#include <thread>

#include <pqxx/pqxx>

#include "admin/pg/connection_string.h"
#include "admin/pg/database.h"
#include "tests/support/test_database.h"

namespace cronwheel::admin {
namespace {

using namespace std::chrono_literals;
using testing::TestDatabase;

Database::Options options_for(const TestDatabase& db, std::size_t pool_size = 4) {
  Database::Options o;
  o.url = db.url();
  o.pool_size = pool_size;
  o.acquire_timeout = 500ms;
  return o;
}

int count_rows(Database& database) {
  return database.read([](pqxx::read_transaction& tx) { return tx.exec1("SELECT count(*) FROM t")[0].as<int>(); });
}

class DatabaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pqxx::connection c(db_.url());
    pqxx::work tx(c);
    tx.exec("CREATE TABLE t (id int PRIMARY KEY)");
    tx.commit();
  }
  TestDatabase db_;
};

TEST_F(DatabaseTest, TransactCommitsAndReturnsTheResult) {
  Database database(options_for(db_));
  int inserted = database.transact([](pqxx::work& tx) { return tx.exec("INSERT INTO t VALUES (1), (2)").affected_rows(); });
  EXPECT_EQ(inserted, 2);
  EXPECT_EQ(count_rows(database), 2);
}

TEST_F(DatabaseTest, AnExceptionRollsTheTransactionBackAndPropagates) {
  Database database(options_for(db_));
  EXPECT_THROW(database.transact([](pqxx::work& tx) {
    tx.exec("INSERT INTO t VALUES (1)");
    throw std::runtime_error("changed my mind");
  }),
               std::runtime_error);
  EXPECT_EQ(count_rows(database), 0);
  // The connection went back to the pool in a usable state.
  EXPECT_EQ(database.open_connections(), 1u);
}

TEST_F(DatabaseTest, SerializationFailureIsRetriedInANewTransaction) {
  Database database(options_for(db_));
  int attempts = 0;
  database.transact([&](pqxx::work& tx) {
    tx.exec("INSERT INTO t VALUES (1)");
    if (++attempts == 1) throw pqxx::serialization_failure("could not serialize access");
  });
  EXPECT_EQ(attempts, 2);
  EXPECT_EQ(count_rows(database), 1);
}

TEST_F(DatabaseTest, GivesUpAfterMaxAttempts) {
  auto o = options_for(db_);
  o.max_attempts = 3;
  Database database(o);
  int attempts = 0;
  EXPECT_THROW(database.transact([&](pqxx::work&) {
    ++attempts;
    throw pqxx::deadlock_detected("deadlock detected");
  }),
               pqxx::transaction_rollback);
  EXPECT_EQ(attempts, 3);
}

TEST_F(DatabaseTest, ConstraintViolationsAreNotRetried) {
  Database database(options_for(db_));
  database.transact([](pqxx::work& tx) { tx.exec("INSERT INTO t VALUES (1)"); });
  int attempts = 0;
  EXPECT_THROW(database.transact([&](pqxx::work& tx) {
    ++attempts;
    tx.exec("INSERT INTO t VALUES (1)");
  }),
               pqxx::unique_violation);
  EXPECT_EQ(attempts, 1);
}

TEST_F(DatabaseTest, RecoversWhenTheServerDropsItsConnections) {
  Database database(options_for(db_, 2));
  EXPECT_EQ(count_rows(database), 0);
  {
    pqxx::connection admin(TestDatabase::server_url());
    pqxx::nontransaction tx(admin);
    tx.exec_params("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
                   db_.name());
  }
  database.transact([](pqxx::work& tx) { tx.exec("INSERT INTO t VALUES (7)"); });
  EXPECT_EQ(count_rows(database), 1);
}

TEST_F(DatabaseTest, WaitsForAFreeConnectionThenFailsClearly) {
  Database database(options_for(db_, 1));
  auto held = database.acquire();
  auto begin = std::chrono::steady_clock::now();
  try {
    database.acquire();
    FAIL() << "a second connection was handed out from a pool of one";
  } catch (const StoreUnavailable& e) {
    EXPECT_NE(std::string(e.what()).find("no database connection free"), std::string::npos) << e.what();
  }
  EXPECT_GE(std::chrono::steady_clock::now() - begin, 400ms);
}

TEST_F(DatabaseTest, AReturnedConnectionWakesAWaiter) {
  auto o = options_for(db_, 1);
  o.acquire_timeout = 10s;
  Database database(o);
  std::optional<Database::Lease> held(database.acquire());
  std::atomic<bool> got{false};
  std::thread waiter([&] {
    auto lease = database.acquire();
    got = true;
  });
  std::this_thread::sleep_for(50ms);  // let the waiter block (not a wait for a result)
  EXPECT_FALSE(got);
  held.reset();
  waiter.join();
  EXPECT_TRUE(got);
}

// Observations above `seconds` in a wait histogram.
std::uint64_t waits_over(const common::Histogram::Snapshot& waits, double seconds) {
  const auto bound = std::find(waits.upper_bounds.begin(), waits.upper_bounds.end(), seconds);
  EXPECT_NE(bound, waits.upper_bounds.end()) << "no bucket bound " << seconds;
  return waits.count - waits.cumulative[static_cast<std::size_t>(bound - waits.upper_bounds.begin())];
}

TEST_F(DatabaseTest, PoolStatsCountEveryTakeAndTheConnectionsInUse) {
  Database database(options_for(db_, 2));
  auto empty = database.pool_stats();
  EXPECT_EQ(empty.size, 2u);
  EXPECT_EQ(empty.in_use + empty.idle, 0u);
  EXPECT_EQ(empty.wait_seconds.count, 0u);
  {
    auto lease = database.acquire();
    auto held = database.pool_stats();
    EXPECT_EQ(held.in_use, 1u);
    EXPECT_EQ(held.idle, 0u);
  }
  EXPECT_EQ(count_rows(database), 0);  // a third take, of the idle connection
  auto after = database.pool_stats();
  EXPECT_EQ(after.in_use, 0u);
  EXPECT_EQ(after.idle, 1u);
  EXPECT_EQ(after.wait_seconds.count, 2u) << "takes that did not wait count too";
  EXPECT_EQ(after.timeouts + after.unreachable, 0u);
}

TEST_F(DatabaseTest, ATakeThatTimesOutIsCountedWithItsWait) {
  Database database(options_for(db_, 1));  // acquire_timeout 500 ms
  auto held = database.acquire();
  EXPECT_THROW(database.acquire(), StoreUnavailable);
  auto stats = database.pool_stats();
  EXPECT_EQ(stats.timeouts, 1u);
  EXPECT_EQ(stats.unreachable, 0u);
  EXPECT_EQ(stats.in_use, 1u);
  EXPECT_EQ(stats.wait_seconds.count, 2u);
  EXPECT_EQ(waits_over(stats.wait_seconds, 0.25), 1u) << "the failed take waited its 500 ms";
  EXPECT_GE(stats.wait_seconds.sum, 0.4);
}

TEST_F(DatabaseTest, AWaitForAConnectionGivenBackIsMeasured) {
  auto o = options_for(db_, 1);
  o.acquire_timeout = 10s;
  Database database(o);
  std::optional<Database::Lease> held(database.acquire());
  std::thread waiter([&] { auto lease = database.acquire(); });
  std::this_thread::sleep_for(300ms);  // the waiter waits this long at least (not a wait for a result)
  held.reset();
  waiter.join();
  auto stats = database.pool_stats();
  EXPECT_EQ(stats.wait_seconds.count, 2u);
  EXPECT_EQ(waits_over(stats.wait_seconds, 0.25), 1u);
  EXPECT_EQ(stats.timeouts, 0u);
}

TEST(Database, UnreachableTakesAreCountedAsFailed) {
  Database::Options o;
  o.url = "postgresql://cronwheel@127.0.0.1:9/nothing";
  Database database(o);
  EXPECT_THROW(database.acquire(), StoreUnavailable);  // the attempt
  EXPECT_THROW(database.acquire(), StoreUnavailable);  // within its backoff
  auto stats = database.pool_stats();
  EXPECT_EQ(stats.unreachable, 2u);
  EXPECT_EQ(stats.timeouts, 0u);
  EXPECT_EQ(stats.wait_seconds.count, 2u);
  EXPECT_EQ(stats.in_use + stats.idle, 0u);
}

TEST(Database, UnreachableServerFailsFastAndBacksOff) {
  Database::Options o;
  o.url = "postgresql://cronwheel@127.0.0.1:9/nothing";
  Database database(o);
  EXPECT_THROW(database.read([](pqxx::read_transaction&) { return 0; }), StoreUnavailable);
  // Within the backoff no new connection is attempted: the answer is immediate and says so.
  try {
    database.read([](pqxx::read_transaction&) { return 0; });
    FAIL();
  } catch (const StoreUnavailable& e) {
    EXPECT_NE(std::string(e.what()).find("next connection attempt"), std::string::npos) << e.what();
  }
  EXPECT_EQ(database.open_connections(), 0u);
}

// While the database is away, connections are tried again at most a second apart, so a node
// is back within a second of its return: the back-off doubles from 200 ms and stops at 1 s.
TEST(Database, ConnectionAttemptsWhileTheServerIsAwayAreAtMostASecondApart) {
  Database::Options o;
  o.url = "postgresql://cronwheel@127.0.0.1:9/nothing";
  Database database(o);
  std::vector<std::int64_t> waits;
  for (int attempt = 0; waits.size() < 5 && attempt < 1000; ++attempt) {
    try {
      database.read([](pqxx::read_transaction&) { return 0; });
      FAIL() << "connected to a closed port";
    } catch (const StoreUnavailable& e) {
      const std::string what = e.what();
      const auto at = what.find("next connection attempt in ");
      if (at == std::string::npos) continue;  // an attempt was made (and failed)
      const auto ms = std::stoll(what.substr(at + 27));
      waits.push_back(ms);
      std::this_thread::sleep_for(std::chrono::milliseconds(ms + 5));  // to the next attempt
    }
  }
  ASSERT_EQ(waits.size(), 5u);
  for (auto ms : waits) EXPECT_LE(ms, 1'000);
  EXPECT_GT(waits[4], 500) << "it does back off";
}

TEST_F(DatabaseTest, EveryNewConnectionIsPrepared) {
  std::atomic<int> prepared{0};
  Database database(options_for(db_, 3), [&](pqxx::connection& c) {
    c.prepare("count_t", "SELECT count(*) FROM t");
    ++prepared;
  });
  std::vector<Database::Lease> leases;
  for (int i = 0; i < 3; ++i) leases.push_back(database.acquire());
  for (auto& lease : leases) {
    pqxx::work tx(lease.connection());
    EXPECT_EQ(tx.exec_prepared1("count_t")[0].as<int>(), 0);
  }
  EXPECT_EQ(prepared, 3);
}

TEST_F(DatabaseTest, StatementTimeoutEndsAStuckQuery) {
  auto o = options_for(db_);
  o.statement_timeout = 200ms;
  Database database(o);
  auto begin = std::chrono::steady_clock::now();
  EXPECT_THROW(database.read([](pqxx::read_transaction& tx) { return tx.exec("SELECT pg_sleep(5)").size(); }),
               pqxx::sql_error);
  EXPECT_LT(std::chrono::steady_clock::now() - begin, 4s);
}

TEST_F(DatabaseTest, StatementTimeoutHoldsWhenTheUrlHasOptionsOfItsOwn) {
  auto o = options_for(db_);
  o.url = with_connection_parameter(o.url, "options", "-c application_name=cw-test");
  o.statement_timeout = 200ms;
  Database database(o);
  const auto setting = database.read(
      [](pqxx::read_transaction& tx) { return tx.exec1("SHOW statement_timeout")[0].as<std::string>(); });
  EXPECT_EQ(setting, "200ms");
  // An operator's own setting in the string wins.
  auto own = options_for(db_);
  own.url = with_connection_parameter(own.url, "options", "-c statement_timeout=7s");
  own.statement_timeout = 200ms;
  Database theirs(own);
  EXPECT_EQ(theirs.read([](pqxx::read_transaction& tx) { return tx.exec1("SHOW statement_timeout")[0].as<std::string>(); }),
            "7s");
}

}  // namespace
}  // namespace cronwheel::admin
