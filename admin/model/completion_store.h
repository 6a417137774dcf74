#pragma once

// Where run results are recorded (docs/scheduling.md, "Results"): the guarded transition of a
// run to its final state and, in the same transaction, what it leads to: child jobs' fires, a
// retry, a FIX_DELAY job's next time. The planner (run_end.h) decides the follow-ups; the
// store only writes them.
//
// One real implementation (PgCompletionStore) and one fake (tests/support/fake_completion_store.h).

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "admin/model/records.h"
#include "admin/model/run_end.h"

namespace cronwheel::admin {

// A run's result: an executor's callback, or the lost-result monitor's verdict.
struct RunResult {
  std::int64_t log_id = 0;
  // kSucceeded, kFailed or kLost; kCancelled: an operator killed a run its executor gave back
  // before its instant (it never started): it ends cancelled with alarm_status 1 (no alarm), as an
  // operator's cancel of a pending run does.
  FireState state = FireState::kSucceeded;
  std::int64_t handle_time = 0;  // epoch ms
  int handle_code = 0;
  std::string handle_msg;
  // kSucceeded, kFailed: the structured output a cronwheel executor reported (JSON text, at most
  // kMaxNodeOutputBytes, checked before it gets here); none: it reported none.
  std::optional<std::string> output;

  // kLost only: the verdict holds while the run is still `triggered`, was triggered at or
  // before `lost_triggered_before` (epoch ms), and its executor address has no registration
  // made within the last `lost_dead_after_ms` (database clock). Both are checked again by the
  // transition itself, so an executor that registers again or a result that arrives meanwhile
  // wins over the monitor's earlier look.
  std::int64_t lost_triggered_before = 0;
  std::int64_t lost_dead_after_ms = 0;
  // kLost only: the verdict is that the run's executor, asked, has no trace of it (not queued,
  // not running, no result to send: it restarted since). The transition then checks only that the
  // run is still `triggered` and was triggered at or before `lost_triggered_before`; the
  // executor's registration does not matter (it is alive, and will never send this result).
  bool lost_forgotten = false;
  // An operator ended the run (POST logs/{id}/kill). kFailed: it ends failed with no retry and no
  // child fires (RunEnd::kKilled); kCancelled ends as a cancel (RunEnd::kCancelled) either way.
  bool killed = false;

  friend bool operator==(const RunResult&, const RunResult&) = default;
};

// What becomes of a run handed over ahead (lead dispatch) that its executor gives back when asked
// (HeldFireCanceller::take_back).
enum class GivenBack {
  kSendAgain,  // its job changed: back to pending (return_not_started), sent again as the job is now
  kCancel,     // its job was stopped: cancelled (cancel_not_started)
  kForget,     // its job was deleted: the run went with it
};

class CompletionStore {
 public:
  enum class Status {
    kRecorded,      // the run moved to its final state; follow-ups written
    kAlreadyFinal,  // the run has a result already (a repeated callback): nothing changed
    kNotRunning,    // the run was never sent (pending, cancelled) or, for "lost", no longer
                    // qualifies (its executor registered again, it is not triggered): unchanged
    kUnknownLog,    // no such run (never existed, or deleted with its job)
  };
  struct Recorded {
    Status status = Status::kUnknownLog;
    // kRecorded: the run as it is now. kAlreadyFinal, kNotRunning: the run as it is (unchanged).
    std::optional<JobLog> run;
    std::vector<JobLog> fires;   // kRecorded: the follow-up fires as inserted, ids assigned
    bool next_time_set = false;  // kRecorded: the FIX_DELAY next time was written
  };

  // The follow-up planner (run_end.h), called at most once per record() call.
  using Decide = FollowUpPlanner;

  virtual ~CompletionStore() = default;

  // One transaction:
  //  1. moves the run `triggered` or `sending` → result.state (`lost`: only from `triggered`,
  //     under the conditions of RunResult), setting handle_time, handle_code and handle_msg,
  //     guarded by the state so that of two concurrent results exactly one moves it;
  //  2. only if it moved: calls `decide` and writes its fires and the FIX_DELAY next time.
  // Throws what the database throws (StoreUnavailable when unreachable); then nothing was
  // written and the result may be reported again.
  virtual Recorded record(const RunResult& result, const Decide& decide) = 0;

  // Many executor results (kSucceeded or kFailed; a kLost verdict goes through record()) in one
  // transaction, each exactly as record() would take it, in order: one Recorded per result.
  // `decide` is called once per run that moved, with the run as it is now (its state says how
  // it ended). A second result for the same run finds it final (kAlreadyFinal). Throws like
  // record(); then none of them was written and all may be reported again.
  virtual std::vector<Recorded> record_all(const std::vector<RunResult>& results, const Decide& decide) = 0;

  // A run handed over ahead of its instant (lead dispatch) that its executor says it never started
  // and never will (HandleCallbackParam::not_started: it restarted or stopped first): `sending` or
  // `triggered` → `pending` again, owned by `node_id`, its trigger time and code cleared and `note`
  // appended to its trigger message; its executor and shard stay, as a released claim's do. The
  // node's feeder reads it within a second and sends it again, or applies its job's misfire
  // strategy when it is late. False when the run is in any other state (it has a result already,
  // or was never sent): nothing written.
  virtual bool return_not_started(std::int64_t log_id, const std::string& node_id, const std::string& note) = 0;

  // A held run its executor gave back (it will never start it) whose job was stopped before its
  // instant: `triggered` or `sending` → `cancelled`, alarming nobody (alarm_status 1), `note`
  // appended to its trigger message. False when the run is in any other state: nothing written.
  virtual bool cancel_not_started(std::int64_t log_id, const std::string& note) = 0;

  // The runs of `job_id` an executor holds for their instant (lead dispatch): `triggered`, their
  // trigger time after `now` (epoch ms), scheduled less than a second before `now` or later (a
  // held run's trigger time is the second boundary at or after its scheduled time; this bound
  // keeps the read to the job's recent runs); by id, at most `limit`. Runs `sending` with their instant
  // ahead are among them: claimed ahead, they may be handed over at this moment, or held by an
  // executor whose acceptance is not recorded yet.
  virtual std::vector<JobLog> held_runs(std::int64_t job_id, std::int64_t now, int limit) = 0;
  // Whether `run` is one held_runs() answers at `now` (its job aside).
  static bool held_at(const JobLog& run, std::int64_t now) {
    const bool sent = run.state == FireState::kTriggered || run.state == FireState::kSending;
    return sent && run.trigger_time && *run.trigger_time > now && run.scheduled_time > now - 1'000;
  }

  // Runs still `triggered` that were triggered at or before `triggered_before` and whose
  // executor address has no registration made within the last `dead_after_ms` (database
  // clock), oldest first, at most `limit`.
  virtual std::vector<JobLog> lost_candidates(std::int64_t triggered_before, std::int64_t dead_after_ms,
                                              int limit) = 0;

  // A position in triggered_runs()'s order.
  struct RunCursor {
    std::string executor_address;
    std::int64_t trigger_time = 0;
    std::int64_t id = 0;
  };
  // Runs still `triggered` that were triggered at or before `triggered_before`, whatever their
  // executor's registration, ordered by executor address, trigger time and id (so one executor's
  // runs come together), after `after` (from the first when nullopt), at most `limit`.
  virtual std::vector<JobLog> triggered_runs(std::int64_t triggered_before, const std::optional<RunCursor>& after,
                                             int limit) = 0;
};

}  // namespace cronwheel::admin
