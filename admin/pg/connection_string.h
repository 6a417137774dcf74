#pragma once

#include <string>
#include <string_view>

namespace cronwheel::admin {

// Adds a libpq connection parameter (connect_timeout, options, application_name, ...) to a
// connection string unless it already sets that parameter. Accepts both forms libpq does:
// URLs (postgresql://user@host:port/db?k=v, the value percent-encoded) and key=value strings
// (the value quoted when it has spaces).
std::string with_connection_parameter(const std::string& connection_string, std::string_view key,
                                      std::string_view value);

}  // namespace cronwheel::admin
