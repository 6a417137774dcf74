#pragma once

// The backfill store's contract (admin/model/backfill_store.h) as one typed GoogleTest suite, run
// against FakeBackfillStore (tests/unit/admin/model/fake_backfill_store_test.cpp, label unit) and
// PgBackfillStore (tests/integration/backfill_contract_pgtest.cpp, label db).
//
//   struct F {
//     F();                                   // fresh stores, a group of the fixture's; clock at kNow
//     admin::BackfillStore& backfills();
//     admin::Stores stores();                // the groups, jobs, runs and audit log beside it
//     admin::WorkflowStore& workflows();     // the workflows beside it (their runs, node runs)
//     std::int64_t group();
//     // A run row as the scan, a trigger or a send would have written it (any type and state;
//     // a state past pending gets a trigger time). Answers it with its id.
//     admin::JobLog put_run(const admin::JobLog& run);
//     void move(std::int64_t log_id, admin::FireState state);  // as sends and results move a run
//   };
//   INSTANTIATE_TYPED_TEST_SUITE_P(Fake, BackfillContract, F);

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "admin/model/backfill.h"
#include "admin/model/backfill_store.h"
#include "admin/model/run_end.h"
#include "admin/model/stores.h"
#include "admin/model/workflow_store.h"

namespace cronwheel::testing {

namespace backfill_contract {

using namespace cronwheel::admin;

constexpr std::int64_t kNow = 1'767'225'600'000;  // 2026-01-01T00:00:00Z
constexpr std::int64_t kHour = 3'600'000;
constexpr std::int64_t kFrom = kNow - 7 * 24 * kHour;  // a week before
inline const Actor kOperator{std::nullopt, "operator", "192.0.2.9"};
inline const Actor kOther{std::nullopt, "other", "192.0.2.10"};

template <class F>
class BackfillContract : public ::testing::Test {
 protected:
  BackfillStore& store() { return f_.backfills(); }

  // An hourly CRON job of the fixture's group; answers its id.
  std::int64_t job(const std::string& name, int retries = 0) {
    Job j;
    j.job_group = f_.group();
    j.name = name;
    j.job_desc = name;
    j.schedule_type = ScheduleType::kCron;
    j.schedule_conf = "0 0 * * * ?";
    j.executor_handler = "report";
    j.executor_param = "param-of-" + name;
    j.executor_fail_retry_count = retries;
    return f_.stores().jobs.create(j, kOperator).id;
  }

  Backfill create(std::int64_t job_id, std::int64_t hours, OnExisting on_existing = OnExisting::kSkip,
                  int max_concurrent = 5, const Actor& actor = kOperator) {
    Backfill b;
    b.job_id = job_id;
    b.from = kFrom;
    b.to = kFrom + hours * kHour;
    b.on_existing = on_existing;
    b.max_concurrent = max_concurrent;
    b.total = hours;
    b.created_by = actor.username;
    return store().create(b, actor);
  }

  // A step that writes `write` and moves the cursor to its last instant.
  BackfillStore::StepResult write(std::int64_t id, std::vector<std::int64_t> write, const std::string& node = "node-a") {
    return store().step(id, node, kNow, [&](const Backfill&, std::int64_t, const BackfillStore::ExistingLookup&) {
      BackfillStep step;
      step.write = write;
      if (!write.empty()) step.cursor = write.back();
      return step;
    });
  }

  // A step as the pump takes it: the schedule's next instants after the cursor, the runs that
  // exist, the room left (an hourly schedule in UTC).
  BackfillStore::StepResult pump(std::int64_t id, const std::string& node = "node-a") {
    static const Schedule hourly = Schedule::parse(ScheduleType::kCron, "0 0 * * * ?", "UTC");
    return store().step(id, node, kNow,
                        [&](const Backfill& b, std::int64_t unfinished, const BackfillStore::ExistingLookup& existing) {
                          return next_backfill_step(hourly, b, unfinished, existing);
                        });
  }

  // The runs of `job_id`, by id.
  std::vector<JobLog> runs_of(std::int64_t job_id) {
    LogStore::Filter filter;
    filter.job_id = job_id;
    filter.page.limit = 1000;
    auto page = f_.stores().logs.list(filter).items;
    std::sort(page.begin(), page.end(), [](const JobLog& a, const JobLog& b) { return a.id < b.id; });
    return page;
  }

  // Ends every unfinished run of the job: succeeded.
  void finish_all(std::int64_t job_id) {
    for (const auto& r : runs_of(job_id)) {
      if (r.state == FireState::kPending || r.state == FireState::kTriggered) f_.move(r.id, FireState::kSucceeded);
    }
  }

  // A workflow of the fixture's group, `first` then `second` (each a job of its own), hourly
  // CRON, with a parameter `day` defaulting to "today"; overlap as given.
  Workflow workflow(const std::string& name, OverlapPolicy overlap = OverlapPolicy::kWait) {
    Workflow w;
    w.job_group = f_.group();
    w.name = name;
    w.schedule_type = ScheduleType::kCron;
    w.schedule_conf = "0 0 * * * ?";
    w.overlap = overlap;
    w.params = {{"day", "today", true, ""}};
    w.graph.nodes = {{"first", job(name + "-first"), "${params.day}", true, NodeFailurePolicy::kFail},
                     {"second", job(name + "-second"), "", false, NodeFailurePolicy::kFail}};
    w.graph.edges = {{"first", "second"}};
    return f_.workflows().create(w, kOperator);
  }

  Backfill create_of_workflow(std::int64_t workflow_id, std::int64_t hours, OnExisting on_existing = OnExisting::kSkip,
                              int max_concurrent = 5, const std::string& params = R"({"day":"then"})") {
    Backfill b;
    b.workflow_id = workflow_id;
    b.params = params;
    b.from = kFrom;
    b.to = kFrom + hours * kHour;
    b.on_existing = on_existing;
    b.max_concurrent = max_concurrent;
    b.total = hours;
    b.created_by = kOperator.username;
    return store().create(b, kOperator);
  }

