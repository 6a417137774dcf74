#pragma once

// What follows a run's end: the one planner for every way a run reaches a final state
// (docs/scheduling.md, "Results"). Every store that moves a run to a final state calls it, in
// the same transaction, with the run as it is now, and writes what it returns; no store and no
// caller decides follow-ups of its own.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "admin/model/records.h"
#include "admin/model/workflow.h"

namespace cronwheel::admin {

// How a run ended.
enum class RunEnd {
  kSucceeded,        // the executor reported success
  kFailed,           // the executor reported failure
  kLost,             // its executor vanished while it ran (the lost-result monitor's verdict)
  kTriggerFailed,    // no executor took it: refused, not reached, no address, routing failed
  kMisfireSkipped,   // never sent: cancelled as a misfire (too late for its job's misfire
                     // strategy, or coalesced into a newer fire by FIRE_ONCE_NOW)
  kCancelled,        // never sent: an operator cancelled it while it was pending
  kKilled,           // an operator killed it while it ran (it ends failed)
};
std::string_view to_string(RunEnd end);

// A workflow node whose run (with its retries) is over: the store records the node's end and
// asks the workflow's planner (workflow_plan.h) what follows, in the same transaction.
struct WorkflowNodeEnd {
  std::int64_t workflow_run_id = 0;
  std::string node;
  std::int64_t log_id = 0;                 // the run that ended it
  NodeState state = NodeState::kFailed;    // kSucceeded or kFailed
  std::string message;                     // why it failed; empty on success
  std::int64_t now = 0;                    // epoch ms
  std::string node_id;                     // the admin node: owner of the fires it starts

  friend bool operator==(const WorkflowNodeEnd&, const WorkflowNodeEnd&) = default;
};

// What a finished run leads to.
struct FollowUps {
  // New fires (PARENT, RETRY), inserted as given: state (pending; cancelled for a child-job
  // chain cut), owner, due time, trigger_msg and all.
  std::vector<JobLog> fires;
  // The job's new trigger_next_time (FIX_DELAY). Written only while the job still runs
  // (trigger_status = 1) and still awaits this run (trigger_next_time = kAwaitingCompletion):
  // a job stopped or rescheduled meanwhile keeps what it has.
  std::optional<std::int64_t> fix_delay_next_time;
  // A workflow node's run with no retry to follow: its node ended.
  std::optional<WorkflowNodeEnd> workflow_node_end;
};

// The follow-ups of `run`, which has just ended (`end`) at `now` (epoch ms), of job `job`;
// `children` are the job's existing child jobs (the job itself left out). New fires are owned
// by `node_id`. The rules:
//  - kSucceeded: one PARENT fire per child job, due now, with the child's handler, parameter
//    and retry count; parent_log_id = the run, one chain step deeper than the run. A fire
//    deeper than kMaxChildChainDepth (child_jobs.h) is written cancelled instead, its
//    trigger_msg saying why: the chain ends there.
//  - kFailed, kLost, kTriggerFailed, with retries left (run.executor_fail_retry_count > 0):
//    one RETRY fire due now + the wait the job's retry policy gives this attempt (retry_delay_ms:
//    the retry interval, or exponential back-off; the attempt counted from the retries the run
//    had left, its jitter drawn from the run's id), with the job's current handler and the run's
//    parameter, shard and chain depth, one retry fewer, routed again (as XXL-JOB).
//    A backfill's run's retry belongs to the same backfill (backfill_id), and every retry keeps
//    the run's logical time (JobLog::logical_time): a backfill's historical instant stays the
//    logDateTime its handler sees, however late the retry goes out; a run without one (every
//    other run) leaves its retry without one, sent with its own scheduled time as before.
//  - kMisfireSkipped: none (the job's misfire strategy chose not to run it; its next fires come
//    anyway); kCancelled, kKilled: none: no retry and no child fires (someone chose to stop it).
// (A fire whose delivery is unknown has not ended: it stays `triggered`, see
// TriggerStore::record_unconfirmed.)
//  - Every end of a FIX_DELAY job's run: its next time is now + its delay (a configuration that
//    is not a positive number of seconds leaves it as it is, and is logged).
//  - A workflow node's run (run.workflow_run_id) is the workflow's, not its job's schedule's: it
//    fires no child jobs and leaves a FIX_DELAY job's next time alone; a retry stays the same
//    node's (same workflow run and node). Without a retry to follow, its node ended:
//    workflow_node_end, succeeded for kSucceeded, failed for every other end, with why.
// Pure apart from that log line.
FollowUps plan_follow_ups(RunEnd end, const JobLog& run, const Job& job, const std::vector<Job>& children,
                          std::int64_t now, const std::string& node_id);

// A store's call into the planner, made once per run it moved to a final state, inside its
// transaction, with the run as it is now, its job and the job's existing children (by id, the
// job itself left out). Must not block or call out.
using FollowUpPlanner = std::function<FollowUps(const JobLog& run, const Job& job, const std::vector<Job>& children)>;

// Called after a transaction committed fires this node owns that no scan decided: an operator's
// trigger, retries, child jobs. Those already due are sent at once (Scheduler::send_soon)
// rather than when the feeder next reads them. Rows that are not pending (a chain cut) are
// ignored. Must not block or throw.
using FiresWritten = std::function<void(const std::vector<JobLog>& fires)>;

// The planner for runs that all ended the same way at the same time on one node.
FollowUpPlanner follow_ups_of(RunEnd end, std::int64_t now, std::string node_id);

}  // namespace cronwheel::admin
