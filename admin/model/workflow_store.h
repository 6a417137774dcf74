#pragma once

// Port: workflows and their runs (docs/workflows.md). Implemented by PgWorkflowStore
// (admin/pg/pg_workflow_store.h); the ends of nodes' runs reach it through the stores that end
// runs (run_end.h, FollowUps::workflow_node_end), in their transactions.
//
// Every change of a run is one transaction that holds the run's row (FOR UPDATE) and asks the
// planner (workflow_plan.h), so of two changes of one run (two nodes ending on two admin nodes,
// a cancel and a node's end) the second sees what the first wrote, and a node starts at most
// once: its start is the guarded transition waiting → started, in the transaction that inserts
// its run row (pending, owned by the deciding node). From there the run row is a fire like any
// other: sent exactly once, taken over with its node if that node dies.
//
// A backfill's runs (BackfillStore, backfill_store.h, writes them) are workflow runs like the
// others here — listed, cancelled, re-run, timed out and alarmed alike — but outside the overlap
// policy: they are never counted when a run of the schedule, a trigger or a re-run asks for room,
// and a re-run of one does not ask (its backfill's max_concurrent bounds them instead).
//
// Thread-safe; StoreUnavailable when the database cannot be reached (then nothing was written).

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "admin/model/alarm_channel_store.h"
#include "admin/model/alarm_store.h"
#include "admin/model/records.h"
#include "admin/model/scan.h"
#include "admin/model/store_errors.h"
#include "admin/model/stores.h"
#include "admin/model/workflow.h"

namespace cronwheel::admin {

class WorkflowStore {
 public:
  virtual ~WorkflowStore() = default;

  struct Filter {
    GroupScope scope;
    std::optional<std::int64_t> job_group;
    std::string name;  // exactly this name, when not empty
    std::string text;  // substring of name or description, case-insensitive
    PageRequest page;
  };
  virtual Page<Workflow> list(const Filter& filter) = 0;
  virtual std::optional<Workflow> get(std::int64_t id) = 0;
  // Stopped, version 1. Conflict("...", "name") for a name its group has; NotFound for a node's
  // job that does not exist.
  virtual Workflow create(const Workflow& workflow, const Actor& actor) = 0;
  // Replaces what the API may change (everything but id, trigger times, created_at), guarded by
  // `workflow.version` being the stored one (Conflict("...", "version") otherwise); version + 1.
  // A running workflow keeps running with `next_time` as its next time (the caller computes it
  // from the new schedule; 0 with trigger_status 0 stops it).
  virtual Workflow update(const Workflow& workflow, int trigger_status, std::int64_t next_time, const Actor& actor) = 0;
  // Conflict while a run of it is waiting or running.
  virtual void remove(std::int64_t id, const Actor& actor) = 0;
  // Starts (status 1, next time `next_time`) or stops (0) its schedule.
  virtual Workflow set_status(std::int64_t id, int status, std::int64_t next_time, const Actor& actor) = 0;

  // What a change of runs wrote: the fires of nodes started (pending, owned by the node that
  // decided; send them soon), and the runs it changed.
  struct Changed {
    std::vector<JobLog> fires;
    std::vector<WorkflowRun> runs;
  };

  // A run asked for now (MANUAL: an operator; API: a token): created under the workflow's row
  // lock and its overlap policy — running (its first nodes started), waiting, or skipped.
  // `params_json` holds every declared parameter with its value (the caller filled in defaults).
  struct TriggerRequest {
    std::int64_t workflow_id = 0;
    std::string params_json = "{}";
    TriggerType trigger_type = TriggerType::kManual;
    std::int64_t now = 0;
    std::string node_id;
    Actor actor;
  };
  // NotFound when the workflow does not exist. runs[0] is the run created.
  virtual Changed trigger(const TriggerRequest& request) = 0;

  // One scan of scheduled workflows, in one transaction holding the workflow scan lock: reads
  // those due at or before `due_before` (at most `limit`, oldest first, FOR UPDATE), asks
  // `decide` (fire_decision's rules: a DueJob per workflow, its id the workflow's), writes the
  // advances (guarded by status 1 and the next time read) and, for each fire decided of a
  // workflow it advanced, creates a run scheduled at the fire's time (unique per workflow and
  // scheduled time) under the overlap policy, its first nodes' fires due at that time, owned
  // by `node`, with every parameter at its default. Misfire skips are not recorded as runs.
  using Decide = std::function<ScanDecision(const std::vector<DueJob>& due)>;
  virtual Changed scan(std::string_view node, std::int64_t now, std::int64_t due_before, int limit,
                       const Decide& decide) = 0;

