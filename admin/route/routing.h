#pragma once

#include <array>
#include <memory>
#include <string_view>

#include "admin/model/executor_client.h"
#include "admin/route/executor_router.h"
#include "admin/route/routing_strategies.h"
#include "common/protocol/job_enums.h"
#include "common/util/clock.h"

namespace cronwheel::admin {

// One router per strategy for an admin node: the routing state every fire of the node shares.
// Thread-safe.
class Routing {
 public:
  // `client` makes FAILOVER's and BUSYOVER's beats; `clock` times the daily reset of per-job
  // state; `random` gives RANDOM, ROUND and LEAST_FREQUENTLY_USED their random picks. All must
  // outlive the table.
  Routing(ExecutorClient& client, common::Clock& clock, RandomIndex random = default_random_index());

  ExecutorRouter& router(common::protocol::RouteStrategy strategy);

  // Routes with that strategy's router.
  RouteResult route(common::protocol::RouteStrategy strategy, const RouteRequest& request);

 private:
  std::array<std::unique_ptr<ExecutorRouter>, 10> routers_;
};

}  // namespace cronwheel::admin
