#pragma once

// The ten routing strategies of XXL-JOB 2.4, each with XXL-JOB's semantics (its
// ExecutorRouteStrategyEnum and ExecutorRoute* classes), as ExecutorRouters. Routing
// (routing.h) holds one of each for an admin node.
//
// Per-job state (ROUND, LEAST_FREQUENTLY_USED, LEAST_RECENTLY_USED) is cleared once a day, as
// XXL-JOB's route caches are, so it stays bounded by the jobs routed in a day and a counter
// never grows stale; it is kept per admin node, in memory.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "admin/model/executor_client.h"
#include "admin/route/executor_router.h"
#include "common/util/clock.h"

namespace cronwheel::admin {

// A uniformly distributed number in [0, bound), bound > 0. Must be thread-safe. Tests pass a
// deterministic one.
using RandomIndex = std::function<std::size_t(std::size_t bound)>;

// A Mersenne Twister seeded from std::random_device, behind a mutex.
RandomIndex default_random_index();

// How long per-job routing state lives before it is cleared (XXL-JOB's CACHE_VALID_TIME).
inline constexpr std::int64_t kRouteStateLifetimeMs = 24LL * 60 * 60 * 1000;

// The stable 64-bit hash CONSISTENT_HASH places addresses and jobs with: FNV-1a followed by
// MurmurHash3's 64-bit finalizer (FNV alone spreads keys that differ only in their last
// characters, such as "...-NODE-17" and "...-NODE-18", poorly). The same on every platform and
// build, so every admin node maps a job to the same executor.
std::uint64_t stable_hash(std::string_view key) noexcept;

// FIRST: the first address.
class FirstRouter final : public ExecutorRouter {
 public:
  RouteResult route(const RouteRequest& request) override;
};

// LAST: the last address.
class LastRouter final : public ExecutorRouter {
 public:
  RouteResult route(const RouteRequest& request) override;
};

// RANDOM: any address, uniformly.
class RandomRouter final : public ExecutorRouter {
 public:
  explicit RandomRouter(RandomIndex random) : random_(std::move(random)) {}
  RouteResult route(const RouteRequest& request) override;

 private:
  RandomIndex random_;
};

// ROUND: per job, a counter that starts at a random number below 100 (so jobs created together
// do not all start on the first executor) and goes up by one per fire; the address is
// counter % size. A counter past 1,000,000 starts again at random.
class RoundRouter final : public ExecutorRouter {
 public:
  RoundRouter(common::Clock& clock, RandomIndex random) : clock_(clock), random_(std::move(random)) {}
  RouteResult route(const RouteRequest& request) override;

 private:
  common::Clock& clock_;
  RandomIndex random_;
  std::mutex mutex_;
  std::int64_t valid_until_ = 0;
  std::unordered_map<std::int64_t, std::uint64_t> counters_;
};

// CONSISTENT_HASH: each address is placed on a hash ring at 100 points ("SHARD-<address>-NODE-
// <i>"); a job goes to the first point at or after the hash of its id (wrapping). A job sticks
// to one executor while the list is stable, and when an address joins or leaves only the jobs
// on its arcs move. Stateless apart from a cache of rings by address list.
class ConsistentHashRouter final : public ExecutorRouter {
 public:
  static constexpr int kVirtualNodes = 100;
  RouteResult route(const RouteRequest& request) override;

 private:
  using Ring = std::vector<std::pair<std::uint64_t, std::size_t>>;  // (point, address index), sorted
  std::shared_ptr<const Ring> ring_for(const std::vector<std::string>& addresses);

  static constexpr std::size_t kCachedRings = 64;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const Ring>> rings_;  // by the address list, '\n'-joined
};

// LEAST_FREQUENTLY_USED: per job, a use count per address; the address with the lowest count
// is chosen (the earliest in the list among equals) and its count goes up. An address the job
// has not seen yet starts at a random count below the number of addresses (so jobs do not all
// pile onto a new executor); a count past 1,000,000 starts again the same way. Addresses no
// longer in the list are forgotten.
class LeastFrequentlyUsedRouter final : public ExecutorRouter {
 public:
  LeastFrequentlyUsedRouter(common::Clock& clock, RandomIndex random)
      : clock_(clock), random_(std::move(random)) {}
  RouteResult route(const RouteRequest& request) override;

 private:
  common::Clock& clock_;
  RandomIndex random_;
  std::mutex mutex_;
  std::int64_t valid_until_ = 0;
  std::unordered_map<std::int64_t, std::unordered_map<std::string, std::uint64_t>> counts_;
};

// LEAST_RECENTLY_USED: per job, the addresses in order of last use; the least recently used one
// is chosen and becomes the most recent. As in XXL-JOB, the addresses are first taken in list
// order, and an address joining later is put at the most recent end (it gets its turn after
// the others had theirs). Addresses no longer in the list are forgotten.
class LeastRecentlyUsedRouter final : public ExecutorRouter {
 public:
  explicit LeastRecentlyUsedRouter(common::Clock& clock) : clock_(clock) {}
  RouteResult route(const RouteRequest& request) override;

 private:
  common::Clock& clock_;
  std::mutex mutex_;
  std::int64_t valid_until_ = 0;
  std::unordered_map<std::int64_t, std::list<std::string>> orders_;  // least recent first
};

// FAILOVER: the first address, in list order, whose /beat succeeds. The message lists every
// beat made; when none succeeds the route fails with each address's answer.
class FailoverRouter final : public ExecutorRouter {
 public:
  explicit FailoverRouter(ExecutorClient& client) : client_(client) {}
  RouteResult route(const RouteRequest& request) override;

 private:
  ExecutorClient& client_;
};

// BUSYOVER: the first address, in list order, whose /idleBeat for the job succeeds (the job is
// neither running nor queued there). Messages as FAILOVER's.
class BusyoverRouter final : public ExecutorRouter {
 public:
  explicit BusyoverRouter(ExecutorClient& client) : client_(client) {}
  RouteResult route(const RouteRequest& request) override;

 private:
  ExecutorClient& client_;
};

// SHARDING_BROADCAST: every address; the fire is sent to each, address i as shard i of n.
class ShardingBroadcastRouter final : public ExecutorRouter {
 public:
  RouteResult route(const RouteRequest& request) override;
};

}  // namespace cronwheel::admin
