#include "admin/pg/pg_store_support.h"

#include "admin/model/calendar.h"
#include "admin/model/workflow_json.h"
#include "admin/pg/pg_guard.h"

#include <algorithm>

#include <arpa/inet.h>

#include <array>
#include <cstring>
#include <map>
#include <set>
#include <stdexcept>

namespace cronwheel::admin::pg {

std::string ts(std::string_view expression) {
  return "(timestamptz 'epoch' + (" + std::string(expression) + ")::bigint * interval '1 millisecond')";
}

std::string held_run_condition(std::string_view now_ms) {
  const std::string now(now_ms);
  // A held run's trigger time is the second boundary at or after its scheduled time.
  return "state IN ('triggered', 'sending') AND trigger_time > " + ts(now) + " AND scheduled_time > (" + now +
         ")::bigint - 1000";
}

std::string ms(std::string_view column, std::string_view alias) {
  // extract() answers numeric (exact microseconds); rounding to bigint is exact for the
  // millisecond values the stores write.
  return "(extract(epoch FROM " + std::string(column) + ") * 1000)::bigint AS " + std::string(alias);
}

const std::string kGroupColumns =
    "id, app_name, title, address_type, array_to_json(address_list)::text AS address_list, access_token, "
    "max_running, " +
    ms("created_at", "created_at") + ", " + ms("updated_at", "updated_at");

const std::string kJobColumns =
    "id, job_group, name, job_desc, author, alarm_email, schedule_type, schedule_conf, timezone, misfire_strategy, "
    "executor_route_strategy, executor_handler, executor_param, executor_block_strategy, executor_timeout, "
    "executor_fail_retry_count, retry_interval, glue_type, glue_source, glue_remark, " +
    ms("glue_updated_at", "glue_updated_at") +
    ", array_to_json(child_job_ids)::text AS child_job_ids, trigger_status, trigger_last_time, trigger_next_time, "
    "paused_with_group, calendar_id, calendar_mode, dst_gap, dst_repeat, retry_backoff, retry_multiplier, "
    "retry_max_interval, retry_jitter, max_concurrent, priority, " +
    ms("created_at", "created_at") + ", " + ms("updated_at", "updated_at");

const std::string kJobTables = "job_info LEFT JOIN job_schedule ON job_schedule.job_id = job_info.id";
const std::string kJobTablesLocked = "job_info JOIN job_schedule ON job_schedule.job_id = job_info.id";

std::string job_columns_of_written(bool schedule_written) {
  return "SELECT " + kJobColumns + (schedule_written ? " FROM j JOIN s ON s.job_id = j.id" : " FROM j JOIN job_schedule s ON s.job_id = j.id");
}

const std::string kLogColumns =
    "id, job_group, job_id, state, trigger_type, scheduled_time, admin_node, executor_address, executor_handler, "
    "executor_param, shard_index, shard_total, executor_fail_retry_count, parent_log_id, chain_depth, " +
    ms("trigger_time", "trigger_time") + ", trigger_code, trigger_msg, " + ms("handle_time", "handle_time") +
    ", handle_code, handle_msg, alarm_status, workflow_run_id, workflow_node, output, backfill_id, waiting_slot, "
    "slot_admitted, logical_time";

const std::vector<std::string> kRunColumnNames = {
    "id", "job_group", "job_id", "state", "trigger_type", "scheduled_time", "admin_node", "executor_address",
    "executor_handler", "executor_param", "shard_index", "shard_total", "executor_fail_retry_count", "parent_log_id",
    "trigger_time", "trigger_code", "trigger_msg", "handle_time", "handle_code", "handle_msg", "alarm_status",
    "created_at", "alarm_time", "chain_depth", "workflow_run_id", "workflow_node", "output", "backfill_id",
    "waiting_slot", "slot_admitted", "logical_time"};

std::string scheduled_fire_finished(std::string_view job_id, std::string_view scheduled_time,
                                    std::string_view shard_index) {
  return "EXISTS (SELECT 1 FROM job_log_finished f WHERE f.job_id = " + std::string(job_id) +
         " AND f.scheduled_time = " + std::string(scheduled_time) + " AND f.shard_index = " + std::string(shard_index) +
         " AND f.trigger_type IN ('SCHEDULE', 'MISFIRE') OFFSET 0)";
}

std::string backfill_fire_finished(std::string_view backfill_id, std::string_view scheduled_time,
                                   std::string_view shard_index) {
  return "EXISTS (SELECT 1 FROM job_log_finished f WHERE f.backfill_id = " + std::string(backfill_id) +
         " AND f.scheduled_time = " + std::string(scheduled_time) + " AND f.shard_index = " +
         std::string(shard_index) + " AND f.trigger_type = 'BACKFILL' OFFSET 0)";
}

std::string end_runs(std::string_view with, std::string_view where, std::string_view join,
                     const std::map<std::string, std::string>& set) {
  std::string columns, values;
  for (const auto& c : kRunColumnNames) {
    if (!columns.empty()) {
      columns += ", ";
      values += ", ";
    }
    columns += c;
    auto it = set.find(c);
    values += it != set.end() ? it->second : "ended." + c;
  }
  for (const auto& [c, value] : set) {
    if (std::find(kRunColumnNames.begin(), kRunColumnNames.end(), c) == kRunColumnNames.end()) {
      throw std::logic_error("end_runs: no run column " + c);
    }
  }
  std::string sql = "WITH ";
  if (!with.empty()) sql += std::string(with) + ", ";
  sql += "ended AS (DELETE FROM job_log_active a " + std::string(where) + " RETURNING a.*)";
  sql += " INSERT INTO job_log_finished (" + columns + ") SELECT " + values + " FROM ended";
  if (!join.empty()) sql += " " + std::string(join);
  sql += " ORDER BY ended.id RETURNING " + kLogColumns;
  return sql;
}

const std::string kVersionColumns =
    "id, job_id, glue_type, glue_source, glue_remark, " + ms("created_at", "created_at");

const std::string kUserColumns =
    "u.id, u.username, u.password_hash, u.role, "
    "COALESCE((SELECT json_agg(ug.group_id ORDER BY ug.group_id) FROM user_group ug WHERE ug.user_id = u.id)::text, "
    "'[]') AS groups, " +
    ms("u.created_at", "created_at") + ", " + ms("u.updated_at", "updated_at");

const std::string kTokenColumns = "id, user_id, name, " + ms("created_at", "created_at") + ", " +
                                  ms("last_used_at", "last_used_at") + ", " + ms("revoked_at", "revoked_at") + ", " +
                                  ms("expires_at", "expires_at");

const std::string kAuditColumns = "id, " + ms("at", "at") +
                                  ", user_id, username, action, entity_type, entity_id, before::text AS before, "
                                  "after::text AS after, COALESCE(host(remote_addr), '') AS remote_addr";

pqxx::field Fields::operator[](const char* name) {
  if (next_ < row_.size()) {
    pqxx::field next = row_[next_];
    if (std::strcmp(next.name(), name) == 0) {
      ++next_;
      return next;
    }
  }
  const auto found = row_.column_number(name);
  next_ = found + 1;
  return row_[found];
}

namespace {

template <class T>
std::optional<T> optional_of(const pqxx::field& f) {
  if (f.is_null()) return std::nullopt;
  return f.as<T>();
}

template <class T>
std::vector<T> json_array(const pqxx::field& f) {
  return nlohmann::json::parse(f.c_str()).get<std::vector<T>>();
}

// A job's or workflow's calendar_id and calendar_mode columns.
CalendarUse calendar_use_from(Fields& r) {
  CalendarUse use;
  use.calendar_id = optional_of<std::int64_t>(r["calendar_id"]).value_or(0);
  const auto mode = r["calendar_mode"].as<std::string>();
  const auto parsed = parse_calendar_mode(mode);
  if (!parsed) throw std::runtime_error("calendar_mode: unknown value '" + mode + "' in the database");
  use.mode = *parsed;
  return use;
}

}  // namespace

RetryPolicy retry_policy_from(Fields& r) {
  RetryPolicy retry;
  const auto backoff = r["retry_backoff"].as<std::string>();
  const auto parsed = parse_retry_backoff(backoff);
  if (!parsed) throw std::runtime_error("retry_backoff: unknown value '" + backoff + "' in the database");
  retry.backoff = *parsed;
  retry.multiplier = r["retry_multiplier"].as<double>();
  retry.max_interval = r["retry_max_interval"].as<int>();
  retry.jitter_percent = r["retry_jitter"].as<int>();
  return retry;
}

common::DstPolicy dst_policy_from(Fields& r) {
  common::DstPolicy dst;
  const auto gap = r["dst_gap"].as<std::string>();
  const auto repeat = r["dst_repeat"].as<std::string>();
  const auto parsed_gap = common::parse_dst_gap(gap);
  const auto parsed_repeat = common::parse_dst_repeat(repeat);
  if (!parsed_gap) throw std::runtime_error("dst_gap: unknown value '" + gap + "' in the database");
  if (!parsed_repeat) throw std::runtime_error("dst_repeat: unknown value '" + repeat + "' in the database");
  dst.gap = *parsed_gap;
  dst.repeat = *parsed_repeat;
  return dst;
}

const std::string kWorkflowColumns =
    "id, job_group, name, description, author, alarm_email, schedule_type, schedule_conf, timezone, "
    "misfire_strategy, overlap, max_parallel, timeout_seconds, params::text AS params, graph::text AS graph, "
    "trigger_status, trigger_last_time, trigger_next_time, calendar_id, calendar_mode, version, " +
    ms("created_at", "created_at") + ", " + ms("updated_at", "updated_at");

const std::string kChannelColumns =
    "c.id, c.name, c.kind, c.target, c.secret, "
    "array_to_json(ARRAY(SELECT g.id FROM job_group g WHERE g.id = ANY (c.groups) ORDER BY g.id))::text AS groups, "
    "array_to_json(ARRAY(SELECT j.id FROM job_info j WHERE j.id = ANY (c.jobs) ORDER BY j.id))::text AS jobs, " +
    ms("c.created_at", "created_at") + ", " + ms("c.updated_at", "updated_at");

AlarmChannel channel_from(const pqxx::row& r) {
  AlarmChannel c;
  c.id = r["id"].as<std::int64_t>();
  c.name = r["name"].as<std::string>();
  const auto kind = parse_alarm_channel_kind(r["kind"].c_str());
  if (!kind) throw std::runtime_error(std::string("alarm_channel.kind: unknown value '") + r["kind"].c_str() + "'");
  c.kind = *kind;
  c.target = r["target"].as<std::string>();
  c.secret = r["secret"].as<std::string>();
  c.groups = json_array<std::int64_t>(r["groups"]);
  c.jobs = json_array<std::int64_t>(r["jobs"]);
  c.created_at = r["created_at"].as<std::int64_t>();
  c.updated_at = r["updated_at"].as<std::int64_t>();
  return c;
}

Group group_from(const pqxx::row& row) {
  Fields r(row);
  Group g;
  g.id = r["id"].as<std::int64_t>();
  g.app_name = r["app_name"].as<std::string>();
  g.title = r["title"].as<std::string>();
  g.address_type = r["address_type"].as<int>();
  g.address_list = json_array<std::string>(r["address_list"]);
  g.access_token = optional_of<std::string>(r["access_token"]);
  g.max_running = r["max_running"].as<int>();
  g.created_at = r["created_at"].as<std::int64_t>();
  g.updated_at = r["updated_at"].as<std::int64_t>();
  return g;
}

namespace {

std::optional<FireState> parsed(std::string_view text, const FireState*) { return parse_fire_state(text); }
std::optional<TriggerType> parsed(std::string_view text, const TriggerType*) { return parse_trigger_type(text); }
template <class E>
std::optional<E> parsed(std::string_view text, const E*) {
  return common::protocol::parse_enum<E>(text);
}

}  // namespace

template <class E>
E enum_of(const pqxx::field& field) {
  const std::string value = field.as<std::string>();
  if (auto known = parsed(value, static_cast<const E*>(nullptr))) return *known;
  throw std::runtime_error(std::string(field.name()) + ": unknown value '" + value + "' in the database");
}
template FireState enum_of<FireState>(const pqxx::field&);
template TriggerType enum_of<TriggerType>(const pqxx::field&);
template ScheduleType enum_of<ScheduleType>(const pqxx::field&);
template MisfireStrategy enum_of<MisfireStrategy>(const pqxx::field&);
template RouteStrategy enum_of<RouteStrategy>(const pqxx::field&);
template BlockStrategy enum_of<BlockStrategy>(const pqxx::field&);
template GlueType enum_of<GlueType>(const pqxx::field&);

Job job_from(const pqxx::row& row) {
  Fields r(row);
  Job j;
  j.id = r["id"].as<std::int64_t>();
  j.job_group = r["job_group"].as<std::int64_t>();
  j.name = r["name"].as<std::string>();
  j.job_desc = r["job_desc"].as<std::string>();
  j.author = r["author"].as<std::string>();
  j.alarm_email = r["alarm_email"].as<std::string>();
  j.schedule_type = enum_of<ScheduleType>(r["schedule_type"]);
  j.schedule_conf = r["schedule_conf"].as<std::string>();
  j.timezone = r["timezone"].as<std::string>();
  j.misfire_strategy = enum_of<MisfireStrategy>(r["misfire_strategy"]);
  j.executor_route_strategy = enum_of<RouteStrategy>(r["executor_route_strategy"]);
  j.executor_handler = r["executor_handler"].as<std::string>();
  j.executor_param = r["executor_param"].as<std::string>();
  j.executor_block_strategy = enum_of<BlockStrategy>(r["executor_block_strategy"]);
  j.executor_timeout = r["executor_timeout"].as<int>();
  j.executor_fail_retry_count = r["executor_fail_retry_count"].as<int>();
  j.retry_interval = r["retry_interval"].as<int>();
  j.glue_type = enum_of<GlueType>(r["glue_type"]);
  j.glue_source = r["glue_source"].as<std::string>();
  j.glue_remark = r["glue_remark"].as<std::string>();
  j.glue_updated_at = r["glue_updated_at"].as<std::int64_t>();
  j.child_job_ids = json_array<std::int64_t>(r["child_job_ids"]);
  j.trigger_status = r["trigger_status"].as<int>();
  j.trigger_last_time = r["trigger_last_time"].as<std::int64_t>();
  j.trigger_next_time = r["trigger_next_time"].as<std::int64_t>();
  j.paused_with_group = r["paused_with_group"].as<bool>();
  j.calendar = calendar_use_from(r);
  j.dst = dst_policy_from(r);
  j.retry = retry_policy_from(r);
  j.max_concurrent = r["max_concurrent"].as<int>();
  j.priority = r["priority"].as<int>();
  j.created_at = r["created_at"].as<std::int64_t>();
  j.updated_at = r["updated_at"].as<std::int64_t>();
  return j;
}

JobLog log_from(const pqxx::row& row) {
  Fields r(row);
  JobLog l;
  l.id = r["id"].as<std::int64_t>();
  l.job_group = r["job_group"].as<std::int64_t>();
  l.job_id = r["job_id"].as<std::int64_t>();
  l.state = enum_of<FireState>(r["state"]);
  l.trigger_type = enum_of<TriggerType>(r["trigger_type"]);
  l.scheduled_time = r["scheduled_time"].as<std::int64_t>();
  l.admin_node = optional_of<std::string>(r["admin_node"]);
  l.executor_address = r["executor_address"].as<std::string>();
  l.executor_handler = r["executor_handler"].as<std::string>();
  l.executor_param = r["executor_param"].as<std::string>();
  l.shard_index = r["shard_index"].as<int>();
  l.shard_total = r["shard_total"].as<int>();
  l.executor_fail_retry_count = r["executor_fail_retry_count"].as<int>();
  l.parent_log_id = optional_of<std::int64_t>(r["parent_log_id"]);
  l.chain_depth = r["chain_depth"].as<int>();
  l.trigger_time = optional_of<std::int64_t>(r["trigger_time"]);
  l.trigger_code = r["trigger_code"].as<int>();
  l.trigger_msg = r["trigger_msg"].as<std::string>();
  l.handle_time = optional_of<std::int64_t>(r["handle_time"]);
  l.handle_code = r["handle_code"].as<int>();
  l.handle_msg = r["handle_msg"].as<std::string>();
  l.alarm_status = r["alarm_status"].as<int>();
  l.workflow_run_id = optional_of<std::int64_t>(r["workflow_run_id"]);
  l.workflow_node = optional_of<std::string>(r["workflow_node"]).value_or("");
  l.output = optional_of<std::string>(r["output"]);
  l.backfill_id = optional_of<std::int64_t>(r["backfill_id"]);
  l.waiting_slot = r["waiting_slot"].as<bool>();
  l.slot_admitted = r["slot_admitted"].as<bool>();
  l.logical_time = optional_of<std::int64_t>(r["logical_time"]);
  return l;
}

Workflow workflow_from(const pqxx::row& row) {
  Fields r(row);
  Workflow w;
  w.id = r["id"].as<std::int64_t>();
  w.job_group = r["job_group"].as<std::int64_t>();
  w.name = r["name"].as<std::string>();
  w.description = r["description"].as<std::string>();
  w.author = r["author"].as<std::string>();
  w.alarm_email = r["alarm_email"].as<std::string>();
  w.schedule_type = enum_of<ScheduleType>(r["schedule_type"]);
  w.schedule_conf = r["schedule_conf"].as<std::string>();
  w.timezone = r["timezone"].as<std::string>();
  w.misfire_strategy = enum_of<MisfireStrategy>(r["misfire_strategy"]);
  w.overlap = parse_overlap_policy(r["overlap"].as<std::string>()).value_or(OverlapPolicy::kWait);
  w.max_parallel = r["max_parallel"].as<int>();
  w.timeout_seconds = r["timeout_seconds"].as<int>();
  w.params = params_from_json(nlohmann::json::parse(r["params"].as<std::string>()));
  w.graph = graph_from_json(nlohmann::json::parse(r["graph"].as<std::string>()));
  w.trigger_status = r["trigger_status"].as<int>();
  w.trigger_last_time = r["trigger_last_time"].as<std::int64_t>();
  w.trigger_next_time = r["trigger_next_time"].as<std::int64_t>();
  w.calendar = calendar_use_from(r);
  w.version = r["version"].as<int>();
  w.created_at = r["created_at"].as<std::int64_t>();
  w.updated_at = r["updated_at"].as<std::int64_t>();
  return w;
}

ScriptVersion version_from(const pqxx::row& r) {
  ScriptVersion v;
  v.id = r["id"].as<std::int64_t>();
  v.job_id = r["job_id"].as<std::int64_t>();
  v.glue_type = enum_of<GlueType>(r["glue_type"]);
  v.glue_source = r["glue_source"].as<std::string>();
  v.glue_remark = r["glue_remark"].as<std::string>();
  v.created_at = r["created_at"].as<std::int64_t>();
  return v;
}

User user_from(const pqxx::row& r) {
  User u;
  u.id = r["id"].as<std::int64_t>();
  u.username = r["username"].as<std::string>();
  u.password_hash = r["password_hash"].as<std::string>();
  u.role = r["role"].as<std::string>();
  u.groups = json_array<std::int64_t>(r["groups"]);
  u.created_at = r["created_at"].as<std::int64_t>();
  u.updated_at = r["updated_at"].as<std::int64_t>();
  return u;
}

ApiToken token_from(const pqxx::row& r) {
  ApiToken t;
  t.id = r["id"].as<std::int64_t>();
  t.user_id = r["user_id"].as<std::int64_t>();
  t.name = r["name"].as<std::string>();
  t.created_at = r["created_at"].as<std::int64_t>();
  t.last_used_at = optional_of<std::int64_t>(r["last_used_at"]);
  t.revoked_at = optional_of<std::int64_t>(r["revoked_at"]);
  t.expires_at = optional_of<std::int64_t>(r["expires_at"]);
  return t;
}

AuditEntry audit_from(const pqxx::row& r) {
  AuditEntry e;
  e.id = r["id"].as<std::int64_t>();
  e.at = r["at"].as<std::int64_t>();
  e.user_id = optional_of<std::int64_t>(r["user_id"]);
  e.username = r["username"].as<std::string>();
  e.action = r["action"].as<std::string>();
  e.entity_type = r["entity_type"].as<std::string>();
  e.entity_id = optional_of<std::int64_t>(r["entity_id"]);
  e.before = optional_of<std::string>(r["before"]);
  e.after = optional_of<std::string>(r["after"]);
  e.remote_addr = r["remote_addr"].as<std::string>();
  return e;
}

std::string bigint_array(const std::vector<std::int64_t>& values) {
  std::string out = "{";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    out += std::to_string(values[i]);
  }
  return out + "}";
}

