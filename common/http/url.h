#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <variant>

namespace cronwheel::common::http {

// An absolute http(s) URL, as executors' addresses, admin addresses and jobs' targets are given.
struct HttpUrl {
  std::string scheme;  // "http" or "https", lower-case
  std::string host;    // lower-case; an IPv6 address keeps its brackets: "[::1]"
  int port = 0;        // as written; 0 when the URL names none
  std::string path;    // from the first '/' to '?' or '#'; may be empty
  std::string query;   // after '?', without it; may be empty

  int effective_port() const noexcept { return port != 0 ? port : scheme == "https" ? 443 : 80; }
  // "scheme://host[:port]", as written.
  std::string origin() const;
};

inline constexpr std::size_t kMaxUrlBytes = 2048;

// Parses "scheme://host[:port][/path][?query][#fragment]" (the fragment is dropped), or says
// why not in a short phrase ("the port must be 1-65535"). Accepted: the http and https schemes
// (any case); a host that is a name of letters, digits, '-', '.' and '_' starting and ending
// with a letter or digit (IPv4 addresses included), or an IPv6 address in brackets; a decimal
// port 1-65535. Refused: user information (user@host), spaces, control characters and non-ASCII
// bytes anywhere, and anything longer than kMaxUrlBytes, which is checked before anything else.
// Linear in the length of `text`; never throws.
std::variant<HttpUrl, std::string> parse_http_url(std::string_view text);

// The base URL the HTTP clients send requests relative to: "http://host[:port][/prefix][/]",
// without a query or fragment.
struct BaseUrl {
  HttpUrl url;
  std::string prefix;  // the path without trailing '/': "" or "/xxl-job-admin"

  // The request target of `path` under the prefix: with "/xxl-job-admin", "api/callback" and
  // "/api/callback" both give "/xxl-job-admin/api/callback".
  std::string target(std::string_view path) const;
};

// parse_http_url, refusing a query or fragment too; or why not.
std::variant<BaseUrl, std::string> parse_base_url(std::string_view text);

}  // namespace cronwheel::common::http
