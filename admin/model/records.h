#pragma once

// The admin's data, as the stores read and write it. Plain values: no behaviour, no database
// types. Field names follow the columns of sql/0001_initial_schema.sql; times people read are
// epoch milliseconds here (the stores convert timestamptz), scheduling times are epoch
// milliseconds in the database too.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "admin/model/calendar.h"
#include "admin/model/fire_state.h"
#include "admin/model/retry_backoff.h"
#include "common/cron/cron_expression.h"
#include "common/protocol/job_enums.h"

namespace cronwheel::admin {

// The protocol's enumerations, as the records hold them (the stores and the JSON writers
// convert at their edges).
using common::protocol::BlockStrategy;
using common::protocol::GlueType;
using common::protocol::MisfireStrategy;
using common::protocol::RouteStrategy;
using common::protocol::ScheduleType;

// Who is acting, for permission checks and the audit log.
struct Actor {
  std::optional<std::int64_t> user_id;  // empty for the system itself (scheduler, start-up)
  std::string username;                 // "system" for the system
  std::string remote_addr;              // client address, empty for the system
};

struct Group {
  std::int64_t id = 0;
  std::string app_name;
  std::string title;
  int address_type = 0;  // 0: from executor registrations; 1: entered by hand
  std::vector<std::string> address_list;
  std::optional<std::string> access_token;
  // At most this many of the group's runs at once across its executors (admin/model/slots.h);
  // 0: no limit.
  int max_running = 0;
  std::int64_t created_at = 0;
  std::int64_t updated_at = 0;

  friend bool operator==(const Group&, const Group&) = default;
};

// The XXL-JOB-ACCESS-TOKEN a group's executors accept, and the admin sends them: the group's own
// access token, else the admin's (--access-token); empty: none (admin/auth/executor_tokens.h).
inline std::string executor_token(const std::optional<std::string>& group_token, const std::string& admin_token) {
  return group_token && !group_token->empty() ? *group_token : admin_token;
}

struct Job {
  std::int64_t id = 0;
  std::int64_t job_group = 0;
  // Unique within the group: lower-case letters, digits, '.', '_', '-', starting with a letter
  // or digit, at most kMaxJobNameChars. Empty when creating: the store names the job "job-<id>".
  std::string name;
  std::string job_desc;
  std::string author;
  std::string alarm_email;
  ScheduleType schedule_type = ScheduleType::kNone;
  std::string schedule_conf;
  std::string timezone = "UTC";
  MisfireStrategy misfire_strategy = MisfireStrategy::kDoNothing;
  RouteStrategy executor_route_strategy = RouteStrategy::kFirst;
  std::string executor_handler;
  std::string executor_param;
  BlockStrategy executor_block_strategy = BlockStrategy::kSerialExecution;
  int executor_timeout = 0;
  int executor_fail_retry_count = 0;
  int retry_interval = 0;  // seconds: the wait before a retry, or before the first (retry_backoff.h)
  RetryPolicy retry;        // FIXED by default: every retry waits retry_interval
  // At most this many of the job's runs at once (0: no limit), and its rank when fires wait for
  // a slot: higher first (admin/model/slots.h).
  int max_concurrent = 0;
  int priority = 0;
  GlueType glue_type = GlueType::kBean;
  std::string glue_source;
  std::string glue_remark;
  std::int64_t glue_updated_at = 0;
  std::vector<std::int64_t> child_job_ids;
  int trigger_status = 0;
  std::int64_t trigger_last_time = 0;
  std::int64_t trigger_next_time = 0;
  // Stopped by its group's pause: the group's resume starts it again. Starting or stopping the
  // job by itself clears it.
  bool paused_with_group = false;
  // The business calendar its fires follow, and how (calendar.h); none by default.
  CalendarUse calendar;
  // What a CRON schedule does on the days the clocks change (common::DstPolicy); Quartz's rules
  // by default. Only CRON jobs may have another.
  common::DstPolicy dst;
  std::int64_t created_at = 0;
  std::int64_t updated_at = 0;

