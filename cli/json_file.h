#pragma once

// Files of JSON the commands send as they are (a workflow to check, a calendar to create or
// apply): parsed with the place of a syntax error, and bounded in depth before parsing, since
// such a file may come from anyone.

#include <string>
#include <string_view>
#include <variant>

#include <nlohmann/json.hpp>

namespace cronwheel::cli {

// The JSON `text` holds, or why not: "LINE:COLUMN: not JSON: reason" (1-based, of the byte where
// the parser stopped) for text that is not JSON, "JSON nested deeper than N" for arrays and
// objects nested deeper than `max_depth` (checked before parsing).
std::variant<nlohmann::json, std::string> parse_json_file(std::string_view text, int max_depth);

}  // namespace cronwheel::cli
