#pragma once

// Taking over the fires of dead admin nodes (docs/scheduling.md, "When a node dies").
//
// In one store transaction (ScheduleStore::take_over) the dead nodes' pending and sending fires
// become this node's. The pending ones then go through the misfire rule every path that finds
// late pending fires shares (judge_late_fires, fire_decision.h): a scheduled fire later than
// the window is cancelled when its job says DO_NOTHING, and of a FIRE_ONCE_NOW job's late fires
// only the newest goes out; the cancellations are one guarded batch (cancel_pending) that
// writes their follow-ups (a FIX_DELAY job's next time). Only after it are the fires to send
// handed on; if it fails, none is (they are this node's pending fires now, and the feeder
// applies the same rule to them within a second).
//
// A sending fire's fate is unknown: the dead node may or may not have reached the executor.
// After the transaction, with none open, the executor that was called is asked for the run's
// log (check_delivery, admin/trigger/delivery_check.h: POST /log with the log id and the
// logDateTime the run is sent with, log_date_time: its logical time or its scheduled time):
//  - it has the run (or has it queued): delivered, sending → triggered;
//  - it answers that no such log exists: never delivered, sending → pending, sent again;
//  - it does not answer, or answers a failure: sending → triggered, not confirmed (trigger code
//    500, "delivery unknown: ..."), never sent again, since it may be running; it waits for its
//    result, and the lost-result check asks the executor about it.
// The executors are asked concurrently (up to 16 calls at once), the answers recorded one by one.
//
// Not thread-safe: one caller at a time (NodeHeartbeat's takeover, a common::RecurringTask
// that runs on a lane of its own, so the lease renewal never waits for it).

#include <cstdint>
#include <string>
#include <vector>

#include "admin/model/finished_runs.h"
#include "admin/model/fire.h"
#include "admin/model/schedule_store.h"
#include "admin/model/executor_client.h"
#include "admin/trigger/delivery_check.h"
#include "common/util/clock.h"

namespace cronwheel::admin {

class FireTakeover {
 public:
  struct Report {
    std::size_t pending = 0;      // pending fires now this node's, cancelled ones included
    std::size_t cancelled = 0;    // of those, cancelled by the misfire rule
    std::size_t delivered = 0;    // sending → triggered
    std::size_t resent = 0;       // sending → pending
    std::size_t unknown = 0;      // sending → failed
    std::vector<PendingFire> to_send;  // this node's pending fires from the takeover, due order
  };

  // `finished_runs`, when not null, counts the fires the misfire rule cancels, by group; it
  // must outlive the object.
  FireTakeover(ScheduleStore& store, ExecutorClient& executors, common::Clock& clock, std::string node_id,
               std::string default_access_token, std::int64_t window_ms, FinishedRuns* finished_runs = nullptr);

  // Takes over the fires of `dead_nodes` (never this node). Sending fires taken over earlier
  // whose resolution could not be written (the database failed) are tried again first: they
  // are this node's now, so no other node would. Throws what the store throws for the takeover
  // transaction.
  Report take_over(const std::vector<std::string>& dead_nodes);

  // Resolves the sending fires this node's id holds from an earlier process of the same node: one
  // that died and was restarted (same --node-id, as a restart keeps hostname:port) before its
  // lease expired, so no other node took its fires over. Each is resolved as a dead node's
  // (delivered, sent again, or unconfirmed); its pending fires need nothing, they are this
  // node's and the feeder sends them. Call it before this process sends anything: every sending
  // fire under its id is then the earlier process's. Throws what the store throws (nothing is
  // resolved then); a resolution that cannot be written is tried again at the next take_over().
  Report recover_earlier_process();

  // Sending fires taken over and not resolved yet (to be tried again at the next call).
  std::size_t unresolved() const noexcept { return unresolved_.size(); }

 private:
  // Applies the misfire rule to the pending fires just taken over: cancels what it cancels,
  // then fills report.to_send (nothing when the cancellation failed).
  void take_pending(const std::vector<PendingFireRow>& pending, const std::vector<std::string>& dead, Report& report);
  // Asks the executors about `sending` (at most kConcurrentChecks at once), then records each
  // answer; what could not be recorded goes to unresolved_.
  void resolve_all(const std::vector<SendingFire>& sending, Report& report);
  // False when the resolution could not be written.
  bool resolve(const SendingFire& fire, const DeliveryCheck& check, Report& report);

  static constexpr std::size_t kConcurrentChecks = 16;

  ScheduleStore& store_;
  ExecutorClient& executors_;
  common::Clock& clock_;
  const std::string node_id_;
  const std::string default_access_token_;
  const std::int64_t window_ms_;
  FinishedRuns* const finished_runs_;
  std::vector<SendingFire> unresolved_;
};

}  // namespace cronwheel::admin
