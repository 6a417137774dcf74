#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace cronwheel::admin {

// Adds a libpq connection parameter (connect_timeout, options, application_name, ...) to a
// connection string unless it already sets that parameter. Accepts both forms libpq does:
// URLs (postgresql://user@host:port/db?k=v, the value percent-encoded) and key=value strings
// (the value quoted when it has spaces).
std::string with_connection_parameter(const std::string& connection_string, std::string_view key,
                                      std::string_view value);

// What libpq finds wrong with a connection string before connecting (PQconninfoParse: an
// unknown parameter, a malformed URL), as libpq says it; nullopt when it can be used. The message
// names the offending part, never the string's other values (a password).
std::optional<std::string> connection_string_problem(const std::string& connection_string);

}  // namespace cronwheel::admin
