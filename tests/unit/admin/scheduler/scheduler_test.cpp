// The scheduling core assembled (schedule thread, ring, pools, feeder, heartbeat) over the fake
// stores, a fake sender, a FakeClock and a manual timer for the recurring tasks: every fire goes
// out once, at its second and never before, and a clean stop leaves what was not sent pending
// and the lease released.

#include <gtest/gtest.h>

#include <condition_variable>
#include <map>
#include <mutex>
#include <vector>

#include "admin/scheduler/scheduler.h"
#include "common/timer/hierarchical_wheel_timer.h"
#include "common/timer/recurring_task.h"
#include "tests/support/fake_clock.h"
#include "tests/support/fake_executor_client.h"
#include "tests/support/fake_node_store.h"
#include "tests/support/fake_schedule_store.h"

namespace cronwheel::admin {
namespace {

using namespace std::chrono_literals;
using testing::FakeClock;
using testing::FakeExecutorClient;
using testing::FakeNodeStore;
using testing::FakeScheduleStore;

constexpr std::int64_t kStart = 1'700'000'040'000;  // on a minute boundary
constexpr int kSleepers = 2;                        // ring, schedule thread (the rest: tasks_)

// Sends by moving the row pending → triggered (guarded like the claim), noting the clock.
class StoreSender final : public FireSender {
 public:
  StoreSender(FakeScheduleStore& store, common::Clock& clock) : store_(store), clock_(clock) {}

  SendOutcome send(const PendingFire& fire) noexcept override {
    {
      std::unique_lock lock(mutex_);
      ++started_;
      changed_.notify_all();
      changed_.wait(lock, [&] { return open_; });
    }
    bool claimed = false;
    store_.update_log(fire.log_id, [&](JobLog& l) {
      if (l.state != FireState::kPending || l.admin_node != "node-a") return;
      l.state = FireState::kTriggered;
      l.trigger_time = clock_.now_ms();
      claimed = true;
    });
    std::lock_guard lock(mutex_);
    if (claimed) sent_.push_back({fire, clock_.now_ms()});
    ++calls_;
    changed_.notify_all();
    return {claimed ? SendOutcome::Kind::kTriggered : SendOutcome::Kind::kDropped, 1ms};
  }

  // Sends wait at a gate while it is closed.
  void close() {
    std::lock_guard lock(mutex_);
    open_ = false;
  }
  void open() {
    std::lock_guard lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }
  bool wait_started(std::size_t n) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, 30s, [&] { return started_ >= n; });
  }

  struct Sent {
    PendingFire fire;
    std::int64_t at = 0;
  };
  bool wait_calls(std::size_t n, std::chrono::milliseconds bound = 30s) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, bound, [&] { return calls_ >= n; });
  }
  // Waits for `n` claimed sends. A second call for a fire already sent is dropped by the
  // claim's guard and does not count: the feeder may have read the fire as pending just before
  // its send and hand it to the ring again once the pools are done with it.
  bool wait_sent(std::size_t n, std::chrono::milliseconds bound = 30s) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, bound, [&] { return sent_.size() >= n; });
  }
  std::vector<Sent> sent() const {
    std::lock_guard lock(mutex_);
    return sent_;
  }

 private:
  FakeScheduleStore& store_;
  common::Clock& clock_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::size_t calls_ = 0;
  std::size_t started_ = 0;
  bool open_ = true;
  std::vector<Sent> sent_;
};

class SchedulerTest : public ::testing::Test {
 protected:
  void TearDown() override { sender_.open(); }

  std::unique_ptr<Scheduler> make(std::size_t pool_threads = 300, std::size_t pool_queue = 2'000) {
    AdminNode self;
    self.node_id = "node-a";
    Scheduler::Options options;
    options.pools.fast_max_threads = options.pools.slow_max_threads = pool_threads;
    options.pools.fast_queue_capacity = options.pools.slow_queue_capacity = pool_queue;
    options.heartbeat.interval = 1s;
    options.heartbeat.lease = 3s;
    return std::make_unique<Scheduler>(store_, nodes_, sender_, executors_, clock_, tasks_, self, options);
  }
  // Waits until the threads and the recurring tasks (feeder, lease renewal, takeover) have
  // reacted to the time so far.
  void settle() {
    tasks_.wait_idle();
    clock_.wait_for_sleepers(kSleepers);
  }
  void advance(std::chrono::milliseconds d) {
    clock_.advance(d);
    timer_.process_until(clock_.steady_now());
    settle();
  }
  Job every_second(std::int64_t next) {
    Job j;
    j.job_group = 1;
    j.schedule_type = ScheduleType::kCron;
    j.schedule_conf = "* * * * * ?";
    j.misfire_strategy = MisfireStrategy::kFireOnceNow;
    j.trigger_status = 1;
    j.trigger_next_time = next;
    return store_.put_job(j);
  }