  // The workflow's runs of the backfill (none: every run of the workflow), oldest first.
  std::vector<WorkflowRun> workflow_runs(std::int64_t workflow_id, std::optional<std::int64_t> backfill_id = std::nullopt) {
    WorkflowStore::RunFilter filter;
    filter.workflow_id = workflow_id;
    filter.backfill_id = backfill_id;
    filter.page.limit = 1000;
    auto runs = f_.workflows().list_runs(filter).items;
    std::sort(runs.begin(), runs.end(), [](const WorkflowRun& a, const WorkflowRun& b) { return a.id < b.id; });
    return runs;
  }

  // A run of the workflow's schedule at `at`, as the workflow scan writes it (under its overlap
  // policy). Answers it.
  WorkflowRun scheduled_run(const Workflow& w, std::int64_t at) {
    f_.workflows().set_status(w.id, 1, at, kOperator);
    const auto changed = f_.workflows().scan("node-a", kNow, at, 10, [&](const std::vector<DueJob>& due) {
      ScanDecision decision;
      for (const auto& d : due) {
        decision.jobs.push_back({d.id, d.trigger_next_time, d.trigger_next_time, kNow + kHour, 1, ""});
        decision.fires.push_back({d.id, d.trigger_next_time, TriggerType::kSchedule});
      }
      return decision;
    });
    f_.workflows().set_status(w.id, 0, 0, kOperator);
    return changed.runs.at(0);
  }

  // Ends every unfinished run of the workflow: cancelled.
  void cancel_runs(std::int64_t workflow_id) {
    for (const auto& r : workflow_runs(workflow_id)) {
      if (!is_final(r.state)) f_.workflows().cancel(r.id, kNow, "node-a", kOperator);
    }
  }

  AuditEntry last_audit() {
    AuditStore::Filter filter;
    filter.page.limit = 1;
    auto page = f_.stores().audit.list(filter);
    return page.items.empty() ? AuditEntry{} : page.items.front();
  }

