#pragma once

// The scheduling ports' contract (admin/model/schedule_store.h, trigger_store.h,
// completion_store.h) as one typed GoogleTest suite, run against the in-memory fakes
// (tests/unit/admin/model/fake_scheduling_stores_test.cpp, label unit) and against PostgreSQL
// (tests/integration/scheduling_stores_pgtest.cpp, label db): the same bodies, so the fakes the
// scheduler, trigger and completion tests use behave like the real stores.
//
// A binary includes this header once and instantiates the suite with a fixture type F:
//
//   struct F {
//     F();                                   // fresh, empty stores
//     admin::ScheduleStore& schedule();
//     admin::TriggerStore& trigger();
//     admin::CompletionStore& completion();
//     admin::Group put_group(admin::Group);  // a new group, id assigned
//     // A new job as given (trigger status and times, child jobs), id assigned.
//     admin::Job put_job(admin::Job);
//     // A log row as given (state, owner, times, ...), id assigned, job_group from its job.
//     admin::JobLog put_log(admin::JobLog);
//     // What the store behind `port` holds now (the fakes keep a store each; PostgreSQL one).
//     admin::JobLog log(Port, std::int64_t id);
//     std::vector<admin::JobLog> logs(Port);  // every row, by id
//     admin::Job job(Port, std::int64_t id);
//     // An EXECUTOR registration of `address`, renewed `age_ms` ago (database clock).
//     void put_registration(const std::string& address, std::int64_t age_ms);
//     // An admin node row for `node` whose lease ends `left_ms` from now (database clock).
//     void put_lease(const std::string& node, std::int64_t left_ms);
//   };
//   INSTANTIATE_TYPED_TEST_SUITE_P(Fake, SchedulingContract, F);

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <latch>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "admin/model/completion_store.h"
#include "admin/model/fire.h"
#include "admin/model/records.h"
#include "admin/model/run_end.h"
#include "admin/model/scan.h"
#include "admin/model/schedule_store.h"
#include "admin/model/trigger_store.h"

namespace cronwheel::testing {

namespace scheduling_contract {

using namespace cronwheel::admin;

// The port whose view of the rows a test reads.
enum class Port { kSchedule, kTrigger, kCompletion };

inline const std::string kNode = "node-1";
inline const std::string kOther = "node-2";
inline const std::string kAddress = "http://10.0.0.1:9999/";
inline const std::vector<std::string> kAddresses = {"http://10.0.0.1:9999/", "http://10.0.0.2:9999/",
                                                    "http://10.0.0.3:9999/"};
inline constexpr std::int64_t kT = 1'700'000'040'000;  // on a minute boundary
inline constexpr std::int64_t kNow = kT + 60'000;

template <class F>
class SchedulingContract : public ::testing::Test {
 protected:
  SchedulingContract() {
    Group g;
    g.app_name = "contract-app";
    g.title = "Contract";
    g.address_type = 1;
    g.address_list = kAddresses;
    g.access_token = "group-token";
    group_ = f_.put_group(g);
  }

  // A job of the contract's group, running (trigger status 1) unless told otherwise.
  Job job(ScheduleType type = ScheduleType::kCron, std::int64_t next = kT, MisfireStrategy misfire = MisfireStrategy::kDoNothing,
          int status = 1) {
    Job j;
    j.job_group = group_.id;
    j.job_desc = "contract job";
    j.author = "ops";
    j.schedule_type = type;
    j.schedule_conf = type == ScheduleType::kCron ? "0 * * * * ?" : "30";
    j.misfire_strategy = misfire;
    j.executor_handler = "jobHandler";
    j.executor_param = "job-param";
    j.executor_fail_retry_count = 2;
    j.retry_interval = 30;
    j.trigger_status = status;
    j.trigger_next_time = next;
    return f_.put_job(j);
  }
  // A FIX_DELAY job whose run is going on: its next time awaits the run's end.
  Job awaiting_fix_delay_job() { return job(ScheduleType::kFixDelay, kAwaitingCompletion); }

  // Shard `index` of 3 of `fire`'s fire, sent to kAddresses[index] at kT + 5, in `state`: a row
  // an earlier claim of a broadcast inserted; to put_log().
  JobLog other_shard(const JobLog& fire, int index, FireState state) {
    JobLog shard = fire;
    shard.id = 0;
    shard.shard_index = index;
    shard.shard_total = 3;
    shard.state = state;
    shard.executor_address = kAddresses[static_cast<std::size_t>(index)];
    shard.trigger_time = kT + 5;
    return shard;
  }
  JobLog log(const Job& j, FireState state, std::int64_t scheduled = kT, const std::string& node = kNode,
             TriggerType type = TriggerType::kSchedule, int retries = 0) {
    JobLog l;
    l.job_group = j.job_group;
    l.job_id = j.id;
    l.state = state;
    l.trigger_type = type;
    l.scheduled_time = scheduled;
    l.admin_node = node;
    l.executor_handler = "runHandler";
    l.executor_param = "run-param";
    l.executor_fail_retry_count = retries;
    if (state != FireState::kPending && state != FireState::kCancelled) {
      l.executor_address = kAddress;
      l.trigger_time = scheduled + 10;
    }
    if (state == FireState::kTriggered || state == FireState::kSucceeded || state == FireState::kFailed || state == FireState::kLost) l.trigger_code = 200;
    if (state == FireState::kSucceeded || state == FireState::kFailed || state == FireState::kLost) {
      l.handle_time = scheduled + 20;
      l.handle_code = state == FireState::kSucceeded ? 200 : 500;
    }
    return f_.put_log(l);
  }

  // A planner that counts its calls and plans as the product does.
  FollowUpPlanner counted(RunEnd end, int& calls) {
    return [end, &calls](const JobLog& run, const Job& j, const std::vector<Job>& children) {
      ++calls;
      return plan_follow_ups(end, run, j, children, kNow, kNode);
    };
  }
  static FollowUpPlanner planner(RunEnd end) { return follow_ups_of(end, kNow, kNode); }

  RunResult result(std::int64_t log_id, FireState state) {
    RunResult r;
    r.log_id = log_id;
    r.state = state;
    r.handle_time = kNow;
    r.handle_code = state == FireState::kSucceeded ? 200 : 500;
    r.handle_msg = "done";
    return r;
  }

  TriggerStore::Claim claim_of(std::int64_t log_id, std::vector<std::string> addresses = {kAddress},
                               const std::string& node = kNode) {
    TriggerStore::Claim c;
    c.log_id = log_id;
    c.node_id = node;
    c.trigger_time = kNow;
    c.executor_handler = "claimHandler";
    c.executor_param = "claim-param";
    c.addresses = std::move(addresses);
    return c;
  }

  static std::vector<std::int64_t> ids_of(const std::vector<PendingFire>& fires) {
    std::vector<std::int64_t> ids;
    for (const auto& f : fires) ids.push_back(f.log_id);
    return ids;
  }
  static std::vector<std::int64_t> ids_of(const std::vector<PendingFireRow>& rows) {
    std::vector<std::int64_t> ids;
    for (const auto& r : rows) ids.push_back(r.fire.log_id);
    return ids;
  }
  std::size_t count(Port port) { return f_.logs(port).size(); }

