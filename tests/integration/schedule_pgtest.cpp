// The deciding and timing side on a real PostgreSQL: scans racing under the lock row never
// decide a fire twice and together decide every due one; a job stopped during a scan keeps its
// stop; a dead node's fires are taken over exactly once by nodes racing for them; late pending
// fires, taken over or a restarted node's own, follow their jobs' misfire strategies; sending
// fires are resolved by asking the executor; leases follow the database's clock.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <latch>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <pqxx/pqxx>

#include "admin/scheduler/calendar_cache.h"
#include "admin/scheduler/fire_decision.h"
#include "admin/scheduler/fire_takeover.h"
#include "admin/scheduler/pending_feeder.h"
#include "admin/pg/database.h"
#include "admin/pg/pg_alarm_store.h"
#include "admin/pg/pg_apply_store.h"
#include "admin/pg/pg_calendar_store.h"
#include "admin/pg/pg_node_store.h"
#include "admin/pg/pg_schedule_store.h"
#include "admin/pg/pg_store_support.h"
#include "admin/pg/pg_stores.h"
#include "common/timer/hierarchical_wheel_timer.h"
#include "common/timer/recurring_task.h"
#include "tests/support/fake_clock.h"
#include "tests/support/fake_executor_client.h"
#include "tests/support/migrated_database.h"
#include "tests/support/test_database.h"

namespace cronwheel::testing {
namespace {

using admin::Actor;
using admin::DueJob;
using admin::Job;
using admin::JobLog;
using admin::PendingFire;
using admin::ScanDecision;
using admin::ScheduleStore;

constexpr std::int64_t kBase = 1'700'000'040'000;  // on a minute boundary
const Actor kSystem{std::nullopt, "system", ""};

void prepare(pqxx::connection& c) {
  admin::PgStores::prepare(c);
  admin::PgScheduleStore::prepare(c);
  admin::PgNodeStore::prepare(c);
  admin::PgCalendarStore::prepare(c);
  admin::PgAlarmStore::prepare(c);
  admin::PgApplyStore::prepare(c);
}

// A fresh migrated database with the stores this side uses and the REST API's stores to set up
// groups and jobs.
class ScheduleDb {
 public:
  explicit ScheduleDb(std::size_t pool = 6)
      : migrated_(migrate_schema(db_)), database_(pool_options(db_, pool), &prepare), stores_(database_, clock_),
        schedule_(database_), nodes_(database_) {
    admin::Group g;
    g.app_name = "sched-test";
    g.title = "Scheduling";
    g.address_type = 1;
    g.address_list = {"http://127.0.0.1:9999/"};
    group_ = stores_.groups().create(g, kSystem);
  }

