// PgCompletionStore and PgRegistryStore on a fresh PostgreSQL database: results counted once
// under concurrency, follow-ups written with them, the lost-result rules with the database's
// clock, and registry refreshes.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <latch>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <pqxx/pqxx>

#include "admin/complete/completion.h"
#include "admin/server/executor_side.h"
#include "admin/model/fire.h"
#include "admin/pg/database.h"
#include "admin/pg/migrator.h"
#include "admin/pg/pg_completion_store.h"
#include "admin/pg/pg_registry_store.h"
#include "admin/pg/pg_store_support.h"
#include "admin/pg/pg_stores.h"
#include "tests/support/fake_clock.h"
#include "tests/support/test_database.h"

namespace cronwheel::admin {
namespace {

using namespace std::chrono_literals;
using Outcome = Completion::Outcome;

constexpr const char* kExecutor = "http://127.0.0.1:9999/";
const Actor kSystem{std::nullopt, "system", ""};

class CompletionPg : public ::testing::Test {
 protected:
  CompletionPg()
      : migrated_(migrate(db_)),
        database_(options(db_),
                  [](pqxx::connection& c) {
                    PgStores::prepare(c);
                    ExecutorSide::prepare(c);
                  }),
        stores_(database_, clock_),
        registry_(database_),
        store_(database_),
        completion_(store_, clock_, Completion::Options{"node-a", {}}) {
    Group g;
    g.app_name = "demo-app";
    g.title = "Demo";
    group_ = stores_.groups().create(g, kSystem).id;
  }

  static bool migrate(const testing::TestDatabase& db) {
    pqxx::connection c(db.url());
    Migrator().migrate(c);
    return true;
  }
  static Database::Options options(const testing::TestDatabase& db) {
    Database::Options o;
    o.url = db.url();
    o.pool_size = 8;
    return o;
  }

  Job make_job(const std::string& desc, std::vector<std::int64_t> children = {}, int retry_interval = 0) {
    Job j;
    j.job_group = group_;
    j.job_desc = desc;
    j.schedule_type = ScheduleType::kCron;
    j.schedule_conf = "0 * * * * ?";
    j.executor_handler = desc + "-handler";
    j.child_job_ids = std::move(children);
    j.retry_interval = retry_interval;
    return stores_.jobs().create(j, kSystem);
  }

  // A run as the scheduling core leaves it: sent to kExecutor at `trigger_time`.
  JobLog make_run(const Job& job, int retries = 0, FireState state = FireState::kTriggered,
                  std::optional<std::int64_t> trigger_time = std::nullopt) {
    const auto sent = trigger_time.value_or(clock_.now_ms());
    auto id = database_.transact([&](pqxx::work& tx) {
      return tx
          .exec_params1("INSERT INTO job_log (job_group, job_id, state, trigger_type, scheduled_time, admin_node, "
                        "executor_address, executor_handler, executor_fail_retry_count, trigger_time, trigger_code) "
                        "VALUES ($1, $2, $3, 'MANUAL', $4, 'node-b', $5, $6, $7, " + pg::ts("$8") +
                            ", 200) RETURNING id",
                        job.job_group, job.id, admin::pg::text(state), clock_.now_ms(), kExecutor, job.executor_handler, retries,
                        sent)[0]
          .as<std::int64_t>();
    });
    return *stores_.logs().get(id);
  }

  std::int64_t count(const std::string& sql) {
    return database_.read([&](pqxx::read_transaction& tx) { return tx.exec1(sql)[0].as<std::int64_t>(); });
  }
  void exec(const std::string& sql) {
    database_.transact([&](pqxx::work& tx) { tx.exec(sql); });
  }
  JobLog log(std::int64_t id) { return *stores_.logs().get(id); }

  static common::protocol::HandleCallbackParam callback(std::int64_t log_id, int code, std::string msg = "") {
    common::protocol::HandleCallbackParam c;
    c.log_id = log_id;
    c.handle_code = code;
    c.handle_msg = std::move(msg);
    return c;
  }

