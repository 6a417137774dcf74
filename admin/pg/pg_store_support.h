#pragma once

// What the PostgreSQL stores share (admin/store/pg_*.cpp only): the column lists each record
// is read with, row → record conversion, parameter encodings, database errors → Conflict /
// NotFound, and the audit row every change writes in its own transaction.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "admin/model/alarm_channel_store.h"
#include "admin/model/records.h"
#include "admin/model/scan.h"
#include "admin/model/stores.h"
#include "admin/model/workflow.h"

namespace cronwheel::admin::pg {

// SQL for "epoch milliseconds → timestamptz" of a parameter or expression, exact to the ms.
std::string ts(std::string_view expression);
// SQL for "timestamptz column → epoch milliseconds AS alias" (NULL stays NULL).
std::string ms(std::string_view column, std::string_view alias);

// The condition on job_log rows that a job's executors hold for their instant (lead dispatch,
// CompletionStore::held_runs): `triggered` or `sending`, their trigger time (their instant)
// after `now_ms` (an SQL expression of epoch milliseconds), and so scheduled less than a second
// before it, which keeps a read by job_log_job_time to the job's recent runs.
std::string held_run_condition(std::string_view now_ms);

// SELECT lists, one per record; `*_from` reads a row selected with them. The job list
// refers to the columns of job_info and job_schedule unqualified (read from kJobTables, or from
// CTEs named as job_columns_of_written says); the user list reads app_user as `u`.
extern const std::string kGroupColumns;
extern const std::string kJobColumns;
// What kJobColumns reads from: job_info with its schedule state (job_schedule, one row per job;
// sql/0027_job_schedule.sql). A left join, so that a statement reading none of the schedule's
// columns (a count) does not join at all.
extern const std::string kJobTables;
// The same as an inner join, for statements that lock the rows (FOR UPDATE cannot lock the
// nullable side of an outer join): both rows are locked.
extern const std::string kJobTablesLocked;
// kJobColumns of the job_info rows a data-modifying CTE named `j` returns (RETURNING *), with
// their schedule as it is after the statement's CTE named `s` wrote it, or as stored when
// `schedule_written` is false.
std::string job_columns_of_written(bool schedule_written);
extern const std::string kLogColumns;

// Runs live in two tables (sql/0028_active_runs.sql): job_log_active holds the runs not finished
// (pending, sending, triggered), job_log_finished the finished ones, and the view job_log both.
// Every column of a run row, as both tables have them.
extern const std::vector<std::string> kRunColumnNames;

// A scheduled fire (trigger type SCHEDULE or MISFIRE; BACKFILL) is unique among the runs in
// flight (job_log_active_scheduled_fire, job_log_active_backfill_fire); a statement inserting one
// also asks whether it has run already: "the history holds that fire", for SQL expressions of its
// job (backfill), scheduled time and shard. Read by job_log_job_time (job_log_backfill), once per
// row inserted: OFFSET 0 keeps the planner from turning the probe into a join with the whole
// history or a hash of it, which on a history of millions of runs it might take for cheaper.
std::string scheduled_fire_finished(std::string_view job_id, std::string_view scheduled_time,
                                    std::string_view shard_index);
std::string backfill_fire_finished(std::string_view backfill_id, std::string_view scheduled_time,
                                   std::string_view shard_index);

// The statement that ends runs: it deletes them from job_log_active and inserts them into
// job_log_finished, keeping each column but those `set` gives an SQL expression for (which may
// name the run's columns unqualified, as they were, and whatever `join` adds). It answers the
// finished rows' kLogColumns. `with` is the statement's CTEs before the delete (a guard, the
// batch's values), `where` the delete's "USING ... WHERE ..." on the active row aliased `a`,
// `join` what the insert's SELECT joins to the deleted rows (named `ended`), e.g. a batch's
// values by run id.
//
// One statement: a concurrent reader sees the run in one table or the other, never both, never
// neither. The delete's guard is re-checked on the newest version of the row, as an UPDATE's
// is, so of two statements ending one run only one ends it.
std::string end_runs(std::string_view with, std::string_view where, std::string_view join,
                     const std::map<std::string, std::string>& set);
extern const std::string kVersionColumns;
extern const std::string kUserColumns;
extern const std::string kTokenColumns;
extern const std::string kAuditColumns;
// alarm_channel read as `c`; its groups and jobs only the ones that still exist.
extern const std::string kChannelColumns;
// workflow as PgWorkflowStore and the apply read it (graph and params in workflow_json.h's spelling).
extern const std::string kWorkflowColumns;

// A row's fields by name, each found in one comparison when the fields are asked for in the order
// of the row's select list (the *_from readers below follow kGroupColumns, kJobColumns and
// kLogColumns): a name is compared with the column after the last one read first, and looked
// up among all the row's columns only when it is not that one, from where reading goes on.
// pqxx::row["name"] compares the name with every column's (libpq's PQfnumber); for a fire's
// run, job and group, about 80 columns, that took a sixth of the admin's CPU at 10,000 fires a
// second. Borrows the row, which must outlive it.
class Fields {
 public:
  explicit Fields(const pqxx::row& row) noexcept : row_(row) {}
  // Throws pqxx::argument_error, as pqxx::row does, for a name the row lacks.
  pqxx::field operator[](const char* name);

