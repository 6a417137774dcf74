#include "common/util/group_commit.h"

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/eventually.h"

namespace cronwheel::common {
namespace {

using Doubler = GroupCommit<int, int>;

std::vector<int> doubled(const std::vector<int>& in) {
  std::vector<int> out;
  for (int v : in) out.push_back(v * 2);
  return out;
}

// A batch function that records its batches and can hold the first one until released.
class Recorder {
 public:
  std::vector<int> operator()(const std::vector<int>& in) {
    {
      std::unique_lock lock(mutex_);
      batches_.push_back(in);
      ++started_;
      cv_.notify_all();
      cv_.wait(lock, [&] { return !hold_; });
    }
    return doubled(in);
  }
  void hold() {
    std::lock_guard lock(mutex_);
    hold_ = true;
  }
  void release() {
    std::lock_guard lock(mutex_);
    hold_ = false;
    cv_.notify_all();
  }
  void wait_started(int n) {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [&] { return started_ >= n; });
  }
  std::vector<std::vector<int>> batches() {
    std::lock_guard lock(mutex_);
    return batches_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool hold_ = false;
  int started_ = 0;
  std::vector<std::vector<int>> batches_;
};

TEST(GroupCommit, ALoneCallIsABatchOfOneRunAtOnce) {
  Recorder recorder;
  Doubler group({}, std::ref(recorder));
  EXPECT_EQ(group.call(21), 42);
  EXPECT_EQ(group.call(5), 10);
  EXPECT_EQ(recorder.batches(), (std::vector<std::vector<int>>{{21}, {5}}));
}

TEST(GroupCommit, CallsArrivingDuringABatchGoTogetherIntoTheNextInArrivalOrder) {
  Recorder recorder;
  Doubler group({}, std::ref(recorder));
  recorder.hold();
  auto first = std::async(std::launch::async, [&] { return group.call(1); });
  recorder.wait_started(1);
  std::vector<std::future<int>> rest;
  for (int i = 2; i <= 6; ++i) {
    rest.push_back(std::async(std::launch::async, [&group, i] { return group.call(i); }));
    ASSERT_TRUE(cronwheel::testing::eventually([&] { return group.queued() == static_cast<std::size_t>(i - 1); }));
  }
  recorder.release();
  EXPECT_EQ(first.get(), 2);
  for (int i = 2; i <= 6; ++i) EXPECT_EQ(rest[static_cast<std::size_t>(i - 2)].get(), i * 2);
  EXPECT_EQ(recorder.batches(), (std::vector<std::vector<int>>{{1}, {2, 3, 4, 5, 6}}));
  EXPECT_EQ(group.batches(), 2u);
  EXPECT_EQ(group.requests(), 6u);
}

TEST(GroupCommit, ABatchHoldsAtMostMaxBatchRequests) {
  Recorder recorder;
  Doubler group({.max_batch = 2}, std::ref(recorder));
  recorder.hold();
  auto first = std::async(std::launch::async, [&] { return group.call(0); });
  recorder.wait_started(1);
  std::vector<std::future<int>> rest;
  for (int i = 1; i <= 5; ++i) {
    rest.push_back(std::async(std::launch::async, [&group, i] { return group.call(i); }));
    ASSERT_TRUE(cronwheel::testing::eventually([&] { return group.queued() == static_cast<std::size_t>(i); }));
  }
  recorder.release();
  EXPECT_EQ(first.get(), 0);
  for (int i = 1; i <= 5; ++i) EXPECT_EQ(rest[static_cast<std::size_t>(i - 1)].get(), i * 2);
  EXPECT_EQ(recorder.batches(), (std::vector<std::vector<int>>{{0}, {1, 2}, {3, 4}, {5}}));
}

TEST(GroupCommit, ABatchThatThrowsFailsEachOfItsCallersAndTheNextBatchRuns) {
  int calls = 0;
  Doubler group({}, [&](const std::vector<int>& in) {
    if (++calls == 1) throw std::runtime_error("database unreachable");
    return doubled(in);
  });
  EXPECT_THROW(
      {
        try {
          group.call(1);
        } catch (const std::runtime_error& e) {
          EXPECT_STREQ(e.what(), "database unreachable");
          throw;
        }
      },
      std::runtime_error);
  EXPECT_EQ(group.call(2), 4);
}

TEST(GroupCommit, ABatchFunctionAnsweringTheWrongNumberOfResponsesIsALogicError) {
  Doubler group({}, [](const std::vector<int>&) { return std::vector<int>{}; });
  EXPECT_THROW(group.call(1), std::logic_error);
}

TEST(GroupCommit, RefusesZeroSizes) {
  EXPECT_THROW(Doubler({.max_batch = 0}, doubled), std::invalid_argument);
  EXPECT_THROW(Doubler({.max_in_flight = 0}, doubled), std::invalid_argument);
}

// Many threads at once: every caller gets its own answer, never another's, batches never
// overlap beyond max_in_flight, and they group requests.
TEST(GroupCommit, ManyCallersEachGetTheirOwnAnswer) {
  for (std::size_t in_flight : {1u, 2u}) {
    std::atomic<int> running{0}, most{0};
    Doubler group({.max_batch = 64, .max_in_flight = in_flight}, [&](const std::vector<int>& in) {
      int now = ++running;
      int seen = most.load();
      while (now > seen && !most.compare_exchange_weak(seen, now)) {
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      --running;
      return doubled(in);
    });
    constexpr int kThreads = 16, kCalls = 300;
    std::atomic<int> wrong{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kCalls; ++i) {
          const int v = t * kCalls + i;
          if (group.call(v) != v * 2) ++wrong;
        }
      });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(wrong.load(), 0);
    EXPECT_EQ(group.requests(), static_cast<std::size_t>(kThreads * kCalls));
    EXPECT_LT(group.batches(), group.requests());
    EXPECT_LE(most.load(), static_cast<int>(in_flight));
  }
}

}  // namespace
}  // namespace cronwheel::common