  friend bool operator==(const Job&, const Job&) = default;
};

struct JobLog {
  std::int64_t id = 0;
  std::int64_t job_group = 0;
  std::int64_t job_id = 0;
  FireState state = FireState::kPending;
  TriggerType trigger_type = TriggerType::kSchedule;
  std::int64_t scheduled_time = 0;
  std::optional<std::string> admin_node;
  // The executor that ran it. On a pending MANUAL or API fire: the operator's override, a
  // comma-separated list of addresses to route among instead of the group's; empty routes
  // among the group's addresses by the job's strategy.
  std::string executor_address;
  std::string executor_handler;
  std::string executor_param;
  int shard_index = 0;
  int shard_total = 1;
  int executor_fail_retry_count = 0;
  std::optional<std::int64_t> parent_log_id;
  // Child-job steps that led to this run: 0 for its job's own fires, the parent run's + 1 for a
  // child job's fire, the run's own for a retry (admin/model/child_jobs.h).
  int chain_depth = 0;
  std::optional<std::int64_t> trigger_time;
  int trigger_code = 0;
  std::string trigger_msg;
  std::optional<std::int64_t> handle_time;
  int handle_code = 0;
  std::string handle_msg;
  int alarm_status = 0;
  // A node's run (and the retries of it): the workflow run and the node it belongs to.
  std::optional<std::int64_t> workflow_run_id;
  std::string workflow_node;
  // The structured output a cronwheel executor reported with the result (JSON text, at most
  // kMaxNodeOutputBytes); what the nodes after it read (workflow_template.h).
  std::optional<std::string> output;
  // A backfill's run (trigger type BACKFILL) and the retries of it: the backfill it belongs to
  // (admin/model/backfill.h).
  std::optional<std::int64_t> backfill_id;
  // The instant the run stands for when that is not its scheduled time (log_date_time): a
  // backfill's historical instant, on its runs, their retries and, for a backfill of a workflow,
  // on every node run and their retries. Set when the row is written and never changed; none
  // for every other run.
  std::optional<std::int64_t> logical_time;
  // A fire of a limited group or job (admin/model/slots.h): waiting for a slot (still pending,
  // passed over by the feeder), or holding one since a node admitted it.
  bool waiting_slot = false;
  bool slot_admitted = false;

  friend bool operator==(const JobLog&, const JobLog&) = default;
};

// The time a run is filed under at its executor: the `logDateTime` of /run, and of every /log
// that reads it back (an XXL-JOB executor keeps the run's log in a directory named after that
// time's day, so every call must carry the same time, even for a run triggered after the
// midnight following its scheduled time). Its logical time when it has one (a backfill's
// instant, which its handler reads as the date it runs for), its scheduled time otherwise.
inline std::int64_t log_date_time(const JobLog& run) { return run.logical_time.value_or(run.scheduled_time); }

// One saved version of a script job's source.
struct ScriptVersion {
  std::int64_t id = 0;
  std::int64_t job_id = 0;
  GlueType glue_type = GlueType::kBean;
  std::string glue_source;
  std::string glue_remark;
  std::int64_t created_at = 0;

  friend bool operator==(const ScriptVersion&, const ScriptVersion&) = default;
};

// What a cronwheel executor estimated of the admin's clock at its last registration (its
// clockOffsetMs, clockDelayMs: executor/src/clock_offset.h): the admin's clock minus its own, and
// the round trip of the exchange that says so (the offset's uncertainty is half of it).
struct ClockEstimate {
  std::int64_t offset_ms = 0;
  std::int64_t delay_ms = 0;
  // It also said it takes lead dispatch (leadDispatch): a cronwheel executor says so only with an
  // estimate within its bound, so an entry without an estimate never takes it.
  bool lead_dispatch = false;

  friend bool operator==(const ClockEstimate&, const ClockEstimate&) = default;
};

struct RegistryEntry {
  std::int64_t id = 0;
  std::string registry_group;  // EXECUTOR
  std::string registry_key;    // app name
  std::string registry_value;  // executor URL
  std::int64_t updated_at = 0;
  // The BEAN handlers a cronwheel executor said it runs at its last registration; empty for
  // XXL-JOB's executors, which do not say.
  std::vector<std::string> handlers = {};
  // Its clock estimate at its last registration; none for XXL-JOB's executors and for a cronwheel
  // executor's first registration (it has measured nothing yet).
  std::optional<ClockEstimate> clock = std::nullopt;

  friend bool operator==(const RegistryEntry&, const RegistryEntry&) = default;
};

struct User {
  std::int64_t id = 0;
  std::string username;
  std::string password_hash;  // never leaves the admin
  std::string role = "normal";  // admin, normal
  std::vector<std::int64_t> groups;  // groups a normal user may see and act on
  std::int64_t created_at = 0;
  std::int64_t updated_at = 0;

