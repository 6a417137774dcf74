#pragma once

// The scheduling core of one admin node, assembled (docs/scheduling.md): the schedule thread
// decides fires and writes them durably; the second ring holds them until their second; the
// trigger pools send them (FireSender); the feeder brings in this node's other pending fires;
// the heartbeat keeps this node's lease and takes over dead nodes' fires. The schedule thread
// and the ring have threads of their own; the feeder, the lease renewal and the takeover are
// recurring tasks on the node's shared timer (common::RecurringTasks), each on its own lane.
//
//   schedule thread ──┐
//   feeder ───────────┼──► second ring ──► trigger pools ──► FireSender::send
//   heartbeat ────────┘        ▲                   │
//                              └──── finished ─────┘
//
// start() registers the node (its first heartbeat, at once), then starts every thread. stop()
// is the clean shutdown: stop deciding (the schedule thread and the feeder), stop the ring
// (what it held stays pending), let the pools finish the sends they started, stop the heartbeat
// and release the lease, so the other nodes take this node's pending fires over at their next
// heartbeat. Nothing is lost: every fire not sent is a pending row.
//
// Thread-safe; start() and stop() once each (stop() is idempotent and called by the destructor).

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "admin/model/fire.h"
#include "admin/model/node_store.h"
#include "admin/scheduler/load_shedder.h"
#include "admin/scheduler/node_heartbeat.h"
#include "admin/scheduler/pending_feeder.h"
#include "admin/model/schedule_store.h"
#include "admin/scheduler/schedule_thread.h"
#include "admin/scheduler/second_ring.h"
#include "admin/trigger/trigger_pools.h"
#include "admin/model/records.h"
#include "admin/model/stores.h"
#include "admin/model/executor_client.h"
#include "common/timer/recurring_task.h"
#include "common/util/clock.h"

namespace cronwheel::admin {

class Scheduler {
 public:
  struct Options {
    ScheduleThread::Options schedule;
    TriggerPools::Options pools;
    PendingFeeder::Options feeder;
    NodeHeartbeat::Options heartbeat;
    // How long before each second the ring hands that second's fires to the pools, which read
    // and claim them then and post them at the second (SecondRing's lead).
    std::chrono::milliseconds prepare_ahead{800};
    // Lead dispatch of bursts: fires due up to this far ahead whose executors take lead dispatch
    // are handed over as soon as the ring holds them, `lead_chunk` at a time
    // (TriggerPools::hand_over_ahead, SecondRing::Ahead), so that a second of more fires than
    // one prepare_ahead can claim still reaches its executors before its instant. Zero: only
    // each second's own hand-off, prepare_ahead before it.
    std::chrono::milliseconds lead_horizon{0};
    std::size_t lead_chunk = 1'000;
    // Shedding past capacity: the ring's hand-offs tell the shedder how late they are, and the
    // scans keep the share of their fires it gives (LoadShedder).
    LoadShedder::Options shedding;
    // XXL-JOB-ACCESS-TOKEN for executors whose group has none (recovery's /log calls).
    std::string default_access_token;
  };
  struct Stats {
    ScheduleThread::Stats schedule;
    TriggerPools::Stats pools;
    NodeHeartbeat::Stats heartbeat;
    std::size_t ring_held = 0;
  };

  // `self` names this node (node_id, advertised address, version). `tasks` carries the feeder's
  // and the heartbeat's deadlines and must run on `clock` (std::invalid_argument otherwise).
  // Every reference must outlive the Scheduler.
  Scheduler(ScheduleStore& store, NodeStore& nodes, FireSender& sender, ExecutorClient& executors,
            common::Clock& clock, common::RecurringTasks& tasks, AdminNode self, Options options);
  ~Scheduler();

  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  void start();
  void stop() noexcept;

  // Makes the schedule thread scan again now (a job's next time became sooner than its sleep).
  void wake();

  // Fires this node just wrote outside a scan (FiresWritten): the pending ones already due go
  // to the trigger pools at once, the others into the ring for their second, instead of waiting
  // for the feeder to read them. Thread-safe; ignored before start() and after stop().
  void send_soon(const std::vector<JobLog>& fires);

  // This node's pending fires read now rather than at the feeder's next second: fires a slot
  // dispatcher just admitted go out through the feeder, which applies the misfire rule to those
  // that waited too long. Thread-safe.
  void feed_now();

  const std::string& node_id() const noexcept { return node_id_; }
  bool lease_valid() const noexcept;
  Stats stats() const;

 private:
  void push(const std::vector<PendingFire>& fires);

  const std::string node_id_;
  std::unique_ptr<LoadShedder> shedder_;
  std::unique_ptr<SecondRing> ring_;
  std::unique_ptr<NodeHeartbeat> heartbeat_;
  std::unique_ptr<TriggerPools> pools_;
  std::unique_ptr<PendingFeeder> feeder_;
  std::unique_ptr<ScheduleThread> schedule_;
  bool started_ = false;
  bool stopped_ = false;
};

}  // namespace cronwheel::admin
