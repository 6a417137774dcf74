#pragma once

// Port: backfills (backfill.h) and the runs they write. Implemented by PgBackfillStore
// (admin/pg/pg_backfill_store.h) and by the fake in tests/support, both held to
// tests/support/backfill_contract_tests.h.
//
// The guarantees:
//  - A backfill writes at most one BACKFILL run per (backfill, instant, shard), whatever the
//    number of admin nodes stepping it: a step holds the backfill's row lock for its whole
//    transaction and skips a backfill another node holds (SKIP LOCKED); the run tables' unique
//    indexes back that up.
//  - Steps of the backfills of one job (or of one workflow) never interleave (a lock per job or
//    workflow inside the step's transaction), so a step sees every run another backfill of it
//    committed before it: two backfills with SKIP over one range run each instant once between
//    them.
//  - A job's backfill: the runs a step writes are pending rows owned by the node that stepped,
//    with the job's handler, parameter and retry count and its group, scheduled at their instant
//    and with it as their logical time; they are sent like any other pending fire
//    (docs/scheduling.md). A retry of one belongs to the same backfill and keeps its logical
//    time (run_end.h), so it counts as unfinished until it ends too.
//  - A workflow's backfill: a step writes a workflow run (trigger type BACKFILL, tied to the
//    backfill) scheduled at each instant, running at once with the workflow's graph as it is
//    then and the backfill's inputs, and starts its first nodes as any run's: their runs are
//    pending rows owned by the node that stepped, due now, with the instant as their logical
//    time, and so are every later node run of it and every retry. Its runs are outside the
//    workflow's overlap policy: they never wait for the schedule's runs, and are not counted
//    when the schedule's (or an operator's) runs ask for room; max_concurrent bounds them. A
//    workflow run waiting or running is unfinished.
//  - Cancelling ends the backfill, and cancels a job's backfill's pending runs in the same
//    transaction, each with its follow-ups from the planner (run_end.h, RunEnd::kCancelled);
//    runs already sent go on. A workflow's backfill's runs go on to their end.
//  - Creating and cancelling are audited ("backfill.create", "backfill.cancel", entity
//    "backfill", before and after as backfill.h's to_json); steps are the system's and are not.
//
// Thread-safe; every method is one short transaction and throws what the database throws
// (StoreUnavailable when it cannot be reached), in which case nothing was written.

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

#include "admin/model/backfill.h"
#include "admin/model/records.h"
#include "admin/model/run_end.h"
#include "admin/model/stores.h"

namespace cronwheel::admin {

class BackfillStore {
 public:
  virtual ~BackfillStore() = default;

  struct Filter {
    GroupScope scope;  // the groups of the backfills' jobs and workflows (as they are now)
    std::optional<std::int64_t> job_id;
    std::optional<std::int64_t> workflow_id;
    std::optional<BackfillState> state;
    PageRequest page;  // by offset and limit; `after`/`before` are not read
  };
  // Newest first (by id); the total exact. Each with its job's or workflow's group (and a
  // workflow's name) as it is now.
  virtual Page<Backfill> list(const Filter& filter) = 0;
  virtual std::optional<Backfill> get(std::int64_t id) = 0;
  // Its runs counted by state (BackfillRuns): a job's BACKFILL runs and their retries, a
  // workflow's workflow runs.
  virtual BackfillRuns runs(std::int64_t id) = 0;

  // Of `instants`, those at which job `job_id` has a run of trigger type SCHEDULE, MISFIRE or
  // BACKFILL in any state but cancelled (backfill.h, OnExisting), once each, ascending.
  // `instants` holds at most kMaxBackfillInstants (std::invalid_argument beyond).
  virtual std::vector<std::int64_t> existing(std::int64_t job_id, const std::vector<std::int64_t>& instants) = 0;
  // The same for workflow `workflow_id`: the instants at which it has a workflow run of trigger
  // type SCHEDULE, MISFIRE or BACKFILL that started or waits to (neither skipped nor cancelled
  // while it waited).
  virtual std::vector<std::int64_t> existing_workflow_runs(std::int64_t workflow_id,
                                                           const std::vector<std::int64_t>& instants) = 0;

  // The running backfills, oldest first, at most `limit`.
  virtual std::vector<Backfill> running(int limit) = 0;

  // Makes `backfill` (job_id or workflow_id with params, from, to, on_existing,
  // max_concurrent, total, created_by as given) running, with no cursor and nothing written;
  // answers it with its id, group, workflow name and times. NotFound when the job or workflow
  // does not exist. Audited "backfill.create".
  virtual Backfill create(const Backfill& backfill, const Actor& actor) = 0;

  // Which of `instants` ran already for the backfill's job or workflow (as existing() or
  // existing_workflow_runs()), read in the step's transaction after its locks.
  using ExistingLookup = ExistingRuns;
  // What a step does, given the backfill as read under its lock and how many of its runs are
  // unfinished (pending, sending, triggered). Called once per attempt of the step's transaction
  // (a retried transaction calls it again); must not block or call out, except through
  // `existing`.
  using Decide =
      std::function<BackfillStep(const Backfill& backfill, std::int64_t unfinished, const ExistingLookup& existing)>;

  struct StepResult {
    bool stepped = false;        // false: the backfill is gone, not running, or another node holds it
    Backfill backfill;           // as the step left it (when stepped)
    // The job runs written, pending, owned by `node`: a job's backfill's runs, oldest first; a
    // workflow's backfill's first node runs of the workflow runs it wrote (send them soon).
    std::vector<JobLog> fires;
    std::vector<WorkflowRun> runs;  // a workflow's backfill: the workflow runs written, oldest first
  };
  // One step of running backfill `id`, in one transaction:
  //  1. lock its row, skipping it when another transaction holds it; nothing more unless it
  //     is running;
  //  2. take the lock of its job's (or workflow's) backfills, count its unfinished runs, and
  //     call decide;
  //  3. write a run at each instant of BackfillStep::write (a run the backfill has at that
  //     instant already is not written again): a job's BACKFILL run owned by `node`, or a
  //     workflow's BACKFILL workflow run, started at `now` with its first nodes' runs owned by
  //     `node`;
  //  4. move its cursor, add what was written and skipped to its counts, and end it as the step
  //     says (done or cancelled, with the reason, at `now`).
  virtual StepResult step(std::int64_t id, std::string_view node, std::int64_t now, const Decide& decide) = 0;

  struct Cancelled {
    Backfill backfill;          // as it is now
    bool changed = false;       // false: it had ended already, and nothing changed
    std::vector<JobLog> runs;   // a job's backfill's pending runs, now cancelled
  };
  // running → cancelled at `now` ("cancelled by <username>"); a job's backfill's pending runs →
  // cancelled (trigger_msg saying by whom; no alarm), each with the follow-ups `plan` gives; a
  // workflow's backfill's runs are left to go on. Waits for a step in progress. nullopt when it
  // does not exist. Audited "backfill.cancel" when it changed.
  virtual std::optional<Cancelled> cancel(std::int64_t id, std::int64_t now, const Actor& actor,
                                          const FollowUpPlanner& plan) = 0;
};

}  // namespace cronwheel::admin
