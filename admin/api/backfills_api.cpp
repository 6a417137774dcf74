// The backfills resource (routes: add_backfill_routes in backfills_api.h).

#include "admin/api/backfills_api.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "admin/api/api_errors.h"
#include "admin/api/field_checks.h"
#include "admin/api/json_body.h"
#include "admin/api/resource_access.h"
#include "admin/model/backfill.h"
#include "admin/model/run_end.h"
#include "common/cron/cron_expression.h"

namespace cronwheel::admin {

namespace {

// "1767225600000 (2026-01-01T00:00:00+00:00)": an instant as a refusal names it.
std::string instant_text(std::int64_t ms) { return std::to_string(ms) + " (" + common::format_iso8601(ms, "UTC") + ")"; }

// What POST jobs/{id}/backfill asks for.
struct BackfillRequest {
  Backfill backfill;
  bool dry_run = false;
};

// The body, each field checked on its own (backfills_api.h says in which order).
BackfillRequest read_backfill_body(const std::string& text, const Job& job, std::int64_t now) {
  JsonBody body(text);
  BackfillRequest out;
  Backfill& b = out.backfill;
  b.job_id = job.id;
  b.job_group = job.job_group;
  b.from = body.required_int("from");
  b.to = body.required_int("to");
  const auto on_existing = body.optional_string("onExisting");
  const auto max_concurrent = body.optional_int("maxConcurrent");
  out.dry_run = body.optional_bool("dryRun").value_or(false);
  body.finish();
  if (b.from < kMinBackfillTime) {
    throw invalid("from", "from: " + std::to_string(b.from) + " is before " + instant_text(kMinBackfillTime) +
                              ": executors refuse a run time that early");
  }
  if (b.to <= b.from) {
    throw invalid("to", "to: must be after from (" + std::to_string(b.from) + "), got " + std::to_string(b.to));
  }
  if (b.to > now) {
    // The number alone: a value this far out may be beyond the calendar's years.
    throw invalid("to", "to: " + std::to_string(b.to) + " is in the future (now is " + instant_text(now) +
                            "): a backfill runs instants that have passed");
  }
  if (on_existing) {
    const auto parsed = parse_on_existing(*on_existing);
    if (!parsed) {
      throw invalid("onExisting", "onExisting: must be SKIP (pass over an instant that has a run) or RERUN (run it "
                                  "again), got '" + truncate_chars(*on_existing, 20) + "'");
    }
    b.on_existing = *parsed;
  }
  b.max_concurrent = max_concurrent ? check_int_range("maxConcurrent", *max_concurrent, 1, kMaxBackfillConcurrent) : 1;
  return out;
}

// The backfill with `id` when it exists and `who` may see its job's group; 404 otherwise.
Backfill visible_backfill(BackfillStore& store, const Principal& who, std::int64_t id) {
  auto b = store.get(id);
  const auto scope = scope_of(who);
  if (!b || (scope && std::find(scope->begin(), scope->end(), b->job_group) == scope->end())) {
    throw not_found("no such backfill " + std::to_string(id));
  }
  return *b;
}

// A backfill as GET backfills/{id} answers it: its row and its runs by state.
nlohmann::json detail_json(BackfillStore& store, const Backfill& b) {
  auto out = to_json(b);
  out["runs"] = to_json(store.runs(b.id));
  return out;
}

}  // namespace

void add_backfill_routes(ApiRouter& router, Stores stores, const BackfillRoutes& routes, common::Clock& clock) {
  if (routes.store == nullptr) throw std::invalid_argument("BackfillRoutes::store is not set");
  BackfillStore& store = *routes.store;

  router.add("POST", "jobs/{id}/backfill", Access::kUser,
             [stores, routes, &store, &clock](ApiRouter::RouteContext& ctx, const common::http::Request& req) {
               const Job job = visible_job(stores.jobs, ctx.request.who(), ctx.path_int("id"));
               const auto now = clock.now_ms();
               auto request = read_backfill_body(req.body, job, now);
               Backfill& b = request.backfill;
               std::optional<Calendar> calendar;
               if (job.calendar.calendar_id != 0 && routes.calendars != nullptr) {
                 calendar = routes.calendars->get(job.calendar.calendar_id);
               }
               std::optional<Schedule> schedule;
               try {
                 schedule = backfill_schedule(job, calendar);
               } catch (const BackfillRefused& e) {
                 throw invalid(e.field(), e.what());
               }
               // Counted with the schedule, one past the bound at most: never a loop over every
               // fire of a long range.
               const auto counted =
                   backfill_instants(*schedule, b.from, b.to, std::nullopt, static_cast<std::size_t>(kMaxBackfillInstants));
               if (!counted.complete) {
                 throw invalid("to", "to: the range holds more than " + std::to_string(kMaxBackfillInstants) +
                                         " instants of the job's schedule; backfill it in parts (the first " +
                                         std::to_string(kMaxBackfillInstants) + " end at " +
                                         instant_text(counted.instants.back()) + ")");
               }
               b.total = static_cast<std::int64_t>(counted.instants.size());
               b.created_by = ctx.request.actor.username;
               if (request.dry_run) {
                 const auto existing = store.existing(job.id, counted.instants);
                 const auto to_run = b.on_existing == OnExisting::kSkip ? b.total - static_cast<std::int64_t>(existing.size())
                                                                        : b.total;
                 return ApiResponse{200, nlohmann::json{{"jobId", job.id},
                                                        {"from", b.from},
                                                        {"to", b.to},
                                                        {"onExisting", std::string(to_string(b.on_existing))},
                                                        {"total", b.total},
                                                        {"toRun", to_run},
                                                        {"instants", counted.instants},
                                                        {"existing", existing}}};
               }
               if (b.total == 0) {
                 throw invalid("to", "to: the job's schedule has no instant from " + instant_text(b.from) + " to " +
                                         instant_text(b.to) + (calendar ? " that its calendar lets through" : ""));
               }
               if (static_cast<std::int64_t>(store.running(static_cast<int>(kMaxRunningBackfills)).size()) >=
                   kMaxRunningBackfills) {
                 throw conflict(std::to_string(kMaxRunningBackfills) +
                                " backfills are running, the most there may be at once; wait for one to end or "
                                "cancel one");
               }
               const auto created = store.create(b, ctx.request.actor);
               if (routes.created) routes.created();
               return ApiResponse{201, detail_json(store, created)};
             });

  router.add("GET", "backfills", Access::kUser, [&store](ApiRouter::RouteContext& ctx, const common::http::Request& req) {
    BackfillStore::Filter filter;
    filter.scope = scope_of(ctx.request.who());
    filter.job_id = query_int(req.get_param_value("jobId"), "jobId");
    if (const auto state = req.get_param_value("state"); !state.empty()) {
      filter.state = parse_backfill_state(state);
      if (!filter.state) throw invalid("state", "state: must be running, done or cancelled");
    }
    filter.page = page_query(req);
    const auto page = store.list(filter);
    return ApiResponse{200, page_json(page.items, page.total, [](const Backfill& b) { return to_json(b); })};
  }, paged({"jobId", "state"}));

  router.add("GET", "backfills/{id}", Access::kUser, [&store](ApiRouter::RouteContext& ctx, const common::http::Request&) {
    return ApiResponse{200, detail_json(store, visible_backfill(store, ctx.request.who(), ctx.path_int("id")))};
  });

  router.add("POST", "backfills/{id}/cancel", Access::kUser,
             [routes, &store, &clock](ApiRouter::RouteContext& ctx, const common::http::Request& req) {
               const auto b = visible_backfill(store, ctx.request.who(), ctx.path_int("id"));
               JsonBody(req.body).finish();
               const auto now = clock.now_ms();
               const auto cancelled =
                   store.cancel(b.id, now, ctx.request.actor, follow_ups_of(RunEnd::kCancelled, now, routes.node_id));
               if (!cancelled) throw not_found("no such backfill " + std::to_string(b.id));
               if (!cancelled->changed) {
                 throw conflict("backfill " + std::to_string(b.id) + " has ended already (" +
                                std::string(to_string(cancelled->backfill.state)) + ")");
               }
               if (routes.finished_runs != nullptr) {
                 for (const auto& run : cancelled->runs) routes.finished_runs->add(run.job_group, FireState::kCancelled);
               }
               return ApiResponse{200, detail_json(store, cancelled->backfill)};
             });
}

}  // namespace cronwheel::admin
