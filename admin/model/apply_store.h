#pragma once

// Port: applying a jobs file (docs/jobs-as-code.md) — groups, their jobs and workflows, and the
// business calendars they name — in one transaction, and reading what an export writes. The plan is decided by a pure planner (admin/api/apply_planner.h) over the
// snapshot the store reads; the store only reads and writes. Implemented by PgApplyStore
// (admin/pg/pg_apply_store.h).

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "admin/model/alarm_channel_store.h"
#include "admin/model/calendar.h"
#include "admin/model/records.h"
#include "admin/model/workflow.h"

namespace cronwheel::admin {

// A job as files name it: its group's app name and its own name. A workflow is named the same
// way (its group's app name and its name) where the plan's outcome lists them.
struct JobRef {
  std::string app_name;
  std::string name;

  friend auto operator<=>(const JobRef&, const JobRef&) = default;
};

// Every job's identity and child jobs: enough to name any job and to follow the child graph.
struct JobIdentity {
  std::int64_t id = 0;
  std::int64_t job_group = 0;
  std::string name;
  std::vector<std::int64_t> children;
  bool broadcast = false;  // SHARDING_BROADCAST: a workflow node cannot run it
  std::int64_t calendar_id = 0;  // the calendar it names; 0: none
};

// Every workflow's identity and the jobs its graph names (its workflow_job rows): enough to
// know which jobs a workflow the file does not describe holds on to.
struct WorkflowIdentity {
  std::int64_t id = 0;
  std::int64_t job_group = 0;
  std::string name;
  std::vector<std::int64_t> job_ids;
  std::int64_t calendar_id = 0;  // the calendar it names; 0: none
};

// The server's side of an apply or an export, read in one transaction.
struct JobsSnapshot {
  std::vector<Group> groups;              // every group
  std::vector<Job> jobs;                  // every job of the groups asked for, whole
  std::vector<JobIdentity> identities;    // every job
  std::vector<AlarmChannel> channels;     // every alarm channel
  std::vector<User> users;                // every user (password hashes included: never answered)
  std::vector<Workflow> workflows;        // every workflow of the groups asked for, whole
  std::vector<WorkflowIdentity> workflow_identities;  // every workflow
  // Every calendar, whole (dates with their sources), by name. In an apply their rows are locked
  // against other changes until the end (after the jobs: the order a job's write and its
  // calendar's foreign key take them in), so the versions read are the ones the plan writes over.
  std::vector<Calendar> calendars;
  // A workflow of `workflows` → one of its runs that is waiting or running (none: no entry).
  std::map<std::int64_t, std::int64_t> active_runs;
};

// A job the plan creates or changes. Children and alarm channels are by name, resolved by the
// store once every job of the plan has its id.
struct PlannedJob {
  // id 0 for a new job; job_group 0 when the plan creates its group. job.calendar.mode is the
  // file's; job.calendar.calendar_id is set by the store from `calendar`.
  Job job;
  std::string app_name;  // its group's
  // The calendar it names (empty: none), by name: the plan may create it. The store resolves it
  // once the plan's calendars are written.
  std::string calendar;
  std::vector<JobRef> children;
  // New jobs: the script's earlier versions, oldest first (ScriptVersion::created_at kept).
  std::vector<ScriptVersion> history;
  // Changed jobs: the script changed, so the new source is saved as a version of its history
  // (with glue_remark), as POST jobs/{id}/script does.
  bool script_changed = false;
};

// A channel's new list of jobs: those it keeps (ids outside the file's groups) and the file's.
struct PlannedChannelJobs {
  std::int64_t channel_id = 0;
  std::vector<std::int64_t> kept;
  std::vector<JobRef> named;
};

// A user the plan creates (id 0: without a password, so it cannot log in until an admin sets
// one) or whose role and groups it sets. Groups by app name: the plan may create them.
struct PlannedUser {
  User user;
  std::vector<std::string> group_names;
};

// A workflow the plan creates or changes. Its nodes' jobs are by name (node_jobs[i] is the job
// of workflow.graph.nodes[i]): the store resolves them once every job of the plan has its id,
// and records them as the workflow's jobs (workflow_job), as WorkflowStore::create/update do.
struct PlannedWorkflow {
  // id 0 for a new workflow; job_group 0 when the plan creates its group. An update carries the
  // version it read: the store writes it only while the row still has it.
  // Its calendar_id is set by the store from `calendar`, as a job's.
  Workflow workflow;
  std::string app_name;  // its group's
  std::string calendar;  // the calendar it names, by name (empty: none)
  std::vector<JobRef> node_jobs;
  // Updates: whether anything but `running` changes. The store bumps the version then, and only
  // then (starting or stopping keeps it, as POST workflows/{id}/start and /stop do).
  bool fields_changed = true;
};

// Why a plan that can be shown cannot be applied: a dry run answers the plan (which says why),
// an apply is refused with Conflict(message, field) and writes nothing.
struct PlanRefusal {
  std::string message;
  std::string field;
};

struct ApplyPlan {
  // Calendars, written before anything names them: created (id 0), updated (whole, with the
  // version read: the store writes one only while it still has it; its dates carry the sources
  // of the stored dates they repeat), deleted (by id, after the jobs and workflows that named
  // them stopped naming them).
  std::vector<Calendar> create_calendars;
  std::vector<Calendar> update_calendars;
  std::vector<std::int64_t> delete_calendars;
  std::vector<Group> create_groups;
  std::vector<Group> update_groups;
  std::vector<PlannedJob> create_jobs;
  std::vector<PlannedJob> update_jobs;
  std::vector<std::int64_t> delete_jobs;
  std::vector<PlannedChannelJobs> channel_jobs;
  std::vector<PlannedUser> users;
  std::vector<PlannedWorkflow> create_workflows;
  std::vector<PlannedWorkflow> update_workflows;
  std::vector<std::int64_t> delete_workflows;
  std::optional<PlanRefusal> refusal;
  // The answer: what changes, field by field (openapi.yaml ApplyPlan), kept as the audit entry.
  nlohmann::json report;

