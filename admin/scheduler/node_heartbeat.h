#pragma once

// This node's lease and the takeover of dead nodes' fires (docs/scheduling.md, "Words" and
// "When a node dies").
//
// Every `interval` (3 s) the heartbeat thread renews this node's lease for `lease` (15 s)
// ahead, with the database's clock (NodeStore::heartbeat), then asks which nodes' leases have
// expired and takes their fires over (FireTakeover), handing the fires that are now this
// node's pending ones to the sink (the ring). Takeover runs only after a successful renewal, so
// a node cut off from the database does not act on a stale view.
//
// lease_valid() is this node's own conservative view of its lease: true until `lease` minus one
// `interval` after the start of the last successful renewal, measured on the steady clock. The
// trigger pools ask it before each send, so a node that cannot renew stops sending before others
// may take its fires over.
//
// Thread-safe: start(), stop(), release() and lease_valid() from any thread; beat_once() from
// one thread at a time (the heartbeat thread once started).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "admin/model/fire.h"
#include "admin/model/node_store.h"
#include "admin/scheduler/fire_takeover.h"
#include "admin/model/schedule_store.h"
#include "admin/model/records.h"
#include "admin/model/stores.h"
#include "admin/model/executor_client.h"
#include "common/util/clock.h"

namespace cronwheel::admin {

class NodeHeartbeat {
 public:
  struct Options {
    std::chrono::milliseconds interval{3'000};
    std::chrono::milliseconds lease{15'000};
    std::int64_t window_ms = kPreReadWindowMs;
  };
  using Sink = std::function<void(const std::vector<PendingFire>& fires)>;
  struct Stats {
    std::uint64_t beats = 0;
    std::uint64_t failed_beats = 0;
    std::uint64_t taken_over = 0;  // pending + sending fires taken from dead nodes
  };

  NodeHeartbeat(NodeStore& nodes, ScheduleStore& store, ExecutorClient& executors, common::Clock& clock,
                AdminNode self, std::string default_access_token, Sink sink, Options options);
  ~NodeHeartbeat();  // stop(); the lease is not released

  NodeHeartbeat(const NodeHeartbeat&) = delete;
  NodeHeartbeat& operator=(const NodeHeartbeat&) = delete;

  // Starts the thread; its first beat is one interval after the start (call beat_once() first
  // to register at once).
  void start();
  void stop() noexcept;

  // Ends this node's lease now (a clean shutdown), so others take its pending fires over at
  // their next heartbeat. Call after stop(), once the pools have stopped sending. Never throws.
  void release() noexcept;

  // Renews the lease and, when that worked, takes over dead nodes' fires. Returns whether the
  // lease was renewed. Never throws.
  bool beat_once() noexcept;

  bool lease_valid() const noexcept;

  Stats stats() const;

 private:
  void run(std::stop_token stop);
  bool renew() noexcept;
  // Renews when an interval has passed since the last renewal (during a long takeover).
  void renew_if_due() noexcept;

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
  std::atomic<std::uint64_t> beats_{0}, failed_beats_{0}, taken_over_{0};
  std::jthread thread_;
};

}  // namespace cronwheel::admin
