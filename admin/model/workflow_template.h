#pragma once

// A workflow node's parameter template (docs/workflows.md, "Parameters"): text with
// `${params.NAME}` (the run's input NAME) and `${nodes.KEY.output}` (node KEY's output), where
// the output may be followed into by a path: `${nodes.extract.output.rows}`,
// `${nodes.extract.output.files.0.name}` (object fields by name, array items by index). `$${`
// writes a literal `${`. A string value is written as it is, any other JSON value as its JSON
// text.
//
// Rendering never guesses: a reference that does not resolve (no such parameter, an output
// without that field, a path into a string) is an error naming the reference and what was
// missing, never an empty string.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace cronwheel::admin {

struct TemplateRef {
  enum class Kind { kParam, kNodeOutput };
  Kind kind = Kind::kParam;
  std::string name;               // the parameter's name, or the node's key
  std::vector<std::string> path;  // kNodeOutput: the fields after `output`
  std::string text;               // as written between ${ and }

  friend bool operator==(const TemplateRef&, const TemplateRef&) = default;
};

struct ParsedTemplate {
  // Literal text and references, in order: refs[i] follows literals[i]; literals has one more.
  std::vector<std::string> literals;
  std::vector<TemplateRef> refs;
  std::string error;  // not empty: the template cannot be read, and says why (with the offset)

  bool ok() const { return error.empty(); }
};

// Reads a template (at most kMaxTemplateBytes, workflow.h; longer is an error).
ParsedTemplate parse_template(std::string_view text);

struct Rendered {
  std::string text;
  std::string error;  // not empty: what did not resolve, e.g. "${nodes.extract.output.rows}:
                      // the output of node extract has no field \"rows\""
  bool ok() const { return error.empty(); }
};

// Renders a parsed template: `params` is the run's inputs (a JSON object), `outputs` the outputs
// of the nodes it may read, by key (nodes without output are absent).
Rendered render_template(const ParsedTemplate& parsed, const nlohmann::json& params,
                         const std::map<std::string, nlohmann::json, std::less<>>& outputs);

// A node's output as templates read it: `output` (JSON text a cronwheel executor reported), or
// else the run's handle message: the JSON object or array it holds, or the message as a string
// (an XXL-JOB executor reports its handler's message as handleMsg).
nlohmann::json node_output_value(const std::optional<std::string>& output, const std::string& handle_msg);

}  // namespace cronwheel::admin
