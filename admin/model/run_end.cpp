#include "admin/model/run_end.h"

#include <algorithm>
#include <charconv>
#include <utility>

#include <spdlog/spdlog.h>

#include "admin/model/child_jobs.h"

namespace cronwheel::admin {

namespace {

// A FIX_DELAY job's delay in ms; nullopt for a configuration the schema would not hold.
std::optional<std::int64_t> fix_delay_ms(const Job& job) {
  std::int64_t seconds = 0;
  const auto& conf = job.schedule_conf;
  auto [end, ec] = std::from_chars(conf.data(), conf.data() + conf.size(), seconds);
  if (ec != std::errc() || end != conf.data() + conf.size() || seconds <= 0) return std::nullopt;
  return seconds * 1000;
}

}  // namespace

std::string_view to_string(RunEnd end) {
  switch (end) {
    case RunEnd::kSucceeded: return "succeeded";
    case RunEnd::kFailed: return "failed";
    case RunEnd::kLost: return "lost";
    case RunEnd::kTriggerFailed: return "trigger failed";
    case RunEnd::kMisfireSkipped: return "misfire skipped";
    case RunEnd::kCancelled: return "cancelled";
    case RunEnd::kKilled: return "killed";
  }
  return "unknown";
}

namespace {

// Why a node's run ended its node badly, for the run's page and the workflow's reason.
std::string node_failure_message(RunEnd end, const JobLog& run) {
  constexpr std::size_t kMaxQuoted = 300;
  auto quoted = [&](const std::string& text) {
    return text.size() <= kMaxQuoted ? text : text.substr(0, kMaxQuoted) + "…";
  };
  const std::string id = "run " + std::to_string(run.id);
  switch (end) {
    case RunEnd::kSucceeded: return "";
    case RunEnd::kFailed: return id + " failed" + (run.handle_msg.empty() ? "" : ": " + quoted(run.handle_msg));
    case RunEnd::kLost: return id + " lost its result: " + quoted(run.handle_msg);
    case RunEnd::kTriggerFailed: return id + " could not be triggered: " + quoted(run.trigger_msg);
    case RunEnd::kMisfireSkipped: return id + " was skipped as a misfire";
    case RunEnd::kCancelled: return id + " was cancelled";
    case RunEnd::kKilled: return id + " was killed";
  }
  return id + " ended";
}

}  // namespace

FollowUps plan_follow_ups(RunEnd end, const JobLog& run, const Job& job, const std::vector<Job>& children,
                          std::int64_t now, const std::string& node_id) {
  FollowUps out;
  const bool workflow_node = run.workflow_run_id.has_value();
  if (end == RunEnd::kSucceeded && !workflow_node) {
    for (const Job& child : children) {
      if (child.id == job.id) continue;  // the store leaves it out; a job is never its own child
      JobLog fire;
      fire.job_group = child.job_group;
      fire.job_id = child.id;
      fire.state = FireState::kPending;
      fire.trigger_type = TriggerType::kParent;
      fire.scheduled_time = now;
      fire.admin_node = node_id;
      fire.executor_handler = child.executor_handler;
      fire.executor_param = child.executor_param;
      fire.executor_fail_retry_count = child.executor_fail_retry_count;
      fire.parent_log_id = run.id;  // the run whose success fired it
      fire.chain_depth = run.chain_depth + 1;
      if (fire.chain_depth > kMaxChildChainDepth) {
        fire.state = FireState::kCancelled;
        fire.trigger_msg = child_chain_cut_message(job.id, child.id);
      }
      out.fires.push_back(std::move(fire));
    }
  } else if ((end == RunEnd::kFailed || end == RunEnd::kLost || end == RunEnd::kTriggerFailed) &&
             run.executor_fail_retry_count > 0) {
    // As XXL-JOB: the retry runs the job's current handler with the run's parameters, on the
    // same shard, routed again (the executor that failed may be gone).
    JobLog fire;
    fire.job_group = job.job_group;
    fire.job_id = run.job_id;
    fire.state = FireState::kPending;
    fire.trigger_type = TriggerType::kRetry;
    // The retry this one is: 1 after a run that was not a retry (it had all the job's retries
    // left), counted up from there.
    const int attempt = std::max(1, job.executor_fail_retry_count - run.executor_fail_retry_count + 1);
    fire.scheduled_time =
        now + retry_delay_ms(job.retry, job.retry_interval, attempt, static_cast<std::uint64_t>(run.id));
    fire.admin_node = node_id;
    fire.executor_handler = job.executor_handler;
    fire.executor_param = run.executor_param;
    fire.shard_index = run.shard_index;
    fire.shard_total = run.shard_total;
    fire.executor_fail_retry_count = run.executor_fail_retry_count - 1;
    fire.parent_log_id = run.id;
    fire.chain_depth = run.chain_depth;
    fire.workflow_run_id = run.workflow_run_id;
    fire.workflow_node = run.workflow_node;
    fire.backfill_id = run.backfill_id;
    fire.logical_time = run.logical_time;
    out.fires.push_back(std::move(fire));
  }
  if (workflow_node) {
    if (out.fires.empty()) {
      out.workflow_node_end = WorkflowNodeEnd{*run.workflow_run_id,
                                              run.workflow_node,
                                              run.id,
                                              end == RunEnd::kSucceeded ? NodeState::kSucceeded : NodeState::kFailed,
                                              node_failure_message(end, run),
                                              now,
                                              node_id};
    }
    return out;
  }
  if (job.schedule_type == ScheduleType::kFixDelay) {
    if (auto delay = fix_delay_ms(job)) {
      out.fix_delay_next_time = now + *delay;
    } else {
      spdlog::error("job {}: FIX_DELAY configuration '{}' is not a number of seconds; its next time is left as is",
                    job.id, job.schedule_conf);
    }
  }
  return out;
}

FollowUpPlanner follow_ups_of(RunEnd end, std::int64_t now, std::string node_id) {
  return [end, now, node = std::move(node_id)](const JobLog& run, const Job& job, const std::vector<Job>& children) {
    return plan_follow_ups(end, run, job, children, now, node);
  };
}

}  // namespace cronwheel::admin
