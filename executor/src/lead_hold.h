#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/protocol/messages.h"
#include "common/protocol/return_t.h"
#include "common/timer/timer.h"
#include "common/util/clock.h"
#include "executor/src/clock_offset.h"
#include "executor/src/lead_journal.h"

namespace cronwheel::executor {

struct LeadHoldOptions {
  std::filesystem::path journal_dir;  // the lead journal's directory (the result journal's)
  // Beyond this estimated offset of the admin's clock from this executor's, /lead is refused.
  std::chrono::milliseconds max_clock_offset{1000};
  std::size_t max_held_fires = 100'000;  // at least 1
  std::size_t journal_compact_bytes = std::size_t{4} << 20;
};

// How the hold reaches the rest of the executor; injected so that it is tested without an admin,
// HTTP or job threads.
struct LeadHoldHooks {
  // The estimate of the admin's clock minus this executor's (RegistryClient::clock_estimate);
  // nullopt while unknown. Required.
  std::function<std::optional<ClockSample>()> clock_estimate;
  // What /run would refuse of a trigger before queueing it (JobDispatcher::check); may be empty.
  std::function<std::optional<std::string>(const common::protocol::TriggerParam&)> check;
  // Whether this process received the run already (queued or running, its result held for an
  // admin, its log written): /run's "received already" rule. May be empty.
  std::function<bool(const common::protocol::TriggerParam&)> received;
  // Starts the fires of one instant as /run would start each (JobDispatcher::run_all): one answer
  // per trigger, in order. Required.
  std::function<std::vector<common::protocol::ReturnT<std::string>>(
      const std::vector<common::protocol::TriggerParam>&)>
      run;
  // Receives the results the hold makes: a fire refused at its instant, a fire not started
  // (CallbackSender::push, which keeps them durably). Required; must return quickly.
  std::function<void(common::protocol::HandleCallbackParam)> report;
};

// The executor's side of lead dispatch (docs/scheduling.md "Lead dispatch"): fires handed over by
// POST /lead ahead of their instant, held on a timer and started at their instant by hooks.run,
// exactly as /run would have started them then.
//
// hold() accepts a request as a whole, or refuses it as a whole (nothing is held) when: the hold
// is stopping; it has more than kMaxLeadFires fires or an adminTime that is not a positive epoch
// ms; the admin's clock is not estimated yet; the estimated offset is beyond
// max_clock_offset; or the request's adminTime is more than max_clock_offset from this
// executor's estimate of the admin's clock (a clock step, or a request delayed that long); or the
// journal cannot be written. Otherwise every fire is in exactly one of accepted and refused:
//  - refused, with /run's message: a logDateTime /run refuses, what hooks.check refuses;
//  - accepted and not held again: a log id held already, started by this hold, or received by
//    this process otherwise (hooks.received): a resend is idempotent;
//  - refused: a fireAt that is not a positive epoch ms or is more than kMaxLeadAheadMs ahead of
//    the admin's clock as estimated, or max_held_fires held already (the message names the
//    limit and the option);
//  - else accepted and held, recorded in the lead journal before hold() returns.
//
// The instant. A fire due at fireAt on the admin's clock starts at
//     fireAt - offset + ceil(delay / 2)
// on this executor's clock (epoch ms): the offset is known only to ±delay/2, and a fire may start
// late but never before its instant. A fire due already starts at once. Fires of one instant
// share one timeout; the timer's tick adds its own lateness (never earliness). The instant is
// fixed when the fire is held: a later change of the estimate does not move it, and a step of
// this executor's wall clock does not either (the timer counts steady time).
//
// At the instant, the fires of that instant are recorded "started" in the journal, then given to
// hooks.run together (one call, so that all are queued before the first competes for the CPU
// with the hand-over of the rest); a refusal then (DISCARD_LATER on a busy job, a queue bound, stopping) is
// reported through hooks.report as a failed result with the refusal as its message, since the
// admin counts the fire as delivered. When the journal cannot record the start, the fires are
// not started and are reported not started.
//
// cancel(): each id is cancelled (held, and now never started: nothing is ever reported for it),
// started (given to hooks.run already; its run is like any other) or unknown. A fire is either
// cancelled or started, never both and never neither: both happen under the hold's mutex.
//
// Not started: stop() takes back every held fire and reports each through hooks.report with
// notStarted = "executor stopping before the fire's instant" (handleCode 500, handleMsg "not
// started: ..."). recover() reports the unstarted fires of journals left by dead processes the
// same way ("executor restarted before the fire's instant") and then removes those journals. A
// fire recorded as started is never reported not started (it may have run).
//
// Bounds: max_held_fires fires held; the ids of the last max_held_fires fires started are kept
// for cancel() and resends; each request at most kMaxLeadFires fires (the parser's bound too).
//
// Threading: hold(), cancel(), holds() and stop() from any thread; fires are started on the
// timer's thread (its tasks must be inline or on a pool: hooks.run may take a while on a busy
// job). stop() waits for fires being started to have been handed to hooks.run, so after it
// returns hooks.run and hooks.report are no longer called. `timer` and `clock` must outlive the
// hold, and the timer must not be stopped before the hold. A timeout the timer had already handed
// over when stop() cancelled it may still enter the hold (and find nothing to do): stop the timer
// (which waits for its task) after stop() and before destroying the hold, as the executor does.
class LeadHold {
 public:
  static constexpr std::string_view kStoppingReason = "executor stopping before the fire's instant";
  static constexpr std::string_view kRestartedReason = "executor restarted before the fire's instant";

