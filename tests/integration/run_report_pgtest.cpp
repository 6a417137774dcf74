// job_run_report on a fresh PostgreSQL database (sql/0005_run_report.sql, docs/run-report.md):
// every path that finishes a run counts it once, through the stores' own statements; paths
// that finish nothing count nothing; deleting runs leaves the report alone; the migration
// counts the runs that finished before it.

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include <cstdint>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "admin/scheduler/fire_decision.h"
#include "admin/pg/database.h"
#include "admin/pg/migrations.h"
#include "admin/pg/migrator.h"
#include "admin/pg/pg_completion_store.h"
#include "admin/pg/pg_schedule_store.h"
#include "admin/pg/pg_store_support.h"
#include "admin/pg/pg_stores.h"
#include "admin/pg/pg_trigger_store.h"
#include "tests/support/fake_clock.h"
#include "tests/support/test_database.h"

namespace cronwheel::admin {
namespace {

const Actor kSystem{std::nullopt, "system", ""};
constexpr const char* kNode = "node-a";
constexpr const char* kExecutor = "http://127.0.0.1:9999/";
// 2023-11-14T22:00:00Z: the hour of the fixtures' clock.
constexpr std::int64_t kHour = 1'699'999'200'000;
constexpr std::int64_t kQuarter = 900'000;

struct Counts {
  std::int64_t succeeded = 0;
  std::int64_t failed = 0;
  friend bool operator==(const Counts&, const Counts&) = default;
};
std::ostream& operator<<(std::ostream& os, const Counts& c) {
  return os << "{succeeded " << c.succeeded << ", failed " << c.failed << "}";
}

class RunReportPg : public ::testing::Test {
 protected:
  RunReportPg()
      : migrated_(migrate(db_)),
        database_(options(db_),
                  [](pqxx::connection& c) {
                    PgStores::prepare(c);
                    PgCompletionStore::prepare(c);
                    PgTriggerStore::prepare(c);
                    PgScheduleStore::prepare(c);
                  }),
        stores_(database_, clock_),
        completions_(database_),
        triggers_(database_),
        schedules_(database_) {
    Group g;
    g.app_name = "demo-app";
    g.title = "Demo";
    group_ = stores_.groups().create(g, kSystem).id;
    Job j;
    j.job_group = group_;
    j.job_desc = "report";
    j.schedule_type = ScheduleType::kCron;
    j.schedule_conf = "0 * * * * ?";
    j.executor_handler = "reportHandler";
    job_ = stores_.jobs().create(j, kSystem).id;
  }

  static bool migrate(const testing::TestDatabase& db) {
    pqxx::connection c(db.url());
    Migrator().migrate(c);
    return true;
  }
  static Database::Options options(const testing::TestDatabase& db) {
    Database::Options o;
    o.url = db.url();
    o.pool_size = 2;
    return o;
  }

  // A row as the scheduling core leaves it in `state`, scheduled at `at`.
  std::int64_t run(FireState state, std::int64_t at, TriggerType trigger_type = TriggerType::kManual) {
    return database_.transact([&](pqxx::work& tx) {
      return tx
          .exec_params1("INSERT INTO job_log (job_group, job_id, state, trigger_type, scheduled_time, admin_node, "
                        "executor_address, trigger_time) VALUES ($1, $2, $3::text, $4, $5, $6, $7, CASE WHEN $3::text IN "
                        "('pending', 'cancelled') THEN NULL ELSE " + pg::ts("$5") + " END) RETURNING id",
                        group_, job_, admin::pg::text(state), admin::pg::text(trigger_type), at, kNode, kExecutor)[0]
          .as<std::int64_t>();
    });
  }

