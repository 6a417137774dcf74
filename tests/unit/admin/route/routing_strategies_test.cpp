#include "admin/route/routing_strategies.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "admin/route/routing.h"
#include "tests/support/fake_clock.h"
#include "tests/support/fake_executor_client.h"

namespace cronwheel::testing {
namespace {

using namespace std::chrono_literals;
using admin::RouteRequest;
using admin::RouteResult;
using Result = admin::ExecutorClient::Result;

const std::vector<std::string> kThree = {"http://a:9999/", "http://b:9999/", "http://c:9999/"};

RouteRequest request(std::int64_t job_id, std::vector<std::string> addresses = kThree) {
  return RouteRequest{job_id, std::move(addresses), "token"};
}

std::string chosen(admin::ExecutorRouter& router, const RouteRequest& r) {
  RouteResult result = router.route(r);
  EXPECT_TRUE(result.ok) << result.message;
  EXPECT_EQ(result.addresses.size(), 1u);
  return result.addresses.empty() ? std::string() : result.addresses.front();
}

// A random source that always answers `value` (modulo the bound), and counts its calls.
struct FixedRandom {
  std::size_t value = 0;
  std::shared_ptr<std::atomic<int>> calls = std::make_shared<std::atomic<int>>(0);
  admin::RandomIndex source() const {
    return [v = value, c = calls](std::size_t bound) {
      ++*c;
      return v % bound;
    };
  }
};

admin::RandomIndex seeded(std::uint64_t seed) {
  auto engine = std::make_shared<std::mt19937_64>(seed);
  auto mutex = std::make_shared<std::mutex>();
  return [engine, mutex](std::size_t bound) {
    std::lock_guard lock(*mutex);
    return std::uniform_int_distribution<std::size_t>(0, bound - 1)(*engine);
  };
}

TEST(ExecutorRouters, EveryStrategyFailsOnAnEmptyList) {
  FakeClock clock;
  FakeExecutorClient client;
  admin::Routing table(client, clock, FixedRandom{}.source());
  using common::protocol::RouteStrategy;
  for (auto name : {RouteStrategy::kFirst, RouteStrategy::kLast, RouteStrategy::kRound, RouteStrategy::kRandom,
                    RouteStrategy::kConsistentHash, RouteStrategy::kLeastFrequentlyUsed,
                    RouteStrategy::kLeastRecentlyUsed, RouteStrategy::kFailover, RouteStrategy::kBusyover,
                    RouteStrategy::kShardingBroadcast}) {
    auto result = table.route(name, request(1, {}));
    EXPECT_FALSE(result.ok) << name;
    EXPECT_FALSE(result.message.empty()) << name;
  }
  EXPECT_TRUE(client.calls().empty());
}

TEST(ExecutorRouters, FirstAndLastPickTheEndsOfTheList) {
  admin::FirstRouter first;
  admin::LastRouter last;
  EXPECT_EQ(chosen(first, request(1)), "http://a:9999/");
  EXPECT_EQ(chosen(last, request(1)), "http://c:9999/");
  EXPECT_EQ(chosen(last, request(1, {"http://only/"})), "http://only/");
}

TEST(ExecutorRouters, RandomSpreadsFiresEvenly) {
  admin::RandomRouter router(seeded(7));
  std::map<std::string, int> counts;
  for (int i = 0; i < 3000; ++i) ++counts[chosen(router, request(1))];
  ASSERT_EQ(counts.size(), 3u);
  for (const auto& [address, n] : counts) {
    EXPECT_GT(n, 850) << address;
    EXPECT_LT(n, 1150) << address;
  }
}

TEST(ExecutorRouters, RoundStartsAtARandomPositionThenRotatesPerJob) {
  FakeClock clock;
  FixedRandom random{7};  // 7 % 3 = 1: job starts on b
  admin::RoundRouter router(clock, random.source());
  EXPECT_EQ(chosen(router, request(1)), "http://b:9999/");
  EXPECT_EQ(chosen(router, request(1)), "http://c:9999/");
  EXPECT_EQ(chosen(router, request(1)), "http://a:9999/");
  // Another job has its own counter, starting at random too.
  EXPECT_EQ(chosen(router, request(2)), "http://b:9999/");
  EXPECT_EQ(chosen(router, request(1)), "http://b:9999/");
  EXPECT_EQ(*random.calls, 2);
}

TEST(ExecutorRouters, RoundCountersAreResetAfterADay) {
  FakeClock clock;
  FixedRandom random{0};
  admin::RoundRouter router(clock, random.source());
  EXPECT_EQ(chosen(router, request(1)), "http://a:9999/");
  EXPECT_EQ(chosen(router, request(1)), "http://b:9999/");
  clock.advance(std::chrono::hours(23));
  EXPECT_EQ(chosen(router, request(1)), "http://c:9999/");
  clock.advance(std::chrono::hours(1));
  EXPECT_EQ(chosen(router, request(1)), "http://a:9999/");  // a new day: a new random start
  EXPECT_EQ(*random.calls, 2);
}

TEST(ExecutorRouters, RoundHandsOutEqualSharesUnderConcurrency) {
  FakeClock clock;
  admin::RoundRouter router(clock, FixedRandom{0}.source());
  const std::vector<std::string> four = {"http://a/", "http://b/", "http://c/", "http://d/"};
  std::mutex mutex;
  std::map<std::string, int> counts;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      std::map<std::string, int> mine;
      for (int i = 0; i < 1000; ++i) ++mine[router.route(request(42, four)).addresses.at(0)];
      std::lock_guard lock(mutex);
      for (const auto& [a, n] : mine) counts[a] += n;
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& address : four) EXPECT_EQ(counts[address], 2000) << address;
}

TEST(ExecutorRouters, ConsistentHashSticksAJobToOneExecutorOnEveryNode) {
  admin::ConsistentHashRouter node1, node2;
  for (std::int64_t job = 1; job <= 50; ++job) {
    const auto first = chosen(node1, request(job));
    for (int i = 0; i < 5; ++i) EXPECT_EQ(chosen(node1, request(job)), first);
    EXPECT_EQ(chosen(node2, request(job)), first) << "another admin node routes job " << job << " alike";
    // The list's order does not matter, only its content.
    EXPECT_EQ(chosen(node2, request(job, {kThree[2], kThree[0], kThree[1]})), first);
  }
}

TEST(ExecutorRouters, ConsistentHashSpreadsJobsOverExecutors) {
  admin::ConsistentHashRouter router;
  std::map<std::string, int> counts;
  for (std::int64_t job = 1; job <= 3000; ++job) ++counts[chosen(router, request(job))];
  ASSERT_EQ(counts.size(), 3u);
  for (const auto& [address, n] : counts) {
    EXPECT_GT(n, 700) << address;
    EXPECT_LT(n, 1300) << address;
  }
}

TEST(ExecutorRouters, ConsistentHashMovesJobsOnlyToAnAddedExecutor) {
  admin::ConsistentHashRouter router;
  auto four = kThree;
  four.push_back("http://d:9999/");
  int moved = 0;
  for (std::int64_t job = 1; job <= 2000; ++job) {
    const auto before = chosen(router, request(job));
    const auto after = chosen(router, request(job, four));
    if (before != after) {
      EXPECT_EQ(after, "http://d:9999/") << "job " << job << " moved between old executors";
      ++moved;
    }
  }
  // About a quarter of the jobs move to the new executor.
  EXPECT_GT(moved, 300);
  EXPECT_LT(moved, 700);
}

TEST(ExecutorRouters, StableHashIsTheSameOnEveryBuild) {
  // Fixed values: a change here would move every CONSISTENT_HASH job of a running cluster
  // whose nodes run different builds.
  EXPECT_EQ(admin::stable_hash("1"), 0x7c3832dde020d3d6ULL);
  EXPECT_EQ(admin::stable_hash("SHARD-http://127.0.0.1:9999/-NODE-0"), 0x7bb6228e9a5bf9dcULL);
  EXPECT_NE(admin::stable_hash("SHARD-http://a/-NODE-17"), admin::stable_hash("SHARD-http://a/-NODE-18"));
}

TEST(ExecutorRouters, LeastFrequentlyUsedPicksTheLeastUsedAndForgetsRemovedAddresses) {
  FakeClock clock;
  admin::LeastFrequentlyUsedRouter router(clock, FixedRandom{0}.source());
  EXPECT_EQ(chosen(router, request(1)), "http://a:9999/");
  EXPECT_EQ(chosen(router, request(1)), "http://b:9999/");
  EXPECT_EQ(chosen(router, request(1)), "http://c:9999/");
  EXPECT_EQ(chosen(router, request(1)), "http://a:9999/");
  // b leaves, d joins with a count of 0 (the random start): d is the least used.
  const std::vector<std::string> changed = {"http://a:9999/", "http://c:9999/", "http://d:9999/"};
  EXPECT_EQ(chosen(router, request(1, changed)), "http://d:9999/");
  EXPECT_EQ(chosen(router, request(1, changed)), "http://c:9999/");
  // b comes back: it was forgotten, so it starts again from the random start (0).
  EXPECT_EQ(chosen(router, request(1)), "http://b:9999/");
  // Job 2 has its own counts.
  EXPECT_EQ(chosen(router, request(2)), "http://a:9999/");
}

TEST(ExecutorRouters, LeastFrequentlyUsedCountsAreResetAfterADay) {
  FakeClock clock;
  admin::LeastFrequentlyUsedRouter router(clock, FixedRandom{0}.source());
  EXPECT_EQ(chosen(router, request(1)), "http://a:9999/");
  EXPECT_EQ(chosen(router, request(1)), "http://b:9999/");
  clock.advance(std::chrono::hours(24));
  EXPECT_EQ(chosen(router, request(1)), "http://a:9999/");
}

TEST(ExecutorRouters, LeastRecentlyUsedCyclesAndPutsNewAddressesLast) {
  FakeClock clock;
  admin::LeastRecentlyUsedRouter router(clock);
  EXPECT_EQ(chosen(router, request(1)), "http://a:9999/");
  EXPECT_EQ(chosen(router, request(1)), "http://b:9999/");
  EXPECT_EQ(chosen(router, request(1)), "http://c:9999/");
  EXPECT_EQ(chosen(router, request(1)), "http://a:9999/");
  // Order of use is now b, c, a; d joins at the most recent end; c leaves.
  const std::vector<std::string> changed = {"http://a:9999/", "http://b:9999/", "http://d:9999/"};
  EXPECT_EQ(chosen(router, request(1, changed)), "http://b:9999/");
  EXPECT_EQ(chosen(router, request(1, changed)), "http://a:9999/");
  EXPECT_EQ(chosen(router, request(1, changed)), "http://d:9999/");
  EXPECT_EQ(chosen(router, request(2, changed)), "http://a:9999/");  // job 2: its own order
}

TEST(ExecutorRouters, LeastRecentlyUsedOrderIsResetAfterADay) {
  FakeClock clock;
  admin::LeastRecentlyUsedRouter router(clock);
  EXPECT_EQ(chosen(router, request(1)), "http://a:9999/");
  clock.advance(std::chrono::hours(25));
  EXPECT_EQ(chosen(router, request(1)), "http://a:9999/");
}

TEST(ExecutorRouters, FailoverPicksTheFirstExecutorWhoseBeatSucceeds) {
  FakeExecutorClient client;
  client.answer("beat", "http://a:9999/", Result::fail("connection refused"));
  admin::FailoverRouter router(client);
  auto result = router.route(request(1));
  ASSERT_TRUE(result.ok);
  EXPECT_EQ(result.addresses, std::vector<std::string>{"http://b:9999/"});
  EXPECT_NE(result.message.find("beat http://a:9999/: code 500, msg: connection refused"), std::string::npos)
      << result.message;
  EXPECT_NE(result.message.find("beat http://b:9999/: code 200"), std::string::npos) << result.message;
  auto beats = client.calls("beat");
  ASSERT_EQ(beats.size(), 2u) << "c is not asked once b answered";
  EXPECT_EQ(beats[0].access_token, "token");
}

TEST(ExecutorRouters, FailoverFailsWithEveryExecutorsAnswerWhenNoneBeats) {
  FakeExecutorClient client;
  for (const auto& a : kThree) client.answer("beat", a, Result::fail("down " + a));
  admin::FailoverRouter router(client);
  auto result = router.route(request(1));
  EXPECT_FALSE(result.ok);
  for (const auto& a : kThree) EXPECT_NE(result.message.find("down " + a), std::string::npos) << result.message;
}

TEST(ExecutorRouters, BusyoverPicksTheFirstExecutorIdleForTheJob) {
  FakeExecutorClient client;
  client.answer("idleBeat", "http://a:9999/", Result::fail("job thread is running or has trigger queue."));
  client.answer("idleBeat", "http://b:9999/", Result::fail("job thread is running or has trigger queue."));
  admin::BusyoverRouter router(client);
  auto result = router.route(request(77));
  ASSERT_TRUE(result.ok) << result.message;
  EXPECT_EQ(result.addresses.at(0), "http://c:9999/");
  auto calls = client.calls("idleBeat");
  ASSERT_EQ(calls.size(), 3u);
  for (const auto& c : calls) EXPECT_EQ(c.job_id, 77);
  EXPECT_TRUE(client.calls("beat").empty());
}

TEST(ExecutorRouters, ShardingBroadcastChoosesEveryAddressInOrder) {
  admin::ShardingBroadcastRouter router;
  auto result = router.route(request(1));
  ASSERT_TRUE(result.ok);
  EXPECT_EQ(result.addresses, kThree);
}

TEST(Routing, RoutesByStrategy) {
  FakeClock clock;
  FakeExecutorClient client;
  admin::Routing table(client, clock, FixedRandom{0}.source());
  using common::protocol::RouteStrategy;
  EXPECT_EQ(table.route(RouteStrategy::kFirst, request(1)).addresses.at(0), kThree[0]);
  EXPECT_EQ(table.route(RouteStrategy::kLast, request(1)).addresses.at(0), kThree[2]);
  EXPECT_EQ(table.route(RouteStrategy::kShardingBroadcast, request(1)).addresses, kThree);
  EXPECT_EQ(table.route(RouteStrategy::kRound, request(1)).addresses.at(0), kThree[0]);
  EXPECT_EQ(table.route(RouteStrategy::kRound, request(1)).addresses.at(0), kThree[1]) << "state is kept between fires";
}

}  // namespace
}  // namespace cronwheel::testing
