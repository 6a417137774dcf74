#include "admin/pg/pg_apply_store.h"

#include <set>

#include "admin/model/calendar_dates.h"
#include "admin/model/stores.h"
#include "admin/model/workflow_json.h"
#include "admin/pg/pg_calendar_store.h"
#include "admin/pg/pg_store_support.h"

namespace cronwheel::admin {

using namespace pg;

namespace {

const std::string kGroupsNamed = "SELECT id FROM job_group WHERE app_name = ANY ($1::text[])";

JobIdentity identity_from(const pqxx::row& row) {
  JobIdentity identity;
  identity.id = row["id"].as<std::int64_t>();
  identity.job_group = row["job_group"].as<std::int64_t>();
  identity.name = row["name"].as<std::string>();
  identity.children = nlohmann::json::parse(row["child_job_ids"].as<std::string>()).get<std::vector<std::int64_t>>();
  identity.broadcast = row["broadcast"].as<bool>();
  identity.calendar_id = row["calendar_id"].as<std::int64_t>();
  return identity;
}

WorkflowIdentity workflow_identity_from(const pqxx::row& row) {
  WorkflowIdentity identity;
  identity.id = row["id"].as<std::int64_t>();
  identity.job_group = row["job_group"].as<std::int64_t>();
  identity.name = row["name"].as<std::string>();
  identity.job_ids = nlohmann::json::parse(row["job_ids"].as<std::string>()).get<std::vector<std::int64_t>>();
  identity.calendar_id = row["calendar_id"].as<std::int64_t>();
  return identity;
}

// Reads the snapshot in `tx`; with `lock`, the named groups' rows, their workflows' and their
// jobs' stay locked until the transaction ends, and every calendar's. Workflows are locked before
// jobs, the order PgWorkflowStore takes them in (a workflow's row, then its jobs' FOR KEY SHARE);
// calendars after both, as a job's or workflow's write takes its calendar's (its foreign key's FOR
// KEY SHARE, which the calendars' FOR NO KEY UPDATE lets through: jobs elsewhere may still name
// them, and only a change of the calendar itself waits for the apply).
template <class Tx>
JobsSnapshot read_snapshot(Tx& tx, const std::vector<std::string>& app_names, bool lock) {
  JobsSnapshot s;
  const auto names = text_array(app_names);
  if (lock) tx.exec_prepared("apply_groups_lock", names);
  s.groups = all_of<Group>(tx.exec_prepared("apply_groups"), group_from);
  s.workflows = all_of<Workflow>(
      tx.exec_prepared(lock ? "apply_workflows_lock" : (app_names.empty() ? "apply_workflows_all" : "apply_workflows"), names),
      workflow_from);
  s.jobs = all_of<Job>(tx.exec_prepared(lock ? "apply_jobs_lock" : (app_names.empty() ? "apply_jobs_all" : "apply_jobs"), names),
                       job_from);
  s.identities = all_of<JobIdentity>(tx.exec_prepared("apply_identities"), identity_from);
  s.workflow_identities = all_of<WorkflowIdentity>(tx.exec_prepared("apply_workflow_identities"), workflow_identity_from);
  if (lock) tx.exec_prepared("apply_calendars_lock");
  s.calendars = all_of<Calendar>(tx.exec_prepared("apply_calendars"), calendar_from);
  std::vector<std::int64_t> workflow_ids;
  for (const auto& w : s.workflows) workflow_ids.push_back(w.id);
  // Under the workflows' row locks: a run is created only under its workflow's lock, so none
  // starts before this transaction ends.
  const pqxx::result active = tx.exec_prepared("apply_workflow_active", bigint_array(workflow_ids));
  for (const pqxx::row& row : active) s.active_runs[row["workflow_id"].as<std::int64_t>()] = row["run_id"].as<std::int64_t>();
  s.channels = all_of<AlarmChannel>(tx.exec_prepared("alarm_channel_list"), channel_from);
  s.users = all_of<User>(tx.exec_prepared("apply_users"), user_from);
  return s;
}

std::vector<std::int64_t> job_ids_of(const WorkflowGraph& graph) {
  std::set<std::int64_t> ids;
  for (const auto& n : graph.nodes) ids.insert(n.job_id);
  return {ids.begin(), ids.end()};
}

}  // namespace

void PgApplyStore::prepare(pqxx::connection& c) {
  c.prepare("apply_lock", "SELECT lock_name FROM job_lock WHERE lock_name = 'apply_lock' FOR UPDATE");
  c.prepare("apply_groups_lock", "SELECT id FROM job_group WHERE app_name = ANY ($1::text[]) ORDER BY id FOR UPDATE");
  c.prepare("apply_groups", "SELECT " + kGroupColumns + " FROM job_group ORDER BY app_name COLLATE \"C\"");
  c.prepare("apply_jobs", "SELECT " + kJobColumns + " FROM " + kJobTables + " WHERE job_group IN (" + kGroupsNamed +
                              ") ORDER BY job_group, name COLLATE \"C\"");
  c.prepare("apply_jobs_all", "SELECT " + kJobColumns + " FROM " + kJobTables + " WHERE $1::text[] IS NOT NULL "
                              "ORDER BY job_group, name COLLATE \"C\"");
  // Locked in id order, as the scan and a group's pause lock schedules (else each could wait for
  // the other until deadlock_timeout), and answered in the order of the other reads.
  c.prepare("apply_jobs_lock", "WITH locked AS (SELECT " + kJobColumns + " FROM " + kJobTablesLocked +
                                   " WHERE job_group IN (" + kGroupsNamed + ") ORDER BY job_info.id FOR UPDATE)"
                                   " SELECT * FROM locked ORDER BY job_group, name COLLATE \"C\"");
  c.prepare("apply_identities", "SELECT id, job_group, name, array_to_json(child_job_ids)::text AS child_job_ids, "
                                "executor_route_strategy = 'SHARDING_BROADCAST' AS broadcast, COALESCE(calendar_id, 0) AS calendar_id "
                                "FROM job_info ORDER BY id");
  c.prepare("apply_workflows_lock", "SELECT " + kWorkflowColumns + " FROM workflow WHERE job_group IN (" + kGroupsNamed +
                                        ") ORDER BY id FOR UPDATE");
  c.prepare("apply_workflows", "SELECT " + kWorkflowColumns + " FROM workflow WHERE job_group IN (" + kGroupsNamed +
                                   ") ORDER BY job_group, name COLLATE \"C\"");
  c.prepare("apply_workflows_all", "SELECT " + kWorkflowColumns + " FROM workflow WHERE $1::text[] IS NOT NULL "
                                   "ORDER BY job_group, name COLLATE \"C\"");
  c.prepare("apply_workflow_identities",
            "SELECT w.id, w.job_group, w.name, COALESCE((SELECT array_to_json(array_agg(j.job_id ORDER BY j.job_id)) "
            "FROM workflow_job j WHERE j.workflow_id = w.id), '[]')::text AS job_ids, "
            "COALESCE(w.calendar_id, 0) AS calendar_id FROM workflow w ORDER BY w.id");
  c.prepare("apply_calendars_lock", "SELECT id FROM calendar ORDER BY id FOR NO KEY UPDATE");
  c.prepare("apply_calendars", "SELECT " + kCalendarColumns + " FROM calendar c ORDER BY c.name COLLATE \"C\"");
  c.prepare("apply_calendar_ids", "SELECT id, name FROM calendar");
  c.prepare("apply_workflow_active", "SELECT workflow_id, min(id) AS run_id FROM workflow_run "
                                     "WHERE workflow_id = ANY ($1::bigint[]) AND state IN ('waiting', 'running') "
                                     "GROUP BY workflow_id");
  c.prepare("apply_workflow_insert",
            "INSERT INTO workflow (job_group, name, description, author, alarm_email, schedule_type, schedule_conf, "
            "timezone, misfire_strategy, overlap, max_parallel, timeout_seconds, params, graph, trigger_status, "
            "trigger_next_time, created_at, updated_at, calendar_id, calendar_mode) VALUES ($1, $2, $3, $4, $5, $6, "
            "$7, $8, $9, $10, $11, $12, $13::jsonb, $14::jsonb, $15, $16, " + ts("$17") + ", " + ts("$17") +
                ", NULLIF($18::bigint, 0), $19) RETURNING id");
  // Guarded by the version the plan read (the row is locked since, so it holds), as
  // PgWorkflowStore::update is.
  c.prepare("apply_workflow_update",
            "UPDATE workflow SET description = $2, author = $3, alarm_email = $4, schedule_type = $5, "
            "schedule_conf = $6, timezone = $7, misfire_strategy = $8, overlap = $9, max_parallel = $10, "
            "timeout_seconds = $11, params = $12::jsonb, graph = $13::jsonb, trigger_status = $14, "
            "trigger_next_time = $15, version = version + 1, updated_at = " + ts("$16") +
                ", calendar_id = NULLIF($18::bigint, 0), calendar_mode = $19 WHERE id = $1 AND version = $17");
  c.prepare("apply_workflow_status", "UPDATE workflow SET trigger_status = $2, trigger_next_time = $3, updated_at = " +
                                         ts("$4") + " WHERE id = $1 AND version = $5");
  c.prepare("apply_workflow_delete", "DELETE FROM workflow WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM workflow_run r "
                                     "WHERE r.workflow_id = $1 AND r.state IN ('waiting', 'running'))");
  c.prepare("apply_workflow_jobs_clear", "DELETE FROM workflow_job WHERE workflow_id = $1");
  c.prepare("apply_workflow_jobs_insert",
            "INSERT INTO workflow_job (workflow_id, job_id) SELECT $1, unnest($2::bigint[]) ON CONFLICT DO NOTHING");
  // Answers whether the file stopped the job: a stop cancels its decided fires
  // (JobStore::set_trigger_status). The job's row is locked before it is read.
  c.prepare("apply_job_update",
            "WITH old AS (SELECT trigger_status AS old_status FROM " + kJobTablesLocked +
            " WHERE id = $1 FOR UPDATE), j AS ("
            "UPDATE job_info SET job_desc = $2, author = $3, alarm_email = $4, schedule_type = $5, schedule_conf = $6, "
            "timezone = $7, misfire_strategy = $8, executor_route_strategy = $9, executor_handler = $10, "
            "executor_param = $11, executor_block_strategy = $12, executor_timeout = $13, "
            "executor_fail_retry_count = $14, retry_interval = $15, glue_type = $16, child_job_ids = $17::bigint[], "
            // a job started or stopped by the file is no longer one its group's pause stopped
            "paused_with_group = CASE WHEN old.old_status <> $18 THEN false ELSE paused_with_group END, "
            "updated_at = " + ts("$20") + ", "
            "calendar_id = NULLIF($21::bigint, 0), calendar_mode = $22, dst_gap = $23, dst_repeat = $24, "
            "retry_backoff = $25, retry_multiplier = $26, retry_max_interval = $27, retry_jitter = $28, "
            "max_concurrent = $29, priority = $30 FROM old WHERE id = $1 RETURNING id), "
            "s AS (UPDATE job_schedule SET trigger_status = $18, trigger_next_time = $19 FROM j WHERE job_id = j.id"
            " RETURNING trigger_status) "
            "SELECT old.old_status = 1 AND s.trigger_status = 0 AS stopped FROM old, s");
  c.prepare("apply_job_children", "UPDATE job_info SET child_job_ids = $2::bigint[] WHERE id = $1");
  c.prepare("apply_version_insert", "INSERT INTO job_logglue (job_id, glue_type, glue_source, glue_remark, created_at) "
                                    "VALUES ($1, $2, $3, $4, " + ts("$5") + ")");
  c.prepare("apply_users", "SELECT " + kUserColumns + " FROM app_user u ORDER BY u.id");
  // A user made by a file has no password ('', which no password verifies) until an admin sets one.
  c.prepare("apply_user_insert", "INSERT INTO app_user (username, password_hash, role, created_at, updated_at) "
                                 "VALUES ($1, '', $2, " + ts("$3") + ", " + ts("$3") + ") RETURNING id");
  c.prepare("apply_user_role", "UPDATE app_user SET role = $2, updated_at = " + ts("$3") + " WHERE id = $1");
  c.prepare("apply_admins", "SELECT count(*) FROM app_user WHERE role = 'admin'");
  c.prepare("apply_channel_jobs", "UPDATE alarm_channel SET jobs = $2::bigint[], updated_at = " + ts("$3") + " WHERE id = $1");
}

JobsSnapshot PgApplyStore::snapshot(const std::vector<std::string>& app_names) {
  return db_.read([&](pqxx::read_transaction& tx) { return read_snapshot(tx, app_names, false); });
}

ApplyOutcome PgApplyStore::apply(const std::vector<std::string>& app_names,
                                 const std::function<ApplyPlan(const JobsSnapshot&)>& plan, bool dry_run, const Actor& actor) {
  const auto now = clock_.now_ms();
  return mapped([&] {
    return db_.transact([&](pqxx::work& tx) {
      tx.exec_prepared("apply_lock");
      ApplyOutcome outcome;
      outcome.plan = plan(read_snapshot(tx, app_names, true));
      const ApplyPlan& p = outcome.plan;
      if (dry_run) return outcome;
      if (p.refusal) throw Conflict(p.refusal->message, p.refusal->field);
      if (p.empty()) return outcome;

      // Calendars first: the plan's jobs and workflows may name the ones it creates.
      for (const auto& c : p.create_calendars) {
        const auto id = tx.exec_prepared1("cal_insert", c.name, c.description, c.time_zone,
                                          business_days_bits(c.business_days), now)[0]
                            .as<std::int64_t>();
        write_calendar_days(tx, id, stored_dates(c.dates), c.excluded_times);
        outcome.created_calendars[c.name] = id;
      }
      for (const auto& c : p.update_calendars) {
        lock_calendar_for_change(tx, c.id, c.version);
        tx.exec_prepared("cal_update", c.id, c.name, c.description, c.time_zone, business_days_bits(c.business_days), now);
        write_calendar_days(tx, c.id, stored_dates(c.dates), c.excluded_times);
      }
      std::map<std::string, std::int64_t> calendar_ids;
      for (const auto& row : tx.exec_prepared("apply_calendar_ids")) {
        calendar_ids[row["name"].as<std::string>()] = row["id"].as<std::int64_t>();
      }
      auto calendar_id = [&](const std::string& name) -> std::int64_t { return name.empty() ? 0 : calendar_ids.at(name); };

      std::map<std::string, std::int64_t> group_ids;
      for (const auto& g : p.create_groups) {
        auto created = group_from(tx.exec_prepared1("group_insert", g.app_name, g.title, g.address_type,
                                                    text_array(g.address_list), g.access_token, now, g.max_running));
        outcome.created_groups[g.app_name] = created.id;
      }
      for (const auto& g : p.update_groups) {
        tx.exec_prepared("group_update", g.id, g.title, g.address_type, text_array(g.address_list), g.access_token, now,
                         std::optional<int>(g.max_running));
      }
      for (const auto& g : tx.exec_prepared("apply_groups")) group_ids[g["app_name"].as<std::string>()] = g["id"].as<std::int64_t>();

      // New jobs first, without children: children may name each other.
      std::map<JobRef, std::int64_t> job_ids;
      for (const auto& planned : p.create_jobs) {
        Job j = planned.job;
        j.calendar.calendar_id = calendar_id(planned.calendar);
        const auto group = j.job_group != 0 ? j.job_group : group_ids.at(planned.app_name);
        Job created = job_from(tx.exec_prepared1(
            "job_insert", group, j.job_desc, j.author, j.alarm_email, text(j.schedule_type), j.schedule_conf, j.timezone,
            text(j.misfire_strategy), text(j.executor_route_strategy), j.executor_handler, j.executor_param,
            text(j.executor_block_strategy), j.executor_timeout, j.executor_fail_retry_count, j.retry_interval,
            text(j.glue_type), j.glue_source, j.glue_remark, now, bigint_array({}), j.trigger_status, j.trigger_last_time,
            j.trigger_next_time, j.name, j.calendar.calendar_id, text(j.calendar.mode),
            std::string(common::dst_gap_name(j.dst.gap)), std::string(common::dst_repeat_name(j.dst.repeat)),
            std::string(to_string(j.retry.backoff)), j.retry.multiplier, j.retry.max_interval, j.retry.jitter_percent,
            j.max_concurrent, j.priority));
        // The script's history: its earlier versions, oldest first, then the one it has now.
        for (const auto& version : planned.history) {
          tx.exec_prepared("apply_version_insert", created.id, text(version.glue_type), version.glue_source,
                           version.glue_remark, version.created_at);
        }
        if (auto remark = first_script_version_remark(created)) {
          tx.exec_prepared("version_insert", created.id, text(created.glue_type), created.glue_source, *remark, now);
        }
        if (!planned.history.empty()) tx.exec_prepared("version_prune", created.id, ScriptStore::kVersionsKept);
        job_ids[{planned.app_name, j.name}] = created.id;
        outcome.created_jobs[{planned.app_name, j.name}] = created.id;
      }
      for (const auto& row : tx.exec_prepared("apply_identities")) {
        const auto group = row["job_group"].as<std::int64_t>();
        for (const auto& [app, id] : group_ids) {
          if (id == group) job_ids.emplace(JobRef{app, row["name"].as<std::string>()}, row["id"].as<std::int64_t>());
        }
      }
      auto ids_of = [&](const std::vector<JobRef>& refs) {
        std::vector<std::int64_t> ids;
        for (const auto& ref : refs) ids.push_back(job_ids.at(ref));
        return ids;
      };
      for (const auto& planned : p.create_jobs) {
        if (!planned.children.empty()) {
          tx.exec_prepared("apply_job_children", job_ids.at({planned.app_name, planned.job.name}),
                           bigint_array(ids_of(planned.children)));
        }
      }
      for (const auto& planned : p.update_jobs) {
        const Job& j = planned.job;
        const auto updated = tx.exec_prepared1("apply_job_update", j.id, j.job_desc, j.author, j.alarm_email, text(j.schedule_type),
                         j.schedule_conf, j.timezone, text(j.misfire_strategy), text(j.executor_route_strategy),
                         j.executor_handler, j.executor_param, text(j.executor_block_strategy), j.executor_timeout,
                         j.executor_fail_retry_count, j.retry_interval, text(j.glue_type),
                         bigint_array(ids_of(planned.children)), j.trigger_status, j.trigger_next_time, now,
                         calendar_id(planned.calendar), text(j.calendar.mode), std::string(common::dst_gap_name(j.dst.gap)),
                         std::string(common::dst_repeat_name(j.dst.repeat)), std::string(to_string(j.retry.backoff)),
                         j.retry.multiplier, j.retry.max_interval, j.retry.jitter_percent, j.max_concurrent, j.priority);
        if (updated["stopped"].as<bool>()) {
          tx.exec_prepared("job_cancel_decided", bigint_array({j.id}), stopped_fire_note(actor, "job stopped"));
          outcome.stopped_jobs.push_back(j.id);
        } else {
          outcome.changed_jobs.push_back(j.id);
        }
        if (planned.script_changed) {
          tx.exec_prepared("job_save_glue", j.id, j.glue_source, j.glue_remark, now);
          tx.exec_prepared("version_insert", j.id, text(j.glue_type), j.glue_source, j.glue_remark, now);
          tx.exec_prepared("version_prune", j.id, ScriptStore::kVersionsKept);
        }
      }
      // Workflows, before jobs are deleted: a job leaves the workflows that ran it first.
      for (auto id : p.delete_workflows) {
        if (tx.exec_prepared("apply_workflow_delete", id).affected_rows() == 0) {
          throw Conflict("workflow " + std::to_string(id) + " has a run waiting or running: cancel it first");
        }
      }
      // The graph with its nodes' jobs resolved, and the jobs recorded as the workflow's.
      auto resolved = [&](const PlannedWorkflow& planned) {
        WorkflowGraph graph = planned.workflow.graph;
        for (std::size_t i = 0; i < graph.nodes.size(); ++i) graph.nodes[i].job_id = job_ids.at(planned.node_jobs.at(i));
        return graph;
      };
      auto record_jobs = [&](std::int64_t workflow_id, const WorkflowGraph& graph) {
        tx.exec_prepared("apply_workflow_jobs_clear", workflow_id);
        tx.exec_prepared("apply_workflow_jobs_insert", workflow_id, bigint_array(job_ids_of(graph)));
      };
      for (const auto& planned : p.update_workflows) {
        const Workflow& w = planned.workflow;
        if (!planned.fields_changed) {
          if (tx.exec_prepared("apply_workflow_status", w.id, w.trigger_status, w.trigger_next_time, now, w.version)
                  .affected_rows() == 0) {
            throw Conflict("workflow " + w.name + " was changed meanwhile", "version");
          }
          continue;
        }
        const WorkflowGraph graph = resolved(planned);
        if (tx.exec_prepared("apply_workflow_update", w.id, w.description, w.author, w.alarm_email, text(w.schedule_type),
                             w.schedule_conf, w.timezone, text(w.misfire_strategy), text(w.overlap), w.max_parallel,
                             w.timeout_seconds, params_json(w.params).dump(), graph_json(graph).dump(), w.trigger_status,
                             w.trigger_next_time, now, w.version, calendar_id(planned.calendar), text(w.calendar.mode))
                .affected_rows() == 0) {
          throw Conflict("workflow " + w.name + " was changed meanwhile", "version");
        }
        record_jobs(w.id, graph);
      }
      for (const auto& planned : p.create_workflows) {
        const Workflow& w = planned.workflow;
        const auto group = w.job_group != 0 ? w.job_group : group_ids.at(planned.app_name);
        const WorkflowGraph graph = resolved(planned);
        const auto id = tx.exec_prepared1("apply_workflow_insert", group, w.name, w.description, w.author, w.alarm_email,
                                          text(w.schedule_type), w.schedule_conf, w.timezone, text(w.misfire_strategy),
                                          text(w.overlap), w.max_parallel, w.timeout_seconds, params_json(w.params).dump(),
                                          graph_json(graph).dump(), w.trigger_status, w.trigger_next_time, now,
                                          calendar_id(planned.calendar), text(w.calendar.mode))[0]
                            .as<std::int64_t>();
        record_jobs(id, graph);
        outcome.created_workflows[{planned.app_name, w.name}] = id;
      }
      for (auto id : p.delete_jobs) {
        // Its held runs, read just before they go with it, as JobStore::remove reads them.
        for (const auto& r : tx.exec_prepared("job_held_runs", id, now)) outcome.deleted_held_runs.push_back(log_from(r));
        tx.exec_prepared("job_delete", id);  // its runs and versions with it
      }
      // Calendars no job or workflow names any more (their dates and times go with them).
      for (auto id : p.delete_calendars) tx.exec_prepared("cal_delete", id);
      for (const auto& channel : p.channel_jobs) {
        auto ids = channel.kept;
        for (auto id : ids_of(channel.named)) ids.push_back(id);
        tx.exec_prepared("apply_channel_jobs", channel.channel_id, bigint_array(ids), now);
      }
      bool demotes = false;
      for (const auto& planned : p.users) {
        std::vector<std::int64_t> groups;
        for (const auto& name : planned.group_names) groups.push_back(group_ids.at(name));
        auto id = planned.user.id;
        if (id == 0) {
          id = tx.exec_prepared1("apply_user_insert", planned.user.username, planned.user.role, now)[0].as<std::int64_t>();
        } else {
          demotes = demotes || planned.user.role != "admin";
          tx.exec_prepared("apply_user_role", id, planned.user.role, now);
          tx.exec_prepared("user_groups_clear", id);
        }
        tx.exec_prepared("user_groups_add", id, bigint_array(groups));
      }
      if (demotes) {
        // As UserStore does: hold the admins, so a demotion elsewhere cannot race this one.
        tx.exec_prepared("user_admins_lock");
        if (tx.exec_prepared1("apply_admins")[0].as<std::int64_t>() == 0) {
          throw Conflict("the file would leave no admin", "role");
        }
      }
      outcome.audit_id = write_audit(tx, now, actor, "apply", "apply", std::nullopt, std::nullopt, p.report);
      return outcome;
    });
  });
}

}  // namespace cronwheel::admin
