#include "admin/model/node_store.h"
#include "admin/scheduler/node_heartbeat.h"

#include <exception>

#include <spdlog/spdlog.h>

namespace cronwheel::admin {

NodeHeartbeat::NodeHeartbeat(NodeStore& nodes, ScheduleStore& store, ExecutorClient& executors, common::Clock& clock,
                             AdminNode self, std::string default_access_token, Sink sink, Options options)
    : nodes_(nodes),
      clock_(clock),
      self_(std::move(self)),
      sink_(std::move(sink)),
      options_(options),
      takeover_(store, executors, clock, self_.node_id, std::move(default_access_token), options.window_ms) {}

NodeHeartbeat::~NodeHeartbeat() { stop(); }

void NodeHeartbeat::start() {
  if (thread_.joinable()) return;
  thread_ = std::jthread([this](std::stop_token stop) { run(std::move(stop)); });
}

void NodeHeartbeat::stop() noexcept {
  if (!thread_.joinable()) return;
  thread_.request_stop();
  thread_.join();
}

void NodeHeartbeat::release() noexcept {
  renewed_at_.store(kNever);
  try {
    nodes_.release(self_.node_id);
    spdlog::info("scheduler: node {} released its lease; its pending fires go to the other nodes", self_.node_id);
  } catch (const std::exception& e) {
    spdlog::warn("scheduler: node {} could not release its lease (others take over when it expires): {}",
                 self_.node_id, e.what());
  }
}

bool NodeHeartbeat::renew() noexcept {
  const auto started = clock_.steady_now();
  try {
    nodes_.heartbeat(self_, options_.lease.count(), starting_);
  } catch (const std::exception& e) {
    failed_beats_.fetch_add(1, std::memory_order_relaxed);
    if (!failing_) spdlog::error("scheduler: node {} could not renew its lease: {}", self_.node_id, e.what());
    failing_ = true;
    return false;
  }
  if (failing_) spdlog::info("scheduler: node {} renews its lease again", self_.node_id);
  failing_ = false;
  starting_ = false;
  beats_.fetch_add(1, std::memory_order_relaxed);
  renewed_at_.store(started.time_since_epoch().count());
  return true;
}

void NodeHeartbeat::renew_if_due() noexcept {
  const auto at = renewed_at_.load();
  const auto last = common::Clock::SteadyTime(std::chrono::steady_clock::duration(at));
  if (at == kNever || clock_.steady_now() - last >= options_.interval) renew();
}

bool NodeHeartbeat::beat_once() noexcept {
  if (!renew()) return false;
  try {
    auto dead = nodes_.expired();
    std::erase(dead, self_.node_id);
    if (dead.empty() && takeover_.unresolved() == 0) return true;
    auto report = takeover_.take_over(dead, [this] { renew_if_due(); });
    taken_over_.fetch_add(report.pending + report.delivered + report.resent + report.unknown,
                          std::memory_order_relaxed);
    if (!report.to_send.empty()) sink_(report.to_send);
  } catch (const std::exception& e) {
    spdlog::error("scheduler: taking over dead nodes' fires failed, trying again at the next heartbeat: {}", e.what());
  }
  return true;
}

bool NodeHeartbeat::lease_valid() const noexcept {
  const auto at = renewed_at_.load();
  if (at == kNever) return false;
  const auto renewed = common::Clock::SteadyTime(std::chrono::steady_clock::duration(at));
  return clock_.steady_now() < renewed + options_.lease - options_.interval;
}

void NodeHeartbeat::run(std::stop_token stop) {
  auto deadline = clock_.steady_now() + options_.interval;
  while (clock_.sleep_until(deadline, stop)) {
    beat_once();
    deadline += options_.interval;
    const auto now = clock_.steady_now();
    if (deadline <= now) deadline = now + options_.interval;
  }
}

NodeHeartbeat::Stats NodeHeartbeat::stats() const {
  return {beats_.load(std::memory_order_relaxed), failed_beats_.load(std::memory_order_relaxed),
          taken_over_.load(std::memory_order_relaxed)};
}

}  // namespace cronwheel::admin
