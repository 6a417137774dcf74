#include "admin/scheduler/pending_feeder.h"

#include <exception>

#include <spdlog/spdlog.h>

namespace cronwheel::admin {

PendingFeeder::PendingFeeder(ScheduleStore& store, common::RecurringTasks& tasks, std::string node_id, Push push,
                             Options options)
    : store_(store),
      clock_(tasks.clock()),
      node_id_(std::move(node_id)),
      push_(std::move(push)),
      options_(options),
      task_(tasks, {"pending-fire feeder", options.interval}, [this](std::stop_token) { feed_once(); }) {}

PendingFeeder::~PendingFeeder() { stop(); }

std::size_t PendingFeeder::feed_once() noexcept {
  try {
    auto fires = store_.pending(node_id_, clock_.now_ms() + options_.window_ms, options_.limit);
    if (failing_) spdlog::info("scheduler: the pending-fire feeder reads again");
    failing_ = false;
    std::size_t pushed = 0;
    for (const auto& fire : fires) pushed += push_(fire) ? 1 : 0;
    if (pushed > 0) spdlog::debug("scheduler: fed {} pending fires to the ring", pushed);
    return pushed;
  } catch (const std::exception& e) {
    if (!failing_) spdlog::error("scheduler: reading this node's pending fires failed, retrying: {}", e.what());
    failing_ = true;
    return 0;
  }
}

}  // namespace cronwheel::admin
