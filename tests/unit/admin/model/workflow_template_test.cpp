#include "admin/model/workflow_template.h"

#include <gtest/gtest.h>

#include "admin/model/workflow.h"

namespace cronwheel::admin {
namespace {

std::string rendered(std::string_view text, const nlohmann::json& params,
                     const std::map<std::string, nlohmann::json, std::less<>>& outputs = {}) {
  auto r = render_template(parse_template(text), params, outputs);
  return r.ok() ? r.text : "error: " + r.error;
}

TEST(WorkflowTemplate, WritesStringsAsTheyAreAndOtherValuesAsJson) {
  const std::map<std::string, nlohmann::json, std::less<>> outputs = {
      {"x", {{"n", 3}, {"list", {1, 2}}, {"s", "text"}, {"obj", {{"k", true}}}}}};
  EXPECT_EQ(rendered("${nodes.x.output.n} ${nodes.x.output.list} ${nodes.x.output.s} ${nodes.x.output.obj}", {}, outputs),
            "3 [1,2] text {\"k\":true}");
  EXPECT_EQ(rendered("--day=${params.day}", {{"day", "monday"}}), "--day=monday");
}

TEST(WorkflowTemplate, EscapesAndLiterals) {
  EXPECT_EQ(rendered("cost $5 and $${params.x} and {braces}", {}), "cost $5 and ${params.x} and {braces}");
  EXPECT_EQ(rendered("", {}), "");
}

TEST(WorkflowTemplate, EveryUnresolvedReferenceIsAnErrorNamingIt) {
  const std::map<std::string, nlohmann::json, std::less<>> outputs = {{"x", {{"list", {1}}, {"s", "t"}}}};
  EXPECT_EQ(rendered("${params.nope}", {{"day", "1"}}), "error: ${params.nope}: the run has no parameter \"nope\"");
  EXPECT_EQ(rendered("${nodes.y.output}", {}, outputs), "error: ${nodes.y.output}: node y has no output");
  EXPECT_EQ(rendered("${nodes.x.output.list.1}", {}, outputs),
            "error: ${nodes.x.output.list.1}: the output.list of node x is a list of 1 with no item \"1\"");
  EXPECT_EQ(rendered("${nodes.x.output.s.len}", {}, outputs),
            "error: ${nodes.x.output.s.len}: the output.s of node x is a string, so it has no field \"len\"");
}

TEST(WorkflowTemplate, RefusesWhatItCannotRead) {
  EXPECT_EQ(parse_template("${params.a").error, "\"${\" at offset 0 is not closed by \"}\"");
  EXPECT_EQ(parse_template("x ${params}").error, "\"${params}\": a parameter is written ${params.NAME} (offset 2)");
  EXPECT_EQ(parse_template("${nodes.a.result}").error,
            "\"${nodes.a.result}\": a node's output is written ${nodes.KEY.output} or ${nodes.KEY.output.FIELD} (offset 0)");
  EXPECT_EQ(parse_template("${nodes..output}").error, "\"${nodes..output}\" has an empty name between dots (offset 0)");
  EXPECT_EQ(parse_template("${params.a b}").error,
            "\"${params.a b}\" may hold only letters, digits, '_', '-' and dots (offset 0)");
  EXPECT_EQ(parse_template(std::string(kMaxTemplateBytes + 1, 'x')).error, "longer than 65536 bytes");
}

TEST(WorkflowTemplate, ANodesOutputIsItsJsonOrItsMessage) {
  EXPECT_EQ(node_output_value(std::string(R"({"rows":3})"), "ignored"), (nlohmann::json{{"rows", 3}}));
  EXPECT_EQ(node_output_value(std::nullopt, R"( {"rows":3})"), (nlohmann::json{{"rows", 3}}))
      << "an XXL-JOB handler's message holding JSON is structured output";
  EXPECT_EQ(node_output_value(std::nullopt, "done: 3 rows"), nlohmann::json("done: 3 rows"));
  EXPECT_EQ(node_output_value(std::nullopt, "{not json"), nlohmann::json("{not json"));
  EXPECT_EQ(node_output_value(std::nullopt, "42"), nlohmann::json("42")) << "only objects and arrays are parsed";
  const std::string deep(10000, '[');
  EXPECT_EQ(node_output_value(std::nullopt, deep), nlohmann::json(deep)) << "nesting beyond the bound stays text";
}

}  // namespace
}  // namespace cronwheel::admin
