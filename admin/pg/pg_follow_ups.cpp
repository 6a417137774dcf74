#include "admin/pg/pg_follow_ups.h"

#include "admin/model/fire.h"
#include "admin/pg/pg_store_support.h"

namespace cronwheel::admin::pg {

void prepare_follow_ups(pqxx::connection& c) {
  c.prepare("follow_up_job", "SELECT " + kJobColumns + " FROM job_info WHERE id = $1");
  c.prepare("follow_up_children", "SELECT " + kJobColumns +
                                      " FROM job_info WHERE id = ANY ($1::bigint[]) AND id <> $2 ORDER BY id FOR KEY SHARE");
  c.prepare("follow_up_insert_fire",
            "INSERT INTO job_log (job_group, job_id, state, trigger_type, scheduled_time, admin_node, executor_address, "
            "executor_handler, executor_param, shard_index, shard_total, executor_fail_retry_count, parent_log_id) "
            "VALUES ($1, $2, 'pending', $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING " + kLogColumns);
  c.prepare("follow_up_fix_delay",
            "UPDATE job_info SET trigger_next_time = $2 WHERE id = $1 AND trigger_status = 1 AND trigger_next_time = $3");
}

WrittenFollowUps write_follow_ups(pqxx::work& tx, const JobLog& run, const FollowUpPlanner& plan) {
  WrittenFollowUps out;
  auto jobs = tx.exec_prepared("follow_up_job", run.job_id);
  if (jobs.empty()) return out;
  const Job job = job_from(jobs[0]);
  std::vector<Job> children;
  if (!job.child_job_ids.empty()) {
    children = all_of<Job>(tx.exec_prepared("follow_up_children", bigint_array(job.child_job_ids), job.id), job_from);
  }
  const FollowUps follow = plan(run, job, children);
  for (const JobLog& f : follow.fires) {
    out.fires.push_back(log_from(tx.exec_prepared1(
        "follow_up_insert_fire", f.job_group, f.job_id, f.trigger_type, f.scheduled_time, f.admin_node,
        f.executor_address, f.executor_handler, f.executor_param, f.shard_index, f.shard_total,
        f.executor_fail_retry_count, f.parent_log_id)));
  }
  if (follow.fix_delay_next_time) {
    out.next_time_set =
        tx.exec_prepared("follow_up_fix_delay", job.id, *follow.fix_delay_next_time, kAwaitingCompletion)
            .affected_rows() > 0;
  }
  return out;
}

}  // namespace cronwheel::admin::pg
