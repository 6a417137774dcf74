#include "admin/pg/pg_follow_ups.h"

#include <map>
#include <set>
#include <utility>

#include "admin/model/fire.h"
#include "admin/pg/pg_guard.h"
#include "admin/pg/pg_store_support.h"
#include "admin/pg/pg_workflow_store.h"

namespace cronwheel::admin::pg {

void prepare_follow_ups(pqxx::connection& c) {
  PgWorkflowStore::prepare(c);  // a node's end takes its workflow run's next step
  // A batch's jobs and their children, by primary key alone whatever job_info's statistics and
  // the batch's size: the array comes from `guard` (pg_guard.h). Given as a literal of 1,000
  // ids, job_info not yet analysed was read whole instead
  // (tests/integration/fire_path_plans_pgtest.cpp).
  c.prepare("follow_up_jobs", "WITH " + guard_cte("$1::bigint[] AS job_ids") + " SELECT " + kJobColumns +
                                  " FROM " + kJobTables + ", guard WHERE id = ANY (guard.job_ids)");
  c.prepare("follow_up_children", "WITH " + guard_cte("$1::bigint[] AS job_ids") + " SELECT " + kJobColumns +
                                      " FROM " + kJobTables + ", guard WHERE id = ANY (guard.job_ids) ORDER BY id FOR KEY SHARE OF job_info");
  // A follow-up fire is pending (job_log_active), or cancelled from the start (a child beyond
  // the chain's depth: job_log_finished); run_end.h makes no other.
  for (const auto& [name, table] : {std::pair{"follow_up_insert_fire", "job_log_active"},
                                    std::pair{"follow_up_insert_ended", "job_log_finished"}}) {
    c.prepare(name, std::string("INSERT INTO ") + table +
                        " (job_group, job_id, state, trigger_type, scheduled_time, admin_node, executor_address, "
                        "executor_handler, executor_param, shard_index, shard_total, executor_fail_retry_count, "
                        "parent_log_id, chain_depth, trigger_msg, workflow_run_id, workflow_node, backfill_id, "
                        "logical_time) "
                        "VALUES ($1, $2, $13, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $14, $15, $16, $17, $18, $19) "
                        "RETURNING " + kLogColumns);
  }
  // By the job's id alone: guarded as written, job_schedule_due (trigger_status = 1) could be
  // chosen and read every job awaiting a result (pg_guard.h).
  c.prepare("follow_up_fix_delay",
            "WITH " + guard_cte("$1::bigint AS job_id, 1::smallint AS scheduled, $3::bigint AS awaited") +
                " UPDATE job_schedule s SET trigger_next_time = $2 FROM guard WHERE s.job_id = guard.job_id"
                " AND s.trigger_status = guard.scheduled AND s.trigger_next_time = guard.awaited");
}

std::vector<WrittenFollowUps> write_follow_ups(pqxx::work& tx, const std::vector<JobLog>& runs,
                                               const FollowUpPlanner& plan) {
  std::vector<WrittenFollowUps> out(runs.size());
  if (runs.empty()) return out;
  lock_workflow_runs(tx, runs);
  std::vector<std::int64_t> job_ids;
  for (const JobLog& run : runs) job_ids.push_back(run.job_id);
  std::map<std::int64_t, Job> jobs;
  for (const auto& row : tx.exec_prepared("follow_up_jobs", bigint_array(job_ids))) {
    Job job = job_from(row);
    jobs.emplace(job.id, std::move(job));
  }
  std::vector<std::int64_t> child_ids;
  for (const auto& [id, job] : jobs) child_ids.insert(child_ids.end(), job.child_job_ids.begin(), job.child_job_ids.end());
  std::map<std::int64_t, Job> existing_children;
  if (!child_ids.empty()) {
    for (const auto& row : tx.exec_prepared("follow_up_children", bigint_array(child_ids))) {
      Job child = job_from(row);
      existing_children.emplace(child.id, std::move(child));
    }
  }

  // Workflow nodes that ended, taken together after the loop (set-wise, one run's ends at once).
  std::vector<EndedNode> node_ends;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    auto job = jobs.find(runs[i].job_id);
    if (job == jobs.end()) {
      // Deleted meanwhile: no follow-ups — but a workflow's node still ends, without a retry.
      if (!runs[i].workflow_run_id) continue;
      JobLog last = runs[i];
      last.executor_fail_retry_count = 0;
      Job gone;
      gone.id = last.job_id;
      gone.job_group = last.job_group;
      const FollowUps follow = plan(last, gone, {});
      if (follow.workflow_node_end) node_ends.push_back({i, *follow.workflow_node_end, &runs[i]});
      continue;
    }
    std::set<std::int64_t> ids(job->second.child_job_ids.begin(), job->second.child_job_ids.end());
    ids.erase(job->first);  // a job is never its own child
    std::vector<Job> children;
    for (auto id : ids) {
      auto child = existing_children.find(id);
      if (child != existing_children.end()) children.push_back(child->second);
    }
    const FollowUps follow = plan(runs[i], job->second, children);
    for (const JobLog& f : follow.fires) {
      const char* insert = f.state == FireState::kCancelled ? "follow_up_insert_ended" : "follow_up_insert_fire";
      JobLog fire = log_from(tx.exec_prepared1(
          insert, f.job_group, f.job_id, text(f.trigger_type), f.scheduled_time, f.admin_node, f.executor_address,
          f.executor_handler, f.executor_param, f.shard_index, f.shard_total, f.executor_fail_retry_count,
          f.parent_log_id, text(f.state), f.chain_depth, f.trigger_msg,
          f.workflow_run_id, f.workflow_run_id ? std::optional<std::string>(f.workflow_node) : std::nullopt,
          f.backfill_id, f.logical_time));
      if (fire.workflow_run_id) fire = record_workflow_retry(tx, runs[i], std::move(fire));
      out[i].fires.push_back(std::move(fire));
    }
    if (follow.workflow_node_end) node_ends.push_back({i, *follow.workflow_node_end, &runs[i]});
    if (follow.fix_delay_next_time) {
      out[i].next_time_set =
          tx.exec_prepared("follow_up_fix_delay", job->first, *follow.fix_delay_next_time, kAwaitingCompletion)
              .affected_rows() > 0;
    }
  }
  for (auto& [index, fire] : record_workflow_node_ends(tx, node_ends)) out[index].fires.push_back(std::move(fire));
  return out;
}

WrittenFollowUps write_follow_ups(pqxx::work& tx, const JobLog& run, const FollowUpPlanner& plan) {
  return std::move(write_follow_ups(tx, std::vector<JobLog>{run}, plan).front());
}

}  // namespace cronwheel::admin::pg
