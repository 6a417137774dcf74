#pragma once

// WorkflowStore (admin/model/workflow_store.h) over PostgreSQL, and the step every store that
// ends a node's run takes in its own transaction (record_workflow_node_end, called by
// write_follow_ups). Lock order, everywhere: the workflow's row, then its runs' rows by id — or
// a run's row alone — so changes of one workflow never wait on each other in a circle.
// Statements are prepared on each new connection: call PgWorkflowStore::prepare from the
// Database's Preparer, after PgStores::prepare (it uses the audit's). Thread-safe.

#include <cstdint>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "admin/model/run_end.h"
#include "admin/model/workflow_store.h"
#include "admin/pg/database.h"
#include "common/util/clock.h"

namespace cronwheel::admin {

class PgWorkflowStore final : public WorkflowStore {
 public:
  // `clock` stamps changes made for an actor and the audit entries.
  PgWorkflowStore(Database& db, common::Clock& clock) : db_(db), clock_(clock) {}

  static void prepare(pqxx::connection& connection);

  Page<Workflow> list(const Filter& filter) override;
  std::optional<Workflow> get(std::int64_t id) override;
  Workflow create(const Workflow& workflow, const Actor& actor) override;
  Workflow update(const Workflow& workflow, int trigger_status, std::int64_t next_time, const Actor& actor) override;
  void remove(std::int64_t id, const Actor& actor) override;
  Workflow set_status(std::int64_t id, int status, std::int64_t next_time, const Actor& actor) override;
  Changed trigger(const TriggerRequest& request) override;
  Changed scan(std::string_view node, std::int64_t now, std::int64_t due_before, int limit, const Decide& decide) override;
  Page<WorkflowRun> list_runs(const RunFilter& filter) override;
  std::optional<RunDetail> get_run(std::int64_t id) override;
  RunChange cancel(std::int64_t run_id, std::int64_t now, std::string_view node, const Actor& actor) override;
  RunChange rerun(std::int64_t run_id, std::string_view from, std::int64_t now, std::string_view node,
                  const Actor& actor) override;
  Changed time_out(std::int64_t now, std::string_view node, int limit) override;
  std::vector<JobLog> kill_candidates(int limit) override;
  Changed start_waiting(std::int64_t now, std::string_view node, int limit) override;
  std::vector<std::pair<WorkflowRunState, std::int64_t>> count_runs() override;
  std::vector<Alarm> claim_alarms(std::int64_t now, std::int64_t stale_ms, int limit) override;
  void finish_alarm(std::int64_t run_id, std::int64_t claimed_at, AlarmOutcome outcome) override;

 private:
  Database& db_;
  common::Clock& clock_;
};

namespace pg {

// Locks the workflow runs of `runs` (those that are a workflow node's) in id order, before a
// batch takes its steps one run after the other: two batches ending nodes of the same runs then
// wait for each other instead of deadlocking.
void lock_workflow_runs(pqxx::work& tx, const std::vector<JobLog>& runs);

// Inside the transaction that has just ended `run`, a workflow node's run with no retry to follow
// (FollowUps::workflow_node_end): records the node's end (guarded: the node is still started
// with this run as its current one) with its output, and, while its workflow run is running,
// takes the planner's next step. Answers the fires of the nodes it started.
std::vector<JobLog> record_workflow_node_end(pqxx::work& tx, const WorkflowNodeEnd& end, const JobLog& run);

// The same for the node ends of a whole batch of results, set-wise: the runs locked and read in
// one statement (id order), the nodes ended in one, the runs' nodes read in one, each run
// planned in memory, and the finishes, starts (with their run rows) and ends written in one
// statement each, whatever the number of runs. `index` says which result an end came with;
// every fire answered carries the index of the last end of its run in the batch.
struct EndedNode {
  std::size_t index = 0;
  WorkflowNodeEnd end;
  const JobLog* run = nullptr;  // the node's run, as it ended
};
std::vector<std::pair<std::size_t, JobLog>> record_workflow_node_ends(pqxx::work& tx, const std::vector<EndedNode>& ends);

// Inside a step of workflow `workflow`'s backfill `backfill_id` (PgBackfillStore::step, which
// holds the workflow's row FOR KEY SHARE and the backfill's row): a running BACKFILL run at each
// of `instants` the backfill has none at yet, oldest first, started at `now` outside the overlap
// policy with `params_json` as its inputs and its first nodes' runs owned by `node_id`, each with
// the instant as its logical time. Answers the runs written (oldest first) and their nodes'
// fires.
WorkflowStore::Changed write_backfill_runs(pqxx::work& tx, const Workflow& workflow, std::int64_t backfill_id,
                                           const std::vector<std::int64_t>& instants, const std::string& params_json,
                                           std::int64_t now, const std::string& node_id, const std::string& created_by);

// Inside the transaction that inserted `retry`, the retry of a workflow node's run `failed`: the
// node's current run becomes the retry — unless the node is no longer to run (its workflow run
// ended, or it is to be killed): then the retry is cancelled at once and the node ends failed.
// Answers the retry as it now is.
JobLog record_workflow_retry(pqxx::work& tx, const JobLog& failed, JobLog retry);

}  // namespace pg
}  // namespace cronwheel::admin
