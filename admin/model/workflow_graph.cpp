#include "admin/model/workflow_graph.h"

#include <algorithm>
#include <cctype>
#include <deque>
#include <map>

#include "admin/model/workflow_template.h"

namespace cronwheel::admin {
namespace {

using Adjacency = std::map<std::string, std::vector<std::string>, std::less<>>;

Adjacency adjacency(const WorkflowGraph& graph, bool forward) {
  Adjacency out;
  for (const auto& n : graph.nodes) out[n.key];
  for (const auto& e : graph.edges) {
    if (forward) {
      out[e.from].push_back(e.to);
    } else {
      out[e.to].push_back(e.from);
    }
  }
  return out;
}

std::set<std::string, std::less<>> reach(const Adjacency& next, std::string_view start) {
  std::set<std::string, std::less<>> seen;
  std::deque<std::string> todo{std::string(start)};
  while (!todo.empty()) {
    std::string at = std::move(todo.front());
    todo.pop_front();
    auto it = next.find(at);
    if (it == next.end()) continue;
    for (const auto& n : it->second) {
      if (seen.insert(n).second) todo.push_back(n);
    }
  }
  seen.erase(std::string(start));
  return seen;
}

// The first cycle found by a depth-first walk in node order, as its keys with the first
// repeated at the end; empty when there is none.
std::vector<std::string> find_cycle(const WorkflowGraph& graph, const Adjacency& next) {
  enum class Mark { kNew, kOnPath, kDone };
  std::map<std::string, Mark, std::less<>> mark;
  for (const auto& n : graph.nodes) mark[n.key] = Mark::kNew;
  for (const auto& root : graph.nodes) {
    if (mark[root.key] != Mark::kNew) continue;
    // Iterative walk: (node, index of the next child to visit).
    std::vector<std::pair<std::string, std::size_t>> path{{root.key, 0}};
    mark[root.key] = Mark::kOnPath;
    while (!path.empty()) {
      auto& [at, index] = path.back();
      const auto& children = next.at(at);
      if (index == children.size()) {
        mark[at] = Mark::kDone;
        path.pop_back();
        continue;
      }
      const std::string child = children[index++];
      if (mark[child] == Mark::kOnPath) {
        std::vector<std::string> cycle;
        bool in = false;
        for (const auto& [key, unused] : path) {
          if (key == child) in = true;
          if (in) cycle.push_back(key);
        }
        cycle.push_back(child);
        return cycle;
      }
      if (mark[child] == Mark::kNew) {
        mark[child] = Mark::kOnPath;
        path.emplace_back(child, 0);
      }
    }
  }
  return {};
}

std::string joined(const std::vector<std::string>& keys) {
  std::string out;
  for (const auto& k : keys) out += (out.empty() ? "" : " → ") + k;
  return out;
}

}  // namespace

bool is_node_key(std::string_view key) {
  if (key.empty() || key.size() > kMaxNodeKeyChars) return false;
  if (std::isalpha(static_cast<unsigned char>(key[0])) == 0) return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-';
  });
}