  FakeClock clock_{kStart};
  common::HierarchicalWheelTimer timer_{clock_, {}, {.manual = true}};
  common::RecurringTasks tasks_{timer_, clock_};
  FakeScheduleStore store_;
  FakeNodeStore nodes_{clock_};
  FakeExecutorClient executors_;
  StoreSender sender_{store_, clock_};
};

TEST_F(SchedulerTest, EveryFireOfAJobFiringEverySecondIsSentOnceAtItsSecond) {
  auto job = every_second(kStart + 1000);
  auto scheduler = make();
  scheduler->start();
  settle();
  for (int second = 1; second <= 12; ++second) {
    advance(1s);
    ASSERT_TRUE(sender_.wait_sent(static_cast<std::size_t>(second)));
  }
  auto sent = sender_.sent();
  ASSERT_EQ(sent.size(), 12u);
  for (int i = 0; i < 12; ++i) {
    EXPECT_EQ(sent[i].fire.job_id, job.id);
    EXPECT_EQ(sent[i].fire.scheduled_time, kStart + (i + 1) * 1000);
    EXPECT_EQ(sent[i].at, sent[i].fire.scheduled_time);  // at its second: not before, not later
  }
  scheduler->stop();
  // Decided ahead and never sent: still pending, this node's, for whoever takes them over.
  int pending = 0;
  for (const auto& l : store_.logs()) pending += l.state == FireState::kPending ? 1 : 0;
  EXPECT_EQ(pending, 5);
  EXPECT_EQ(nodes_.expired(), (std::vector<std::string>{"node-a"}));
  EXPECT_EQ(scheduler->stats().pools.triggered, 12u);
}

TEST_F(SchedulerTest, OneShotFireWrittenByTheApiIsSentWithinASecond) {
  auto job = every_second(0);
  store_.update_job(job.id, [](Job& j) { j.trigger_status = 0; });
  auto scheduler = make();
  scheduler->start();
  settle();
  JobLog manual;
  manual.job_id = job.id;
  manual.trigger_type = TriggerType::kApi;
  manual.scheduled_time = kStart + 2500;  // a delayed trigger
  manual.admin_node = "node-a";
  manual = store_.put_log(manual);
  advance(1s);
  advance(1s);
  EXPECT_TRUE(sender_.sent().empty());
  advance(1s);  // the first second boundary after its time
  ASSERT_TRUE(sender_.wait_calls(1));
  ASSERT_EQ(sender_.sent().size(), 1u);
  EXPECT_EQ(sender_.sent()[0].fire.log_id, manual.id);
  EXPECT_EQ(sender_.sent()[0].at, kStart + 3000);
  scheduler->stop();
}

TEST_F(SchedulerTest, PendingFiresOfADeadNodeAreSentByThisOne) {
  nodes_.put({"dead", "", "", kStart - 60'000, kStart - 20'000, kStart - 1});
  auto job = every_second(0);
  store_.update_job(job.id, [](Job& j) { j.trigger_status = 0; });
  JobLog orphan;
  orphan.job_id = job.id;
  orphan.trigger_type = TriggerType::kSchedule;
  orphan.scheduled_time = kStart - 2000;
  orphan.admin_node = "dead";
  orphan = store_.put_log(orphan);
  auto scheduler = make();
  scheduler->start();  // its first heartbeat takes the orphan over
  settle();
  advance(1s);
  ASSERT_TRUE(sender_.wait_calls(1));
  EXPECT_EQ(store_.log(orphan.id).state, FireState::kTriggered);
  EXPECT_EQ(store_.log(orphan.id).admin_node, std::optional<std::string>("node-a"));
  scheduler->stop();
}

