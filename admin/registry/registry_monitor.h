#pragma once

#include <chrono>
#include <stop_token>

#include "admin/model/registry_store.h"
#include "admin/model/stores.h"
#include "common/util/clock.h"
#include "common/util/periodic_task.h"

namespace cronwheel::admin {

// Keeps executor registrations and automatic groups' address lists current: once at start and
// then every `interval`, RegistryStore::refresh(dead_after) deletes registrations older than
// `dead_after` (90 s: three missed 30 s heartbeats) and gives every automatic group its live
// addresses. Every admin node runs one; refreshes are idempotent, so running them on several
// nodes at once only repeats the work.
//
// wake() makes a refresh now: an executor registered for the first time or was removed, or an
// automatic group was created, so its list need not wait for the next interval.
//
// Threading: start() launches one thread (common::PeriodicTask) that owns the calls to the
// store; stop() wakes it at once (it is waiting on the injected Clock), waits for a refresh
// under way to finish, and joins it. A failed refresh (database unavailable) is logged and
// tried again at the next interval. start(), stop() and wake() may be called from any thread;
// stop() is idempotent.
class RegistryMonitor {
 public:
  struct Options {
    std::chrono::milliseconds interval{30'000};
    std::chrono::milliseconds dead_after{90'000};
  };

  // Throws std::invalid_argument for a non-positive interval or dead_after.
  RegistryMonitor(RegistryStore& store, common::Clock& clock, Options options);
  ~RegistryMonitor();  // stop()

  RegistryMonitor(const RegistryMonitor&) = delete;
  RegistryMonitor& operator=(const RegistryMonitor&) = delete;

  // Throws std::logic_error when called twice.
  void start() { task_.start(); }
  void stop() noexcept { task_.stop(); }
  void wake() noexcept { task_.wake(); }

  // One refresh, as the thread does it. Returns how many groups' lists changed; throws what the
  // store throws.
  int refresh_once();

  const Options& options() const noexcept { return options_; }

 private:
  void pass() noexcept;

  RegistryStore& store_;
  const Options options_;
  common::PeriodicTask task_;  // last: its thread uses the members above
};

}  // namespace cronwheel::admin
