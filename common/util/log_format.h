#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <spdlog/formatter.h>

namespace cronwheel::common {

// `text` with every control character written as an escape: "\n", "\r", "\t", "\x1b", and C1
// controls (U+0080-U+009F) as "\u0085". Everything else, UTF-8 included, is kept as is.
std::string escape_control_characters(std::string_view text);

// The log line format of cronwheel's programs: "[2026-11-24 14:44:29.659] [info] message", with
// the message escaped by escape_control_characters. Log lines often carry what a client sent (a
// path, an appName, a run's message); escaped, none of it can end a line and forge the next one,
// or reach a terminal as a control sequence.
std::unique_ptr<spdlog::formatter> escaping_log_formatter();

// Gives spdlog's default logger (and every logger made after) escaping_log_formatter().
void use_escaping_log_format();

}  // namespace cronwheel::common