  F f_;
};

TYPED_TEST_SUITE_P(BackfillContract);

TYPED_TEST_P(BackfillContract, CreatesRunningWithTheJobsGroupAndAuditsIt) {
  const auto job = this->job("nightly");
  const Backfill b = this->create(job, 24, OnExisting::kRerun, 3);
  EXPECT_GT(b.id, 0);
  EXPECT_EQ(b.job_id, job);
  EXPECT_EQ(b.job_group, this->f_.group());
  EXPECT_EQ(b.from, kFrom);
  EXPECT_EQ(b.to, kFrom + 24 * kHour);
  EXPECT_EQ(b.on_existing, OnExisting::kRerun);
  EXPECT_EQ(b.max_concurrent, 3);
  EXPECT_EQ(b.state, BackfillState::kRunning);
  EXPECT_EQ(b.cursor, std::nullopt);
  EXPECT_EQ(b.total, 24);
  EXPECT_EQ(b.written, 0);
  EXPECT_EQ(b.created_by, "operator");
  EXPECT_EQ(b.created_at, kNow);
  EXPECT_EQ(b.ended_at, std::nullopt);
  EXPECT_EQ(this->store().get(b.id), b);
  EXPECT_EQ(this->store().get(b.id + 1000), std::nullopt);
  const auto audit = this->last_audit();
  EXPECT_EQ(audit.action, "backfill.create");
  EXPECT_EQ(audit.entity_type, "backfill");
  EXPECT_EQ(audit.entity_id, b.id);
  EXPECT_EQ(nlohmann::json::parse(audit.after.value_or("null")), to_json(b));

  Backfill missing;
  missing.job_id = job + 1000;
  missing.from = kFrom;
  missing.to = kNow;
  EXPECT_THROW(this->store().create(missing, kOperator), NotFound);
  Backfill inverted = b;
  inverted.to = inverted.from;
  try {
    this->store().create(inverted, kOperator);
    ADD_FAILURE() << "an empty range was stored";
  } catch (const Conflict& e) {
    EXPECT_EQ(e.field(), "to");
  }
}

TYPED_TEST_P(BackfillContract, ListsNewestFirstByJobStateAndTheCallersGroups) {
  const auto a = this->job("job-a");
  const auto b = this->job("job-b");
  const auto first = this->create(a, 2);
  const auto second = this->create(b, 2);
  const auto third = this->create(a, 3);
  auto ids = [](const Page<Backfill>& page) {
    std::vector<std::int64_t> out;
    for (const auto& x : page.items) out.push_back(x.id);
    return out;
  };
  BackfillStore::Filter filter;
  filter.page.limit = 10;
  auto all = this->store().list(filter);
  EXPECT_EQ(ids(all), (std::vector<std::int64_t>{third.id, second.id, first.id}));
  EXPECT_EQ(all.total, 3);
  filter.job_id = a;
  EXPECT_EQ(ids(this->store().list(filter)), (std::vector<std::int64_t>{third.id, first.id}));
  filter.job_id.reset();
  filter.page = PageRequest(1, 1);
  auto page = this->store().list(filter);
  EXPECT_EQ(ids(page), (std::vector<std::int64_t>{second.id}));
  EXPECT_EQ(page.total, 3);
  filter.page = PageRequest(5, 10);
  page = this->store().list(filter);
  EXPECT_TRUE(page.items.empty());
  EXPECT_EQ(page.total, 3) << "the total of a page past the end";
  filter.page = PageRequest(0, 10);
  filter.scope = std::vector<std::int64_t>{this->f_.group() + 1000};
  EXPECT_TRUE(this->store().list(filter).items.empty()) << "another group's user sees none";
  filter.scope.reset();
  this->store().cancel(second.id, kNow, kOperator, follow_ups_of(RunEnd::kCancelled, kNow, "node-a"));
  filter.state = BackfillState::kCancelled;
  EXPECT_EQ(ids(this->store().list(filter)), (std::vector<std::int64_t>{second.id}));
  const auto running = this->store().running(10);
  ASSERT_EQ(running.size(), 2u);
  EXPECT_EQ(running[0].id, first.id) << "oldest first";
  EXPECT_EQ(running[1].id, third.id);
  EXPECT_EQ(this->store().running(1).size(), 1u);
}

TYPED_TEST_P(BackfillContract, ExistingNamesTheInstantsWithARunOfTheScheduleOrOfABackfillThatWasNotCancelled) {
  const auto job = this->job("with-runs");
  const auto other = this->job("other");
  const auto backfill = this->create(job, 10);
  auto put = [&](std::int64_t job_id, TriggerType type, std::int64_t at, FireState state = FireState::kSucceeded) {
    JobLog run;
    run.job_id = job_id;
    run.job_group = this->f_.group();
    run.trigger_type = type;
    run.scheduled_time = at;
    run.state = state;
    run.admin_node = "node-a";
    if (type == TriggerType::kBackfill) run.backfill_id = backfill.id;
    this->f_.put_run(run);
  };
  put(job, TriggerType::kSchedule, kFrom);
  put(job, TriggerType::kMisfire, kFrom + kHour);  // FIRE_ONCE_NOW's catch-up, sent
  put(job, TriggerType::kMisfire, kFrom + 2 * kHour, FireState::kCancelled);  // a record of skipped fires
  put(job, TriggerType::kSchedule, kFrom + 9 * kHour, FireState::kCancelled);  // dropped as late: never ran
  put(job, TriggerType::kBackfill, kFrom + 3 * kHour, FireState::kCancelled);  // a cancelled backfill's
  put(job, TriggerType::kApi, kFrom + 2 * kHour);
  put(job, TriggerType::kManual, kFrom + 3 * kHour);
  put(job, TriggerType::kBackfill, kFrom + 4 * kHour, FireState::kFailed);
  put(job, TriggerType::kRetry, kFrom + 5 * kHour);
  put(other, TriggerType::kSchedule, kFrom + 6 * kHour);
  put(job, TriggerType::kSchedule, kFrom + 7 * kHour);
  put(job, TriggerType::kBackfill, kFrom + 7 * kHour);  // the same instant twice: once in the answer
  std::vector<std::int64_t> asked;
  for (int h = 0; h < 10; ++h) asked.push_back(kFrom + h * kHour);
  EXPECT_EQ(this->store().existing(job, asked),
            (std::vector<std::int64_t>{kFrom, kFrom + kHour, kFrom + 4 * kHour, kFrom + 7 * kHour}));
  EXPECT_TRUE(this->store().existing(job, {}).empty());
  EXPECT_THROW(this->store().existing(job, std::vector<std::int64_t>(kMaxBackfillInstants + 1, kFrom)),
               std::invalid_argument);
}

TYPED_TEST_P(BackfillContract, AStepWritesPendingBackfillRunsOwnedByTheNodeLikeScheduledFires) {
  const auto job = this->job("to-fill", 2);
  const auto b = this->create(job, 10);
  const auto stepped = this->write(b.id, {kFrom, kFrom + kHour}, "node-b");
  ASSERT_TRUE(stepped.stepped);
  ASSERT_EQ(stepped.fires.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const JobLog& run = stepped.fires[i];
    EXPECT_GT(run.id, 0);
    EXPECT_EQ(run.state, FireState::kPending);
    EXPECT_EQ(run.trigger_type, TriggerType::kBackfill);
    EXPECT_EQ(run.scheduled_time, kFrom + static_cast<std::int64_t>(i) * kHour);
    EXPECT_EQ(run.admin_node, "node-b");
    EXPECT_EQ(run.job_group, this->f_.group());
    EXPECT_EQ(run.executor_handler, "report");
    EXPECT_EQ(run.executor_param, "param-of-to-fill");
    EXPECT_EQ(run.executor_fail_retry_count, 2);
    EXPECT_EQ(run.backfill_id, b.id);
    EXPECT_EQ(this->f_.stores().logs.get(run.id), run) << "as stored";
  }
  EXPECT_EQ(stepped.backfill.cursor, kFrom + kHour);
  EXPECT_EQ(stepped.backfill.written, 2);
  EXPECT_EQ(stepped.backfill.state, BackfillState::kRunning);
  EXPECT_EQ(this->store().get(b.id), stepped.backfill);
  EXPECT_EQ(this->last_audit().action, "backfill.create") << "steps are the system's, not audited";
}

TYPED_TEST_P(BackfillContract, TheRunListFiltersByBackfillNewestFirst) {
  const auto job = this->job("listed", 1);
  const auto b = this->create(job, 10);
  const auto other = this->create(job, 10, OnExisting::kRerun);
  const auto runs = this->write(b.id, {kFrom, kFrom + kHour}).fires;
  this->write(other.id, {kFrom});
  ASSERT_EQ(runs.size(), 2u);
  LogStore::Filter filter;
  filter.backfill_id = b.id;
  auto page = this->f_.stores().logs.list(filter);
  ASSERT_EQ(page.items.size(), 2u);
  EXPECT_EQ(page.items[0].id, runs[1].id) << "newest scheduled first";
  EXPECT_EQ(page.items[1].id, runs[0].id);
  EXPECT_EQ(page.total, 2);
  filter.backfill_id = b.id + 1000;
  EXPECT_TRUE(this->f_.stores().logs.list(filter).items.empty());
}

TYPED_TEST_P(BackfillContract, TheDecisionSeesTheBackfillsUnfinishedRunsAndTheRunsThatExist) {
  const auto job = this->job("counted");
  const auto b = this->create(job, 10);
  const auto written = this->write(b.id, {kFrom, kFrom + kHour, kFrom + 2 * kHour, kFrom + 3 * kHour}).fires;
  ASSERT_EQ(written.size(), 4u);
  this->f_.move(written[0].id, FireState::kSending);
  this->f_.move(written[1].id, FireState::kTriggered);
  this->f_.move(written[2].id, FireState::kSucceeded);
  JobLog scheduled;
  scheduled.job_id = job;
  scheduled.job_group = this->f_.group();
  scheduled.trigger_type = TriggerType::kSchedule;
  scheduled.scheduled_time = kFrom + 5 * kHour;
  scheduled.state = FireState::kPending;  // a pending run of the job's schedule is not the backfill's
  scheduled.admin_node = "node-a";
  this->f_.put_run(scheduled);
  std::optional<std::int64_t> seen_unfinished;
  std::set<std::int64_t> seen_existing;
  Backfill seen;
  auto result = this->store().step(b.id, "node-a", kNow,
                                   [&](const Backfill& read, std::int64_t unfinished, const BackfillStore::ExistingLookup& existing) {
                                     seen = read;
                                     seen_unfinished = unfinished;
                                     seen_existing = existing({kFrom + 2 * kHour, kFrom + 4 * kHour, kFrom + 5 * kHour});
                                     return BackfillStep{};
                                   });
  EXPECT_TRUE(result.stepped);
  EXPECT_EQ(seen_unfinished, 3) << "sending, triggered and pending: unfinished; succeeded is not";
  EXPECT_EQ(seen_existing, (std::set<std::int64_t>{kFrom + 2 * kHour, kFrom + 5 * kHour}));
  EXPECT_EQ(seen.cursor, kFrom + 3 * kHour);
  EXPECT_TRUE(result.fires.empty());
  EXPECT_EQ(result.backfill.cursor, kFrom + 3 * kHour) << "no cursor given: it stays";
  this->f_.move(written[3].id, FireState::kFailed);
  this->f_.move(written[0].id, FireState::kLost);
  this->f_.move(written[1].id, FireState::kSucceeded);
  this->store().step(b.id, "node-a", kNow, [&](const Backfill&, std::int64_t unfinished, const BackfillStore::ExistingLookup&) {
    seen_unfinished = unfinished;
    return BackfillStep{};
  });
  EXPECT_EQ(seen_unfinished, 0);
  const auto runs = this->store().runs(b.id);
  EXPECT_EQ(runs, (BackfillRuns{0, 0, 2, 2, 0}));
}

TYPED_TEST_P(BackfillContract, AnInstantTheBackfillHasARunAtIsNeverWrittenTwice) {
  const auto job = this->job("once");
  const auto b = this->create(job, 10, OnExisting::kRerun);
  ASSERT_EQ(this->write(b.id, {kFrom, kFrom + kHour}).fires.size(), 2u);
  const auto again = this->write(b.id, {kFrom + kHour, kFrom + 2 * kHour});
  ASSERT_EQ(again.fires.size(), 1u) << "a decision that asks twice gets one run";
  EXPECT_EQ(again.fires[0].scheduled_time, kFrom + 2 * kHour);
  EXPECT_EQ(again.backfill.written, 3) << "counted as written once";
  // Another backfill of the job (RERUN) runs the instant again: it is its own run.
  const auto second = this->create(job, 10, OnExisting::kRerun);
  EXPECT_EQ(this->write(second.id, {kFrom}).fires.size(), 1u);
  EXPECT_EQ(this->runs_of(job).size(), 4u);
}

TYPED_TEST_P(BackfillContract, AStepEndsTheBackfillAsTheDecisionSaysAndAnEndedOneIsNotSteppedAgain) {
  const auto job = this->job("ends");
  const auto b = this->create(job, 2);
  auto ended = this->store().step(b.id, "node-a", kNow + 5, [](const Backfill&, std::int64_t, const BackfillStore::ExistingLookup&) {
    BackfillStep step;
    step.skipped = 2;
    step.cursor = kFrom + kHour;
    step.end = BackfillState::kDone;
    step.reason = "every instant dealt with: 0 runs written, 2 instants skipped";
    return step;
  });
  ASSERT_TRUE(ended.stepped);
  EXPECT_EQ(ended.backfill.state, BackfillState::kDone);
  EXPECT_EQ(ended.backfill.ended_at, kNow + 5);
  EXPECT_EQ(ended.backfill.skipped, 2);
  EXPECT_EQ(ended.backfill.reason, "every instant dealt with: 0 runs written, 2 instants skipped");
  bool asked = false;
  auto again = this->store().step(b.id, "node-a", kNow, [&](const Backfill&, std::int64_t, const BackfillStore::ExistingLookup&) {
    asked = true;
    return BackfillStep{};
  });
  EXPECT_FALSE(again.stepped);
  EXPECT_FALSE(asked);
  EXPECT_FALSE(this->store().step(b.id + 1000, "node-a", kNow, [&](const Backfill&, std::int64_t, const BackfillStore::ExistingLookup&) {
                 asked = true;
                 return BackfillStep{};
               }).stepped);
  EXPECT_FALSE(asked);
  EXPECT_TRUE(this->store().running(10).empty());
}

TYPED_TEST_P(BackfillContract, AStepOfABackfillAnotherNodeIsSteppingIsSkippedNotWaitedFor) {
  const auto job = this->job("contended");
  const auto b = this->create(job, 10);
  std::mutex m;
  std::condition_variable cv;
  bool holding = false;
  bool other_done = false;
  std::optional<BackfillStore::StepResult> other;
  std::thread first([&] {
    this->store().step(b.id, "node-a", kNow, [&](const Backfill&, std::int64_t, const BackfillStore::ExistingLookup&) {
      std::unique_lock lock(m);
      holding = true;
      cv.notify_all();
      // Held until the other node's step has come back (bounded, so a broken store fails the
      // test instead of hanging it).
      cv.wait_for(lock, std::chrono::seconds(20), [&] { return other_done; });
      BackfillStep step;
      step.write = {kFrom};
      step.cursor = kFrom;
      return step;
    });
  });
  {
    std::unique_lock lock(m);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(20), [&] { return holding; }));
  }
  bool asked = false;
  auto result = this->store().step(b.id, "node-b", kNow, [&](const Backfill&, std::int64_t, const BackfillStore::ExistingLookup&) {
    asked = true;
    return BackfillStep{};
  });
  {
    std::lock_guard lock(m);
    other_done = true;
    cv.notify_all();
  }
  first.join();
  EXPECT_FALSE(result.stepped);
  EXPECT_FALSE(asked);
  EXPECT_EQ(this->runs_of(job).size(), 1u);
  EXPECT_EQ(this->store().get(b.id)->cursor, kFrom);
}

