#pragma once

// This node's lease and the takeover of dead nodes' fires (docs/scheduling.md, "Words" and
// "When a node dies").
//
// Two recurring tasks (common::RecurringTask) on the node's shared timer, each on a lane of its
// own, both every `interval` (3 s):
//  - the renewal (Redisson's watchdog: renew well before the lease ends) extends this node's
//    lease to `lease` (15 s) ahead, with the database's clock (NodeStore::heartbeat). It is
//    one short statement and waits behind nothing: not behind a takeover calling executors,
//    not behind any other periodic work of the node.
//  - the takeover, half an interval after each renewal, asks which nodes' leases have expired
//    and takes their fires over (FireTakeover), handing the fires that are now this node's
//    pending ones to the sink (the ring). It runs only while lease_valid(), so a node cut off
//    from the database does not act on a stale view, and it may take long (it asks executors
//    about sending fires) without the lease running out meanwhile.
// A failed renewal is tried again at the next interval: with the defaults, four more tries
// before lease_valid() turns false.
//
// A lease that lapsed while the database was away is not death: the other nodes could not renew
// theirs either. So once this node has failed to renew (the database was unreachable, or it
// started while it was), it takes no node's fires over until it has renewed without a failure
// for a whole `lease`: by then every node that is alive and back on the database has renewed
// its own. A node that never failed to renew takes over as soon as a lease has expired.
//
// lease_valid() is this node's own conservative view of its lease: true until `lease` minus one
// `interval` after the start of the last successful renewal, measured on the steady clock. The
// trigger pools ask it before each send, so a node that cannot renew stops sending before others
// may take its fires over.
//
// A node restarted under the same id before its lease expired finds the fires its earlier process
// was sending still under its id, and no other node takes them over (the lease never lapsed).
// So its first takeover, before anything else, resolves them (FireTakeover::
// recover_earlier_process), and lease_valid() stays false until that worked: until then this
// process has sent nothing, so every sending fire under its id was the earlier process's.
//
// Thread-safe: start(), stop(), release() and lease_valid() from any thread; beat_once() from
// one thread at a time, and only before start() or after stop() (the lanes own the renewal and
// the takeover while they run).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <mutex>
#include <stop_token>
#include <string>
#include <vector>

#include "admin/model/fire.h"
#include "admin/model/node_store.h"
#include "admin/scheduler/fire_takeover.h"
#include "admin/model/schedule_store.h"
#include "admin/model/records.h"
#include "admin/model/stores.h"
#include "admin/model/executor_client.h"
#include "common/timer/recurring_task.h"
#include "common/util/clock.h"

namespace cronwheel::admin {

class NodeHeartbeat {
 public:
  struct Options {
    std::chrono::milliseconds interval{3'000};
    std::chrono::milliseconds lease{15'000};
    std::int64_t window_ms = kPreReadWindowMs;
    // When set, the fires taken over that the misfire rule cancels are counted there
    // (FireTakeover). Must outlive the heartbeat.
    FinishedRuns* finished_runs = nullptr;
  };
  using Sink = std::function<void(const std::vector<PendingFire>& fires)>;
  struct Stats {
    std::uint64_t beats = 0;
    std::uint64_t failed_beats = 0;
    std::uint64_t taken_over = 0;  // pending + sending fires taken from dead nodes
  };

  // Time comes from tasks.clock(); `tasks` must outlive the heartbeat. Throws
  // std::invalid_argument for a non-positive interval or a lease not longer than it.
  NodeHeartbeat(NodeStore& nodes, ScheduleStore& store, ExecutorClient& executors, common::RecurringTasks& tasks,
                AdminNode self, std::string default_access_token, Sink sink, Options options);
  ~NodeHeartbeat();  // stop(); the lease is not released

  NodeHeartbeat(const NodeHeartbeat&) = delete;
  NodeHeartbeat& operator=(const NodeHeartbeat&) = delete;

  // Starts both tasks: the first renewal is one interval after the start, the first takeover
  // half an interval later (call beat_once() first to register at once). Once only.
  void start();
  // Stops both, waiting for a renewal or takeover under way. Idempotent.
  void stop() noexcept;

  // Ends this node's lease now (a clean shutdown), so others take its pending fires over at
  // their next heartbeat. Call after stop(), once the pools have stopped sending. Never throws.
  void release() noexcept;

  // Renews the lease and, when that worked, takes over dead nodes' fires, on the caller's
  // thread. Returns whether the lease was renewed. Never throws.
  bool beat_once() noexcept;

  // The lease is held and the fires an earlier process of this node was sending are resolved:
  // this node may send.
  bool lease_valid() const noexcept;

  Stats stats() const;

 private:
  // The lease alone, without the recovery of the earlier process's fires.
  bool lease_held() const noexcept;
  bool renew() noexcept;
  void take_over() noexcept;
  // Whether this node has renewed for a whole lease since it last failed to (see above).
  bool may_judge_others() noexcept;

  NodeStore& nodes_;
  common::Clock& clock_;
  const AdminNode self_;
  const Sink sink_;
  const Options options_;
  FireTakeover takeover_;

  bool starting_ = true;  // the next renewal is the node's first
  bool failing_ = false;
  // The steady clock's ticks since its epoch at the start of the last successful renewal.
  static constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::min();
  std::atomic<std::int64_t> renewed_at_{kNever};
  // The same at the start of the first successful renewal after the last failed one; kNever
  // while failing; kAlways when no renewal has failed yet.
  static constexpr std::int64_t kAlways = std::numeric_limits<std::int64_t>::max();
  std::atomic<std::int64_t> renewing_since_{kAlways};
  bool waiting_after_outage_ = false;  // said so in the log (takeover lane only)
  // The sending fires of an earlier process of this node are resolved (recover_earlier_process).
  std::atomic<bool> recovered_{false};
  std::atomic<std::uint64_t> beats_{0}, failed_beats_{0}, taken_over_{0};
  // Last: their lanes use the members above.
  common::RecurringTask renewal_;
  common::RecurringTask takeover_task_;
};

}  // namespace cronwheel::admin
