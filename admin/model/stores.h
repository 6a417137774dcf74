#pragma once

// The admin's stores: one interface per kind of data, so admin logic (the REST API, the
// scheduler) is unit-tested against fakes (tests/support/fake_stores.h) and runs against
// PostgreSQL (admin/pg/pg_stores.h).
//
// Contract shared by every store:
//  - Each method is one short transaction; none is held across a call out of the store.
//  - A method that changes data and takes an Actor writes the audit entry for the change
//    (action, entity, the object before and after as JSON) in the same transaction, so a
//    change is never without its audit entry nor the reverse.
//  - Missing objects: get/find return std::nullopt; changes throw NotFound. Uniqueness and
//    reference problems throw Conflict naming the field. Anything else from the database
//    propagates (StoreUnavailable when it cannot be reached).
//  - Implementations are thread-safe.

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "admin/model/records.h"
#include "admin/model/store_errors.h"
#include "common/protocol/job_enums.h"

namespace cronwheel::admin {

// Paging shared by list calls; limit is clamped to [1, 1000] by the API before it gets here.
// The job and run lists also page by key (keyset): `after` asks for the items that follow a
// key in list order, `before` for the page just before it; both are set only with offset 0.
struct PageRequest {
  PageRequest() = default;
  PageRequest(std::int64_t offset_, std::int64_t limit_) : offset(offset_), limit(limit_) {}