  bool is_admin() const { return role == "admin"; }
  friend bool operator==(const User&, const User&) = default;
};

struct ApiToken {
  std::int64_t id = 0;
  std::int64_t user_id = 0;
  std::string name;
  std::int64_t created_at = 0;
  std::optional<std::int64_t> last_used_at;
  std::optional<std::int64_t> revoked_at;
  std::optional<std::int64_t> expires_at;  // none: never expires

  friend bool operator==(const ApiToken&, const ApiToken&) = default;
};

struct AuditEntry {
  std::int64_t id = 0;
  std::int64_t at = 0;
  std::optional<std::int64_t> user_id;
  std::string username;
  std::string action;       // "job.create", "job.start", "group.delete", "user.update", ...
  std::string entity_type;  // "job", "group", "user", "token", "log", "script"
  std::optional<std::int64_t> entity_id;
  std::optional<std::string> before;  // JSON text of the object before the change
  std::optional<std::string> after;   // JSON text after
  std::string remote_addr;

  friend bool operator==(const AuditEntry&, const AuditEntry&) = default;
};

struct AdminNode {
  std::string node_id;
  std::string address;
  std::string version;
  std::int64_t started_at = 0;
  std::int64_t heartbeat_at = 0;
  std::int64_t lease_until = 0;

  friend bool operator==(const AdminNode&, const AdminNode&) = default;
};

// An admin node as the console sees it: alive while its lease has not expired by the
// database's clock.
struct NodeStatus {
  AdminNode node;
  bool alive = false;

  friend bool operator==(const NodeStatus&, const NodeStatus&) = default;
};

// The node that ran the last scheduling scan (it held the scheduling lock) and when.
struct ScanMark {
  std::string node_id;
  std::int64_t at = 0;

  friend bool operator==(const ScanMark&, const ScanMark&) = default;
};

struct NodesOverview {
  std::vector<NodeStatus> nodes;     // by node id
  std::optional<ScanMark> last_scan;  // none before the first scan

  friend bool operator==(const NodesOverview&, const NodesOverview&) = default;
};

// Finished runs: succeeded, and failed or lost.
struct RunCounts {
  std::int64_t succeeded = 0;
  std::int64_t failed = 0;

  friend bool operator==(const RunCounts&, const RunCounts&) = default;
};

// A failed (or lost) run with the description of its job.
struct FailedRun {
  JobLog run;
  std::string job_desc;

  friend bool operator==(const FailedRun&, const FailedRun&) = default;
};

// The console's dashboard figures (OverviewStore::dashboard).
struct Dashboard {
  std::int64_t jobs_enabled = 0;
  std::int64_t jobs_total = 0;
  RunCounts today;                 // runs scheduled today that finished
  std::int64_t running = 0;        // sending or triggered now, whenever scheduled
  std::int64_t pending = 0;        // pending and due before today's end
  std::int64_t executors_online = 0;  // distinct addresses with a live registration
  std::int64_t nodes_alive = 0;
  std::vector<RunCounts> days;     // one per day asked for
  std::vector<FailedRun> latest_failures;  // newest scheduled first

  friend bool operator==(const Dashboard&, const Dashboard&) = default;
};

// Where an item sits in a list ordered newest first, for paging by key: a run's
// (scheduled_time, id), a job's id (time 0).
struct PageKey {
  std::int64_t time = 0;
  std::int64_t id = 0;

  friend bool operator==(const PageKey&, const PageKey&) = default;
};

// Lists that count their matches stop at this many; beyond it the total is a lower bound.
inline constexpr std::int64_t kMaxCountedTotal = 10'000;

// A page of a list: the items of [offset, offset + limit) (or after/before a key) and how many
// there are in all. Lists that page by key cap their count: `total_exact` false makes `total`
// a lower bound (kMaxCountedTotal, or what was seen when counting took too long). `next` is the
// key to page on after this page, absent at the end; `prev` the key to page on before it,
// absent at the start.
template <class T>
struct Page {
  std::vector<T> items;
  std::int64_t total = 0;
  bool total_exact = true;
  std::optional<PageKey> next;
  std::optional<PageKey> prev;
};

}  // namespace cronwheel::admin
