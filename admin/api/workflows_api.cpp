// The workflows resource and their runs (routes: add_workflow_routes in workflows_api.h).

#include "admin/api/workflows_api.h"

#include <set>

#include "admin/api/api_errors.h"
#include "admin/api/field_checks.h"
#include "admin/api/job_validation.h"
#include "admin/api/json_body.h"
#include "admin/api/resource_access.h"
#include "admin/model/schedule.h"
#include "admin/model/scan.h"
#include "admin/model/workflow_graph.h"
#include "admin/model/workflow_json.h"
#include "common/jobs_file/jobs_file.h"

namespace cronwheel::admin {

namespace {

// Create and update bodies carry whole graphs with their templates.
constexpr std::size_t kMaxWorkflowBodyBytes = 2 * 1024 * 1024;
constexpr std::size_t kMaxParamValueBytes = 64 * 1024;
constexpr std::size_t kMaxParamDescription = 255;
constexpr std::int64_t kMaxTimeoutSeconds = 7LL * 24 * 3600;
// workflow.name is varchar(64).
constexpr std::size_t kMaxWorkflowNameChars = 64;

// Runs `read` on a nested object; its errors name the field under `prefix` ("nodes[2].").
template <class F>
auto nested(const std::string& prefix, F&& read) {
  try {
    return read();
  } catch (const common::http::HttpError& e) {
    common::http::ErrorInfo info = e.info();
    info.field = prefix + info.field;
    info.message = prefix + info.message;
    throw common::http::HttpError(info);
  }
}

const nlohmann::json* array_field(JsonBody& body, const char* field, std::size_t max_items) {
  const nlohmann::json* value = body.optional_value(field);
  if (value == nullptr) return nullptr;
  if (!value->is_array()) throw invalid(field, std::string(field) + ": expected an array");
  if (value->size() > max_items) {
    throw invalid(field, std::string(field) + ": at most " + std::to_string(max_items) + " items");
  }
  return value;
}

JsonBody object_body(const nlohmann::json& item) {
  if (!item.is_object()) throw invalid("", "expected an object");
  return JsonBody(item.dump());
}

std::vector<WorkflowParam> read_params(JsonBody& body) {
  std::vector<WorkflowParam> out;
  const nlohmann::json* list = array_field(body, "params", kMaxWorkflowParams);
  if (list == nullptr) return out;
  std::set<std::string> names;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const std::string prefix = "params[" + std::to_string(i) + "].";
    out.push_back(nested(prefix, [&] {
      JsonBody p = object_body((*list)[i]);
      WorkflowParam param;
      param.name = p.required_string("name");
      if (!is_node_key(param.name)) {
        throw invalid("name", "name: '" + truncate_chars(param.name, 64) +
                                  "' is not a parameter name: a letter, then letters, digits, '_' or '-', at most 64");
      }
      if (!names.insert(param.name).second) throw invalid("name", "name: " + param.name + " is declared twice");
      if (auto d = p.optional_string("default")) {
        if (d->size() > kMaxParamValueBytes) throw invalid("default", "default: at most 65536 bytes");
        param.default_value = *d;
        param.has_default = true;
      }
      param.description = p.optional_string("description").value_or("");
      check_text("description", param.description, kMaxParamDescription, false);
      p.finish();
      return param;
    }));
  }
  return out;
}

WorkflowGraph read_graph(JsonBody& body) {
  WorkflowGraph graph;
  const nlohmann::json* nodes = array_field(body, "nodes", kMaxWorkflowNodes);
  if (nodes == nullptr) throw invalid("nodes", "nodes: is required");
  for (std::size_t i = 0; i < nodes->size(); ++i) {
    graph.nodes.push_back(nested("nodes[" + std::to_string(i) + "].", [&] {
      JsonBody n = object_body((*nodes)[i]);
      WorkflowNode node;
      node.key = n.required_string("key");
      node.job_id = n.required_int("jobId");
      if (auto p = n.optional_string("params")) {
        if (p->size() > kMaxTemplateBytes) throw invalid("params", "params: at most 65536 bytes");
        node.params = *p;
        node.params_set = true;
      }
      if (auto policy = n.optional_string("onFailure")) {
        auto parsed = parse_node_failure_policy(*policy);
        if (!parsed) throw invalid("onFailure", "onFailure: must be FAIL or CONTINUE");
        node.on_failure = *parsed;
      }
      n.finish();
      return node;
    }));
  }
  if (const nlohmann::json* edges = array_field(body, "edges", kMaxWorkflowEdges)) {
    for (std::size_t i = 0; i < edges->size(); ++i) {
      graph.edges.push_back(nested("edges[" + std::to_string(i) + "].", [&] {
        JsonBody e = object_body((*edges)[i]);
        WorkflowEdge edge{e.required_string("from"), e.required_string("to")};
        e.finish();
        return edge;
      }));
    }
  }
  if (auto running = body.optional_string("onFailureRunning")) {
    auto parsed = parse_running_on_failure(*running);
    if (!parsed) throw invalid("onFailureRunning", "onFailureRunning: must be FINISH or KILL");
    graph.on_failure_running = *parsed;
  }
  return graph;
}

// A workflow body read field by field; `version` is read by the caller for updates.
Workflow read_workflow_body(JsonBody& body) {
  Workflow w;
  w.job_group = body.required_int("jobGroup");
  w.name = body.required_string("name");
  if (w.name.size() > kMaxWorkflowNameChars) {
    throw invalid("name", "name: at most " + std::to_string(kMaxWorkflowNameChars) + " characters");
  }
  if (!common::jobs_file::is_job_name(w.name)) {
    throw invalid("name", "name: '" + truncate_chars(w.name, 100) +
                              "' is not a name: lower-case letters, digits, '.', '_', '-', starting with a letter or "
                              "digit, at most 100");
  }
  w.description = body.optional_string("description").value_or("");
  check_text("description", w.description, kMaxJobDesc, false);
  w.author = body.optional_string("author").value_or("");
  check_text("author", w.author, kMaxAuthor, false);
  w.alarm_email = checked_email_list("alarmEmail", body.optional_string("alarmEmail").value_or(""), kMaxAlarmEmail);
  if (auto type = body.optional_string("scheduleType")) {
    if (*type == "NONE") {
      w.schedule_type = ScheduleType::kNone;
    } else if (*type == "CRON") {
      w.schedule_type = ScheduleType::kCron;
    } else if (*type == "FIX_RATE") {
      w.schedule_type = ScheduleType::kFixRate;
    } else {
      throw invalid("scheduleType", "scheduleType: must be NONE, CRON or FIX_RATE (a workflow has no FIX_DELAY)");
    }
  }
  w.schedule_conf = body.optional_string("scheduleConf").value_or("");
  w.timezone = body.optional_string("timezone").value_or("UTC");
  check_text("timezone", w.timezone, kMaxTimezone, true);
  try {
    validate_schedule(w.schedule_type, w.schedule_conf, w.timezone);
  } catch (const ScheduleError& e) {
    throw invalid(e.field(), e.what());
  }
  if (auto misfire = body.optional_string("misfireStrategy")) {
    auto parsed = common::protocol::parse_enum<MisfireStrategy>(*misfire);
    if (!parsed) throw invalid("misfireStrategy", "misfireStrategy: must be DO_NOTHING or FIRE_ONCE_NOW");
    w.misfire_strategy = *parsed;
  }
  if (auto overlap = body.optional_string("overlap")) {
    auto parsed = parse_overlap_policy(*overlap);
    if (!parsed) throw invalid("overlap", "overlap: must be WAIT, SKIP or PARALLEL");
    w.overlap = *parsed;
  }
  w.max_parallel = check_int_range("maxParallel", body.optional_int("maxParallel").value_or(1), 1, 100);
  w.timeout_seconds = check_int_range("timeout", body.optional_int("timeout").value_or(0), 0, kMaxTimeoutSeconds);
  w.params = read_params(body);
  w.graph = read_graph(body);
  w.calendar = read_calendar_use(body, CalendarUse{});
  return w;
}

// Every problem of a workflow beyond its fields' own: the graph's shape and templates, the
// jobs its nodes name (each one `who` can see, none a broadcast), a scheduled workflow's
// parameters all having defaults, and the calendar it names existing.
std::vector<GraphProblem> problems_of(const Workflow& w, Stores& stores, const Principal& who, CalendarStore* calendars) {
  std::vector<GraphProblem> problems = check_workflow_graph(w.graph, w.params);
  for (std::size_t i = 0; i < w.graph.nodes.size(); ++i) {
    const auto& n = w.graph.nodes[i];
    if (n.job_id <= 0) continue;
    const std::string field = "nodes[" + std::to_string(i) + "].jobId";
    std::optional<Job> job;
    try {
      job = visible_job(stores.jobs, who, n.job_id);
    } catch (const common::http::HttpError&) {
      problems.push_back({field, "node " + n.key + ": job " + std::to_string(n.job_id) + " does not exist"});
      continue;
    }
    if (job->executor_route_strategy == RouteStrategy::kShardingBroadcast) {
      problems.push_back({field, "node " + n.key + ": job " + job->name +
                                     " is a SHARDING_BROADCAST job; a workflow node runs on one executor"});
    }
  }
  if (w.schedule_type != ScheduleType::kNone) {
    for (std::size_t i = 0; i < w.params.size(); ++i) {
      if (!w.params[i].has_default) {
        problems.push_back({"params[" + std::to_string(i) + "].default",
                            "parameter " + w.params[i].name + " needs a default: a scheduled run has no one to give it"});
      }
    }
  }
  // As check_calendar_use(), listed with the others.
  if (w.calendar.calendar_id != 0 && calendars != nullptr && !calendars->get(w.calendar.calendar_id)) {
    problems.push_back({"calendarId", "calendar " + std::to_string(w.calendar.calendar_id) + " does not exist"});
  }
  return problems;
}

void refuse_problems(const std::vector<GraphProblem>& problems) {
  if (problems.empty()) return;
  const auto& first = problems.front();
  std::string message = first.field + ": " + first.message;
  if (problems.size() > 1) message += " (and " + std::to_string(problems.size() - 1) + " more; POST workflows/check lists them)";
  throw invalid(first.field, message);
}


WorkflowStore::RunDetail visible_run(WorkflowStore& store, const Principal& who, std::int64_t id) {
  auto d = store.get_run(id);
  if (!d || !who.may_access_group(d->run.job_group)) {
    throw not_found("no such workflow run " + std::to_string(id));
  }
  return *d;
}

std::int64_t first_time(const Workflow& w, std::int64_t now, CalendarStore* calendars) {
  Job as_job;
  as_job.id = w.id;
  as_job.schedule_type = w.schedule_type;
  as_job.schedule_conf = w.schedule_conf;
  as_job.timezone = w.timezone;
  as_job.calendar = w.calendar;
  return first_fire_time(as_job, now, calendars);
}

nlohmann::json run_json(const WorkflowStore::RunDetail& d) { return to_json(d.run, &d.nodes); }

// The inputs of a trigger: every declared parameter, from the body or its default.
std::string trigger_params(const std::string& text, const Workflow& w) {
  JsonBody body(text);
  std::optional<nlohmann::json> given;
  if (const nlohmann::json* value = body.optional_value("params")) given = *value;
  body.finish();
  return workflow_run_inputs(w, given ? &*given : nullptr, "params");
}

}  // namespace