  std::int64_t offset = 0;
  std::int64_t limit = 20;
  std::optional<PageKey> after;
  std::optional<PageKey> before;
};

// Restricts a list to the groups a normal user may see; empty optional: no restriction.
using GroupScope = std::optional<std::vector<std::int64_t>>;

class GroupStore {
 public:
  virtual ~GroupStore() = default;
  struct Filter {
    GroupScope scope;
    std::string text;  // matches app name or title, case-insensitive substring
    PageRequest page;
  };
  virtual Page<Group> list(const Filter& filter) = 0;
  virtual std::optional<Group> get(std::int64_t id) = 0;
  virtual std::optional<Group> find_by_app_name(std::string_view app_name) = 0;
  // Throws Conflict("...", "appName") for a taken app name.
  virtual Group create(const Group& group, const Actor& actor) = 0;
  // Updates title, address type, address list, access token; the app name never changes.
  virtual Group update(const Group& group, const Actor& actor) = 0;
  // Throws Conflict when jobs still belong to the group.
  virtual void remove(std::int64_t id, const Actor& actor) = 0;
};

class JobStore {
 public:
  virtual ~JobStore() = default;
  struct Filter {
    GroupScope scope;
    std::optional<std::int64_t> job_group;
    std::optional<int> trigger_status;
    std::string text;  // matches name, description, handler or author, case-insensitive substring
    std::optional<std::string> name;  // exactly this name
    PageRequest page;
  };
  virtual Page<Job> list(const Filter& filter) = 0;
  virtual std::optional<Job> get(std::int64_t id) = 0;
  // The subset of `ids` that exist.
  virtual std::vector<std::int64_t> existing(const std::vector<std::int64_t>& ids) = 0;
  // The child job ids (childJobId, as stored) of each of `ids` that exists.
  virtual std::map<std::int64_t, std::vector<std::int64_t>> children_of(const std::vector<std::int64_t>& ids) = 0;
  // Creates the job (id, times assigned by the store). Throws Conflict("...", "jobGroup") when
  // the group does not exist, Conflict("...", "name") when another job of the group has the
  // name; a job given no name (empty) is named "job-<id>". A script job created with a source gets that source as the first
  // version of its history too (first_script_version_remark), in the same transaction, so it
  // can be compared and restored after later edits.
  virtual Job create(const Job& job, const Actor& actor) = 0;
  // Replaces every field the API may change (an empty name keeps the job's name; a name another
  // job of the group has throws Conflict("...", "name")). trigger_status, trigger_next_time and
  // trigger_last_time are written as given: the caller computes them (a changed schedule of a
  // running job gets a new next time). An update that stops a running job cancels its decided
  // fires as a stop does (set_trigger_status).
  virtual Job update(const Job& job, const Actor& actor) = 0;
  // Deletes the job, its logs and its script history. Answers the runs its executors held for
  // their instant then (lead dispatch: CompletionStore::held_runs, now by the store's clock), read
  // in the same transaction just before the deletion, for them to be dropped; at most
  // kMaxHeldRunsOfADeletedJob.
  virtual std::vector<JobLog> remove(std::int64_t id, const Actor& actor) = 0;
  static constexpr int kMaxHeldRunsOfADeletedJob = 10'000;
  // Start (status 1, next time given) or stop (status 0, next time 0), clearing the job's
  // paused_with_group. `action` names the audit action ("job.start", "job.stop").
  //
  // A stop also cancels, in the same transaction, the job's fires the scheduler decided and no
  // node has sent yet: its `pending` SCHEDULE and MISFIRE rows (waiting for a slot or not) end
  // `cancelled`, alarming nobody, with stopped_fire_note(actor, "job stopped") appended to their
  // trigger message. A node that holds one in its ring finds it no longer pending and drops it.
  // Fires being sent or handed over ahead are not the store's to stop (the API takes held ones
  // back); manual, retry, child, backfill and workflow runs of the job are left as they are.
  virtual Job set_trigger_status(std::int64_t id, int status, std::int64_t next_time,
                                 std::string_view action, const Actor& actor) = 0;
  // Stops every running job of `group` at once and marks it paused_with_group, cancelling their
  // decided fires as a stop does (with "group paused"); answers their ids, ascending. One audit
  // entry, "group.pause" on the group, lists them.
  virtual std::vector<std::int64_t> pause_group(std::int64_t group, const Actor& actor) = 0;
  // Starts each job of `next_times` (id → its next fire time) that is still stopped and
  // paused_with_group in `group`, and clears the mark of every job of the group (those without
  // a next time stay stopped); answers the started ids, ascending. One audit entry,
  // "group.resume" on the group, lists them.
  virtual std::vector<std::int64_t> resume_group(std::int64_t group, const std::map<std::int64_t, std::int64_t>& next_times,
                                                 const Actor& actor) = 0;
};

// What a decided fire cancelled by an operator's stop says: "Cancelled: job stopped by alice
// before its instant".
inline std::string stopped_fire_note(const Actor& actor, std::string_view what) {
  return "Cancelled: " + std::string(what) + " by " + actor.username + " before its instant";
}

class LogStore {
 public:
  virtual ~LogStore() = default;
  struct Filter {
    GroupScope scope;
    std::optional<std::int64_t> job_group;
    std::optional<std::int64_t> job_id;
    // The API's status filter, as XXL-JOB's run list offers it.
    enum class Status {
      kAll,
      kSuccess,  // succeeded
      kFailure,  // failed or lost
      kRunning,  // triggered, no result yet
      kPending,    // not sent yet
      kCancelled,  // never sent on purpose: skipped by a misfire strategy, or by an operator
    };
    Status status = Status::kAll;
    std::optional<std::int64_t> from;  // scheduled_time >= from (epoch ms)
    std::optional<std::int64_t> to;    // scheduled_time < to
    std::optional<std::int64_t> backfill_id;  // a backfill's runs and their retries (JobLog::backfill_id)
    PageRequest page;
  };
  virtual Page<JobLog> list(const Filter& filter) = 0;  // newest first
  virtual std::optional<JobLog> get(std::int64_t id) = 0;
  // The RETRY run a failed run led to (parent_log_id = run_id), if any: when it is due, and how
  // it went.
  virtual std::optional<JobLog> retry_of(std::int64_t run_id) = 0;
  // The executor group of each of `ids` that exists, by run id (a callback batch's token check).
  // One read for the lot; the default reads them one by one.
  virtual std::map<std::int64_t, std::int64_t> groups_of(const std::vector<std::int64_t>& ids) {
    std::map<std::int64_t, std::int64_t> out;
    for (auto id : ids) {
      if (auto run = get(id)) out.emplace(id, run->job_group);
    }
    return out;
  }
  // A fire asked for through the API (trigger once): a pending row owned by `admin_node`, which
  // the scheduling core delivers. `trigger_type` is MANUAL or API; `scheduled_time` is when it
  // is due. Audited as "job.trigger".
  virtual JobLog create_fire(const JobLog& fire, const Actor& actor) = 0;
  // Cancels a pending one-shot fire (state pending → cancelled); false when it is no longer
  // pending. An end like any other: in the same transaction it writes the follow-ups the
  // planner gives for RunEnd::kCancelled (admin/model/run_end.h: no retry, no child fire; a
  // FIX_DELAY job waiting for this fire gets its next time). Audited as "log.cancel".
  virtual bool cancel_pending(std::int64_t log_id, const Actor& actor) = 0;
  // Deletes finished logs (not pending, not triggered) of a job or group: those scheduled
  // before `before`, or all but the newest `keep`. Returns how many were deleted. Audited as
  // "log.clear".
  struct ClearRequest {
    std::optional<std::int64_t> job_group;
    std::optional<std::int64_t> job_id;
    std::optional<std::int64_t> before;
    std::optional<std::int64_t> keep;
  };
  virtual std::int64_t clear(const ClearRequest& request, const Actor& actor) = 0;
};

// The remark of the version JobStore::create writes for a new job's script; nullopt when the
// job has none to keep (a BEAN job, or an empty source).
inline std::optional<std::string> first_script_version_remark(const Job& job) {
  if (!common::protocol::is_script(job.glue_type) || job.glue_source.empty()) return std::nullopt;
  const bool blank = job.glue_remark.find_first_not_of(" \t\r\n") == std::string::npos;
  return blank ? std::string("the script the job was created with") : job.glue_remark;
}

class ScriptStore {
 public:
  virtual ~ScriptStore() = default;
  // Saves a new version of a script job's source: the job gets the source, its glue_remark and
  // a new glue_updated_at; the version joins the history, of which the newest 30 are kept.
  // Audited as "script.save".
  virtual Job save_version(std::int64_t job_id, const std::string& glue_source,
                           const std::string& glue_remark, const Actor& actor) = 0;
  virtual std::vector<ScriptVersion> versions(std::int64_t job_id) = 0;  // newest first
  virtual std::optional<ScriptVersion> get_version(std::int64_t version_id) = 0;
  static constexpr int kVersionsKept = 30;
};

// Users. The store keeps one rule of its own beyond the schema's: there is always an admin.
// A change that would leave no user with the admin role (demoting or deleting the last admin)
// throws Conflict naming "role" and changes nothing. The check and the change are one step, so
// two admins demoting or deleting each other at the same moment cannot both succeed: one of
// them is refused. (The REST API adds its own rule that an admin neither demotes nor deletes
// themselves; that one is about who acts, so it lives there.)
class UserStore {
 public:
  virtual ~UserStore() = default;
  virtual Page<User> list(const PageRequest& page) = 0;
  virtual std::optional<User> get(std::int64_t id) = 0;
  virtual std::optional<User> find_by_username(std::string_view username) = 0;
  virtual std::int64_t count() = 0;
  // Throws Conflict("...", "username") for a taken name, Conflict("...", "groups") for a group
  // that does not exist.
  virtual User create(const User& user, const Actor& actor) = 0;
  // Updates role, groups and (when not empty) password_hash; the username never changes. A
  // new password_hash ends every session of the user and revokes all their API tokens, as
  // set_password does. Throws Conflict("...", "role") when it would demote the last admin.
  virtual User update(const User& user, const Actor& actor) = 0;
  // Throws Conflict("...", "role") for the last admin.
  virtual void remove(std::int64_t id, const Actor& actor) = 0;
  // Sets the password, ends every session of the user but the current one
  // (`keep_session_hash`, may be empty) and revokes every API token of the user that is not
  // revoked yet: a password change shuts out whoever held the old one, and anything they made
  // with it. Each revoked token is audited as "token.revoke", the change as "user.password"
  // (last).
  virtual void set_password(std::int64_t id, const std::string& password_hash,
                            const std::string& keep_session_hash, const Actor& actor) = 0;
};

class TokenStore {
 public:
  virtual ~TokenStore() = default;
  // `token_hash` is the SHA-256 of the secret (32 bytes); the secret itself is never stored.
  // `expires_at` (epoch ms; none: never) must be later than now, or Conflict("...",
  // "expiresAt"). Throws Conflict("...", "name") when the user has a live (not revoked) token
  // of that name; an expired token keeps its name until it is revoked.
  virtual ApiToken create(std::int64_t user_id, const std::string& name, const std::string& token_hash,
                          std::optional<std::int64_t> expires_at, const Actor& actor) = 0;
  virtual std::vector<ApiToken> list(std::int64_t user_id) = 0;  // revoked and expired ones included
  // Revokes the user's token; false when it does not exist or is not the user's.
  virtual bool revoke(std::int64_t user_id, std::int64_t token_id, const Actor& actor) = 0;
  // The live token with this hash (not revoked, and not expired: expires_at > now) and its
  // user, marking it used now.
  virtual std::optional<std::pair<ApiToken, User>> authenticate(const std::string& token_hash) = 0;
};

class SessionStore {
 public:
  virtual ~SessionStore() = default;
  struct Session {
    std::string token_hash;
    std::int64_t user_id = 0;
    std::string csrf_token;
    std::int64_t expires_at = 0;
  };
  virtual void create(const Session& session) = 0;
  // The unexpired session with this hash and its user.
  virtual std::optional<std::pair<Session, User>> find(const std::string& token_hash) = 0;
  virtual void remove(const std::string& token_hash) = 0;
  virtual std::int64_t remove_expired() = 0;
};

class AuditStore {
 public:
  virtual ~AuditStore() = default;
  struct Filter {
    std::optional<std::int64_t> user_id;
    std::string entity_type;
    std::optional<std::int64_t> entity_id;
    std::optional<std::int64_t> from;
    std::optional<std::int64_t> to;
    PageRequest page;
  };
  virtual Page<AuditEntry> list(const Filter& filter) = 0;  // newest first
  // An entry for something that changed no row of another store (a login, a failed login).
  virtual void record(const AuditEntry& entry) = 0;
};

// What the console shows about the cluster and its runs, read-only: the admin nodes and the
// last scan, an app's live executor registrations, and the dashboard's figures. Liveness is
// judged with the database's clock, like RegistryStore's and NodeStore's.
//
// The dashboard never counts job_log's finished runs: they come from a report kept as runs
// finish (docs/run-report.md) —
//  - a run counts once, when it reaches succeeded (succeeded) or failed or lost (failed),
//    under its group and the quarter hour its scheduled_time falls in;
//  - deleting runs (LogStore::clear, JobStore::remove) leaves the counts as they are;
//  - a day [day_starts[i], day_starts[i+1]) counts the quarter hours that start in it.
class OverviewStore {
 public:
  virtual ~OverviewStore() = default;

