#include "admin/model/registry_store.h"
#include "admin/registry/registry_monitor.h"

#include <stdexcept>

#include <spdlog/spdlog.h>

namespace cronwheel::admin {

namespace {

RegistryMonitor::Options checked(RegistryMonitor::Options options) {
  if (options.interval.count() <= 0) throw std::invalid_argument("registry refresh interval must be positive");
  if (options.dead_after.count() <= 0) throw std::invalid_argument("registry dead timeout must be positive");
  return options;
}

}  // namespace

RegistryMonitor::RegistryMonitor(RegistryStore& store, common::RecurringTasks& tasks, Options options)
    : store_(store),
      options_(checked(options)),
      task_(tasks, {"registry refresh", options_.interval}, [this](std::stop_token) { pass(); }) {}

RegistryMonitor::~RegistryMonitor() { stop(); }

int RegistryMonitor::refresh_once() {
  const int changed = store_.refresh(options_.dead_after.count());
  if (changed > 0) spdlog::info("registry: address lists of {} automatic group(s) updated", changed);
  return changed;
}

void RegistryMonitor::pass() noexcept {
  try {
    refresh_once();
  } catch (const std::exception& e) {
    spdlog::warn("registry refresh failed, trying again in {} ms: {}", options_.interval.count(), e.what());
  }
}

}  // namespace cronwheel::admin
