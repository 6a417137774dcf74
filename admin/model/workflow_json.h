#pragma once

// Workflows as JSON: the API's and the audit log's spelling (openapi.yaml, `Workflow`,
// `WorkflowRun`), which is also how the database keeps a graph and a run's copy of it.
// Reading here is for JSON this program wrote (the database's columns); the API reads its
// input field by field, with the errors it answers (admin/api/workflows_api.cpp).

#include <nlohmann/json.hpp>

#include "admin/model/workflow.h"

namespace cronwheel::admin {

// {"nodes":[{"key","jobId","params"?,"onFailure"}],"edges":[{"from","to"}],"onFailureRunning"}
nlohmann::json graph_json(const WorkflowGraph& graph);
WorkflowGraph graph_from_json(const nlohmann::json& json);
// [{"name","default"?,"description"}]
nlohmann::json params_json(const std::vector<WorkflowParam>& params);
std::vector<WorkflowParam> params_from_json(const nlohmann::json& json);

// The workflow with its graph's nodes and edges at the top level; "calendarId" null for none.
nlohmann::json to_json(const Workflow& workflow);
// The run; with `nodes`, also each node (its onFailure from the run's graph) and the edges.
nlohmann::json to_json(const WorkflowRun& run, const std::vector<WorkflowRunNode>* nodes = nullptr);

}  // namespace cronwheel::admin