  // Runs `fn(i)` on `n` threads released at the same instant.
  template <class F>
  static void race(int n, F fn) {
    std::latch start(n);
    std::vector<std::jthread> threads;
    for (int i = 0; i < n; ++i) {
      threads.emplace_back([&, i] {
        start.arrive_and_wait();
        fn(i);
      });
    }
  }

  testing::TestDatabase db_;
  bool migrated_;
  testing::FakeClock clock_;
  Database database_;
  PgStores stores_;
  PgRegistryStore registry_;
  PgCompletionStore store_;
  Completion completion_;
  std::int64_t group_ = 0;
};

TEST_F(CompletionPg, ConcurrentDuplicateSuccessesRecordOneTransitionAndFireChildrenOnce) {
  auto b = make_job("child-b");
  auto c = make_job("child-c");
  auto parent = make_job("parent", {b.id, c.id});
  constexpr int kRuns = 15;
  std::vector<JobLog> runs;
  for (int i = 0; i < kRuns; ++i) runs.push_back(make_run(parent));

  for (const auto& run : runs) {
    std::atomic<int> recorded{0}, duplicates{0};
    race(2, [&](int i) {
      auto outcome = completion_.report(callback(run.id, 200, "thread " + std::to_string(i)));
      (outcome == Outcome::kRecorded ? recorded : duplicates) += 1;
    });
    EXPECT_EQ(recorded.load(), 1) << run.id;
    EXPECT_EQ(duplicates.load(), 1) << run.id;
    EXPECT_EQ(count("SELECT count(*) FROM job_log WHERE parent_log_id = " + std::to_string(run.id)), 2) << run.id;
  }
  EXPECT_EQ(count("SELECT count(*) FROM job_log WHERE trigger_type = 'PARENT' AND job_id = " + std::to_string(b.id)),
            kRuns);
  EXPECT_EQ(count("SELECT count(*) FROM job_log WHERE trigger_type = 'PARENT' AND state = 'pending' "
                  "AND admin_node = 'node-a' AND job_id = " + std::to_string(c.id)),
            kRuns);
}

TEST_F(CompletionPg, ConcurrentDuplicateFailuresFireOneRetry) {
  auto job = make_job("flaky", {}, 60);
  constexpr int kRuns = 15;
  for (int i = 0; i < kRuns; ++i) {
    auto run = make_run(job, 3);
    std::atomic<int> recorded{0};
    race(3, [&](int) { recorded += completion_.report(callback(run.id, 500, "boom")) == Outcome::kRecorded; });
    EXPECT_EQ(recorded.load(), 1);
    auto retries = database_.read([&](pqxx::read_transaction& tx) {
      return tx.exec_params("SELECT executor_fail_retry_count, scheduled_time FROM job_log WHERE parent_log_id = $1",
                            run.id);
    });
    ASSERT_EQ(retries.size(), 1u);
    EXPECT_EQ(retries[0][0].as<int>(), 2);
    EXPECT_EQ(retries[0][1].as<std::int64_t>(), clock_.now_ms() + 60'000);
  }
}

TEST_F(CompletionPg, SuccessRacingFailureRecordsOneAndOnlyItsFollowUps) {
  auto child = make_job("child");
  auto job = make_job("parent", {child.id});
  for (int i = 0; i < 10; ++i) {
    auto run = make_run(job, 1);
    race(2, [&](int t) { completion_.report(callback(run.id, t == 0 ? 200 : 500)); });
    const auto state = log(run.id).state;
    const auto children = count("SELECT count(*) FROM job_log WHERE trigger_type = 'PARENT' AND parent_log_id = " +
                                std::to_string(run.id));
    const auto retries = count("SELECT count(*) FROM job_log WHERE trigger_type = 'RETRY' AND parent_log_id = " +
                               std::to_string(run.id));
    if (state == FireState::kSucceeded) {
      EXPECT_EQ(children, 1);
      EXPECT_EQ(retries, 0);
    } else {
      EXPECT_EQ(state, FireState::kFailed);
      EXPECT_EQ(children, 0);
      EXPECT_EQ(retries, 1);
    }
  }
}

TEST_F(CompletionPg, ResultIsRecordedExactlyAsReported) {
  auto run = make_run(make_job("job"), 0, FireState::kSending);
  clock_.advance(1234ms);

  ASSERT_EQ(completion_.report(callback(run.id, 502, "timeout after 5 s")), Outcome::kRecorded);

  auto after = log(run.id);
  EXPECT_EQ(after.state, FireState::kFailed);
  EXPECT_EQ(after.handle_code, 502);
  EXPECT_EQ(after.handle_msg, "timeout after 5 s");
  EXPECT_EQ(after.handle_time, clock_.now_ms());
  EXPECT_EQ(completion_.report(callback(run.id, 200)), Outcome::kDuplicate);
  EXPECT_EQ(completion_.report(callback(run.id + 1000, 200)), Outcome::kUnknownLog);
  auto pending = make_run(make_job("idle"), 0, FireState::kPending);
  EXPECT_EQ(completion_.report(callback(pending.id, 200)), Outcome::kNotRunning);
}

// A callback batch is one transaction, and each result in it is taken as report() takes it
// alone: its follow-ups, a duplicate in the same batch, unknown and not-running runs.
TEST_F(CompletionPg, ABatchOfResultsIsRecordedAsEachWouldBeAlone) {
  auto child = make_job("child");
  auto parent = make_job("parent", {child.id});
  auto flaky = make_job("flaky", {}, 60);
  Job j;
  j.job_group = group_;
  j.job_desc = "fix-delay";
  j.schedule_type = ScheduleType::kFixDelay;
  j.schedule_conf = "15";
  j.executor_handler = "h";
  j.trigger_status = 1;
  j.trigger_next_time = kAwaitingCompletion;
  auto delayed = stores_.jobs().create(j, kSystem);
  auto ok = make_run(parent);
  auto failed = make_run(flaky, 2, FireState::kSending);
  auto done = make_run(delayed);
  auto pending = make_run(parent, 0, FireState::kPending);
  auto earlier = make_run(parent);
  ASSERT_EQ(completion_.report(callback(earlier.id, 200)), Outcome::kRecorded);
  std::atomic<int> woken{0};
  Completion completion(store_, clock_, Completion::Options{"node-a", [&] { ++woken; }});
  clock_.advance(500ms);

  auto outcomes = completion.report_all({callback(ok.id, 200, "fine"), callback(failed.id, 500, "boom"),
                                         callback(ok.id, 500, "again"), callback(done.id, 200),
                                         callback(pending.id, 200), callback(earlier.id, 200),
                                         callback(ok.id + 100'000, 200), callback(0, 200)});

  EXPECT_EQ(outcomes, (std::vector<Outcome>{Outcome::kRecorded, Outcome::kRecorded, Outcome::kDuplicate,
                                            Outcome::kRecorded, Outcome::kNotRunning, Outcome::kDuplicate,
                                            Outcome::kUnknownLog, Outcome::kUnknownLog}));
  auto after = log(ok.id);
  EXPECT_EQ(after.state, FireState::kSucceeded);
  EXPECT_EQ(after.handle_msg, "fine");
  EXPECT_EQ(after.handle_time, clock_.now_ms());
  EXPECT_EQ(log(failed.id).state, FireState::kFailed);
  EXPECT_EQ(log(failed.id).handle_code, 500);
  EXPECT_EQ(log(pending.id).state, FireState::kPending);
  EXPECT_EQ(count("SELECT count(*) FROM job_log WHERE trigger_type = 'PARENT' AND parent_log_id = " +
                  std::to_string(ok.id) + " AND job_id = " + std::to_string(child.id)),
            1);
  EXPECT_EQ(count("SELECT count(*) FROM job_log WHERE trigger_type = 'RETRY' AND executor_fail_retry_count = 1"
                  " AND parent_log_id = " + std::to_string(failed.id)),
            1);
  EXPECT_EQ(stores_.jobs().get(delayed.id)->trigger_next_time, clock_.now_ms() + 15'000);
  EXPECT_EQ(woken.load(), 1);
  auto counters = completion.counters();
  EXPECT_EQ(counters.recorded, 3);
  EXPECT_EQ(counters.duplicates, 2);
  EXPECT_EQ(counters.not_running, 1);
  EXPECT_EQ(counters.unknown, 2);
  EXPECT_EQ(counters.child_fires, 1);
  EXPECT_EQ(counters.retry_fires, 1);
}

TEST_F(CompletionPg, ABatchThatCannotBeWrittenRecordsNoneOfIt) {
  auto job = make_job("job");
  auto first = make_run(job);
  auto second = make_run(job);
  // The second result's row cannot take its message (a constraint added for the test): the
  // batch's transaction fails, and the first result is not kept either.
  exec("ALTER TABLE job_log_finished ADD CONSTRAINT no_poison CHECK (handle_msg <> 'poison')");
  EXPECT_ANY_THROW(completion_.report_all({callback(first.id, 200, "fine"), callback(second.id, 200, "poison")}));
  EXPECT_EQ(log(first.id).state, FireState::kTriggered);
  EXPECT_EQ(log(second.id).state, FireState::kTriggered);
  exec("ALTER TABLE job_log_finished DROP CONSTRAINT no_poison");
  EXPECT_EQ(completion_.report_all({callback(first.id, 200, "fine"), callback(second.id, 200, "x")}),
            (std::vector<Outcome>{Outcome::kRecorded, Outcome::kRecorded}));
}

TEST_F(CompletionPg, MissingChildJobsAreSkipped) {
  auto child = make_job("child");
  auto gone = make_job("gone");
  auto parent = make_job("parent", {gone.id, child.id});
  stores_.jobs().remove(gone.id, kSystem);
  auto run = make_run(parent);

  ASSERT_EQ(completion_.report(callback(run.id, 200)), Outcome::kRecorded);

  EXPECT_EQ(count("SELECT count(*) FROM job_log WHERE trigger_type = 'PARENT'"), 1);
  EXPECT_EQ(count("SELECT job_id FROM job_log WHERE trigger_type = 'PARENT'"), child.id);
}

TEST_F(CompletionPg, FixDelayNextTimeIsWrittenOnlyWhileTheJobRunsAndAwaitsCompletion) {
  Job j;
  j.job_group = group_;
  j.job_desc = "fix-delay";
  j.schedule_type = ScheduleType::kFixDelay;
  j.schedule_conf = "15";
  j.executor_handler = "h";
  j.trigger_status = 1;
  j.trigger_next_time = kAwaitingCompletion;
  auto job = stores_.jobs().create(j, kSystem);
  auto first = make_run(job);
  auto second = make_run(job);

  completion_.report(callback(first.id, 200));
  const auto next = stores_.jobs().get(job.id)->trigger_next_time;
  EXPECT_EQ(next, clock_.now_ms() + 15'000);

  clock_.advance(2s);
  completion_.report(callback(second.id, 200));
  EXPECT_EQ(stores_.jobs().get(job.id)->trigger_next_time, next);

  // Stopped while its run was under way: the stop stands.
  exec("UPDATE job_schedule SET trigger_status = 0, trigger_next_time = 0 WHERE job_id = " + std::to_string(job.id));
  auto third = make_run(job);
  completion_.report(callback(third.id, 200));
  EXPECT_EQ(stores_.jobs().get(job.id)->trigger_next_time, 0);
}

TEST_F(CompletionPg, LostCandidatesAreOldRunsOfExecutorsWithoutALiveRegistration) {
  const auto old = clock_.now_ms() - 11 * 60'000;
  auto job = make_job("long");
  auto lost = make_run(job, 0, FireState::kTriggered, old);
  auto recent = make_run(job, 0, FireState::kTriggered, clock_.now_ms());
  const auto before = clock_.now_ms() - 10 * 60'000;

  auto candidates = store_.lost_candidates(before, 90'000, 100);
  ASSERT_EQ(candidates.size(), 1u);
  EXPECT_EQ(candidates[0].id, lost.id);

  // Registered (without the trailing slash): alive.
  registry_.upsert("EXECUTOR", "demo-app", "http://127.0.0.1:9999");
  EXPECT_TRUE(store_.lost_candidates(before, 90'000, 100).empty());
  // The registration is 2 minutes old by the database's clock: dead.
  exec("UPDATE job_registry SET updated_at = now() - interval '2 minutes'");
  ASSERT_EQ(store_.lost_candidates(before, 90'000, 100).size(), 1u);

  ASSERT_EQ(completion_.mark_lost(candidates[0], before, 90'000, 10min), Outcome::kRecorded);
  auto after = log(lost.id);
  EXPECT_EQ(after.state, FireState::kLost);
  EXPECT_EQ(after.handle_code, 500);
  EXPECT_EQ(after.handle_msg, "result lost: executor http://127.0.0.1:9999/ has not been registered for 10 minutes");
  EXPECT_EQ(log(recent.id).state, FireState::kTriggered);
  EXPECT_TRUE(store_.lost_candidates(before, 90'000, 100).empty());
}

TEST_F(CompletionPg, AVerdictOnARunWhoseExecutorCameBackChangesNothing) {
  auto run = make_run(make_job("long"), 0, FireState::kTriggered, clock_.now_ms() - 20 * 60'000);
  const auto before = clock_.now_ms() - 10 * 60'000;
  auto candidates = store_.lost_candidates(before, 90'000, 10);
  ASSERT_EQ(candidates.size(), 1u);
  registry_.upsert("EXECUTOR", "demo-app", kExecutor);

  EXPECT_EQ(completion_.mark_lost(candidates[0], before, 90'000, 10min), Outcome::kNotRunning);
  EXPECT_EQ(log(run.id).state, FireState::kTriggered);
}

TEST_F(CompletionPg, LostVerdictRacingACallbackRecordsOne) {
  auto job = make_job("long");
  const auto before = clock_.now_ms() - 10 * 60'000;
  for (int i = 0; i < 10; ++i) {
    auto run = make_run(job, 0, FireState::kTriggered, clock_.now_ms() - 20 * 60'000);
    std::atomic<int> recorded{0};
    race(2, [&](int t) {
      auto outcome = t == 0 ? completion_.mark_lost(run, before, 90'000, 10min)
                            : completion_.report(callback(run.id, 200));
      recorded += outcome == Outcome::kRecorded;
    });
    EXPECT_EQ(recorded.load(), 1);
    EXPECT_TRUE(log(run.id).state == FireState::kLost || log(run.id).state == FireState::kSucceeded);
  }
}

// ---------------------------------------------------------------------------------------------
// Registry

class RegistryPg : public CompletionPg {
 protected:
  std::int64_t make_group(const std::string& app, int type, std::vector<std::string> addresses) {
    Group g;
    g.app_name = app;
    g.title = app;
    g.address_type = type;
    g.address_list = std::move(addresses);
    return stores_.groups().create(g, kSystem).id;
  }
  Group group(std::int64_t id) { return *stores_.groups().get(id); }
};

TEST_F(RegistryPg, RefreshUpdatesAutomaticGroupsOnlyAndRemovesDeadEntries) {
  const auto fresh = make_group("fresh-app", 0, {});
  const auto stale = make_group("stale-app", 0, {"http://10.0.0.8:9999/"});
  const auto manual = make_group("manual-app", 1, {"http://10.0.0.9:9999/"});
  registry_.upsert("EXECUTOR", "fresh-app", "http://b.example:9999/");
  registry_.upsert("EXECUTOR", "fresh-app", "http://B.example:9999/");
  registry_.upsert("EXECUTOR", "fresh-app", "http://dead.example:9999/");
  registry_.upsert("EXECUTOR", "manual-app", "http://10.0.0.7:9999/");
  registry_.upsert("EXECUTOR", "stale-app", "http://10.0.0.8:9999/");
  exec("UPDATE job_registry SET updated_at = now() - interval '91 seconds' "
       "WHERE registry_value IN ('http://dead.example:9999/', 'http://10.0.0.8:9999/')");
  const auto manual_before = group(manual);

  EXPECT_EQ(registry_.refresh(90'000), 2);

  EXPECT_EQ(group(fresh).address_list,
            (std::vector<std::string>{"http://B.example:9999/", "http://b.example:9999/"}))
      << "byte order";
  EXPECT_TRUE(group(stale).address_list.empty());
  EXPECT_EQ(group(manual), manual_before);
  EXPECT_EQ(count("SELECT count(*) FROM job_registry"), 3) << "the dead entries are deleted";
  EXPECT_EQ(count("SELECT count(*) FROM job_registry WHERE registry_value LIKE '%dead%'"), 0);
  EXPECT_EQ(registry_.refresh(90'000), 0) << "nothing changed since";
}

TEST_F(RegistryPg, UpsertRenewsAndSaysWhetherItWasNewAndRemoveWhetherThereWasOne) {
  EXPECT_TRUE(registry_.upsert("EXECUTOR", "demo-app", kExecutor)) << "first registration";
  exec("UPDATE job_registry SET updated_at = now() - interval '5 minutes'");
  EXPECT_TRUE(registry_.live_addresses("demo-app", 90'000).empty());

  EXPECT_FALSE(registry_.upsert("EXECUTOR", "demo-app", kExecutor)) << "a heartbeat renews the row";
  EXPECT_EQ(registry_.live_addresses("demo-app", 90'000), (std::vector<std::string>{kExecutor}));
  EXPECT_EQ(count("SELECT count(*) FROM job_registry"), 1);

  EXPECT_TRUE(registry_.remove("EXECUTOR", "demo-app", kExecutor));
  EXPECT_FALSE(registry_.remove("EXECUTOR", "demo-app", kExecutor));
  EXPECT_TRUE(registry_.live(90'000).empty());
  EXPECT_TRUE(registry_.upsert("EXECUTOR", "demo-app", kExecutor)) << "new again after its removal";
}

TEST_F(RegistryPg, ACappedRegistrationIsRefusedBeyondTheGroupsLiveExecutorsButRenewsAlways) {
  using Registered = RegistryStore::Registered;
  const std::vector<std::string> none;
  EXPECT_EQ(registry_.register_capped("EXECUTOR", "capped-app", "http://a/", {"echo"}, std::nullopt, 2, 90'000), Registered::kNew);
  EXPECT_EQ(registry_.register_capped("EXECUTOR", "capped-app", "http://b/", none, std::nullopt, 2, 90'000), Registered::kNew);
  EXPECT_EQ(registry_.register_capped("EXECUTOR", "capped-app", "http://c/", none, std::nullopt, 2, 90'000), Registered::kFull);
  auto live = registry_.live(90'000);
  ASSERT_EQ(live.size(), 2u);
  EXPECT_EQ(live[0].handlers, std::vector<std::string>{"echo"});
  // A renewal replaces the handler names with the ones it says.
  EXPECT_EQ(registry_.register_capped("EXECUTOR", "capped-app", "http://a/", {"echo", "shell"}, std::nullopt, 2, 90'000),
            Registered::kRenewed);
  EXPECT_EQ(registry_.live(90'000)[0].handlers, (std::vector<std::string>{"echo", "shell"}));
  EXPECT_EQ(registry_.register_capped("EXECUTOR", "other-app", "http://c/", none, std::nullopt, 2, 90'000), Registered::kNew);
  EXPECT_EQ(count("SELECT count(*) FROM job_registry WHERE registry_key = 'capped-app'"), 2);
  // A dead registration leaves room; a dead one of the same address comes back to life.
  exec("UPDATE job_registry SET updated_at = now() - interval '5 minutes' WHERE registry_value = 'http://b/'");
  EXPECT_EQ(registry_.register_capped("EXECUTOR", "capped-app", "http://c/", none, std::nullopt, 2, 90'000), Registered::kNew);
  EXPECT_EQ(registry_.register_capped("EXECUTOR", "capped-app", "http://b/", none, std::nullopt, 2, 90'000), Registered::kRenewed);
}

TEST_F(RegistryPg, ARegistrationKeepsTheClockEstimateItLastSaid) {
  const std::vector<std::string> none;
  registry_.register_capped("EXECUTOR", "clock-app", "http://a/", none, std::nullopt, 2, 90'000);
  EXPECT_EQ(registry_.live(90'000)[0].clock, std::nullopt) << "a first registration has measured nothing";
  registry_.register_capped("EXECUTOR", "clock-app", "http://a/", none, ClockEstimate{-1'234, 6}, 2, 90'000);
  EXPECT_EQ(registry_.live(90'000)[0].clock, (ClockEstimate{-1'234, 6}));
  registry_.register_capped("EXECUTOR", "clock-app", "http://a/", none, ClockEstimate{86'400'000, 0}, 2, 90'000);
  EXPECT_EQ(registry_.live(90'000)[0].clock, (ClockEstimate{86'400'000, 0}));
  registry_.register_capped("EXECUTOR", "clock-app", "http://a/", none, ClockEstimate{3, 1, true}, 2, 90'000);
  EXPECT_EQ(registry_.live(90'000)[0].clock, (ClockEstimate{3, 1, true})) << "it takes lead dispatch";
  registry_.register_capped("EXECUTOR", "clock-app", "http://a/", none, ClockEstimate{3, 1, false}, 2, 90'000);
  EXPECT_EQ(registry_.live(90'000)[0].clock, (ClockEstimate{3, 1, false})) << "and no longer";
  registry_.register_capped("EXECUTOR", "clock-app", "http://a/", none, std::nullopt, 2, 90'000);
  EXPECT_EQ(registry_.live(90'000)[0].clock, std::nullopt) << "an executor that says none now (XXL-JOB's) has none";
}

TEST_F(RegistryPg, CappedRegistrationsAtOnceFromManyThreadsStayWithinTheCap) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 5; ++i) {
        registry_.register_capped("EXECUTOR", "crowded-app",
                                  "http://10.0." + std::to_string(t) + "." + std::to_string(i) + ":9999/", {}, std::nullopt, 10,
                                  90'000);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(count("SELECT count(*) FROM job_registry WHERE registry_key = 'crowded-app'"), 10);
}

TEST_F(RegistryPg, LiveListsEveryRegistrationByKeyThenValue) {
  registry_.upsert("EXECUTOR", "zeta-app", "http://a/");
  registry_.upsert("EXECUTOR", "alpha-app", "http://c/");
  registry_.upsert("EXECUTOR", "alpha-app", "http://b/");
  registry_.upsert("ADMIN", "admins", "http://admin/");

  auto live = registry_.live(90'000);

  ASSERT_EQ(live.size(), 4u);
  EXPECT_EQ(live[0].registry_key, "admins");
  EXPECT_EQ(live[1].registry_value, "http://b/");
  EXPECT_EQ(live[2].registry_value, "http://c/");
  EXPECT_EQ(live[3].registry_key, "zeta-app");
  EXPECT_GT(live[0].updated_at, 0);
  EXPECT_TRUE(registry_.live_addresses("admins", 90'000).empty()) << "addresses are executors'";
}

TEST_F(RegistryPg, AnUnknownRegistryGroupIsAConflict) {
  EXPECT_THROW(registry_.upsert("WORKER", "demo-app", kExecutor), Conflict);
}

TEST_F(RegistryPg, ConcurrentRefreshesWhileExecutorsRegisterNeverFail) {
  for (int g = 0; g < 6; ++g) make_group("race-app-" + std::to_string(g), 0, {});
  std::atomic<int> failures{0};
  race(4, [&](int t) {
    for (int i = 0; i < 15; ++i) {
      try {
        if (t < 2) {
          registry_.refresh(90'000);
        } else {
          registry_.upsert("EXECUTOR", "race-app-" + std::to_string(i % 6), "http://10.0.0." + std::to_string(t) + ":9999/");
        }
      } catch (const std::exception& e) {
        ++failures;
        ADD_FAILURE() << e.what();
      }
    }
  });
  EXPECT_EQ(failures.load(), 0);
  registry_.refresh(90'000);
  for (int g = 0; g < 6; ++g) {
    auto found = stores_.groups().find_by_app_name("race-app-" + std::to_string(g));
    EXPECT_EQ(found->address_list.size(), 2u);
  }
}

}  // namespace
}  // namespace cronwheel::admin