TYPED_TEST_P(BackfillContract, TwoNodesPumpingOneBackfillAtOnceRunEachInstantOnce) {
  const auto job = this->job("raced");
  const auto b = this->create(job, 48, OnExisting::kSkip, 7);
  std::atomic<bool> stop{false};
  // Two pumps and the sends: each pending run goes out and succeeds soon after.
  auto pumping = [&](const std::string& node) {
    while (!stop.load()) this->pump(b.id, node);
  };
  std::thread a(pumping, "node-a");
  std::thread c(pumping, "node-b");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline && this->store().get(b.id)->state == BackfillState::kRunning) {
    std::int64_t unfinished = 0;
    for (const auto& r : this->runs_of(job)) unfinished += r.state == FireState::kPending ? 1 : 0;
    EXPECT_LE(unfinished, 7) << "never more unfinished runs than max_concurrent";
    this->finish_all(job);
  }
  stop = true;
  a.join();
  c.join();
  const auto ended = *this->store().get(b.id);
  EXPECT_EQ(ended.state, BackfillState::kDone);
  EXPECT_EQ(ended.written, 48);
  EXPECT_EQ(ended.skipped, 0);
  std::map<std::int64_t, int> per_instant;
  for (const auto& r : this->runs_of(job)) ++per_instant[r.scheduled_time];
  ASSERT_EQ(per_instant.size(), 48u);
  for (const auto& [at, n] : per_instant) EXPECT_EQ(n, 1) << at;
  EXPECT_EQ(per_instant.begin()->first, kFrom);
}

