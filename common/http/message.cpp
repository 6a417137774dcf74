#include "common/http/message.h"

#include <algorithm>
#include <iterator>

#include "common/http/request_head.h"

namespace cronwheel::common::http {
namespace {

char lower(char c) noexcept { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

template <typename Map>
std::string nth_value(const Map& map, std::string_view name, std::size_t index) {
  auto [first, last] = map.equal_range(name);
  if (static_cast<std::size_t>(std::distance(first, last)) <= index) return {};
  std::advance(first, static_cast<std::ptrdiff_t>(index));
  return first->second;
}

// '+' is a space in a query (HTML forms' encoding), then %XX escapes as in a path.
std::string decode_query_component(std::string_view text) {
  std::string spaced(text);
  std::replace(spaced.begin(), spaced.end(), '+', ' ');
  return percent_decode(spaced);
}

}  // namespace

QueryParams parse_query(std::string_view query) {
  QueryParams params;
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view part = query.substr(0, amp);
    const auto eq = part.find('=');
    if (eq != 0 && !part.empty()) {
      params.emplace(decode_query_component(part.substr(0, eq)),
                     eq == std::string_view::npos ? std::string() : decode_query_component(part.substr(eq + 1)));
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return params;
}

bool HeaderNameLess::operator()(std::string_view a, std::string_view b) const noexcept {
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(),
                                      [](char x, char y) { return lower(x) < lower(y); });
}

bool Request::has_header(std::string_view name) const { return headers.find(name) != headers.end(); }

std::string Request::get_header_value(std::string_view name, std::size_t index) const {
  return nth_value(headers, name, index);
}

std::size_t Request::get_header_value_count(std::string_view name) const { return headers.count(name); }

void Request::set_header(std::string_view name, std::string value) { headers.emplace(std::string(name), std::move(value)); }

bool Request::has_param(std::string_view name) const { return params.find(name) != params.end(); }

std::string Request::get_param_value(std::string_view name, std::size_t index) const {
  return nth_value(params, name, index);
}

bool Response::has_header(std::string_view name) const { return headers.find(name) != headers.end(); }

std::string Response::get_header_value(std::string_view name) const { return nth_value(headers, name, 0); }

std::size_t Response::get_header_value_count(std::string_view name) const { return headers.count(name); }

void Response::set_header(std::string_view name, std::string value) {
  constexpr std::string_view kLineBreaking("\r\n\0", 3);
  if (name.find_first_of(kLineBreaking) != std::string_view::npos ||
      value.find_first_of(kLineBreaking) != std::string::npos) {
    return;
  }
  headers.emplace(std::string(name), std::move(value));
}

void Response::set_content(std::string content, std::string_view content_type) {
  body = std::move(content);
  auto [first, last] = headers.equal_range("Content-Type");
  headers.erase(first, last);
  set_header("Content-Type", std::string(content_type));
}

}  // namespace cronwheel::common::http