std::string text_array(const std::vector<std::string>& values) {
  // Every element double-quoted, so commas, braces, spaces and the word NULL stay literal;
  // inside quotes only " and \ need a backslash.
  std::string out = "{";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    out += '"';
    for (char c : values[i]) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out + "}";
}

std::optional<std::string> scope_param(const GroupScope& scope) {
  if (!scope) return std::nullopt;
  return bigint_array(*scope);
}

std::string appended_trigger_msg(std::string_view message) {
  const std::string m(message);
  return "CASE WHEN trigger_msg = '' THEN " + m + " ELSE trigger_msg || E'\\n' || " + m + " END";
}

std::string contains_pattern(std::string_view text) {
  std::string out = "%";
  for (char c : text) {
    if (c == '%' || c == '_' || c == '\\') out += '\\';
    out += c;
  }
  return out + "%";
}

std::optional<std::string> inet_param(const std::string& address) {
  unsigned char buf[sizeof(struct in6_addr)];
  if (inet_pton(AF_INET, address.c_str(), buf) == 1 || inet_pton(AF_INET6, address.c_str(), buf) == 1) {
    return address;
  }
  return std::nullopt;
}

namespace {

enum class Kind { kConflict, kNotFound };
struct Rule {
  const char* constraint;
  Kind kind;
  const char* field;
  const char* message;
};

// Every named rule of the schema a store call can break, with the API field it concerns.
constexpr std::array kRules = {
    Rule{"job_group_app_name_key", Kind::kConflict, "appName", "app name is taken by another group"},
    Rule{"alarm_channel_name_key", Kind::kConflict, "name", "name is taken by another alarm channel"},
    Rule{"alarm_channel_name_check", Kind::kConflict, "name", "name must not be blank"},
    Rule{"alarm_channel_kind_check", Kind::kConflict, "kind", "kind must be email or webhook"},
    Rule{"alarm_channel_target_check", Kind::kConflict, "target", "target must not be empty"},
    Rule{"job_group_app_name_format", Kind::kConflict, "appName",
         "app name must be 4-64 letters, digits, '.', '_' or '-', starting with a letter or digit"},
    Rule{"job_group_title_check", Kind::kConflict, "title", "title must not be blank"},
    Rule{"job_group_address_type_check", Kind::kConflict, "addressType", "addressType must be 0 or 1"},
    Rule{"job_info_job_group_fkey", Kind::kConflict, "jobGroup", "group does not exist"},
    Rule{"job_info_job_desc_check", Kind::kConflict, "jobDesc", "jobDesc must not be blank"},
    Rule{"job_info_group_name_key", Kind::kConflict, "name", "name is taken by another job of the group"},
    Rule{"job_info_name_format", Kind::kConflict, "name",
         "name must be 1-100 lower-case letters, digits, '.', '_' or '-', starting with a letter or digit"},
    Rule{"job_info_schedule_type_check", Kind::kConflict, "scheduleType", "unknown schedule type"},
    Rule{"job_info_misfire_strategy_check", Kind::kConflict, "misfireStrategy", "unknown misfire strategy"},
    Rule{"job_info_executor_route_strategy_check", Kind::kConflict, "executorRouteStrategy", "unknown route strategy"},
    Rule{"job_info_executor_block_strategy_check", Kind::kConflict, "executorBlockStrategy", "unknown block strategy"},
    Rule{"job_info_executor_timeout_check", Kind::kConflict, "executorTimeout", "executorTimeout must not be negative"},
    Rule{"job_info_executor_fail_retry_count_check", Kind::kConflict, "executorFailRetryCount",
         "executorFailRetryCount must be 0..100"},
    Rule{"job_info_retry_interval_check", Kind::kConflict, "retryInterval", "retryInterval must not be negative"},
    Rule{"job_info_glue_type_check", Kind::kConflict, "glueType", "unknown glue type"},
    Rule{"job_info_trigger_status_check", Kind::kConflict, "triggerStatus", "triggerStatus must be 0 or 1"},
    Rule{"job_info_trigger_last_time_check", Kind::kConflict, "triggerLastTime", "triggerLastTime must not be negative"},
    Rule{"job_info_trigger_next_time_check", Kind::kConflict, "triggerNextTime", "triggerNextTime must not be negative"},
    Rule{"job_info_bean_needs_handler", Kind::kConflict, "executorHandler", "a BEAN job needs an executor handler"},
    Rule{"job_info_fixed_schedule_is_seconds", Kind::kConflict, "scheduleConf",
         "a fixed schedule needs a positive number of seconds"},
    Rule{"job_info_cron_has_expression", Kind::kConflict, "scheduleConf", "a CRON job needs an expression"},
    Rule{"job_info_running_needs_schedule", Kind::kConflict, "scheduleType", "a job without a schedule cannot run"},
    Rule{"job_info_not_own_child", Kind::kConflict, "childJobId", "a job cannot be its own child"},
    Rule{"backfill_from_time_check", Kind::kConflict, "from", "from must not be negative"},
    Rule{"backfill_max_concurrent_check", Kind::kConflict, "maxConcurrent", "maxConcurrent must be 1-100"},
    Rule{"backfill_range", Kind::kConflict, "to", "from must be before to"},
    Rule{"backfill_total_check", Kind::kConflict, "total", "total must not be negative"},
    Rule{"job_log_job_id_fkey", Kind::kNotFound, "", "job does not exist"},
    Rule{"job_log_state_check", Kind::kConflict, "state", "unknown log state"},
    Rule{"job_log_trigger_type_check", Kind::kConflict, "triggerType", "unknown trigger type"},
    Rule{"job_log_scheduled_time_check", Kind::kConflict, "scheduledTime", "scheduledTime must not be negative"},
    Rule{"job_log_active_scheduled_fire", Kind::kConflict, "scheduledTime", "this fire exists already"},
    Rule{"job_log_executor_fail_retry_count_check", Kind::kConflict, "executorFailRetryCount",
         "executorFailRetryCount must not be negative"},
    Rule{"job_log_alarm_status_check", Kind::kConflict, "alarmStatus", "alarmStatus must be -1..3"},
    Rule{"job_log_shard_in_range", Kind::kConflict, "shardIndex", "shard index out of range"},
    Rule{"job_log_pending_has_owner", Kind::kConflict, "adminNode", "a pending fire needs its admin node"},
    Rule{"job_log_sent_has_trigger_time", Kind::kConflict, "triggerTime", "a sent fire needs its trigger time"},
    Rule{"job_log_result_has_handle_time", Kind::kConflict, "handleTime", "a result needs its handle time"},
    Rule{"job_logglue_job_id_fkey", Kind::kNotFound, "", "job does not exist"},
    Rule{"job_logglue_glue_remark_check", Kind::kConflict, "glueRemark", "a script version needs a remark"},
    Rule{"app_user_username_key", Kind::kConflict, "username", "username is taken"},
    Rule{"app_user_username_lower", Kind::kConflict, "username", "username is taken (in other letter case)"},
    Rule{"app_user_username_format", Kind::kConflict, "username",
         "username must be 1-64 letters, digits, '.', '_', '@' or '-'"},
    Rule{"app_user_password_hash_check", Kind::kConflict, "password", "password hash is not an argon2 hash"},
    Rule{"app_user_role_check", Kind::kConflict, "role", "role must be admin or normal"},
    Rule{"user_group_group_id_fkey", Kind::kConflict, "groups", "group does not exist"},
    Rule{"user_group_user_id_fkey", Kind::kNotFound, "", "user does not exist"},
    Rule{"user_session_pkey", Kind::kConflict, "token", "session exists"},
    Rule{"user_session_check", Kind::kConflict, "expiresAt", "a session must expire after it starts"},
    Rule{"user_session_token_hash_check", Kind::kConflict, "token", "token hash must be 32 bytes"},
    Rule{"user_session_user_id_fkey", Kind::kNotFound, "", "user does not exist"},
    Rule{"api_token_live_name", Kind::kConflict, "name", "a token of this name exists"},
    Rule{"api_token_name_check", Kind::kConflict, "name", "token name must not be blank"},
    Rule{"api_token_token_hash_key", Kind::kConflict, "token", "token hash collision"},
    Rule{"api_token_token_hash_check", Kind::kConflict, "token", "token hash must be 32 bytes"},
    Rule{"api_token_user_id_fkey", Kind::kNotFound, "", "user does not exist"},
    Rule{"api_token_expires_after_creation", Kind::kConflict, "expiresAt", "a token must expire after it is created"},
    Rule{"audit_log_action_check", Kind::kConflict, "action", "audit action must not be empty"},
    Rule{"workflow_name_unique", Kind::kConflict, "name", "a workflow of this name exists in the group"},
    Rule{"workflow_job_group_fkey", Kind::kConflict, "jobGroup", "the group does not exist, or still has workflows"},
    Rule{"workflow_job_job_id_fkey", Kind::kConflict, "", "the job is a node of a workflow: take it out of the workflow first"},
    Rule{"workflow_max_parallel_check", Kind::kConflict, "maxParallel", "maxParallel must be 1-100"},
    Rule{"workflow_timeout_seconds_check", Kind::kConflict, "timeout", "timeout must not be negative"},
    // Calendars (sql/0019_calendars.sql). A calendar that jobs or workflows name is refused by
    // PgCalendarStore::remove before its delete could meet the references.
    Rule{"job_info_calendar_id_fkey", Kind::kConflict, "calendarId", "the calendar does not exist"},
    Rule{"workflow_calendar_id_fkey", Kind::kConflict, "calendarId", "the calendar does not exist"},
    Rule{"job_info_calendar_mode_check", Kind::kConflict, "calendarMode", "calendarMode must be SKIP or ONLY"},
    Rule{"job_group_max_running_check", Kind::kConflict, "maxRunning", "maxRunning must be 0-10000"},
    Rule{"job_info_max_concurrent_check", Kind::kConflict, "maxConcurrent", "maxConcurrent must be 0-1000"},
    Rule{"job_info_priority_check", Kind::kConflict, "priority", "priority must be -1000 to 1000"},
    Rule{"job_info_retry_backoff_check", Kind::kConflict, "retryBackoff", "retryBackoff must be FIXED or EXPONENTIAL"},
    Rule{"job_info_retry_multiplier_check", Kind::kConflict, "retryMultiplier", "retryMultiplier must be 1-10"},
    Rule{"job_info_retry_max_interval_check", Kind::kConflict, "retryMaxInterval",
         "retryMaxInterval must be 0-2592000 seconds"},
    Rule{"job_info_retry_jitter_check", Kind::kConflict, "retryJitter", "retryJitter must be 0-100"},
    Rule{"job_info_dst_gap_check", Kind::kConflict, "dstGap", "dstGap must be SKIP or FIRE_AFTER"},
    Rule{"job_info_dst_repeat_check", Kind::kConflict, "dstRepeat", "dstRepeat must be ONCE or BOTH"},
    Rule{"workflow_calendar_mode_check", Kind::kConflict, "calendarMode", "calendarMode must be SKIP or ONLY"},
    Rule{"calendar_name_key", Kind::kConflict, "name", "name is taken by another calendar"},
    Rule{"calendar_name_format", Kind::kConflict, "name",
         "name must be 1-64 lower-case letters, digits, '.', '_' or '-', starting with a letter or digit"},
    Rule{"calendar_business_days_check", Kind::kConflict, "businessDays", "businessDays must be 7 bits"},
    Rule{"calendar_date_once", Kind::kConflict, "dates", "a day is listed twice"},
    Rule{"calendar_date_year_check", Kind::kConflict, "dates", "a date's year must be 0 (every year) or 1970-2999"},
    Rule{"calendar_date_month_check", Kind::kConflict, "dates", "a date's month must be 1-12"},
    Rule{"calendar_date_day_check", Kind::kConflict, "dates", "a date's day must be 1-31"},
    Rule{"calendar_date_included_has_year", Kind::kConflict, "dates", "an included date needs its year"},
    Rule{"calendar_time_start_s_check", Kind::kConflict, "excludedTimes", "a time range must start within the day"},
    Rule{"calendar_time_end_s_check", Kind::kConflict, "excludedTimes", "a time range must end within the day"},
};

}  // namespace

