#pragma once

// What a valid workflow graph is (docs/workflows.md, "The graph"), and the walks the planner
// and the API make over one. A graph that passes check_workflow_graph has 1..kMaxWorkflowNodes
// nodes with unique keys, edges between existing nodes, no cycle, and templates that read only
// declared parameters and the outputs of nodes upstream.

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "admin/model/workflow.h"

namespace cronwheel::admin {

struct GraphProblem {
  std::string field;    // "nodes[2].key", "edges[0].to", "nodes[1].params", "edges"
  std::string message;  // what is wrong, naming the node(s), e.g. "the edges form a cycle: a → b → a"

  friend bool operator==(const GraphProblem&, const GraphProblem&) = default;
};

// A node key: a letter, then letters, digits, '_' or '-', at most kMaxNodeKeyChars.
bool is_node_key(std::string_view key);

// Every problem of `graph` with the parameters `params`, in the order of the fields (nodes,
// then edges, then the graph's shape, then templates); empty when it is valid. The shape checks
// name the first cycle found as "a → b → c → a", and any node no start node (a node without
// parents) leads to.
std::vector<GraphProblem> check_workflow_graph(const WorkflowGraph& graph, const std::vector<WorkflowParam>& params);

// Keys of the nodes with an edge into `key` / out of `key`, in the order of the edges.
std::vector<std::string> parents_of(const WorkflowGraph& graph, std::string_view key);
std::vector<std::string> children_of(const WorkflowGraph& graph, std::string_view key);
// Every node reachable from `key` along the edges, `key` left out.
std::set<std::string, std::less<>> descendants_of(const WorkflowGraph& graph, std::string_view key);
std::set<std::string, std::less<>> ancestors_of(const WorkflowGraph& graph, std::string_view key);

}  // namespace cronwheel::admin
