#include "admin/api/field_checks.h"

#include <algorithm>
#include <charconv>
#include <regex>

#include "admin/api/api_errors.h"
#include "admin/api/json_body.h"

namespace cronwheel::admin {

std::size_t char_count(std::string_view utf8) noexcept {
  std::size_t count = 0;
  for (unsigned char c : utf8) {
    if ((c & 0xC0) != 0x80) ++count;  // every byte but continuation bytes starts a character
  }
  return count;
}

std::string trimmed(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n";
  auto first = text.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  auto last = text.find_last_not_of(kSpace);
  return std::string(text.substr(first, last - first + 1));
}

std::string truncate_chars(std::string_view text, std::size_t max_chars) {
  std::size_t chars = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const bool starts_char = (static_cast<unsigned char>(text[i]) & 0xC0) != 0x80;
    if (starts_char && chars++ == max_chars) return std::string(text.substr(0, i));
  }
  return std::string(text);
}

void check_text(std::string_view field, std::string_view value, std::size_t max_chars, bool required) {
  const std::string name(field);
  if (required && value.empty()) throw invalid(field, name + ": must not be empty");
  const auto count = char_count(value);
  if (count > max_chars) {
    throw invalid(field, name + ": at most " + std::to_string(max_chars) + " characters, got " + std::to_string(count));
  }
}

int check_int_range(std::string_view field, std::int64_t value, std::int64_t min, std::int64_t max) {
  if (value < min || value > max) {
    throw invalid(field, std::string(field) + ": " + std::to_string(value) + " is out of range " +
                             std::to_string(min) + "-" + std::to_string(max));
  }
  return static_cast<int>(value);
}

bool is_http_url(std::string_view text) {
  // scheme://host[:port][/path...]; the host is a name, an IPv4 address or a bracketed IPv6
  // address. No user info, no spaces.
  static const std::regex url(
      R"(^https?://([A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])(:([0-9]{1,5}))?(/[^\s]*)?$)",
      std::regex::ECMAScript | std::regex::icase);
  std::match_results<std::string_view::const_iterator> m;
  if (!std::regex_match(text.begin(), text.end(), m, url)) return false;
  if (m[4].matched) {
    const int port = std::stoi(m[4].str());
    if (port < 1 || port > 65535) return false;
  }
  return true;
}

void check_http_urls(std::string_view field, const std::vector<std::string>& urls) {
  for (std::size_t i = 0; i < urls.size(); ++i) {
    if (!is_http_url(urls[i])) {
      std::string shown = urls[i].size() > 80 ? urls[i].substr(0, 80) + "..." : urls[i];
      throw invalid(field, std::string(field) + "[" + std::to_string(i) +
                               "]: expected an http(s) URL such as http://10.0.0.5:9999/, got '" + shown + "'");
    }
  }
}

std::vector<std::string> split_list(std::string_view text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    auto comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    auto item = trimmed(text.substr(start, comma - start));
    if (!item.empty()) out.push_back(std::move(item));
    start = comma + 1;
  }
  return out;
}

void refuse_read_only(const JsonBody& body, const nlohmann::json& answered,
                      std::initializer_list<std::string_view> writable) {
  for (const auto& [key, value] : body.json().items()) {
    if (!answered.contains(key)) continue;
    if (std::find(writable.begin(), writable.end(), key) != writable.end()) continue;
    throw invalid(key, key + ": is read-only");
  }
}

std::optional<std::int64_t> query_epoch_ms(const std::string& value, std::string_view name) {
  auto ms = query_int(value, name);
  if (ms && *ms < 0) throw invalid(name, std::string(name) + ": must be 0 or more (epoch milliseconds)");
  return ms;
}

}  // namespace cronwheel::admin
