#include "cli/workflow_inputs.h"

#include "cli/api_client.h"
#include "cli/cli_error.h"
#include "cli/json_file.h"

namespace cronwheel::cli {

namespace {

using nlohmann::json;

constexpr std::size_t kMaxKeyChars = 64;
// Deeper than any workflow: nodes[i].key is 3 levels; parameters' values are strings.
constexpr int kMaxWorkflowFileDepth = 64;

bool ascii_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool key_char(char c) { return ascii_letter(c) || (c >= '0' && c <= '9') || c == '_' || c == '-'; }

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
  auto parsed = parse_json_file(text, kMaxWorkflowFileDepth);
  if (auto* why = std::get_if<std::string>(&parsed)) return std::move(*why);
  json body = std::move(std::get<json>(parsed));
  if (!body.is_object()) return std::string("a workflow is one JSON object (as `cronwheel workflows get WF -o json` prints)");
  for (const char* kept_by_the_server :
       {"id", "version", "triggerStatus", "triggerLastTime", "triggerNextTime", "createdAt", "updatedAt"}) {
    body.erase(kept_by_the_server);
  }
  return body;
}

}  // namespace cronwheel::cli