TEST_F(SchedulerTest, FireAFullTriggerPoolRefusedStaysPendingAndIsSentOnceThereIsRoom) {
  auto job = every_second(0);
  store_.update_job(job.id, [](Job& j) { j.trigger_status = 0; });
  auto one_shot = [&](TriggerType type) {
    JobLog l;
    l.job_id = job.id;
    l.trigger_type = type;
    l.scheduled_time = kStart + 500;
    l.admin_node = "node-a";
    return store_.put_log(l);
  };
  const JobLog first = one_shot(TriggerType::kManual), second = one_shot(TriggerType::kApi);
  auto scheduler = make(1, 0);  // one thread per pool, no queue
  sender_.close();
  scheduler->start();
  settle();
  advance(1s);  // both go out: the first holds the only thread, the second finds the pools full
  ASSERT_TRUE(sender_.wait_started(1));
  EXPECT_GE(scheduler->stats().pools.deferred_full, 1u);
  EXPECT_EQ(store_.log(second.id).state, FireState::kPending);  // waiting, not failed
  advance(1s);  // fed again, still no room
  advance(1s);
  EXPECT_EQ(store_.log(second.id).state, FireState::kPending);
  sender_.open();
  ASSERT_TRUE(sender_.wait_calls(1));
  // The feeder brings it back and the ring hands it on at its next second; how many seconds
  // that takes depends on which of the two runs first after a tick, so tick until it is sent.
  for (int i = 0; i < 20 && !sender_.wait_sent(2, 100ms); ++i) advance(1s);
  ASSERT_EQ(sender_.sent().size(), 2u);
  EXPECT_EQ(sender_.sent()[0].fire.log_id, first.id);
  EXPECT_EQ(sender_.sent()[1].fire.log_id, second.id);
  EXPECT_GT(sender_.sent()[1].at, kStart + 3000);  // late, never failed
  EXPECT_EQ(store_.log(second.id).state, FireState::kTriggered);
  advance(2s);
  EXPECT_EQ(sender_.sent().size(), 2u);  // exactly once
  EXPECT_EQ(store_.calls("cancel_pending"), 0);  // fires someone asked for go out however late
  scheduler->stop();
}

TEST_F(SchedulerTest, NodeRestartedUnderItsOwnIdSendsItsStaleFiresAsTheirJobsMisfireStrategiesSay) {
  // What node-a left pending when it stopped, 95 s before it starts again under the same id.
  auto stopped = [&](MisfireStrategy misfire) {
    auto job = every_second(0);
    store_.update_job(job.id, [&](Job& j) {
      j.trigger_status = 0;  // no new fires: only the stale ones
      j.misfire_strategy = misfire;
    });
    return job;
  };
  const Job skip = stopped(MisfireStrategy::kDoNothing), catch_up = stopped(MisfireStrategy::kFireOnceNow);
  auto stale = [&](const Job& job, std::int64_t at) {
    JobLog l;
    l.job_id = job.id;
    l.trigger_type = TriggerType::kSchedule;
    l.scheduled_time = at;
    l.admin_node = "node-a";
    return store_.put_log(l);
  };
  const JobLog skipped = stale(skip, kStart - 95'000), older = stale(catch_up, kStart - 95'000),
               newest = stale(catch_up, kStart - 94'000);
  auto scheduler = make();
  scheduler->start();
  settle();
  advance(1s);
  ASSERT_TRUE(sender_.wait_sent(1));
  for (int i = 0; i < 3; ++i) advance(1s);
  ASSERT_EQ(sender_.sent().size(), 1u);
  EXPECT_EQ(sender_.sent()[0].fire.log_id, newest.id);
  EXPECT_EQ(store_.log(newest.id).state, FireState::kTriggered);
  EXPECT_EQ(store_.log(skipped.id).state, FireState::kCancelled);
  EXPECT_NE(store_.log(skipped.id).trigger_msg.find("DO_NOTHING skips a late fire"), std::string::npos);
  EXPECT_EQ(store_.log(older.id).state, FireState::kCancelled);
  EXPECT_NE(store_.log(older.id).trigger_msg.find("coalesced"), std::string::npos);
  scheduler->stop();
}

}  // namespace
}  // namespace cronwheel::admin