TYPED_TEST_P(BackfillContract, TwoBackfillsOfOneJobWithSkipRunEachInstantOnceBetweenThem) {
  const auto job = this->job("overlapping");
  const auto first = this->create(job, 24, OnExisting::kSkip, 100);
  const auto second = this->create(job, 24, OnExisting::kSkip, 100);
  std::atomic<bool> stop{false};
  auto pumping = [&](std::int64_t id) {
    while (!stop.load()) {
      this->pump(id);
      this->finish_all(job);
    }
  };
  std::thread a(pumping, first.id);
  std::thread c(pumping, second.id);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline &&
         (this->store().get(first.id)->state == BackfillState::kRunning ||
          this->store().get(second.id)->state == BackfillState::kRunning)) {
    std::this_thread::yield();
  }
  stop = true;
  a.join();
  c.join();
  const auto one = *this->store().get(first.id);
  const auto two = *this->store().get(second.id);
  EXPECT_EQ(one.state, BackfillState::kDone);
  EXPECT_EQ(two.state, BackfillState::kDone);
  EXPECT_EQ(one.written + two.written, 24);
  EXPECT_EQ(one.skipped + two.skipped, 24) << "each instant written by one, skipped by the other";
  std::map<std::int64_t, int> per_instant;
  for (const auto& r : this->runs_of(job)) ++per_instant[r.scheduled_time];
  ASSERT_EQ(per_instant.size(), 24u);
  for (const auto& [at, n] : per_instant) EXPECT_EQ(n, 1) << at;
}

