#include "cli/json_file.h"

#include <cstddef>
#include <utility>

#include "cli/api_client.h"

namespace cronwheel::cli {

namespace {

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

std::variant<nlohmann::json, std::string> parse_json_file(std::string_view text, int max_depth) {
  if (!json_nesting_within(text, max_depth)) return "JSON nested deeper than " + std::to_string(max_depth);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // "[json.exception.parse_error.101] parse error at line 1, column 2: syntax error ..." less
    // its prefix, which the place said first replaces.
    std::string what = e.what();
    const auto colon = what.find(": ");
    if (colon != std::string::npos) what = what.substr(colon + 2);
    const auto [line, column] = line_and_column(text, e.byte == 0 ? 0 : e.byte - 1);
    return std::to_string(line) + ":" + std::to_string(column) + ": not JSON: " + what;
  }
}

}  // namespace cronwheel::cli
