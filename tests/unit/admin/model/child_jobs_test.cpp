#include "admin/model/child_jobs.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

namespace cronwheel::admin {
namespace {

using Ids = std::vector<std::int64_t>;

// A stored graph of child jobs, and how many reads of it a search made.
struct Graph {
  std::map<std::int64_t, Ids> children;
  int reads = 0;

  ChildrenOf lookup() {
    return [this](const Ids& jobs) {
      ++reads;
      std::map<std::int64_t, Ids> out;
      for (auto id : jobs) {
        if (auto it = children.find(id); it != children.end()) out.emplace(id, it->second);
      }
      return out;
    };
  }
};

TEST(ChildCycle, NoneWhenTheChainDoesNotComeBack) {
  Graph g{{{1, {2}}, {2, {3}}, {3, {}}}};
  EXPECT_TRUE(find_child_cycle(1, {2}, g.lookup()).empty());
  EXPECT_TRUE(find_child_cycle(1, {}, g.lookup()).empty());
}

TEST(ChildCycle, ATwoJobCycleIsNamedFromTheJobBackToIt) {
  Graph g{{{1, {}}, {2, {1}}}};
  EXPECT_EQ(find_child_cycle(1, {2}, g.lookup()), (Ids{1, 2, 1}));
  EXPECT_EQ(describe_child_cycle({1, 2, 1}), "1 \u2192 2 \u2192 1");
}

TEST(ChildCycle, AFanOutCycleIsFoundThroughAnyBranch) {
  // 1 → {2, 3}; 3 → 4 → 1.
  Graph g{{{2, {}}, {3, {4}}, {4, {1}}}};
  EXPECT_EQ(find_child_cycle(1, {2, 3}, g.lookup()), (Ids{1, 3, 4, 1}));
}

TEST(ChildCycle, TheShortestWayBackIsNamed) {
  // 1 → 2 → 3 → 4 → 1 and 1 → 2 → 1.
  Graph g{{{2, {3, 1}}, {3, {4}}, {4, {1}}}};
  EXPECT_EQ(find_child_cycle(1, {2}, g.lookup()), (Ids{1, 2, 1}));
}

TEST(ChildCycle, TheJobsStoredChildrenAreReplacedByTheNewOnes) {
  // Stored: 1 → 2 → 1. The edit takes 2 out of 1's children: no cycle any more.
  Graph g{{{1, {2}}, {2, {1}}}};
  EXPECT_TRUE(find_child_cycle(1, {}, g.lookup()).empty());
  EXPECT_TRUE(find_child_cycle(2, {3}, g.lookup()).empty());
}

TEST(ChildCycle, ACycleNotThroughTheJobIsNotItsToRefuse) {
  // 2 ↔ 3 already loop (saved before this check existed); 1 → 2 leads into it, not back to 1.
  Graph g{{{2, {3}}, {3, {2}}}};
  EXPECT_TRUE(find_child_cycle(1, {2}, g.lookup()).empty());
  EXPECT_LE(g.reads, 3) << "each job is read once, even in a loop";
}

TEST(ChildCycle, ReadsALevelOfTheGraphAtATime) {
  // A wide fan-out: 1 → 100 children, each → 200.
  Graph g;
  Ids wide;
  for (std::int64_t id = 10; id < 110; ++id) {
    wide.push_back(id);
    g.children[id] = {200};
  }
  g.children[200] = {};
  EXPECT_TRUE(find_child_cycle(1, wide, g.lookup()).empty());
  EXPECT_EQ(g.reads, 2);
}

}  // namespace
}  // namespace cronwheel::admin
