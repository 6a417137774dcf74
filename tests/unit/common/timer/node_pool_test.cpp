// The slot pool timeouts live in: reuse, growth, alignment, and slots given back from many
// threads while one allocates.

#include "common/timer/node_pool.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace cronwheel::timer_test {
namespace {

using common::detail::NodePool;

constexpr std::size_t kSlotSize = 80;
constexpr std::size_t kSlotAlign = 8;

TEST(NodePoolTest, HandsOutTheMostRecentlyFreedSlotFirst) {
  NodePool pool(kSlotSize, kSlotAlign);
  void* a = pool.allocate();
  void* b = pool.allocate();
  pool.deallocate(a);
  pool.deallocate(b);
  EXPECT_EQ(pool.allocate(), b);
  EXPECT_EQ(pool.allocate(), a);
  EXPECT_EQ(pool.capacity(), 2u);
  pool.deallocate(a);
  pool.deallocate(b);
}

TEST(NodePoolTest, CarvesDistinctAlignedSlotsAndReusesThemBeforeGrowing) {
  NodePool pool(kSlotSize, kSlotAlign);
  constexpr std::size_t kCount = 10'000;  // several chunks
  std::vector<void*> slots;
  std::set<std::uintptr_t> seen;
  for (std::size_t i = 0; i < kCount; ++i) {
    void* slot = pool.allocate();
    std::memset(slot, static_cast<int>(i & 0xff), kSlotSize);  // the whole slot is usable
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(slot) % kSlotAlign, 0u);
    seen.insert(reinterpret_cast<std::uintptr_t>(slot));
    slots.push_back(slot);
  }
  EXPECT_EQ(seen.size(), kCount);
  // No two slots overlap: sorted addresses are at least a slot apart.
  std::uintptr_t previous = 0;
  for (auto address : seen) {
    if (previous != 0) {
      EXPECT_GE(address - previous, kSlotSize);
    }
    previous = address;
  }
  EXPECT_EQ(pool.capacity(), kCount);
  for (void* slot : slots) pool.deallocate(slot);
  slots.clear();
  for (std::size_t i = 0; i < kCount; ++i) slots.push_back(pool.allocate());
  EXPECT_EQ(pool.capacity(), kCount);
  for (void* slot : slots) pool.deallocate(slot);
}

TEST(NodePoolTest, SlotsFreedOnOtherThreadsComeBackWhileOneThreadAllocates) {
  NodePool pool(kSlotSize, kSlotAlign);
  std::mutex allocating;  // the pool's callers serialize allocate(), as the timers do
  constexpr int kThreads = 4;
  constexpr int kRounds = 200;
  constexpr int kPerRound = 50;
  auto allocate = [&] {
    std::lock_guard lock(allocating);
    return pool.allocate();
  };
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        std::vector<void*> mine;
        for (int round = 0; round < kRounds; ++round) {
          for (int i = 0; i < kPerRound; ++i) {
            void* slot = allocate();
            // Stamp it: a slot handed out twice would be overwritten by its other owner.
            const auto stamp = static_cast<std::uint64_t>(t) << 32 | static_cast<unsigned>(i);
            std::memcpy(static_cast<char*>(slot) + 8, &stamp, sizeof stamp);
            mine.push_back(slot);
          }
          for (int i = 0; i < kPerRound; ++i) {
            std::uint64_t stamp = 0;
            std::memcpy(&stamp, static_cast<char*>(mine[i]) + 8, sizeof stamp);
            EXPECT_EQ(stamp, static_cast<std::uint64_t>(t) << 32 | static_cast<unsigned>(i));
            pool.deallocate(mine[i]);  // lock-free, concurrently with the others
          }
          mine.clear();
        }
      });
    }
  }
  // The pool carves only when every slot is in use, and chunks at most double: it never holds
  // more than twice the most slots live at once, plus its first chunk.
  std::lock_guard lock(allocating);
  const std::size_t carved = pool.capacity();
  EXPECT_LE(carved, 2 * static_cast<std::size_t>(kThreads * kPerRound) + NodePool::kFirstChunkSlots);
  // And every slot came back: taking them all carves nothing new.
  std::vector<void*> all;
  for (std::size_t i = 0; i < carved; ++i) all.push_back(pool.allocate());
  EXPECT_EQ(pool.capacity(), carved);
  for (void* slot : all) pool.deallocate(slot);
}

}  // namespace
}  // namespace cronwheel::timer_test