TYPED_TEST_P(BackfillContract, CancelEndsItCancelsItsPendingRunsAndLetsSentOnesFinish) {
  const auto job = this->job("cancelled", 3);
  const auto b = this->create(job, 10);
  const auto runs = this->write(b.id, {kFrom, kFrom + kHour, kFrom + 2 * kHour}).fires;
  ASSERT_EQ(runs.size(), 3u);
  this->write(b.id, {kFrom + 3 * kHour}, "node-b");  // another node's pending run
  this->f_.move(runs[0].id, FireState::kTriggered);
  int planned = 0;
  const FollowUpPlanner plan = [&](const JobLog& run, const Job& j, const std::vector<Job>& children) {
    ++planned;
    return plan_follow_ups(RunEnd::kCancelled, run, j, children, kNow, "node-a");
  };
  auto cancelled = this->store().cancel(b.id, kNow + 9, kOther, plan);
  ASSERT_TRUE(cancelled);
  EXPECT_TRUE(cancelled->changed);
  EXPECT_EQ(cancelled->backfill.state, BackfillState::kCancelled);
  EXPECT_EQ(cancelled->backfill.ended_at, kNow + 9);
  EXPECT_EQ(cancelled->backfill.reason, "cancelled by other");
  ASSERT_EQ(cancelled->runs.size(), 3u);
  EXPECT_EQ(planned, 3) << "each cancelled run's follow-ups planned";
  for (const auto& r : cancelled->runs) {
    EXPECT_EQ(r.state, FireState::kCancelled);
    EXPECT_EQ(r.alarm_status, 1) << "an operator's choice alarms nobody";
    EXPECT_EQ(r.trigger_msg, "cancelled: backfill " + std::to_string(b.id) + " was cancelled by other");
    EXPECT_EQ(this->f_.stores().logs.get(r.id), r);
  }
  EXPECT_EQ(this->f_.stores().logs.get(runs[0].id)->state, FireState::kTriggered) << "a sent run goes on";
  EXPECT_EQ(this->runs_of(job).size(), 4u) << "no retry of a cancelled run";
  const auto audit = this->last_audit();
  EXPECT_EQ(audit.action, "backfill.cancel");
  EXPECT_EQ(audit.entity_id, b.id);
  EXPECT_EQ(audit.username, "other");
  EXPECT_EQ(nlohmann::json::parse(audit.after.value_or("null")), to_json(cancelled->backfill));
  EXPECT_EQ(nlohmann::json::parse(audit.before.value_or("null"))["state"], "running");

  bool asked = false;
  EXPECT_FALSE(this->store().step(b.id, "node-a", kNow, [&](const Backfill&, std::int64_t, const BackfillStore::ExistingLookup&) {
                 asked = true;
                 return BackfillStep{};
               }).stepped);
  EXPECT_FALSE(asked) << "a cancelled backfill writes no more";
  auto twice = this->store().cancel(b.id, kNow + 20, kOperator, plan);
  ASSERT_TRUE(twice);
  EXPECT_FALSE(twice->changed);
  EXPECT_EQ(twice->backfill.ended_at, kNow + 9);
  EXPECT_EQ(this->last_audit().action, "backfill.cancel");
  EXPECT_EQ(this->last_audit().username, "other") << "nothing changed, nothing audited";
  EXPECT_EQ(this->store().cancel(b.id + 1000, kNow, kOperator, plan), std::nullopt);
}

TYPED_TEST_P(BackfillContract, AWorkflowsBackfillIsMadeListedAndAuditedWithItsWorkflow) {
  const auto w = this->workflow("nightly-etl");
  const auto job = this->job("a-job");
  const auto of_job = this->create(job, 2);
  const Backfill b = this->create_of_workflow(w.id, 24, OnExisting::kRerun, 3);
  EXPECT_GT(b.id, 0);
  EXPECT_EQ(b.kind(), BackfillKind::kWorkflow);
  EXPECT_EQ(b.workflow_id, w.id);
  EXPECT_EQ(b.job_id, 0);
  EXPECT_EQ(b.workflow_name, "nightly-etl");
  EXPECT_EQ(b.job_group, this->f_.group());
  EXPECT_EQ(nlohmann::json::parse(b.params.value_or("null")), nlohmann::json({{"day", "then"}}));
  EXPECT_EQ(b.on_existing, OnExisting::kRerun);
  EXPECT_EQ(b.max_concurrent, 3);
  EXPECT_EQ(b.state, BackfillState::kRunning);
  EXPECT_EQ(b.total, 24);
  EXPECT_EQ(b.created_at, kNow);
  EXPECT_EQ(this->store().get(b.id), b);
  EXPECT_EQ(of_job.kind(), BackfillKind::kJob);
  EXPECT_EQ(of_job.params, std::nullopt);
  const auto audit = this->last_audit();
  EXPECT_EQ(audit.action, "backfill.create");
  EXPECT_EQ(audit.entity_id, b.id);
  EXPECT_EQ(nlohmann::json::parse(audit.after.value_or("null")), to_json(b));

  BackfillStore::Filter filter;
  filter.page.limit = 10;
  const auto all = this->store().list(filter);
  ASSERT_EQ(all.items.size(), 2u);
  EXPECT_EQ(all.items[0], b);
  EXPECT_EQ(all.items[1], of_job);
  filter.workflow_id = w.id;
  const auto mine = this->store().list(filter);
  ASSERT_EQ(mine.items.size(), 1u);
  EXPECT_EQ(mine.items[0].id, b.id);
  EXPECT_EQ(mine.total, 1);
  filter.workflow_id.reset();
  filter.job_id = job;
  EXPECT_EQ(this->store().list(filter).items.size(), 1u);
  filter.job_id.reset();
  filter.scope = std::vector<std::int64_t>{this->f_.group() + 1000};
  EXPECT_TRUE(this->store().list(filter).items.empty()) << "another group's user sees none";
  EXPECT_EQ(this->store().running(10).size(), 2u);

  Backfill missing;
  missing.workflow_id = w.id + 1000;
  missing.params = "{}";
  missing.from = kFrom;
  missing.to = kNow;
  EXPECT_THROW(this->store().create(missing, kOperator), NotFound);
}

