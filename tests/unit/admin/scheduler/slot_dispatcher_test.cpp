// The slot dispatcher on a FakeTriggerStore: fires waiting for a slot are admitted as slots
// free, in slot order, and a group another node admits for is left to it.
#include "admin/scheduler/slot_dispatcher.h"

#include <gtest/gtest.h>

#include <vector>

#include "common/timer/hierarchical_wheel_timer.h"
#include "common/timer/recurring_task.h"
#include "tests/support/fake_clock.h"
#include "tests/support/fake_trigger_store.h"

namespace cronwheel::admin {
namespace {

constexpr const char* kSlotNode = "node-slots";

class SlotDispatcherTest : public ::testing::Test {
 protected:
  SlotDispatcherTest() {
    Group g;
    g.app_name = "limited";
    g.max_running = 2;
    group_ = store_.put_group(g);
  }

  Job job(int priority, int max_concurrent = 0) {
    Job j;
    j.job_group = group_.id;
    j.job_desc = "limited job";
    j.executor_handler = "h";
    j.priority = priority;
    j.max_concurrent = max_concurrent;
    return store_.put_job(j);
  }

  // A fire of `j` waiting for a slot, as the trigger path leaves it (owned by another node).
  JobLog waiting(const Job& j, std::int64_t scheduled) {
    JobLog l;
    l.job_id = j.id;
    l.state = FireState::kPending;
    l.trigger_type = TriggerType::kApi;
    l.scheduled_time = scheduled;
    l.admin_node = "node-elsewhere";
    l.waiting_slot = true;
    return store_.put_log(l);
  }

  std::vector<std::int64_t> admitted_ids() const {
    std::vector<std::int64_t> ids;
    for (const auto& f : admitted_) ids.push_back(f.log_id);
    return ids;
  }

  testing::FakeClock clock_;
  common::HierarchicalWheelTimer timer_{clock_, {}, {.manual = true}};
  common::RecurringTasks tasks_{timer_, clock_};
  testing::FakeTriggerStore store_;
  Group group_;
  std::vector<PendingFire> admitted_;
  SlotDispatcher dispatcher_{store_, tasks_, kSlotNode,
                             [this](const std::vector<PendingFire>& fires) {
                               admitted_.insert(admitted_.end(), fires.begin(), fires.end());
                             },
                             {}};
};

TEST_F(SlotDispatcherTest, AdmitsTheGroupsFreeSlotsHighestPriorityFirstAndMakesThemThisNodes) {
  const Job low = job(0);
  const Job high = job(10);
  const auto a = waiting(low, 1'000);
  const auto b = waiting(high, 3'000);
  const auto c = waiting(high, 2'000);
  EXPECT_EQ(dispatcher_.dispatch_once(), 2u);
  EXPECT_EQ(admitted_ids(), (std::vector<std::int64_t>{c.id, b.id}));
  for (auto id : {b.id, c.id}) {
    const auto row = *store_.log(id);
    EXPECT_FALSE(row.waiting_slot);
    EXPECT_TRUE(row.slot_admitted);
    EXPECT_EQ(row.admin_node, kSlotNode);
    EXPECT_EQ(row.state, FireState::kPending);
  }
  EXPECT_TRUE(store_.log(a.id)->waiting_slot);
  EXPECT_EQ(dispatcher_.waiting(), (std::map<std::int64_t, std::int64_t>{{group_.id, 3}}));

  // Both slots are held (pending, then sending): nothing more until one run ends.
  EXPECT_EQ(dispatcher_.dispatch_once(), 0u);
  store_.update_log(b.id, [](JobLog& l) { l.state = FireState::kTriggered; });
  EXPECT_EQ(dispatcher_.dispatch_once(), 0u);
  store_.update_log(c.id, [](JobLog& l) { l.state = FireState::kSucceeded; });
  EXPECT_EQ(dispatcher_.dispatch_once(), 1u);
  EXPECT_EQ(admitted_ids().back(), a.id);
  EXPECT_EQ(dispatcher_.waiting(), (std::map<std::int64_t, std::int64_t>{{group_.id, 1}}));
}

TEST_F(SlotDispatcherTest, AJobLimitHoldsWithinTheGroupsSlots) {
  store_.put_group([&] {
    Group g = group_;
    g.max_running = 0;  // no group limit: only the job's
    return g;
  }());
  const Job one_at_a_time = job(0, 1);
  const auto first = waiting(one_at_a_time, 1'000);
  const auto second = waiting(one_at_a_time, 2'000);
  EXPECT_EQ(dispatcher_.dispatch_once(), 1u);
  EXPECT_EQ(admitted_ids(), (std::vector<std::int64_t>{first.id}));
  EXPECT_EQ(dispatcher_.dispatch_once(), 0u);
  store_.update_log(first.id, [](JobLog& l) { l.state = FireState::kFailed; });
  EXPECT_EQ(dispatcher_.dispatch_once(), 1u);
  EXPECT_EQ(admitted_ids().back(), second.id);
}

TEST_F(SlotDispatcherTest, AGroupAnotherNodeAdmitsForIsLeftToIt) {
  waiting(job(0), 1'000);
  store_.held_group(group_.id, true);
  EXPECT_EQ(dispatcher_.dispatch_once(), 0u);
  EXPECT_TRUE(admitted_.empty());
  store_.held_group(group_.id, false);
  EXPECT_EQ(dispatcher_.dispatch_once(), 1u);
}

TEST_F(SlotDispatcherTest, AnUnreachableDatabaseAdmitsNothingAndTheNextPassTriesAgain) {
  waiting(job(0), 1'000);
  store_.before_call([](std::string_view method) {
    if (method == "waiting_by_group") throw std::runtime_error("database unreachable");
  });
  EXPECT_EQ(dispatcher_.dispatch_once(), 0u);
  store_.before_call({});
  EXPECT_EQ(dispatcher_.dispatch_once(), 1u);
}

}  // namespace
}  // namespace cronwheel::admin