Workflow visible_workflow(WorkflowStore& store, const Principal& who, std::int64_t id) {
  auto w = store.get(id);
  if (!w || !who.may_access_group(w->job_group)) throw not_found("no such workflow " + std::to_string(id));
  return std::move(*w);
}

std::string workflow_run_inputs(const Workflow& w, const nlohmann::json* given, const std::string& field) {
  nlohmann::json values = nlohmann::json::object();
  if (given != nullptr) {
    if (!given->is_object()) throw invalid(field, field + ": expected an object of parameter values");
    values = *given;
  }
  nlohmann::json out = nlohmann::json::object();
  for (const auto& p : w.params) {
    auto it = values.find(p.name);
    if (it == values.end() || it->is_null()) {
      if (!p.has_default) throw invalid(field, field + "." + p.name + ": is required (it has no default)");
      out[p.name] = p.default_value;
      continue;
    }
    if (it->dump().size() > kMaxParamValueBytes) throw invalid(field, field + "." + p.name + ": at most 65536 bytes");
    out[p.name] = *it;
  }
  for (const auto& [name, value] : values.items()) {
    if (!out.contains(name)) throw invalid(field, field + "." + truncate_chars(name, 64) + ": the workflow has no such parameter");
  }
  return out.dump();
}

void add_workflow_routes(ApiRouter& router, Stores stores, const WorkflowRoutes& routes, common::Clock& clock) {
  WorkflowStore& store = *routes.store;
  const common::http::RouteOptions big_body{.max_body_bytes = kMaxWorkflowBodyBytes};
  auto sent = [routes](const std::vector<JobLog>& fires) {
    if (routes.fires_written && !fires.empty()) routes.fires_written(fires);
  };

  router.add("GET", "workflows", Access::kUser, [&store](ApiRouter::RouteContext& ctx, const common::http::Request& req) {
    WorkflowStore::Filter filter;
    filter.scope = scope_of(ctx.request.who());
    filter.job_group = query_int(req.get_param_value("jobGroup"), "jobGroup");
    filter.name = req.get_param_value("name");
    filter.text = req.get_param_value("text");
    check_text("text", filter.text, 100, false);
    filter.page = page_query(req);
    auto page = store.list(filter);
    return ApiResponse{200, page_json(page.items, page.total, [](const Workflow& w) { return to_json(w); })};
  }, paged({"jobGroup", "name", "text"}));

  router.add("POST", "workflows/check", Access::kUser,
             [&store, stores, routes](ApiRouter::RouteContext& ctx, const common::http::Request& req) mutable {
               (void)store;
               JsonBody body(req.body);
               Workflow w = read_workflow_body(body);
               body.finish();
               visible_group(stores.groups, ctx.request.who(), w.job_group);
               nlohmann::json list = nlohmann::json::array();
               for (const auto& p : problems_of(w, stores, ctx.request.who(), routes.calendars)) {
                 list.push_back({{"field", p.field}, {"message", p.message}});
               }
               return ApiResponse{200, {{"problems", std::move(list)}}};
             }, {}, big_body);

  router.add("POST", "workflows", Access::kUser,
             [&store, stores, routes](ApiRouter::RouteContext& ctx, const common::http::Request& req) mutable {
               JsonBody body(req.body);
               Workflow w = read_workflow_body(body);
               body.finish();
               try {
                 visible_group(stores.groups, ctx.request.who(), w.job_group);
               } catch (const common::http::HttpError&) {
                 throw invalid("jobGroup", "jobGroup: group " + std::to_string(w.job_group) + " does not exist");
               }
               refuse_problems(problems_of(w, stores, ctx.request.who(), routes.calendars));
               return ApiResponse{201, to_json(store.create(w, ctx.request.actor))};
             }, {}, big_body);

  router.add("GET", "workflows/{id}", Access::kUser, [&store](ApiRouter::RouteContext& ctx, const common::http::Request&) {
    return ApiResponse{200, to_json(visible_workflow(store, ctx.request.who(), ctx.path_int("id")))};
  });

  router.add("PUT", "workflows/{id}", Access::kUser,
             [&store, stores, &clock, routes](ApiRouter::RouteContext& ctx, const common::http::Request& req) mutable {
               const Workflow before = visible_workflow(store, ctx.request.who(), ctx.path_int("id"));
               JsonBody body(req.body);
               Workflow w = read_workflow_body(body);
               w.version = static_cast<int>(check_int_range("version", body.required_int("version"), 1, INT32_MAX));
               body.finish();
               w.id = before.id;
               try {
                 visible_group(stores.groups, ctx.request.who(), w.job_group);
               } catch (const common::http::HttpError&) {
                 throw invalid("jobGroup", "jobGroup: group " + std::to_string(w.job_group) + " does not exist");
               }
               refuse_problems(problems_of(w, stores, ctx.request.who(), routes.calendars));
               int status = before.trigger_status;
               std::int64_t next = before.trigger_next_time;
               const bool rescheduled = w.schedule_type != before.schedule_type || w.schedule_conf != before.schedule_conf ||
                                        w.timezone != before.timezone || w.calendar != before.calendar;
               if (status == 1 && rescheduled) {
                 if (w.schedule_type == ScheduleType::kNone) {
                   status = 0;
                   next = 0;
                 } else {
                   next = first_time(w, clock.now_ms(), routes.calendars);
                 }
               }
               return ApiResponse{200, to_json(store.update(w, status, next, ctx.request.actor))};
             }, {}, big_body);

  router.add("DELETE", "workflows/{id}", Access::kUser, [&store](ApiRouter::RouteContext& ctx, const common::http::Request&) {
    const Workflow w = visible_workflow(store, ctx.request.who(), ctx.path_int("id"));
    store.remove(w.id, ctx.request.actor);
    return ApiResponse{204, nullptr};
  });

  router.add("POST", "workflows/{id}/start", Access::kUser,
             [&store, &clock, routes](ApiRouter::RouteContext& ctx, const common::http::Request& req) {
               const Workflow w = visible_workflow(store, ctx.request.who(), ctx.path_int("id"));
               JsonBody(req.body).finish();
               if (w.trigger_status == 1) return ApiResponse{200, to_json(w)};
               if (w.schedule_type == ScheduleType::kNone) {
                 throw conflict("workflow " + w.name + " has no schedule (NONE): trigger it, or give it one", "scheduleType");
               }
               return ApiResponse{200, to_json(store.set_status(w.id, 1, first_time(w, clock.now_ms(), routes.calendars),
                                                                ctx.request.actor))};
             });

  router.add("POST", "workflows/{id}/stop", Access::kUser, [&store](ApiRouter::RouteContext& ctx, const common::http::Request& req) {
    const Workflow w = visible_workflow(store, ctx.request.who(), ctx.path_int("id"));
    JsonBody(req.body).finish();
    if (w.trigger_status == 0) return ApiResponse{200, to_json(w)};
    return ApiResponse{200, to_json(store.set_status(w.id, 0, 0, ctx.request.actor))};
  });

  router.add("POST", "workflows/{id}/trigger", Access::kUser,
             [&store, &clock, routes, sent](ApiRouter::RouteContext& ctx, const common::http::Request& req) {
               const Workflow w = visible_workflow(store, ctx.request.who(), ctx.path_int("id"));
               WorkflowStore::TriggerRequest request;
               request.workflow_id = w.id;
               request.params_json = trigger_params(req.body, w);
               request.trigger_type = ctx.request.who().method == Principal::Method::kToken ? TriggerType::kApi : TriggerType::kManual;
               request.now = clock.now_ms();
               request.node_id = routes.node_id;
               request.actor = ctx.request.actor;
               auto changed = store.trigger(request);
               sent(changed.fires);
               const auto run = store.get_run(changed.runs.front().id);
               if (!run) throw not_found("no such workflow run " + std::to_string(changed.runs.front().id));
               return ApiResponse{201, run_json(*run)};
             }, {}, {.max_body_bytes = kMaxWorkflowBodyBytes});

  router.add("GET", "workflow-runs", Access::kUser, [&store](ApiRouter::RouteContext& ctx, const common::http::Request& req) {
    WorkflowStore::RunFilter filter;
    filter.scope = scope_of(ctx.request.who());
    filter.workflow_id = query_int(req.get_param_value("workflowId"), "workflowId");
    filter.job_group = query_int(req.get_param_value("jobGroup"), "jobGroup");
    if (const auto state = req.get_param_value("state"); !state.empty()) {
      filter.state = parse_workflow_run_state(state);
      if (!filter.state) {
        throw invalid("state", "state: must be waiting, running, succeeded, failed, cancelled, skipped or timed_out");
      }
    }
    filter.backfill_id = query_int(req.get_param_value("backfillId"), "backfillId");
    filter.page = keyed_page_query(req);
    auto page = store.list_runs(filter);
    return ApiResponse{200, keyed_page_json(page, [](const WorkflowRun& r) { return to_json(r); })};
  }, keyed_paged({"workflowId", "jobGroup", "state", "backfillId"}));

  router.add("GET", "workflow-runs/{id}", Access::kUser, [&store](ApiRouter::RouteContext& ctx, const common::http::Request&) {
    return ApiResponse{200, run_json(visible_run(store, ctx.request.who(), ctx.path_int("id")))};
  });

  auto changed_run = [&store, sent](const WorkflowStore::RunChange& change, std::int64_t id) {
    if (change.status == WorkflowStore::RunChange::Status::kNotFound) throw not_found("no such workflow run " + std::to_string(id));
    if (change.status == WorkflowStore::RunChange::Status::kRefused) throw conflict(change.reason);
    sent(change.changed.fires);
    auto run = store.get_run(id);
    if (!run) throw not_found("no such workflow run " + std::to_string(id));
    return ApiResponse{200, run_json(*run)};
  };

  router.add("POST", "workflow-runs/{id}/cancel", Access::kUser,
             [&store, &clock, routes, changed_run](ApiRouter::RouteContext& ctx, const common::http::Request& req) {
               const auto run = visible_run(store, ctx.request.who(), ctx.path_int("id"));
               JsonBody(req.body).finish();
               return changed_run(store.cancel(run.run.id, clock.now_ms(), routes.node_id, ctx.request.actor), run.run.id);
             });

  router.add("POST", "workflow-runs/{id}/rerun", Access::kUser,
             [&store, &clock, routes, changed_run](ApiRouter::RouteContext& ctx, const common::http::Request& req) {
               const auto run = visible_run(store, ctx.request.who(), ctx.path_int("id"));
               JsonBody body(req.body);
               const std::string node = body.required_string("node");
               body.finish();
               check_text("node", node, kMaxNodeKeyChars, true);
               return changed_run(store.rerun(run.run.id, node, clock.now_ms(), routes.node_id, ctx.request.actor),
                                  run.run.id);
             });
}

}  // namespace cronwheel::admin