  // The report's counts of the group, or of one quarter hour [at, at + 15 min) of it.
  Counts report(std::optional<std::int64_t> quarter_at = std::nullopt) {
    return database_.read([&](pqxx::read_transaction& tx) {
      auto r = tx.exec_params1(
          "SELECT coalesce(sum(CASE q.n WHEN 0 THEN succeeded_00 WHEN 1 THEN succeeded_15 WHEN 2 THEN succeeded_30 "
          "ELSE succeeded_45 END), 0), coalesce(sum(CASE q.n WHEN 0 THEN failed_00 WHEN 1 THEN failed_15 WHEN 2 "
          "THEN failed_30 ELSE failed_45 END), 0) FROM job_run_report r CROSS JOIN (VALUES (0), (1), (2), (3)) q(n) "
          "WHERE r.job_group = $1 AND ($2::bigint IS NULL OR "
          "extract(epoch FROM r.hour)::bigint * 1000 + q.n * 900000 = $2)",
          group_, quarter_at);
      return Counts{r[0].as<std::int64_t>(), r[1].as<std::int64_t>()};
    });
  }
  std::int64_t report_rows() {
    return database_.read([&](pqxx::read_transaction& tx) {
      // Buckets, whatever the slots their counts went to.
      return tx.exec1("SELECT count(DISTINCT (hour, job_group)) FROM job_run_report")[0].as<std::int64_t>();
    });
  }
  void exec(const std::string& sql) {
    database_.transact([&](pqxx::work& tx) { tx.exec(sql); });
  }

  CompletionStore::Recorded complete(std::int64_t id, FireState state) {
    RunResult result;
    result.log_id = id;
    result.state = state;
    result.handle_time = clock_.now_ms();
    result.handle_code = state == FireState::kSucceeded ? 200 : 500;
    if (state == FireState::kLost) {
      result.lost_triggered_before = clock_.now_ms() + 3'600'000;
      result.lost_dead_after_ms = 90'000;
    }
    return completions_.record(result, [](const JobLog&, const Job&, const std::vector<Job>&) { return FollowUps{}; });
  }