TYPED_TEST_P(BackfillContract, AStepOfAWorkflowsBackfillWritesRunningRunsWhoseNodeRunsStandForTheInstant) {
  const auto w = this->workflow("filled");
  const auto b = this->create_of_workflow(w.id, 10);
  const auto stepped = this->write(b.id, {kFrom + kHour, kFrom}, "node-b");
  ASSERT_TRUE(stepped.stepped);
  ASSERT_EQ(stepped.runs.size(), 2u);
  ASSERT_EQ(stepped.fires.size(), 2u) << "each run's first node";
  for (std::size_t i = 0; i < 2; ++i) {
    const WorkflowRun& run = stepped.runs[i];
    const std::int64_t instant = kFrom + static_cast<std::int64_t>(i) * kHour;
    EXPECT_EQ(run.scheduled_time, instant) << "oldest first";
    EXPECT_EQ(run.workflow_id, w.id);
    EXPECT_EQ(run.trigger_type, TriggerType::kBackfill);
    EXPECT_EQ(run.backfill_id, b.id);
    EXPECT_EQ(run.state, WorkflowRunState::kRunning);
    EXPECT_EQ(run.started_at, kNow);
    EXPECT_EQ(run.created_by, "operator");
    EXPECT_EQ(nlohmann::json::parse(run.params), nlohmann::json({{"day", "then"}})) << "the backfill's inputs";
    const auto fire = std::find_if(stepped.fires.begin(), stepped.fires.end(),
                                   [&](const JobLog& f) { return f.workflow_run_id == run.id; });
    ASSERT_NE(fire, stepped.fires.end());
    EXPECT_EQ(fire->workflow_node, "first");
    EXPECT_EQ(fire->state, FireState::kPending);
    EXPECT_EQ(fire->trigger_type, TriggerType::kWorkflow);
    EXPECT_EQ(fire->admin_node, "node-b");
    EXPECT_EQ(fire->scheduled_time, kNow) << "due when its run starts";
    EXPECT_EQ(fire->executor_param, "then");
    EXPECT_EQ(fire->logical_time, instant);
    EXPECT_EQ(log_date_time(*fire), instant);
    EXPECT_EQ(fire->backfill_id, std::nullopt) << "a node run is its workflow run's, not the backfill's";
  }
  EXPECT_EQ(stepped.backfill.written, 2);
  EXPECT_EQ(stepped.backfill.cursor, kFrom) << "as the decision said";
  const auto again = this->write(b.id, {kFrom + kHour, kFrom + 2 * kHour});
  ASSERT_EQ(again.runs.size(), 1u) << "an instant the backfill has a run at is not written twice";
  EXPECT_EQ(again.runs[0].scheduled_time, kFrom + 2 * kHour);
  EXPECT_EQ(again.backfill.written, 3);
  EXPECT_EQ(this->workflow_runs(w.id, b.id).size(), 3u);
  EXPECT_EQ(this->last_audit().action, "backfill.create") << "steps are the system's, not audited";
}

TYPED_TEST_P(BackfillContract, AWorkflowsBackfillCountsItsRunsAndTheInstantsItsWorkflowRan) {
  const auto w = this->workflow("counted-wf", OverlapPolicy::kSkip);
  const auto b = this->create_of_workflow(w.id, 10);
  const auto written = this->write(b.id, {kFrom, kFrom + kHour, kFrom + 2 * kHour}).runs;
  ASSERT_EQ(written.size(), 3u);
  ASSERT_EQ(this->f_.workflows().cancel(written[0].id, kNow, "node-a", kOperator).status,
            WorkflowStore::RunChange::Status::kChanged);
  // The schedule's runs: one that ran at +5 h; at +6 h one skipped by the overlap policy (a run
  // of the schedule is running), which never ran its instant.
  const auto ran = this->scheduled_run(w, kFrom + 5 * kHour);
  EXPECT_EQ(ran.state, WorkflowRunState::kRunning) << "the backfill's runs do not hold the schedule's";
  const auto skipped = this->scheduled_run(w, kFrom + 6 * kHour);
  EXPECT_EQ(skipped.state, WorkflowRunState::kSkipped);
  std::optional<std::int64_t> seen_unfinished;
  std::set<std::int64_t> seen_existing;
  this->store().step(b.id, "node-a", kNow, [&](const Backfill&, std::int64_t unfinished, const BackfillStore::ExistingLookup& existing) {
    seen_unfinished = unfinished;
    seen_existing = existing({kFrom, kFrom + kHour, kFrom + 4 * kHour, kFrom + 5 * kHour, kFrom + 6 * kHour});
    return BackfillStep{};
  });
  EXPECT_EQ(seen_unfinished, 2) << "two running; the cancelled one is not";
  EXPECT_EQ(seen_existing, (std::set<std::int64_t>{kFrom, kFrom + kHour, kFrom + 5 * kHour}))
      << "a run cancelled while it ran did run; a skipped one did not";
  EXPECT_EQ(this->store().existing_workflow_runs(w.id, {kFrom + 2 * kHour, kFrom + 6 * kHour}),
            (std::vector<std::int64_t>{kFrom + 2 * kHour}));
  EXPECT_TRUE(this->store().existing_workflow_runs(w.id + 1000, {kFrom}).empty());
  EXPECT_THROW(this->store().existing_workflow_runs(w.id, std::vector<std::int64_t>(kMaxBackfillInstants + 1, kFrom)),
               std::invalid_argument);
  EXPECT_EQ(this->store().runs(b.id), (BackfillRuns{0, 2, 0, 0, 1}));
}

TYPED_TEST_P(BackfillContract, AWorkflowsBackfillsRunsAreOutsideItsOverlapPolicy) {
  const auto w = this->workflow("one-at-a-time", OverlapPolicy::kWait);
  WorkflowStore::TriggerRequest trigger;
  trigger.workflow_id = w.id;
  trigger.params_json = R"({"day":"now"})";
  trigger.now = kNow;
  trigger.node_id = "node-a";
  trigger.actor = kOperator;
  const auto manual = this->f_.workflows().trigger(trigger).runs.at(0);
  EXPECT_EQ(manual.state, WorkflowRunState::kRunning);
  const auto b = this->create_of_workflow(w.id, 10);
  const auto written = this->write(b.id, {kFrom, kFrom + kHour}).runs;
  ASSERT_EQ(written.size(), 2u);
  for (const auto& r : written) EXPECT_EQ(r.state, WorkflowRunState::kRunning) << "not held by the running manual run";
  const auto second = this->f_.workflows().trigger(trigger).runs.at(0);
  EXPECT_EQ(second.state, WorkflowRunState::kWaiting) << "held by the manual run alone";
  EXPECT_EQ(second.reason, "waiting: run " + std::to_string(manual.id) + " is still running");
  // A failed backfill run is run again whatever the policy.
  ASSERT_EQ(this->f_.workflows().cancel(written[0].id, kNow, "node-a", kOperator).status,
            WorkflowStore::RunChange::Status::kChanged);
  const auto again = this->f_.workflows().rerun(written[0].id, "first", kNow, "node-a", kOperator);
  ASSERT_EQ(again.status, WorkflowStore::RunChange::Status::kChanged) << again.reason;
  ASSERT_FALSE(again.changed.fires.empty());
  EXPECT_EQ(again.changed.fires[0].logical_time, kFrom) << "its node runs still stand for its instant";
}