  virtual NodesOverview nodes() = 0;

  // The registrations of `app_name` made within the last `dead_after_ms`, by address (byte
  // order), a page of them.
  virtual Page<RegistryEntry> registrations(std::string_view app_name, std::int64_t dead_after_ms,
                                            const PageRequest& page) = 0;

  // The handler names (RegistryEntry::handlers) of those registrations, each once, in byte order.
  virtual std::vector<std::string> handlers(std::string_view app_name, std::int64_t dead_after_ms) = 0;

  struct DashboardQuery {
    GroupScope scope;  // jobs, runs and executors of these groups only; nodes are not scoped
    // n + 1 ascending instants (epoch ms) bounding n days; at most 367.
    std::vector<std::int64_t> day_starts;
    std::int64_t today_start = 0;  // [today_start, today_end): "today" in the caller's zone
    std::int64_t today_end = 0;
    std::int64_t executor_dead_after_ms = 90'000;
    int failures = 10;  // how many latest failures
  };
  virtual Dashboard dashboard(const DashboardQuery& query) = 0;
};

// Everything the REST API needs, so a handler is constructed with one object.
struct Stores {
  GroupStore& groups;
  JobStore& jobs;
  LogStore& logs;
  ScriptStore& scripts;
  UserStore& users;
  TokenStore& tokens;
  SessionStore& sessions;
  AuditStore& audit;
  OverviewStore& overview;
};

}  // namespace cronwheel::admin
