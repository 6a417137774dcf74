// The logs resource: one row per fire (routes: add_log_routes in resource_routes.h). Reading a
// run's output and killing a run are calls to the executor that ran it, made with no database
// transaction open, through the node's ExecutorClient (admin/model/executor_client.h).

#include <algorithm>
#include <climits>
#include <stdexcept>
#include <string>

#include "admin/api/api_errors.h"
#include "admin/api/field_checks.h"
#include "admin/api/json_body.h"
#include "admin/api/resource_access.h"
#include "admin/api/resource_routes.h"
#include "admin/model/record_json.h"
#include "common/protocol/constants.h"
#include "common/protocol/messages.h"

namespace cronwheel::admin {

namespace {

namespace http = common::http;
namespace protocol = common::protocol;

// The executor that ran `log`, or a 409 when the fire has not reached one.
const std::string& executor_of(const JobLog& log) {
  if (log.state == FireState::kPending || log.state == FireState::kCancelled || log.executor_address.empty()) {
    throw conflict("run " + std::to_string(log.id) + " has no executor yet (state " + std::string(to_string(log.state)) + ")");
  }
  return log.executor_address;
}

// The access token calls to the run's executor carry: its group's own, else the admin's.
std::string executor_token(const Group* group, const ResourceOptions& options) {
  return admin::executor_token(group != nullptr ? group->access_token : std::nullopt, options.access_token);
}

ExecutorClient& executors_of(const ResourceOptions& options) {
  if (options.executors == nullptr) throw std::logic_error("ResourceOptions::executors is not set");
  return *options.executors;
}

// Whether the executor's answer to /log is a log it has: not a failure, and not XXL-JOB's answer
// for a log file that does not exist (the end, before the first line asked for).
bool has_log(const protocol::ReturnT<protocol::LogResult>& answer, std::int32_t from_line) {
  if (!answer.is_success() || !answer.content) return false;
  return !(answer.content->is_end && answer.content->to_line_num < from_line);
}

[[noreturn]] void executor_failed(const std::string& address, const std::string& what, const std::string& msg) {
  throw http::HttpError(502, kBadGateway, "executor " + address + " did not " + what + ": " + msg);
}

std::optional<std::int64_t> job_group_param(const common::http::Request& req) {
  return query_int(req.get_param_value("jobGroup"), "jobGroup");
}

LogStore::Filter::Status status_param(const common::http::Request& req) {
  using Status = LogStore::Filter::Status;
  const auto status = req.get_param_value("status");
  if (status.empty()) return Status::kAll;
  if (status == "success") return Status::kSuccess;
  if (status == "failure") return Status::kFailure;
  if (status == "running") return Status::kRunning;
  if (status == "pending") return Status::kPending;
  if (status == "cancelled") return Status::kCancelled;
  throw invalid("status",
                "status: unknown value '" + status + "', expected one of success, failure, running, pending, cancelled");
}

// The body of POST logs/clear, checked against what `who` may act on.
LogStore::ClearRequest read_clear_body(const std::string& text, const Stores& stores, const Principal& who) {
  JsonBody body(text);
  LogStore::ClearRequest request;
  request.job_group = body.optional_int("jobGroup");
  request.job_id = body.optional_int("jobId");
  request.before = body.optional_int("before");
  request.keep = body.optional_int("keep");
  body.finish();

  if (request.before && request.keep) throw invalid("keep", "keep: give either before or keep, not both");
  if (!request.before && !request.keep) {
    throw invalid("before", "before: give before (epoch ms: clear logs scheduled earlier) or keep (how many of "
                            "the newest logs to keep)");
  }
  if (request.before && *request.before < 0) throw invalid("before", "before: must be 0 or more (epoch milliseconds)");
  if (request.keep && *request.keep < 0) throw invalid("keep", "keep: must be 0 or more");
  if (request.job_group) {
    auto group = stores.groups.get(*request.job_group);
    if (!group || !who.may_access_group(group->id)) {
      throw invalid("jobGroup", "jobGroup: group " + std::to_string(*request.job_group) + " does not exist");
    }
  }
  if (request.job_id) {
    auto job = stores.jobs.get(*request.job_id);
    if (!job || !who.may_access_group(job->job_group)) {
      throw invalid("jobId", "jobId: job " + std::to_string(*request.job_id) + " does not exist");
    }
    if (request.job_group && job->job_group != *request.job_group) {
      throw invalid("jobId", "jobId: job " + std::to_string(job->id) + " is not in group " +
                                 std::to_string(*request.job_group));
    }
  }
  if (!request.job_group && !request.job_id && !who.user.is_admin()) {
    throw forbidden("clearing the logs of every group needs the admin role; name a jobGroup or jobId");
  }
  return request;
}

}  // namespace

void add_log_routes(ApiRouter& router, Stores stores, common::Clock& clock, const ResourceOptions& options) {
  router.add("GET", "logs", Access::kUser, [stores](ApiRouter::RouteContext& ctx, const common::http::Request& req) {
    LogStore::Filter filter;
    filter.page = keyed_page_query(req);
    filter.scope = scope_of(ctx.request.who());
    filter.job_group = job_group_param(req);
    filter.job_id = query_int(req.get_param_value("jobId"), "jobId");
    filter.status = status_param(req);
    filter.from = query_epoch_ms(req.get_param_value("from"), "from");
    filter.to = query_epoch_ms(req.get_param_value("to"), "to");
    if (filter.from && filter.to && *filter.to < *filter.from) {
      throw invalid("to", "to: must not be before from");
    }
    filter.backfill_id = query_int(req.get_param_value("backfillId"), "backfillId");
    auto result = stores.logs.list(filter);
    return ApiResponse{200, keyed_page_json(result, [](const JobLog& l) { return to_json(l); })};
  }, keyed_paged({"jobGroup", "jobId", "status", "from", "to", "backfillId"}));

  router.add("POST", "logs/clear", Access::kUser, [stores](ApiRouter::RouteContext& ctx, const common::http::Request& req) {
    auto request = read_clear_body(req.body, stores, ctx.request.who());
    return ApiResponse{200, {{"deleted", stores.logs.clear(request, ctx.request.actor)}}};
  });

  // One run, and the retry it led to ({"id","scheduledTime","state"}, or null): a failed run's
  // page says when its retry is due, and how it went.
  router.add("GET", "logs/{id}", Access::kUser, [stores](ApiRouter::RouteContext& ctx, const common::http::Request&) {
    auto body = to_json(visible_log(stores.logs, ctx.request.who(), ctx.path_int("id")));
    const auto retry = stores.logs.retry_of(ctx.path_int("id"));
    body["retry"] = retry ? nlohmann::json{{"id", retry->id},
                                           {"scheduledTime", retry->scheduled_time},
                                           {"state", std::string(to_string(retry->state))}}
                          : nlohmann::json(nullptr);
    return ApiResponse{200, std::move(body)};
  });

  router.add("DELETE", "logs/{id}", Access::kUser, [stores, options](ApiRouter::RouteContext& ctx, const common::http::Request&) {
    auto log = visible_log(stores.logs, ctx.request.who(), ctx.path_int("id"));
    if (log.trigger_type != TriggerType::kManual && log.trigger_type != TriggerType::kApi) {
      throw conflict("run " + std::to_string(log.id) + " is a " + std::string(to_string(log.trigger_type)) +
                     " fire; only fires asked for through trigger can be cancelled (stop the job to skip its "
                     "schedule)");
    }
    if (log.state != FireState::kPending || !stores.logs.cancel_pending(log.id, ctx.request.actor)) {
      throw conflict("run " + std::to_string(log.id) + " has already fired; only a pending fire can be cancelled");
    }
    if (options.finished_runs != nullptr) options.finished_runs->add(log.job_group, FireState::kCancelled);
    return ApiResponse{204, nullptr};
  });

  router.add("GET", "logs/{id}/content", Access::kUser,
             [stores, options](ApiRouter::RouteContext& ctx, const common::http::Request& req) {
               auto log = visible_log(stores.logs, ctx.request.who(), ctx.path_int("id"));
               auto from_line = query_int(req.get_param_value("fromLine"), "fromLine").value_or(1);
               check_int_range("fromLine", from_line, 1, INT_MAX);
               const auto& address = executor_of(log);
               auto group = stores.groups.get(log.job_group);
               const auto permit = options.executor_calls->acquire(log.job_group);

               protocol::LogParam param;
               param.log_date_time = log_date_time(log);
               param.log_id = log.id;
               param.from_line_num = static_cast<std::int32_t>(from_line);
               auto answer = executors_of(options).log(address, executor_token(group ? &*group : nullptr, options), param);
               if (log.state == FireState::kSending && !has_log(answer, param.from_line_num)) {
                 // Claimed, possibly ahead of its second: the executor may not have the run yet,
                 // and says so either by failing or by the end of a log it has no line of.
                 throw conflict("run " + std::to_string(log.id) + " is being sent to executor " + address +
                                ", which has no log of it yet" +
                                (answer.msg.empty() ? std::string() : ": " + answer.msg));
               }
               if (!answer.is_success()) executor_failed(address, "return the log", answer.msg);
               if (!answer.content) executor_failed(address, "return the log", "the answer has no content");
               // A finished run's log has ended once no new line comes, whatever the executor says
               // (an XXL-JOB executor may say isEnd false for it forever).
               const bool no_new_lines = answer.content->to_line_num < param.from_line_num;
               const bool is_end = answer.content->is_end || (is_finished(log.state) && no_new_lines);
               return ApiResponse{200,
                                  {{"fromLine", answer.content->from_line_num},
                                   {"toLine", answer.content->to_line_num},
                                   {"content", answer.content->log_content},
                                   {"isEnd", is_end}}};
             },
             {"fromLine"}, {.lane = kExecutorCallLane});

  router.add("POST", "logs/{id}/kill", Access::kUser,
             [stores, &clock, options](ApiRouter::RouteContext& ctx, const common::http::Request& req) {
               auto log = visible_log(stores.logs, ctx.request.who(), ctx.path_int("id"));
               JsonBody(req.body).finish();
               if (log.state != FireState::kTriggered) {
                 throw conflict("run " + std::to_string(log.id) + " is not running (state " + std::string(to_string(log.state)) + ")");
               }
               const auto& address = executor_of(log);
               if (log.job_id > INT32_MAX) {
                 throw conflict("job id " + std::to_string(log.job_id) + " does not fit XXL-JOB's kill call");
               }
               auto group = stores.groups.get(log.job_group);
               const auto permit = options.executor_calls->acquire(log.job_group);
               const std::string token = executor_token(group ? &*group : nullptr, options);
               auto audit = [&] {
                 AuditEntry entry;
                 entry.at = clock.now_ms();
                 entry.user_id = ctx.request.actor.user_id;
                 entry.username = ctx.request.actor.username;
                 entry.action = "log.kill";
                 entry.entity_type = "log";
                 entry.entity_id = log.id;
                 entry.before = to_json(log).dump();
                 entry.remote_addr = ctx.request.actor.remote_addr;
                 stores.audit.record(entry);
               };
               if (!options.kill_run || !options.cancel_held_run) {
                 throw std::logic_error("ResourceOptions::kill_run and cancel_held_run must be set");
               }
               if (log.trigger_time && *log.trigger_time > clock.now_ms()) {
                 // Handed over ahead (lead dispatch) and not due yet: taken back before it starts,
                 // it never runs and ends cancelled. Started meanwhile, or not held there: killed as
                 // any running run, below.
                 const std::string by = "killed by " + ctx.request.actor.username;
                 auto taken = executors_of(options).cancel_lead(address, token, protocol::LeadCancelParam{{log.id}, by});
                 if (taken.is_success() && taken.content &&
                     std::find(taken.content->cancelled.begin(), taken.content->cancelled.end(), log.id) !=
                         taken.content->cancelled.end()) {
                   options.cancel_held_run(log.id, by + " before its instant; executor " + address +
                                                       " held it and will not start it");
                   audit();
                   return ApiResponse{204, nullptr};
                 }
               }
               auto answer = executors_of(options).kill(address, token, static_cast<std::int32_t>(log.job_id));
               // An executor that answered and refused (it has no such run: its result is on the
               // way) leaves the run as it is. One that ended it, or that could not be told, ends
               // it here and now, as XXL-JOB records a kill: failed, without retries or child
               // fires; the executor's own result, when it comes, finds the run ended already.
               if (!answer.is_success() && answer.code != kNotReachedCode &&
                   answer.code != protocol::kTimeoutCode) {
                 executor_failed(address, "kill the run", answer.msg);
               }
               options.kill_run(log.id, "killed by " + ctx.request.actor.username +
                                            (answer.is_success() ? std::string("; the executor ended it")
                                                                 : "; executor " + address + " could not be told (" +
                                                                       truncate_chars(answer.msg, 200) +
                                                                       "): the run may still be going on there"));
               audit();
               return ApiResponse{204, nullptr};
             },
             {}, {.lane = kExecutorCallLane});
}

}  // namespace cronwheel::admin
