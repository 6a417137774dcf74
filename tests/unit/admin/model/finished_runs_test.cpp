// The count of runs ended on this node (cronwheel_runs_finished_total), and how a store call that
// answers only ids gets its runs counted by group.

#include "admin/model/finished_runs.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <thread>
#include <vector>

namespace cronwheel::admin {
namespace {

using Count = FinishedRuns::Count;

JobLog run(std::int64_t id, std::int64_t group) {
  JobLog l;
  l.id = id;
  l.job_group = group;
  return l;
}

FollowUpPlanner no_follow_ups() {
  return [](const JobLog&, const Job&, const std::vector<Job>&) { return FollowUps{}; };
}

TEST(FinishedRuns, CountsEndsByGroupThenState) {
  FinishedRuns finished;
  finished.add(7, FireState::kFailed);
  finished.add(3, FireState::kSucceeded, 2);
  finished.add(7, FireState::kSucceeded);
  finished.add(3, FireState::kSucceeded);
  finished.add(7, FireState::kLost);
  finished.add(3, FireState::kCancelled);
  EXPECT_EQ(finished.counts(), (std::vector<Count>{{3, FireState::kSucceeded, 3},
                                                   {3, FireState::kCancelled, 1},
                                                   {7, FireState::kSucceeded, 1},
                                                   {7, FireState::kFailed, 1},
                                                   {7, FireState::kLost, 1}}));
}

TEST(FinishedRuns, StatesThatAreNoEndAreNotCounted) {
  FinishedRuns finished;
  for (auto state : {FireState::kPending, FireState::kSending, FireState::kTriggered}) finished.add(1, state);
  finished.add(1, FireState::kSucceeded, 0);
  EXPECT_TRUE(finished.counts().empty());
}

TEST(FinishedRuns, ConcurrentAddsAreAllCounted) {
  FinishedRuns finished;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&finished, t] {
      for (int i = 0; i < 1000; ++i) finished.add(t % 2, FireState::kSucceeded);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(finished.counts(), (std::vector<Count>{{0, FireState::kSucceeded, 2000}, {1, FireState::kSucceeded, 2000}}));
}

TEST(CountFinished, CountsTheRunsTheCallSaysMovedByTheGroupsThePlannerSaw) {
  FinishedRuns finished;
  int planned = 0;
  const FollowUpPlanner plan = [&](const JobLog&, const Job&, const std::vector<Job>&) {
    ++planned;
    return FollowUps{};
  };
  auto moved = count_finished(&finished, FireState::kCancelled, plan, [](const FollowUpPlanner& p) {
    p(run(10, 4), Job{}, {});
    p(run(11, 4), Job{}, {});
    p(run(12, 9), Job{}, {});
    return std::vector<std::int64_t>{10, 11, 12};
  });
  EXPECT_EQ(moved, (std::vector<std::int64_t>{10, 11, 12}));
  EXPECT_EQ(planned, 3) << "the caller's planner plans the follow-ups";
  EXPECT_EQ(finished.counts(), (std::vector<Count>{{4, FireState::kCancelled, 2}, {9, FireState::kCancelled, 1}}));
}

// A retried transaction asks the planner again; an attempt that rolled back may have asked about
// a run that another node ended meanwhile. Only what the committed call answers counts, once.
TEST(CountFinished, ARetriedTransactionCountsEachRunItMovedOnce) {
  FinishedRuns finished;
  count_finished(&finished, FireState::kCancelled, no_follow_ups(), [](const FollowUpPlanner& p) {
    p(run(10, 4), Job{}, {});  // first attempt, rolled back
    p(run(11, 4), Job{}, {});
    p(run(10, 4), Job{}, {});  // second attempt: 11 was cancelled elsewhere meanwhile
    return std::vector<std::int64_t>{10};
  });
  EXPECT_EQ(finished.counts(), (std::vector<Count>{{4, FireState::kCancelled, 1}}));
}

TEST(CountFinished, AFailedCallCountsNothing) {
  FinishedRuns finished;
  EXPECT_THROW(count_finished(&finished, FireState::kCancelled, no_follow_ups(),
                              [](const FollowUpPlanner& p) -> std::vector<std::int64_t> {
                                p(run(10, 4), Job{}, {});
                                throw std::runtime_error("database down");
                              }),
               std::runtime_error);
  EXPECT_TRUE(finished.counts().empty());
}

TEST(CountFinished, WithoutACountTheCallIsMadeAsItIs) {
  int calls = 0;
  auto moved = count_finished(nullptr, FireState::kCancelled, no_follow_ups(), [&](const FollowUpPlanner& p) {
    ++calls;
    p(run(10, 4), Job{}, {});
    return std::vector<std::int64_t>{10};
  });
  EXPECT_EQ(moved, std::vector<std::int64_t>{10});
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace cronwheel::admin
