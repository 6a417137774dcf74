#include "admin/model/workflow_graph.h"

#include <gtest/gtest.h>

namespace cronwheel::admin {
namespace {

WorkflowGraph graph_with(std::vector<std::string> keys, std::vector<std::pair<std::string, std::string>> edges) {
  WorkflowGraph g;
  std::int64_t job = 0;
  for (auto& k : keys) {
    WorkflowNode n;
    n.key = k;
    n.job_id = ++job;
    g.nodes.push_back(n);
  }
  for (auto& [from, to] : edges) g.edges.push_back({from, to});
  return g;
}

std::vector<std::string> messages(const std::vector<GraphProblem>& problems) {
  std::vector<std::string> out;
  for (const auto& p : problems) out.push_back(p.field + ": " + p.message);
  return out;
}

TEST(WorkflowGraph, ADiamondIsValid) {
  EXPECT_TRUE(check_workflow_graph(graph_with({"a", "b", "c", "d"}, {{"a", "b"}, {"a", "c"}, {"b", "d"}, {"c", "d"}}), {})
                  .empty());
}

TEST(WorkflowGraph, RefusesACycleNamingIt) {
  const auto problems = check_workflow_graph(graph_with({"a", "b", "c"}, {{"a", "b"}, {"b", "c"}, {"c", "b"}}), {});
  EXPECT_EQ(messages(problems), std::vector<std::string>{"edges: the edges form a cycle: b → c → b"});
}

TEST(WorkflowGraph, RefusesACycleThroughEveryNodeAsHavingNoStart) {
  const auto problems = check_workflow_graph(graph_with({"a", "b"}, {{"a", "b"}, {"b", "a"}}), {});
  EXPECT_EQ(messages(problems), std::vector<std::string>{"edges: the edges form a cycle: a → b → a"});
}

TEST(WorkflowGraph, NamesEachBadNodeAndEdge) {
  auto g = graph_with({"a", "a", "9x", "b"}, {{"a", "zz"}, {"b", "b"}, {"a", "b"}, {"a", "b"}});
  g.nodes[3].job_id = 0;
  EXPECT_EQ(messages(check_workflow_graph(g, {})),
            (std::vector<std::string>{
                "nodes[1].key: node a is defined twice",
                "nodes[2].key: \"9x\" is not a node key: a letter, then letters, digits, '_' or '-', at most 64",
                "nodes[3].jobId: node b names no job",
                "edges[0].to: no node zz",
                "edges[1]: node b cannot follow itself",
                "edges[3]: the edge a → b is given twice",
            }));
}

TEST(WorkflowGraph, RefusesAnEmptyGraph) {
  EXPECT_EQ(messages(check_workflow_graph({}, {})), std::vector<std::string>{"nodes: a workflow needs at least one node"});
}

TEST(WorkflowGraph, TemplatesReadOnlyDeclaredParametersAndUpstreamNodes) {
  auto g = graph_with({"a", "b", "c"}, {{"a", "b"}});
  g.nodes[1].params = "${params.day} ${nodes.a.output.x}";
  g.nodes[2].params = "${params.month} ${nodes.b.output} ${nodes.q.output} ${oops}";
  WorkflowParam day;
  day.name = "day";
  const auto problems = check_workflow_graph(g, {day});
  EXPECT_EQ(messages(problems),
            (std::vector<std::string>{"nodes[2].params: node c: \"${oops}\" names neither params nor nodes (offset 52)"}));
  g.nodes[2].params = "${params.month} ${nodes.b.output} ${nodes.q.output}";
  EXPECT_EQ(messages(check_workflow_graph(g, {day})),
            (std::vector<std::string>{
                "nodes[2].params: node c reads ${params.month}, but the workflow has no parameter month",
                "nodes[2].params: node c reads ${nodes.b.output}, but node b is not upstream of it",
                "nodes[2].params: node c reads ${nodes.q.output}, but there is no node q",
            }));
}

TEST(WorkflowGraph, WalksUpAndDown) {
  const auto g = graph_with({"a", "b", "c", "d"}, {{"a", "b"}, {"b", "c"}, {"a", "d"}});
  EXPECT_EQ(descendants_of(g, "a"), (std::set<std::string, std::less<>>{"b", "c", "d"}));
  EXPECT_EQ(ancestors_of(g, "c"), (std::set<std::string, std::less<>>{"a", "b"}));
  EXPECT_EQ(parents_of(g, "c"), std::vector<std::string>{"b"});
  EXPECT_EQ(children_of(g, "a"), (std::vector<std::string>{"b", "d"}));
}

TEST(WorkflowGraph, BoundsTheNumberOfNodes) {
  std::vector<std::string> keys;
  for (std::size_t i = 0; i <= kMaxWorkflowNodes; ++i) keys.push_back("n" + std::to_string(i));
  EXPECT_EQ(messages(check_workflow_graph(graph_with(keys, {}), {})), std::vector<std::string>{"nodes: at most 200 nodes"});
}

TEST(WorkflowGraph, FindsACycleInALongChainWithoutRecursing) {
  std::vector<std::string> keys;
  std::vector<std::pair<std::string, std::string>> edges;
  for (std::size_t i = 0; i < kMaxWorkflowNodes; ++i) keys.push_back("n" + std::to_string(i));
  for (std::size_t i = 0; i + 1 < keys.size(); ++i) edges.emplace_back(keys[i], keys[i + 1]);
  edges.emplace_back(keys.back(), keys[1]);
  const auto problems = check_workflow_graph(graph_with(keys, edges), {});
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].message.rfind("the edges form a cycle: n1 → n2 → ", 0), 0u) << problems[0].message;
}

}  // namespace
}  // namespace cronwheel::admin