  // A job, then its running state written as the scheduler would find it.
  Job job(admin::ScheduleType type, std::string conf, std::int64_t next, admin::MisfireStrategy misfire = admin::MisfireStrategy::kDoNothing) {
    Job j;
    j.job_group = group_.id;
    j.job_desc = "job";
    j.schedule_type = type;
    j.schedule_conf = std::move(conf);
    j.misfire_strategy = misfire;
    j.executor_handler = "echo";
    j.executor_param = "param";
    j.executor_fail_retry_count = 3;
    j = stores_.jobs().create(j, kSystem);
    return stores_.jobs().set_trigger_status(j.id, 1, next, "job.start", kSystem);
  }
  JobLog put_log(const Job& job, admin::FireState state, std::int64_t at, const std::string& node,
                 admin::TriggerType type = admin::TriggerType::kSchedule, const std::string& address = "") {
    auto id = database_.transact([&](pqxx::work& tx) {
      return tx
          .exec_params1("INSERT INTO job_log (job_group, job_id, state, trigger_type, scheduled_time, admin_node, "
                        "executor_address, trigger_time) VALUES ($1, $2, $3::text, $4, $5, $6, $7, "
                        "CASE WHEN $3::text IN ('pending', 'cancelled') THEN NULL ELSE now() END) RETURNING id",
                        job.job_group, job.id, admin::pg::text(state), admin::pg::text(type), at, node, address)[0]
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

  admin::Database& database() { return database_; }
  const std::string& url() const { return db_.url(); }
  const admin::Group& group() const { return group_; }
  admin::PgStores& stores() { return stores_; }
  admin::PgScheduleStore& schedule() { return schedule_; }
  admin::PgNodeStore& nodes() { return nodes_; }
  FakeClock& clock() { return clock_; }

 private:

  TestDatabase db_;
  bool migrated_;
  FakeClock clock_{kBase};
  admin::Database database_;
  admin::PgStores stores_;
  admin::PgScheduleStore schedule_;
  admin::PgNodeStore nodes_;
  admin::Group group_;
};

ScheduleStore::Decide decide_at(std::int64_t now) {
  return [now](const std::vector<DueJob>& due) { return admin::decide_fires(due, now); };
}

TEST(SchedulePg, ScanWritesPendingFiresWithTheJobsRunSettingsAndAdvancesTheJob) {
  ScheduleDb db;
  auto job = db.job(admin::ScheduleType::kCron, "* * * * * ?", kBase);
  auto result = db.schedule().scan("node-a", kBase + 5000, 100, decide_at(kBase));
  EXPECT_EQ(result.jobs_read, 1u);
  ASSERT_EQ(result.fires.size(), 6u);
  for (std::size_t i = 0; i < result.fires.size(); ++i) {
    const auto& f = result.fires[i];
    EXPECT_EQ(f.job_id, job.id);
    EXPECT_EQ(f.scheduled_time, kBase + static_cast<std::int64_t>(i) * 1000);
    auto row = *db.stores().logs().get(f.log_id);
    EXPECT_EQ(row.state, admin::FireState::kPending);
    EXPECT_EQ(row.trigger_type, admin::TriggerType::kSchedule);
    EXPECT_EQ(row.admin_node, std::optional<std::string>("node-a"));
    EXPECT_EQ(row.job_group, job.job_group);
    EXPECT_EQ(row.executor_handler, "echo");
    EXPECT_EQ(row.executor_param, "param");
    EXPECT_EQ(row.executor_fail_retry_count, 3);
  }
  auto after = *db.stores().jobs().get(job.id);
  EXPECT_EQ(after.trigger_last_time, kBase + 5000);
  EXPECT_EQ(after.trigger_next_time, kBase + 6000);
  EXPECT_EQ(after.trigger_status, 1);

  // Nothing more is due in that window.
  auto again = db.schedule().scan("node-b", kBase + 5000, 100, decide_at(kBase));
  EXPECT_EQ(again.jobs_read, 0u);
}

// After an outage (the database, or every admin, away for ten minutes) the first scan finds
// jobs missed by far more than the window. Each job whose misfire strategy skips fires gets
// exactly one run row saying so (cancelled, MISFIRE, at the first skipped time, with the count
// and range), written with the job's advance; the next scan writes none; the logs list shows
// them like any run.
TEST(SchedulePg, ScanAfterAnOutageRecordsTheSkippedFiresOncePerJob) {
  ScheduleDb db;
  using admin::MisfireStrategy;
  using admin::ScheduleType;
  const std::int64_t now = kBase + 600'000;  // 2023-11-14T22:24:00Z; kBase is 22:14:00Z
  auto every_second = db.job(ScheduleType::kCron, "* * * * * ?", kBase, MisfireStrategy::kDoNothing);
  auto catch_up = db.job(ScheduleType::kCron, "* * * * * ?", kBase, MisfireStrategy::kFireOnceNow);
  auto every_ten = db.job(ScheduleType::kCron, "*/10 * * * * ?", kBase, MisfireStrategy::kDoNothing);
  auto on_time = db.job(ScheduleType::kCron, "0 * * * * ?", now, MisfireStrategy::kDoNothing);

  auto result = db.schedule().scan("node-a", now + 5000, 100, decide_at(now));
  EXPECT_EQ(result.jobs_read, 4u);
  EXPECT_EQ(result.misfire_records, 3u);
  // Sent: FIRE_ONCE_NOW's one fire, the window after now of both every-second jobs, on_time's.
  EXPECT_EQ(result.fires.size(), 1u + 5 + 5 + 1);
  for (const auto& f : result.fires) EXPECT_EQ(db.stores().logs().get(f.log_id)->state, admin::FireState::kPending);

  auto records_of = [&](const Job& job) {
    admin::LogStore::Filter filter;
    filter.job_id = job.id;
    filter.page.limit = 100;
    std::vector<JobLog> out;
    for (const auto& l : db.stores().logs().list(filter).items) {
      if (l.state == admin::FireState::kCancelled) out.push_back(l);
    }
    return out;
  };
  const std::string threshold = "missed by more than the misfire threshold of 5000 ms (the scan ran at "
                                "2023-11-14T22:24:00+00:00); ";
  auto skipped = records_of(every_second);
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped[0].trigger_type, admin::TriggerType::kMisfire);
  EXPECT_EQ(skipped[0].scheduled_time, kBase);
  EXPECT_EQ(skipped[0].admin_node, std::optional<std::string>("node-a"));
  EXPECT_FALSE(skipped[0].trigger_time);
  EXPECT_EQ(skipped[0].trigger_msg, "misfire: 601 fires skipped, scheduled from 2023-11-14T22:14:00+00:00 to "
                                    "2023-11-14T22:24:00+00:00: " + threshold +
                                    "the job's misfire strategy DO_NOTHING skips the fires it missed");
  auto coalesced = records_of(catch_up);
  ASSERT_EQ(coalesced.size(), 1u);
  EXPECT_EQ(coalesced[0].trigger_type, admin::TriggerType::kMisfire);
  EXPECT_EQ(coalesced[0].scheduled_time, kBase + 1000);  // the fire sent is the MISFIRE row at kBase
  EXPECT_EQ(coalesced[0].trigger_msg,
            "misfire: 600 fires coalesced into the fire scheduled at 2023-11-14T22:14:00+00:00, scheduled from "
            "2023-11-14T22:14:01+00:00 to 2023-11-14T22:24:00+00:00: " + threshold +
            "the job's misfire strategy FIRE_ONCE_NOW sends one fire for all it missed");
  EXPECT_EQ(db.count("SELECT count(*) FROM job_log WHERE state = 'pending' AND trigger_type = 'MISFIRE'"
                     " AND scheduled_time = " + std::to_string(kBase) + " AND job_id = " + std::to_string(catch_up.id)),
            1);
  auto tens = records_of(every_ten);
  ASSERT_EQ(tens.size(), 1u);
  EXPECT_EQ(tens[0].trigger_msg.rfind("misfire: 61 fires skipped, scheduled from 2023-11-14T22:14:00+00:00 to "
                                      "2023-11-14T22:24:00+00:00: ", 0),
            0u)
      << tens[0].trigger_msg;
  EXPECT_TRUE(records_of(on_time).empty());

  // The next scans find the jobs on time: no more records.
  for (std::int64_t at : {now + 1000, now + 6000}) {
    auto next = db.schedule().scan("node-b", at + 5000, 100, decide_at(at));
    EXPECT_EQ(next.misfire_records, 0u);
  }
  EXPECT_EQ(db.count("SELECT count(*) FROM job_log WHERE state = 'cancelled'"), 3);

  // In the logs list like any run: under "all", and under none of the status filters.
  admin::LogStore::Filter all;
  all.job_id = every_second.id;
  all.from = kBase;
  all.to = kBase + 1;
  auto listed = db.stores().logs().list(all);
  ASSERT_EQ(listed.items.size(), 1u);
  EXPECT_EQ(listed.items[0].id, skipped[0].id);
  using Status = admin::LogStore::Filter::Status;
  for (Status status : {Status::kSuccess, Status::kFailure, Status::kRunning, Status::kPending}) {
    auto filtered = all;
    filtered.status = status;
    EXPECT_TRUE(db.stores().logs().list(filtered).items.empty());
  }
  all.status = Status::kCancelled;  // what an operator looks for after an outage
  listed = db.stores().logs().list(all);
  ASSERT_EQ(listed.items.size(), 1u);
  EXPECT_EQ(listed.items[0].id, skipped[0].id);
}

// kBase is 2023-11-14T22:14:00Z: a calendar excluding that day, first, then not.
TEST(SchedulePg, AJobGoesByTheVersionOfItsCalendarTheScanReadAndWaitsOneScanForANewOne) {
  ScheduleDb db;
  admin::PgCalendarStore calendars(db.database(), db.clock());
  admin::Calendar c;
  c.name = "closing-day";
  c.dates.push_back({{2023, 11, 14, "Closing Day"}, false, "", ""});
  c = calendars.create(c, kSystem);
  auto job = db.job(admin::ScheduleType::kCron, "* * * * * ?", kBase);
  job.calendar = {c.id, common::CalendarMode::kSkip};
  job = db.stores().jobs().update(job, kSystem);
  admin::CalendarCache cache(calendars);
  std::vector<DueJob> seen;
  auto scan = [&] {
    std::vector<std::int64_t> wanted;
    auto result = db.schedule().scan("node-a", kBase + 5000, 100, [&](const std::vector<DueJob>& due) {
      seen = due;
      auto decided = admin::decide_fires(due, kBase, admin::kPreReadWindowMs, cache.calendars());
      wanted = decided.calendars_wanted;
      return decided;
    });
    cache.load(wanted);  // after the commit, as the schedule thread does
    return result;
  };

  // The first scan has no calendar yet: the job is left as it was.
  EXPECT_TRUE(scan().fires.empty());
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].calendar_id, c.id);
  EXPECT_EQ(seen[0].calendar_mode, common::CalendarMode::kSkip);
  EXPECT_EQ(seen[0].calendar_version, 1);
  EXPECT_EQ(db.stores().jobs().get(job.id)->trigger_next_time, kBase);
  // The next one has it: the day is passed over without a run, to the next day's first second.
  EXPECT_TRUE(scan().fires.empty());
  EXPECT_EQ(db.stores().jobs().get(job.id)->trigger_next_time, 1'700'006'400'000);  // 2023-11-15T00:00:00Z
  EXPECT_EQ(db.count("SELECT count(*) FROM job_log WHERE job_id = " + std::to_string(job.id)), 0);

