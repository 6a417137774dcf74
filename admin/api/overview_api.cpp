// What the console's dashboard and status pages read (routes: add_overview_routes in
// resource_routes.h): the admin nodes, a group's live executors, and the dashboard's figures.
// Everything comes from OverviewStore, whose dashboard never counts the run table
// (docs/run-report.md).

#include <chrono>
#include <cstdint>
#include <string>

#include <date/date.h>
#include <date/tz.h>

#include "admin/api/api_errors.h"
#include "admin/api/field_checks.h"
#include "admin/api/resource_access.h"
#include "admin/api/resource_routes.h"
#include "admin/model/record_json.h"

namespace cronwheel::admin {

namespace {

constexpr std::size_t kMaxZoneName = 64;
constexpr int kMaxDays = 366;
constexpr int kDefaultDays = 7;
constexpr int kLatestFailures = 10;
// A failure's messages on the dashboard: the start of them (GET logs/{id} has all).
constexpr std::size_t kMaxFailureMessage = 512;

// An IANA zone name from the query: at most 64 characters of the names' alphabet, and known
// to the tz database. 400 naming `timezone` otherwise.
const date::time_zone* zone_param(const std::string& name) {
  if (name.empty() || name.size() > kMaxZoneName) {
    throw invalid("timezone", "timezone: an IANA time zone name such as Europe/Berlin, 1 to " +
                                  std::to_string(kMaxZoneName) + " characters");
  }
  for (char c : name) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '/' ||
                    c == '_' || c == '-' || c == '+';
    if (!ok) throw invalid("timezone", "timezone: unknown time zone '" + truncate_chars(name, kMaxZoneName) + "'");
  }
  try {
    return date::locate_zone(name);
  } catch (const std::exception&) {
    throw invalid("timezone", "timezone: unknown time zone '" + name + "'");
  }
}

// A day from the query: exactly YYYY-MM-DD, a real date from 1970-01-01 to 9999-12-31.
std::optional<date::sys_days> day_param(const std::string& text, std::string_view name) {
  if (text.empty()) return std::nullopt;
  auto fail = [&]() -> std::optional<date::sys_days> {
    throw invalid(name, std::string(name) + ": expected a date as YYYY-MM-DD, got '" + truncate_chars(text, 32) + "'");
  };
  if (text.size() != 10 || text[4] != '-' || text[7] != '-') return fail();
  int parts[3] = {0, 0, 0};
  const std::size_t starts[3] = {0, 5, 8}, lengths[3] = {4, 2, 2};
  for (int i = 0; i < 3; ++i) {
    for (std::size_t k = starts[i]; k < starts[i] + lengths[i]; ++k) {
      if (text[k] < '0' || text[k] > '9') return fail();
      parts[i] = parts[i] * 10 + (text[k] - '0');
    }
  }
  const date::year_month_day ymd{date::year{parts[0]}, date::month{static_cast<unsigned>(parts[1])},
                                 date::day{static_cast<unsigned>(parts[2])}};
  if (!ymd.ok()) return fail();
  if (ymd.year() < date::year{1970}) {
    throw invalid(name, std::string(name) + ": 1970-01-01 or later, got '" + text + "'");
  }
  return date::sys_days{ymd};
}

std::string day_text(date::sys_days day) { return date::format("%F", day); }

// The instant (epoch ms) the local day `day` starts in `zone`: its midnight, or when the day
// has no midnight (clocks jumped over it), the instant of the jump.
std::int64_t day_start_ms(const date::time_zone* zone, date::sys_days day) {
  const date::local_seconds midnight{date::local_days{day.time_since_epoch()}};
  const auto info = zone->get_info(midnight);
  date::sys_seconds start;
  if (info.result == date::local_info::nonexistent) {
    start = info.first.end;
  } else {
    start = date::sys_seconds{midnight.time_since_epoch()} - info.first.offset;  // the first, if twice
  }
  return std::chrono::duration_cast<std::chrono::milliseconds>(start.time_since_epoch()).count();
}

nlohmann::json counts_json(const RunCounts& c) { return {{"succeeded", c.succeeded}, {"failed", c.failed}}; }

nlohmann::json failure_json(const FailedRun& f) {
  const JobLog& l = f.run;
  auto opt = [](const std::optional<std::int64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  return {
      {"id", l.id},
      {"jobId", l.job_id},
      {"jobDesc", f.job_desc},
      {"jobGroup", l.job_group},
      {"state", to_string(l.state)},
      {"scheduledTime", l.scheduled_time},
      {"triggerTime", opt(l.trigger_time)},
      {"triggerCode", l.trigger_code},
      {"triggerMsg", truncate_chars(l.trigger_msg, kMaxFailureMessage)},
      {"handleTime", opt(l.handle_time)},
      {"handleCode", l.handle_code},
      {"handleMsg", truncate_chars(l.handle_msg, kMaxFailureMessage)},
      {"executorAddress", l.executor_address},
  };
}

}  // namespace

void add_overview_routes(ApiRouter& router, Stores stores, common::Clock& clock, const ResourceOptions& options) {
  // Nodes are the cluster's, not a group's: any user may see them.
  router.add("GET", "nodes", Access::kUser, [stores](ApiRouter::RouteContext&, const common::http::Request&) {
    const auto overview = stores.overview.nodes();
    auto body = page_json(overview.nodes, static_cast<std::int64_t>(overview.nodes.size()),
                          [](const NodeStatus& s) { return to_json(s); });
    body["lastScan"] = overview.last_scan ? to_json(*overview.last_scan) : nlohmann::json(nullptr);
    return ApiResponse{200, std::move(body)};
  });

  const auto dead_after = options.executor_dead_after.count();
  router.add("GET", "groups/{id}/executors", Access::kUser,
             [stores, dead_after](ApiRouter::RouteContext& ctx, const common::http::Request& req) {
               const auto group = visible_group(stores.groups, ctx.request.who(), ctx.path_int("id"));
               const auto page = page_query(req);
               auto result = stores.overview.registrations(group.app_name, dead_after, page);
               return ApiResponse{200, page_json(result.items, result.total, [](const RegistryEntry& e) {
                                    using nlohmann::json;
                                    return json{{"address", e.registry_value},
                                                {"updatedAt", e.updated_at},
                                                {"clockOffsetMs", e.clock ? json(e.clock->offset_ms) : json(nullptr)},
                                                {"clockDelayMs", e.clock ? json(e.clock->delay_ms) : json(nullptr)},
                                                {"leadDispatch", e.clock && e.clock->lead_dispatch}};
                                  })};
             },
             paged({}));

  router.add("GET", "groups/{id}/handlers", Access::kUser,
             [stores, dead_after](ApiRouter::RouteContext& ctx, const common::http::Request&) {
               const auto group = visible_group(stores.groups, ctx.request.who(), ctx.path_int("id"));
               return ApiResponse{200, {{"handlers", stores.overview.handlers(group.app_name, dead_after)}}};
             });

  router.add("GET", "dashboard", Access::kUser,
             [stores, &clock, dead_after](ApiRouter::RouteContext& ctx, const common::http::Request& req) {
               const std::string zone_name =
                   req.has_param("timezone") ? req.get_param_value("timezone") : std::string("UTC");
               const date::time_zone* zone = zone_param(zone_name);
               const date::sys_time<std::chrono::milliseconds> now{std::chrono::milliseconds(clock.now_ms())};
               const date::sys_days today{date::floor<date::days>(zone->to_local(now)).time_since_epoch()};

               auto to = day_param(req.get_param_value("to"), "to");
               auto from = day_param(req.get_param_value("from"), "from");
               if (!to) to = today;
               if (!from) from = *to - date::days{kDefaultDays - 1};
               if (*from > *to) {
                 throw invalid("from", "from: " + day_text(*from) + " is after to (" + day_text(*to) + ")");
               }
               const auto span = (*to - *from).count() + 1;
               if (span > kMaxDays) {
                 throw invalid("to", "to: at most " + std::to_string(kMaxDays) + " days from `from`, got " +
                                         std::to_string(span));
               }

               OverviewStore::DashboardQuery query;
               query.scope = scope_of(ctx.request.who());
               for (auto day = *from; day <= *to + date::days{1}; day += date::days{1}) {
                 query.day_starts.push_back(day_start_ms(zone, day));
               }
               query.today_start = day_start_ms(zone, today);
               query.today_end = day_start_ms(zone, today + date::days{1});
               query.executor_dead_after_ms = dead_after;
               query.failures = kLatestFailures;
               const Dashboard d = stores.overview.dashboard(query);

               nlohmann::json days = nlohmann::json::array();
               for (std::size_t i = 0; i < d.days.size(); ++i) {
                 auto entry = counts_json(d.days[i]);
                 entry["day"] = day_text(*from + date::days{static_cast<int>(i)});
                 days.push_back(std::move(entry));
               }
               nlohmann::json failures = nlohmann::json::array();
               for (const auto& f : d.latest_failures) failures.push_back(failure_json(f));
               auto runs_today = counts_json(d.today);
               runs_today["day"] = day_text(today);
               runs_today["running"] = d.running;
               runs_today["pending"] = d.pending;
               return ApiResponse{200,
                                  {{"from", day_text(*from)},
                                   {"to", day_text(*to)},
                                   {"timezone", zone_name},
                                   {"jobs", {{"enabled", d.jobs_enabled}, {"total", d.jobs_total}}},
                                   {"runsToday", std::move(runs_today)},
                                   {"executorsOnline", d.executors_online},
                                   {"nodesAlive", d.nodes_alive},
                                   {"runsPerDay", std::move(days)},
                                   {"latestFailures", std::move(failures)}}};
             },
             {"from", "to", "timezone"});
}

}  // namespace cronwheel::admin