  testing::TestDatabase db_;
  bool migrated_;
  testing::FakeClock clock_;
  Database database_;
  PgStores stores_;
  PgCompletionStore completions_;
  PgTriggerStore triggers_;
  PgScheduleStore schedules_;
  std::int64_t group_ = 0;
  std::int64_t job_ = 0;
};

TEST_F(RunReportPg, ResultsCountOnceEvenWhenRepeated) {
  auto ok = run(FireState::kTriggered, kHour + 1);
  auto bad = run(FireState::kSending, kHour + kQuarter);  // the result beat the answer to /run
  EXPECT_EQ(complete(ok, FireState::kSucceeded).status, CompletionStore::Status::kRecorded);
  EXPECT_EQ(complete(bad, FireState::kFailed).status, CompletionStore::Status::kRecorded);
  EXPECT_EQ(report(), (Counts{1, 1}));
  EXPECT_EQ(complete(ok, FireState::kSucceeded).status, CompletionStore::Status::kAlreadyFinal);
  EXPECT_EQ(complete(ok, FireState::kFailed).status, CompletionStore::Status::kAlreadyFinal);
  // The trigger's answer arriving after the result rewrites the finished row, not its state.
  EXPECT_EQ(triggers_.record_triggered(bad, kNode, "accepted late"), TriggerStore::Recorded::kResultFirst);
  EXPECT_EQ(report(), (Counts{1, 1}));
  EXPECT_EQ(report(kHour), (Counts{1, 0}));
  EXPECT_EQ(report(kHour + kQuarter), (Counts{0, 1}));
}

// Two sessions finishing runs of the same group and hour at once: the second does not wait for
// the first's commit (each adds to its own slot's row), and the report holds both.
TEST_F(RunReportPg, SessionsFinishingRunsOfOneBucketAtOnceDoNotWaitForEachOther) {
  const auto first_run = run(FireState::kTriggered, kHour + 1);
  const auto second_run = run(FireState::kTriggered, kHour + 2);
  pqxx::connection first(db_.url());
  // A second session in another slot (pg_backend_pid() % 8): open until one is.
  const auto slot_of = [](pqxx::connection& c) { return c.backendpid() % 8; };
  std::vector<std::unique_ptr<pqxx::connection>> tried;
  pqxx::connection* second = nullptr;
  while (second == nullptr && tried.size() < 64) {
    tried.push_back(std::make_unique<pqxx::connection>(db_.url()));
    if (slot_of(*tried.back()) != slot_of(first)) second = tried.back().get();
  }
  ASSERT_NE(second, nullptr);
  pqxx::work held(first);
  held.exec_params("UPDATE job_log SET state = 'succeeded', handle_time = now(), handle_code = 200 WHERE id = $1",
                   first_run);
  {
    pqxx::work other(*second);
    other.exec("SET LOCAL lock_timeout = '2s'");  // waiting for `held` would fail here
    other.exec_params("UPDATE job_log SET state = 'succeeded', handle_time = now(), handle_code = 200 WHERE id = $1",
                      second_run);
    other.commit();
  }
  held.commit();
  EXPECT_EQ(report(), (Counts{2, 0}));
  EXPECT_EQ(report_rows(), 1);
}

TEST_F(RunReportPg, ALostResultCountsAsAFailure) {
  auto id = run(FireState::kTriggered, kHour + 2 * kQuarter);
  EXPECT_EQ(complete(id, FireState::kLost).status, CompletionStore::Status::kRecorded);
  EXPECT_EQ(report(kHour + 2 * kQuarter), (Counts{0, 1}));
  EXPECT_EQ(complete(id, FireState::kLost).status, CompletionStore::Status::kAlreadyFinal);
  EXPECT_EQ(report(), (Counts{0, 1}));
}

TEST_F(RunReportPg, FailedTriggersCountAsFailures) {
  auto refused = run(FireState::kSending, kHour + 3 * kQuarter);
  auto unroutable = run(FireState::kPending, kHour + 3 * kQuarter + 1);
  TriggerStore::Failure f;
  f.log_id = refused;
  f.node_id = kNode;
  f.from = FireState::kSending;
  f.now = clock_.now_ms();
  f.trigger_msg = "executor refused";
  EXPECT_EQ(triggers_.record_failed(f, admin::follow_ups_of(admin::RunEnd::kTriggerFailed, f.now, kNode)).recorded, TriggerStore::Recorded::kRecorded);
  f.log_id = unroutable;
  f.from = FireState::kPending;
  f.trigger_msg = "no executor address";
  f.executor_handler = "reportHandler";
  EXPECT_EQ(triggers_.record_failed(f, admin::follow_ups_of(admin::RunEnd::kTriggerFailed, f.now, kNode)).recorded, TriggerStore::Recorded::kRecorded);
  EXPECT_EQ(triggers_.record_failed(f, admin::follow_ups_of(admin::RunEnd::kTriggerFailed, f.now, kNode)).recorded, TriggerStore::Recorded::kNotOurs);
  EXPECT_EQ(report(kHour + 3 * kQuarter), (Counts{0, 2}));
}

TEST_F(RunReportPg, ABatchOfFailedFiresIsCountedInOneStatement) {
  std::vector<std::int64_t> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(run(FireState::kPending, kHour + i));
  ids.push_back(run(FireState::kPending, kHour + 2 * kQuarter));
  std::string list;
  for (auto id : ids) list += (list.empty() ? "" : ",") + std::to_string(id);
  // One statement moving many runs to a final state, as the fire path's batches do.
  const std::string fail = "UPDATE job_log SET state = 'failed', trigger_time = now(), trigger_code = 500"
                           " WHERE state = 'pending' AND id IN (" + list + ")";
  exec(fail);
  EXPECT_EQ(report(kHour), (Counts{0, 5}));
  EXPECT_EQ(report(kHour + 2 * kQuarter), (Counts{0, 1}));
  EXPECT_EQ(report_rows(), 1);  // one hour of one group
  exec(fail);  // moves nothing
  EXPECT_EQ(report(), (Counts{0, 6}));
}

// A fire whose delivery is unknown has not ended: it counts once its result (or its loss) is in.
TEST_F(RunReportPg, DeliveryUnknownCountsOnlyOnceTheRunEnds) {
  auto taken_over = run(FireState::kSending, kHour + 1);
  EXPECT_TRUE(schedules_.resolve_sending(taken_over, kNode, ScheduleStore::Delivery::kUnknown, "delivery unknown"));
  auto sent = run(FireState::kSending, kHour + 2);
  EXPECT_EQ(triggers_.record_unconfirmed(sent, kNode, "delivery unknown"), TriggerStore::Recorded::kRecorded);
  EXPECT_EQ(report(), (Counts{0, 0}));
  EXPECT_EQ(complete(taken_over, FireState::kSucceeded).status, CompletionStore::Status::kRecorded);
  EXPECT_EQ(complete(sent, FireState::kLost).status, CompletionStore::Status::kRecorded);
  EXPECT_EQ(report(), (Counts{1, 1}));
}

TEST_F(RunReportPg, FiresThatNeverRanCountNothing) {
  auto late = run(FireState::kPending, kHour + 1, TriggerType::kSchedule);
  run(FireState::kPending, kHour + 2, TriggerType::kManual);
  auto takeover = schedules_.take_over({kNode}, "node-b");
  ASSERT_EQ(takeover.pending.size(), 2u);
  EXPECT_EQ(schedules_.cancel_pending({{late, "misfire"}}, "node-b",
                                      admin::follow_ups_of(admin::RunEnd::kMisfireSkipped, clock_.now_ms(), "node-b")),
            std::vector<std::int64_t>{late});
  EXPECT_TRUE(stores_.logs().cancel_pending(takeover.pending.at(1).fire.log_id, kSystem));
  auto sent = run(FireState::kPending, kHour + 3);
  exec("UPDATE job_log SET state = 'sending', trigger_time = now() WHERE id = " + std::to_string(sent));
  exec("UPDATE job_log SET state = 'triggered' WHERE id = " + std::to_string(sent));
  EXPECT_EQ(report(), Counts{});
  EXPECT_EQ(report_rows(), 0);
}

TEST_F(RunReportPg, FinishedRowsInsertedAsSuchCount) {
  run(FireState::kSucceeded, kHour + 1);
  run(FireState::kFailed, kHour + 2);
  run(FireState::kLost, kHour + 3);
  run(FireState::kCancelled, kHour + 4);
  EXPECT_EQ(report(), (Counts{1, 2}));
}

TEST_F(RunReportPg, DeletingRunsLeavesTheReportAlone) {
  for (int i = 0; i < 4; ++i) complete(run(FireState::kTriggered, kHour + i * kQuarter), i % 2 == 0 ? FireState::kSucceeded : FireState::kFailed);
  const Counts before = report();
  ASSERT_EQ(before, (Counts{2, 2}));
  LogStore::ClearRequest clear;
  clear.job_id = job_;
  clear.keep = 1;
  EXPECT_EQ(stores_.logs().clear(clear, kSystem), 3);
  EXPECT_EQ(report(), before);
  exec("DELETE FROM job_log");
  EXPECT_EQ(report(), before);
  stores_.jobs().remove(job_, kSystem);
  EXPECT_EQ(report(), before);
}

TEST_F(RunReportPg, ARowLeavingAFinishedStateTakesItsCountBack) {
  // No path does this; the rule still keeps the report equal to what the rows say.
  auto id = run(FireState::kSucceeded, kHour + 1);
  exec("UPDATE job_log SET state = 'failed' WHERE id = " + std::to_string(id));
  EXPECT_EQ(report(), (Counts{0, 1}));
  exec("UPDATE job_log SET scheduled_time = scheduled_time + 3600000 WHERE id = " + std::to_string(id));
  EXPECT_EQ(report(kHour), Counts{});
  EXPECT_EQ(report(kHour + 3'600'000), (Counts{0, 1}));
}

TEST_F(RunReportPg, OneStatementOverManyGroupsAndHoursUpsertsEachBucketOnce) {
  Group other;
  other.app_name = "other-app";
  other.title = "Other";
  const auto other_group = stores_.groups().create(other, kSystem).id;
  exec("INSERT INTO job_log (job_group, job_id, state, trigger_type, scheduled_time, admin_node, trigger_time) "
       "SELECT CASE WHEN g % 2 = 0 THEN " + std::to_string(group_) + " ELSE " + std::to_string(other_group) +
       " END, " + std::to_string(job_) + ", 'triggered', 'MANUAL', " + std::to_string(kHour) +
       " + (g % 3) * 3600000 + g, 'node-a', now() FROM generate_series(1, 600) g");
  exec("UPDATE job_log SET state = CASE WHEN id % 5 = 0 THEN 'failed' ELSE 'succeeded' END, handle_time = now(), "
       "handle_code = 200 WHERE state = 'triggered'");
  EXPECT_EQ(report_rows(), 6);  // 2 groups × 3 hours
  auto total = database_.read([&](pqxx::read_transaction& tx) {
    return tx.exec1("SELECT sum(succeeded_00 + succeeded_15 + succeeded_30 + succeeded_45), "
                    "sum(failed_00 + failed_15 + failed_30 + failed_45) FROM job_run_report");
  });
  EXPECT_EQ(total[0].as<std::int64_t>(), 480);
  EXPECT_EQ(total[1].as<std::int64_t>(), 120);
}

TEST_F(RunReportPg, EveryScanRecordsItsNodeOnTheLockRow) {
  EXPECT_EQ(stores_.overview().nodes().last_scan, std::nullopt);
  auto nothing = [](const std::vector<DueJob>&) { return ScanDecision{}; };
  const auto db_now = [&] {
    return database_.read([&](pqxx::read_transaction& tx) {
      return tx.exec1("SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint")[0].as<std::int64_t>();
    });
  };
  const auto t0 = db_now();
  schedules_.scan(kNode, 0, 10, nothing);  // finds nothing due: still a scan
  auto first = stores_.overview().nodes().last_scan;
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->node_id, kNode);
  EXPECT_GE(first->at, t0);
  EXPECT_LE(first->at, db_now());
  schedules_.scan("node-b", 0, 10, nothing);
  auto second = stores_.overview().nodes().last_scan;
  EXPECT_EQ(second->node_id, "node-b");
  EXPECT_GE(second->at, first->at);
}

TEST(RunReportMigration, CountsTheRunsThatFinishedBeforeIt) {
  testing::TestDatabase db;
  pqxx::connection c(db.url());
  auto before = embedded_migrations();
  ASSERT_GE(before.size(), 5u);
  ASSERT_EQ(before[4].name, "0005_run_report.sql");
  before.resize(4);
  Migrator(before).migrate(c);
  {
    pqxx::work tx(c);
    tx.exec("INSERT INTO job_group (app_name, title) VALUES ('demo-app', 'Demo')");
    tx.exec("INSERT INTO job_info (job_group, job_desc, executor_handler) VALUES (1, 'report', 'h')");
    tx.exec("INSERT INTO job_log (job_group, job_id, state, trigger_type, scheduled_time, admin_node, trigger_time) "
            "SELECT 1, 1, (ARRAY['succeeded', 'failed', 'lost', 'triggered', 'pending'])[g % 5 + 1], 'MANUAL', " +
            std::to_string(kHour) + " + g * 60000, 'n', now() FROM generate_series(0, 99) g");
    tx.commit();
  }
  Migrator().migrate(c);
  pqxx::work tx(c);
  auto r = tx.exec1("SELECT sum(succeeded_00 + succeeded_15 + succeeded_30 + succeeded_45), "
                    "sum(failed_00 + failed_15 + failed_30 + failed_45), sum(failed_00) FILTER (WHERE hour = "
                    "to_timestamp(" + std::to_string(kHour / 1000) + ")) FROM job_run_report");
  EXPECT_EQ(r[0].as<std::int64_t>(), 20);
  EXPECT_EQ(r[1].as<std::int64_t>(), 40);
  // 22:00 .. 22:14 (g 0..14): failed g%5 = 1, lost g%5 = 2 → 6 in the first quarter.
  EXPECT_EQ(r[2].as<std::int64_t>(), 6);
}

}  // namespace
}  // namespace cronwheel::admin
