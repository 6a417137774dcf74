#include "admin/api/field_checks.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <variant>

#include "admin/api/api_errors.h"
#include "admin/api/json_body.h"
#include "common/http/url.h"
#include "common/util/utf8.h"

namespace cronwheel::admin {

std::string trimmed(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n";
  auto first = text.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  auto last = text.find_last_not_of(kSpace);
  return std::string(text.substr(first, last - first + 1));
}

std::string truncate_chars(std::string_view text, std::size_t max_chars) {
  return std::string(text.substr(0, common::utf8::char_prefix_length(text, max_chars)));
}

std::optional<std::string> deceptive_character(std::string_view text) {
  auto named = [](char32_t c, const char* what) {
    char code[16];
    std::snprintf(code, sizeof(code), "U+%04X", static_cast<unsigned>(c));
    return std::string(code) + " (" + what + ")";
  };
  for (std::size_t i = 0; i < text.size();) {
    // Text that is not UTF-8 is refused elsewhere: here a stray byte is skipped.
    const std::size_t length = common::utf8::sequence_length(text, i);
    if (length == 0) {
      ++i;
      continue;
    }
    const char32_t c = common::utf8::decode(text, i, length);
    i += length;
    if (c < 0x20 || c == 0x7F || (c >= 0x80 && c <= 0x9F)) return named(c, "a control character");
    if (c == 0x061C || c == 0x200E || c == 0x200F || (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069)) {
      return named(c, "a bidirectional control");
    }
    if ((c >= 0x200B && c <= 0x200D) || (c >= 0x2060 && c <= 0x2064) || c == 0xFEFF) {
      return named(c, "an invisible character");
    }
    if (c == 0x2028 || c == 0x2029) return named(c, "a line or paragraph separator");
  }
  return std::nullopt;
}

void check_text(std::string_view field, std::string_view value, std::size_t max_chars, bool required) {
  const std::string name(field);
  if (required && value.empty()) throw invalid(field, name + ": must not be empty");
  const auto count = common::utf8::char_count(value);
  if (count > max_chars) {
    throw invalid(field, name + ": at most " + std::to_string(max_chars) + " characters, got " + std::to_string(count));
  }
  if (auto character = deceptive_character(value)) {
    throw invalid(field, name + ": must not contain " + *character);
  }
}

int check_int_range(std::string_view field, std::int64_t value, std::int64_t min, std::int64_t max) {
  if (value < min || value > max) {
    throw invalid(field, std::string(field) + ": " + std::to_string(value) + " is out of range " +
                             std::to_string(min) + "-" + std::to_string(max));
  }
  return static_cast<int>(value);
}

bool is_http_url(std::string_view text) { return std::holds_alternative<common::http::HttpUrl>(common::http::parse_http_url(text)); }

bool is_email_address(std::string_view text) noexcept {
  // local@domain: the local part in the characters of RFC 5322's dot-atom, the domain in labels
  // of letters, digits and inner hyphens. A loop over the characters, bounded first.
  constexpr std::size_t kMaxLocal = 64;
  constexpr std::size_t kMaxDomain = 253;
  constexpr std::size_t kMaxLabel = 63;
  const auto at = text.find('@');
  if (at == std::string_view::npos || at == 0 || at > kMaxLocal) return false;
  const auto local = text.substr(0, at);
  const auto domain = text.substr(at + 1);
  if (domain.empty() || domain.size() > kMaxDomain) return false;
  auto alnum = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  constexpr std::string_view kLocalSymbols = ".!#$%&'*+/=?^_`{|}~-";
  for (char c : local) {
    if (!alnum(c) && kLocalSymbols.find(c) == std::string_view::npos) return false;
  }
  std::size_t label_start = 0;
  for (std::size_t i = 0; i <= domain.size(); ++i) {
    if (i < domain.size() && domain[i] != '.') {
      if (!alnum(domain[i]) && domain[i] != '-') return false;
      continue;
    }
    const auto label = domain.substr(label_start, i - label_start);
    if (label.empty() || label.size() > kMaxLabel || !alnum(label.front()) || !alnum(label.back())) return false;
    label_start = i + 1;
  }
  return true;
}

void check_http_urls(std::string_view field, const std::vector<std::string>& urls) {
  for (std::size_t i = 0; i < urls.size(); ++i) {
    auto parsed = common::http::parse_http_url(urls[i]);
    if (auto* why = std::get_if<std::string>(&parsed)) {
      std::string shown = truncate_chars(urls[i], 80);
      if (shown.size() < urls[i].size()) shown += "...";
      throw invalid(field, std::string(field) + "[" + std::to_string(i) +
                               "]: expected an http(s) URL such as http://10.0.0.5:9999/, got '" + shown + "' (" +
                               *why + ")");
    }
  }
}

std::string checked_email_list(std::string_view field, std::string_view text, std::size_t max_chars) {
  // Bounded before it is split: the joined list is checked exactly below, this only keeps a huge
  // value from being looked at.
  if (text.size() > 4 * max_chars) {
    throw invalid(field, std::string(field) + ": at most " + std::to_string(max_chars) + " characters");
  }
  std::string joined;
  for (const auto& item : split_list(text)) {
    if (!is_email_address(item)) {
      throw invalid(field, std::string(field) + ": '" + item + "' is not an email address");
    }
    if (!joined.empty()) joined += ',';
    joined += item;
  }
  check_text(field, joined, max_chars, false);
  return joined;
}

std::vector<std::string> split_list(std::string_view text, bool keep_empty) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    auto comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    auto item = trimmed(text.substr(start, comma - start));
    if (keep_empty || !item.empty()) out.push_back(std::move(item));
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