  LeadHold(LeadHoldOptions options, LeadHoldHooks hooks, common::Timer& timer, common::Clock& clock);
  ~LeadHold();  // stop()

  LeadHold(const LeadHold&) = delete;
  LeadHold& operator=(const LeadHold&) = delete;

  common::protocol::ReturnT<common::protocol::LeadAnswer> hold(const common::protocol::LeadRequest& request);
  common::protocol::LeadCancelAnswer cancel(const common::protocol::LeadCancelParam& param);
  // `log_id` is held: not yet started, or being handed to hooks.run (so a fire is at every moment
  // either held here or known to the dispatcher, for /log and /run's "received already").
  bool holds(std::int64_t log_id) const;
  std::size_t held_count() const;

  // Reports the unstarted fires of dead processes' lead journals as not started and removes the
  // journals. Returns how many were reported. Call once, at start.
  std::size_t recover();

  // Refuses further requests, reports every held fire not started and closes the journal.
  // Idempotent.
  void stop();

 private:
  struct Held {
    common::protocol::TriggerParam trigger;
    std::int64_t start_ms = 0;  // this executor's clock
  };
  struct Slot {
    std::vector<std::int64_t> log_ids;  // may name fires cancelled since
    common::TimerHandle timeout;
  };

  // The timer's task for the fires due at `start_ms`.
  void start_due(std::int64_t start_ms) noexcept;
  void remember_started_locked(std::int64_t log_id);
  void report_not_started(const common::protocol::TriggerParam& trigger, std::string_view reason) const;

  const LeadHoldOptions options_;
  const LeadHoldHooks hooks_;
  common::Timer& timer_;
  common::Clock& clock_;
  LeadJournal journal_;

  mutable std::mutex mutex_;  // guards what follows; never held while calling hooks.run/report
  std::condition_variable idle_;  // starting_ fell to 0
  std::unordered_map<std::int64_t, Held> held_;  // by log id
  std::map<std::int64_t, Slot> slots_;           // by start_ms
  std::unordered_set<std::int64_t> started_;     // the last max_held_fires started
  std::deque<std::int64_t> started_order_;
  std::size_t starting_ = 0;  // start_due() calls handing fires to hooks.run
  std::unordered_set<std::int64_t> starting_ids_;  // their fires not yet handed over
  bool stopping_ = false;
};

// The callback reporting a fire not started for `reason`.
common::protocol::HandleCallbackParam not_started_result(std::int64_t log_id, std::int64_t log_date_time,
                                                         std::string_view reason);

}  // namespace cronwheel::executor