TYPED_TEST_P(BackfillContract, TwoNodesPumpingAWorkflowsBackfillRunEachInstantOnce) {
  const auto w = this->workflow("raced-wf");
  const auto b = this->create_of_workflow(w.id, 12, OnExisting::kSkip, 3);
  std::atomic<bool> stop{false};
  auto pumping = [&](const std::string& node) {
    while (!stop.load()) this->pump(b.id, node);
  };
  std::thread a(pumping, "node-a");
  std::thread c(pumping, "node-b");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline && this->store().get(b.id)->state == BackfillState::kRunning) {
    std::int64_t unfinished = 0;
    for (const auto& r : this->workflow_runs(w.id)) unfinished += is_final(r.state) ? 0 : 1;
    EXPECT_LE(unfinished, 3) << "never more unfinished runs than max_concurrent";
    this->cancel_runs(w.id);
  }
  stop = true;
  a.join();
  c.join();
  const auto ended = *this->store().get(b.id);
  EXPECT_EQ(ended.state, BackfillState::kDone);
  EXPECT_EQ(ended.written, 12);
  std::map<std::int64_t, int> per_instant;
  for (const auto& r : this->workflow_runs(w.id, b.id)) ++per_instant[r.scheduled_time];
  ASSERT_EQ(per_instant.size(), 12u);
  for (const auto& [at, n] : per_instant) EXPECT_EQ(n, 1) << at;
}

TYPED_TEST_P(BackfillContract, CancellingAWorkflowsBackfillEndsItAndLetsItsRunsGoOn) {
  const auto w = this->workflow("cancelled-wf");
  const auto b = this->create_of_workflow(w.id, 10);
  const auto written = this->write(b.id, {kFrom, kFrom + kHour});
  ASSERT_EQ(written.runs.size(), 2u);
  auto cancelled = this->store().cancel(b.id, kNow + 9, kOther, follow_ups_of(RunEnd::kCancelled, kNow, "node-a"));
  ASSERT_TRUE(cancelled);
  EXPECT_TRUE(cancelled->changed);
  EXPECT_EQ(cancelled->backfill.state, BackfillState::kCancelled);
  EXPECT_EQ(cancelled->backfill.reason, "cancelled by other");
  EXPECT_EQ(cancelled->backfill.workflow_name, "cancelled-wf");
  EXPECT_TRUE(cancelled->runs.empty());
  for (const auto& r : this->workflow_runs(w.id, b.id)) EXPECT_EQ(r.state, WorkflowRunState::kRunning) << "it goes on";
  const auto detail = this->f_.workflows().get_run(written.runs[0].id);
  ASSERT_TRUE(detail);
  EXPECT_EQ(detail->nodes[0].state, NodeState::kStarted);
  EXPECT_EQ(this->last_audit().action, "backfill.cancel");
  bool asked = false;
  EXPECT_FALSE(this->store().step(b.id, "node-a", kNow, [&](const Backfill&, std::int64_t, const BackfillStore::ExistingLookup&) {
                 asked = true;
                 return BackfillStep{};
               }).stepped);
  EXPECT_FALSE(asked) << "a cancelled backfill writes no more";
}

REGISTER_TYPED_TEST_SUITE_P(BackfillContract, CreatesRunningWithTheJobsGroupAndAuditsIt,
                            ListsNewestFirstByJobStateAndTheCallersGroups,
                            ExistingNamesTheInstantsWithARunOfTheScheduleOrOfABackfillThatWasNotCancelled,
                            AStepWritesPendingBackfillRunsOwnedByTheNodeLikeScheduledFires,
                            TheRunListFiltersByBackfillNewestFirst,
                            TheDecisionSeesTheBackfillsUnfinishedRunsAndTheRunsThatExist,
                            AnInstantTheBackfillHasARunAtIsNeverWrittenTwice,
                            AStepEndsTheBackfillAsTheDecisionSaysAndAnEndedOneIsNotSteppedAgain,
                            AStepOfABackfillAnotherNodeIsSteppingIsSkippedNotWaitedFor,
                            TwoNodesPumpingOneBackfillAtOnceRunEachInstantOnce,
                            TwoBackfillsOfOneJobWithSkipRunEachInstantOnceBetweenThem,
                            CancelEndsItCancelsItsPendingRunsAndLetsSentOnesFinish,
                            AWorkflowsBackfillIsMadeListedAndAuditedWithItsWorkflow,
                            AStepOfAWorkflowsBackfillWritesRunningRunsWhoseNodeRunsStandForTheInstant,
                            AWorkflowsBackfillCountsItsRunsAndTheInstantsItsWorkflowRan,
                            AWorkflowsBackfillsRunsAreOutsideItsOverlapPolicy,
                            TwoNodesPumpingAWorkflowsBackfillRunEachInstantOnce,
                            CancellingAWorkflowsBackfillEndsItAndLetsItsRunsGoOn);

}  // namespace backfill_contract

}  // namespace cronwheel::testing
