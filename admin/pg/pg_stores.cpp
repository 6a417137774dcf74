#include "admin/pg/pg_stores.h"

#include "admin/pg/pg_follow_ups.h"
#include "admin/pg/pg_guard.h"
#include "admin/pg/pg_keyset_list.h"
#include "admin/pg/pg_store_support.h"
#include "admin/model/record_json.h"

// Groups, jobs, logs and script versions. Users, tokens, sessions and the audit log are in
// pg_account_stores.cpp; shared helpers in pg_store_support.cpp.

namespace cronwheel::admin {

using namespace pg;

namespace {

void prepare_groups(pqxx::connection& c) {
  const std::string where =
      " WHERE ($1::bigint[] IS NULL OR id = ANY ($1::bigint[])) AND (app_name ILIKE $2 OR title ILIKE $2)";
  c.prepare("group_list", "SELECT " + kGroupColumns + ", count(*) OVER () AS total FROM job_group" + where +
                              " ORDER BY app_name COLLATE \"C\", id LIMIT $3 OFFSET $4");
  c.prepare("group_count", "SELECT count(*) FROM job_group" + where);
  c.prepare("group_get", "SELECT " + kGroupColumns + " FROM job_group WHERE id = $1");
  c.prepare("group_lock", "SELECT " + kGroupColumns + " FROM job_group WHERE id = $1 FOR UPDATE");
  c.prepare("group_by_app_name", "SELECT " + kGroupColumns + " FROM job_group WHERE app_name = $1");
  c.prepare("group_insert",
            "INSERT INTO job_group (app_name, title, address_type, address_list, access_token, created_at, updated_at, "
            "max_running) VALUES ($1, $2, $3, $4::text[], $5, " + ts("$6") + ", " + ts("$6") + ", $7) RETURNING " +
                kGroupColumns);
  c.prepare("group_update", "UPDATE job_group SET title = $2, address_type = $3, address_list = $4::text[], "
                            "access_token = $5, updated_at = " + ts("$6") + ", max_running = COALESCE($7, max_running) WHERE id = $1 RETURNING " +
                                kGroupColumns);
  c.prepare("group_job_count", "SELECT count(*) FROM job_info WHERE job_group = $1");
  c.prepare("group_delete", "DELETE FROM job_group WHERE id = $1");
}

void prepare_jobs(pqxx::connection& c) {
  c.prepare("job_get", "SELECT " + kJobColumns + " FROM " + kJobTables + " WHERE id = $1");
  c.prepare("job_lock", "SELECT " + kJobColumns + " FROM " + kJobTablesLocked + " WHERE id = $1 FOR UPDATE");
  c.prepare("job_existing", "SELECT id FROM job_info WHERE id = ANY ($1::bigint[]) ORDER BY id");
  c.prepare("job_children",
            "SELECT j.id, c.child FROM job_info j"
            " LEFT JOIN LATERAL unnest(j.child_job_ids) WITH ORDINALITY AS c(child, n) ON true"
            " WHERE j.id = ANY ($1::bigint[]) ORDER BY j.id, c.n");
  // The job and its schedule state, in one statement.
  c.prepare("job_insert",
            "WITH j AS (INSERT INTO job_info (job_group, job_desc, author, alarm_email, schedule_type, schedule_conf, timezone, "
            "misfire_strategy, executor_route_strategy, executor_handler, executor_param, executor_block_strategy, "
            "executor_timeout, executor_fail_retry_count, retry_interval, glue_type, glue_source, glue_remark, "
            "glue_updated_at, child_job_ids, created_at, "
            "updated_at, name, calendar_id, calendar_mode, dst_gap, dst_repeat, retry_backoff, retry_multiplier, "
            "retry_max_interval, retry_jitter, max_concurrent, priority) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, "
            "$14, $15, $16, $17, $18, " +
                ts("$19") + ", $20::bigint[], " + ts("$19") + ", " + ts("$19") +
                ", $24, NULLIF($25::bigint, 0), $26, $27, $28, $29, $30, $31, $32, $33, $34) RETURNING *), "
                "s AS (INSERT INTO job_schedule (job_id, count_group, trigger_status, trigger_last_time, trigger_next_time) "
                "SELECT id, job_group, $21, $22, $23 FROM j RETURNING *) " + job_columns_of_written(true));
  c.prepare("job_update",
            "WITH j AS (UPDATE job_info SET job_group = $2, job_desc = $3, author = $4, alarm_email = $5, schedule_type = $6, "
            "schedule_conf = $7, timezone = $8, misfire_strategy = $9, executor_route_strategy = $10, "
            "executor_handler = $11, executor_param = $12, executor_block_strategy = $13, executor_timeout = $14, "
            "executor_fail_retry_count = $15, retry_interval = $16, glue_type = $17, child_job_ids = $18::bigint[], "
            "updated_at = " +
                ts("$22") + ", name = CASE WHEN $23 = '' THEN name ELSE $23 END, calendar_id = NULLIF($24::bigint, 0), "
                "calendar_mode = $25, dst_gap = $26, dst_repeat = $27, retry_backoff = $28, retry_multiplier = $29, "
                "retry_max_interval = $30, retry_jitter = $31, max_concurrent = $32, priority = $33 WHERE id = $1 "
                "RETURNING *), s AS (UPDATE job_schedule SET trigger_status = $19, trigger_last_time = $20, "
                "trigger_next_time = $21 WHERE job_id = $1 RETURNING *) " + job_columns_of_written(true));
  // The group's jobs through job_info_group, each one's schedule by its key: the status from
  // `guard` (pg_guard.h), or the planner could read every running job's entry in job_schedule_due.
  // The schedule rows are locked first, in id order, as a scan's advance locks them: in any other
  // order a pause and a scan of the same jobs could each wait for the other.
  c.prepare("job_pause_group",
            "WITH " + guard_cte("1::smallint AS running") + ","
            " locked AS (SELECT s.job_id FROM job_schedule s JOIN job_info j ON j.id = s.job_id, guard"
            " WHERE j.job_group = $1 AND s.trigger_status = guard.running ORDER BY s.job_id FOR UPDATE OF s),"
            " s AS (UPDATE job_schedule s SET trigger_status = 0, trigger_next_time = 0 FROM locked"
            " WHERE s.job_id = locked.job_id RETURNING s.job_id),"
            " j AS (UPDATE job_info SET paused_with_group = true, updated_at = " + ts("$2") +
                " FROM s WHERE job_info.id = s.job_id) SELECT job_id AS id FROM s");
  c.prepare("job_resume_one",
            "WITH j AS (UPDATE job_info SET paused_with_group = false, updated_at = " + ts("$4") +
                " WHERE id = $1 AND job_group = $2 AND paused_with_group"
                " AND EXISTS (SELECT 1 FROM job_schedule WHERE job_id = $1 AND trigger_status = 0) RETURNING id)"
                " UPDATE job_schedule SET trigger_status = 1, trigger_next_time = $3 FROM j WHERE job_id = j.id"
                " AND trigger_status = 0"
                " RETURNING job_id AS id");
  c.prepare("job_clear_paused", "UPDATE job_info SET paused_with_group = false WHERE job_group = $1 AND paused_with_group");
  c.prepare("job_set_status", "WITH j AS (UPDATE job_info SET paused_with_group = false, updated_at = " + ts("$4") +
                                  " WHERE id = $1 RETURNING *), s AS (UPDATE job_schedule SET trigger_status = $2,"
                                  " trigger_next_time = $3 WHERE job_id = $1 RETURNING *) " + job_columns_of_written(true));
  // A stop's cancel of the jobs' decided fires not yet sent (JobStore::set_trigger_status). The
  // pending rows of the whole table are few (a few seconds of fires), so the partial indexes of
  // pending rows find them whatever the jobs' history.
  c.prepare("job_cancel_decided",
            end_runs("",
                     "WHERE a.state = 'pending' AND a.job_id = ANY ($1::bigint[])"
                     " AND a.trigger_type IN ('SCHEDULE', 'MISFIRE')",
                     "", {{"state", "'cancelled'"}, {"alarm_status", "1"}, {"trigger_msg", appended_trigger_msg("$2")}}));
  c.prepare("job_delete", "DELETE FROM job_info WHERE id = $1");
  c.prepare("job_held_runs", "SELECT " + kLogColumns + " FROM job_log_active WHERE job_id = $1 AND " + held_run_condition("$2") +
                                 " ORDER BY id LIMIT " + std::to_string(JobStore::kMaxHeldRunsOfADeletedJob));
  c.prepare("job_group_of", "SELECT job_group FROM job_info WHERE id = $1 FOR KEY SHARE");
}

void prepare_logs(pqxx::connection& c) {
  c.prepare("log_get", "SELECT " + kLogColumns + " FROM job_log WHERE id = $1");
  // job_log_retry_of (sql/0021_retry_backoff.sql): a run leads to at most one retry.
  c.prepare("log_retry_of", "SELECT " + kLogColumns +
                                " FROM job_log WHERE parent_log_id = $1 AND trigger_type = 'RETRY' ORDER BY id LIMIT 1");
  c.prepare("log_groups", "WITH " + guard_cte("$1::bigint[] AS run_ids") +
                              " SELECT id, job_group FROM job_log, guard WHERE id = ANY (guard.run_ids)");
  // Only a run in flight can be locked (and cancelled); a finished one is read from the view.
  c.prepare("log_lock", "SELECT " + kLogColumns + " FROM job_log_active WHERE id = $1 FOR UPDATE");
  c.prepare("log_insert_fire",
            "INSERT INTO job_log_active (job_group, job_id, state, trigger_type, scheduled_time, admin_node, executor_address, "
            "executor_handler, executor_param, shard_index, shard_total, executor_fail_retry_count, parent_log_id) "
            "VALUES ($1, $2, 'pending', $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING " + kLogColumns);
  // By id alone, the guard's value from `guard` (pg_guard.h): from a literal `state = 'pending'`
  // the planner could prove that the partial indexes of unfinished runs hold the row. An
  // operator's cancel alarms nobody (alarm_status 1, docs/alarms.md).
  c.prepare("log_cancel", end_runs(guard_cte("$1::bigint AS run_id, 'pending'::text AS run_state"),
                                   "USING guard WHERE a.id = guard.run_id AND a.state = guard.run_state", "",
                                   {{"state", "'cancelled'"}, {"alarm_status", "1"}}));
  prepare_follow_ups(c);  // the cancel's follow-ups (PgLogStore::cancel_pending)
  // Ranks every log of the job or group (newest first) and deletes the finished ones that are
  // older than $3 and beyond the newest $4; fires still pending, being sent or running are
  // never deleted.
  c.prepare("log_clear",
            "WITH ranked AS ("
            "  SELECT id, state, scheduled_time, row_number() OVER (ORDER BY scheduled_time DESC, id DESC) AS rank"
            "  FROM job_log WHERE ($1::bigint IS NULL OR job_group = $1) AND ($2::bigint IS NULL OR job_id = $2))"
            " DELETE FROM job_log_finished l USING ranked r WHERE l.id = r.id"
            " AND r.state NOT IN ('pending', 'sending', 'triggered')"
            " AND l.state NOT IN ('pending', 'sending', 'triggered')"
            " AND ($3::bigint IS NULL OR r.scheduled_time < $3) AND ($4::bigint IS NULL OR r.rank > $4)");
}

void prepare_scripts(pqxx::connection& c) {
  c.prepare("job_save_glue", "WITH j AS (UPDATE job_info SET glue_source = $2, glue_remark = $3, glue_updated_at = " +
                                 ts("$4") + ", updated_at = " + ts("$4") + " WHERE id = $1 RETURNING *) " +
                                 job_columns_of_written(false));
  c.prepare("version_insert", "INSERT INTO job_logglue (job_id, glue_type, glue_source, glue_remark, created_at) "
                              "VALUES ($1, $2, $3, $4, " + ts("$5") + ")");
  c.prepare("version_prune",
            "DELETE FROM job_logglue WHERE job_id = $1 AND id NOT IN "
            "(SELECT id FROM job_logglue WHERE job_id = $1 ORDER BY id DESC LIMIT $2)");
  c.prepare("version_list", "SELECT " + kVersionColumns + " FROM job_logglue WHERE job_id = $1 ORDER BY id DESC");
  c.prepare("version_get", "SELECT " + kVersionColumns + " FROM job_logglue WHERE id = $1");
}

// The groups a list may show: the scope narrowed to the one group asked for (none of them
// when that group is outside the scope); none at all: every group.
[[noreturn]] void no_job(std::int64_t id) { throw NotFound("job " + std::to_string(id) + " does not exist"); }

}  // namespace

void PgStores::prepare(pqxx::connection& connection) {
  prepare_groups(connection);
  prepare_jobs(connection);
  prepare_logs(connection);
  prepare_scripts(connection);
  prepare_accounts(connection);
  prepare_audit(connection);
  PgOverviewStore::prepare(connection);
}

// ---------------------------------------------------------------------------------------------
// Groups

Page<Group> PgGroupStore::list(const Filter& f) {
  const auto scope = scope_param(f.scope);
  const auto pattern = contains_pattern(f.text);
  return db_.read([&](pqxx::read_transaction& tx) {
    auto rows = tx.exec_prepared("group_list", scope, pattern, f.page.limit, f.page.offset);
    Page<Group> page;
    page.items = all_of<Group>(rows, group_from);
    page.total = page_total(rows, [&] { return tx.exec_prepared1("group_count", scope, pattern)[0].as<std::int64_t>(); });
    return page;
  });
}

std::optional<Group> PgGroupStore::get(std::int64_t id) {
  return db_.read([&](pqxx::read_transaction& tx) { return first_of<Group>(tx.exec_prepared("group_get", id), group_from); });
}

std::optional<Group> PgGroupStore::find_by_app_name(std::string_view app_name) {
  return db_.read([&](pqxx::read_transaction& tx) {
    return first_of<Group>(tx.exec_prepared("group_by_app_name", std::string(app_name)), group_from);
  });
}

Group PgGroupStore::create(const Group& g, const Actor& actor) {
  const auto now = clock_.now_ms();
  return mapped([&] {
    return db_.transact([&](pqxx::work& tx) {
      Group created = group_from(tx.exec_prepared1("group_insert", g.app_name, g.title, g.address_type,
                                                   text_array(g.address_list), g.access_token, now, g.max_running));
      write_audit(tx, now, actor, "group.create", "group", created.id, std::nullopt, to_json(created));
      return created;
    });
  });
}

Group PgGroupStore::update(const Group& g, const Actor& actor) {
  const auto now = clock_.now_ms();
  return mapped([&] {
    return db_.transact([&](pqxx::work& tx) {
      auto before = first_of<Group>(tx.exec_prepared("group_lock", g.id), group_from);
      if (!before) throw NotFound("group " + std::to_string(g.id) + " does not exist");
      Group updated = group_from(tx.exec_prepared1("group_update", g.id, g.title, g.address_type,
                                                   text_array(g.address_list), g.access_token, now,
                                                   std::optional<int>(g.max_running)));
      write_audit(tx, now, actor, "group.update", "group", g.id, to_json(*before), to_json(updated));
      return updated;
    });
  });
}

void PgGroupStore::remove(std::int64_t id, const Actor& actor) {
  const auto now = clock_.now_ms();
  mapped([&] {
    db_.transact([&](pqxx::work& tx) {
      // The row lock conflicts with the key-share lock a concurrent job insert takes on the
      // group, so no job can join the group between the count and the delete.
      auto before = first_of<Group>(tx.exec_prepared("group_lock", id), group_from);
      if (!before) throw NotFound("group " + std::to_string(id) + " does not exist");
      auto jobs = tx.exec_prepared1("group_job_count", id)[0].as<std::int64_t>();
      if (jobs > 0) throw Conflict("group has " + std::to_string(jobs) + (jobs == 1 ? " job" : " jobs"));
      tx.exec_prepared("group_delete", id);
      write_audit(tx, now, actor, "group.delete", "group", id, to_json(*before), std::nullopt);
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Jobs

Page<Job> PgJobStore::list(const Filter& f) {
  KeysetList list;
  list.table = kJobTables;
  list.columns = kJobColumns;
  list.groups = groups_to_list(f.scope, f.job_group);
  list.page = f.page;
  if (f.trigger_status) list.conditions.push_back("trigger_status = " + list.params.add(*f.trigger_status));
  if (f.name) list.conditions.push_back("name = " + list.params.add(*f.name, "text"));
  if (!f.text.empty()) {
    // job_info_text holds the name and three fields lower-cased (sql/0006_lists_at_scale.sql,
    // 0014_job_name_search.sql); a text of
    // one or two characters, too short for trigrams, is looked up among each job's substrings
    // of that length (the length test is decided when the statement is planned).
    const auto text = list.params.add(f.text, "text");
    list.conditions.push_back("id IN (SELECT job_id FROM job_info_text WHERE words LIKE lower(" +
                              list.params.add(contains_pattern(f.text), "text") + ") AND (length(" + text +
                              ") > 2 OR job_info_grams(words) @> ARRAY[lower(" + text + ")]))");
  }
  return db_.read([&](pqxx::read_transaction& tx) { return page_from<Job>(read_keyset_page(tx, list), job_from); });
}

std::optional<Job> PgJobStore::get(std::int64_t id) {
  return db_.read([&](pqxx::read_transaction& tx) { return first_of<Job>(tx.exec_prepared("job_get", id), job_from); });
}

std::vector<std::int64_t> PgJobStore::existing(const std::vector<std::int64_t>& ids) {
  if (ids.empty()) return {};
  return db_.read([&](pqxx::read_transaction& tx) {
    return all_of<std::int64_t>(tx.exec_prepared("job_existing", bigint_array(ids)),
                                [](const pqxx::row& r) { return r[0].as<std::int64_t>(); });
  });
}

std::map<std::int64_t, std::vector<std::int64_t>> PgJobStore::children_of(const std::vector<std::int64_t>& ids) {
  if (ids.empty()) return {};
  return db_.read([&](pqxx::read_transaction& tx) {
    std::map<std::int64_t, std::vector<std::int64_t>> out;
    for (const auto& row : tx.exec_prepared("job_children", bigint_array(ids))) {
      auto& children = out[row["id"].as<std::int64_t>()];
      if (!row["child"].is_null()) children.push_back(row["child"].as<std::int64_t>());
    }
    return out;
  });
}

Job PgJobStore::create(const Job& j, const Actor& actor) {
  const auto now = clock_.now_ms();
  return mapped([&] {
    return db_.transact([&](pqxx::work& tx) {
      Job created = job_from(tx.exec_prepared1(
          "job_insert", j.job_group, j.job_desc, j.author, j.alarm_email, text(j.schedule_type), j.schedule_conf, j.timezone,
          text(j.misfire_strategy), text(j.executor_route_strategy), j.executor_handler, j.executor_param, text(j.executor_block_strategy),
          j.executor_timeout, j.executor_fail_retry_count, j.retry_interval, text(j.glue_type), j.glue_source, j.glue_remark,
          now, bigint_array(j.child_job_ids), j.trigger_status, j.trigger_last_time, j.trigger_next_time,
          j.name,  // '' is named after the id (migration 0012's trigger)
          j.calendar.calendar_id, text(j.calendar.mode), std::string(common::dst_gap_name(j.dst.gap)),
          std::string(common::dst_repeat_name(j.dst.repeat)), std::string(to_string(j.retry.backoff)),
          j.retry.multiplier, j.retry.max_interval, j.retry.jitter_percent, j.max_concurrent, j.priority));
      if (auto remark = first_script_version_remark(created)) {
        tx.exec_prepared("version_insert", created.id, text(created.glue_type), created.glue_source, *remark, now);
      }
      write_audit(tx, now, actor, "job.create", "job", created.id, std::nullopt, to_json(created));
      return created;
    });
  });
}

Job PgJobStore::update(const Job& j, const Actor& actor) {
  const auto now = clock_.now_ms();
  return mapped([&] {
    return db_.transact([&](pqxx::work& tx) {
      auto before = first_of<Job>(tx.exec_prepared("job_lock", j.id), job_from);
      if (!before) no_job(j.id);
      Job updated = job_from(tx.exec_prepared1(
          "job_update", j.id, j.job_group, j.job_desc, j.author, j.alarm_email, text(j.schedule_type), j.schedule_conf,
          j.timezone, text(j.misfire_strategy), text(j.executor_route_strategy), j.executor_handler, j.executor_param,
          text(j.executor_block_strategy), j.executor_timeout, j.executor_fail_retry_count, j.retry_interval, text(j.glue_type),
          bigint_array(j.child_job_ids), j.trigger_status, j.trigger_last_time, j.trigger_next_time, now, j.name,
          j.calendar.calendar_id, text(j.calendar.mode), std::string(common::dst_gap_name(j.dst.gap)),
          std::string(common::dst_repeat_name(j.dst.repeat)), std::string(to_string(j.retry.backoff)),
          j.retry.multiplier, j.retry.max_interval, j.retry.jitter_percent, j.max_concurrent, j.priority));
      if (before->trigger_status == 1 && updated.trigger_status == 0) {
        tx.exec_prepared("job_cancel_decided", bigint_array({j.id}), stopped_fire_note(actor, "job stopped"));
      }
      write_audit(tx, now, actor, "job.update", "job", j.id, to_json(*before), to_json(updated));
      return updated;
    });
  });
}

std::vector<JobLog> PgJobStore::remove(std::int64_t id, const Actor& actor) {
  const auto now = clock_.now_ms();
  return mapped([&] {
    return db_.transact([&](pqxx::work& tx) {
      auto before = first_of<Job>(tx.exec_prepared("job_lock", id), job_from);
      if (!before) no_job(id);
      std::vector<JobLog> held;
      for (const auto& r : tx.exec_prepared("job_held_runs", id, now)) held.push_back(log_from(r));
      tx.exec_prepared("job_delete", id);  // its logs and script versions go with it (ON DELETE CASCADE)
      write_audit(tx, now, actor, "job.delete", "job", id, to_json(*before), std::nullopt);
      return held;
    });
  });
}

Job PgJobStore::set_trigger_status(std::int64_t id, int status, std::int64_t next_time, std::string_view action,
                                   const Actor& actor) {
  const auto now = clock_.now_ms();
  return mapped([&] {
    return db_.transact([&](pqxx::work& tx) {
      auto before = first_of<Job>(tx.exec_prepared("job_lock", id), job_from);
      if (!before) no_job(id);
      Job updated = job_from(tx.exec_prepared1("job_set_status", id, status, next_time, now));
      if (before->trigger_status == 1 && updated.trigger_status == 0) {
        tx.exec_prepared("job_cancel_decided", bigint_array({id}), stopped_fire_note(actor, "job stopped"));
      }
      write_audit(tx, now, actor, action, "job", id, to_json(*before), to_json(updated));
      return updated;
    });
  });
}

std::vector<std::int64_t> PgJobStore::pause_group(std::int64_t group, const Actor& actor) {
  const auto now = clock_.now_ms();
  return mapped([&] {
    return db_.transact([&](pqxx::work& tx) {
      std::vector<std::int64_t> paused;
      for (const auto& row : tx.exec_prepared("job_pause_group", group, now)) paused.push_back(row[0].as<std::int64_t>());
      std::sort(paused.begin(), paused.end());
      if (!paused.empty()) tx.exec_prepared("job_cancel_decided", bigint_array(paused), stopped_fire_note(actor, "group paused"));
      write_audit(tx, now, actor, "group.pause", "group", group, std::nullopt, nlohmann::json{{"jobs", paused}});
      return paused;
    });
  });
}

std::vector<std::int64_t> PgJobStore::resume_group(std::int64_t group, const std::map<std::int64_t, std::int64_t>& next_times,
                                                   const Actor& actor) {
  const auto now = clock_.now_ms();
  return mapped([&] {
    return db_.transact([&](pqxx::work& tx) {
      std::vector<std::int64_t> resumed;
      for (const auto& [id, next] : next_times) {  // ascending ids: one lock order for every resume
        if (!tx.exec_prepared("job_resume_one", id, group, next, now).empty()) resumed.push_back(id);
      }
      tx.exec_prepared("job_clear_paused", group);
      write_audit(tx, now, actor, "group.resume", "group", group, std::nullopt, nlohmann::json{{"jobs", resumed}});
      return resumed;
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Logs

namespace {

// The condition a status filter stands for, written as the partial indexes' predicates are
// (sql/0006_lists_at_scale.sql) so the planner can prove they apply; none for no filter.
std::optional<std::string> states_for(LogStore::Filter::Status status) {
  using Status = LogStore::Filter::Status;
  switch (status) {
    case Status::kAll: return std::nullopt;
    case Status::kSuccess: return "state = 'succeeded'";
    case Status::kFailure: return "state IN ('failed', 'lost')";
    case Status::kRunning: return "state = 'triggered'";
    case Status::kPending: return "state = 'pending'";
    case Status::kCancelled: return "state = 'cancelled'";
  }
  throw std::invalid_argument("unknown log status filter " + std::to_string(static_cast<int>(status)));
}

nlohmann::json clear_json(const LogStore::ClearRequest& r, std::int64_t deleted) {
  auto opt = [](const std::optional<std::int64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  return {{"jobGroup", opt(r.job_group)}, {"jobId", opt(r.job_id)}, {"before", opt(r.before)},
          {"keep", opt(r.keep)},          {"deleted", deleted}};
}

}  // namespace

Page<JobLog> PgLogStore::list(const Filter& f) {
  KeysetList list;
  list.table = "job_log";
  list.columns = kLogColumns;
  list.time_column = "scheduled_time";
  list.groups = groups_to_list(f.scope, f.job_group);
  list.page = f.page;
  if (f.job_id) list.conditions.push_back("job_id = " + list.params.add(*f.job_id));
  if (auto states = states_for(f.status)) list.conditions.push_back(*states);
  if (f.from) list.conditions.push_back("scheduled_time >= " + list.params.add(*f.from));
  if (f.to) list.conditions.push_back("scheduled_time < " + list.params.add(*f.to));
  // Through job_log_backfill (sql/0022_backfill.sql): a backfill's runs, newest first.
  if (f.backfill_id) list.conditions.push_back("backfill_id = " + list.params.add(*f.backfill_id));
  return db_.read([&](pqxx::read_transaction& tx) { return page_from<JobLog>(read_keyset_page(tx, list), log_from); });
}

std::optional<JobLog> PgLogStore::get(std::int64_t id) {
  return db_.read([&](pqxx::read_transaction& tx) { return first_of<JobLog>(tx.exec_prepared("log_get", id), log_from); });
}

std::optional<JobLog> PgLogStore::retry_of(std::int64_t run_id) {
  return db_.read(
      [&](pqxx::read_transaction& tx) { return first_of<JobLog>(tx.exec_prepared("log_retry_of", run_id), log_from); });
}

std::map<std::int64_t, std::int64_t> PgLogStore::groups_of(const std::vector<std::int64_t>& ids) {
  if (ids.empty()) return {};
  return db_.read([&](pqxx::read_transaction& tx) {
    std::map<std::int64_t, std::int64_t> out;
    for (const auto& r : tx.exec_prepared("log_groups", bigint_array(ids))) {
      out.emplace(r[0].as<std::int64_t>(), r[1].as<std::int64_t>());
    }
    return out;
  });
}

JobLog PgLogStore::create_fire(const JobLog& l, const Actor& actor) {
  if (l.trigger_type != TriggerType::kManual && l.trigger_type != TriggerType::kApi) {
    throw std::invalid_argument("a fire asked for through the API is MANUAL or API, not " + text(l.trigger_type));
  }
  const auto now = clock_.now_ms();
  return mapped([&] {
    return db_.transact([&](pqxx::work& tx) {
      auto group = tx.exec_prepared("job_group_of", l.job_id);
      if (group.empty()) no_job(l.job_id);
      JobLog created = log_from(tx.exec_prepared1(
          "log_insert_fire", group[0][0].as<std::int64_t>(), l.job_id, text(l.trigger_type), l.scheduled_time, l.admin_node,
          l.executor_address, l.executor_handler, l.executor_param, l.shard_index, l.shard_total,
          l.executor_fail_retry_count, l.parent_log_id));
      write_audit(tx, now, actor, "job.trigger", "job", l.job_id, std::nullopt, to_json(created));
      return created;
    });
  });
}

bool PgLogStore::cancel_pending(std::int64_t log_id, const Actor& actor) {
  const auto now = clock_.now_ms();
  return mapped([&] {
    return db_.transact([&](pqxx::work& tx) {
      auto before = first_of<JobLog>(tx.exec_prepared("log_lock", log_id), log_from);
      if (!before) {
        if (!tx.exec_prepared("log_get", log_id).empty()) return false;  // finished
        throw NotFound("log " + std::to_string(log_id) + " does not exist");
      }
      auto rows = tx.exec_prepared("log_cancel", log_id);
      if (rows.empty()) return false;
      const JobLog cancelled = log_from(rows[0]);
      // An end like any other (run_end.h): a FIX_DELAY job waiting for this fire gets its next
      // time. Any fire the planner adds is owned by the node that owned the cancelled one.
      write_follow_ups(tx, cancelled, follow_ups_of(RunEnd::kCancelled, now, cancelled.admin_node.value_or("")));
      write_audit(tx, now, actor, "log.cancel", "log", log_id, to_json(*before), to_json(cancelled));
      return true;
    });
  });
}

std::int64_t PgLogStore::clear(const ClearRequest& r, const Actor& actor) {
  const auto now = clock_.now_ms();
  return mapped([&] {
    return db_.transact([&](pqxx::work& tx) {
      auto deleted = static_cast<std::int64_t>(
          tx.exec_prepared("log_clear", r.job_group, r.job_id, r.before, r.keep).affected_rows());
      write_audit(tx, now, actor, "log.clear", "log", std::nullopt, std::nullopt, clear_json(r, deleted));
      return deleted;
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Script versions

Job PgScriptStore::save_version(std::int64_t job_id, const std::string& glue_source, const std::string& glue_remark,
                                const Actor& actor) {
  const auto now = clock_.now_ms();
  return mapped([&] {
    return db_.transact([&](pqxx::work& tx) {
      auto before = first_of<Job>(tx.exec_prepared("job_lock", job_id), job_from);
      if (!before) no_job(job_id);
      Job saved = job_from(tx.exec_prepared1("job_save_glue", job_id, glue_source, glue_remark, now));
      tx.exec_prepared("version_insert", job_id, text(saved.glue_type), glue_source, glue_remark, now);
      tx.exec_prepared("version_prune", job_id, kVersionsKept);
      write_audit(tx, now, actor, "script.save", "script", job_id, to_json(*before), to_json(saved));
      return saved;
    });
  });
}

std::vector<ScriptVersion> PgScriptStore::versions(std::int64_t job_id) {
  return db_.read([&](pqxx::read_transaction& tx) {
    return all_of<ScriptVersion>(tx.exec_prepared("version_list", job_id), version_from);
  });
}

std::optional<ScriptVersion> PgScriptStore::get_version(std::int64_t version_id) {
  return db_.read([&](pqxx::read_transaction& tx) {
    return first_of<ScriptVersion>(tx.exec_prepared("version_get", version_id), version_from);
  });
}

}  // namespace cronwheel::admin
