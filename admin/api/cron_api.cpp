// GET cron/next: the console's preview of a cron expression's next fire times (routes:
// add_cron_routes in resource_routes.h).

#include <string>

#include "admin/api/api_errors.h"
#include "admin/api/field_checks.h"
#include "admin/api/json_body.h"
#include "admin/api/resource_routes.h"
#include "common/cron/cron_expression.h"

namespace cronwheel::admin {

namespace {
constexpr int kMaxCount = 100;
constexpr int kDefaultCount = 5;
}  // namespace

void add_cron_routes(ApiRouter& router, common::Clock& clock) {
  // expr (required), tz (default UTC), from (epoch ms, default now), count (1-100, default 5)
  // → {"times":[epoch_ms,...]}; fewer times when the expression ends. Errors name `expr` or `tz`.
  router.add("GET", "cron/next", Access::kUser, [&clock](ApiRouter::RouteContext&, const common::http::Request& req) {
    const auto expr = req.get_param_value("expr");
    if (trimmed(expr).empty()) throw invalid("expr", "expr: is required (a Quartz cron expression)");
    const auto tz = req.has_param("tz") ? req.get_param_value("tz") : std::string("UTC");
    const auto from = query_epoch_ms(req.get_param_value("from"), "from").value_or(clock.now_ms());
    const int count = check_int_range("count", query_int(req.get_param_value("count"), "count").value_or(kDefaultCount),
                                      1, kMaxCount);
    try {
      auto expression = common::CronExpression::parse(expr, tz);
      return ApiResponse{200, {{"times", expression.next_times(from, count)}}};
    } catch (const common::CronError& e) {
      if (e.field() == "timezone") throw invalid("tz", "tz: " + e.reason());
      throw invalid("expr", std::string("expr: ") + e.what());
    }
  }, {"expr", "tz", "from", "count"});
}

}  // namespace cronwheel::admin