  // The day taken out of the calendar (version 2) and the job due again: one scan waits for the
  // new version, the next fires the window.
  c.dates.clear();
  c = calendars.update(c, kSystem);
  EXPECT_EQ(c.version, 2);
  db.stores().jobs().set_trigger_status(job.id, 1, kBase, "job.start", kSystem);
  EXPECT_TRUE(scan().fires.empty());
  EXPECT_EQ(seen[0].calendar_version, 2);
  EXPECT_EQ(scan().fires.size(), 6u);
}

TEST(SchedulePg, PreReadIsAnIndexScanOfTheDueJobsIndex) {
  ScheduleDb db;
  db.job(admin::ScheduleType::kCron, "* * * * * ?", kBase);
  auto plan = db.database().transact([](pqxx::work& tx) {
    // One job: the planner would rather read the tiny tables whole.
    tx.exec("SET LOCAL enable_seqscan = off");
    tx.exec("SET LOCAL enable_bitmapscan = off");
    tx.exec_prepared("sched_due", kBase, 10);  // prepared on first use
    std::string text;
    for (const auto& row : tx.exec("EXPLAIN EXECUTE sched_due(" + std::to_string(kBase) + ", 10)")) {
      text += row[0].as<std::string>() + "\n";
    }
    return text;
  });
  // The due index (sql/0031_job_schedule_hot.sql) up to the window's last slot.
  EXPECT_NE(plan.find("Index Scan using job_schedule_due"), std::string::npos) << plan;
  EXPECT_NE(plan.find("Index Cond: (due_slot <= "), std::string::npos) << plan;
}

TEST(SchedulePg, TwoScanLoopsRacingNeverDecideAFireTwiceAndTogetherDecideEveryDueFire) {
  constexpr int kJobs = 40;
  constexpr int kScansEach = 30;
  ScheduleDb db(8);
  for (int i = 0; i < kJobs; ++i) db.job(admin::ScheduleType::kCron, i % 2 == 0 ? "* * * * * ?" : "*/3 * * * * ?", kBase);
  std::atomic<std::int64_t> tick{0};
  std::mutex mutex;
  std::map<std::string, std::vector<PendingFire>> returned;
  std::atomic<int> decided{0};
  std::latch start(2);
  auto loop = [&](const std::string& node) {
    start.arrive_and_wait();
    for (int i = 0; i < kScansEach; ++i) {
      // Logical time moves on with every scan of either loop.
      const std::int64_t now = kBase + 300 * tick.fetch_add(1);
      auto result = db.schedule().scan(node, now + admin::kPreReadWindowMs, 1000,
                                       [&, now](const std::vector<DueJob>& due) {
                                         auto d = admin::decide_fires(due, now);
                                         return d;
                                       });
      std::lock_guard lock(mutex);
      auto& mine = returned[node];
      mine.insert(mine.end(), result.fires.begin(), result.fires.end());
      decided += static_cast<int>(result.fires.size());
    }
  };
  std::thread a(loop, "node-a"), b(loop, "node-b");
  a.join();
  b.join();

  // Every row was returned to exactly one loop: no loop sent a fire another decided.
  std::set<std::int64_t> ids;
  for (const auto& [node, fires] : returned) {
    EXPECT_FALSE(fires.empty()) << node << " never won the lock";
    for (const auto& f : fires) EXPECT_TRUE(ids.insert(f.log_id).second) << f.log_id;
  }
  EXPECT_EQ(static_cast<std::int64_t>(ids.size()), db.count("SELECT count(*) FROM job_log"));
  // Every due second of every job, once, up to the time every job had been advanced past.
  const std::int64_t covered = db.count("SELECT min(trigger_next_time) FROM job_schedule") - 1;
  EXPECT_GE(covered, kBase + 10'000);
  EXPECT_EQ(db.count("SELECT count(*) FROM (SELECT job_id, scheduled_time FROM job_log GROUP BY 1, 2 "
                     "HAVING count(*) > 1) d"),
            0);
  std::int64_t expected = 0;
  for (std::int64_t t = kBase; t <= covered; t += 1000) expected += kJobs / 2 + ((t - kBase) % 3000 == 0 ? kJobs / 2 : 0);
  EXPECT_EQ(db.count("SELECT count(*) FROM job_log WHERE scheduled_time <= " + std::to_string(covered)), expected);
  EXPECT_EQ(db.count("SELECT count(*) FROM job_log WHERE trigger_type <> 'SCHEDULE' OR state <> 'pending'"), 0);
}

TEST(SchedulePg, JobStoppedWhileAScanDecidesKeepsItsStopAndGetsNoFire) {
  ScheduleDb db;
  auto stopped = db.job(admin::ScheduleType::kCron, "* * * * * ?", kBase);
  auto running = db.job(admin::ScheduleType::kCron, "* * * * * ?", kBase);
  auto result = db.schedule().scan("node-a", kBase + 5000, 100, [&](const std::vector<DueJob>& due) {
    // The operator stops the job while the scan holds the lock row (another connection).
    db.stores().jobs().set_trigger_status(stopped.id, 0, 0, "job.stop", kSystem);
    return admin::decide_fires(due, kBase);
  });
  EXPECT_EQ(result.jobs_read, 2u);
  for (const auto& f : result.fires) EXPECT_EQ(f.job_id, running.id);
  EXPECT_EQ(result.fires.size(), 6u);
  auto after = *db.stores().jobs().get(stopped.id);
  EXPECT_EQ(after.trigger_status, 0);
  EXPECT_EQ(after.trigger_next_time, 0);
  EXPECT_EQ(db.count("SELECT count(*) FROM job_log WHERE job_id = " + std::to_string(stopped.id)), 0);
}

// Whether a transaction holds the job's schedule row (a lock of it without waiting fails).
bool schedule_row_locked(ScheduleDb& db, std::int64_t job_id) {
  pqxx::connection c(db.url());
  pqxx::nontransaction tx(c);
  try {
    tx.exec_params("SELECT 1 FROM job_schedule WHERE job_id = $1 FOR UPDATE NOWAIT", job_id);
    return false;
  } catch (const pqxx::sql_error& e) {
    if (e.sqlstate() == "55P03") return true;  // lock_not_available
    throw;
  }
}

// Runs `writer` on a thread while another transaction holds the schedule row of `held`, waits
// until the writer waits for that row, and answers which of `probes` the writer holds then.
template <class Writer>
std::vector<bool> locked_while_waiting_for(ScheduleDb& db, std::int64_t held, const std::vector<std::int64_t>& probes,
                                           Writer writer) {
  pqxx::connection holder(db.url());
  pqxx::work hold(holder);
  hold.exec_params("SELECT 1 FROM job_schedule WHERE job_id = $1 FOR UPDATE", held);
  std::thread thread(writer);
  bool waiting = false;
  for (int i = 0; i < 1000 && !waiting; ++i) {
    waiting = db.count("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = "
                       "current_database()") > 0;
    if (!waiting) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::vector<bool> locked;
  for (auto id : probes) locked.push_back(schedule_row_locked(db, id));
  hold.commit();
  thread.join();
  EXPECT_TRUE(waiting) << "the writer never waited for the held row";
  return locked;
}

// Stopped jobs enough that the scan's advance is planned as on a real installation: each row
// found by its key in the order of the statement's arrays (fire_path_plans_pgtest.cpp), not by
// reading the whole table.
void add_stopped_jobs(ScheduleDb& db, int count) {
  db.exec("INSERT INTO job_info (job_group, job_desc, executor_handler) SELECT " + std::to_string(db.group().id) +
          ", 'stopped', 'echo' FROM generate_series(1, " + std::to_string(count) + ")");
}

// A job's rows move to the end of their tables and indexes (a key column changes and back), so
// that neither a table's order nor an index's is the jobs' ids'.
void move_to_the_end(ScheduleDb& db, const Job& job, const admin::Group& other) {
  for (auto group : {other.id, job.job_group}) {
    db.exec("UPDATE job_info SET job_group = " + std::to_string(group) + " WHERE id = " + std::to_string(job.id));
    db.exec("UPDATE job_schedule SET trigger_next_time = trigger_next_time + 1 WHERE job_id = " + std::to_string(job.id));
  }
}

admin::Group other_group(ScheduleDb& db) {
  admin::Group other;
  other.app_name = "sched-other";
  other.title = "Other";
  other.address_type = 1;
  return db.stores().groups().create(other, kSystem);
}

// A scan locks the schedule rows it advances in id order, not in due order, as a pause of a
// group does: else the two could each wait for the other, until PostgreSQL's deadlock_timeout.
TEST(SchedulePg, AScanLocksTheSchedulesItAdvancesInIdOrder) {
  ScheduleDb db;
  // Due in the order c, b, a; created (ids) in the order a, b, c; a's rows last in the table.
  auto a = db.job(admin::ScheduleType::kCron, "* * * * * ?", kBase + 2000);
  auto b = db.job(admin::ScheduleType::kCron, "* * * * * ?", kBase + 1000);
  auto c = db.job(admin::ScheduleType::kCron, "* * * * * ?", kBase);
  add_stopped_jobs(db, 5000);
  move_to_the_end(db, a, other_group(db));
  std::size_t fired = 0;
  auto locked = locked_while_waiting_for(db, b.id, {a.id, c.id}, [&] {
    fired = db.schedule().scan("node-a", kBase + 5000, 100, decide_at(kBase)).fires.size();
  });
  EXPECT_EQ(locked, (std::vector<bool>{true, false})) << "a (first by id) locked, c (first due) not yet";
  EXPECT_GT(fired, 0u);
}

TEST(SchedulePg, APauseOfAGroupLocksItsJobsSchedulesInIdOrder) {
  ScheduleDb db;
  auto a = db.job(admin::ScheduleType::kCron, "* * * * * ?", kBase);
  auto b = db.job(admin::ScheduleType::kCron, "* * * * * ?", kBase);
  auto c = db.job(admin::ScheduleType::kCron, "* * * * * ?", kBase);
  add_stopped_jobs(db, 5000);
  move_to_the_end(db, a, other_group(db));
  std::vector<std::int64_t> paused;
  auto locked = locked_while_waiting_for(db, b.id, {a.id, c.id},
                                         [&] { paused = db.stores().jobs().pause_group(db.group().id, kSystem); });
  EXPECT_EQ(locked, (std::vector<bool>{true, false})) << "a (first by id) locked, c not yet";
  EXPECT_EQ(paused, (std::vector<std::int64_t>{a.id, b.id, c.id}));
}

// An apply of job files locks its jobs' rows in id order too, not in the (group, name) order it
// reads them in: else it and a scan could each wait for the other.
TEST(SchedulePg, AnApplyLocksItsJobsInIdOrder) {
  ScheduleDb db;
  auto a = db.job(admin::ScheduleType::kCron, "* * * * * ?", kBase);
  auto b = db.job(admin::ScheduleType::kCron, "* * * * * ?", kBase);
  auto c = db.job(admin::ScheduleType::kCron, "* * * * * ?", kBase);
  add_stopped_jobs(db, 5000);
  // By name c, b, a; by id a, b, c.
  for (const auto& [job, name] : {std::pair{a, "zz"}, std::pair{b, "mm"}, std::pair{c, "aa"}}) {
    db.exec("UPDATE job_info SET name = '" + std::string(name) + "' WHERE id = " + std::to_string(job.id));
  }
  admin::PgApplyStore apply(db.database(), db.clock());
  bool planned = false;
  auto locked = locked_while_waiting_for(db, b.id, {a.id, c.id}, [&] {
    apply.apply(
        {db.group().app_name},
        [&](const admin::JobsSnapshot&) {
          planned = true;
          return admin::ApplyPlan{};
        },
        true, kSystem);
  });
  EXPECT_EQ(locked, (std::vector<bool>{true, false})) << "a (first by id) locked, c (first by name) not yet";
  EXPECT_TRUE(planned);
}

// The scan writes a job's fires without locking the job's row (sql/0033): a transaction that
// holds it, as an apply of job files does while it plans, does not hold the scan up.
TEST(SchedulePg, AScanDoesNotWaitForTheRowOfAJobItFires) {
  ScheduleDb db;
  auto job = db.job(admin::ScheduleType::kCron, "* * * * * ?", kBase);
  pqxx::connection holder(db.url());
  pqxx::work hold(holder);
  hold.exec_params("SELECT 1 FROM job_info WHERE id = $1 FOR UPDATE", job.id);
  std::atomic<bool> done{false};
  std::size_t fired = 0;
  std::thread scan([&] {
    fired = db.schedule().scan("node-a", kBase + 5000, 100, decide_at(kBase)).fires.size();
    done = true;
  });
  bool waited = false;
  for (int i = 0; i < 3000 && !done && !waited; ++i) {
    waited = db.count("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = "
                      "current_database()") > 0;
    if (!waited && !done) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  hold.commit();
  scan.join();
  EXPECT_FALSE(waited) << "the scan waited for the job's row";
  EXPECT_TRUE(done);
  EXPECT_EQ(fired, 6u);
  EXPECT_EQ(db.count("SELECT count(*) FROM job_log_active WHERE job_id = " + std::to_string(job.id)), 6);
}

// Each row the scan writes, a fire or a skipped fire's record, copies its own job's run settings
// and group, whichever order the jobs are due and decided in.
TEST(SchedulePg, EachFireAndRecordCopiesItsOwnJobsRunSettings) {
  ScheduleDb db;
  using admin::MisfireStrategy;
  using admin::ScheduleType;
  const std::int64_t now = kBase + 600'000;
  const auto other = other_group(db);
  std::vector<Job> jobs;
  for (int i = 0; i < 4; ++i) {
    // Overdue (a record of the skipped fires, then fires) and due, alternately; ids and due times
    // in opposite orders.
    jobs.push_back(db.job(ScheduleType::kCron, "* * * * * ?", i % 2 == 0 ? kBase : now - 1000 * i));
    db.exec("UPDATE job_info SET executor_handler = 'handler" + std::to_string(i) + "', executor_param = 'param " +
            std::to_string(i) + "', executor_fail_retry_count = " + std::to_string(i) +
            ", job_group = " + std::to_string(i % 2 == 0 ? other.id : db.group().id) +
            " WHERE id = " + std::to_string(jobs.back().id));
  }
  auto result = db.schedule().scan("node-a", now + 5000, 100, decide_at(now));
  EXPECT_EQ(result.misfire_records, 2u);
  for (int i = 0; i < 4; ++i) {
    const std::string id = std::to_string(jobs[i].id);
    EXPECT_EQ(db.count("SELECT count(*) FROM job_log WHERE job_id = " + id), i % 2 == 0 ? 6 : 6 + i) << i;
    EXPECT_EQ(db.count("SELECT count(*) FROM job_log WHERE job_id = " + id + " AND (executor_handler, executor_param,"
                       " executor_fail_retry_count, job_group) IS DISTINCT FROM ('handler" + std::to_string(i) +
                       "', 'param " + std::to_string(i) + "', " + std::to_string(i) + ", " +
                       std::to_string(i % 2 == 0 ? other.id : db.group().id) + ")"),
              0)
        << i;
  }
}

TEST(SchedulePg, ScheduleWithNoFurtherTimeStopsTheJob) {
  ScheduleDb db;
  const std::int64_t new_year_2023 = 1'672'531'200'000;
  auto job = db.job(admin::ScheduleType::kCron, "0 0 0 1 1 ? 2023", new_year_2023);
  auto result = db.schedule().scan("node-a", new_year_2023 + 6000, 100, decide_at(new_year_2023 + 1000));
  EXPECT_EQ(result.fires.size(), 1u);
  auto after = *db.stores().jobs().get(job.id);
  EXPECT_EQ(after.trigger_status, 0);
  EXPECT_EQ(after.trigger_next_time, 0);
  EXPECT_EQ(after.trigger_last_time, new_year_2023);
}

TEST(SchedulePg, FeederReadsThisNodesDuePendingFiresInDueOrder) {
  ScheduleDb db;
  auto job = db.job(admin::ScheduleType::kCron, "0 0 0 1 1 ? 2099", kBase + 3'600'000);
  auto late = db.put_log(job, admin::FireState::kPending, kBase - 9000, "node-a", admin::TriggerType::kManual);
  auto due = db.put_log(job, admin::FireState::kPending, kBase + 5000, "node-a", admin::TriggerType::kRetry);
  db.put_log(job, admin::FireState::kPending, kBase + 5001, "node-a", admin::TriggerType::kApi);
  db.put_log(job, admin::FireState::kPending, kBase, "node-b", admin::TriggerType::kManual);
  db.put_log(job, admin::FireState::kTriggered, kBase, "node-a", admin::TriggerType::kManual);
  auto fires = db.schedule().pending("node-a", kBase + 5000, 100);
  EXPECT_EQ(fires, (std::vector<admin::PendingFireRow>{
                       {{late.id, job.id, late.scheduled_time}, admin::TriggerType::kManual, admin::MisfireStrategy::kDoNothing},
                       {{due.id, job.id, due.scheduled_time}, admin::TriggerType::kRetry, admin::MisfireStrategy::kDoNothing}}));
  EXPECT_EQ(db.schedule().pending("node-a", kBase + 5000, 1).size(), 1u);
}

TEST(SchedulePg, CancelPendingMovesOnlyThisNodesPendingFiresAndGivesAFixDelayJobItsNextTime) {
  ScheduleDb db;
  auto fix_delay = db.job(admin::ScheduleType::kFixDelay, "20", kBase);
  db.exec("UPDATE job_schedule SET trigger_next_time = " + std::to_string(admin::kAwaitingCompletion) +
          " WHERE job_id = " + std::to_string(fix_delay.id));
  auto mine = db.put_log(fix_delay, admin::FireState::kPending, kBase, "node-a");
  auto theirs = db.put_log(fix_delay, admin::FireState::kPending, kBase + 1000, "node-b");
  auto moved = db.schedule().cancel_pending({{mine.id, "misfire: late"}, {theirs.id, "misfire: late"}}, "node-a",
                                            admin::follow_ups_of(admin::RunEnd::kMisfireSkipped, kBase + 77, "node-a"));
  EXPECT_EQ(moved, (std::vector<std::int64_t>{mine.id}));
  auto row = *db.stores().logs().get(mine.id);
  EXPECT_EQ(row.state, admin::FireState::kCancelled);
  EXPECT_EQ(row.trigger_msg, "misfire: late");
  EXPECT_FALSE(row.trigger_time);
  EXPECT_EQ(db.stores().logs().get(theirs.id)->state, admin::FireState::kPending);
  EXPECT_EQ(db.stores().jobs().get(fix_delay.id)->trigger_next_time, kBase + 77 + 20'000);
}

TEST(SchedulePg, DeadNodesFiresAreTakenOverExactlyOnceByTwoLiveNodesRacing) {
  ScheduleDb db(8);
  auto do_nothing = db.job(admin::ScheduleType::kCron, "0 0 0 1 1 ? 2099", kBase + 3'600'000, admin::MisfireStrategy::kDoNothing);
  auto fire_once = db.job(admin::ScheduleType::kCron, "0 0 0 1 1 ? 2099", kBase + 3'600'000, admin::MisfireStrategy::kFireOnceNow);
  std::set<std::int64_t> pending, sending;
  for (int i = 0; i < 100; ++i) {
    pending.insert(db.put_log(do_nothing, admin::FireState::kPending, kBase + i * 1000, "dead").id);
    pending.insert(db.put_log(fire_once, admin::FireState::kPending, kBase - 60'000 - i * 1000, "dead").id);
    pending.insert(db.put_log(do_nothing, admin::FireState::kPending, kBase - 60'000 - i * 1000, "dead").id);
    pending.insert(db.put_log(do_nothing, admin::FireState::kPending, kBase - 60'000 - i * 1000, "dead", admin::TriggerType::kManual).id);
    if (i % 10 == 0) sending.insert(db.put_log(fire_once, admin::FireState::kSending, kBase + i * 1000, "dead", admin::TriggerType::kSchedule, "http://e/").id);
  }
  std::mutex mutex;
  std::map<std::string, ScheduleStore::Takeover> taken;
  std::latch start(2);
  auto racer = [&](const std::string& node) {
    start.arrive_and_wait();
    for (int i = 0; i < 3; ++i) {
      auto t = db.schedule().take_over({"dead", "also-dead"}, node);
      std::lock_guard lock(mutex);
      auto& mine = taken[node];
      mine.pending.insert(mine.pending.end(), t.pending.begin(), t.pending.end());
      mine.sending.insert(mine.sending.end(), t.sending.begin(), t.sending.end());
    }
  };
  std::thread a(racer, "node-a"), b(racer, "node-b");
  a.join();
  b.join();

  std::multiset<std::int64_t> got_pending, got_sending;
  for (const auto& [node, t] : taken) {
    for (const auto& f : t.pending) got_pending.insert(f.fire.log_id);
    for (const auto& s : t.sending) {
      got_sending.insert(s.fire.log_id);
      EXPECT_EQ(s.dead_node, "dead");
      EXPECT_EQ(s.executor_address, "http://e/");
    }
  }
  EXPECT_EQ(got_pending, std::multiset<std::int64_t>(pending.begin(), pending.end()));
  EXPECT_EQ(got_sending, std::multiset<std::int64_t>(sending.begin(), sending.end()));
  EXPECT_EQ(db.count("SELECT count(*) FROM job_log WHERE admin_node = 'dead' AND state IN ('pending', 'sending')"), 0);
  // Each node owns exactly the rows it was told it took.
  for (const auto& [node, t] : taken) {
    EXPECT_EQ(db.count("SELECT count(*) FROM job_log WHERE state IN ('pending', 'sending') AND admin_node = '" + node +
                       "'"),
              static_cast<std::int64_t>(t.pending.size() + t.sending.size()));
  }
}

TEST(SchedulePg, TakeoverThatCancelsALateFixDelayFireGivesTheJobItsNextTime) {
  // A FIX_DELAY job waits for its run's end (kAwaitingCompletion); a fire cancelled as a
  // misfire is such an end, so it must set the next time, or the job never fires again.
  ScheduleDb db;
  auto fix_delay = db.job(admin::ScheduleType::kFixDelay, "20", kBase);
  db.exec("UPDATE job_schedule SET trigger_next_time = " + std::to_string(admin::kAwaitingCompletion) +
          " WHERE job_id = " + std::to_string(fix_delay.id));
  auto late = db.put_log(fix_delay, admin::FireState::kPending, kBase - 60'000, "dead");
  FakeExecutorClient executors;
  admin::FireTakeover takeover(db.schedule(), executors, db.clock(), "node-a", "", admin::kPreReadWindowMs);
  auto report = takeover.take_over({"dead"});
  EXPECT_TRUE(report.to_send.empty());
  EXPECT_EQ(report.cancelled, 1u);
  EXPECT_EQ(db.stores().logs().get(late.id)->state, admin::FireState::kCancelled);
  EXPECT_EQ(db.stores().jobs().get(fix_delay.id)->trigger_next_time, kBase + 20'000);
}

TEST(SchedulePg, NodeRestartedUnderItsIdFeedsItsStaleFiresAsTheirJobsMisfireStrategiesSay) {
  // node-a stopped with these fires pending and starts again 95 s later under the same id.
  ScheduleDb db;
  auto skip = db.job(admin::ScheduleType::kCron, "0 0 0 1 1 ? 2099", kBase + 3'600'000, admin::MisfireStrategy::kDoNothing);
  auto catch_up = db.job(admin::ScheduleType::kCron, "0 0 0 1 1 ? 2099", kBase + 3'600'000, admin::MisfireStrategy::kFireOnceNow);
  auto fix_delay = db.job(admin::ScheduleType::kFixDelay, "20", kBase);
  db.exec("UPDATE job_schedule SET trigger_next_time = " + std::to_string(admin::kAwaitingCompletion) +
          " WHERE job_id = " + std::to_string(fix_delay.id));
  auto skipped = db.put_log(skip, admin::FireState::kPending, kBase - 95'000, "node-a");
  auto older = db.put_log(catch_up, admin::FireState::kPending, kBase - 95'000, "node-a");
  auto newest = db.put_log(catch_up, admin::FireState::kPending, kBase - 94'000, "node-a", admin::TriggerType::kMisfire);
  auto awaiting = db.put_log(fix_delay, admin::FireState::kPending, kBase - 95'000, "node-a");
  auto manual = db.put_log(skip, admin::FireState::kPending, kBase - 95'000, "node-a", admin::TriggerType::kManual);

  common::HierarchicalWheelTimer timer{db.clock(), {}, {.manual = true}};
  common::RecurringTasks tasks{timer, db.clock()};
  std::vector<PendingFire> pushed;
  admin::PendingFeeder feeder(db.schedule(), tasks, "node-a",
                              [&](const PendingFire& fire) {
                                pushed.push_back(fire);
                                return true;
                              },
                              {});
  EXPECT_EQ(feeder.feed_once(), 2u);
  EXPECT_EQ(pushed, (std::vector<PendingFire>{{manual.id, skip.id, manual.scheduled_time},
                                              {newest.id, catch_up.id, newest.scheduled_time}}));
  for (const auto& l : {skipped, older, awaiting}) {
    auto row = *db.stores().logs().get(l.id);
    EXPECT_EQ(row.state, admin::FireState::kCancelled) << l.id;
    EXPECT_NE(row.trigger_msg.find("misfire: this fire was 95000 ms late"), std::string::npos) << row.trigger_msg;
  }
  EXPECT_NE(db.stores().logs().get(older.id)->trigger_msg.find("coalesced"), std::string::npos);
  EXPECT_EQ(db.stores().jobs().get(fix_delay.id)->trigger_next_time, kBase + 20'000);
  EXPECT_EQ(db.count("SELECT count(*) FROM job_log"), 5);  // nothing retried
}

TEST(SchedulePg, SendingFiresAreResolvedByAskingTheExecutorTheyWereSentTo) {
  ScheduleDb db;
  auto job = db.job(admin::ScheduleType::kCron, "0 0 0 1 1 ? 2099", kBase + 3'600'000, admin::MisfireStrategy::kFireOnceNow);
  auto fix_delay = db.job(admin::ScheduleType::kFixDelay, "15", kBase);
  db.exec("UPDATE job_schedule SET trigger_next_time = " + std::to_string(admin::kAwaitingCompletion) +
          " WHERE job_id = " + std::to_string(fix_delay.id));
  auto delivered = db.put_log(job, admin::FireState::kSending, kBase - 1000, "dead", admin::TriggerType::kSchedule, "http://has-it/");
  auto not_delivered = db.put_log(job, admin::FireState::kSending, kBase - 1000, "dead", admin::TriggerType::kManual, "http://never-got-it/");
  auto unknown = db.put_log(fix_delay, admin::FireState::kSending, kBase - 1000, "dead", admin::TriggerType::kSchedule, "http://gone/");
  FakeExecutorClient executors;
  executors.answer_log("http://never-got-it/", FakeExecutorClient::no_such_log());
  executors.answer_log("http://gone/", FakeExecutorClient::LogAnswer::fail("connect timed out"));
  admin::FireTakeover takeover(db.schedule(), executors, db.clock(), "node-a", "", admin::kPreReadWindowMs);
  auto report = takeover.take_over({"dead"});
  EXPECT_EQ(report.delivered, 1u);
  EXPECT_EQ(report.resent, 1u);
  EXPECT_EQ(report.unknown, 1u);
  EXPECT_EQ(report.to_send, (std::vector<PendingFire>{{not_delivered.id, job.id, not_delivered.scheduled_time}}));

  auto d = *db.stores().logs().get(delivered.id);
  EXPECT_EQ(d.state, admin::FireState::kTriggered);
  EXPECT_EQ(d.trigger_code, 200);
  EXPECT_EQ(d.admin_node, std::optional<std::string>("node-a"));
  auto n = *db.stores().logs().get(not_delivered.id);
  EXPECT_EQ(n.state, admin::FireState::kPending);
  EXPECT_EQ(n.executor_address, "http://never-got-it/");
  EXPECT_FALSE(n.trigger_time);
  EXPECT_EQ(n.admin_node, std::optional<std::string>("node-a"));
  auto u = *db.stores().logs().get(unknown.id);
  EXPECT_EQ(u.state, admin::FireState::kTriggered);  // may be running: waits for its result, unconfirmed
  EXPECT_EQ(u.trigger_code, 500);
  EXPECT_NE(u.trigger_msg.find("delivery unknown: admin node dead died while sending and executor http://gone/ "
                               "does not answer"),
            std::string::npos)
      << u.trigger_msg;
  EXPECT_EQ(db.stores().jobs().get(fix_delay.id)->trigger_next_time, admin::kAwaitingCompletion);  // not ended

  // Resolved once: a second look finds nothing to do.
  EXPECT_FALSE(db.schedule().resolve_sending(delivered.id, "node-a", ScheduleStore::Delivery::kUnknown, "again"));
  EXPECT_EQ(executors.calls("log").size(), 3u);
}

TEST(SchedulePg, LeasesFollowTheDatabasesClock) {
  ScheduleDb db;
  admin::AdminNode a;
  a.node_id = "node-a";
  a.address = "http://127.0.0.1:8080/";
  a.version = "0.1.0";
  db.nodes().heartbeat(a, 60'000, true);
  admin::AdminNode b = a;
  b.node_id = "node-b";
  db.nodes().heartbeat(b, 0, true);  // a lease that ends at once
  EXPECT_EQ(db.nodes().expired(), (std::vector<std::string>{"node-b"}));
  auto nodes = db.nodes().list();
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].node_id, "node-a");
  EXPECT_EQ(nodes[0].address, "http://127.0.0.1:8080/");
  EXPECT_EQ(nodes[0].lease_until - nodes[0].heartbeat_at, 60'000);
  const auto started = nodes[0].started_at;

  db.nodes().heartbeat(a, 60'000, false);
  EXPECT_EQ(db.nodes().list()[0].started_at, started);
  db.nodes().heartbeat(b, 60'000, false);
  EXPECT_TRUE(db.nodes().expired().empty());
  db.nodes().release("node-a");
  EXPECT_EQ(db.nodes().expired(), (std::vector<std::string>{"node-a"}));
  db.nodes().release("no-such-node");
}

}  // namespace
}  // namespace cronwheel::testing
