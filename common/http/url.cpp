#include "common/http/url.h"

#include <algorithm>

namespace cronwheel::common::http {
namespace {

char lower(char c) noexcept { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

std::string lowered(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), lower);
  return out;
}

bool is_alnum(char c) noexcept { return (c >= '0' && c <= '9') || (lower(c) >= 'a' && lower(c) <= 'z'); }

bool is_hex(char c) noexcept { return (c >= '0' && c <= '9') || (lower(c) >= 'a' && lower(c) <= 'f'); }

constexpr std::size_t kMaxHostBytes = 253;

}  // namespace

std::string HttpUrl::origin() const {
  return scheme + "://" + host + (port != 0 ? ":" + std::to_string(port) : std::string());
}

std::variant<HttpUrl, std::string> parse_http_url(std::string_view text) {
  if (text.size() > kMaxUrlBytes) return "longer than " + std::to_string(kMaxUrlBytes) + " characters";
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f) return std::string("holds a space, control or non-ASCII character");
  }
  const auto separator = text.find("://");
  if (separator == std::string_view::npos) return std::string("not an http:// or https:// URL");
  HttpUrl url;
  url.scheme = lowered(text.substr(0, separator));
  if (url.scheme != "http" && url.scheme != "https") return std::string("the scheme must be http or https");

  std::string_view rest = text.substr(separator + 3);
  if (auto hash = rest.find('#'); hash != std::string_view::npos) rest = rest.substr(0, hash);
  const auto authority_end = rest.find_first_of("/?");
  const std::string_view authority = rest.substr(0, authority_end);
  std::string_view remainder = authority_end == std::string_view::npos ? std::string_view() : rest.substr(authority_end);
  if (authority.find('@') != std::string_view::npos) return std::string("user information (user@host) is not accepted");

  std::string_view host;
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) return std::string("an IPv6 address needs its closing ']'");
    const auto literal = authority.substr(1, close - 1);
    if (literal.empty() || !std::all_of(literal.begin(), literal.end(), [](char c) { return is_hex(c) || c == ':' || c == '.'; })) {
      return std::string("not an IPv6 address in brackets");
    }
    host = authority.substr(0, close + 1);
    const auto after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return std::string("unexpected text after ']'");
      port = after.substr(1);
      if (port.empty()) return std::string("empty port");
    }
  } else {
    const auto colon = authority.find(':');
    host = authority.substr(0, colon);
    if (colon != std::string_view::npos) {
      port = authority.substr(colon + 1);
      if (port.empty()) return std::string("empty port");
    }
    if (host.empty()) return std::string("missing host");
    if (host.size() > kMaxHostBytes) return "a host name has at most " + std::to_string(kMaxHostBytes) + " characters";
    const bool name_chars = std::all_of(host.begin(), host.end(), [](char c) { return is_alnum(c) || c == '-' || c == '.' || c == '_'; });
    if (!name_chars || !is_alnum(host.front()) || !is_alnum(host.back())) {
      return std::string("a host name holds letters, digits, '-', '.' and '_', and starts and ends with a letter or digit");
    }
  }
  if (!port.empty()) {
    if (port.size() > 5 || !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return std::string("the port must be 1-65535");
    }
    int value = 0;
    for (char c : port) value = value * 10 + (c - '0');
    if (value < 1 || value > 65535) return std::string("the port must be 1-65535");
    url.port = value;
  }
  url.host = lowered(host);
  const auto question = remainder.find('?');
  url.path = std::string(remainder.substr(0, question));
  if (question != std::string_view::npos) url.query = std::string(remainder.substr(question + 1));
  return url;
}

std::string BaseUrl::target(std::string_view path) const {
  path.remove_prefix(std::min(path.find_first_not_of('/'), path.size()));
  return prefix + "/" + std::string(path);
}

std::variant<BaseUrl, std::string> parse_base_url(std::string_view text) {
  auto parsed = parse_http_url(text);
  if (auto* why = std::get_if<std::string>(&parsed)) return std::move(*why);
  if (text.find_first_of("?#") != std::string_view::npos) return std::string("query and fragment are not supported");
  BaseUrl base{std::move(std::get<HttpUrl>(parsed)), {}};
  std::string_view path = base.url.path;
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  base.prefix = std::string(path);
  return base;
}

}  // namespace cronwheel::common::http
