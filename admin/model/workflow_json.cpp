#include "admin/model/workflow_json.h"

#include "admin/model/workflow_template.h"

namespace cronwheel::admin {
namespace {

template <class T>
nlohmann::json workflow_optional_json(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

nlohmann::json edges_json(const std::vector<WorkflowEdge>& edges) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& e : edges) out.push_back({{"from", e.from}, {"to", e.to}});
  return out;
}

}  // namespace

nlohmann::json graph_json(const WorkflowGraph& graph) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& n : graph.nodes) {
    nlohmann::json node = {{"key", n.key}, {"jobId", n.job_id}, {"onFailure", to_string(n.on_failure)}};
    if (n.params_set) node["params"] = n.params;
    nodes.push_back(std::move(node));
  }
  return {{"nodes", std::move(nodes)},
          {"edges", edges_json(graph.edges)},
          {"onFailureRunning", to_string(graph.on_failure_running)}};
}

WorkflowGraph graph_from_json(const nlohmann::json& json) {
  WorkflowGraph graph;
  for (const auto& n : json.at("nodes")) {
    WorkflowNode node;
    node.key = n.at("key").get<std::string>();
    node.job_id = n.at("jobId").get<std::int64_t>();
    if (auto p = n.find("params"); p != n.end() && p->is_string()) {
      node.params = p->get<std::string>();
      node.params_set = true;
    }
    node.on_failure = parse_node_failure_policy(n.value("onFailure", "FAIL")).value_or(NodeFailurePolicy::kFail);
    graph.nodes.push_back(std::move(node));
  }
  for (const auto& e : json.at("edges")) {
    graph.edges.push_back({e.at("from").get<std::string>(), e.at("to").get<std::string>()});
  }
  graph.on_failure_running =
      parse_running_on_failure(json.value("onFailureRunning", "FINISH")).value_or(RunningOnFailure::kFinish);
  return graph;
}

nlohmann::json params_json(const std::vector<WorkflowParam>& params) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& p : params) {
    nlohmann::json param = {{"name", p.name}, {"description", p.description}};
    if (p.has_default) param["default"] = p.default_value;
    out.push_back(std::move(param));
  }
  return out;
}

std::vector<WorkflowParam> params_from_json(const nlohmann::json& json) {
  std::vector<WorkflowParam> out;
  for (const auto& p : json) {
    WorkflowParam param;
    param.name = p.at("name").get<std::string>();
    param.description = p.value("description", "");
    if (auto d = p.find("default"); d != p.end() && d->is_string()) {
      param.default_value = d->get<std::string>();
      param.has_default = true;
    }
    out.push_back(std::move(param));
  }
  return out;
}

nlohmann::json to_json(const Workflow& w) {
  nlohmann::json graph = graph_json(w.graph);
  return {
      {"id", w.id},
      {"jobGroup", w.job_group},
      {"name", w.name},
      {"description", w.description},
      {"author", w.author},
      {"alarmEmail", w.alarm_email},
      {"scheduleType", to_string(w.schedule_type)},
      {"scheduleConf", w.schedule_conf},
      {"timezone", w.timezone},
      {"misfireStrategy", to_string(w.misfire_strategy)},
      {"overlap", to_string(w.overlap)},
      {"maxParallel", w.max_parallel},
      {"timeout", w.timeout_seconds},
      {"onFailureRunning", to_string(w.graph.on_failure_running)},
      {"params", params_json(w.params)},
      {"nodes", std::move(graph["nodes"])},
      {"edges", std::move(graph["edges"])},
      {"triggerStatus", w.trigger_status},
      {"triggerLastTime", w.trigger_last_time},
      {"triggerNextTime", w.trigger_next_time},
      {"calendarId", w.calendar.calendar_id == 0 ? nlohmann::json(nullptr) : nlohmann::json(w.calendar.calendar_id)},
      {"calendarMode", std::string(to_string(w.calendar.mode))},
      {"version", w.version},
      {"createdAt", w.created_at},
      {"updatedAt", w.updated_at},
  };
}

nlohmann::json to_json(const WorkflowRun& run, const std::vector<WorkflowRunNode>* nodes) {
  auto params = nlohmann::json::parse(run.params, nullptr, false);
  nlohmann::json out = {
      {"id", run.id},
      {"workflowId", run.workflow_id},
      {"workflowName", run.workflow_name},
      {"jobGroup", run.job_group},
      {"state", to_string(run.state)},
      {"triggerType", to_string(run.trigger_type)},
      {"scheduledTime", run.scheduled_time},
      {"startedAt", workflow_optional_json(run.started_at)},
      {"endedAt", workflow_optional_json(run.ended_at)},
      {"deadline", workflow_optional_json(run.deadline)},
      {"params", params.is_object() ? params : nlohmann::json::object()},
      {"reason", run.reason},
      {"createdBy", run.created_by},
      {"alarmStatus", run.alarm_status},
      {"backfillId", workflow_optional_json(run.backfill_id)},
  };
  if (nodes != nullptr) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& n : *nodes) {
      const WorkflowNode* defined = run.graph.node(n.key);
      nlohmann::json output = nullptr;
      if (n.output) output = node_output_value(n.output, "");
      list.push_back({
          {"key", n.key},
          {"jobId", n.job_id},
          {"onFailure", to_string(defined != nullptr ? defined->on_failure : NodeFailurePolicy::kFail)},
          {"state", to_string(n.state)},
          {"runId", workflow_optional_json(n.log_id)},
          {"runState", n.run_state ? nlohmann::json(to_string(*n.run_state)) : nlohmann::json(nullptr)},
          {"attempts", n.attempts},
          {"param", n.param},
          {"output", std::move(output)},
          {"message", n.message},
          {"startedAt", workflow_optional_json(n.started_at)},
          {"endedAt", workflow_optional_json(n.ended_at)},
          {"executorAddress", n.executor_address},
      });
    }
    out["nodes"] = std::move(list);
    out["edges"] = edges_json(run.graph.edges);
  }
  return out;
}

}  // namespace cronwheel::admin
