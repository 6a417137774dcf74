// Leases and the takeover of dead nodes' fires, against the fake node and schedule stores and a
// fake executor client, on a FakeClock and a manual timer: the misfire rule for late pending
// fires, the three outcomes of a sending fire, what a node that cannot renew its lease does not
// do, and a renewal that never waits for a takeover.

#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <vector>

#include "admin/scheduler/fire_takeover.h"
#include "admin/scheduler/node_heartbeat.h"
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

constexpr std::int64_t kStart = 1'700'000'040'000;
const std::string kExecutor = "http://127.0.0.1:9999/";

class NodeTakeoverTest : public ::testing::Test {
 protected:
  NodeTakeoverTest() {
    do_nothing_ = job(MisfireStrategy::kDoNothing);
    fire_once_ = job(MisfireStrategy::kFireOnceNow);
    // A node that died a while ago.
    nodes_.put({"dead", "", "", kStart - 60'000, kStart - 20'000, kStart - 5'000});
  }

  std::unique_ptr<NodeHeartbeat> heartbeat(NodeHeartbeat::Options options = {}) {
    AdminNode self;
    self.node_id = "me";
    self.address = "http://127.0.0.1:8080/";
    self.version = "test";
    options.finished_runs = &finished_;
    return std::make_unique<NodeHeartbeat>(
        nodes_, store_, executors_, tasks_, self, "admin-token",
        [this](const std::vector<PendingFire>& fires) {
          std::lock_guard lock(mutex_);
          sent_.insert(sent_.end(), fires.begin(), fires.end());
        },
        options);
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
  JobLog log(const Job& j, FireState state, std::int64_t at, TriggerType type = TriggerType::kSchedule,
             std::string node = "dead") {
    JobLog l;
    l.job_id = j.id;
    l.job_group = j.job_group;
    l.state = state;
    l.trigger_type = type;
    l.scheduled_time = at;
    l.admin_node = std::move(node);
    if (l.state == FireState::kSending) {
      l.executor_address = kExecutor;
      l.trigger_time = at;
      l.trigger_msg = "route FIRST";
    }
    return store_.put_log(l);
  }
  std::vector<PendingFire> sent() const {
    std::lock_guard lock(mutex_);
    return sent_;
  }
  static PendingFire fire_of(const JobLog& l) { return {l.id, l.job_id, l.scheduled_time}; }
  // Moves time, hands what is due to the heartbeat's tasks and waits until their runs are over.
  void advance(std::chrono::milliseconds d) {
    clock_.advance(d);
    timer_.process_until(clock_.steady_now());
    tasks_.wait_idle();
  }

  FakeClock clock_{kStart};
  common::HierarchicalWheelTimer timer_{clock_, {}, {.manual = true}};
  common::RecurringTasks tasks_{timer_, clock_};
  FakeNodeStore nodes_{clock_};
  FakeScheduleStore store_;
  FakeExecutorClient executors_;
  FinishedRuns finished_;
  Job do_nothing_, fire_once_;
  mutable std::mutex mutex_;
  std::vector<PendingFire> sent_;
};

TEST_F(NodeTakeoverTest, HeartbeatRegistersTheNodeAndItsLeaseHoldsUntilOneIntervalBeforeItEnds) {
  auto beat = heartbeat();
  EXPECT_FALSE(beat->lease_valid());
  ASSERT_TRUE(beat->beat_once());
  auto me = nodes_.get("me");
  ASSERT_TRUE(me);
  EXPECT_EQ(me->lease_until, kStart + 15'000);
  EXPECT_EQ(me->started_at, kStart);
  EXPECT_EQ(me->address, "http://127.0.0.1:8080/");
  EXPECT_TRUE(beat->lease_valid());
  clock_.advance(11'999ms);
  EXPECT_TRUE(beat->lease_valid());
  clock_.advance(1ms);
  EXPECT_FALSE(beat->lease_valid());
  ASSERT_TRUE(beat->beat_once());
  EXPECT_TRUE(beat->lease_valid());
  EXPECT_EQ(nodes_.get("me")->started_at, kStart);  // only the first beat starts the node
}

TEST_F(NodeTakeoverTest, DeadNodesPendingFiresBecomeThisNodesAndAreSentOnce) {
  auto soon = log(do_nothing_, FireState::kPending, kStart + 2'000);
  auto late_but_kept = log(fire_once_, FireState::kPending, kStart - 30'000);
  auto late_manual = log(do_nothing_, FireState::kPending, kStart - 30'000, TriggerType::kManual);
  auto barely_late = log(do_nothing_, FireState::kPending, kStart - 5'000);
  auto someone_elses = log(do_nothing_, FireState::kPending, kStart, TriggerType::kSchedule, "alive");
  auto beat = heartbeat();
  ASSERT_TRUE(beat->beat_once());
  EXPECT_EQ(sent(), (std::vector<PendingFire>{fire_of(late_but_kept), fire_of(late_manual), fire_of(barely_late),
                                              fire_of(soon)}));
  for (const auto& l : {soon, late_but_kept, late_manual, barely_late}) {
    EXPECT_EQ(store_.log(l.id).state, FireState::kPending);
    EXPECT_EQ(store_.log(l.id).admin_node, std::optional<std::string>("me"));
  }
  EXPECT_EQ(store_.log(someone_elses.id).admin_node, std::optional<std::string>("alive"));
  ASSERT_TRUE(beat->beat_once());
  EXPECT_EQ(sent().size(), 4u);  // nothing left to take
}

TEST_F(NodeTakeoverTest, LatePendingFireOfADoNothingJobIsCancelledWithTheReason) {
  auto late = log(do_nothing_, FireState::kPending, kStart - 5'001);
  auto beat = heartbeat();
  ASSERT_TRUE(beat->beat_once());
  EXPECT_TRUE(sent().empty());
  const JobLog row = store_.log(late.id);
  EXPECT_EQ(row.state, FireState::kCancelled);
  EXPECT_EQ(row.trigger_msg,
            "admin node dead died before sending this fire and me took it over; misfire: this fire was 5001 ms late, "
            "more than the misfire threshold of 5000 ms; the job's misfire strategy DO_NOTHING skips a late fire");
  EXPECT_FALSE(row.trigger_time);
}

TEST_F(NodeTakeoverTest, LateFiresOfAFireOnceNowJobGoOutOnceAsTheNewest) {
  auto oldest = log(fire_once_, FireState::kPending, kStart - 60'000);
  auto older = log(fire_once_, FireState::kPending, kStart - 30'000);
  auto newest = log(fire_once_, FireState::kPending, kStart - 10'000, TriggerType::kMisfire);
  auto beat = heartbeat();
  ASSERT_TRUE(beat->beat_once());
  EXPECT_EQ(sent(), std::vector<PendingFire>{fire_of(newest)});
  for (const auto& l : {oldest, older}) {
    const JobLog row = store_.log(l.id);
    EXPECT_EQ(row.state, FireState::kCancelled);
    EXPECT_NE(row.trigger_msg.find("FIRE_ONCE_NOW sends only the newest of its late fires (run " +
                                   std::to_string(newest.id)),
              std::string::npos)
        << row.trigger_msg;
  }
  EXPECT_EQ(store_.log(newest.id).state, FireState::kPending);
  EXPECT_EQ(beat->stats().taken_over, 3u);
  EXPECT_EQ(finished_.counts(), (std::vector<FinishedRuns::Count>{{5, FireState::kCancelled, 2}}));
}

TEST_F(NodeTakeoverTest, WhenTheCancellationFailsNothingTakenOverIsSentAndTheFiresStayThisNodes) {
  // Sending the newest late fire while the older ones stay pending would let a later pass take
  // an older one for the newest: the feeder judges them all again instead.
  auto older = log(fire_once_, FireState::kPending, kStart - 30'000);
  auto newest = log(fire_once_, FireState::kPending, kStart - 10'000);
  auto on_time = log(do_nothing_, FireState::kPending, kStart + 1'000);
  store_.fail_with("database down", "cancel_pending");
  FireTakeover takeover(store_, executors_, clock_, "me", "", kPreReadWindowMs, &finished_);
  auto report = takeover.take_over({"dead"});
  EXPECT_TRUE(report.to_send.empty());
  EXPECT_EQ(report.pending, 3u);
  EXPECT_EQ(report.cancelled, 0u);
  EXPECT_TRUE(finished_.counts().empty());
  for (const auto& l : {older, newest, on_time}) {
    EXPECT_EQ(store_.log(l.id).state, FireState::kPending);
    EXPECT_EQ(store_.log(l.id).admin_node, std::optional<std::string>("me"));
  }
}

TEST_F(NodeTakeoverTest, LateFixDelayFireCancelledAsAMisfireGivesTheJobItsNextTime) {
  auto fix_delay = job(MisfireStrategy::kDoNothing, ScheduleType::kFixDelay, "20");
  store_.update_job(fix_delay.id, [](Job& j) { j.trigger_next_time = kAwaitingCompletion; });
  auto late = log(fix_delay, FireState::kPending, kStart - 60'000);
  auto beat = heartbeat();
  ASSERT_TRUE(beat->beat_once());
  EXPECT_TRUE(sent().empty());
  EXPECT_EQ(store_.log(late.id).state, FireState::kCancelled);
  EXPECT_EQ(store_.job(fix_delay.id).trigger_next_time, kStart + 20'000) << "the job would never fire again";
}

TEST_F(NodeTakeoverTest, SendingFireTheExecutorHasIsDeliveredAndNotSentAgain) {
  auto sending = log(fire_once_, FireState::kSending, kStart - 1'000);
  auto beat = heartbeat();
  ASSERT_TRUE(beat->beat_once());
  const JobLog row = store_.log(sending.id);
  EXPECT_EQ(row.state, FireState::kTriggered);
  EXPECT_EQ(row.trigger_code, 200);
  EXPECT_EQ(row.admin_node, std::optional<std::string>("me"));
  EXPECT_NE(row.trigger_msg.find("route FIRST\n"), std::string::npos) << row.trigger_msg;
  EXPECT_NE(row.trigger_msg.find("has the run"), std::string::npos) << row.trigger_msg;
  EXPECT_TRUE(sent().empty());
  auto asked = executors_.calls("log");
  ASSERT_EQ(asked.size(), 1u);
  EXPECT_EQ(asked[0].address, kExecutor);
  EXPECT_EQ(asked[0].log.log_id, sending.id);
  EXPECT_EQ(asked[0].log.log_date_time, sending.scheduled_time);  // as the run was sent
  EXPECT_EQ(asked[0].access_token, "admin-token");
}

TEST_F(NodeTakeoverTest, SendingFireTheExecutorNeverGotGoesBackToPendingAndIsSentAgain) {
  store_.set_group_token(5, "group-token");
  executors_.answer_log(kExecutor, FakeExecutorClient::no_such_log());
  auto sending = log(do_nothing_, FireState::kSending, kStart - 60'000);  // late, but it is not a pending fire
  auto beat = heartbeat();
  ASSERT_TRUE(beat->beat_once());
  const JobLog row = store_.log(sending.id);
  EXPECT_EQ(row.state, FireState::kPending);
  EXPECT_EQ(row.admin_node, std::optional<std::string>("me"));
  EXPECT_EQ(row.executor_address, kExecutor);  // sent again to the same executor
  EXPECT_FALSE(row.trigger_time);
  EXPECT_NE(row.trigger_msg.find("has no such run"), std::string::npos) << row.trigger_msg;
  EXPECT_EQ(sent(), (std::vector<PendingFire>{fire_of(sending)}));
  EXPECT_EQ(executors_.calls("log").at(0).access_token, "group-token");
}

// It may be running: not sent again, and not failed either (it may never have arrived). It waits
// for its result as an unconfirmed triggered run, which the lost-result check asks about.
TEST_F(NodeTakeoverTest, SendingFireWhoseExecutorDoesNotAnswerWaitsForItsResultUnconfirmed) {
  executors_.answer_log(kExecutor, FakeExecutorClient::LogAnswer::fail("connection refused"));
  auto fix_delay = job(MisfireStrategy::kDoNothing, ScheduleType::kFixDelay, "30");
  store_.update_job(fix_delay.id, [](Job& j) { j.trigger_next_time = kAwaitingCompletion; });
  auto sending = log(fix_delay, FireState::kSending, kStart - 1'000);
  auto beat = heartbeat();
  ASSERT_TRUE(beat->beat_once());
  const JobLog row = store_.log(sending.id);
  EXPECT_EQ(row.state, FireState::kTriggered);
  EXPECT_EQ(row.trigger_code, 500);
  EXPECT_EQ(row.admin_node, std::optional<std::string>("me"));
  EXPECT_NE(row.trigger_msg.find("delivery unknown: admin node dead died while sending and executor " + kExecutor +
                                 " does not answer"),
            std::string::npos)
      << row.trigger_msg;
  EXPECT_TRUE(sent().empty());
  // Not ended: the job still waits for this run's result.
  EXPECT_EQ(store_.job(fix_delay.id).trigger_next_time, kAwaitingCompletion);
  EXPECT_EQ(store_.logs().size(), 1u);  // no retry
}

TEST_F(NodeTakeoverTest, SendingFireWhoseResultCameFirstIsLeftAsItIs) {
  auto sending = log(fire_once_, FireState::kSending, kStart - 1'000);
  executors_.on_call([&](const FakeExecutorClient::Call&) -> std::optional<ExecutorClient::Result> {
    store_.update_log(sending.id, [](JobLog& l) { l.state = FireState::kSucceeded; });  // the callback, meanwhile
    return std::nullopt;
  });
  auto beat = heartbeat();
  ASSERT_TRUE(beat->beat_once());
  EXPECT_EQ(store_.log(sending.id).state, FireState::kSucceeded);
}

// A node that dies under load was sending up to a second's fires: its executors are asked about
// them at the same time, not one after another (each answer may take a while).
TEST_F(NodeTakeoverTest, ExecutorsAreAskedAboutManySendingFiresConcurrently) {
  constexpr int kFires = 8;
  std::vector<JobLog> sending;
  for (int i = 0; i < kFires; ++i) sending.push_back(log(fire_once_, FireState::kSending, kStart - 1'000 - i));
  std::mutex m;
  std::condition_variable all_asking;
  int asking = 0, most = 0;
  executors_.on_call([&](const FakeExecutorClient::Call&) -> std::optional<ExecutorClient::Result> {
    std::unique_lock lock(m);
    most = std::max(most, ++asking);
    all_asking.notify_all();
    // Answers once every fire is being asked about (or after a bound, so a failure is quick).
    all_asking.wait_for(lock, 2s, [&] { return most == kFires; });
    --asking;
    return std::nullopt;
  });
  auto beat = heartbeat();
  ASSERT_TRUE(beat->beat_once());
  EXPECT_EQ(most, kFires);
  for (const auto& l : sending) EXPECT_EQ(store_.log(l.id).state, FireState::kTriggered) << l.id;
}

TEST_F(NodeTakeoverTest, RecoveryThatCannotBeRecordedIsTriedAgainAtTheNextHeartbeat) {
  auto sending = log(fire_once_, FireState::kSending, kStart - 1'000);
  store_.fail_with("database down", "resolve_sending");
  auto beat = heartbeat();
  ASSERT_TRUE(beat->beat_once());
  EXPECT_EQ(store_.log(sending.id).state, FireState::kSending);
  EXPECT_EQ(store_.log(sending.id).admin_node, std::optional<std::string>("me"));  // ours now: no one else asks
  store_.fail_with(std::nullopt);
  ASSERT_TRUE(beat->beat_once());
  EXPECT_EQ(store_.log(sending.id).state, FireState::kTriggered);
  EXPECT_EQ(executors_.calls("log").size(), 2u);
}

TEST_F(NodeTakeoverTest, NodeThatCannotRenewItsLeaseTakesNothingOver) {
  auto pending = log(fire_once_, FireState::kPending, kStart);
  nodes_.fail_with("database down");
  auto beat = heartbeat();
  EXPECT_FALSE(beat->beat_once());
  EXPECT_FALSE(beat->lease_valid());
  EXPECT_EQ(store_.calls("take_over"), 0);
  EXPECT_EQ(store_.log(pending.id).admin_node, std::optional<std::string>("dead"));
  EXPECT_EQ(beat->stats().failed_beats, 1u);
}

TEST_F(NodeTakeoverTest, NodeNeverTakesOverItsOwnFiresEvenWhenListedAsDead) {
  // A node paused past its lease may find itself among the expired ones.
  auto mine = log(fire_once_, FireState::kPending, kStart, TriggerType::kSchedule, "me");
  auto theirs = log(fire_once_, FireState::kPending, kStart);
  FireTakeover takeover(store_, executors_, clock_, "me", "", kPreReadWindowMs);
  auto report = takeover.take_over({"dead", "me"});
  EXPECT_EQ(report.to_send, (std::vector<PendingFire>{fire_of(theirs)}));
  EXPECT_EQ(report.pending, 1u);
  EXPECT_EQ(store_.log(mine.id).admin_node, std::optional<std::string>("me"));
  EXPECT_TRUE(takeover.take_over({"me"}).to_send.empty());
  EXPECT_EQ(store_.calls("take_over"), 1);  // nobody else was dead the second time
}

// Restarted under the same id before its lease expired (as a service manager restarts a crashed
// node): no other node takes the earlier process's fires over, so the node itself resolves the
// ones that were being sent, before it sends anything. Its pending fires stay for the feeder.
TEST_F(NodeTakeoverTest, RestartedNodeResolvesTheFiresItsEarlierProcessWasSending) {
  nodes_.put({"me", "", "", kStart - 60'000, kStart - 1'000, kStart + 10'000});  // lease still running
  executors_.answer_log(kExecutor, FakeExecutorClient::no_such_log());
  auto was_sending = log(fire_once_, FireState::kSending, kStart - 2'000, TriggerType::kSchedule, "me");
  auto was_pending = log(fire_once_, FireState::kPending, kStart + 1'000, TriggerType::kSchedule, "me");
  auto beat = heartbeat();
  ASSERT_TRUE(beat->beat_once());
  EXPECT_TRUE(beat->lease_valid());
  const JobLog row = store_.log(was_sending.id);
  EXPECT_EQ(row.state, FireState::kPending);
  EXPECT_NE(row.trigger_msg.find("has no such run, so me sends it again"), std::string::npos) << row.trigger_msg;
  EXPECT_EQ(sent(), (std::vector<PendingFire>{fire_of(was_sending)}));
  EXPECT_EQ(store_.log(was_pending.id).state, FireState::kPending);
  EXPECT_EQ(store_.log(was_pending.id).admin_node, std::optional<std::string>("me"));
  // Once: what this process claims later is its own business.
  ASSERT_TRUE(beat->beat_once());
  EXPECT_EQ(executors_.calls("log").size(), 1u);
}

TEST_F(NodeTakeoverTest, NodeSendsNothingUntilItCouldLookForItsEarlierProcessesFires) {
  auto was_sending = log(fire_once_, FireState::kSending, kStart - 2'000, TriggerType::kSchedule, "me");
  store_.fail_with("database down", "take_over");
  auto beat = heartbeat();
  ASSERT_TRUE(beat->beat_once());  // the lease is renewed...
  EXPECT_FALSE(beat->lease_valid());  // ...but the node may not send yet
  EXPECT_EQ(store_.log(was_sending.id).state, FireState::kSending);
  store_.fail_with(std::nullopt);
  ASSERT_TRUE(beat->beat_once());
  EXPECT_TRUE(beat->lease_valid());
  EXPECT_EQ(store_.log(was_sending.id).state, FireState::kTriggered);  // the executor has it
}

TEST_F(NodeTakeoverTest, ReleaseEndsTheLeaseAtOnceSoOthersTakeOver) {
  auto beat = heartbeat();
  ASSERT_TRUE(beat->beat_once());
  EXPECT_EQ(nodes_.expired(), (std::vector<std::string>{"dead"}));
  beat->release();
  EXPECT_FALSE(beat->lease_valid());
  EXPECT_EQ(nodes_.expired(), (std::vector<std::string>{"dead", "me"}));
}

TEST_F(NodeTakeoverTest, HeartbeatRenewsEveryInterval) {
  NodeHeartbeat::Options options;
  options.interval = 1s;
  options.lease = 3s;
  auto beat = heartbeat(options);
  beat->start();
  tasks_.wait_idle();
  EXPECT_EQ(nodes_.heartbeats(), 0);
  advance(999ms);
  EXPECT_EQ(nodes_.heartbeats(), 0);
  advance(1ms);
  EXPECT_EQ(nodes_.heartbeats(), 1);
  advance(1s);
  EXPECT_EQ(nodes_.heartbeats(), 2);
  EXPECT_EQ(nodes_.get("me")->lease_until, kStart + 5'000);
  beat->stop();
  EXPECT_EQ(timer_.pending_timeouts(), 0u);
  advance(5s);
  EXPECT_EQ(nodes_.heartbeats(), 2);
}

TEST_F(NodeTakeoverTest, TakeoverRunsHalfAnIntervalAfterEachRenewalAndOnlyWithAValidLease) {
  NodeHeartbeat::Options options;
  options.interval = 1s;
  options.lease = 3s;
  auto beat = heartbeat(options);
  nodes_.fail_with("database down");
  beat->start();
  advance(1s);
  advance(500ms);
  EXPECT_EQ(nodes_.heartbeats(), 0);
  EXPECT_TRUE(store_.calls("take_over") == 0 && sent().empty()) << "no lease: nothing taken over";

  auto pending = log(fire_once_, FireState::kPending, kStart + 8'000);
  nodes_.fail_with(std::nullopt);
  advance(500ms);  // 2 s: renewed
  EXPECT_EQ(nodes_.heartbeats(), 1);
  EXPECT_EQ(store_.log(pending.id).admin_node, std::optional<std::string>("dead"));
  // It started while the database was away: it judges no other node before it has renewed for
  // a whole lease (3 s), at the first takeover after that, half an interval after a renewal.
  // Time moves in steps no longer than the interval, so that each run sees its own instant (a
  // single jump would let the takeover of 2.5 s run at 5.5 s, racing the renewals of 3-5 s).
  for (int i = 0; i < 6; ++i) advance(500ms);  // 5 s
  advance(499ms);
  EXPECT_TRUE(sent().empty());
  advance(1ms);  // 5.5 s
  EXPECT_EQ(sent(), (std::vector<PendingFire>{fire_of(pending)}));
  EXPECT_EQ(store_.log(pending.id).admin_node, std::optional<std::string>("me"));
  beat->stop();
}

// Two nodes lose the database together: both leases lapse. The node back first must not take the
// other's fires over as a dead node's; a node that really died is taken over once this one has
// renewed for a whole lease.
TEST_F(NodeTakeoverTest, ALeaseThatLapsedWhileTheDatabaseWasAwayIsNotDeath) {
  NodeHeartbeat::Options options;
  options.interval = 1s;
  options.lease = 3s;
  auto beat = heartbeat(options);
  ASSERT_TRUE(beat->beat_once());
  nodes_.put({"other", "", "", kStart - 60'000, kStart, kStart + 3'000});  // alive, renewing
  auto others = log(fire_once_, FireState::kPending, kStart + 30'000, TriggerType::kSchedule, "other");
  auto deads = log(fire_once_, FireState::kPending, kStart + 30'000);  // node "dead", gone long ago
  beat->start();
  nodes_.fail_with("database down");
  for (int i = 0; i < 5; ++i) advance(1s);  // 5 s: every lease has lapsed, this node's and the other's
  nodes_.fail_with(std::nullopt);
  advance(1s);  // 6 s: renewed
  advance(500ms);
  EXPECT_EQ(nodes_.expired(), (std::vector<std::string>{"dead", "other"}));
  EXPECT_EQ(store_.log(others.id).admin_node, std::optional<std::string>("other"));
  EXPECT_EQ(store_.log(deads.id).admin_node, std::optional<std::string>("dead"));
  // The other node is back too, and renews.
  nodes_.put({"other", "", "", kStart - 60'000, kStart + 7'000, kStart + 60'000});
  advance(2s);  // 8.5 s: renewing for 2.5 s, less than a lease
  EXPECT_EQ(store_.log(deads.id).admin_node, std::optional<std::string>("dead"));
  advance(1s);  // 9.5 s
  EXPECT_EQ(store_.log(deads.id).admin_node, std::optional<std::string>("me"));
  EXPECT_EQ(store_.log(others.id).admin_node, std::optional<std::string>("other"));
  EXPECT_EQ(sent(), (std::vector<PendingFire>{fire_of(deads)}));
  beat->stop();
}

TEST_F(NodeTakeoverTest, ASlowTakeoverDoesNotDelayTheLeaseRenewal) {
  auto sending = log(fire_once_, FireState::kSending, kStart - 1'000);
  std::mutex gate_mutex;
  std::condition_variable gate_changed;
  bool executor_answers = false, asked = false;
  executors_.on_call([&](const FakeExecutorClient::Call&) -> std::optional<ExecutorClient::Result> {
    std::unique_lock lock(gate_mutex);
    asked = true;
    gate_changed.notify_all();
    gate_changed.wait(lock, [&] { return executor_answers; });  // an executor that hangs
    return std::nullopt;
  });
  NodeHeartbeat::Options options;
  options.interval = 1s;
  options.lease = 3s;
  auto beat = heartbeat(options);
  beat->start();
  advance(1s);
  EXPECT_EQ(nodes_.heartbeats(), 1);
  clock_.advance(500ms);  // the takeover asks the executor about the sending fire, and waits
  timer_.process_until(clock_.steady_now());
  {
    std::unique_lock lock(gate_mutex);
    gate_changed.wait(lock, [&] { return asked; });
  }
  for (int k = 2; k <= 6; ++k) {
    clock_.advance(k == 2 ? 500ms : 1s);
    timer_.process_until(clock_.steady_now());
    tasks_.wait_idle_tasks(1);  // the renewal, done, while the takeover is still stuck
    EXPECT_EQ(nodes_.heartbeats(), k);
    EXPECT_TRUE(beat->lease_valid());
  }
  EXPECT_EQ(store_.log(sending.id).state, FireState::kSending);
  {
    std::lock_guard lock(gate_mutex);
    executor_answers = true;
    gate_changed.notify_all();
  }
  tasks_.wait_idle();
  EXPECT_EQ(store_.log(sending.id).state, FireState::kTriggered);
  EXPECT_EQ(executors_.calls("log").size(), 1u);
  beat->stop();
}

}  // namespace
}  // namespace cronwheel::admin
