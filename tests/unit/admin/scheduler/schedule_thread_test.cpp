// The schedule thread and the pending-fire feeder against the fake schedule store, on a
// FakeClock: what a scan writes and hands on, the guards against jobs changed meanwhile, the
// sleep rules, wake(), the feeder's choice of fires, and the misfire rule it applies first to
// late pending fires, the rule a takeover applies too. Among those, the fires a node left
// pending when it stopped, found again after it restarted under the same node id: they are
// its own, so only its feeder reads them.

#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "admin/scheduler/pending_feeder.h"
#include "admin/scheduler/schedule_thread.h"
#include "common/timer/hierarchical_wheel_timer.h"
#include "common/timer/recurring_task.h"
#include "tests/support/fake_calendar_store.h"
#include "tests/support/fake_clock.h"
#include "tests/support/fake_schedule_store.h"
#include "tests/support/fake_stores.h"

namespace cronwheel::admin {
namespace {

using namespace std::chrono_literals;
using testing::FakeClock;
using testing::FakeScheduleStore;

constexpr std::int64_t kStart = 1'700'000'040'000;  // on a minute boundary

class Sink {
 public:
  ScheduleThread::Sink function() {
    return [this](const std::vector<PendingFire>& fires) {
      std::lock_guard lock(mutex_);
      fires_.insert(fires_.end(), fires.begin(), fires.end());
    };
  }
  std::vector<PendingFire> fires() const {
    std::lock_guard lock(mutex_);
    return fires_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<PendingFire> fires_;
};

Job cron_job(std::string conf, std::int64_t next, MisfireStrategy misfire = MisfireStrategy::kDoNothing) {
  Job j;
  j.job_group = 1;
  j.job_desc = "test";
  j.schedule_type = ScheduleType::kCron;
  j.schedule_conf = std::move(conf);
  j.misfire_strategy = misfire;
  j.executor_handler = "echo";
  j.executor_param = "hello";
  j.executor_fail_retry_count = 2;
  j.trigger_status = 1;
  j.trigger_next_time = next;
  return j;
}

class ScheduleThreadTest : public ::testing::Test {
 protected:
  ScheduleThread make(std::string node = "node-a", int pre_read = 100) {
    ScheduleThread::Options options;
    options.pre_read_count = pre_read;
    options.finished_runs = &finished_;
    return ScheduleThread(store_, clock_, std::move(node), sink_.function(), options);
  }

