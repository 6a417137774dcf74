#include "cli/workflow_inputs.h"


#include "cli/api_client.h"
#include "cli/cli_error.h"

namespace cronwheel::cli {

namespace {

using nlohmann::json;

constexpr std::size_t kMaxKeyChars = 64;
// Deeper than any workflow: nodes[i].key is 3 levels; parameters' values are strings.
constexpr int kMaxWorkflowFileDepth = 64;

bool ascii_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool key_char(char c) { return ascii_letter(c) || (c >= '0' && c <= '9') || c == '_' || c == '-'; }

// 1-based line and column of byte `offset` of `text`.
std::pair<std::size_t, std::size_t> line_and_column(std::string_view text, std::size_t offset) {
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

}  // namespace

std::optional<std::string> workflow_key_problem(std::string_view text, std::string_view what) {
  const std::string name(what);
  if (text.empty()) return "the " + name + " is empty";
  if (text.size() > kMaxKeyChars) return "a " + name + " has at most 64 characters";
  bool ok = ascii_letter(text.front());
  for (char c : text) ok = ok && key_char(c);
  if (!ok) return "a " + name + " is a letter, then letters, digits, '_' or '-'";
  return std::nullopt;
}

std::variant<std::pair<std::string, std::string>, std::string> parse_param_assignment(std::string_view text) {
  const auto equals = text.find('=');
  if (equals == std::string_view::npos) return std::string("an input is NAME=VALUE");
  const std::string_view name = text.substr(0, equals);
  if (auto why = workflow_key_problem(name, "parameter name")) return *why;
  return std::pair<std::string, std::string>(std::string(name), std::string(text.substr(equals + 1)));
}

json trigger_params(const std::vector<std::string>& assignments) {
  json params = json::object();
  for (const std::string& text : assignments) {
    auto parsed = parse_param_assignment(text);
    if (auto* why = std::get_if<std::string>(&parsed)) throw usage_error("--param: '" + one_line(text, 80) + "': " + *why);
    auto& [name, value] = std::get<std::pair<std::string, std::string>>(parsed);
    if (params.contains(name)) throw usage_error("--param: " + name + " is given twice");
    params[name] = value;
  }
  return params;
}

std::variant<json, std::string> workflow_check_body(std::string_view text) {
  if (!json_nesting_within(text, kMaxWorkflowFileDepth)) return std::string("JSON nested deeper than 64");
  json body;
  try {
    body = json::parse(text);
  } catch (const json::parse_error& e) {
    // "[json.exception.parse_error.101] parse error at line 1, column 2: syntax error ..." less
    // its prefix, which the place said first replaces.
    std::string what = e.what();
    const auto colon = what.find(": ");
    if (colon != std::string::npos) what = what.substr(colon + 2);
    const auto [line, column] = line_and_column(text, e.byte == 0 ? 0 : e.byte - 1);
    return std::to_string(line) + ":" + std::to_string(column) + ": not JSON: " + what;
  }
  if (!body.is_object()) return std::string("a workflow is one JSON object (as `cronwheel workflows get WF -o json` prints)");
  for (const char* kept_by_the_server :
       {"id", "version", "triggerStatus", "triggerLastTime", "triggerNextTime", "createdAt", "updatedAt"}) {
    body.erase(kept_by_the_server);
  }
  return body;
}

}  // namespace cronwheel::cli