  bool empty() const {
    return create_calendars.empty() && update_calendars.empty() && delete_calendars.empty() &&
           create_groups.empty() && update_groups.empty() && create_jobs.empty() && update_jobs.empty() &&
           delete_jobs.empty() && channel_jobs.empty() && users.empty() && create_workflows.empty() &&
           update_workflows.empty() && delete_workflows.empty();
  }
};

struct ApplyOutcome {
  ApplyPlan plan;
  std::map<std::string, std::int64_t> created_groups;  // app name → id
  std::map<JobRef, std::int64_t> created_jobs;
  std::map<JobRef, std::int64_t> created_workflows;  // (app name, workflow name) → id
  std::map<std::string, std::int64_t> created_calendars;  // name → id
  std::optional<std::int64_t> audit_id;  // the "apply" entry, when something changed
  // Of the jobs the plan updated, once written: those it stopped (running before, stopped now;
  // their decided fires were cancelled as a stop cancels them), and the others.
  std::vector<std::int64_t> stopped_jobs;
  std::vector<std::int64_t> changed_jobs;
  // Of the jobs the plan deleted (prune), the runs their executors held for their instant, read
  // just before the deletion as JobStore::remove reads them: gone with their jobs, to be dropped
  // by those executors.
  std::vector<JobLog> deleted_held_runs;
};

class ApplyStore {
 public:
  virtual ~ApplyStore() = default;

  // In one transaction: takes the apply lock (applies run one at a time, on every node), reads
  // the snapshot (whole workflows and jobs of the groups named by `app_names`, locked against
  // other writers until the end, workflows first; every calendar, locked after them), calls
  // `plan` on it, and, unless `dry_run` or the plan is empty, writes the plan: a plan with a
  // refusal is refused with it (Conflict); else calendars first (created, then updated, each
  // with its dates and times; an update refused with Conflict naming "version" when the
  // calendar no longer has the version the plan read), groups, then jobs (children and
  // calendars resolved by name, new ones included), workflows
  // (deleted, updated, created; nodes' jobs resolved by name, new jobs included; a deletion
  // refused, with Conflict, when a run of the workflow waits or runs), deletions of jobs, then of
  // calendars, channels' job lists, users (refusing, with Conflict naming "role", a plan that would leave no
  // admin), and one audit entry (action "apply", entity "apply", after = the report). Whatever
  // `plan` or a write throws leaves everything as it was. Throws Conflict when the database
  // refuses a write (a name taken meanwhile, a job deleted that a workflow names).
  virtual ApplyOutcome apply(const std::vector<std::string>& app_names,
                             const std::function<ApplyPlan(const JobsSnapshot&)>& plan, bool dry_run,
                             const Actor& actor) = 0;

  // The snapshot of the groups named (all of them when empty), for an export; one read.
  virtual JobsSnapshot snapshot(const std::vector<std::string>& app_names) = 0;
};

}  // namespace cronwheel::admin
