#include "admin/registry/registry_monitor.h"

#include <stdexcept>

#include <spdlog/spdlog.h>

namespace cronwheel::admin {

RegistryMonitor::RegistryMonitor(RegistryStore& store, common::Clock& clock, Options options)
    : store_(store), clock_(clock), options_(options) {
  if (options_.interval.count() <= 0) throw std::invalid_argument("registry refresh interval must be positive");
  if (options_.dead_after.count() <= 0) throw std::invalid_argument("registry dead timeout must be positive");
}

RegistryMonitor::~RegistryMonitor() { stop(); }

void RegistryMonitor::start() {
  std::lock_guard lock(mutex_);
  if (started_) throw std::logic_error("RegistryMonitor::start called twice");
  started_ = true;
  thread_ = std::jthread([this](std::stop_token stop) { run(std::move(stop)); });
}

void RegistryMonitor::stop() noexcept {
  std::jthread thread;
  {
    std::lock_guard lock(mutex_);
    thread = std::move(thread_);
  }
  if (thread.joinable()) {
    thread.request_stop();
    thread.join();
  }
}

int RegistryMonitor::refresh_once() {
  const int changed = store_.refresh(options_.dead_after.count());
  if (changed > 0) spdlog::info("registry: address lists of {} automatic group(s) updated", changed);
  return changed;
}

void RegistryMonitor::run(std::stop_token stop) noexcept {
  auto next = clock_.steady_now();
  while (!stop.stop_requested()) {
    try {
      refresh_once();
    } catch (const std::exception& e) {
      spdlog::warn("registry refresh failed, trying again in {} ms: {}", options_.interval.count(), e.what());
    }
    // Absolute deadlines, so refreshes do not drift; after a refresh that overran an interval
    // the missed ones are skipped rather than run back to back.
    next += options_.interval;
    const auto now = clock_.steady_now();
    if (next <= now) next = now + options_.interval;
    if (!clock_.sleep_until(next, stop)) return;
  }
}

}  // namespace cronwheel::admin
