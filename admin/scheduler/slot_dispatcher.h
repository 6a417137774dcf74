#pragma once

// The slot dispatcher (docs/scheduling.md, "Concurrency limits and priorities"): a fire of a
// group or job with a concurrency limit goes out only once it holds a slot. The trigger path
// sets a fire without one waiting (TriggerService, TriggerStore::wait_for_slot); this task, on
// every admin node, admits waiting fires as slots free: for each group with fires waiting, one
// admission (TriggerStore::admit, the group's row locked so that two nodes never admit for one
// group at once) gives the free slots to the waiting fires in slot order (admit_waiting: job
// priority, then scheduled time), and the fires admitted become this node's pending fires,
// which its feeder reads and sends, applying the misfire rule to those that waited too long.
//
// It runs once a second, and at once when woken: when a run of this node ends (a slot may have
// freed) and when a fire starts waiting. Runs ending on other nodes wake theirs; the second's
// pass covers the rest.
//
// Threading: a common::RecurringTask, its runs on a lane of their own. start() (once), stop()
// and wake() from any thread.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "admin/model/fire.h"
#include "admin/model/trigger_store.h"
#include "common/timer/recurring_task.h"

namespace cronwheel::admin {

class SlotDispatcher {
 public:
  struct Options {
    std::chrono::milliseconds interval{1'000};
    // Waiting fires read per group and admission: the best this many, in slot order.
    std::size_t max_candidates = 1'000;
  };
  // Called with the fires one admission gave slots to, once committed (they are this node's
  // pending fires now). Must not block or throw.
  using Admitted = std::function<void(const std::vector<PendingFire>& fires)>;

  SlotDispatcher(TriggerStore& store, common::RecurringTasks& tasks, std::string node_id, Admitted admitted,
                 Options options);
  ~SlotDispatcher();  // stop()

  SlotDispatcher(const SlotDispatcher&) = delete;
  SlotDispatcher& operator=(const SlotDispatcher&) = delete;

  void start() { task_.start(); }
  void stop() noexcept { task_.stop(); }
  void wake() noexcept { task_.wake(); }

  // One pass on the caller's thread: how many fires it admitted. Never throws (a failed pass is
  // logged, and the next one tries again).
  std::size_t dispatch_once() noexcept;

  // Fires waiting for a slot by group, as the last pass read them (for /metrics).
  std::map<std::int64_t, std::int64_t> waiting() const;

 private:
  TriggerStore& store_;
  const std::string node_id_;
  const Admitted admitted_;
  const Options options_;
  bool failing_ = false;
  mutable std::mutex mutex_;
  std::map<std::int64_t, std::int64_t> waiting_;  // guarded by mutex_
  common::RecurringTask task_;  // last: its lane uses the members above
};

}  // namespace cronwheel::admin
