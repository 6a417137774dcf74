#pragma once

#include <chrono>
#include <mutex>
#include <thread>

#include "admin/store/stores.h"
#include "common/util/clock.h"

namespace cronwheel::admin {

// Keeps executor registrations and automatic groups' address lists current: once at start and
// then every `interval`, RegistryStore::refresh(dead_after) deletes registrations older than
// `dead_after` (90 s: three missed 30 s heartbeats) and gives every automatic group its live
// addresses. Every admin node runs one; refreshes are idempotent, so running them on several
// nodes at once only repeats the work.
//
// Threading: start() launches one thread that owns the calls to the store; stop() wakes it at
// once (it is waiting on the injected Clock), waits for a refresh under way to finish, and
// joins it. A failed refresh (database unavailable) is logged and tried again at the next
// interval. start() and stop() may be called from any thread; stop() is idempotent.
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
  void start();
  void stop() noexcept;

  // One refresh, as the thread does it. Returns how many groups' lists changed; throws what the
  // store throws.
  int refresh_once();

  const Options& options() const noexcept { return options_; }

 private:
  void run(std::stop_token stop) noexcept;

  RegistryStore& store_;
  common::Clock& clock_;
  const Options options_;
  std::mutex mutex_;  // guards thread_ and started_ (start/stop from different threads)
  bool started_ = false;
  std::jthread thread_;
};

}  // namespace cronwheel::admin
