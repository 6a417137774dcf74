#include "admin/scheduler/pending_feeder.h"

#include <exception>

#include <spdlog/spdlog.h>

namespace cronwheel::admin {

PendingFeeder::PendingFeeder(ScheduleStore& store, common::Clock& clock, std::string node_id, Push push,
                             Options options)
    : store_(store), clock_(clock), node_id_(std::move(node_id)), push_(std::move(push)), options_(options) {}

PendingFeeder::~PendingFeeder() { stop(); }

void PendingFeeder::start() {
  if (thread_.joinable()) return;
  thread_ = std::jthread([this](std::stop_token stop) { run(std::move(stop)); });
}

void PendingFeeder::stop() noexcept {
  if (!thread_.joinable()) return;
  thread_.request_stop();
  thread_.join();
}

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

void PendingFeeder::run(std::stop_token stop) {
  auto deadline = clock_.steady_now();
  while (!stop.stop_requested()) {
    feed_once();
    deadline += options_.interval;
    const auto now = clock_.steady_now();
    if (deadline < now) deadline = now + options_.interval;  // fell behind: do not catch up in a burst
    clock_.sleep_until(deadline, stop);
  }
}

}  // namespace cronwheel::admin