  FakeClock clock_{kStart};
  FakeScheduleStore store_;
  Sink sink_;
  FinishedRuns finished_;
};

TEST_F(ScheduleThreadTest, ScanWritesEachFireAsAPendingRowOfThisNodeThenHandsItOn) {
  auto job = store_.put_job(cron_job("* * * * * ?", kStart));
  auto thread = make();
  auto outcome = thread.scan_once();
  EXPECT_TRUE(outcome.ok);
  EXPECT_EQ(outcome.jobs_read, 1u);
  EXPECT_EQ(outcome.fires, 6u);
  auto logs = store_.logs();
  ASSERT_EQ(logs.size(), 6u);
  std::vector<PendingFire> expected;
  for (std::size_t i = 0; i < logs.size(); ++i) {
    EXPECT_EQ(logs[i].state, FireState::kPending);
    EXPECT_EQ(logs[i].admin_node, std::optional<std::string>("node-a"));
    EXPECT_EQ(logs[i].trigger_type, TriggerType::kSchedule);
    EXPECT_EQ(logs[i].scheduled_time, kStart + static_cast<std::int64_t>(i) * 1000);
    EXPECT_EQ(logs[i].executor_handler, "echo");
    EXPECT_EQ(logs[i].executor_fail_retry_count, 2);
    expected.push_back({logs[i].id, job.id, logs[i].scheduled_time});
  }
  EXPECT_EQ(sink_.fires(), expected);
  EXPECT_EQ(store_.job(job.id).trigger_next_time, kStart + 6000);
  EXPECT_EQ(store_.job(job.id).trigger_last_time, kStart + 5000);
  EXPECT_EQ(thread.stats().fires, 6u);
}

// kStart is 2023-11-14T22:14:00Z. The thread reads a calendar the first time a scan names it
// (that scan leaves the job as it was) and goes by it from the next scan on; after the calendar
// changes, one scan waits for the new version.
TEST_F(ScheduleThreadTest, AJobWaitsOneScanForItsCalendarThenGoesByItAndByEachNewVersion) {
  testing::FakeStores stores(clock_);
  testing::FakeCalendarStore calendars(stores);
  store_.read_calendars_from(&calendars);
  Calendar c;
  c.name = "closing-day";
  c.dates.push_back({{2023, 11, 14, "Closing Day"}, false, "", ""});
  c = calendars.create(c, Actor{});
  auto j = cron_job("* * * * * ?", kStart);
  j.calendar = {c.id, common::CalendarMode::kSkip};
  auto job = store_.put_job(j);

  ScheduleThread::Options options;
  options.calendars = &calendars;
  ScheduleThread thread(store_, clock_, "node-a", sink_.function(), options);
  EXPECT_EQ(thread.scan_once().fires, 0u);
  EXPECT_EQ(store_.job(job.id).trigger_next_time, kStart);
  EXPECT_EQ(thread.scan_once().fires, 0u);
  EXPECT_EQ(store_.job(job.id).trigger_next_time, 1'700'006'400'000);  // 2023-11-15T00:00:00Z
  EXPECT_TRUE(store_.logs().empty()) << "a day a calendar excludes leaves no run";

  c.dates.clear();
  calendars.update(c, Actor{});
  store_.update_job(job.id, [](Job& changed) { changed.trigger_next_time = kStart; });
  EXPECT_EQ(thread.scan_once().fires, 0u);
  EXPECT_EQ(thread.scan_once().fires, 6u);
}

// Without a calendar store, a job that names a calendar is never decided.
TEST_F(ScheduleThreadTest, WithoutCalendarsAJobThatNamesOneIsLeftAsItIs) {
  auto j = cron_job("* * * * * ?", kStart);
  j.calendar = {7, common::CalendarMode::kSkip};
  auto job = store_.put_job(j);
  auto thread = make();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(thread.scan_once().fires, 0u);
  EXPECT_EQ(store_.job(job.id).trigger_next_time, kStart);
  EXPECT_EQ(store_.job(job.id).trigger_status, 1);
}

// A 10 s outage (the database away, the scans failing) then the first scan: each job missed
// by more than the window gets one cancelled MISFIRE row for the fires its strategy skipped,
// which is never handed on; the next scans write no more.
TEST_F(ScheduleThreadTest, ScanAfterAnOutageRecordsEachJobsSkippedFiresOnceAndHandsOnOnlyFires) {
  auto skipping = store_.put_job(cron_job("* * * * * ?", kStart, MisfireStrategy::kDoNothing));
  auto catching_up = store_.put_job(cron_job("* * * * * ?", kStart, MisfireStrategy::kFireOnceNow));
  auto thread = make();
  store_.fail_with("connection refused");
  for (int second = 0; second <= 10; ++second) {
    clock_.set_wall_ms(kStart + second * 1000);
    EXPECT_FALSE(thread.scan_once().ok);
  }
  store_.fail_with(std::nullopt);
  auto outcome = thread.scan_once();
  ASSERT_TRUE(outcome.ok);
  EXPECT_EQ(outcome.fires, 1u + 5 + 5);  // the one FIRE_ONCE_NOW fire, then both jobs' window

  auto records = [&] {
    std::map<std::int64_t, std::vector<JobLog>> out;
    for (const auto& l : store_.logs()) {
      if (l.state == FireState::kCancelled) out[l.job_id].push_back(l);
    }
    return out;
  };
  auto written = records();
  ASSERT_EQ(written[skipping.id].size(), 1u);
  EXPECT_EQ(written[skipping.id][0].trigger_type, TriggerType::kMisfire);
  EXPECT_EQ(written[skipping.id][0].scheduled_time, kStart);
  EXPECT_EQ(written[skipping.id][0].trigger_msg.rfind("misfire: 11 fires skipped, scheduled from "
                                                      "2023-11-14T22:14:00+00:00 to 2023-11-14T22:14:10+00:00: ", 0),
            0u)
      << written[skipping.id][0].trigger_msg;
  ASSERT_EQ(written[catching_up.id].size(), 1u);
  EXPECT_EQ(written[catching_up.id][0].scheduled_time, kStart + 1000);
  EXPECT_EQ(written[catching_up.id][0].trigger_msg.rfind("misfire: 10 fires coalesced into the fire scheduled at "
                                                         "2023-11-14T22:14:00+00:00, ", 0),
            0u)
      << written[catching_up.id][0].trigger_msg;
  for (const auto& fire : sink_.fires()) EXPECT_EQ(store_.log(fire.log_id).state, FireState::kPending);
  // Each record is a run of the job's group cancelled by its misfire strategy.
  const std::vector<FinishedRuns::Count> counted{{skipping.job_group, FireState::kCancelled, 2}};
  EXPECT_EQ(finished_.counts(), counted);

  for (int second = 11; second <= 13; ++second) {
    clock_.set_wall_ms(kStart + second * 1000);
    EXPECT_TRUE(thread.scan_once().ok);
  }
  EXPECT_EQ(records(), written);
  EXPECT_EQ(finished_.counts(), counted);
}

// Past capacity (docs/scheduling.md, "Past capacity"): a node whose ring handed its seconds
// over late decides only the share of its fires the shedder gives; the jobs it sheds get a
// cancelled MISFIRE record each and advance as the others do; a FIRE_ONCE_NOW job keeps its fires.
TEST_F(ScheduleThreadTest, ANodeBehindShedsTheShareItCannotSendAndRecordsEachShedJobOnce) {
  std::vector<std::int64_t> skipping;
  for (int i = 0; i < 10; ++i) skipping.push_back(store_.put_job(cron_job("* * * * * ?", kStart)).id);
  const auto catching_up = store_.put_job(cron_job("* * * * * ?", kStart, MisfireStrategy::kFireOnceNow)).id;
  // Six seconds before kStart: 10,000 fires decided a second, 4,950 handed over, each hand-off 2 s
  // late. The first scan's share: 0.9 * 4,950 / 10,000.
  LoadShedder shedder({});
  for (int i = 6; i >= 1; --i) {
    const std::int64_t second = kStart - i * 1000;
    shedder.decided(10'000, second);
    shedder.handed_over(4'950, second - 1'500, second + 500);
  }
  ScheduleThread::Options options;
  options.pre_read_count = 100;
  options.finished_runs = &finished_;
  options.shedder = &shedder;
  ScheduleThread thread(store_, clock_, "node-a", sink_.function(), options);

  const auto outcome = thread.scan_once();
  ASSERT_TRUE(outcome.ok);
  // 11 jobs with 6 fires each. A job shed skips 11 times (its 6 and the 5 seconds after the
  // window): 5 of the DO_NOTHING jobs shed skip 55 against 36 fires kept, 60 % (1 - 0.4455).
  EXPECT_EQ(outcome.shed, 55u);
  EXPECT_EQ(outcome.fires, 36u);
  EXPECT_EQ(sink_.fires().size(), 36u);
  std::map<std::int64_t, int> pending, records;
  for (const auto& l : store_.logs()) {
    if (l.state == FireState::kPending) {
      ++pending[l.job_id];
    } else {
      ASSERT_EQ(l.state, FireState::kCancelled);
      EXPECT_EQ(l.trigger_type, TriggerType::kMisfire);
      EXPECT_EQ(l.scheduled_time, kStart);
      EXPECT_EQ(l.trigger_msg.rfind("shed: 11 fires skipped, scheduled from 2023-11-14T22:14:00+00:00 to "
                                    "2023-11-14T22:14:10+00:00: admin node node-a is past its capacity, its fires handed over or "
                                    "sent late "
                                    "(the latest by 2000 ms), so its scans keep 45 % of the fires due",
                                    0),
                0u)
          << l.trigger_msg;
      ++records[l.job_id];
    }
  }
  EXPECT_EQ(pending[catching_up], 6);
  EXPECT_EQ(records.size(), 5u);
  // A shed job skips a window more and is next due after it.
  for (const auto id : skipping) {
    EXPECT_EQ(pending[id] + 6 * records[id], 6) << "job " << id << ": its fires, or one record of them";
    EXPECT_EQ(store_.job(id).trigger_next_time, records[id] ? kStart + 11'000 : kStart + 6'000) << "job " << id;
  }
  EXPECT_EQ(thread.stats().shed, 55u);
  EXPECT_NEAR(thread.stats().keep, 0.9 * 4'950 / 10'000, 1e-9);
  EXPECT_EQ(finished_.counts(), (std::vector<FinishedRuns::Count>{{1, FireState::kCancelled, 5}}));
}

TEST_F(ScheduleThreadTest, FailedScanHandsNothingOnAndIsCounted) {
  store_.put_job(cron_job("* * * * * ?", kStart));
  store_.fail_with("connection refused");
  auto thread = make();
  EXPECT_FALSE(thread.scan_once().ok);
  EXPECT_TRUE(sink_.fires().empty());
  EXPECT_EQ(thread.stats().failed_scans, 1u);
  store_.fail_with(std::nullopt);
  EXPECT_TRUE(thread.scan_once().ok);
  EXPECT_EQ(sink_.fires().size(), 6u);
}

TEST_F(ScheduleThreadTest, JobStoppedDuringTheScanKeepsItsStopAndGetsNoFire) {
  auto job = store_.put_job(cron_job("* * * * * ?", kStart));
  store_.after_read([&] {
    store_.update_job(job.id, [](Job& j) {
      j.trigger_status = 0;
      j.trigger_next_time = 0;
    });
  });
  auto thread = make();
  EXPECT_TRUE(thread.scan_once().ok);
  EXPECT_TRUE(sink_.fires().empty());
  EXPECT_TRUE(store_.logs().empty());
  EXPECT_EQ(store_.job(job.id).trigger_status, 0);
  EXPECT_EQ(store_.job(job.id).trigger_next_time, 0);
}

TEST_F(ScheduleThreadTest, JobRescheduledDuringTheScanKeepsItsNewTime) {
  auto job = store_.put_job(cron_job("* * * * * ?", kStart));
  store_.after_read([&] { store_.update_job(job.id, [](Job& j) { j.trigger_next_time = kStart + 60'000; }); });
  auto thread = make();
  thread.scan_once();
  EXPECT_TRUE(store_.logs().empty());
  EXPECT_EQ(store_.job(job.id).trigger_next_time, kStart + 60'000);
}

TEST_F(ScheduleThreadTest, TwoNodesTakingTurnsDecideEverySecondExactlyOnce) {
  store_.put_job(cron_job("* * * * * ?", kStart));
  store_.put_job(cron_job("*/2 * * * * ?", kStart));
  auto a = make("node-a");
  auto b = make("node-b");
  for (int i = 0; i < 20; ++i) {
    (i % 2 == 0 ? a : b).scan_once();
    clock_.advance(std::chrono::milliseconds(700));
  }
  std::map<std::pair<std::int64_t, std::int64_t>, int> per_fire;
  std::set<std::string> owners;
  for (const auto& l : store_.logs()) {
    ++per_fire[{l.job_id, l.scheduled_time}];
    owners.insert(*l.admin_node);
  }
  for (const auto& [fire, count] : per_fire) EXPECT_EQ(count, 1) << fire.first << "@" << fire.second;
  const std::int64_t last = kStart + 19 * 700;  // the last scan's now
  for (std::int64_t t = kStart; t <= last; t += 1000) {
    EXPECT_EQ(per_fire.count({1, t}), 1u) << t;
    if ((t - kStart) % 2000 == 0) {
      EXPECT_EQ(per_fire.count({2, t}), 1u) << t;
    }
  }
  EXPECT_EQ(owners, (std::set<std::string>{"node-a", "node-b"}));
}

TEST_F(ScheduleThreadTest, SleepsToTheWindowsEndAfterAScanThatFoundNothing) {
  auto thread = make();
  thread.start();
  clock_.wait_for_sleepers(1);
  EXPECT_EQ(store_.calls("scan"), 1);
  clock_.advance(4999ms);
  clock_.wait_for_sleepers(1);
  EXPECT_EQ(store_.calls("scan"), 1);
  clock_.advance(1ms);
  clock_.wait_for_sleepers(1);
  EXPECT_EQ(store_.calls("scan"), 2);
  thread.stop();
}

// After a quiet spell the next job is still decided a whole window ahead of its fire, not with
// whatever is left of the window when the idle sleep ends.
TEST_F(ScheduleThreadTest, AScanThatFoundNothingWakesAWindowBeforeTheNextJobIsDue) {
  store_.put_job(cron_job("0 * * * * ?", kStart + 7300));
  auto thread = make();
  thread.start();
  clock_.wait_for_sleepers(1);
  EXPECT_EQ(store_.calls("scan"), 1);
  EXPECT_TRUE(sink_.fires().empty());
  clock_.advance(2299ms);
  clock_.wait_for_sleepers(1);
  EXPECT_EQ(store_.calls("scan"), 1);
  clock_.advance(1ms);  // kStart + 2300: 5 s before it
  clock_.wait_for_sleepers(1);
  EXPECT_EQ(store_.calls("scan"), 2);
  ASSERT_EQ(sink_.fires().size(), 1u);
  EXPECT_EQ(sink_.fires()[0].scheduled_time, kStart + 7300);
  thread.stop();
}

TEST_F(ScheduleThreadTest, SleepsToTheNextSecondAfterAScanThatFoundWork) {
  store_.put_job(cron_job("0 * * * * ?", kStart + 3000));  // due within the window, then in a minute
  clock_.advance(250ms);
  auto thread = make();
  thread.start();
  clock_.wait_for_sleepers(1);
  EXPECT_EQ(store_.calls("scan"), 1);
  EXPECT_EQ(sink_.fires().size(), 1u);
  clock_.advance(749ms);
  clock_.wait_for_sleepers(1);
  EXPECT_EQ(store_.calls("scan"), 1);
  clock_.advance(1ms);  // the second boundary
  clock_.wait_for_sleepers(1);
  EXPECT_EQ(store_.calls("scan"), 2);
  thread.stop();
}

TEST_F(ScheduleThreadTest, FullPreReadScansAgainWithoutSleeping) {
  for (int i = 0; i < 5; ++i) store_.put_job(cron_job("0 * * * * ?", kStart));
  auto thread = make("node-a", 2);
  thread.start();
  clock_.wait_for_sleepers(1);
  EXPECT_EQ(store_.calls("scan"), 3);  // 2 + 2 + 1 jobs
  EXPECT_EQ(sink_.fires().size(), 5u);
  thread.stop();
}

TEST_F(ScheduleThreadTest, WakeEndsTheSleepAtOnce) {
  auto thread = make();
  thread.start();
  clock_.wait_for_sleepers(1);
  ASSERT_EQ(store_.calls("scan"), 1);
  store_.put_job(cron_job("* * * * * ?", kStart + 1000));
  thread.wake();
  clock_.wait_for_sleepers(1);
  EXPECT_EQ(store_.calls("scan"), 2);
  EXPECT_EQ(sink_.fires().size(), 5u);
  thread.stop();
}

TEST_F(ScheduleThreadTest, FailedScanIsTriedAgainAtTheNextSecond) {
  store_.fail_with("connection refused");
  auto thread = make();
  thread.start();
  clock_.wait_for_sleepers(1);
  EXPECT_EQ(store_.calls("scan"), 1);
  store_.fail_with(std::nullopt);
  clock_.advance(1000ms);
  clock_.wait_for_sleepers(1);
  EXPECT_EQ(store_.calls("scan"), 2);
  thread.stop();
}

TEST_F(ScheduleThreadTest, StopEndsTheThreadDuringItsSleep) {
  auto thread = make();
  thread.start();
  clock_.wait_for_sleepers(1);
  thread.stop();
  thread.stop();
  EXPECT_EQ(store_.calls("scan"), 1);
}

// ---------------------------------------------------------------------------------------------
// The feeder

class PendingFeederTest : public ::testing::Test {
 protected:
  PendingFeeder make() {
    return PendingFeeder(store_, tasks_, "node-a",
                         [this](const PendingFire& f) {
                           std::lock_guard lock(mutex_);
                           return pushed_.insert(f.log_id).second;
                         },
                         {});
  }
  JobLog log(std::string node, std::int64_t at, FireState state = FireState::kPending, TriggerType type = TriggerType::kManual) {
    JobLog l;
    l.job_id = 1;
    l.job_group = 1;
    l.state = state;
    l.trigger_type = type;
    l.scheduled_time = at;
    l.admin_node = std::move(node);
    return store_.put_log(l);
  }
  std::set<std::int64_t> pushed() const {
    std::lock_guard lock(mutex_);
    return pushed_;
  }
  void advance(std::chrono::milliseconds d) {
    clock_.advance(d);
    timer_.process_until(clock_.steady_now());
    tasks_.wait_idle();
  }

  FakeClock clock_{kStart};
  common::HierarchicalWheelTimer timer_{clock_, {}, {.manual = true}};
  common::RecurringTasks tasks_{timer_, clock_};
  FakeScheduleStore store_;
  mutable std::mutex mutex_;
  std::set<std::int64_t> pushed_;
};

TEST_F(PendingFeederTest, FeedsThisNodesPendingFiresDueWithinTheWindowOnly) {
  auto overdue = log("node-a", kStart - 30'000);
  auto soon = log("node-a", kStart + 5'000, FireState::kPending, TriggerType::kRetry);
  log("node-a", kStart + 5'001);
  log("node-b", kStart);
  log("node-a", kStart, FireState::kTriggered);
  log("node-a", kStart, FireState::kCancelled);
  auto feeder = make();
  EXPECT_EQ(feeder.feed_once(), 2u);
  EXPECT_EQ(pushed(), (std::set<std::int64_t>{overdue.id, soon.id}));
  EXPECT_EQ(feeder.feed_once(), 0u);  // already in the ring
}

TEST_F(PendingFeederTest, ReadFailureIsLoggedAndTheNextPassTriesAgain) {
  log("node-a", kStart);
  store_.fail_with("connection refused");
  auto feeder = make();
  EXPECT_EQ(feeder.feed_once(), 0u);
  store_.fail_with(std::nullopt);
  EXPECT_EQ(feeder.feed_once(), 1u);
}

TEST_F(PendingFeederTest, FeedsOnceASecond) {
  auto feeder = make();
  feeder.start();
  tasks_.wait_idle();
  EXPECT_EQ(store_.calls("pending"), 1);
  log("node-a", kStart + 2000);
  advance(999ms);
  EXPECT_EQ(store_.calls("pending"), 1);
  advance(1ms);
  EXPECT_EQ(store_.calls("pending"), 2);
  EXPECT_EQ(pushed().size(), 1u);
  feeder.stop();
}

// ---- The feeder's misfire rule: late pending fires, a restarted node's own stale fires ----

constexpr std::int64_t kRestart = 1'700'000'040'000;
const std::string kOwnNode = "node-a";

class FeederMisfireTest : public ::testing::Test {
 protected:
  FeederMisfireTest() {
    do_nothing_ = job(MisfireStrategy::kDoNothing);
    fire_once_ = job(MisfireStrategy::kFireOnceNow);
  }

  Job job(MisfireStrategy misfire, ScheduleType type = ScheduleType::kCron, std::string conf = "* * * * * ?") {
    Job j;
    j.job_group = 5;
    j.schedule_type = type;
    j.schedule_conf = std::move(conf);
    j.misfire_strategy = misfire;
    j.trigger_status = 1;
    return store_.put_job(j);
  }
  JobLog log(const Job& j, std::int64_t at, TriggerType type = TriggerType::kSchedule, std::string node = kOwnNode) {
    JobLog l;
    l.job_id = j.id;
    l.job_group = j.job_group;
    l.state = FireState::kPending;
    l.trigger_type = type;
    l.scheduled_time = at;
    l.admin_node = std::move(node);
    return store_.put_log(l);
  }
  static PendingFire fire_of(const JobLog& l) { return {l.id, l.job_id, l.scheduled_time}; }

  // Pushes go to pushed_; the ring's answer (new or not) is whether the id was seen before.
  PendingFeeder feeder() {
    return PendingFeeder(store_, tasks_, kOwnNode,
                         [this](const PendingFire& fire) {
                           pushed_.push_back(fire);
                           return ring_.insert(fire.log_id).second;
                         },
                         {.finished_runs = &finished_});
  }

  FakeClock clock_{kRestart};
  common::HierarchicalWheelTimer timer_{clock_, {}, {.manual = true}};
  common::RecurringTasks tasks_{timer_, clock_};
  FakeScheduleStore store_;
  FinishedRuns finished_;
  Job do_nothing_, fire_once_;
  std::vector<PendingFire> pushed_;
  std::set<std::int64_t> ring_;
};

TEST_F(FeederMisfireTest, PushesThisNodesFiresDueWithinTheWindowInDueOrder) {
  auto soon = log(do_nothing_, kRestart + 5'000);
  auto due = log(do_nothing_, kRestart - 5'000);  // late by exactly the window: not a misfire
  log(do_nothing_, kRestart + 5'001);             // not due within the window
  log(do_nothing_, kRestart, TriggerType::kSchedule, "node-b");
  auto f = feeder();
  EXPECT_EQ(f.feed_once(), 2u);
  EXPECT_EQ(pushed_, (std::vector<PendingFire>{fire_of(due), fire_of(soon)}));
  EXPECT_EQ(store_.calls("cancel_pending"), 0);
}

TEST_F(FeederMisfireTest, RestartedNodesOwnLateFireOfADoNothingJobIsCancelledNotSent) {
  // The node stopped with this fire pending and came back 95 s later under the same id.
  auto stale = log(do_nothing_, kRestart - 95'000);
  auto f = feeder();
  EXPECT_EQ(f.feed_once(), 0u);
  EXPECT_TRUE(pushed_.empty());
  const JobLog row = store_.log(stale.id);
  EXPECT_EQ(row.state, FireState::kCancelled);
  EXPECT_EQ(row.trigger_msg,
            "misfire: this fire was 95000 ms late, more than the misfire threshold of 5000 ms; the job's misfire "
            "strategy DO_NOTHING skips a late fire");
  EXPECT_FALSE(row.trigger_time);
  f.feed_once();
  EXPECT_TRUE(pushed_.empty());
  EXPECT_EQ(store_.calls("cancel_pending"), 1);  // nothing left to cancel
  EXPECT_EQ(finished_.counts(), (std::vector<FinishedRuns::Count>{{5, FireState::kCancelled, 1}}));
}

TEST_F(FeederMisfireTest, RestartedNodesOwnLateFiresOfAFireOnceNowJobGoOutOnce) {
  auto oldest = log(fire_once_, kRestart - 95'000);
  auto older = log(fire_once_, kRestart - 94'000);
  auto newest = log(fire_once_, kRestart - 93'000);
  auto f = feeder();
  EXPECT_EQ(f.feed_once(), 1u);
  EXPECT_EQ(pushed_, std::vector<PendingFire>{fire_of(newest)});
  for (const auto& l : {oldest, older}) {
    const JobLog row = store_.log(l.id);
    EXPECT_EQ(row.state, FireState::kCancelled);
    EXPECT_NE(row.trigger_msg.find("coalesced into it"), std::string::npos) << row.trigger_msg;
  }
  // Still pending at the next pass (not claimed yet): the same fire again, nothing else.
  clock_.advance(std::chrono::seconds(1));
  EXPECT_EQ(f.feed_once(), 0u);
  EXPECT_EQ(pushed_, (std::vector<PendingFire>{fire_of(newest), fire_of(newest)}));
  EXPECT_EQ(store_.log(newest.id).state, FireState::kPending);
}

TEST_F(FeederMisfireTest, LateFiresSomeoneAskedForGoOut) {
  auto manual = log(do_nothing_, kRestart - 95'000, TriggerType::kManual);
  auto retry = log(do_nothing_, kRestart - 94'000, TriggerType::kRetry);
  auto f = feeder();
  EXPECT_EQ(f.feed_once(), 2u);
  EXPECT_EQ(pushed_, (std::vector<PendingFire>{fire_of(manual), fire_of(retry)}));
}

TEST_F(FeederMisfireTest, FireAFullPoolLeftWaitingBeyondTheWindowFollowsItsJobsStrategy) {
  auto waiting = log(do_nothing_, kRestart);
  auto f = feeder();
  EXPECT_EQ(f.feed_once(), 1u);  // on time; the pools refuse it and it stays pending
  clock_.advance(std::chrono::milliseconds(5'000));
  f.feed_once();
  EXPECT_EQ(store_.log(waiting.id).state, FireState::kPending);  // late by the window: still sent
  clock_.advance(std::chrono::milliseconds(1));
  f.feed_once();
  EXPECT_EQ(store_.log(waiting.id).state, FireState::kCancelled);
  EXPECT_EQ(pushed_.size(), 2u);
}

TEST_F(FeederMisfireTest, CancelledFixDelayFireGivesTheJobItsNextTime) {
  auto fix_delay = job(MisfireStrategy::kDoNothing, ScheduleType::kFixDelay, "20");
  store_.update_job(fix_delay.id, [](Job& j) { j.trigger_next_time = kAwaitingCompletion; });
  auto stale = log(fix_delay, kRestart - 95'000);
  auto f = feeder();
  f.feed_once();
  EXPECT_EQ(store_.log(stale.id).state, FireState::kCancelled);
  EXPECT_EQ(store_.job(fix_delay.id).trigger_next_time, kRestart + 20'000);
  EXPECT_EQ(store_.logs().size(), 1u);  // no retry
}

TEST_F(FeederMisfireTest, WhenTheCancellationFailsNothingIsPushedAndTheNextPassTriesAgain) {
  auto older = log(fire_once_, kRestart - 30'000);
  auto newest = log(fire_once_, kRestart - 10'000);
  auto on_time = log(do_nothing_, kRestart);
  store_.fail_with("database down", "cancel_pending");
  auto f = feeder();
  EXPECT_EQ(f.feed_once(), 0u);
  EXPECT_TRUE(pushed_.empty());
  EXPECT_EQ(store_.log(older.id).state, FireState::kPending);
  store_.fail_with(std::nullopt);
  EXPECT_EQ(f.feed_once(), 2u);
  EXPECT_EQ(pushed_, (std::vector<PendingFire>{fire_of(newest), fire_of(on_time)}));
  EXPECT_EQ(store_.log(older.id).state, FireState::kCancelled);
}

}  // namespace
}  // namespace cronwheel::admin
