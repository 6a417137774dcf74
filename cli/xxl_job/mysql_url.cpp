#include "cli/xxl_job/mysql_url.h"

#include <charconv>
#include <optional>

namespace cronwheel::cli::xxl_job {

namespace {

[[noreturn]] void fail(const std::string& message) { throw MysqlUrlError("mysql URL: " + message); }

std::optional<int> hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return std::nullopt;
}

// `part` percent-decoded; `what` names it in errors (the text itself is not repeated: it may
// be the password).
std::string percent_decoded(std::string_view part, std::string_view what, std::size_t max_bytes) {
  std::string out;
  out.reserve(part.size());
  for (std::size_t i = 0; i < part.size(); ++i) {
    if (part[i] != '%') {
      out += part[i];
      continue;
    }
    auto high = i + 1 < part.size() ? hex_value(part[i + 1]) : std::nullopt;
    auto low = i + 2 < part.size() ? hex_value(part[i + 2]) : std::nullopt;
    if (!high || !low) fail("the " + std::string(what) + " has a '%' that is not followed by two hex digits");
    const char decoded = static_cast<char>(*high * 16 + *low);
    if (decoded == '\0') fail("the " + std::string(what) + " contains %00");
    out += decoded;
    i += 2;
  }
  if (out.size() > max_bytes) {
    fail("the " + std::string(what) + " is longer than " + std::to_string(max_bytes) + " bytes");
  }
  return out;
}

bool host_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
         c == '_';
}

bool ipv6_char(char c) { return hex_value(c).has_value() || c == ':' || c == '.'; }

bool starts_with_ignoring_case(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    char c = text[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != prefix[i]) return false;
  }
  return true;
}

}  // namespace

std::string MysqlUrl::redacted() const {
  const bool ipv6 = host.find(':') != std::string::npos;
  return "mysql://" + user + "@" + (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port) + "/" + database;
}

MysqlUrl parse_mysql_url(std::string_view text) {
  constexpr std::string_view kShape = "expected mysql://USER[:PASSWORD]@HOST[:PORT]/DATABASE";
  if (text.size() > kMaxMysqlUrlBytes) fail("longer than " + std::to_string(kMaxMysqlUrlBytes) + " bytes");
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte >= 0x7f) {
      fail("spaces, control characters and non-ASCII characters must be percent-encoded");
    }
  }
  constexpr std::string_view kScheme = "mysql://";
  if (!starts_with_ignoring_case(text, kScheme)) fail(std::string(kShape));
  std::string_view rest = text.substr(kScheme.size());
  if (rest.find_first_of("?#") != std::string_view::npos) fail("query parameters and fragments are not supported");

  const auto slash = rest.find('/');
  if (slash == std::string_view::npos) fail("no database: " + std::string(kShape));
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = rest.substr(slash + 1);

  MysqlUrl url;
  const auto at = authority.rfind('@');
  if (at == std::string_view::npos) fail("no user: " + std::string(kShape));
  std::string_view userinfo = authority.substr(0, at);
  std::string_view hostport = authority.substr(at + 1);

  const auto colon = userinfo.find(':');
  url.user = percent_decoded(userinfo.substr(0, colon), "user", kMaxMysqlUserBytes);
  if (url.user.empty()) fail("the user is empty: " + std::string(kShape));
  if (colon != std::string_view::npos) {
    url.password = percent_decoded(userinfo.substr(colon + 1), "password", kMaxMysqlPasswordBytes);
  }

  std::string_view port_text;
  bool has_port = false;
  if (!hostport.empty() && hostport.front() == '[') {
    const auto close = hostport.find(']');
    if (close == std::string_view::npos) fail("an IPv6 host needs its closing ']'");
    url.host = std::string(hostport.substr(1, close - 1));
    if (url.host.empty() || url.host.find(':') == std::string::npos) fail("the host in brackets is not an IPv6 address");
    for (char c : url.host) {
      if (!ipv6_char(c)) fail("the host in brackets is not an IPv6 address");
    }
    std::string_view after = hostport.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') fail("expected ':PORT' after the IPv6 host");
      port_text = after.substr(1);
      has_port = true;
    }
  } else {
    const auto port_colon = hostport.find(':');
    url.host = std::string(hostport.substr(0, port_colon));
    if (port_colon != std::string_view::npos) {
      port_text = hostport.substr(port_colon + 1);
      has_port = true;
    }
    for (char c : url.host) {
      if (!host_char(c)) fail("the host may have letters, digits, '.', '-' and '_' only (or be [IPv6])");
    }
  }
  if (url.host.empty()) fail("the host is empty: " + std::string(kShape));
  if (url.host.size() > kMaxMysqlHostBytes) fail("the host is longer than " + std::to_string(kMaxMysqlHostBytes) + " bytes");
  if (has_port) {
    int port = 0;
    auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (port_text.empty() || ec != std::errc() || end != port_text.data() + port_text.size() || port < 1 ||
        port > 65535) {
      fail("the port must be 1-65535, got '" + std::string(port_text.substr(0, 16)) + "'");
    }
    url.port = port;
  }

  if (path.find('/') != std::string_view::npos) fail("the database name must be percent-encoded if it has a '/'");
  url.database = percent_decoded(path, "database", kMaxMysqlDatabaseBytes);
  if (url.database.empty()) fail("no database: " + std::string(kShape));
  return url;
}

}  // namespace cronwheel::cli::xxl_job
