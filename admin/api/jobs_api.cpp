// The jobs resource: list, get, create, update, copy, delete, start, stop, trigger once and the
// fire-time preview (routes: add_job_routes in resource_routes.h).

#include <string>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

#include "admin/api/api_errors.h"
#include "admin/api/field_checks.h"
#include "admin/api/job_validation.h"
#include "admin/api/json_body.h"
#include "admin/api/resource_access.h"
#include "admin/api/resource_routes.h"
#include "admin/route/group_addresses.h"
#include "admin/model/schedule.h"
#include "admin/scheduler/fire_decision.h"
#include "admin/model/record_json.h"
#include "common/cron/cron_expression.h"
#include "common/util/utf8.h"

namespace cronwheel::admin {

namespace {

constexpr int kMaxPreviewCount = 100;
constexpr int kDefaultPreviewCount = 5;

// How far ahead a one-shot fire may be requested.
constexpr std::int64_t kMaxTriggerDelaySeconds = 366LL * 24 * 3600;

constexpr const char* kCopySuffix = " (copy)";

// A trigger's address list travels on the pending fire (job_log.executor_address, varchar(255)).
constexpr std::size_t kMaxAddressListChars = 255;

int preview_count(const common::http::Request& req) {
  auto count = query_int(req.get_param_value("count"), "count").value_or(kDefaultPreviewCount);
  return check_int_range("count", count, 1, kMaxPreviewCount);
}

// The body of POST jobs/{id}/trigger, as a pending fire of `job` (of `group`) owned by `node`.
JobLog read_trigger_body(const std::string& text, const Job& job, const Group& group, std::int64_t now,
                         const std::string& node) {
  JsonBody body(text);
  JobLog fire;
  fire.job_group = job.job_group;
  fire.job_id = job.id;
  fire.state = FireState::kPending;
  fire.admin_node = node;
  fire.executor_handler = job.executor_handler;
  fire.executor_fail_retry_count = job.executor_fail_retry_count;
  fire.executor_param = job.executor_param;
  if (auto param = body.optional_string("executorParam")) {
    if (param->size() > kMaxExecutorParamBytes) {
      throw invalid("executorParam", "executorParam: at most " + std::to_string(kMaxExecutorParamBytes) + " bytes");
    }
    fire.executor_param = *param;
  }

  std::vector<std::string> addresses;
  if (auto it = body.json().find("addressList"); it != body.json().end() && it->is_string()) {
    addresses = split_list(*body.optional_string("addressList"));
  } else {
    addresses = body.optional_string_list("addressList").value_or(std::vector<std::string>{});
    for (auto& a : addresses) a = trimmed(a);
  }
  check_http_urls("addressList", addresses);
  // A pending fire has no executor yet; its executor_address carries the addresses asked for
  // (comma-separated), which the trigger routes among instead of the group's.
  std::string joined;
  for (const auto& a : addresses) joined += (joined.empty() ? "" : ",") + a;
  if (joined.size() > kMaxAddressListChars) {
    throw invalid("addressList", "addressList: at most " + std::to_string(kMaxAddressListChars) +
                                     " characters in all, comma-separated");
  }
  for (std::size_t i = 0; i < addresses.size(); ++i) {
    if (!is_group_address(group, addresses[i])) {
      throw invalid("addressList", "addressList[" + std::to_string(i) + "]: " + addresses[i] +
                                       " is not an address of group " + group.app_name +
                                       "; a run goes only to its group's own executors");
    }
  }
  fire.executor_address = joined;

  auto delay = body.optional_int("delaySeconds");
  auto at = body.optional_int("at");
  if (delay && at) throw invalid("at", "at: give either delaySeconds or at, not both");
  fire.trigger_type = TriggerType::kManual;
  fire.scheduled_time = now;
  if (delay) {
    check_int_range("delaySeconds", *delay, 0, kMaxTriggerDelaySeconds);
    fire.scheduled_time = now + *delay * 1000;
    if (*delay > 0) fire.trigger_type = TriggerType::kApi;
  }
  if (at) {
    if (*at < now || *at > now + kMaxTriggerDelaySeconds * 1000) {
      throw invalid("at", "at: " + std::to_string(*at) + " must be an epoch-milliseconds instant from now (" +
                              std::to_string(now) + ") to a year ahead");
    }
    fire.scheduled_time = *at;
    fire.trigger_type = TriggerType::kApi;
  }
  body.finish();
  return fire;
}


}  // namespace

void add_job_routes(ApiRouter& router, Stores stores, common::Clock& clock, const ResourceOptions& options) {
  router.add("GET", "jobs", Access::kUser, [stores](ApiRouter::RouteContext& ctx, const common::http::Request& req) {
    JobStore::Filter filter;
    filter.page = keyed_page_query(req);
    filter.scope = scope_of(ctx.request.who());
    filter.job_group = query_int(req.get_param_value("jobGroup"), "jobGroup");
    if (auto status = query_int(req.get_param_value("triggerStatus"), "triggerStatus")) {
      filter.trigger_status = check_int_range("triggerStatus", *status, 0, 1);
    }
    filter.text = req.get_param_value("text");
    if (req.has_param("name")) filter.name = req.get_param_value("name");
    // A job's identity across installations: (its group's app name, its name).
    if (req.has_param("appName")) {
      auto group = stores.groups.find_by_app_name(req.get_param_value("appName"));
      if (!group || (filter.job_group && *filter.job_group != group->id)) {
        return ApiResponse{200, keyed_page_json(Page<Job>{}, [](const Job& j) { return to_json(j); })};
      }
      filter.job_group = group->id;  // the scope still applies: another user's group lists nothing
    }
    auto result = stores.jobs.list(filter);
    return ApiResponse{200, keyed_page_json(result, [](const Job& j) { return to_json(j); })};
  }, keyed_paged({"jobGroup", "appName", "name", "triggerStatus", "text"}));

  router.add("POST", "jobs", Access::kUser, [stores, options](ApiRouter::RouteContext& ctx, const common::http::Request& req) {
    auto job = read_job_body(req.body, Job{}, JobBodyKind::kCreate);
    validate_job(job);
    check_job_references(job, std::nullopt, stores.groups, stores.jobs, ctx.request.who());
    check_calendar_use(job.calendar, options.calendars);
    return ApiResponse{201, to_json(stores.jobs.create(job, ctx.request.actor))};
  }, {}, common::http::RouteOptions{.max_body_bytes = kMaxJobBodyBytes});

  router.add("GET", "jobs/{id}", Access::kUser, [stores](ApiRouter::RouteContext& ctx, const common::http::Request&) {
    return ApiResponse{200, to_json(visible_job(stores.jobs, ctx.request.who(), ctx.path_int("id")))};
  });

  router.add("PUT", "jobs/{id}", Access::kUser,
             [stores, &clock, options](ApiRouter::RouteContext& ctx, const common::http::Request& req) {
               auto current = visible_job(stores.jobs, ctx.request.who(), ctx.path_int("id"));
               auto job = read_job_body(req.body, current, JobBodyKind::kUpdate);
               validate_job(job);
               check_job_references(job, current.id, stores.groups, stores.jobs, ctx.request.who());
               check_calendar_use(job.calendar, options.calendars);
               // A running job whose schedule or calendar changed gets its next time from the new
               // one, computed as a start would (XXL-JOB does the same for a schedule).
               if (job.trigger_status == 1 && schedule_changed(current, job)) {
                 if (job.schedule_type == ScheduleType::kNone) {
                   throw invalid("scheduleType",
                                 "scheduleType: a running job needs a schedule; stop the job first to set NONE");
                 }
                 job.trigger_next_time = first_fire_time(job, clock.now_ms(), options.calendars);
               }
               auto updated = stores.jobs.update(job, ctx.request.actor);
               // (Its status is not the body's to change: start and stop have routes of their own.)
               // Its held runs are sent again as it is now, as its pending fires are.
               options.held.take_back_job(updated.id, "job changed by " + ctx.request.actor.username,
                                          GivenBack::kSendAgain);
               return ApiResponse{200, to_json(updated)};
             }, {}, common::http::RouteOptions{.max_body_bytes = kMaxJobBodyBytes});

  router.add("DELETE", "jobs/{id}", Access::kUser, [stores, options](ApiRouter::RouteContext& ctx, const common::http::Request&) {
    auto job = visible_job(stores.jobs, ctx.request.who(), ctx.path_int("id"));
    // With its logs and script history; its held runs, read in the deletion's transaction, are
    // asked back from their executors after it.
    options.held.take_back_runs(stores.jobs.remove(job.id, ctx.request.actor),
                                "job deleted by " + ctx.request.actor.username, GivenBack::kForget);
    return ApiResponse{204, nullptr};
  });

  router.add("POST", "jobs/{id}/copy", Access::kUser, [stores](ApiRouter::RouteContext& ctx, const common::http::Request& req) {
    auto job = visible_job(stores.jobs, ctx.request.who(), ctx.path_int("id"));
    JsonBody(req.body).finish();
    Job copy = job;
    copy.id = 0;
    copy.name = "";  // names are unique in a group: the copy is named after its id
    copy.job_desc = truncate_chars(job.job_desc, kMaxJobDesc - common::utf8::char_count(kCopySuffix)) + kCopySuffix;
    copy.trigger_status = 0;
    copy.trigger_last_time = 0;
    copy.trigger_next_time = 0;
    return ApiResponse{201, to_json(stores.jobs.create(copy, ctx.request.actor))};
  });

  router.add("POST", "jobs/{id}/start", Access::kUser,
             [stores, &clock, options](ApiRouter::RouteContext& ctx, const common::http::Request& req) {
               auto job = visible_job(stores.jobs, ctx.request.who(), ctx.path_int("id"));
               JsonBody(req.body).finish();
               if (job.trigger_status == 1) return ApiResponse{200, to_json(job)};  // already running
               auto next = first_fire_time(job, clock.now_ms(), options.calendars);
               return ApiResponse{200, to_json(stores.jobs.set_trigger_status(job.id, 1, next, "job.start",
                                                                             ctx.request.actor))};
             });

  // A whole group at once ("stop everything during a release"): pause stops every running job
  // of the group and marks it; resume starts exactly the marked ones again, each from its
  // schedule's next time after now, and answers the ones it could not start (a schedule with
  // no time left), which stay stopped.
  router.add("POST", "groups/{id}/pause", Access::kUser,
             [stores, options](ApiRouter::RouteContext& ctx, const common::http::Request& req) {
               auto group = visible_group(stores.groups, ctx.request.who(), ctx.path_int("id"));
               JsonBody(req.body).finish();
               auto paused = stores.jobs.pause_group(group.id, ctx.request.actor);
               options.held.take_back_jobs(paused, "group paused by " + ctx.request.actor.username, GivenBack::kCancel);
               return ApiResponse{200, nlohmann::json{{"paused", paused}}};
             });

  router.add("POST", "groups/{id}/resume", Access::kUser,
             [stores, &clock, options](ApiRouter::RouteContext& ctx, const common::http::Request& req) {
               auto group = visible_group(stores.groups, ctx.request.who(), ctx.path_int("id"));
               JsonBody(req.body).finish();
               const auto now = clock.now_ms();
               std::map<std::int64_t, std::int64_t> next_times;
               nlohmann::json not_resumed = nlohmann::json::array();
               JobStore::Filter filter;
               filter.job_group = group.id;
               filter.trigger_status = 0;
               filter.page.limit = 500;
               for (;;) {
                 auto page = stores.jobs.list(filter);
                 for (const auto& job : page.items) {
                   if (!job.paused_with_group) continue;
                   try {
                     next_times[job.id] = first_fire_time(job, now, options.calendars);
                   } catch (const common::http::HttpError& e) {
                     not_resumed.push_back({{"id", job.id}, {"name", job.name}, {"reason", e.info().message}});
                   }
                 }
                 if (!page.next) break;
                 filter.page.after = page.next;
               }
               auto resumed = stores.jobs.resume_group(group.id, next_times, ctx.request.actor);
               return ApiResponse{200, nlohmann::json{{"resumed", resumed}, {"notResumed", not_resumed}}};
             });

  // A stop cancels the fires already decided and not yet started: the store the pending ones, in
  // the stop's transaction; the executors the ones they hold, taken back after it.
  router.add("POST", "jobs/{id}/stop", Access::kUser,
             [stores, options](ApiRouter::RouteContext& ctx, const common::http::Request& req) {
               auto job = visible_job(stores.jobs, ctx.request.who(), ctx.path_int("id"));
               JsonBody(req.body).finish();
               if (job.trigger_status == 0) return ApiResponse{200, to_json(job)};  // already stopped
               auto stopped = stores.jobs.set_trigger_status(job.id, 0, 0, "job.stop", ctx.request.actor);
               options.held.take_back_job(job.id, "job stopped by " + ctx.request.actor.username, GivenBack::kCancel);
               return ApiResponse{200, to_json(stopped)};
             });

  router.add("POST", "jobs/{id}/trigger", Access::kUser,
             [stores, &clock, options](ApiRouter::RouteContext& ctx, const common::http::Request& req) {
               auto job = visible_job(stores.jobs, ctx.request.who(), ctx.path_int("id"));
               auto group = stores.groups.get(job.job_group);
               if (!group) throw not_found("group " + std::to_string(job.job_group) + " does not exist");
               auto fire = read_trigger_body(req.body, job, *group, clock.now_ms(), options.node_id);
               auto created = stores.logs.create_fire(fire, ctx.request.actor);
               if (options.fires_written) options.fires_written({created});
               return ApiResponse{201, to_json(created)};
             }, {}, common::http::RouteOptions{.max_body_bytes = 4 * kMaxExecutorParamBytes});

  router.add("GET", "jobs/{id}/next-fires", Access::kUser,
             [stores, &clock, options](ApiRouter::RouteContext& ctx, const common::http::Request& req) {
               auto job = visible_job(stores.jobs, ctx.request.who(), ctx.path_int("id"));
               const int count = preview_count(req);
               const auto now = clock.now_ms();
               const auto schedule = schedule_of(job, options.calendars);
               Schedule::Preview preview;
               // A running job's next fire is already decided: start from it, unless its calendar
               // excludes it (changed since; the scan moves it to the first time let through).
               if (job.trigger_status == 1 && job.trigger_next_time > now && !schedule.excluded(job.trigger_next_time)) {
                 // What the calendar skipped on the way there (a job started on a holiday): a cron
                 // expression's instants are fixed, so they are the ones before the decided time.
                 if (schedule.calendar() && schedule.type() == ScheduleType::kCron) {
                   auto before = schedule.preview(now, 1, count);
                   for (auto& s : before.skipped) {
                     if (s.at_ms < job.trigger_next_time) preview.skipped.push_back(std::move(s));
                   }
                 }
                 preview.times.push_back(job.trigger_next_time);
                 auto more = schedule.preview(job.trigger_next_time, count - 1,
                                              count - static_cast<int>(preview.skipped.size()));
                 preview.times.insert(preview.times.end(), more.times.begin(), more.times.end());
                 preview.skipped.insert(preview.skipped.end(), more.skipped.begin(), more.skipped.end());
                 preview.end = more.end;
                 preview.dst = schedule.dst_notes(now, preview.times.back(), static_cast<std::size_t>(count));
               } else {
                 preview = schedule.preview(now, count, count);
               }
               return ApiResponse{200, preview_json(preview)};
             },
             {"count"});
}

}  // namespace cronwheel::admin
