// The backfills resource (routes: add_backfill_routes in backfills_api.h).

#include "admin/api/backfills_api.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "admin/api/api_errors.h"
#include "admin/api/field_checks.h"
#include "admin/api/json_body.h"
#include "admin/api/resource_access.h"
#include "admin/api/workflows_api.h"
#include "admin/model/backfill.h"
#include "admin/model/run_end.h"
#include "common/cron/cron_expression.h"

namespace cronwheel::admin {

namespace {

// A workflow's backfill's body carries its runs' inputs: up to a trigger's size.
constexpr std::size_t kMaxBackfillBodyBytes = 2 * 1024 * 1024;

// "1767225600000 (2026-01-01T00:00:00+00:00)": an instant as a refusal names it.
std::string instant_text(std::int64_t ms) { return std::to_string(ms) + " (" + common::format_iso8601(ms, "UTC") + ")"; }

// What POST jobs/{id}/backfill or workflows/{id}/backfill asks for.
struct BackfillRequest {
  Backfill backfill;
  bool dry_run = false;
};

// The body, each field checked on its own (backfills_api.h says in which order); `workflow`: of
// a workflow's backfill, whose body may carry `inputs` (a job's may not).
BackfillRequest read_backfill_body(const std::string& text, std::int64_t now, const Workflow* workflow) {
  JsonBody body(text);
  BackfillRequest out;
  Backfill& b = out.backfill;
  b.from = body.required_int("from");
  b.to = body.required_int("to");
  const auto on_existing = body.optional_string("onExisting");
  const auto max_concurrent = body.optional_int("maxConcurrent");
  out.dry_run = body.optional_bool("dryRun").value_or(false);
  std::optional<nlohmann::json> inputs;
  if (workflow != nullptr) {
    if (const nlohmann::json* given = body.optional_value("inputs")) inputs = *given;
  }
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
  if (workflow != nullptr) b.params = workflow_run_inputs(*workflow, inputs ? &*inputs : nullptr, "inputs");
  return out;
}

// The calendar `use` names, read when it names one and there is a store to read it from.
std::optional<Calendar> calendar_of(const BackfillRoutes& routes, const CalendarUse& use) {
  if (use.calendar_id == 0 || routes.calendars == nullptr) return std::nullopt;
  return routes.calendars->get(use.calendar_id);
}

// What a backfill is asked of, resolved by its route.
struct BackfillTarget {
  std::string noun;                       // "job", "workflow": what messages call it
  nlohmann::json plan_head;               // the dry run's first fields: kind and the job's or workflow's id
  std::optional<Calendar> calendar;       // the calendar it names, as read
  std::function<Schedule()> schedule;     // backfill_schedule of it (BackfillRefused)
  std::function<std::vector<std::int64_t>(const std::vector<std::int64_t>&)> existing;  // the store's read
};

// The backfill with `id` when it exists and `who` may see its job's or workflow's group; 404
// otherwise.
Backfill visible_backfill(BackfillStore& store, const Principal& who, std::int64_t id) {
  auto b = store.get(id);
  if (!b || !who.may_access_group(b->job_group)) {
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

// The rest of a backfill request, once the route has read its target and body: the schedule,
// the range's instants, then the dry run's answer or the backfill made.
ApiResponse answer_backfill(BackfillStore& store, const BackfillRoutes& routes, ApiRouter::RouteContext& ctx,
                            BackfillRequest request, const BackfillTarget& target) {
  Backfill& b = request.backfill;
  std::optional<Schedule> schedule;
  try {
    schedule = target.schedule();
  } catch (const BackfillRefused& e) {
    throw invalid(e.field(), e.what());
  }
  // Counted with the schedule, one past the bound at most: never a loop over every fire of a
  // long range.
  const auto counted = backfill_instants(*schedule, b.from, b.to, std::nullopt, static_cast<std::size_t>(kMaxBackfillInstants));
  if (!counted.complete) {
    throw invalid("to", "to: the range holds more than " + std::to_string(kMaxBackfillInstants) + " instants of the " +
                            target.noun + "'s schedule; backfill it in parts (the first " +
                            std::to_string(kMaxBackfillInstants) + " end at " + instant_text(counted.instants.back()) + ")");
  }
  b.total = static_cast<std::int64_t>(counted.instants.size());
  b.created_by = ctx.request.actor.username;
  if (request.dry_run) {
    const auto existing = target.existing(counted.instants);
    const auto to_run =
        b.on_existing == OnExisting::kSkip ? b.total - static_cast<std::int64_t>(existing.size()) : b.total;
    nlohmann::json plan = target.plan_head;
    plan["from"] = b.from;
    plan["to"] = b.to;
    plan["onExisting"] = std::string(to_string(b.on_existing));
    plan["total"] = b.total;
    plan["toRun"] = to_run;
    plan["instants"] = counted.instants;
    plan["existing"] = existing;
    return ApiResponse{200, std::move(plan)};
  }
  if (b.total == 0) {
    throw invalid("to", "to: the " + target.noun + "'s schedule has no instant from " + instant_text(b.from) + " to " +
                            instant_text(b.to) + (target.calendar ? " that its calendar lets through" : ""));
  }
  if (static_cast<std::int64_t>(store.running(static_cast<int>(kMaxRunningBackfills)).size()) >= kMaxRunningBackfills) {
    throw conflict(std::to_string(kMaxRunningBackfills) +
                   " backfills are running, the most there may be at once; wait for one to end or cancel one");
  }
  const auto created = store.create(b, ctx.request.actor);
  if (routes.created) routes.created();
  return ApiResponse{201, detail_json(store, created)};
}

}  // namespace

void add_backfill_routes(ApiRouter& router, Stores stores, const BackfillRoutes& routes, common::Clock& clock) {
  if (routes.store == nullptr) throw std::invalid_argument("BackfillRoutes::store is not set");
  BackfillStore& store = *routes.store;

  router.add("POST", "jobs/{id}/backfill", Access::kUser,
             [stores, routes, &store, &clock](ApiRouter::RouteContext& ctx, const common::http::Request& req) {
               const Job job = visible_job(stores.jobs, ctx.request.who(), ctx.path_int("id"));
               auto request = read_backfill_body(req.body, clock.now_ms(), nullptr);
               request.backfill.job_id = job.id;
               request.backfill.job_group = job.job_group;
               BackfillTarget target;
               target.noun = "job";
               target.plan_head = {{"kind", "job"}, {"jobId", job.id}};
               target.calendar = calendar_of(routes, job.calendar);
               target.schedule = [&] { return backfill_schedule(job, target.calendar); };
               target.existing = [&](const std::vector<std::int64_t>& instants) { return store.existing(job.id, instants); };
               return answer_backfill(store, routes, ctx, std::move(request), target);
             });

  if (routes.workflows != nullptr) {
    WorkflowStore& workflows = *routes.workflows;
    router.add("POST", "workflows/{id}/backfill", Access::kUser,
               [routes, &store, &workflows, &clock](ApiRouter::RouteContext& ctx, const common::http::Request& req) {
                 const Workflow workflow = visible_workflow(workflows, ctx.request.who(), ctx.path_int("id"));
                 auto request = read_backfill_body(req.body, clock.now_ms(), &workflow);
                 request.backfill.workflow_id = workflow.id;
                 request.backfill.job_group = workflow.job_group;
                 request.backfill.workflow_name = workflow.name;
                 BackfillTarget target;
                 target.noun = "workflow";
                 target.plan_head = {{"kind", "workflow"}, {"workflowId", workflow.id}};
                 target.calendar = calendar_of(routes, workflow.calendar);
                 target.schedule = [&] { return backfill_schedule(workflow, target.calendar); };
                 target.existing = [&](const std::vector<std::int64_t>& instants) {
                   return store.existing_workflow_runs(workflow.id, instants);
                 };
                 return answer_backfill(store, routes, ctx, std::move(request), target);
               }, {}, {.max_body_bytes = kMaxBackfillBodyBytes});
  }

  router.add("GET", "backfills", Access::kUser, [&store](ApiRouter::RouteContext& ctx, const common::http::Request& req) {
    BackfillStore::Filter filter;
    filter.scope = scope_of(ctx.request.who());
    filter.job_id = query_int(req.get_param_value("jobId"), "jobId");
    filter.workflow_id = query_int(req.get_param_value("workflowId"), "workflowId");
    if (const auto state = req.get_param_value("state"); !state.empty()) {
      filter.state = parse_backfill_state(state);
      if (!filter.state) throw invalid("state", "state: must be running, done or cancelled");
    }
    filter.page = page_query(req);
    const auto page = store.list(filter);
    return ApiResponse{200, page_json(page.items, page.total, [](const Backfill& b) { return to_json(b); })};
  }, paged({"jobId", "workflowId", "state"}));

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