std::vector<GraphProblem> check_workflow_graph(const WorkflowGraph& graph, const std::vector<WorkflowParam>& params) {
  std::vector<GraphProblem> problems;
  if (graph.nodes.empty()) problems.push_back({"nodes", "a workflow needs at least one node"});
  if (graph.nodes.size() > kMaxWorkflowNodes) {
    problems.push_back({"nodes", "at most " + std::to_string(kMaxWorkflowNodes) + " nodes"});
    return problems;
  }
  if (graph.edges.size() > kMaxWorkflowEdges) {
    problems.push_back({"edges", "at most " + std::to_string(kMaxWorkflowEdges) + " edges"});
    return problems;
  }
  std::set<std::string, std::less<>> keys;
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    const auto& n = graph.nodes[i];
    const std::string field = "nodes[" + std::to_string(i) + "]";
    if (!is_node_key(n.key)) {
      problems.push_back({field + ".key", "\"" + n.key.substr(0, kMaxNodeKeyChars) +
                                              "\" is not a node key: a letter, then letters, digits, '_' or '-', at most " +
                                              std::to_string(kMaxNodeKeyChars)});
    } else if (!keys.insert(n.key).second) {
      problems.push_back({field + ".key", "node " + n.key + " is defined twice"});
    }
    if (n.job_id <= 0) problems.push_back({field + ".jobId", "node " + n.key + " names no job"});
  }
  std::set<std::pair<std::string, std::string>> seen_edges;
  for (std::size_t i = 0; i < graph.edges.size(); ++i) {
    const auto& e = graph.edges[i];
    const std::string field = "edges[" + std::to_string(i) + "]";
    if (!keys.count(e.from)) problems.push_back({field + ".from", "no node " + e.from.substr(0, kMaxNodeKeyChars)});
    if (!keys.count(e.to)) problems.push_back({field + ".to", "no node " + e.to.substr(0, kMaxNodeKeyChars)});
    if (e.from == e.to && keys.count(e.from)) {
      problems.push_back({field, "node " + e.from + " cannot follow itself"});
    } else if (!seen_edges.insert({e.from, e.to}).second) {
      problems.push_back({field, "the edge " + e.from + " → " + e.to + " is given twice"});
    }
  }
  if (!problems.empty()) return problems;

  const Adjacency next = adjacency(graph, true);
  if (auto cycle = find_cycle(graph, next); !cycle.empty()) {
    problems.push_back({"edges", "the edges form a cycle: " + joined(cycle)});
    return problems;
  }
  // In a graph without cycles every node is reached from some node without parents; checked all
  // the same, so that a change to the cycle check cannot let an unreachable node through.
  const Adjacency back = adjacency(graph, false);
  std::set<std::string, std::less<>> reached;
  for (const auto& n : graph.nodes) {
    if (!back.at(n.key).empty()) continue;
    reached.insert(n.key);
    auto more = reach(next, n.key);
    reached.insert(more.begin(), more.end());
  }
  for (const auto& n : graph.nodes) {
    if (!reached.count(n.key)) problems.push_back({"edges", "node " + n.key + " cannot be reached from a start node"});
  }
  if (!problems.empty()) return problems;

  std::set<std::string, std::less<>> param_names;
  for (const auto& p : params) param_names.insert(p.name);
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    const auto& n = graph.nodes[i];
    const std::string field = "nodes[" + std::to_string(i) + "].params";
    const ParsedTemplate parsed = parse_template(n.params);
    if (!parsed.ok()) {
      problems.push_back({field, "node " + n.key + ": " + parsed.error});
      continue;
    }
    const auto upstream = reach(back, n.key);
    for (const auto& ref : parsed.refs) {
      if (ref.kind == TemplateRef::Kind::kParam && !param_names.count(ref.name)) {
        problems.push_back({field, "node " + n.key + " reads ${" + ref.text + "}, but the workflow has no parameter " + ref.name});
      } else if (ref.kind == TemplateRef::Kind::kNodeOutput && !upstream.count(ref.name)) {
        problems.push_back({field, "node " + n.key + " reads ${" + ref.text + "}, but " +
                                       (keys.count(ref.name) ? "node " + ref.name + " is not upstream of it"
                                                             : "there is no node " + ref.name)});
      }
    }
  }
  return problems;
}

std::vector<std::string> parents_of(const WorkflowGraph& graph, std::string_view key) {
  std::vector<std::string> out;
  for (const auto& e : graph.edges) {
    if (e.to == key) out.push_back(e.from);
  }
  return out;
}

std::vector<std::string> children_of(const WorkflowGraph& graph, std::string_view key) {
  std::vector<std::string> out;
  for (const auto& e : graph.edges) {
    if (e.from == key) out.push_back(e.to);
  }
  return out;
}

std::set<std::string, std::less<>> descendants_of(const WorkflowGraph& graph, std::string_view key) {
  return reach(adjacency(graph, true), key);
}

std::set<std::string, std::less<>> ancestors_of(const WorkflowGraph& graph, std::string_view key) {
  return reach(adjacency(graph, false), key);
}

}  // namespace cronwheel::admin
