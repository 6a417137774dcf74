#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>
#include <stop_token>

#include "admin/model/records.h"
#include "admin/model/registry_store.h"
#include "admin/model/stores.h"
#include "common/timer/recurring_task.h"

namespace cronwheel::admin {

// Keeps executor registrations and automatic groups' address lists current: once at start and
// then every `interval`, RegistryStore::refresh(dead_after) deletes registrations older than
// `dead_after` (90 s: three missed 30 s heartbeats) and gives every automatic group its live
// addresses. Every admin node runs one; refreshes are idempotent, so running them on several
// nodes at once only repeats the work.
//
// Each refresh then reads the live registrations' clock offsets (RegistryEntry::clock), kept for
// /metrics (clock_offsets(): only live ones, so a registration that expires or is removed leaves
// them at the next refresh and their labels stay bounded), and logs one warning when an
// executor's |offset| first exceeds kClockWarningMs (again only after it came back within it).
// The same read says which live executors take lead dispatch (takes_lead()): those whose last
// registration said so with its clock estimate. An executor that stops saying so (its clock
// drifted beyond its bound) is known at the next refresh; until then it refuses /lead itself and
// its fires go out by /run at their instant.
//
// wake() makes a refresh now: an executor registered for the first time or was removed, or an
// automatic group was created, so its list need not wait for the next interval.
//
// Threading: the refreshes are a common::RecurringTask: their deadlines are on the node's shared
// timer and they run on a lane (thread) of their own, so a slow refresh delays no other periodic
// work (the lease renewal above all). stop() cancels the next deadline, waits for a refresh
// under way to finish and joins the lane. A failed refresh (database unavailable) is logged and
// tried again at the next interval. start(), stop() and wake() may be called from any thread;
// stop() is idempotent.
class RegistryMonitor {
 public:
  struct Options {
    std::chrono::milliseconds interval{30'000};
    std::chrono::milliseconds dead_after{90'000};
  };

  // An executor whose clock is further than this from the admin's fires early or late enough
  // to see.
  static constexpr std::int64_t kClockWarningMs = 1'000;

  struct ClockOffset {
    std::string app_name;
    std::string address;
    ClockEstimate clock;

    friend bool operator==(const ClockOffset&, const ClockOffset&) = default;
  };

  // Throws std::invalid_argument for a non-positive interval or dead_after. `tasks` (the node's
  // timer) must outlive the monitor.
  RegistryMonitor(RegistryStore& store, common::RecurringTasks& tasks, Options options);
  ~RegistryMonitor();  // stop()

  RegistryMonitor(const RegistryMonitor&) = delete;
  RegistryMonitor& operator=(const RegistryMonitor&) = delete;

  // Throws std::logic_error when called twice.
  void start() { task_.start(); }
  void stop() noexcept { task_.stop(); }
  void wake() noexcept { task_.wake(); }

  // One refresh, as the lane does it. Returns how many groups' lists changed; throws what the
  // store throws.
  int refresh_once();

  const Options& options() const noexcept { return options_; }

  // The live EXECUTOR registrations that said a clock estimate, by app name then address, as the
  // last refresh read them; empty before the first. Thread-safe.
  std::vector<ClockOffset> clock_offsets() const;
  // Whether the executor at `address` (a live EXECUTOR registration's value) said at its last
  // registration that it takes lead dispatch, as the last refresh read it. Thread-safe.
  bool takes_lead(std::string_view address) const;
  // Whether any live executor takes lead dispatch, as the last refresh read it. Thread-safe.
  bool any_takes_lead() const;

 private:
  void pass() noexcept;
  void read_clock_offsets();

  RegistryStore& store_;
  const Options options_;
  mutable std::mutex clock_mutex_;
  std::vector<ClockOffset> clock_offsets_;  // guarded by clock_mutex_
  std::vector<std::string> lead_addresses_;  // sorted; guarded by clock_mutex_
  common::RecurringTask task_;  // last: its lane uses the members above
};

}  // namespace cronwheel::admin
