#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "admin/model/completion_store.h"
#include "admin/model/finished_runs.h"
#include "admin/model/run_end.h"
#include "admin/model/records.h"
#include "common/protocol/messages.h"
#include "common/util/clock.h"

namespace cronwheel::admin {

// The longest handle_msg kept, in bytes (XXL-JOB keeps 15000 characters); longer results are
// cut at a character boundary.
inline constexpr std::size_t kMaxHandleMsgBytes = 15000;

// Records run results and what they lead to (docs/scheduling.md, "Results"):
//  - handleCode 200 is a success; anything else (500 failure, 502 timeout, ...) a failure;
//  - a result for a run that has one already changes nothing (a repeated callback, counted);
//    one for an unknown run is ignored with a warning;
//  - a success fires each of the job's child jobs that exists and is not the job itself once:
//    a PARENT fire, pending, due now, owned by this node;
//  - a failure (or a lost result) of a run with executor_fail_retry_count > 0 fires a RETRY,
//    due after the job's retry interval, with one retry fewer and parent_log_id = the run;
//  - a FIX_DELAY job still awaiting completion gets its next time: now + its delay;
//  - a callback that says its run was not started (HandleCallbackParam::not_started: a fire
//    handed over ahead whose executor restarted or stopped before the instant) is no result: the
//    run goes back to pending, this node's (CompletionStore::return_not_started), and is sent
//    again or follows its misfire strategy; counted in Counters::not_started.
// Each result (or each batch of them) is one transaction of the CompletionStore, so a result and
// its follow-ups are recorded together or not at all, and exactly once whatever the number of
// admin nodes.
//
// Thread-safe (HTTP workers report concurrently); holds no lock across a store call.
class Completion {
 public:
  struct Options {
    // This node's id: the owner of the fires a result leads to (its feeder sends them).
    std::string node_id = {};
    // When set, called after a result gave a FIX_DELAY job its next time, so the schedule
    // thread can scan at once rather than at the end of its idle sleep (up to the 5 s window).
    std::function<void()> next_time_set = {};
    // When set, every run this node's results and verdicts end is counted there (succeeded,
    // failed, lost), by its group. Must outlive the object.
    FinishedRuns* finished_runs = nullptr;
    // When set, called with the fires each result or batch led to, once committed.
    FiresWritten fires_written = {};
  };

  enum class Outcome {
    kRecorded,    // the result was recorded, with its follow-ups
    kDuplicate,   // the run had a result already: ignored
    kNotRunning,  // the run was never sent, or no longer qualifies as lost: ignored
    kUnknownLog,  // no such run: ignored
  };

  // Totals since start, for metrics and tests.
  struct Counters {
    std::int64_t recorded = 0;
    std::int64_t duplicates = 0;
    std::int64_t not_running = 0;
    std::int64_t unknown = 0;
    std::int64_t lost = 0;
    std::int64_t child_fires = 0;
    std::int64_t retry_fires = 0;
    std::int64_t not_started = 0;  // runs back to pending: their executor never started them
  };

  // `clock` stamps the handle time of results (now, on this node); it must outlive the object.
  Completion(CompletionStore& store, common::Clock& clock, Options options);

  Completion(const Completion&) = delete;
  Completion& operator=(const Completion&) = delete;

  // One result from an executor. Throws what the store throws (the database is unavailable):
  // nothing was recorded and the executor should report it again.
  Outcome report(const common::protocol::HandleCallbackParam& callback);
  // Many results from an executor (a callback batch), recorded in one transaction, each as
  // report() would: one Outcome per callback, in order. Throws like report(); then none was
  // recorded (but runs of not_started callbacks, each its own transaction before the batch's, may
  // be pending again: reported again, they change nothing).
  std::vector<Outcome> report_all(const std::vector<common::protocol::HandleCallbackParam>& callbacks);

  // The lost-result verdict on `run` (from CompletionStore::lost_candidates with the same
  // `triggered_before` and `dead_after_ms`): it becomes `lost`, code 500, with a message naming
  // its executor and `lost_after`, and is retried like a failure. Throws like report().
  Outcome mark_lost(const JobLog& run, std::int64_t triggered_before, std::int64_t dead_after_ms,
                    std::chrono::milliseconds lost_after);
  // The verdict on `run` (triggered at or before `triggered_before`) whose executor, asked, has no
  // trace of it (RunResult::lost_forgotten): it becomes `lost`, code 500, with
  // forgotten_message(), and is retried like a failure. Throws like report().
  Outcome mark_forgotten(const JobLog& run, std::int64_t triggered_before, std::int64_t executor_start_time);
  // An operator's kill of `run_id`, recorded at once (POST logs/{id}/kill): it ends failed,
  // code 500, with `message`, and neither retried nor followed by child jobs (RunEnd::kKilled).
  // kRecorded when it was still running. Throws like report().
  Outcome mark_killed(std::int64_t run_id, std::string message);
  // An operator's kill of `run_id` taken back from its executor before its instant (lead
  // dispatch: the executor will not start it): it ends cancelled, code 500, with `message`, decided
  // "no alarm" as an operator's cancel is, and the follow-ups of a cancel (RunEnd::kCancelled: a
  // FIX_DELAY job gets its next time). kRecorded when it was still triggered or sending.
  Outcome mark_cancelled(std::int64_t run_id, std::string message);


  Counters counters() const noexcept;

 private:
  Outcome record(const RunResult& result);
  // mark_killed() (kFailed) and mark_cancelled() (kCancelled): an operator's end of a run, code 500.
  Outcome end_by_operator(std::int64_t run_id, FireState state, std::string message);
  RunResult result_of(const common::protocol::HandleCallbackParam& callback) const;
  // A callback with not_started: its run back to pending (kRecorded), or kNotRunning.
  Outcome return_not_started(const common::protocol::HandleCallbackParam& callback);
  // The verdict `lost` on `run`, at now, with `message` (cut to kMaxHandleMsgBytes).
  RunResult lost_result(const JobLog& run, std::int64_t triggered_before, std::string_view message) const;
  // The follow-ups of a run that has just ended as its state says, at `now`.
  FollowUps plan(const JobLog& run, const Job& job, const std::vector<Job>& children, std::int64_t now,
                 bool killed = false) const;
  // Counts (and logs) how recording `result` came out.
  Outcome count(const RunResult& result, const CompletionStore::Recorded& recorded);

  CompletionStore& store_;
  common::Clock& clock_;
  const Options options_;
  std::atomic<std::int64_t> recorded_{0}, duplicates_{0}, not_running_{0}, unknown_{0}, lost_{0},
      child_fires_{0}, retry_fires_{0}, not_started_{0};
};

// `text` without NUL bytes (PostgreSQL text cannot hold them), cut to at most `max_bytes`
// without splitting a UTF-8 character.
std::string bounded_message(std::string_view text, std::size_t max_bytes = kMaxHandleMsgBytes);

// The handle message of a lost result: "result lost: executor <addr> has not been registered
// for 10 minutes".
std::string lost_message(std::string_view executor_address, std::chrono::milliseconds lost_after);

// The handle message of a run its executor no longer knows: "result lost: executor <addr>
// (running since 2024-03-09T10:00:00.000Z) no longer knows the run: not queued, not running, no
// result to send; it restarted after the run was triggered". `executor_start_time` 0 leaves the
// parenthesis out. A run whose delivery was never confirmed (trigger code 500, see
// TriggerStore::record_unconfirmed) may never have arrived: its message says so instead.
std::string forgotten_message(std::string_view executor_address, std::int64_t executor_start_time,
                              bool delivery_confirmed);

}  // namespace cronwheel::admin