void rethrow_mapped(const pqxx::sql_error& error) {
  if (error.sqlstate().rfind("23", 0) != 0) throw;
  // PostgreSQL names the constraint in the primary message (quoted as the message's language
  // quotes); the DETAIL lines after it may hold user data, so only the first line is searched,
  // and the longest name found wins over any name it contains.
  std::string_view text = error.what();
  text = text.substr(0, text.find('\n'));
  const Rule* best = nullptr;
  for (const auto& rule : kRules) {
    std::string_view name = rule.constraint;
    if (text.find(name) != std::string_view::npos && (best == nullptr || name.size() > std::strlen(best->constraint))) {
      best = &rule;
    }
  }
  if (best == nullptr) throw Conflict("the change conflicts with stored data");
  if (best->kind == Kind::kNotFound) throw NotFound(best->message);
  throw Conflict(best->message, best->field);
}

std::optional<std::vector<std::int64_t>> groups_to_list(const GroupScope& scope, std::optional<std::int64_t> group) {
  if (!group) return scope;
  if (scope && std::find(scope->begin(), scope->end(), *group) == scope->end()) return std::vector<std::int64_t>{};
  return std::vector<std::int64_t>{*group};
}

void prepare_audit(pqxx::connection& c) {
  c.prepare("audit_insert",
            "INSERT INTO audit_log (at, user_id, username, action, entity_type, entity_id, before, after, remote_addr) "
            "VALUES (" + ts("$1") + ", (SELECT id FROM app_user WHERE id = $2), $3, $4, $5, $6, $7::jsonb, $8::jsonb, "
            "$9::inet) RETURNING id");
}