  F f_;
  Group group_;
};

TYPED_TEST_SUITE_P(SchedulingContract);

// ---- CompletionStore ----

TYPED_TEST_P(SchedulingContract, RecordMovesATriggeredRunToItsResultAndWritesChildFires) {
  auto& f = this->f_;
  auto child = this->job(ScheduleType::kCron, kT, MisfireStrategy::kDoNothing, 0);
  // A job with a child: its success fires the child.
  Job with_child = this->job();
  with_child.id = 0;
  with_child.name.clear();
  with_child.child_job_ids = {child.id};
  with_child = f.put_job(with_child);
  auto run = this->log(with_child, FireState::kTriggered);

  int calls = 0;
  auto out = f.completion().record(this->result(run.id, FireState::kSucceeded), this->counted(RunEnd::kSucceeded, calls));
  ASSERT_EQ(out.status, CompletionStore::Status::kRecorded);
  EXPECT_EQ(calls, 1);
  auto stored = f.log(Port::kCompletion, run.id);
  EXPECT_EQ(stored.state, FireState::kSucceeded);
  EXPECT_EQ(stored.handle_time, kNow);
  EXPECT_EQ(stored.handle_code, 200);
  EXPECT_EQ(stored.handle_msg, "done");
  ASSERT_TRUE(out.run);
  EXPECT_EQ(*out.run, stored);
  ASSERT_EQ(out.fires.size(), 1u);
  const auto& fire = out.fires[0];
  EXPECT_EQ(fire.trigger_type, TriggerType::kParent);
  EXPECT_EQ(fire.job_id, child.id);
  EXPECT_EQ(fire.state, FireState::kPending);
  EXPECT_EQ(fire.admin_node, kNode);
  EXPECT_EQ(fire.parent_log_id, run.id);
  EXPECT_EQ(fire.executor_handler, "jobHandler");
  EXPECT_EQ(f.log(Port::kCompletion, fire.id), fire);
  EXPECT_FALSE(out.next_time_set);
}

TYPED_TEST_P(SchedulingContract, RecordAcceptsAResultBeforeTheSendIsAnsweredAndRetriesWithTheJobsHandler) {
  auto& f = this->f_;
  auto j = this->job();
  auto run = this->log(j, FireState::kSending, kT, kNode, TriggerType::kSchedule, 2);

  auto out = f.completion().record(this->result(run.id, FireState::kFailed), this->planner(RunEnd::kFailed));
  ASSERT_EQ(out.status, CompletionStore::Status::kRecorded);
  EXPECT_EQ(f.log(Port::kCompletion, run.id).state, FireState::kFailed);
  ASSERT_EQ(out.fires.size(), 1u);
  const auto& retry = out.fires[0];
  EXPECT_EQ(retry.trigger_type, TriggerType::kRetry);
  EXPECT_EQ(retry.state, FireState::kPending);
  EXPECT_EQ(retry.job_id, j.id);
  EXPECT_EQ(retry.executor_handler, "jobHandler");  // the job's current handler, not the run's
  EXPECT_EQ(retry.executor_param, "run-param");
  EXPECT_EQ(retry.executor_fail_retry_count, 1);
  EXPECT_EQ(retry.scheduled_time, kNow + 30'000);
  EXPECT_EQ(retry.admin_node, kNode);
  EXPECT_EQ(f.log(Port::kCompletion, retry.id), retry);
}

TYPED_TEST_P(SchedulingContract, ARunItsExecutorNeverStartedGoesBackToPendingForTheNodeThatHeardIt) {
  auto& f = this->f_;
  auto j = this->job();
  auto held = this->log(j, FireState::kTriggered, kT, "node-gone");
  auto claimed = this->log(j, FireState::kSending, kT + 1'000, "node-gone");
  for (const auto& run : {held, claimed}) {
    ASSERT_TRUE(f.completion().return_not_started(run.id, kNode, "Not started: executor restarted")) << run.state;
    const auto now = f.log(Port::kCompletion, run.id);
    EXPECT_EQ(now.state, FireState::kPending);
    EXPECT_EQ(now.admin_node, kNode) << "the node that heard it sends it again";
    EXPECT_FALSE(now.trigger_time.has_value());
    EXPECT_EQ(now.trigger_code, 0);
    EXPECT_EQ(now.executor_address, run.executor_address) << "kept, as a released claim's";
    EXPECT_NE(now.trigger_msg.find("Not started: executor restarted"), std::string::npos) << now.trigger_msg;
    EXPECT_EQ(now.scheduled_time, run.scheduled_time);
  }
  // Nothing else moves: a run with its result, one pending already (a repeated callback), and
  // one that does not exist.
  ASSERT_EQ(f.completion().record(this->result(held.id, FireState::kSucceeded), this->planner(RunEnd::kSucceeded)).status,
            CompletionStore::Status::kNotRunning)
      << "pending now: a result cannot end it";
  auto finished = this->log(j, FireState::kTriggered, kT + 2'000);
  ASSERT_EQ(f.completion().record(this->result(finished.id, FireState::kSucceeded), this->planner(RunEnd::kSucceeded)).status,
            CompletionStore::Status::kRecorded);
  const auto before = f.logs(Port::kCompletion);
  EXPECT_FALSE(f.completion().return_not_started(finished.id, kNode, "late"));
  EXPECT_FALSE(f.completion().return_not_started(held.id, kNode, "again"));
  EXPECT_FALSE(f.completion().return_not_started(999'999, kNode, "none"));
  EXPECT_EQ(f.logs(Port::kCompletion), before);
}

TYPED_TEST_P(SchedulingContract, AHeldRunGivenBackForAStoppedJobEndsCancelledAndNothingElseMoves) {
  auto& f = this->f_;
  auto j = this->job();
  auto held = this->log(j, FireState::kTriggered, kNow + 400);
  auto claimed = this->log(j, FireState::kSending, kNow + 900);
  for (const auto& run : {held, claimed}) {
    ASSERT_TRUE(f.completion().cancel_not_started(run.id, "Cancelled: job stopped by ops before its instant")) << run.state;
    const auto now = f.log(Port::kCompletion, run.id);
    EXPECT_EQ(now.state, FireState::kCancelled);
    EXPECT_EQ(now.alarm_status, 1);
    EXPECT_EQ(now.trigger_msg.substr(now.trigger_msg.rfind('\n') + 1), "Cancelled: job stopped by ops before its instant")
        << now.trigger_msg;
    EXPECT_EQ(now.executor_address, run.executor_address);
  }
  auto finished = this->log(j, FireState::kTriggered, kNow + 2'000);
  ASSERT_EQ(f.completion().record(this->result(finished.id, FireState::kSucceeded), this->planner(RunEnd::kSucceeded)).status,
            CompletionStore::Status::kRecorded);
  auto pending = this->log(j, FireState::kPending, kNow + 3'000);
  const auto before = f.logs(Port::kCompletion);
  EXPECT_FALSE(f.completion().cancel_not_started(finished.id, "late"));
  EXPECT_FALSE(f.completion().cancel_not_started(held.id, "again"));
  EXPECT_FALSE(f.completion().cancel_not_started(pending.id, "never sent"));
  EXPECT_FALSE(f.completion().cancel_not_started(999'999, "none"));
  EXPECT_EQ(f.logs(Port::kCompletion), before);
}

TYPED_TEST_P(SchedulingContract, AHeldRunKilledBeforeItsInstantEndsCancelledWithoutAlarmAndItsFollowUps) {
  auto& f = this->f_;
  auto j = this->job();
  auto held = this->log(j, FireState::kTriggered, kNow + 400);
  auto result = this->result(held.id, FireState::kCancelled);
  result.handle_msg = "killed by ops before its instant";
  int calls = 0;
  auto out = f.completion().record(result, this->counted(RunEnd::kCancelled, calls));
  ASSERT_EQ(out.status, CompletionStore::Status::kRecorded);
  EXPECT_EQ(calls, 1) << "a cancel's follow-ups are planned";
  const auto now = f.log(Port::kCompletion, held.id);
  EXPECT_EQ(now.state, FireState::kCancelled);
  EXPECT_EQ(now.alarm_status, 1);
  EXPECT_EQ(now.handle_code, 500);
  EXPECT_EQ(now.handle_msg, "killed by ops before its instant");
  EXPECT_EQ(now.handle_time, kNow);
  EXPECT_EQ(f.completion().record(result, this->planner(RunEnd::kCancelled)).status,
            CompletionStore::Status::kNotRunning)
      << "a cancelled run has no result to repeat";
  EXPECT_EQ(f.log(Port::kCompletion, held.id).handle_msg, "killed by ops before its instant");
}

TYPED_TEST_P(SchedulingContract, HeldRunsAreAJobsSentRunsWhoseInstantIsStillAhead) {
  auto& f = this->f_;
  auto j = this->job();
  auto other_job = this->job(ScheduleType::kCron, kT, MisfireStrategy::kDoNothing, 0);
  auto held = this->log(j, FireState::kTriggered, kNow + 400);
  auto held_too = this->log(j, FireState::kTriggered, kNow + 900);
  auto started = this->log(j, FireState::kTriggered, kNow - 1'000);
  auto pending = this->log(j, FireState::kPending, kNow + 2'000);
  auto elsewhere = this->log(other_job, FireState::kTriggered, kNow + 400);
  auto being_handed_over = this->log(j, FireState::kSending, kNow + 3'000);
  (void)started, (void)pending, (void)elsewhere;
  // log() gives a triggered run a trigger time 10 ms after its scheduled time.
  ASSERT_GT(*f.log(Port::kCompletion, held.id).trigger_time, kNow);
  ASSERT_GT(*f.log(Port::kCompletion, being_handed_over.id).trigger_time, kNow);
  auto runs = f.completion().held_runs(j.id, kNow, 10);
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].id, held.id);
  EXPECT_EQ(runs[1].id, held_too.id);
  EXPECT_EQ(runs[2].id, being_handed_over.id) << "claimed ahead: it may be held already";
  EXPECT_EQ(runs[0], f.log(Port::kCompletion, held.id));
  EXPECT_EQ(f.completion().held_runs(j.id, kNow, 1).size(), 1u) << "at most the limit";
  EXPECT_TRUE(f.completion().held_runs(j.id, *f.log(Port::kCompletion, being_handed_over.id).trigger_time, 10).empty())
      << "an instant that has come is no longer ahead";
}

TYPED_TEST_P(SchedulingContract, RecordOfARepeatedResultChangesNothing) {
  auto& f = this->f_;
  auto j = this->job();
  auto run = this->log(j, FireState::kTriggered, kT, kNode, TriggerType::kSchedule, 2);
  ASSERT_EQ(f.completion().record(this->result(run.id, FireState::kFailed), this->planner(RunEnd::kFailed)).status,
            CompletionStore::Status::kRecorded);
  const auto before = f.logs(Port::kCompletion);

  int calls = 0;
  auto again = f.completion().record(this->result(run.id, FireState::kSucceeded), this->counted(RunEnd::kSucceeded, calls));
  EXPECT_EQ(again.status, CompletionStore::Status::kAlreadyFinal);
  EXPECT_EQ(calls, 0);
  ASSERT_TRUE(again.run);
  EXPECT_EQ(again.run->state, FireState::kFailed);
  EXPECT_TRUE(again.fires.empty());
  EXPECT_EQ(f.logs(Port::kCompletion), before);
}

TYPED_TEST_P(SchedulingContract, RecordLeavesRunsThatWereNeverSentAndReportsUnknownOnes) {
  auto& f = this->f_;
  auto j = this->job();
  auto pending = this->log(j, FireState::kPending, kT);
  auto cancelled = this->log(j, FireState::kCancelled, kT + 60'000);
  int calls = 0;
  for (const auto& l : {pending, cancelled}) {
    auto out = f.completion().record(this->result(l.id, FireState::kSucceeded), this->counted(RunEnd::kSucceeded, calls));
    EXPECT_EQ(out.status, CompletionStore::Status::kNotRunning) << l.state;
    ASSERT_TRUE(out.run);
    EXPECT_EQ(*out.run, l);
    EXPECT_EQ(f.log(Port::kCompletion, l.id), l);
  }
  auto unknown = f.completion().record(this->result(cancelled.id + 1000, FireState::kSucceeded),
                                       this->counted(RunEnd::kSucceeded, calls));
  EXPECT_EQ(unknown.status, CompletionStore::Status::kUnknownLog);
  EXPECT_FALSE(unknown.run);
  EXPECT_EQ(calls, 0);
}

TYPED_TEST_P(SchedulingContract, RecordSetsAFixDelayJobsNextTimeOnlyWhileItAwaitsTheRun) {
  auto& f = this->f_;
  auto awaiting = this->awaiting_fix_delay_job();
  auto rescheduled = this->job(ScheduleType::kFixDelay, kT + 5'000);
  auto stopped = this->job(ScheduleType::kFixDelay, kAwaitingCompletion, MisfireStrategy::kDoNothing, 0);
  auto run1 = this->log(awaiting, FireState::kTriggered);
  auto run2 = this->log(rescheduled, FireState::kTriggered);
  auto run3 = this->log(stopped, FireState::kTriggered);

  auto out1 = f.completion().record(this->result(run1.id, FireState::kSucceeded), this->planner(RunEnd::kSucceeded));
  EXPECT_TRUE(out1.next_time_set);
  EXPECT_EQ(f.job(Port::kCompletion, awaiting.id).trigger_next_time, kNow + 30'000);
  auto out2 = f.completion().record(this->result(run2.id, FireState::kSucceeded), this->planner(RunEnd::kSucceeded));
  EXPECT_FALSE(out2.next_time_set);
  EXPECT_EQ(f.job(Port::kCompletion, rescheduled.id).trigger_next_time, kT + 5'000);
  auto out3 = f.completion().record(this->result(run3.id, FireState::kSucceeded), this->planner(RunEnd::kSucceeded));
  EXPECT_EQ(out3.status, CompletionStore::Status::kRecorded);
  EXPECT_FALSE(out3.next_time_set);
  EXPECT_EQ(f.job(Port::kCompletion, stopped.id).trigger_next_time, kAwaitingCompletion);
}

TYPED_TEST_P(SchedulingContract, RecordOfALostVerdictHoldsOnlyForATriggeredRunOfADeadExecutor) {
  auto& f = this->f_;
  auto j = this->job();
  const std::string live = "http://10.0.0.7:9999/";
  const std::string dead = "http://10.0.0.8:9999/";
  f.put_registration(live, 1'000);
  f.put_registration(dead, 600'000);
  auto lost_run = [&](const std::string& address, FireState state, std::int64_t at) {
    JobLog l;
    l.job_group = j.job_group;
    l.job_id = j.id;
    l.state = state;
    l.trigger_type = TriggerType::kManual;
    l.scheduled_time = at;
    l.admin_node = kNode;
    l.executor_address = address;
    l.trigger_time = at;
    return f.put_log(l);
  };
  auto verdict = [&](const JobLog& l) {
    RunResult r = this->result(l.id, FireState::kLost);
    r.lost_triggered_before = kT + 1'000;
    r.lost_dead_after_ms = 90'000;
    return f.completion().record(r, this->planner(RunEnd::kLost)).status;
  };
  auto of_dead = lost_run(dead, FireState::kTriggered, kT);
  auto of_live = lost_run(live, FireState::kTriggered, kT);
  auto too_recent = lost_run(dead, FireState::kTriggered, kT + 2'000);
  auto sending = lost_run(dead, FireState::kSending, kT);

  EXPECT_EQ(verdict(of_dead), CompletionStore::Status::kRecorded);
  EXPECT_EQ(f.log(Port::kCompletion, of_dead.id).state, FireState::kLost);
  EXPECT_EQ(verdict(of_live), CompletionStore::Status::kNotRunning);
  EXPECT_EQ(verdict(too_recent), CompletionStore::Status::kNotRunning);
  EXPECT_EQ(verdict(sending), CompletionStore::Status::kNotRunning);
  EXPECT_EQ(f.log(Port::kCompletion, of_live.id).state, FireState::kTriggered);
  EXPECT_EQ(f.log(Port::kCompletion, too_recent.id).state, FireState::kTriggered);
  EXPECT_EQ(f.log(Port::kCompletion, sending.id).state, FireState::kSending);
}

TYPED_TEST_P(SchedulingContract, LostCandidatesAreOldTriggeredRunsOfDeadExecutorsOldestFirst) {
  auto& f = this->f_;
  auto j = this->job();
  const std::string live = "http://10.0.0.7:9999/";
  const std::string dead = "http://10.0.0.8:9999/";
  f.put_registration(live, 1'000);
  f.put_registration(dead, 600'000);
  auto run = [&](const std::string& address, FireState state, std::int64_t at) {
    JobLog l;
    l.job_group = j.job_group;
    l.job_id = j.id;
    l.state = state;
    l.trigger_type = TriggerType::kManual;
    l.scheduled_time = at;
    l.admin_node = kNode;
    l.executor_address = address;
    l.trigger_time = at;
    if (state == FireState::kSucceeded) l.handle_time = at + 1;
    return f.put_log(l);
  };
  auto second = run(dead, FireState::kTriggered, kT - 1'000);
  auto first = run("http://10.0.0.9:9999/", FireState::kTriggered, kT - 5'000);  // never registered
  auto third = run(dead, FireState::kTriggered, kT);
  run(live, FireState::kTriggered, kT - 9'000);
  run(dead, FireState::kTriggered, kT + 1);  // triggered after the bound
  run(dead, FireState::kSucceeded, kT - 9'000);
  run(dead, FireState::kSending, kT - 9'000);

  auto all = f.completion().lost_candidates(kT, 90'000, 10);
  std::vector<std::int64_t> ids;
  for (const auto& l : all) ids.push_back(l.id);
  EXPECT_EQ(ids, (std::vector<std::int64_t>{first.id, second.id, third.id}));
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all[0], f.log(Port::kCompletion, first.id));
  EXPECT_EQ(f.completion().lost_candidates(kT, 90'000, 2).size(), 2u);
}

TYPED_TEST_P(SchedulingContract, TriggeredRunsComeByExecutorThenAgeFromTheCursorOn) {
  auto& f = this->f_;
  auto j = this->job();
  const std::string a = "http://10.0.0.7:9999/";
  const std::string b = "http://10.0.0.8:9999/";
  f.put_registration(a, 1'000);  // alive or not, every executor's runs are listed
  auto run = [&](const std::string& address, FireState state, std::int64_t at) {
    JobLog l;
    l.job_group = j.job_group;
    l.job_id = j.id;
    l.state = state;
    l.trigger_type = TriggerType::kManual;
    l.scheduled_time = at;
    l.admin_node = kNode;
    l.executor_address = address;
    l.trigger_time = at;
    if (state == FireState::kSucceeded) l.handle_time = at + 1;
    return f.put_log(l);
  };
  auto b_old = run(b, FireState::kTriggered, kT - 9'000);
  auto a_new = run(a, FireState::kTriggered, kT);
  auto a_old = run(a, FireState::kTriggered, kT - 5'000);
  run(a, FireState::kTriggered, kT + 1);  // triggered after the bound
  run(a, FireState::kSucceeded, kT - 9'000);
  run(b, FireState::kSending, kT - 9'000);

  auto ids_of = [](const std::vector<JobLog>& runs) {
    std::vector<std::int64_t> ids;
    for (const auto& l : runs) ids.push_back(l.id);
    return ids;
  };
  auto all = f.completion().triggered_runs(kT, std::nullopt, 10);
  EXPECT_EQ(ids_of(all), (std::vector<std::int64_t>{a_old.id, a_new.id, b_old.id}));
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all[0], f.log(Port::kCompletion, a_old.id));
  auto page = f.completion().triggered_runs(kT, std::nullopt, 2);
  ASSERT_EQ(page.size(), 2u);
  CompletionStore::RunCursor after{page[1].executor_address, *page[1].trigger_time, page[1].id};
  EXPECT_EQ(ids_of(f.completion().triggered_runs(kT, after, 2)), (std::vector<std::int64_t>{b_old.id}));
}

TYPED_TEST_P(SchedulingContract, RecordOfAForgottenVerdictHoldsForATriggeredRunOfALiveExecutor) {
  auto& f = this->f_;
  auto j = this->job();
  f.put_registration("http://10.0.0.7:9999/", 1'000);  // alive: the executor restarted
  JobLog l;
  l.job_group = j.job_group;
  l.job_id = j.id;
  l.state = FireState::kTriggered;
  l.trigger_type = TriggerType::kManual;
  l.scheduled_time = kT;
  l.admin_node = kNode;
  l.executor_address = "http://10.0.0.7:9999/";
  l.trigger_time = kT;
  l = f.put_log(l);
  RunResult r = this->result(l.id, FireState::kLost);
  r.lost_forgotten = true;
  r.lost_triggered_before = kT - 1;  // triggered after the verdict's bound: not this verdict
  EXPECT_EQ(f.completion().record(r, this->planner(RunEnd::kLost)).status, CompletionStore::Status::kNotRunning);
  r.lost_triggered_before = kT;
  auto recorded = f.completion().record(r, this->planner(RunEnd::kLost));
  EXPECT_EQ(recorded.status, CompletionStore::Status::kRecorded);
  EXPECT_EQ(f.log(Port::kCompletion, l.id).state, FireState::kLost);
  EXPECT_EQ(f.completion().record(r, this->planner(RunEnd::kLost)).status, CompletionStore::Status::kAlreadyFinal);
}

TYPED_TEST_P(SchedulingContract, RecordOfALostVerdictMatchesRegistrationsWithoutTrailingSlashes) {
  auto& f = this->f_;
  auto j = this->job();
  f.put_registration("http://10.0.0.7:9999", 1'000);  // alive, written without the slash
  JobLog l;
  l.job_group = j.job_group;
  l.job_id = j.id;
  l.state = FireState::kTriggered;
  l.trigger_type = TriggerType::kManual;
  l.scheduled_time = kT;
  l.admin_node = kNode;
  l.executor_address = "http://10.0.0.7:9999/";
  l.trigger_time = kT;
  l = f.put_log(l);
  RunResult r = this->result(l.id, FireState::kLost);
  r.lost_triggered_before = kT + 1'000;
  r.lost_dead_after_ms = 90'000;
  EXPECT_EQ(f.completion().record(r, this->planner(RunEnd::kLost)).status, CompletionStore::Status::kNotRunning);
  EXPECT_TRUE(f.completion().lost_candidates(kT + 1'000, 90'000, 10).empty());
}

TYPED_TEST_P(SchedulingContract, RecordOfALostVerdictOnAFinishedRunChangesNothing) {
  auto& f = this->f_;
  auto j = this->job();
  auto done = this->log(j, FireState::kSucceeded, kT);
  RunResult r = this->result(done.id, FireState::kLost);
  r.lost_triggered_before = kT + 1'000;
  r.lost_dead_after_ms = 90'000;
  int calls = 0;
  auto out = f.completion().record(r, this->counted(RunEnd::kLost, calls));
  EXPECT_NE(out.status, CompletionStore::Status::kRecorded);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(f.log(Port::kCompletion, done.id), done);
}

TYPED_TEST_P(SchedulingContract, RecordOfConcurrentResultsMovesTheRunOnceAndWritesItsFollowUpsOnce) {
  auto& f = this->f_;
  auto j = this->job();
  auto run = this->log(j, FireState::kTriggered, kT, kNode, TriggerType::kSchedule, 2);
  constexpr int kThreads = 2;
  std::latch start(kThreads);
  std::vector<CompletionStore::Status> statuses(kThreads);
  {
    std::vector<std::jthread> threads;
    for (int i = 0; i < kThreads; ++i) {
      threads.emplace_back([&, i] {
        start.arrive_and_wait();
        statuses[i] = f.completion().record(this->result(run.id, FireState::kFailed), this->planner(RunEnd::kFailed)).status;
      });
    }
  }
  EXPECT_EQ(std::count(statuses.begin(), statuses.end(), CompletionStore::Status::kRecorded), 1);
  EXPECT_EQ(std::count(statuses.begin(), statuses.end(), CompletionStore::Status::kAlreadyFinal), 1);
  EXPECT_EQ(this->count(Port::kCompletion), 2u);  // the run and one RETRY
}

// ---- TriggerStore ----

TYPED_TEST_P(SchedulingContract, LoadPendingReadsOnlyThisNodesPendingFireWithItsJobAndGroup) {
  auto& f = this->f_;
  auto j = this->job();
  auto mine = this->log(j, FireState::kPending, kT);
  auto theirs = this->log(j, FireState::kPending, kT + 60'000, kOther);
  auto sent = this->log(j, FireState::kTriggered, kT + 120'000);

  auto loaded = f.trigger().load_pending(mine.id, kNode);
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->log, f.log(Port::kTrigger, mine.id));
  EXPECT_EQ(loaded->job.id, j.id);
  EXPECT_EQ(loaded->job.executor_handler, "jobHandler");
  EXPECT_EQ(loaded->group.id, this->group_.id);
  EXPECT_EQ(loaded->group.access_token, "group-token");
  EXPECT_FALSE(f.trigger().load_pending(theirs.id, kNode));
  EXPECT_FALSE(f.trigger().load_pending(sent.id, kNode));
  EXPECT_FALSE(f.trigger().load_pending(sent.id + 1000, kNode));
}

TYPED_TEST_P(SchedulingContract, ClaimMovesOnlyThisNodesPendingFireToSendingOnce) {
  auto& f = this->f_;
  auto j = this->job();
  auto fire = this->log(j, FireState::kPending, kT);

  EXPECT_TRUE(f.trigger().claim(this->claim_of(fire.id, {kAddress}, kOther)).shards.empty());
  auto claimed = f.trigger().claim(this->claim_of(fire.id));
  EXPECT_EQ(claimed.shards, (std::vector<TriggerStore::Shard>{{fire.id, kAddress, 0, 1}}));
  auto row = f.log(Port::kTrigger, fire.id);
  EXPECT_EQ(row.state, FireState::kSending);
  EXPECT_EQ(row.executor_address, kAddress);
  EXPECT_EQ(row.executor_handler, "claimHandler");
  EXPECT_EQ(row.executor_param, "claim-param");
  EXPECT_EQ(row.trigger_time, kNow);
  EXPECT_TRUE(f.trigger().claim(this->claim_of(fire.id)).shards.empty());
  EXPECT_EQ(this->count(Port::kTrigger), 1u);
}

TYPED_TEST_P(SchedulingContract, ClaimOfABroadcastInsertsASendingRowPerShardButNoExistingScheduledShard) {
  auto& f = this->f_;
  auto j = this->job();
  auto fire = this->log(j, FireState::kPending, kT, kNode, TriggerType::kSchedule, 1);
  // Shard 1 of this scheduled fire exists already (an earlier claim inserted it).
  JobLog existing = f.put_log(this->other_shard(fire, 1, FireState::kTriggered));

  auto claimed = f.trigger().claim(this->claim_of(fire.id, kAddresses));
  ASSERT_EQ(claimed.shards.size(), 2u);
  EXPECT_EQ(claimed.shards[0], (TriggerStore::Shard{fire.id, kAddresses[0], 0, 3}));
  EXPECT_EQ(claimed.shards[1].address, kAddresses[2]);
  EXPECT_EQ(claimed.shards[1].shard_index, 2);
  EXPECT_EQ(claimed.shards[1].shard_total, 3);
  auto row = f.log(Port::kTrigger, claimed.shards[1].log_id);
  EXPECT_EQ(row.state, FireState::kSending);
  EXPECT_EQ(row.job_id, j.id);
  EXPECT_EQ(row.trigger_type, TriggerType::kSchedule);
  EXPECT_EQ(row.scheduled_time, kT);
  EXPECT_EQ(row.admin_node, kNode);
  EXPECT_EQ(row.executor_handler, "claimHandler");
  EXPECT_EQ(row.executor_param, "claim-param");
  EXPECT_EQ(row.executor_fail_retry_count, 1);
  EXPECT_EQ(row.executor_address, kAddresses[2]);
  EXPECT_EQ(f.log(Port::kTrigger, existing.id), existing);
  EXPECT_EQ(this->count(Port::kTrigger), 3u);
}

TYPED_TEST_P(SchedulingContract, ClaimOfABroadcastInsertsNoScheduledShardThatHasRunAlready) {
  auto& f = this->f_;
  auto j = this->job();
  auto fire = this->log(j, FireState::kPending, kT, kNode, TriggerType::kSchedule);
  // Shard 2 of this scheduled fire ran already (an earlier claim inserted it, and it ended).
  JobLog ran = this->other_shard(fire, 2, FireState::kSucceeded);
  ran.trigger_code = 200;
  ran.handle_time = kT + 10;
  ran.handle_code = 200;
  ran = f.put_log(ran);

  auto claimed = f.trigger().claim(this->claim_of(fire.id, kAddresses));
  ASSERT_EQ(claimed.shards.size(), 2u);
  EXPECT_EQ(claimed.shards[0], (TriggerStore::Shard{fire.id, kAddresses[0], 0, 3}));
  EXPECT_EQ(claimed.shards[1].shard_index, 1);
  EXPECT_EQ(f.log(Port::kTrigger, ran.id), ran);
  EXPECT_EQ(this->count(Port::kTrigger), 3u);
}

TYPED_TEST_P(SchedulingContract, ClaimOfABroadcastLeavesTheClaimedRowsNotesOnThatRow) {
  auto& f = this->f_;
  auto j = this->job();
  JobLog taken = this->log(j, FireState::kPending, kT, kNode, TriggerType::kManual);
  ASSERT_FALSE(f.trigger().claim(this->claim_of(taken.id)).shards.empty());
  ASSERT_TRUE(f.trigger().release_claim(taken.id, kNode, "not sent in time"));

  auto claimed = f.trigger().claim(this->claim_of(taken.id, {kAddresses[0], kAddresses[1]}));
  ASSERT_EQ(claimed.shards.size(), 2u);
  EXPECT_EQ(f.log(Port::kTrigger, taken.id).trigger_msg, "not sent in time");
  auto shard = f.log(Port::kTrigger, claimed.shards[1].log_id);
  EXPECT_EQ(shard.trigger_msg, "");  // the note is about the claimed row's own attempt
  EXPECT_EQ(shard.trigger_code, 0);
  EXPECT_EQ(shard.trigger_time, kNow);
  EXPECT_EQ(shard.state, FireState::kSending);
}

TYPED_TEST_P(SchedulingContract, ClaimOfAManualBroadcastInsertsEveryShard) {
  auto& f = this->f_;
  auto j = this->job();
  auto fire = this->log(j, FireState::kPending, kT, kNode, TriggerType::kManual);
  auto claimed = f.trigger().claim(this->claim_of(fire.id, kAddresses));
  ASSERT_EQ(claimed.shards.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(claimed.shards[i].shard_index, i);
    EXPECT_EQ(claimed.shards[i].address, kAddresses[i]);
    EXPECT_EQ(f.log(Port::kTrigger, claimed.shards[i].log_id).trigger_type, TriggerType::kManual);
  }
}

TYPED_TEST_P(SchedulingContract, ReleaseClaimPutsThisNodesSendingRowBackToPendingWithTheNote) {
  auto& f = this->f_;
  auto j = this->job();
  auto fire = this->log(j, FireState::kPending, kT);
  ASSERT_FALSE(f.trigger().claim(this->claim_of(fire.id)).shards.empty());

  EXPECT_FALSE(f.trigger().release_claim(fire.id, kOther, "late"));
  EXPECT_TRUE(f.trigger().release_claim(fire.id, kNode, "not sent in time"));
  auto row = f.log(Port::kTrigger, fire.id);
  EXPECT_EQ(row.state, FireState::kPending);
  EXPECT_FALSE(row.trigger_time);
  EXPECT_EQ(row.trigger_msg, "not sent in time");
  EXPECT_EQ(row.executor_address, kAddress);
  EXPECT_FALSE(f.trigger().release_claim(fire.id, kNode, "again"));
}

TYPED_TEST_P(SchedulingContract, MoveClaimPointsThisNodesSendingRowAtAnotherExecutor) {
  auto& f = this->f_;
  auto j = this->job();
  auto fire = this->log(j, FireState::kPending, kT);
  ASSERT_FALSE(f.trigger().claim(this->claim_of(fire.id)).shards.empty());
  const std::string next = "http://10.9.9.9:9999/";

  EXPECT_FALSE(f.trigger().move_claim(fire.id, kOther, kAddress, next, "moved")) << "another node's";
  EXPECT_FALSE(f.trigger().move_claim(fire.id, kNode, next, kAddress, "moved")) << "not at that executor";
  EXPECT_TRUE(f.trigger().move_claim(fire.id, kNode, kAddress, next, "not reached; sent to the next"));
  auto row = f.log(Port::kTrigger, fire.id);
  EXPECT_EQ(row.state, FireState::kSending);
  EXPECT_EQ(row.executor_address, next);
  EXPECT_EQ(row.trigger_msg, "not reached; sent to the next");

  ASSERT_TRUE(f.trigger().release_claim(fire.id, kNode, "late"));
  EXPECT_FALSE(f.trigger().move_claim(fire.id, kNode, next, kAddress, "moved")) << "pending, not sending";
}

TYPED_TEST_P(SchedulingContract, RecordTriggeredMovesSendingToTriggeredAndKeepsEarlierNotes) {
  auto& f = this->f_;
  auto j = this->job();
  auto fire = this->log(j, FireState::kPending, kT);
  ASSERT_FALSE(f.trigger().claim(this->claim_of(fire.id)).shards.empty());
  ASSERT_TRUE(f.trigger().release_claim(fire.id, kNode, "first attempt late"));
  ASSERT_FALSE(f.trigger().claim(this->claim_of(fire.id)).shards.empty());

  EXPECT_EQ(f.trigger().record_triggered(fire.id, kOther, "ok"), TriggerStore::Recorded::kNotOurs);
  EXPECT_EQ(f.trigger().record_triggered(fire.id, kNode, "ok"), TriggerStore::Recorded::kRecorded);
  auto row = f.log(Port::kTrigger, fire.id);
  EXPECT_EQ(row.state, FireState::kTriggered);
  EXPECT_EQ(row.trigger_code, 200);
  EXPECT_EQ(row.trigger_msg, "first attempt late\nok");
  EXPECT_EQ(f.trigger().record_triggered(fire.id, kNode, "ok"), TriggerStore::Recorded::kNotOurs);
}

TYPED_TEST_P(SchedulingContract, RecordTriggeredAfterTheResultKeepsTheResultsState) {
  auto& f = this->f_;
  auto j = this->job();
  // The result came first: the run is succeeded, without a trigger code yet.
  JobLog l = this->log(j, FireState::kSucceeded, kT);
  l.id = 0;
  l.scheduled_time = kT + 60'000;
  l.trigger_code = 0;
  auto result_first = f.put_log(l);

  EXPECT_EQ(f.trigger().record_triggered(result_first.id, kNode, "ok"), TriggerStore::Recorded::kResultFirst);
  auto row = f.log(Port::kTrigger, result_first.id);
  EXPECT_EQ(row.state, FireState::kSucceeded);
  EXPECT_EQ(row.trigger_code, 200);
  EXPECT_EQ(row.trigger_msg, "ok");
  EXPECT_EQ(row.handle_code, 200);
}

// A fire whose delivery is unknown waits for its result: triggered, not confirmed (code 500),
// guarded like record_triggered; a result that came first proves the delivery (code 200).
TYPED_TEST_P(SchedulingContract, RecordUnconfirmedLeavesTheRunTriggeredWithCode500) {
  auto& f = this->f_;
  auto j = this->awaiting_fix_delay_job();
  auto fire = this->log(j, FireState::kPending, kT);
  ASSERT_FALSE(f.trigger().claim(this->claim_of(fire.id)).shards.empty());

  EXPECT_EQ(f.trigger().record_unconfirmed(fire.id, kOther, "no answer"), TriggerStore::Recorded::kNotOurs);
  EXPECT_EQ(f.trigger().record_unconfirmed(fire.id, kNode, "no answer"), TriggerStore::Recorded::kRecorded);
  auto row = f.log(Port::kTrigger, fire.id);
  EXPECT_EQ(row.state, FireState::kTriggered);
  EXPECT_EQ(row.trigger_code, 500);
  EXPECT_EQ(row.trigger_msg, "no answer");
  EXPECT_EQ(f.job(Port::kTrigger, j.id).trigger_next_time, kAwaitingCompletion);  // not ended
  EXPECT_EQ(this->count(Port::kTrigger), 1u);                                      // no retry
  EXPECT_EQ(f.trigger().record_unconfirmed(fire.id, kNode, "no answer"), TriggerStore::Recorded::kNotOurs);

  JobLog l = this->log(j, FireState::kSucceeded, kT + 60'000);
  l.id = 0;
  l.scheduled_time = kT + 120'000;
  l.trigger_code = 0;
  auto result_first = f.put_log(l);
  EXPECT_EQ(f.trigger().record_unconfirmed(result_first.id, kNode, "no answer"), TriggerStore::Recorded::kResultFirst);
  row = f.log(Port::kTrigger, result_first.id);
  EXPECT_EQ(row.state, FireState::kSucceeded);
  EXPECT_EQ(row.trigger_code, 200);
}

TYPED_TEST_P(SchedulingContract, RecordFailedFromSendingWritesARetryWithTheJobsHandler) {
  auto& f = this->f_;
  auto j = this->job();
  auto fire = this->log(j, FireState::kPending, kT, kNode, TriggerType::kSchedule, 2);
  ASSERT_FALSE(f.trigger().claim(this->claim_of(fire.id)).shards.empty());

  TriggerStore::Failure failure{fire.id, kNode, FireState::kSending, kNow + 5, "refused", "", ""};
  auto out = f.trigger().record_failed(failure, this->planner(RunEnd::kTriggerFailed));
  ASSERT_EQ(out.recorded, TriggerStore::Recorded::kRecorded);
  auto row = f.log(Port::kTrigger, fire.id);
  EXPECT_EQ(row.state, FireState::kFailed);
  EXPECT_EQ(row.trigger_code, 500);
  EXPECT_EQ(row.trigger_msg, "refused");
  EXPECT_EQ(row.trigger_time, kNow);  // the claim's
  EXPECT_EQ(row.executor_handler, "claimHandler");
  ASSERT_EQ(out.fires.size(), 1u);
  EXPECT_EQ(out.fires[0].trigger_type, TriggerType::kRetry);
  EXPECT_EQ(out.fires[0].executor_handler, "jobHandler");
  EXPECT_EQ(out.fires[0].executor_param, "claim-param");
  EXPECT_EQ(out.fires[0].executor_fail_retry_count, 1);
  EXPECT_EQ(out.fires[0].scheduled_time, kNow + 30'000);
  EXPECT_EQ(f.log(Port::kTrigger, out.fires[0].id), out.fires[0]);
  EXPECT_FALSE(out.next_time_set);
}

TYPED_TEST_P(SchedulingContract, RecordFailedFromPendingRecordsTheSendAndTheFixDelayNextTime) {
  auto& f = this->f_;
  auto j = this->awaiting_fix_delay_job();
  auto fire = this->log(j, FireState::kPending, kT);

  TriggerStore::Failure failure{fire.id, kNode, FireState::kPending, kNow, "no address", "h", "p"};
  auto out = f.trigger().record_failed(failure, this->planner(RunEnd::kTriggerFailed));
  ASSERT_EQ(out.recorded, TriggerStore::Recorded::kRecorded);
  EXPECT_TRUE(out.fires.empty());  // no retries left
  EXPECT_TRUE(out.next_time_set);
  EXPECT_EQ(f.job(Port::kTrigger, j.id).trigger_next_time, kNow + 30'000);
  auto row = f.log(Port::kTrigger, fire.id);
  EXPECT_EQ(row.state, FireState::kFailed);
  EXPECT_EQ(row.trigger_time, kNow);
  EXPECT_EQ(row.executor_handler, "h");
  EXPECT_EQ(row.executor_param, "p");
}

TYPED_TEST_P(SchedulingContract, RecordFailedIsGuardedByStateAndOwner) {
  auto& f = this->f_;
  auto j = this->job();
  auto pending = this->log(j, FireState::kPending, kT, kNode, TriggerType::kSchedule, 2);
  auto theirs = this->log(j, FireState::kSending, kT + 60'000, kOther, TriggerType::kSchedule, 2);
  const auto before = f.logs(Port::kTrigger);
  int calls = 0;
  auto plan = this->counted(RunEnd::kTriggerFailed, calls);

  TriggerStore::Failure wrong_state{pending.id, kNode, FireState::kSending, kNow, "refused", "", ""};
  TriggerStore::Failure wrong_owner{theirs.id, kNode, FireState::kSending, kNow, "refused", "", ""};
  EXPECT_EQ(f.trigger().record_failed(wrong_state, plan).recorded, TriggerStore::Recorded::kNotOurs);
  EXPECT_EQ(f.trigger().record_failed(wrong_owner, plan).recorded, TriggerStore::Recorded::kNotOurs);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(f.logs(Port::kTrigger), before);
}

TYPED_TEST_P(SchedulingContract, ClaimOfAShardRowSendsItAsThatShard) {
  auto& f = this->f_;
  auto j = this->job();
  auto fire = this->log(j, FireState::kPending, kT);
  auto c = this->claim_of(fire.id, {kAddresses[2]});
  c.shard_index = 2;
  c.shard_total = 3;
  auto claimed = f.trigger().claim(c);
  EXPECT_EQ(claimed.shards, (std::vector<TriggerStore::Shard>{{fire.id, kAddresses[2], 2, 3}}));
  auto row = f.log(Port::kTrigger, fire.id);
  EXPECT_EQ(row.shard_index, 2);
  EXPECT_EQ(row.shard_total, 3);
  EXPECT_EQ(this->count(Port::kTrigger), 1u);
}

TYPED_TEST_P(SchedulingContract, ClaimIsRefusedWhileTheNodesLeaseIsAboutToEnd) {
  auto& f = this->f_;
  auto j = this->job();
  auto ending = this->log(j, FireState::kPending, kT, "node-ending");
  auto long_lived = this->log(j, FireState::kPending, kT + 60'000, "node-long");
  auto without = this->log(j, FireState::kPending, kT + 120'000, kNode);
  f.put_lease("node-ending", 5'000);
  f.put_lease("node-long", 600'000);

  auto refused = this->claim_of(ending.id, {kAddress}, "node-ending");
  refused.min_lease_ms = 60'000;
  EXPECT_TRUE(f.trigger().claim(refused).shards.empty());
  EXPECT_EQ(f.log(Port::kTrigger, ending.id), ending);

  auto granted = this->claim_of(long_lived.id, {kAddress}, "node-long");
  granted.min_lease_ms = 60'000;
  auto claimed = f.trigger().claim(granted);
  EXPECT_EQ(claimed.shards.size(), 1u);
  ASSERT_TRUE(claimed.lease_left_ms);
  EXPECT_GT(*claimed.lease_left_ms, 60'000);
  EXPECT_LE(*claimed.lease_left_ms, 600'000);

  auto no_lease = this->claim_of(without.id);
  no_lease.min_lease_ms = 60'000;
  auto unleased = f.trigger().claim(no_lease);
  EXPECT_EQ(unleased.shards.size(), 1u);
  EXPECT_FALSE(unleased.lease_left_ms);
}

// ---- ScheduleStore ----

TYPED_TEST_P(SchedulingContract, ScanReadsRunningDueJobsOldestFirstUpToTheLimit) {
  auto& f = this->f_;
  auto second = this->job(ScheduleType::kCron, kT - 1'000);
  auto first = this->job(ScheduleType::kCron, kT - 2'000);
  this->job(ScheduleType::kCron, kT);  // third: beyond the limit
  this->job(ScheduleType::kCron, kT - 5'000, MisfireStrategy::kDoNothing, 0);  // stopped
  this->job(ScheduleType::kCron, kT + 10'000);  // not due

  std::vector<DueJob> seen;
  auto out = f.schedule().scan(kNode, kT + 5'000, 2, [&](const std::vector<DueJob>& due) {
    seen = due;
    return ScanDecision{};
  });
  EXPECT_EQ(out.jobs_read, 2u);
  EXPECT_TRUE(out.fires.empty());
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0], (DueJob{first.id, ScheduleType::kCron, "0 * * * * ?", "UTC", MisfireStrategy::kDoNothing, 0, kT - 2'000}));
  EXPECT_EQ(seen[1].id, second.id);
}

TYPED_TEST_P(SchedulingContract, AScanThatFindsNoJobDueSaysWhenTheNextIsDue) {
  auto& f = this->f_;
  auto decide = [](const std::vector<DueJob>&) { return ScanDecision{}; };
  auto nothing = f.schedule().scan(kNode, kT, 10, decide);
  EXPECT_EQ(nothing.jobs_read, 0u);
  EXPECT_FALSE(nothing.next_due) << "no job at all";
  this->job(ScheduleType::kCron, kT + 9'000, MisfireStrategy::kDoNothing, 0);  // stopped
  this->job(ScheduleType::kCron, kT + 30'000);
  this->job(ScheduleType::kCron, kT + 12'000);
  auto idle = f.schedule().scan(kNode, kT + 5'000, 10, decide);
  EXPECT_EQ(idle.jobs_read, 0u);
  EXPECT_EQ(idle.next_due, kT + 12'000) << "the earliest running job";
  auto busy = f.schedule().scan(kNode, kT + 12'000, 10, decide);
  EXPECT_EQ(busy.jobs_read, 1u);
  EXPECT_FALSE(busy.next_due) << "only said when nothing was due";
}

TYPED_TEST_P(SchedulingContract, ScanReadsAJobsDstPolicy) {
  auto& f = this->f_;
  Job draft;
  draft.job_group = this->group_.id;
  draft.job_desc = "nightly at 02:30";
  draft.author = "ops";
  draft.schedule_type = ScheduleType::kCron;
  draft.schedule_conf = "0 30 2 * * ?";
  draft.timezone = "America/New_York";
  draft.executor_handler = "jobHandler";
  draft.trigger_status = 1;
  draft.trigger_next_time = kT;
  draft.dst = common::DstPolicy{common::DstGap::kFireAfter, common::DstRepeat::kBoth};
  const Job j = f.put_job(draft);
  std::vector<DueJob> seen;
  f.schedule().scan(kNode, kT + 5'000, 10, [&](const std::vector<DueJob>& due) {
    seen = due;
    return ScanDecision{};
  });
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].dst, j.dst);
}

TYPED_TEST_P(SchedulingContract, ScanAdvancesTheJobsAndInsertsTheirFiresOwnedByTheNode) {
  auto& f = this->f_;
  auto j = this->job(ScheduleType::kCron, kT);
  auto out = f.schedule().scan(kNode, kT + 5'000, 10, [&](const std::vector<DueJob>& due) {
    ScanDecision d;
    for (const auto& job : due) {
      d.fires.push_back({job.id, kT, TriggerType::kSchedule});
      d.fires.push_back({job.id, kT + 60'000, TriggerType::kSchedule});
      d.jobs.push_back({job.id, job.trigger_next_time, kT + 60'000, kT + 120'000, 1, ""});
    }
    return d;
  });
  ASSERT_EQ(out.fires.size(), 2u);
  EXPECT_EQ(out.fires[0].job_id, j.id);
  EXPECT_EQ(out.fires[0].scheduled_time, kT);
  EXPECT_EQ(out.fires[1].scheduled_time, kT + 60'000);
  auto stored = f.job(Port::kSchedule, j.id);
  EXPECT_EQ(stored.trigger_last_time, kT + 60'000);
  EXPECT_EQ(stored.trigger_next_time, kT + 120'000);
  EXPECT_EQ(stored.trigger_status, 1);
  auto row = f.log(Port::kSchedule, out.fires[0].log_id);
  EXPECT_EQ(row.state, FireState::kPending);
  EXPECT_EQ(row.trigger_type, TriggerType::kSchedule);
  EXPECT_EQ(row.admin_node, kNode);
  EXPECT_EQ(row.job_group, this->group_.id);
  EXPECT_EQ(row.executor_handler, "jobHandler");
  EXPECT_EQ(row.executor_param, "job-param");
  EXPECT_EQ(row.executor_fail_retry_count, 2);
  EXPECT_EQ(row.shard_index, 0);
  EXPECT_FALSE(row.trigger_time);
}

TYPED_TEST_P(SchedulingContract, ScanWritesNothingForAJobWhoseNextTimeChangedSinceTheRead) {
  auto& f = this->f_;
  auto j = this->job(ScheduleType::kCron, kT);
  auto out = f.schedule().scan(kNode, kT + 5'000, 10, [&](const std::vector<DueJob>& due) {
    ScanDecision d;
    for (const auto& job : due) {
      d.fires.push_back({job.id, kT, TriggerType::kSchedule});
      d.jobs.push_back({job.id, job.trigger_next_time - 1, kT, kT + 60'000, 1, ""});  // not what it has
    }
    return d;
  });
  EXPECT_EQ(out.jobs_read, 1u);
  EXPECT_TRUE(out.fires.empty());
  EXPECT_EQ(f.job(Port::kSchedule, j.id).trigger_next_time, kT);
  EXPECT_TRUE(f.logs(Port::kSchedule).empty());
}

TYPED_TEST_P(SchedulingContract, ScanStopsAJobAndKeepsAScheduledFireUnique) {
  auto& f = this->f_;
  auto j = this->job(ScheduleType::kCron, kT);
  auto existing = this->log(j, FireState::kTriggered, kT);
  auto out = f.schedule().scan(kNode, kT + 5'000, 10, [&](const std::vector<DueJob>& due) {
    ScanDecision d;
    for (const auto& job : due) {
      d.fires.push_back({job.id, kT, TriggerType::kMisfire});
      d.jobs.push_back({job.id, job.trigger_next_time, kT, 0, 0, "no further time"});
    }
    return d;
  });
  EXPECT_TRUE(out.fires.empty());
  auto stored = f.job(Port::kSchedule, j.id);
  EXPECT_EQ(stored.trigger_status, 0);
  EXPECT_EQ(stored.trigger_next_time, 0);
  EXPECT_EQ(stored.trigger_last_time, kT);
  EXPECT_EQ(f.logs(Port::kSchedule), std::vector<JobLog>{existing});
}

TYPED_TEST_P(SchedulingContract, ScanKeepsAScheduledFireUniqueWhenItHasRunAlready) {
  auto& f = this->f_;
  auto j = this->job(ScheduleType::kCron, kT);
  auto ran = this->log(j, FireState::kSucceeded, kT);                  // finished: in the history
  auto next = this->log(j, FireState::kCancelled, kT + 1'000, kNode, TriggerType::kMisfire);
  auto out = f.schedule().scan(kNode, kT + 5'000, 10, [&](const std::vector<DueJob>& due) {
    ScanDecision d;
    for (const auto& job : due) {
      d.fires.push_back({job.id, kT, TriggerType::kSchedule});
      d.fires.push_back({job.id, kT + 1'000, TriggerType::kSchedule});
      d.fires.push_back({job.id, kT + 2'000, TriggerType::kSchedule});
      d.jobs.push_back({job.id, job.trigger_next_time, kT + 2'000, kT + 3'000, 1, ""});
    }
    return d;
  });
  ASSERT_EQ(out.fires.size(), 1u);
  EXPECT_EQ(out.fires[0].scheduled_time, kT + 2'000);
  EXPECT_EQ(f.log(Port::kSchedule, ran.id), ran);
  EXPECT_EQ(f.log(Port::kSchedule, next.id), next);
  EXPECT_EQ(f.logs(Port::kSchedule).size(), 3u);
}

TYPED_TEST_P(SchedulingContract, ScanWritesRecordsOfSkippedFiresAsCancelledMisfireRunsOfTheJobsItAdvanced) {
  auto& f = this->f_;
  auto missed = this->job(ScheduleType::kCron, kT);
  auto moved = this->job(ScheduleType::kCron, kT + 1'000);       // its next time changes meanwhile
  auto taken = this->job(ScheduleType::kCron, kT + 2'000);       // its record's time is taken
  auto existing = this->log(taken, FireState::kSucceeded, kT + 2'000);
  auto out = f.schedule().scan(kNode, kT + 5'000, 10, [&](const std::vector<DueJob>& due) {
    ScanDecision d;
    for (const auto& job : due) {
      const bool stale = job.id == moved.id;
      d.jobs.push_back({job.id, job.trigger_next_time - (stale ? 1 : 0), job.trigger_last_time, kNow, 1, ""});
      d.fires.push_back({job.id, kNow - 1'000, TriggerType::kSchedule});
      d.skipped.push_back({job.id, job.trigger_next_time, kNow - 60'000, 3, false, "misfire: 3 fires skipped"});
    }
    return d;
  });
  EXPECT_EQ(out.misfire_records, 1u);  // moved's job was not advanced; taken's record collides
  EXPECT_EQ(out.misfire_groups, std::vector<std::int64_t>{missed.job_group});
  ASSERT_EQ(out.fires.size(), 2u);     // only pending fires are returned, to be sent
  for (const auto& fire : out.fires) EXPECT_EQ(f.log(Port::kSchedule, fire.log_id).state, FireState::kPending);

  std::vector<JobLog> records;
  for (const auto& l : f.logs(Port::kSchedule)) {
    if (l.state == FireState::kCancelled) records.push_back(l);
  }
  ASSERT_EQ(records.size(), 1u);
  const JobLog& record = records[0];
  EXPECT_EQ(record.job_id, missed.id);
  EXPECT_EQ(record.job_group, this->group_.id);
  EXPECT_EQ(record.trigger_type, TriggerType::kMisfire);
  EXPECT_EQ(record.scheduled_time, kT);
  EXPECT_EQ(record.admin_node, kNode);
  EXPECT_EQ(record.trigger_msg, "misfire: 3 fires skipped");
  EXPECT_FALSE(record.trigger_time);
  EXPECT_EQ(record.shard_index, 0);
  EXPECT_EQ(f.log(Port::kSchedule, existing.id), existing);
}

TYPED_TEST_P(SchedulingContract, PendingListsThisNodesDueFiresOldestFirstUpToTheLimit) {
  auto& f = this->f_;
  auto j = this->job();
  auto b = this->log(j, FireState::kPending, kT + 1'000, kNode, TriggerType::kManual);
  auto a = this->log(j, FireState::kPending, kT, kNode, TriggerType::kRetry);
  auto c = this->log(j, FireState::kPending, kT + 2'000, kNode, TriggerType::kApi);
  this->log(j, FireState::kPending, kT + 9'000, kNode, TriggerType::kApi);  // not due
  this->log(j, FireState::kPending, kT, kOther, TriggerType::kManual);      // another node's
  this->log(j, FireState::kTriggered, kT - 1'000, kNode);       // sent

  auto catch_up = this->job(ScheduleType::kCron, kT, MisfireStrategy::kFireOnceNow);
  auto d = this->log(catch_up, FireState::kPending, kT + 3'000, kNode, TriggerType::kMisfire);

  auto all = f.schedule().pending(kNode, kT + 5'000, 10);
  EXPECT_EQ(this->ids_of(all), (std::vector<std::int64_t>{a.id, b.id, c.id, d.id}));
  ASSERT_EQ(all.size(), 4u);
  // Each with why it exists and its job's misfire strategy, for the misfire rule.
  EXPECT_EQ(all[0], (PendingFireRow{{a.id, j.id, kT}, TriggerType::kRetry, MisfireStrategy::kDoNothing}));
  EXPECT_EQ(all[3],
            (PendingFireRow{{d.id, catch_up.id, kT + 3'000}, TriggerType::kMisfire, MisfireStrategy::kFireOnceNow}));
  EXPECT_EQ(this->ids_of(f.schedule().pending(kNode, kT + 5'000, 2)), (std::vector<std::int64_t>{a.id, b.id}));
}

TYPED_TEST_P(SchedulingContract, CancelPendingCancelsOnlyThisNodesPendingFiresAndWritesTheirFollowUps) {
  auto& f = this->f_;
  auto plain = this->job();
  auto fix_delay = this->awaiting_fix_delay_job();
  auto other_fix_delay = this->awaiting_fix_delay_job();  // one batch, each job its own next time
  auto mine = this->log(plain, FireState::kPending, kT, kNode, TriggerType::kSchedule, 2);
  auto awaiting = this->log(fix_delay, FireState::kPending, kT);
  auto other_awaiting = this->log(other_fix_delay, FireState::kPending, kT + 1'000);
  auto theirs = this->log(plain, FireState::kPending, kT + 60'000, kOther);
  auto sending = this->log(plain, FireState::kSending, kT + 120'000);
  int calls = 0;

  auto moved = f.schedule().cancel_pending({{awaiting.id, "late, DO_NOTHING"},
                                            {theirs.id, "x"},
                                            {mine.id, "coalesced, \"quoted\", {braced}"},
                                            {sending.id, "x"},
                                            {other_awaiting.id, "late too"}},
                                           kNode, this->counted(RunEnd::kMisfireSkipped, calls));
  EXPECT_EQ(moved, (std::vector<std::int64_t>{mine.id, awaiting.id, other_awaiting.id}));
  EXPECT_EQ(calls, 3);
  auto row = f.log(Port::kSchedule, mine.id);
  EXPECT_EQ(row.state, FireState::kCancelled);
  EXPECT_EQ(row.trigger_msg, "coalesced, \"quoted\", {braced}");  // each fire its own message
  EXPECT_FALSE(row.trigger_time);                                  // never sent
  EXPECT_EQ(f.log(Port::kSchedule, awaiting.id).trigger_msg, "late, DO_NOTHING");
  EXPECT_EQ(f.log(Port::kSchedule, other_awaiting.id).trigger_msg, "late too");
  EXPECT_EQ(f.log(Port::kSchedule, theirs.id), theirs);
  EXPECT_EQ(f.log(Port::kSchedule, sending.id), sending);
  // No result will come for a cancelled fire: a FIX_DELAY job gets its next time now.
  EXPECT_EQ(f.job(Port::kSchedule, fix_delay.id).trigger_next_time, kNow + 30'000);
  EXPECT_EQ(f.job(Port::kSchedule, other_fix_delay.id).trigger_next_time, kNow + 30'000);
  EXPECT_EQ(this->count(Port::kSchedule), 5u);  // a skipped fire is not retried
  EXPECT_TRUE(f.schedule().cancel_pending({{mine.id, "again"}}, kNode, this->planner(RunEnd::kMisfireSkipped)).empty());
  EXPECT_TRUE(f.schedule().cancel_pending({}, kNode, this->planner(RunEnd::kMisfireSkipped)).empty());
}

TYPED_TEST_P(SchedulingContract, CancelPendingKeepsWhatTheRowSaidBefore) {
  auto& f = this->f_;
  auto j = this->job();
  JobLog l = this->log(j, FireState::kPending, kT);
  l.id = 0;
  l.scheduled_time = kT + 60'000;
  l.trigger_msg = "node-2 sends it again";
  auto row = f.put_log(l);
  EXPECT_EQ(f.schedule().cancel_pending({{row.id, "misfire"}}, kNode, this->planner(RunEnd::kMisfireSkipped)),
            std::vector<std::int64_t>{row.id});
  EXPECT_EQ(f.log(Port::kSchedule, row.id).trigger_msg, "node-2 sends it again\nmisfire");
}

TYPED_TEST_P(SchedulingContract, TakeOverTakesEveryPendingAndSendingFireOfTheDeadNodes) {
  auto& f = this->f_;
  auto skip = this->job(ScheduleType::kCron, kT, MisfireStrategy::kDoNothing);
  auto catch_up = this->job(ScheduleType::kCron, kT, MisfireStrategy::kFireOnceNow);
  auto late_scheduled = this->log(skip, FireState::kPending, kT, kOther);
  auto late_manual = this->log(skip, FireState::kPending, kT + 2'000, kOther, TriggerType::kManual);
  auto on_time = this->log(skip, FireState::kPending, kT + 60'000, kOther);
  auto late_catch_up = this->log(catch_up, FireState::kPending, kT + 1'000, kOther, TriggerType::kMisfire);
  auto sending = this->log(skip, FireState::kSending, kT + 3'000, kOther);
  auto triggered = this->log(skip, FireState::kTriggered, kT + 4'000, kOther);
  auto alive = this->log(skip, FireState::kPending, kT + 5'000, "node-3");

  auto out = f.schedule().take_over({kOther}, kNode);
  // Taken as they are, in due order, with what the misfire rule the caller applies reads.
  EXPECT_EQ(out.pending,
            (std::vector<PendingFireRow>{
                {{late_scheduled.id, skip.id, kT}, TriggerType::kSchedule, MisfireStrategy::kDoNothing},
                {{late_catch_up.id, catch_up.id, kT + 1'000}, TriggerType::kMisfire, MisfireStrategy::kFireOnceNow},
                {{late_manual.id, skip.id, kT + 2'000}, TriggerType::kManual, MisfireStrategy::kDoNothing},
                {{on_time.id, skip.id, kT + 60'000}, TriggerType::kSchedule, MisfireStrategy::kDoNothing}}));
  for (auto id : this->ids_of(out.pending)) {
    auto row = f.log(Port::kSchedule, id);
    EXPECT_EQ(row.state, FireState::kPending);
    EXPECT_EQ(row.admin_node, kNode);
  }
  ASSERT_EQ(out.sending.size(), 1u);
  EXPECT_EQ(out.sending[0].fire, (PendingFire{sending.id, skip.id, kT + 3'000}));
  EXPECT_EQ(out.sending[0].dead_node, kOther);
  EXPECT_EQ(out.sending[0].executor_address, kAddress);
  EXPECT_EQ(out.sending[0].job_group, this->group_.id);
  EXPECT_EQ(out.sending[0].access_token, "group-token");
  EXPECT_EQ(f.log(Port::kSchedule, sending.id).admin_node, kNode);
  EXPECT_EQ(f.log(Port::kSchedule, sending.id).state, FireState::kSending);
  EXPECT_EQ(f.log(Port::kSchedule, triggered.id), triggered);
  EXPECT_EQ(f.log(Port::kSchedule, alive.id), alive);

  auto again = f.schedule().take_over({kOther}, "node-4");
  EXPECT_TRUE(again.pending.empty());
  EXPECT_TRUE(again.sending.empty());
}

// A node restarted under its own id takes over what its earlier process held (FireTakeover::
// recover_earlier_process): the same statement with the caller among the dead.
TYPED_TEST_P(SchedulingContract, TakeOverOfTheCallersOwnIdGivesItsSendingFiresToResolve) {
  auto& f = this->f_;
  auto j = this->job();
  auto pending = this->log(j, FireState::kPending, kT, kNode);
  auto sending = this->log(j, FireState::kSending, kT + 1'000, kNode);
  auto theirs = this->log(j, FireState::kSending, kT + 2'000, kOther);

  auto out = f.schedule().take_over({kNode}, kNode);
  EXPECT_EQ(this->ids_of(out.pending), std::vector<std::int64_t>{pending.id});
  ASSERT_EQ(out.sending.size(), 1u);
  EXPECT_EQ(out.sending[0].fire, (PendingFire{sending.id, j.id, kT + 1'000}));
  EXPECT_EQ(out.sending[0].dead_node, kNode);
  EXPECT_EQ(f.log(Port::kSchedule, sending.id).state, FireState::kSending);
  EXPECT_EQ(f.log(Port::kSchedule, sending.id).admin_node, kNode);
  EXPECT_EQ(f.log(Port::kSchedule, pending.id).state, FireState::kPending);
  EXPECT_EQ(f.log(Port::kSchedule, theirs.id), theirs);
}

TYPED_TEST_P(SchedulingContract, ResolveSendingMovesATakenOverFireAsTheExecutorSaid) {
  auto& f = this->f_;
  auto j = this->job();
  auto delivered = this->log(j, FireState::kSending, kT);
  auto not_delivered = this->log(j, FireState::kSending, kT + 60'000);
  auto unknown = this->log(j, FireState::kSending, kT + 120'000, kNode, TriggerType::kSchedule, 2);

  EXPECT_TRUE(f.schedule().resolve_sending(delivered.id, kNode, ScheduleStore::Delivery::kDelivered, "has it"));
  auto row = f.log(Port::kSchedule, delivered.id);
  EXPECT_EQ(row.state, FireState::kTriggered);
  EXPECT_EQ(row.trigger_code, 200);
  EXPECT_EQ(row.trigger_msg, "has it");

  EXPECT_TRUE(f.schedule().resolve_sending(not_delivered.id, kNode, ScheduleStore::Delivery::kNotDelivered, "resend"));
  row = f.log(Port::kSchedule, not_delivered.id);
  EXPECT_EQ(row.state, FireState::kPending);
  EXPECT_FALSE(row.trigger_time);
  EXPECT_EQ(row.executor_address, kAddress);
  EXPECT_EQ(row.trigger_msg, "resend");

  // It may be running, or may never have arrived: it waits for its result, unconfirmed.
  EXPECT_TRUE(f.schedule().resolve_sending(unknown.id, kNode, ScheduleStore::Delivery::kUnknown, "no answer"));
  row = f.log(Port::kSchedule, unknown.id);
  EXPECT_EQ(row.state, FireState::kTriggered);
  EXPECT_EQ(row.trigger_code, 500);
  EXPECT_EQ(row.trigger_msg, "no answer");
  EXPECT_EQ(this->count(Port::kSchedule), 3u);  // nothing ended, so no retry
}

TYPED_TEST_P(SchedulingContract, ResolveSendingIsGuardedByStateAndOwnerAndEndsNoRun) {
  auto& f = this->f_;
  auto j = this->awaiting_fix_delay_job();
  auto theirs = this->log(j, FireState::kSending, kT, kOther);
  auto finished = this->log(j, FireState::kSucceeded, kT + 60'000);
  auto unknown = this->log(j, FireState::kSending, kT + 120'000);

  EXPECT_FALSE(f.schedule().resolve_sending(theirs.id, kNode, ScheduleStore::Delivery::kUnknown, "x"));
  EXPECT_FALSE(f.schedule().resolve_sending(finished.id, kNode, ScheduleStore::Delivery::kDelivered, "x"));
  EXPECT_EQ(f.log(Port::kSchedule, theirs.id), theirs);
  EXPECT_EQ(f.log(Port::kSchedule, finished.id), finished);

  EXPECT_TRUE(f.schedule().resolve_sending(unknown.id, kNode, ScheduleStore::Delivery::kUnknown, "no answer"));
  // The job still waits for this run's result.
  EXPECT_EQ(f.job(Port::kSchedule, j.id).trigger_next_time, kAwaitingCompletion);
}

TYPED_TEST_P(SchedulingContract, ScanReturnsTheFiresOfAllJobsInDueOrder) {
  auto& f = this->f_;
  auto a = this->job(ScheduleType::kCron, kT);
  auto b = this->job(ScheduleType::kCron, kT + 1'000);
  auto out = f.schedule().scan(kNode, kT + 5'000, 10, [&](const std::vector<DueJob>& due) {
    ScanDecision d;
    for (const auto& job : due) {  // by job in the order read, then by time
      const std::int64_t first = job.trigger_next_time;
      d.fires.push_back({job.id, first, TriggerType::kSchedule});
      d.fires.push_back({job.id, first + 2'000, TriggerType::kSchedule});
      d.jobs.push_back({job.id, first, first + 2'000, first + 60'000, 1, ""});
    }
    return d;
  });
  ASSERT_EQ(out.fires.size(), 4u);
  std::vector<std::pair<std::int64_t, std::int64_t>> order;
  for (const auto& fire : out.fires) order.emplace_back(fire.job_id, fire.scheduled_time);
  EXPECT_EQ(order, (std::vector<std::pair<std::int64_t, std::int64_t>>{
                       {a.id, kT}, {b.id, kT + 1'000}, {a.id, kT + 2'000}, {b.id, kT + 3'000}}));
}

TYPED_TEST_P(SchedulingContract, TakeOverByRacingNodesGivesEachFireToExactlyOne) {
  auto& f = this->f_;
  auto j = this->job(ScheduleType::kCron, kT, MisfireStrategy::kFireOnceNow);
  std::vector<std::int64_t> fires;
  for (int i = 0; i < 20; ++i) {
    fires.push_back(this->log(j, i % 4 == 0 ? FireState::kSending : FireState::kPending, kT + i * 60'000, kOther).id);
  }
  constexpr int kThreads = 2;
  std::latch start(kThreads);
  std::vector<ScheduleStore::Takeover> taken(kThreads);
  {
    std::vector<std::jthread> threads;
    for (int i = 0; i < kThreads; ++i) {
      threads.emplace_back([&, i] {
        start.arrive_and_wait();
        taken[i] = f.schedule().take_over({kOther}, "taker-" + std::to_string(i));
      });
    }
  }
  std::vector<std::int64_t> all;
  for (int i = 0; i < kThreads; ++i) {
    for (const auto& p : taken[i].pending) {
      all.push_back(p.fire.log_id);
      EXPECT_EQ(f.log(Port::kSchedule, p.fire.log_id).admin_node, "taker-" + std::to_string(i));
    }
    for (const auto& s : taken[i].sending) {
      all.push_back(s.fire.log_id);
      EXPECT_EQ(f.log(Port::kSchedule, s.fire.log_id).admin_node, "taker-" + std::to_string(i));
    }
  }
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, fires);
}

TYPED_TEST_P(SchedulingContract, EveryPlannerIsAskedWithTheRunAsItIsNowAndItsJob) {
  auto& f = this->f_;
  auto child = this->job(ScheduleType::kCron, kT, MisfireStrategy::kDoNothing, 0);
  Job spec = this->job();
  spec.id = 0;
  spec.name.clear();
  spec.child_job_ids = {child.id};
  auto j = f.put_job(spec);
  std::vector<JobLog> runs;
  std::vector<std::vector<std::int64_t>> children;
  FollowUpPlanner capture = [&](const JobLog& run, const Job& job, const std::vector<Job>& kids) {
    EXPECT_EQ(job.id, j.id);
    runs.push_back(run);
    std::vector<std::int64_t> ids;
    for (const auto& k : kids) ids.push_back(k.id);
    children.push_back(ids);
    return FollowUps{};
  };
  auto finished = this->log(j, FireState::kTriggered, kT);
  auto refused = this->log(j, FireState::kSending, kT + 60'000);
  auto queued = this->log(j, FireState::kPending, kT + 120'000);

  ASSERT_EQ(f.completion().record(this->result(finished.id, FireState::kSucceeded), capture).status,
            CompletionStore::Status::kRecorded);
  TriggerStore::Failure failure{refused.id, kNode, FireState::kSending, kNow, "refused", "", ""};
  ASSERT_EQ(f.trigger().record_failed(failure, capture).recorded, TriggerStore::Recorded::kRecorded);
  ASSERT_EQ(f.schedule().cancel_pending({{queued.id, "misfire"}}, kNode, capture).size(), 1u);

  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0], f.log(Port::kCompletion, finished.id));
  EXPECT_EQ(runs[0].state, FireState::kSucceeded);
  EXPECT_EQ(runs[1], f.log(Port::kTrigger, refused.id));
  EXPECT_EQ(runs[1].state, FireState::kFailed);
  EXPECT_EQ(runs[2], f.log(Port::kSchedule, queued.id));
  EXPECT_EQ(runs[2].state, FireState::kCancelled);
  for (const auto& ids : children) EXPECT_EQ(ids, std::vector<std::int64_t>{child.id});
}

TYPED_TEST_P(SchedulingContract, ResolveSendingAddsItsMessageToTheRowsNotes) {
  auto& f = this->f_;
  auto j = this->job();
  JobLog l = this->log(j, FireState::kSending, kT, kOther);
  l.id = 0;
  l.scheduled_time = kT + 60'000;
  l.admin_node = kNode;
  l.trigger_msg = "sent by node-2";
  auto row = f.put_log(l);
  EXPECT_TRUE(f.schedule().resolve_sending(row.id, kNode, ScheduleStore::Delivery::kDelivered, "has it"));
  EXPECT_EQ(f.log(Port::kSchedule, row.id).trigger_msg, "sent by node-2\nhas it");
}

REGISTER_TYPED_TEST_SUITE_P(SchedulingContract, RecordMovesATriggeredRunToItsResultAndWritesChildFires,
                            ScanKeepsAScheduledFireUniqueWhenItHasRunAlready,
                            ClaimOfABroadcastInsertsNoScheduledShardThatHasRunAlready,
                            ARunItsExecutorNeverStartedGoesBackToPendingForTheNodeThatHeardIt,
                            HeldRunsAreAJobsSentRunsWhoseInstantIsStillAhead, AScanThatFindsNoJobDueSaysWhenTheNextIsDue, AHeldRunGivenBackForAStoppedJobEndsCancelledAndNothingElseMoves,
                            AHeldRunKilledBeforeItsInstantEndsCancelledWithoutAlarmAndItsFollowUps,
                            RecordAcceptsAResultBeforeTheSendIsAnsweredAndRetriesWithTheJobsHandler,
                            RecordOfARepeatedResultChangesNothing,
                            RecordLeavesRunsThatWereNeverSentAndReportsUnknownOnes,
                            RecordSetsAFixDelayJobsNextTimeOnlyWhileItAwaitsTheRun,
                            RecordOfALostVerdictHoldsOnlyForATriggeredRunOfADeadExecutor,
                            LostCandidatesAreOldTriggeredRunsOfDeadExecutorsOldestFirst,
                            TriggeredRunsComeByExecutorThenAgeFromTheCursorOn,
                            RecordOfAForgottenVerdictHoldsForATriggeredRunOfALiveExecutor,
                            RecordOfALostVerdictMatchesRegistrationsWithoutTrailingSlashes,
                            RecordOfALostVerdictOnAFinishedRunChangesNothing,
                            RecordOfConcurrentResultsMovesTheRunOnceAndWritesItsFollowUpsOnce,
                            ClaimOfAShardRowSendsItAsThatShard, ClaimIsRefusedWhileTheNodesLeaseIsAboutToEnd,
                            ScanReturnsTheFiresOfAllJobsInDueOrder, TakeOverByRacingNodesGivesEachFireToExactlyOne,
                            EveryPlannerIsAskedWithTheRunAsItIsNowAndItsJob,
                            ResolveSendingAddsItsMessageToTheRowsNotes,
                            LoadPendingReadsOnlyThisNodesPendingFireWithItsJobAndGroup,
                            ClaimMovesOnlyThisNodesPendingFireToSendingOnce,
                            ClaimOfABroadcastInsertsASendingRowPerShardButNoExistingScheduledShard,
                            ClaimOfAManualBroadcastInsertsEveryShard,
                            ClaimOfABroadcastLeavesTheClaimedRowsNotesOnThatRow,
                            ReleaseClaimPutsThisNodesSendingRowBackToPendingWithTheNote,
                            MoveClaimPointsThisNodesSendingRowAtAnotherExecutor,
                            RecordTriggeredMovesSendingToTriggeredAndKeepsEarlierNotes,
                            RecordTriggeredAfterTheResultKeepsTheResultsState, RecordUnconfirmedLeavesTheRunTriggeredWithCode500,
                            RecordFailedFromSendingWritesARetryWithTheJobsHandler,
                            RecordFailedFromPendingRecordsTheSendAndTheFixDelayNextTime,
                            RecordFailedIsGuardedByStateAndOwner, ScanReadsRunningDueJobsOldestFirstUpToTheLimit,
                            ScanReadsAJobsDstPolicy,
                            ScanAdvancesTheJobsAndInsertsTheirFiresOwnedByTheNode,
                            ScanWritesNothingForAJobWhoseNextTimeChangedSinceTheRead,
                            ScanStopsAJobAndKeepsAScheduledFireUnique,
                            ScanWritesRecordsOfSkippedFiresAsCancelledMisfireRunsOfTheJobsItAdvanced,
                            PendingListsThisNodesDueFiresOldestFirstUpToTheLimit,
                            CancelPendingCancelsOnlyThisNodesPendingFiresAndWritesTheirFollowUps,
                            CancelPendingKeepsWhatTheRowSaidBefore,
                            TakeOverTakesEveryPendingAndSendingFireOfTheDeadNodes,
                            TakeOverOfTheCallersOwnIdGivesItsSendingFiresToResolve,
                            ResolveSendingMovesATakenOverFireAsTheExecutorSaid,
                            ResolveSendingIsGuardedByStateAndOwnerAndEndsNoRun);

}  // namespace scheduling_contract

}  // namespace cronwheel::testing