  struct RunFilter {
    GroupScope scope;
    std::optional<std::int64_t> workflow_id;
    std::optional<std::int64_t> job_group;
    std::optional<WorkflowRunState> state;
    std::optional<std::int64_t> backfill_id;  // a backfill's runs (WorkflowRun::backfill_id)
    PageRequest page;  // keyset on (0, id), newest first
  };
  virtual Page<WorkflowRun> list_runs(const RunFilter& filter) = 0;
  struct RunDetail {
    WorkflowRun run;
    std::vector<WorkflowRunNode> nodes;  // in the order of the run's graph
  };
  virtual std::optional<RunDetail> get_run(std::int64_t id) = 0;

  // How an operator's change of a run came out.
  struct RunChange {
    enum class Status { kChanged, kNotFound, kRefused };
    Status status = Status::kNotFound;
    std::string reason;  // kRefused: why (for a 409)
    Changed changed;
  };
  // A waiting or running run → cancelled: nodes not started cancelled, started ones marked to
  // be killed (kill_candidates()). Refused when the run has ended.
  virtual RunChange cancel(std::int64_t run_id, std::int64_t now, std::string_view node, const Actor& actor) = 0;
  // A failed, timed-out or cancelled run runs again from node `from` (plan_rerun): its nodes to
  // run again go back to waiting, the run to running (a new deadline), and the planner starts
  // what can start. Refused as plan_rerun says, or when the run has not ended, or when its
  // workflow's overlap policy has no room for it now.
  virtual RunChange rerun(std::int64_t run_id, std::string_view from, std::int64_t now, std::string_view node,
                          const Actor& actor) = 0;
  // Runs waiting for room (overlap WAIT or PARALLEL) start once their workflow has it: in one
  // transaction per workflow holding its row (as creating a run does), the oldest first, their
  // first nodes started. At most `limit` workflows a call. A run's end does not start the next
  // itself (the workflow runner calls this every second).
  virtual Changed start_waiting(std::int64_t now, std::string_view node, int limit) = 0;

  // Running runs whose deadline passed at `now` → timed_out (plan_workflow_stop), at most
  // `limit`, each in its own transaction.
  virtual Changed time_out(std::int64_t now, std::string_view node, int limit) = 0;

  // Node runs still going on although their node is to be killed (the run was cancelled, timed
  // out, or failed with KILL), at most `limit`, oldest first: triggered ones, for the caller to
  // kill at their executors (Completion::mark_killed records it; the node then ends failed).
  // Pending ones never get here: the change that marked them cancelled their fires at once.
  virtual std::vector<JobLog> kill_candidates(int limit) = 0;

  // How many workflow runs the database holds in each state (the states with none left out).
  virtual std::vector<std::pair<WorkflowRunState, std::int64_t>> count_runs() = 0;

  // A workflow run that ended badly (failed, timed out) and was claimed for its alarm
  // (docs/alarms.md, "Workflows").
  struct Alarm {
    RunDetail run;
    Workflow workflow;                   // as it is now: its alarm addresses
    std::vector<AlarmChannel> channels;  // the channels taking its group's alarms
    std::int64_t claimed_at = 0;
  };
  // In one transaction, at most `limit` runs, oldest first: runs that ended failed or timed out
  // with their alarm undecided (or claimed more than `stale_ms` ago by a node that never
  // finished it) are claimed (alarm_status -1, claimed at `now`) when their workflow has alarm
  // addresses or a channel takes its group's alarms, and decided "no alarm" (1) otherwise.
  // Runs another node is claiming at the same moment are skipped, not waited for.
  virtual std::vector<Alarm> claim_alarms(std::int64_t now, std::int64_t stale_ms, int limit) = 0;
  // Records the outcome of the alarm claimed at `claimed_at`: 2 sent, 3 failed. A claim taken
  // over since is left to its new owner.
  virtual void finish_alarm(std::int64_t run_id, std::int64_t claimed_at, AlarmOutcome outcome) = 0;
};

}  // namespace cronwheel::admin
