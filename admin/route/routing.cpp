#include "admin/route/routing.h"

#include <string>

namespace cronwheel::admin {

using common::protocol::RouteStrategy;

Routing::Routing(ExecutorClient& client, common::Clock& clock, RandomIndex random) {
  auto at = [this](RouteStrategy s) -> std::unique_ptr<ExecutorRouter>& { return routers_[static_cast<std::size_t>(s)]; };
  at(RouteStrategy::kFirst) = std::make_unique<FirstRouter>();
  at(RouteStrategy::kLast) = std::make_unique<LastRouter>();
  at(RouteStrategy::kRound) = std::make_unique<RoundRouter>(clock, random);
  at(RouteStrategy::kRandom) = std::make_unique<RandomRouter>(random);
  at(RouteStrategy::kConsistentHash) = std::make_unique<ConsistentHashRouter>();
  at(RouteStrategy::kLeastFrequentlyUsed) = std::make_unique<LeastFrequentlyUsedRouter>(clock, random);
  at(RouteStrategy::kLeastRecentlyUsed) = std::make_unique<LeastRecentlyUsedRouter>(clock);
  at(RouteStrategy::kFailover) = std::make_unique<FailoverRouter>(client);
  at(RouteStrategy::kBusyover) = std::make_unique<BusyoverRouter>(client);
  at(RouteStrategy::kShardingBroadcast) = std::make_unique<ShardingBroadcastRouter>();
}

ExecutorRouter& Routing::router(RouteStrategy strategy) { return *routers_.at(static_cast<std::size_t>(strategy)); }

RouteResult Routing::route(RouteStrategy strategy, const RouteRequest& request) {
  return router(strategy).route(request);
}

}  // namespace cronwheel::admin
