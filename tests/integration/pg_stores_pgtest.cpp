#include <gtest/gtest.h>

#include <atomic>
#include <latch>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <pqxx/pqxx>

#include "admin/pg/database.h"
#include "admin/model/fire.h"
#include "admin/pg/pg_store_support.h"
#include "admin/pg/pg_stores.h"
#include "tests/support/fake_clock.h"
#include "tests/support/store_contract_tests.h"
#include "tests/support/migrated_database.h"
#include "tests/support/test_database.h"

namespace cronwheel::testing {
namespace {

using namespace std::chrono_literals;
using admin::Actor;
using admin::Conflict;

// PgStores on a fresh, migrated database, with time from a FakeClock.
class PgStoreFixture {
 public:
  explicit PgStoreFixture(std::size_t pool_size = 4)
      : migrated_(migrate_schema(db_)), database_(pool_options(db_, pool_size), &admin::PgStores::prepare), stores_(database_, clock_) {}

  admin::Stores stores() { return stores_.stores(); }
  FakeClock& clock() { return clock_; }
  admin::Database& database() { return database_; }
  const TestDatabase& test_database() const { return db_; }

  // Writes the row the way the scheduling core would, every column as given.
  admin::JobLog put_log(const admin::JobLog& l) {
    auto id = database_.transact([&](pqxx::work& tx) {
      return tx
          .exec_params1(
              "INSERT INTO job_log (job_group, job_id, state, trigger_type, scheduled_time, admin_node, "
              "executor_address, executor_handler, executor_param, shard_index, shard_total, "
              "executor_fail_retry_count, parent_log_id, trigger_time, trigger_code, trigger_msg, handle_time, "
              "handle_code, handle_msg, alarm_status) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, "
              "$13, " + admin::pg::ts("$14") + ", $15, $16, " + admin::pg::ts("$17") + ", $18, $19, $20) RETURNING id",
              l.job_group, l.job_id, admin::pg::text(l.state), admin::pg::text(l.trigger_type), l.scheduled_time, l.admin_node, l.executor_address,
              l.executor_handler, l.executor_param, l.shard_index, l.shard_total, l.executor_fail_retry_count,
              l.parent_log_id, l.trigger_time, l.trigger_code, l.trigger_msg, l.handle_time, l.handle_code, l.handle_msg,
              l.alarm_status)[0]
          .as<std::int64_t>();
    });
    return *stores_.logs().get(id);
  }

  void put_node(const admin::AdminNode& n, bool alive) {
    database_.transact([&](pqxx::work& tx) {
      tx.exec_params("INSERT INTO admin_node (node_id, address, version, started_at, heartbeat_at, lease_until) "
                     "VALUES ($1, $2, $3, " + admin::pg::ts("$4") + ", " + admin::pg::ts("$5") + ", CASE WHEN $6 "
                     "THEN now() + interval '1 hour' ELSE " + admin::pg::ts("$5") + " END)",
                     n.node_id, n.address, n.version, n.started_at, n.heartbeat_at, alive);
    });
  }
  void put_registration(const std::string& app, const std::string& address, std::int64_t age_ms,
                        const std::vector<std::string>& handlers = {},
                        std::optional<admin::ClockEstimate> clock = std::nullopt) {
    database_.transact([&](pqxx::work& tx) {
      tx.exec_params("INSERT INTO job_registry (registry_group, registry_key, registry_value, updated_at, handlers, "
                     "clock_offset_ms, clock_delay_ms) "
                     "VALUES ('EXECUTOR', $1, $2, now() - $3::bigint * interval '1 millisecond', $4::text[], $5, $6)",
                     app, address, age_ms, admin::pg::text_array(handlers),
                     clock ? std::optional<std::int64_t>(clock->offset_ms) : std::nullopt,
                     clock ? std::optional<std::int64_t>(clock->delay_ms) : std::nullopt);
    });
  }
  void put_last_scan(const admin::ScanMark& mark) {
    database_.transact([&](pqxx::work& tx) {
      tx.exec_params("UPDATE job_lock SET last_scan_node = $1, last_scan_at = " + admin::pg::ts("$2") +
                         " WHERE lock_name = 'schedule_lock'",
                     mark.node_id, mark.at);
    });
  }

