#include "admin/pg/pg_apply_store.h"

#include "admin/model/stores.h"
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
  return identity;
}

// Reads the snapshot in `tx`; with `lock`, the named groups' rows and their jobs' stay locked
// until the transaction ends.
template <class Tx>
JobsSnapshot read_snapshot(Tx& tx, const std::vector<std::string>& app_names, bool lock) {
  JobsSnapshot s;
  const auto names = text_array(app_names);
  if (lock) tx.exec_prepared("apply_groups_lock", names);
  s.groups = all_of<Group>(tx.exec_prepared("apply_groups"), group_from);
  s.jobs = all_of<Job>(tx.exec_prepared(lock ? "apply_jobs_lock" : (app_names.empty() ? "apply_jobs_all" : "apply_jobs"), names),
                       job_from);
  s.identities = all_of<JobIdentity>(tx.exec_prepared("apply_identities"), identity_from);
  s.channels = all_of<AlarmChannel>(tx.exec_prepared("alarm_channel_list"), channel_from);
  s.users = all_of<User>(tx.exec_prepared("apply_users"), user_from);
  return s;
}

}  // namespace

void PgApplyStore::prepare(pqxx::connection& c) {
  c.prepare("apply_lock", "SELECT lock_name FROM job_lock WHERE lock_name = 'apply_lock' FOR UPDATE");
  c.prepare("apply_groups_lock", "SELECT id FROM job_group WHERE app_name = ANY ($1::text[]) ORDER BY id FOR UPDATE");
  c.prepare("apply_groups", "SELECT " + kGroupColumns + " FROM job_group ORDER BY app_name COLLATE \"C\"");
  c.prepare("apply_jobs", "SELECT " + kJobColumns + " FROM job_info WHERE job_group IN (" + kGroupsNamed +
                              ") ORDER BY job_group, name COLLATE \"C\"");
  c.prepare("apply_jobs_all", "SELECT " + kJobColumns + " FROM job_info WHERE $1::text[] IS NOT NULL "
                              "ORDER BY job_group, name COLLATE \"C\"");
  c.prepare("apply_jobs_lock", "SELECT " + kJobColumns + " FROM job_info WHERE job_group IN (" + kGroupsNamed +
                                   ") ORDER BY job_group, name COLLATE \"C\" FOR UPDATE");
  c.prepare("apply_identities", "SELECT id, job_group, name, array_to_json(child_job_ids)::text AS child_job_ids FROM job_info ORDER BY id");
  c.prepare("apply_job_update",
            "UPDATE job_info SET job_desc = $2, author = $3, alarm_email = $4, schedule_type = $5, schedule_conf = $6, "
            "timezone = $7, misfire_strategy = $8, executor_route_strategy = $9, executor_handler = $10, "
            "executor_param = $11, executor_block_strategy = $12, executor_timeout = $13, "
            "executor_fail_retry_count = $14, retry_interval = $15, glue_type = $16, child_job_ids = $17::bigint[], "
            // a job started or stopped by the file is no longer one its group's pause stopped
            "paused_with_group = CASE WHEN trigger_status <> $18 THEN false ELSE paused_with_group END, "
            "trigger_status = $18, trigger_next_time = $19, updated_at = " + ts("$20") + " WHERE id = $1");
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
      if (dry_run || p.empty()) return outcome;

      std::map<std::string, std::int64_t> group_ids;
      for (const auto& g : p.create_groups) {
        auto created = group_from(tx.exec_prepared1("group_insert", g.app_name, g.title, g.address_type,
                                                    text_array(g.address_list), g.access_token, now));
        outcome.created_groups[g.app_name] = created.id;
      }
      for (const auto& g : p.update_groups) {
        tx.exec_prepared("group_update", g.id, g.title, g.address_type, text_array(g.address_list), g.access_token, now);
      }
      for (const auto& g : tx.exec_prepared("apply_groups")) group_ids[g["app_name"].as<std::string>()] = g["id"].as<std::int64_t>();

      // New jobs first, without children: children may name each other.
      std::map<JobRef, std::int64_t> job_ids;
      for (const auto& planned : p.create_jobs) {
        const Job& j = planned.job;
        const auto group = j.job_group != 0 ? j.job_group : group_ids.at(planned.app_name);
        Job created = job_from(tx.exec_prepared1(
            "job_insert", group, j.job_desc, j.author, j.alarm_email, text(j.schedule_type), j.schedule_conf, j.timezone,
            text(j.misfire_strategy), text(j.executor_route_strategy), j.executor_handler, j.executor_param,
            text(j.executor_block_strategy), j.executor_timeout, j.executor_fail_retry_count, j.retry_interval,
            text(j.glue_type), j.glue_source, j.glue_remark, now, bigint_array({}), j.trigger_status, j.trigger_last_time,
            j.trigger_next_time, j.name));
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
        tx.exec_prepared("apply_job_update", j.id, j.job_desc, j.author, j.alarm_email, text(j.schedule_type),
                         j.schedule_conf, j.timezone, text(j.misfire_strategy), text(j.executor_route_strategy),
                         j.executor_handler, j.executor_param, text(j.executor_block_strategy), j.executor_timeout,
                         j.executor_fail_retry_count, j.retry_interval, text(j.glue_type),
                         bigint_array(ids_of(planned.children)), j.trigger_status, j.trigger_next_time, now);
        if (planned.script_changed) {
          tx.exec_prepared("job_save_glue", j.id, j.glue_source, j.glue_remark, now);
          tx.exec_prepared("version_insert", j.id, text(j.glue_type), j.glue_source, j.glue_remark, now);
          tx.exec_prepared("version_prune", j.id, ScriptStore::kVersionsKept);
        }
      }
      for (auto id : p.delete_jobs) tx.exec_prepared("job_delete", id);  // its runs and versions with it
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
