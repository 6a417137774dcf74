#include "cli/cli_error.h"

#include "common/util/utf8.h"

namespace cronwheel::cli {

std::string one_line(std::string_view text, std::size_t max_bytes) {
  std::string line;
  line.reserve(text.size() < max_bytes ? text.size() : max_bytes);
  for (unsigned char c : text) {
    line += (c < 0x20 || c == 0x7f) ? ' ' : static_cast<char>(c);
  }
  if (line.size() > max_bytes) {
    line.resize(common::utf8::prefix_length(line, max_bytes));
    line += "...";
  }
  return line;
}

std::string error_line(std::string_view command, const CliError& error) {
  std::string line = "cronwheel: ";
  if (!error.names_its_subject()) {
    std::string where(command);
    if (!error.subject().empty()) where += (where.empty() ? "" : " ") + one_line(error.subject(), 200);
    if (!where.empty()) line += where + ": ";
  }
  return line + one_line(error.what());
}

}  // namespace cronwheel::cli
