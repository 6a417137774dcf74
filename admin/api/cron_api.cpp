// GET cron/next: the console's preview of a cron expression's next fire times, with a calendar
// when the job being edited names one (routes: add_cron_routes in resource_routes.h).

#include <string>

#include "admin/api/api_errors.h"
#include "admin/api/field_checks.h"
#include "admin/api/job_validation.h"
#include "admin/api/json_body.h"
#include "admin/api/resource_routes.h"
#include "admin/model/schedule.h"
#include "common/cron/cron_expression.h"

namespace cronwheel::admin {

namespace {
constexpr int kMaxCronPreviewCount = 100;
constexpr int kDefaultCronPreviewCount = 5;

// calendarId and calendarMode of the query, as a job body gives them (read_calendar_use).
CalendarUse query_calendar_use(const common::http::Request& req) {
  nlohmann::json fields = nlohmann::json::object();
  if (req.has_param("calendarId")) {
    const auto id = query_int(req.get_param_value("calendarId"), "calendarId");
    fields["calendarId"] = id ? nlohmann::json(*id) : nlohmann::json(nullptr);
  }
  if (req.has_param("calendarMode")) fields["calendarMode"] = req.get_param_value("calendarMode");
  JsonBody body(fields.dump());
  auto use = read_calendar_use(body, CalendarUse{});
  body.finish();
  return use;
}

// dstGap and dstRepeat of the query, as a job body gives them (read_dst_policy).
common::DstPolicy query_dst_policy(const common::http::Request& req) {
  nlohmann::json fields = nlohmann::json::object();
  for (const char* name : {"dstGap", "dstRepeat"}) {
    if (req.has_param(name)) fields[name] = req.get_param_value(name);
  }
  JsonBody body(fields.dump());
  auto dst = read_dst_policy(body, common::DstPolicy{});
  body.finish();
  return dst;
}
}  // namespace

void add_cron_routes(ApiRouter& router, common::Clock& clock, const ResourceOptions& options) {
  // expr (required), tz (default UTC), from (epoch ms, default now), count (1-100, default 5),
  // calendarId and calendarMode (a draft job's calendar), dstGap and dstRepeat (its DST policy)
  // → {"times","skipped","dst","end"} (preview_json); fewer times when the expression ends or the
  // calendar lets none through. Errors name `expr`, `tz`, `calendarId`, `calendarMode`, `dstGap`
  // or `dstRepeat`.
  router.add("GET", "cron/next", Access::kUser, [&clock, options](ApiRouter::RouteContext&, const common::http::Request& req) {
    const auto expr = req.get_param_value("expr");
    if (trimmed(expr).empty()) throw invalid("expr", "expr: is required (a Quartz cron expression)");
    const auto tz = req.has_param("tz") ? req.get_param_value("tz") : std::string("UTC");
    const auto from = query_epoch_ms(req.get_param_value("from"), "from").value_or(clock.now_ms());
    const int count = check_int_range(
        "count", query_int(req.get_param_value("count"), "count").value_or(kDefaultCronPreviewCount), 1,
        kMaxCronPreviewCount);
    const CalendarUse use = query_calendar_use(req);
    const common::DstPolicy dst = query_dst_policy(req);
    try {
      common::CronExpression::parse(expr, tz);
    } catch (const common::CronError& e) {
      if (e.field() == "timezone") throw invalid("tz", "tz: " + e.reason());
      throw invalid("expr", std::string("expr: ") + e.what());
    }
    std::optional<Schedule> schedule;
    try {
      schedule = Schedule::parse(ScheduleType::kCron, expr, tz, dst);
    } catch (const ScheduleError& e) {
      // What a job's schedule refuses beyond the expression itself (its length).
      std::string reason = e.what();
      if (const std::string prefix = e.field() + ": "; reason.rfind(prefix, 0) == 0) reason.erase(0, prefix.size());
      throw invalid("expr", "expr: " + reason);
    }
    check_calendar_use(use, options.calendars);
    const auto with = with_calendar_of(*schedule, use, options.calendars, "the preview");
    return ApiResponse{200, preview_json(with.preview(from, count, count))};
  }, {"expr", "tz", "from", "count", "calendarId", "calendarMode", "dstGap", "dstRepeat"});
}

}  // namespace cronwheel::admin