 private:
  const pqxx::row& row_;
  pqxx::row::size_type next_ = 0;
};

Group group_from(const pqxx::row& row);
Job job_from(const pqxx::row& row);
JobLog log_from(const pqxx::row& row);
ScriptVersion version_from(const pqxx::row& row);
User user_from(const pqxx::row& row);
ApiToken token_from(const pqxx::row& row);
AuditEntry audit_from(const pqxx::row& row);
AlarmChannel channel_from(const pqxx::row& row);
Workflow workflow_from(const pqxx::row& row);

// Enumerations as the columns spell them (their CHECK constraints allow these spellings only).
template <class E>
std::string text(E value) {
  return std::string(to_string(value));
}
// The enumeration a text column holds. A spelling this build does not know (a newer schema's
// value) throws std::runtime_error naming the column and the value. Defined for FireState,
// TriggerType and the protocol's enumerations in records.h.
template <class E>
E enum_of(const pqxx::field& field);

// Array parameters as PostgreSQL array literals (cast with ::bigint[] / ::text[]).
std::string bigint_array(const std::vector<std::int64_t>& values);
std::string text_array(const std::vector<std::string>& values);
// A group scope as a nullable ::bigint[] parameter (NULL: no restriction).
std::optional<std::string> scope_param(const GroupScope& scope);
// The groups a list reads (KeysetList::groups): the scope, narrowed to `group` when one is asked
// for (none of them when the scope does not hold it); none: every group.
std::optional<std::vector<std::int64_t>> groups_to_list(const GroupScope& scope, std::optional<std::int64_t> group);
// SQL for a job_log row's trigger message followed by `message` (an SQL expression) on a line
// of its own: what an earlier attempt or a takeover wrote there is kept.
std::string appended_trigger_msg(std::string_view message);
// '%text%' for ILIKE, with the text's %, _ and \ taken literally.
std::string contains_pattern(std::string_view text);
// The address as inet accepts it, or NULL for what it would refuse.
std::optional<std::string> inet_param(const std::string& address);

// The first row as a record, or nothing; every row as records.
template <class T, class From>
std::optional<T> first_of(const pqxx::result& rows, From from) {
  if (rows.empty()) return std::nullopt;
  return from(rows[0]);
}
template <class T, class From>
std::vector<T> all_of(const pqxx::result& rows, From from) {
  std::vector<T> out;
  out.reserve(rows.size());
  for (const auto& row : rows) out.push_back(from(row));
  return out;
}

// The total of a page read with `count(*) OVER () AS total`; when the page came back empty the
// total is unknown from it, and `count` (run only then) answers.
template <class Count>
std::int64_t page_total(const pqxx::result& rows, Count&& count) {
  if (!rows.empty()) return rows[0]["total"].as<std::int64_t>();
  return count();
}

// Rethrows a database rule violation (SQLSTATE class 23) as Conflict naming the API field, or
// NotFound for a reference to a user or job that does not exist; anything else as it was.
// Call only from the handler that caught `error` (it rethrows the exception in flight).
[[noreturn]] void rethrow_mapped(const pqxx::sql_error& error);

// Runs fn, turning rule violations into the stores' exceptions.
template <class F>
auto mapped(F&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const pqxx::sql_error& e) {
    rethrow_mapped(e);
  }
}

// Writes the audit row of a change in the change's transaction; answers its id.
std::int64_t write_audit(pqxx::work& tx, std::int64_t now, const Actor& actor, std::string_view action,
                         std::string_view entity_type, std::optional<std::int64_t> entity_id,
                         const std::optional<nlohmann::json>& before, const std::optional<nlohmann::json>& after);

// Registers the statements write_audit and the audit store use.
void prepare_audit(pqxx::connection& connection);
// Registers the statements of the user, token, session and audit stores (pg_account_stores.cpp).
void prepare_accounts(pqxx::connection& connection);

// The calendars of a scan's due jobs or workflows (decide_fires goes by the version of a
// calendar the scan read). due_calendar reads a due row's calendar_id and calendar_mode;
// kCalendarVersions is the statement that reads the versions of the calendars `$1::bigint[]`
// names, by primary key, which each store prepares under its own name; read_calendar_versions runs
// it (as `statement`) for the calendars `due` names, once each, and sets their versions (0 for a
// calendar gone).
void due_calendar(Fields& row, DueJob& due);
// A job row's dst_gap and dst_repeat columns (sql/0020_job_dst_policy.sql).
common::DstPolicy dst_policy_from(Fields& row);
// A job row's retry_backoff, retry_multiplier, retry_max_interval and retry_jitter columns.
RetryPolicy retry_policy_from(Fields& row);
extern const std::string kCalendarVersions;
void read_calendar_versions(pqxx::work& tx, const char* statement, std::vector<DueJob>& due);

}  // namespace cronwheel::admin::pg
