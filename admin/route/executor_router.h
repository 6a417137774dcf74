#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cronwheel::admin {

// What a router is asked: which of a group's executors gets this fire of this job.
struct RouteRequest {
  std::int64_t job_id = 0;
  // The addresses to choose among, in the group's order (never empty: a fire without any
  // address fails before routing). Routers keep per-job state keyed by address, pruned to this
  // list on every call.
  std::vector<std::string> addresses;
  // Sent with the /beat and /idleBeat calls of FAILOVER and BUSYOVER.
  std::string access_token;
};

// What a router chose.
struct RouteResult {
  bool ok = false;
  // ok: the chosen address; for SHARDING_BROADCAST every address, element i being shard i.
  std::vector<std::string> addresses;
  // How the choice was made, for the log row's trigger message: the answers of the /beat or
  // /idleBeat calls of FAILOVER and BUSYOVER (each address's, up to the chosen one); when not
  // ok, why nothing could be chosen. Empty for the strategies that call nobody.
  std::string message;

  static RouteResult chose(std::string address, std::string message = {}) {
    return {true, {std::move(address)}, std::move(message)};
  }
  static RouteResult failed(std::string message) { return {false, {}, std::move(message)}; }
};

// One routing strategy of XXL-JOB 2.4 (ExecutorRouteStrategyEnum), with its semantics.
//
// Routing state (ROUND's counters, LFU's counts, LRU's order) lives in memory, per admin node,
// as in XXL-JOB: two nodes route the same job independently. Implementations are thread-safe:
// the trigger pools route from many threads at once.
class ExecutorRouter {
 public:
  virtual ~ExecutorRouter() = default;
  // Never throws for anything an executor does (a failed beat is an answer like any other).
  virtual RouteResult route(const RouteRequest& request) = 0;
};

}  // namespace cronwheel::admin
