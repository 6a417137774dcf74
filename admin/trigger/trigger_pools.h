#pragma once

// The fast and the slow trigger pool (docs/scheduling.md, "Sending a fire: the trigger pools").
//
// dispatch() gives each fire to the fast pool, or to the slow one when its job's triggers took
// longer than `slow_trigger` more than `slow_after` times in the current minute (the wall
// clock's minute; the counts start again each minute), so a few jobs with slow executors
// cannot hold every fast thread. A pool thread calls FireSender::send, which routes, claims,
// calls the executor and records the answer.
//
// A fire neither pool can take (maximum threads and a full queue) fails at once and visibly:
// pending → failed "trigger pool queue full" through the store (guarded: still pending, still
// this node's), counted in Stats::rejected. If even that write fails the fire stays pending, to
// be fed again.
//
// Every fire handed to dispatch() is reported to `finished` exactly once, when the pools are
// done with it (sent, failed, dropped, refused, or left pending at shutdown), so the ring may
// accept its log id again.
//
// Before sending, `may_send` (when given) is asked: false (this node's lease may have run out,
// so another node may be taking its fires over) leaves the fire pending, untouched.
//
// Thread-safe. shutdown() stops both pools: running sends finish (each bounded by the
// executor client's timeouts), queued fires are left pending for this node or a node that
// takes them over.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "admin/model/fire.h"
#include "admin/model/schedule_store.h"
#include "admin/trigger/trigger_pool.h"
#include "common/util/clock.h"

namespace cronwheel::admin {

class TriggerPools {
 public:
  struct Options {
    std::size_t fast_max_threads = 300;
    std::size_t slow_max_threads = 200;
    std::size_t fast_queue_capacity = 2'000;
    std::size_t slow_queue_capacity = 5'000;
    std::chrono::milliseconds idle_timeout{60'000};
    std::chrono::milliseconds slow_trigger{500};
    int slow_after = 10;
  };
  struct Hooks {
    std::function<void(std::int64_t log_id)> finished;  // required
    std::function<bool()> may_send;                     // optional
  };
  struct Stats {
    std::uint64_t fast = 0;       // fires given to the fast pool
    std::uint64_t slow = 0;       // fires given to the slow pool
    std::uint64_t rejected = 0;   // failed "trigger pool queue full"
    std::uint64_t triggered = 0;  // sends the executor accepted
    std::uint64_t failed = 0;     // sends that failed
    std::uint64_t dropped = 0;    // sends that found the fire no longer this node's to send
    std::uint64_t deferred = 0;   // fires left pending because may_send said no
    std::size_t fast_threads = 0, slow_threads = 0;
    std::size_t fast_queued = 0, slow_queued = 0;
  };

  static constexpr const char* kQueueFullMessage = "trigger pool queue full";

  TriggerPools(Options options, FireSender& sender, ScheduleStore& store, common::Clock& clock,
               std::string node_id, Hooks hooks);
  ~TriggerPools();  // shutdown()

  TriggerPools(const TriggerPools&) = delete;
  TriggerPools& operator=(const TriggerPools&) = delete;

  // Gives each fire to its pool; fails the ones refused (one store call for all of them).
  // After shutdown() every fire is reported finished at once and left pending.
  void dispatch(const std::vector<PendingFire>& fires);

  void shutdown() noexcept;

  // Whether the job's triggers go to the slow pool now.
  bool slow(std::int64_t job_id) const;

  Stats stats() const;

 private:
  void send(const PendingFire& fire) noexcept;
  void note_duration(std::int64_t job_id, std::chrono::milliseconds took);
  void fail_rejected(const std::vector<PendingFire>& rejected) noexcept;

  const Options options_;
  FireSender& sender_;
  ScheduleStore& store_;
  common::Clock& clock_;
  const std::string node_id_;
  const Hooks hooks_;

  // Slow triggers per job in the current minute.
  mutable std::mutex slow_mutex_;
  mutable std::int64_t minute_ = -1;
  mutable std::unordered_map<std::int64_t, int> slow_counts_;

  std::atomic<bool> shut_down_{false};
  std::atomic<std::uint64_t> fast_{0}, slow_{0}, rejected_{0}, triggered_{0}, failed_{0}, dropped_{0}, deferred_{0};

  std::unique_ptr<TriggerPool> fast_pool_;
  std::unique_ptr<TriggerPool> slow_pool_;
};

}  // namespace cronwheel::admin
