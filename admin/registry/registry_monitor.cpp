#include "admin/model/registry_store.h"
#include "admin/registry/registry_monitor.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <tuple>

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
  read_clock_offsets();
  return changed;
}

void RegistryMonitor::read_clock_offsets() {
  std::vector<ClockOffset> now;
  std::vector<std::string> leads;
  for (auto& e : store_.live(options_.dead_after.count())) {
    if (e.registry_group != "EXECUTOR" || !e.clock) continue;
    if (e.clock->lead_dispatch) leads.push_back(e.registry_value);
    now.push_back({std::move(e.registry_key), std::move(e.registry_value), *e.clock});
  }
  std::sort(leads.begin(), leads.end());
  leads.erase(std::unique(leads.begin(), leads.end()), leads.end());
  std::sort(now.begin(), now.end(), [](const ClockOffset& a, const ClockOffset& b) {
    return std::tie(a.app_name, a.address) < std::tie(b.app_name, b.address);
  });
  auto far = [](const ClockOffset& o) { return std::abs(o.clock.offset_ms) > kClockWarningMs; };
  std::lock_guard lock(clock_mutex_);
  for (const auto& o : now) {
    if (!far(o)) continue;
    const auto before = std::lower_bound(
        clock_offsets_.begin(), clock_offsets_.end(), o, [](const ClockOffset& a, const ClockOffset& b) {
          return std::tie(a.app_name, a.address) < std::tie(b.app_name, b.address);
        });
    const bool was_far = before != clock_offsets_.end() && before->app_name == o.app_name &&
                         before->address == o.address && far(*before);
    if (was_far) continue;
    spdlog::warn("registry: the clock of executor {} at {} is {} ms {} the admin's, more than {} ms (measured over "
                 "a round trip of {} ms); synchronise its clock (NTP). Not logged again while it stays off",
                 o.app_name, o.address, std::abs(o.clock.offset_ms), o.clock.offset_ms > 0 ? "behind" : "ahead of",
                 kClockWarningMs, o.clock.delay_ms);
  }
  clock_offsets_ = std::move(now);
  lead_addresses_ = std::move(leads);
}

bool RegistryMonitor::takes_lead(std::string_view address) const {
  std::lock_guard lock(clock_mutex_);
  return std::binary_search(lead_addresses_.begin(), lead_addresses_.end(), address);
}

bool RegistryMonitor::any_takes_lead() const {
  std::lock_guard lock(clock_mutex_);
  return !lead_addresses_.empty();
}

std::vector<RegistryMonitor::ClockOffset> RegistryMonitor::clock_offsets() const {
  std::lock_guard lock(clock_mutex_);
  return clock_offsets_;
}

void RegistryMonitor::pass() noexcept {
  try {
    refresh_once();
  } catch (const std::exception& e) {
    spdlog::warn("registry refresh failed, trying again in {} ms: {}", options_.interval.count(), e.what());
  }
}

}  // namespace cronwheel::admin