  std::int64_t put_calendar(const std::string& name) {
    return database_.transact([&](pqxx::work& tx) {
      return tx.exec_params1("INSERT INTO calendar (name) VALUES ($1) RETURNING id", name)[0].as<std::int64_t>();
    });
  }

  // Runs SQL outside the stores (test setup and inspection).
  std::int64_t count(const std::string& sql) {
    return database_.read([&](pqxx::read_transaction& tx) { return tx.exec1(sql)[0].as<std::int64_t>(); });
  }
  void exec(const std::string& sql) {
    database_.transact([&](pqxx::work& tx) { tx.exec(sql); });
  }

 private:

  TestDatabase db_;
  bool migrated_;
  FakeClock clock_;
  admin::Database database_;
  admin::PgStores stores_;
};

}  // namespace

namespace store_contract {
INSTANTIATE_TYPED_TEST_SUITE_P(Pg, StoreContract, PgStoreFixture);
}  // namespace store_contract

namespace {

const Actor kSystem{std::nullopt, "system", ""};

TEST(PgStores, EnumerationColumnsAreReadByTheirSpellingAndAnUnknownOneIsNamed) {
  PgStoreFixture f;
  f.database().read([](pqxx::read_transaction& tx) {
    auto row = tx.exec1("SELECT 'triggered'::text AS state, 'RETRY'::text AS trigger_type,"
                        " 'FIX_DELAY'::text AS schedule_type, 'NEAREST'::text AS executor_route_strategy");
    EXPECT_EQ(admin::pg::enum_of<admin::FireState>(row["state"]), admin::FireState::kTriggered);
    EXPECT_EQ(admin::pg::enum_of<admin::TriggerType>(row["trigger_type"]), admin::TriggerType::kRetry);
    EXPECT_EQ(admin::pg::enum_of<admin::ScheduleType>(row["schedule_type"]), admin::ScheduleType::kFixDelay);
    // A value this build does not know (a newer schema's) is an error naming it, never a guess.
    try {
      (void)admin::pg::enum_of<admin::RouteStrategy>(row["executor_route_strategy"]);
      ADD_FAILURE() << "NEAREST was read as a route strategy";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "executor_route_strategy: unknown value 'NEAREST' in the database");
    }
    EXPECT_THROW((void)admin::pg::enum_of<admin::FireState>(row["trigger_type"]), std::runtime_error);
    return 0;
  });
}

TEST(PgStores, FieldsAreFoundByNameInAnyOrderAndWithinTheirSliceOfTheRow) {
  PgStoreFixture f;
  f.database().read([](pqxx::read_transaction& tx) {
    // A run's columns, then a job's under some of the same names, as trigger_load reads them.
    auto row = tx.exec1("SELECT 1 AS id, 'a' AS name, 2 AS job_id, 0 AS marker, 10 AS id, 'b' AS name, 'x' AS extra");
    admin::pg::Fields in_order(row);
    EXPECT_EQ(in_order["id"].as<int>(), 1);
    EXPECT_EQ(in_order["name"].as<std::string>(), "a");
    EXPECT_EQ(in_order["job_id"].as<int>(), 2);
    // Out of the select list's order: found by name, and reading goes on from there.
    admin::pg::Fields out_of_order(row);
    EXPECT_EQ(out_of_order["job_id"].as<int>(), 2);
    EXPECT_EQ(out_of_order["id"].as<int>(), 1);
    EXPECT_EQ(out_of_order["name"].as<std::string>(), "a");
    EXPECT_EQ(out_of_order["extra"].as<std::string>(), "x");
    // A slice sees its own columns only: the job's id, not the run's before it.
    const auto job = row.slice(4, row.size());
    admin::pg::Fields sliced(job);
    EXPECT_EQ(sliced["name"].as<std::string>(), "b");
    EXPECT_EQ(sliced["id"].as<int>(), 10);
    EXPECT_EQ(sliced["extra"].as<std::string>(), "x");
    EXPECT_THROW((void)sliced["job_id"], pqxx::argument_error);
    admin::pg::Fields missing(row);
    EXPECT_THROW((void)missing["no_such_column"], pqxx::argument_error);
    return 0;
  });
}

TEST(PgStores, ConcurrentCreatesOfOneAppNameLetExactlyOneSucceed) {
  constexpr int kThreads = 6;
  PgStoreFixture f(kThreads);
  for (int round = 0; round < 5; ++round) {
    const std::string name = "race-app-" + std::to_string(round);
    std::latch start(kThreads);
    std::atomic<int> created{0}, conflicts{0}, other{0};
    std::vector<std::jthread> threads;
    for (int i = 0; i < kThreads; ++i) {
      threads.emplace_back([&, i] {
        start.arrive_and_wait();
        try {
          f.stores().groups.create(store_contract::make_group(name, "Title " + std::to_string(i)), kSystem);
          ++created;
        } catch (const Conflict& e) {
          conflicts += e.field() == "appName" ? 1 : 0;
          other += e.field() == "appName" ? 0 : 1;
        } catch (...) {
          ++other;
        }
      });
    }
    threads.clear();  // joins
    EXPECT_EQ(created, 1) << name;
    EXPECT_EQ(conflicts, kThreads - 1) << name;
    EXPECT_EQ(other, 0) << name;
    EXPECT_EQ(f.count("SELECT count(*) FROM audit_log WHERE action = 'group.create' AND after->>'appName' = '" + name + "'"), 1);
  }
}

TEST(PgStores, GroupRemoveRacingAJobCreateNeverLeavesAJobWithoutItsGroup) {
  PgStoreFixture f(4);
  for (int round = 0; round < 10; ++round) {
    auto g = f.stores().groups.create(store_contract::make_group("group-" + std::to_string(round)), kSystem);
    std::latch start(2);
    std::jthread remover([&] {
      start.arrive_and_wait();
      try {
        f.stores().groups.remove(g.id, kSystem);
      } catch (const Conflict&) {
        // the job got in first
      }
    });
    std::jthread creator([&] {
      start.arrive_and_wait();
      try {
        f.stores().jobs.create(store_contract::make_job(g.id), kSystem);
      } catch (const Conflict& e) {
        EXPECT_EQ(e.field(), "jobGroup");
      }
    });
    remover.join();
    creator.join();
    const bool group_exists = f.stores().groups.get(g.id).has_value();
    admin::JobStore::Filter jobs;
    jobs.job_group = g.id;
    const bool job_exists = f.stores().jobs.list(jobs).total > 0;
    EXPECT_EQ(group_exists, job_exists) << "round " << round;
  }
}

// Two admins demoting or deleting each other at the same moment, on two connections: the
// last-admin check and the change are one transaction, serialised by locking the admin rows,
// so exactly one of the two goes through and an admin always remains.
TEST(PgStores, TwoAdminsRemovingEachOtherAtOnceAlwaysLeaveAnAdmin) {
  PgStoreFixture f(4);
  auto& users = f.stores().users;
  std::optional<admin::User> survivor;
  for (int round = 0; round < 60; ++round) {
    const auto tag = std::to_string(round);
    auto a = users.create(store_contract::make_user("a-" + tag, "admin"), kSystem);
    auto b = users.create(store_contract::make_user("b-" + tag, "admin"), kSystem);
    // Only a and b are admins when the race starts.
    if (survivor) users.remove(survivor->id, kSystem);

    // Round by round: demote/demote, delete/delete, demote/delete.
    auto take_away = [&](const admin::User& target, bool remove) {
      if (remove) {
        users.remove(target.id, kSystem);
      } else {
        auto demoted = target;
        demoted.role = "normal";
        demoted.password_hash = "";
        users.update(demoted, kSystem);
      }
    };
    const bool first_deletes = round % 3 == 1;
    const bool second_deletes = round % 3 != 0;
    std::latch start(2);
    std::atomic<int> done{0}, refused{0}, other{0};
    auto race = [&](const admin::User& target, bool remove) {
      start.arrive_and_wait();
      try {
        take_away(target, remove);
        ++done;
      } catch (const Conflict& e) {
        refused += e.field() == "role" ? 1 : 0;
        other += e.field() == "role" ? 0 : 1;
      } catch (...) {
        ++other;
      }
    };
    {
      std::jthread first([&] { race(b, first_deletes); });  // a's request, on b
      std::jthread second([&] { race(a, second_deletes); });  // b's request, on a
    }
    EXPECT_EQ(done, 1) << "round " << round;
    EXPECT_EQ(refused, 1) << "round " << round;
    EXPECT_EQ(other, 0) << "round " << round;
    ASSERT_EQ(f.count("SELECT count(*) FROM app_user WHERE role = 'admin'"), 1) << "round " << round;
    for (const auto& candidate : {a, b}) {
      auto now = users.get(candidate.id);
      if (now && now->is_admin()) survivor = now;
    }
    ASSERT_TRUE(survivor) << "round " << round;
  }
}

// A change and its audit entry commit together: when writing the entry fails, the change is
// rolled back too.
TEST(PgStores, AFailedAuditEntryRollsTheChangeBack) {
  PgStoreFixture f;
  auto g = f.stores().groups.create(store_contract::make_group("billing-app"), kSystem);
  auto j = f.stores().jobs.create(store_contract::make_job(g.id), kSystem);
  f.exec(R"sql(
    CREATE FUNCTION refuse_audit() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'audit refused'; END $$;
    CREATE TRIGGER refuse_audit BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION refuse_audit();
  )sql");
  const auto audited = f.count("SELECT count(*) FROM audit_log");

  EXPECT_THROW(f.stores().groups.create(store_contract::make_group("other-app"), kSystem), pqxx::sql_error);
  EXPECT_EQ(f.stores().groups.find_by_app_name("other-app"), std::nullopt);

  auto change = j;
  change.job_desc = "changed";
  EXPECT_THROW(f.stores().jobs.update(change, kSystem), pqxx::sql_error);
  EXPECT_THROW(f.stores().jobs.set_trigger_status(j.id, 1, 1, "job.start", kSystem), pqxx::sql_error);
  EXPECT_THROW(f.stores().scripts.save_version(j.id, "echo", "v1", kSystem), pqxx::sql_error);
  EXPECT_EQ(f.stores().jobs.get(j.id), j);
  EXPECT_TRUE(f.stores().scripts.versions(j.id).empty());

  EXPECT_THROW(f.stores().jobs.remove(j.id, kSystem), pqxx::sql_error);
  EXPECT_TRUE(f.stores().jobs.get(j.id).has_value());
  EXPECT_THROW(f.stores().users.create(store_contract::make_user("alice"), kSystem), pqxx::sql_error);
  EXPECT_EQ(f.stores().users.count(), 0);
  EXPECT_EQ(f.count("SELECT count(*) FROM audit_log"), audited);
}

// The reverse: a change that fails after its first statement leaves no audit entry and no part
// of itself.
TEST(PgStores, AChangeFailingHalfWayLeavesNeitherChangeNorAuditEntry) {
  PgStoreFixture f;
  auto g = f.stores().groups.create(store_contract::make_group("billing-app"), kSystem);
  auto j = f.stores().jobs.create(store_contract::make_job(g.id), kSystem);
  // Saving a version updates the job, then inserts the version: make the second step fail.
  f.exec(R"sql(
    CREATE FUNCTION refuse_version() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'version refused'; END $$;
    CREATE TRIGGER refuse_version BEFORE INSERT ON job_logglue FOR EACH ROW EXECUTE FUNCTION refuse_version();
  )sql");
  const auto audited = f.count("SELECT count(*) FROM audit_log");
  EXPECT_THROW(f.stores().scripts.save_version(j.id, "echo", "v1", kSystem), pqxx::sql_error);
  EXPECT_EQ(f.stores().jobs.get(j.id), j);
  EXPECT_EQ(f.count("SELECT count(*) FROM audit_log"), audited);

  // A user whose second group does not exist: the user row was inserted, then the grant failed.
  try {
    f.stores().users.create(store_contract::make_user("alice", "normal", {g.id, 999}), kSystem);
    FAIL() << "expected Conflict";
  } catch (const Conflict& e) {
    EXPECT_EQ(e.field(), "groups");
  }
  EXPECT_EQ(f.stores().users.count(), 0);
  EXPECT_EQ(f.count("SELECT count(*) FROM user_group"), 0);
  EXPECT_EQ(f.count("SELECT count(*) FROM audit_log"), audited);
}

TEST(PgStores, AuditBeforeAndAfterAreStoredAsJsonObjects) {
  PgStoreFixture f;
  auto g = f.stores().groups.create(store_contract::make_group("billing-app"), kSystem);
  auto change = g;
  change.title = "New";
  f.stores().groups.update(change, kSystem);
  EXPECT_EQ(f.count("SELECT count(*) FROM audit_log WHERE jsonb_typeof(after) = 'object'"), 2);
  EXPECT_EQ(f.count("SELECT count(*) FROM audit_log WHERE before->>'title' = 'Title' AND after->>'title' = 'New'"), 1);
}

TEST(PgStores, ListTotalsAreCountedUpToTheCapThenALowerBound) {
  PgStoreFixture f;
  auto g = f.stores().groups.create(store_contract::make_group("billing-app"), kSystem);
  const auto over = admin::kMaxCountedTotal + 5;
  f.database().transact([&](pqxx::work& tx) {
    tx.exec_params("INSERT INTO job_info (job_group, job_desc, executor_handler) "
                   "SELECT $1, 'job ' || i, CASE WHEN i % 1000 = 0 THEN 'rare' ELSE 'common' END "
                   "FROM generate_series(1, $2) i",
                   g.id, over);
  });
  admin::JobStore::Filter all;
  all.page = admin::PageRequest(0, 5);
  auto page = f.stores().jobs.list(all);
  EXPECT_EQ(page.items.size(), 5u);
  EXPECT_EQ(page.total, admin::kMaxCountedTotal);
  EXPECT_FALSE(page.total_exact);

  admin::JobStore::Filter rare;
  rare.text = "RARE";
  rare.page = admin::PageRequest(0, 5);
  auto few = f.stores().jobs.list(rare);
  EXPECT_EQ(few.total, over / 1000);
  EXPECT_TRUE(few.total_exact);
  ASSERT_TRUE(few.next);
  EXPECT_EQ(few.items.front().executor_handler, "rare");
}

TEST(PgStores, JobTextSearchFollowsEditsButNotFires) {
  PgStoreFixture f;
  auto g = f.stores().groups.create(store_contract::make_group("billing-app"), kSystem);
  auto job = f.stores().jobs.create(store_contract::make_job(g.id, "nightly report"), kSystem);
  auto found = [&](const std::string& text) {
    admin::JobStore::Filter filter;
    filter.text = text;
    return f.stores().jobs.list(filter).items.size();
  };
  EXPECT_EQ(found("NIGHTLY"), 1u);
  job.job_desc = "weekly digest";
  job.author = "ops team";
  f.stores().jobs.update(job, kSystem);
  EXPECT_EQ(found("nightly"), 0u);
  EXPECT_EQ(found("digest"), 1u);
  EXPECT_EQ(found("ops t"), 1u);
  EXPECT_EQ(found("REPORTHANDLER"), 1u);
  EXPECT_EQ(found("digestreport"), 0u);  // never across two fields
  EXPECT_EQ(found("50%"), 0u);           // % and _ are literal
  // One or two characters (looked up by substring, not trigram), in any case.
  EXPECT_EQ(found("Gd"), 0u);
  EXPECT_EQ(found("IG"), 1u);
  EXPECT_EQ(found("W"), 1u);
  EXPECT_EQ(found("%"), 0u);
  EXPECT_EQ(found("q"), 0u);
  // The scheduler's writes (next fire time) leave the searched copy alone: no trigger runs.
  const auto before = f.count("SELECT xmin::text::bigint FROM job_info_text WHERE job_id = " + std::to_string(job.id));
  f.database().transact([&](pqxx::work& tx) {
    tx.exec_params("UPDATE job_schedule SET trigger_last_time = 1, trigger_next_time = 2 WHERE job_id = $1", job.id);
  });
  EXPECT_EQ(f.count("SELECT xmin::text::bigint FROM job_info_text WHERE job_id = " + std::to_string(job.id)), before);
  f.stores().jobs.remove(job.id, kSystem);
  EXPECT_EQ(f.count("SELECT count(*) FROM job_info_text"), 0);
}

TEST(PgStores, JobCountsPerGroupFollowEveryChangeOfAJob) {
  PgStoreFixture f;
  auto a = f.stores().groups.create(store_contract::make_group("billing-app"), kSystem);
  auto b = f.stores().groups.create(store_contract::make_group("ledger-app"), kSystem);
  // job_count must always equal counting job_info.
  auto check = [&](const char* when) {
    EXPECT_EQ(f.count("SELECT count(*) FROM ((SELECT job_group, total, enabled FROM job_count WHERE total <> 0 OR "
                      "enabled <> 0) EXCEPT (SELECT job_group, count(*), count(*) FILTER (WHERE trigger_status = 1) "
                      "FROM job_info JOIN job_schedule ON job_id = id GROUP BY job_group)) differ"),
              0)
        << when;
    EXPECT_EQ(f.count("SELECT coalesce(sum(total), 0)::bigint FROM job_count"), f.count("SELECT count(*) FROM job_info"))
        << when;
  };
  auto one = f.stores().jobs.create(store_contract::make_job(a.id), kSystem);
  auto two = f.stores().jobs.create(store_contract::make_job(a.id), kSystem);
  check("created");
  f.stores().jobs.set_trigger_status(one.id, 1, 1'700'000'100'000, "job.start", kSystem);
  check("started");
  auto moved = *f.stores().jobs.get(one.id);
  moved.job_group = b.id;
  f.stores().jobs.update(moved, kSystem);
  check("moved to another group while scheduled");
  EXPECT_EQ(f.count("SELECT enabled FROM job_count WHERE job_group = " + std::to_string(b.id)), 1);
  // Moved and stopped in one change (job_info and job_schedule in one statement), then moved
  // back and started in one.
  auto both = *f.stores().jobs.get(one.id);
  both.job_group = a.id;
  both.trigger_status = 0;
  both.trigger_next_time = 0;
  f.stores().jobs.update(both, kSystem);
  check("moved and stopped at once");
  EXPECT_EQ(f.count("SELECT enabled FROM job_count WHERE job_group = " + std::to_string(b.id)), 0);
  both.job_group = b.id;
  both.trigger_status = 1;
  both.trigger_next_time = 1'700'000'100'000;
  f.stores().jobs.update(both, kSystem);
  check("moved back and started at once");
  EXPECT_EQ(f.count("SELECT enabled FROM job_count WHERE job_group = " + std::to_string(b.id)), 1);
  // What the scheduler writes: fire times (counts untouched), and a stop when no fire is left.
  f.exec("UPDATE job_schedule SET trigger_last_time = 5, trigger_next_time = 6 WHERE job_id = " + std::to_string(one.id));
  check("fire times advanced");
  f.exec("UPDATE job_schedule SET trigger_status = 0, trigger_next_time = 0 WHERE job_id = " + std::to_string(one.id));
  check("stopped by the scheduler");
  f.stores().jobs.remove(two.id, kSystem);
  check("deleted");
  // Bulk statements are counted once per statement, per group.
  f.exec("INSERT INTO job_info (job_group, job_desc, executor_handler, schedule_type, schedule_conf) "
         "SELECT CASE WHEN i % 3 = 0 THEN " + std::to_string(a.id) + " ELSE " + std::to_string(b.id) +
         " END, 'bulk ' || i, 'h', 'CRON', '0 * * * * ?' FROM generate_series(1, 3000) i");
  check("bulk insert, stopped");
  f.exec("UPDATE job_schedule s SET trigger_status = substr(j.job_desc, 6)::int % 2 FROM job_info j"
         " WHERE j.id = s.job_id AND j.job_desc LIKE 'bulk %'");
  check("bulk start");
  // Inserted with their schedules in one statement, as the job store writes a job.
  f.exec("WITH j AS (INSERT INTO job_info (job_group, job_desc, executor_handler, schedule_type, schedule_conf) "
         "SELECT " + std::to_string(b.id) + ", 'more ' || i, 'h', 'CRON', '0 * * * * ?' FROM generate_series(1, 10) i "
         "RETURNING id, job_group) INSERT INTO job_schedule (job_id, count_group, trigger_status, trigger_next_time) "
         "SELECT id, job_group, 1, 1 FROM j");
  check("inserted running");
  EXPECT_EQ(f.count("SELECT enabled FROM job_count WHERE job_group = " + std::to_string(b.id)), 1000 + 10);
  f.exec("DELETE FROM job_info WHERE job_desc LIKE 'more %'");
  check("deleted running");
  EXPECT_EQ(f.count("SELECT total FROM job_count WHERE job_group = " + std::to_string(a.id)), 1000);
  f.exec("DELETE FROM job_info WHERE job_desc LIKE 'bulk %' AND id IN (SELECT job_id FROM job_schedule WHERE trigger_status = 1)");
  check("bulk delete");
  f.exec("DELETE FROM job_info WHERE job_desc LIKE 'bulk %'");
  check("bulk delete of the rest");
  f.stores().jobs.remove(one.id, kSystem);
  f.stores().groups.remove(b.id, kSystem);
  check("group deleted");
  EXPECT_EQ(f.count("SELECT count(*) FROM job_count WHERE job_group = " + std::to_string(b.id)), 0);
}

TEST(PgStores, TextArraysKeepQuotesCommasAndBackslashes) {
  PgStoreFixture f;
  auto g = store_contract::make_group("billing-app");
  g.address_list = {"http://a:1/x,y", "say \"hi\"", "back\\slash", "{braces}", "NULL", ""};
  auto created = f.stores().groups.create(g, kSystem);
  EXPECT_EQ(created.address_list, g.address_list);
  EXPECT_EQ(f.stores().groups.get(created.id)->address_list, g.address_list);
}

// An operator's cancel of a pending fire is one of the ways a run ends, so it writes what the
// follow-up planner says (admin/model/run_end.h, kCancelled): a FIX_DELAY job waiting for this
// fire's end gets its next time (else it would wait forever), and nothing else follows: no
// retry, no child fire.
TEST(PgStores, GroupsOfRunsAreReadTogetherAndUnknownRunsLeftOut) {
  PgStoreFixture f;
  auto billing = f.stores().groups.create(store_contract::make_group("billing-app"), kSystem);
  auto mail = f.stores().groups.create(store_contract::make_group("mail-app"), kSystem);
  auto a = f.stores().jobs.create(store_contract::make_job(billing.id, "a"), kSystem);
  auto b = f.stores().jobs.create(store_contract::make_job(mail.id, "b"), kSystem);
  auto fire = [&](const admin::Job& job) {
    admin::JobLog l;
    l.job_id = job.id;
    l.trigger_type = admin::TriggerType::kManual;
    l.scheduled_time = 1'700'000'000'000;
    l.admin_node = "node-1";
    return f.stores().logs.create_fire(l, kSystem).id;
  };
  auto ra = fire(a), rb = fire(b);
  EXPECT_EQ(f.stores().logs.groups_of({rb, ra, rb + 1000}),
            (std::map<std::int64_t, std::int64_t>{{ra, billing.id}, {rb, mail.id}}));
  EXPECT_TRUE(f.stores().logs.groups_of({}).empty());
}

TEST(PgStores, CancelOfAPendingFireGivesAFixDelayJobItsNextTimeAndNothingElse) {
  PgStoreFixture f;
  auto g = f.stores().groups.create(store_contract::make_group("billing-app"), kSystem);
  auto child = f.stores().jobs.create(store_contract::make_job(g.id, "child"), kSystem);
  auto j = store_contract::make_job(g.id, "every 30 s after the last run");
  j.schedule_type = admin::ScheduleType::kFixDelay;
  j.schedule_conf = "30";
  j.executor_fail_retry_count = 2;
  j.child_job_ids = {child.id};
  auto job = f.stores().jobs.create(j, kSystem);
  f.exec("UPDATE job_schedule SET trigger_status = 1, trigger_next_time = " + std::to_string(admin::kAwaitingCompletion) +
         " WHERE job_id = " + std::to_string(job.id));
  f.clock().set_wall_ms(1'700'000'000'000);
  admin::JobLog fire;
  fire.job_id = job.id;
  fire.trigger_type = admin::TriggerType::kManual;
  fire.scheduled_time = 1'700'000'600'000;
  fire.admin_node = "node-1";
  fire.executor_fail_retry_count = 2;
  auto created = f.stores().logs.create_fire(fire, kSystem);

  f.clock().set_wall_ms(1'700'000'010'000);
  ASSERT_TRUE(f.stores().logs.cancel_pending(created.id, kSystem));
  EXPECT_EQ(f.stores().logs.get(created.id)->state, admin::FireState::kCancelled);
  EXPECT_EQ(f.stores().jobs.get(job.id)->trigger_next_time, 1'700'000'010'000 + 30'000);
  EXPECT_EQ(f.stores().jobs.get(job.id)->trigger_status, 1);
  EXPECT_EQ(f.count("SELECT count(*) FROM job_log"), 1);  // no retry, no child fire

  // A job that no longer waits for this fire (rescheduled, stopped) keeps what it has.
  f.exec("UPDATE job_schedule SET trigger_next_time = 1700000900000 WHERE job_id = " + std::to_string(job.id));
  auto second = f.stores().logs.create_fire(fire, kSystem);
  ASSERT_TRUE(f.stores().logs.cancel_pending(second.id, kSystem));
  EXPECT_EQ(f.stores().jobs.get(job.id)->trigger_next_time, 1'700'000'900'000);
}

TEST(PgStores, SessionsAndTokensStoreOnlyTheHash) {
  PgStoreFixture f;
  auto u = f.stores().users.create(store_contract::make_user("alice"), kSystem);
  f.stores().tokens.create(u.id, "ci", std::string(32, 'k'), std::nullopt, kSystem);
  f.stores().sessions.create({std::string(32, 's'), u.id, "csrf", f.clock().now_ms() + 60'000});
  EXPECT_EQ(f.count("SELECT count(*) FROM api_token WHERE token_hash = decode(repeat('6b', 32), 'hex')"), 1);
  EXPECT_EQ(f.count("SELECT count(*) FROM user_session WHERE token_hash = decode(repeat('73', 32), 'hex')"), 1);
}

}  // namespace
}  // namespace cronwheel::testing
