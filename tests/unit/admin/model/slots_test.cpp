// The limiter's order: which waiting fires take the free slots of a group.
#include "admin/model/slots.h"

#include <gtest/gtest.h>

namespace cronwheel::admin {
namespace {

using Ids = std::vector<std::int64_t>;

SlotCandidate fire(std::int64_t id, std::int64_t job, int priority, std::int64_t scheduled, int job_limit = 0) {
  return {id, job, priority, scheduled, job_limit};
}

TEST(Slots, AFireNeedsASlotWhenItsGroupOrItsJobHasALimit) {
  Job job;
  Group group;
  EXPECT_FALSE(needs_slot(job, group));
  group.max_running = 3;
  EXPECT_TRUE(needs_slot(job, group));
  group.max_running = 0;
  job.max_concurrent = 1;
  EXPECT_TRUE(needs_slot(job, group));
}

TEST(Slots, HigherPriorityFirstThenTheEarlierScheduledTimeThenTheOlderRow) {
  const std::vector<SlotCandidate> waiting{fire(1, 10, 0, 1'000), fire(2, 11, 5, 3'000), fire(3, 12, 5, 2'000),
                                           fire(4, 13, -1, 500), fire(5, 14, 5, 2'000)};
  EXPECT_EQ(admit_waiting(0, {}, waiting), (Ids{3, 5, 2, 1, 4})) << "no group limit: all, in order";
  EXPECT_EQ(admit_waiting(2, {}, waiting), (Ids{3, 5}));
}

TEST(Slots, OnlyTheGroupsFreeSlotsAreGiven) {
  const std::vector<SlotCandidate> waiting{fire(1, 10, 0, 1'000), fire(2, 11, 0, 2'000), fire(3, 12, 0, 3'000)};
  EXPECT_EQ(admit_waiting(3, {{10, 1}}, waiting), (Ids{1, 2})) << "one slot held already";
  EXPECT_EQ(admit_waiting(3, {{10, 2}, {99, 1}}, waiting), Ids{}) << "full";
  EXPECT_EQ(admit_waiting(3, {{10, 5}}, waiting), Ids{}) << "over the limit (it was lowered): none";
}

TEST(Slots, AFullJobIsPassedOverAndTheNextFireTakesTheSlot) {
  const std::vector<SlotCandidate> waiting{fire(1, 10, 9, 1'000, 1), fire(2, 10, 9, 2'000, 1),
                                           fire(3, 11, 0, 3'000, 0)};
  // Job 10 runs one at a time and has one running: both its fires are passed over.
  EXPECT_EQ(admit_waiting(5, {{10, 1}}, waiting), (Ids{3}));
  // Nothing running: job 10 gets one slot, the other goes to job 11.
  EXPECT_EQ(admit_waiting(5, {}, waiting), (Ids{1, 3}));
  // A job limit holds without a group limit too.
  EXPECT_EQ(admit_waiting(0, {}, waiting), (Ids{1, 3}));
}

}  // namespace
}  // namespace cronwheel::admin