std::int64_t write_audit(pqxx::work& tx, std::int64_t now, const Actor& actor, std::string_view action,
                         std::string_view entity_type, std::optional<std::int64_t> entity_id,
                         const std::optional<nlohmann::json>& before, const std::optional<nlohmann::json>& after) {
  auto text = [](const std::optional<nlohmann::json>& j) {
    return j ? std::optional<std::string>(j->dump()) : std::nullopt;
  };
  return tx
      .exec_prepared1("audit_insert", now, actor.user_id, actor.username, std::string(action), std::string(entity_type),
                      entity_id, text(before), text(after), inet_param(actor.remote_addr))[0]
      .as<std::int64_t>();
}

void due_calendar(Fields& row, DueJob& due) {
  const CalendarUse use = calendar_use_from(row);
  due.calendar_id = use.calendar_id;
  due.calendar_mode = use.mode;
}

const std::string kCalendarVersions =
    "WITH " + guard_cte("$1::bigint[] AS ids") + ", " +
    batch_values_cte("wanted", "u", "unnest(guard.ids) AS u(calendar_id)") +
    " SELECT c.id, c.version FROM wanted JOIN calendar c ON c.id = wanted.calendar_id";

void read_calendar_versions(pqxx::work& tx, const char* statement, std::vector<DueJob>& due) {
  std::set<std::int64_t> named;
  for (const auto& d : due) {
    if (d.calendar_id != 0) named.insert(d.calendar_id);
  }
  if (named.empty()) return;
  std::map<std::int64_t, int> versions;
  for (const auto& r : tx.exec_prepared(statement, bigint_array(std::vector<std::int64_t>(named.begin(), named.end())))) {
    versions[r[0].as<std::int64_t>()] = r[1].as<int>();
  }
  for (auto& d : due) {
    if (d.calendar_id == 0) continue;
    auto it = versions.find(d.calendar_id);
    d.calendar_version = it == versions.end() ? 0 : it->second;
  }
}

}  // namespace cronwheel::admin::pg
