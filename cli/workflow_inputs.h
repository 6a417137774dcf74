#pragma once

// What the workflow commands take from the command line and from files, checked before anything
// is sent: trigger inputs (-p NAME=VALUE), node keys (--from NODE), and the workflow file
// `workflows check -f` reads.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace cronwheel::cli {

// The largest workflow file `workflows check` reads: the admin's limit on a workflow's body.
inline constexpr std::size_t kMaxWorkflowFileBytes = 2 * 1024 * 1024;

// Whether `text` is a parameter's name or a node's key as workflows have them (a letter, then
// letters, digits, '_' or '-', at most 64 characters); why not otherwise. `what` names it in the
// reason ("parameter name", "node key").
std::optional<std::string> workflow_key_problem(std::string_view text, std::string_view what);

// One input of a trigger, NAME=VALUE: NAME a parameter name (above), VALUE anything up to the end
// (empty too, '=' included). Why not otherwise.
std::variant<std::pair<std::string, std::string>, std::string> parse_param_assignment(std::string_view text);

// The `params` object of a trigger from the -p NAME=VALUE given, each value a string. Throws
// CliError (usage, status 2) for a malformed one and for a name given twice.
nlohmann::json trigger_params(const std::vector<std::string>& assignments);

// The body to send POST workflows/check for `text`, a workflow file's content: the JSON object it
// holds, less the fields the server keeps for itself (id, version, triggerStatus,
// triggerLastTime, triggerNextTime, createdAt, updatedAt), so that what `workflows get -o json`
// printed checks as it is. Otherwise why not, as "LINE:COLUMN: reason" for text that is not JSON
// or "reason" for JSON that is not one object or nests deeper than 64.
std::variant<nlohmann::json, std::string> workflow_check_body(std::string_view text);

}  // namespace cronwheel::cli
