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

// The log format for log shippers (--log-format json): one JSON object a line,
//   {"time":"2026-11-27T16:55:00.123Z","level":"info","msg":"..."}
// time in UTC with milliseconds, level as spdlog names it (trace, debug, info, warning, error,
// critical), msg with quotes, backslashes and every control character escaped (\n, \u001b, C1
// controls as \u0085) and invalid UTF-8 replaced by U+FFFD, so every line is valid JSON.
std::unique_ptr<spdlog::formatter> json_log_formatter();

// Gives spdlog's default logger json_log_formatter() ("json") or escaping_log_formatter()
// ("text"); std::invalid_argument for anything else.
void use_log_format(std::string_view format);

}  // namespace cronwheel::common
