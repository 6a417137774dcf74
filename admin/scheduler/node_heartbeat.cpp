#include "admin/model/node_store.h"
#include "admin/scheduler/node_heartbeat.h"

#include <exception>
#include <stdexcept>

#include <spdlog/spdlog.h>

namespace cronwheel::admin {

namespace {

NodeHeartbeat::Options checked(NodeHeartbeat::Options options) {
  if (options.interval.count() <= 0) throw std::invalid_argument("heartbeat interval must be positive");
  if (options.lease <= options.interval) throw std::invalid_argument("the lease must be longer than the heartbeat");
  return options;
}

}  // namespace

NodeHeartbeat::NodeHeartbeat(NodeStore& nodes, ScheduleStore& store, ExecutorClient& executors,
                             common::RecurringTasks& tasks, AdminNode self, std::string default_access_token, Sink sink,
                             Options options)
    : nodes_(nodes),
      clock_(tasks.clock()),
      self_(std::move(self)),
      sink_(std::move(sink)),
      options_(checked(options)),
      takeover_(store, executors, clock_, self_.node_id, std::move(default_access_token), options.window_ms,
                options.finished_runs),
      renewal_(tasks, {"lease renewal", options_.interval, options_.interval}, [this](std::stop_token) { renew(); }),
      takeover_task_(tasks, {"takeover of dead nodes' fires", options_.interval, options_.interval + options_.interval / 2},
                     [this](std::stop_token) {
                       if (lease_held()) take_over();
                     }) {}

NodeHeartbeat::~NodeHeartbeat() { stop(); }

void NodeHeartbeat::start() {
  renewal_.start();
  takeover_task_.start();
}

void NodeHeartbeat::stop() noexcept {
  takeover_task_.stop();
  renewal_.stop();
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
    renewing_since_.store(kNever);
    return false;
  }
  if (renewing_since_.load() == kNever) renewing_since_.store(started.time_since_epoch().count());
  if (failing_) spdlog::info("scheduler: node {} renews its lease again", self_.node_id);
  failing_ = false;
  starting_ = false;
  beats_.fetch_add(1, std::memory_order_relaxed);
  renewed_at_.store(started.time_since_epoch().count());
  return true;
}

bool NodeHeartbeat::may_judge_others() noexcept {
  const auto since = renewing_since_.load();
  if (since == kAlways) return true;
  const bool long_enough =
      since != kNever &&
      clock_.steady_now() >= common::Clock::SteadyTime(std::chrono::steady_clock::duration(since)) + options_.lease;
  if (!long_enough && !waiting_after_outage_) {
    spdlog::info("scheduler: node {} takes no other node's fires over until it has renewed its lease for {} ms "
                 "without a failure: their leases may have lapsed only because the database was away",
                 self_.node_id, options_.lease.count());
  }
  waiting_after_outage_ = !long_enough;
  return long_enough;
}

void NodeHeartbeat::take_over() noexcept {
  if (!recovered_.load()) {
    try {
      auto report = takeover_.recover_earlier_process();
      taken_over_.fetch_add(report.delivered + report.resent + report.unknown, std::memory_order_relaxed);
      if (!report.to_send.empty()) sink_(report.to_send);
      recovered_.store(true);
    } catch (const std::exception& e) {
      spdlog::error("scheduler: node {} could not look for fires an earlier process of it was sending; it sends "
                    "nothing until it could: {}",
                    self_.node_id, e.what());
      return;
    }
  }
  try {
    // Sending fires this node took over earlier and could not resolve yet are its own: those
    // are tried again in any case.
    std::vector<std::string> dead;
    if (may_judge_others()) {
      dead = nodes_.expired();
      std::erase(dead, self_.node_id);
    }
    if (dead.empty() && takeover_.unresolved() == 0) return;
    auto report = takeover_.take_over(dead);
    taken_over_.fetch_add(report.pending + report.delivered + report.resent + report.unknown,
                          std::memory_order_relaxed);
    if (!report.to_send.empty()) sink_(report.to_send);
  } catch (const std::exception& e) {
    spdlog::error("scheduler: taking over dead nodes' fires failed, trying again at the next heartbeat: {}", e.what());
  }
}

bool NodeHeartbeat::beat_once() noexcept {
  if (!renew()) return false;
  take_over();
  return true;
}

bool NodeHeartbeat::lease_valid() const noexcept { return recovered_.load() && lease_held(); }

bool NodeHeartbeat::lease_held() const noexcept {
  const auto at = renewed_at_.load();
  if (at == kNever) return false;
  const auto renewed = common::Clock::SteadyTime(std::chrono::steady_clock::duration(at));
  return clock_.steady_now() < renewed + options_.lease - options_.interval;
}

NodeHeartbeat::Stats NodeHeartbeat::stats() const {
  return {beats_.load(std::memory_order_relaxed), failed_beats_.load(std::memory_order_relaxed),
          taken_over_.load(std::memory_order_relaxed)};
}

}  // namespace cronwheel::admin
