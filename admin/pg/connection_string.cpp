#include "admin/pg/connection_string.h"

#include <libpq-fe.h>

#include <cctype>

namespace cronwheel::admin {

namespace {

bool is_url(const std::string& s) {
  return s.rfind("postgresql://", 0) == 0 || s.rfind("postgres://", 0) == 0;
}

std::string percent_encode(std::string_view value) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : value) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    }
  }
  return out;
}

std::string quote_value(std::string_view value) {
  std::string out = "'";
  for (char c : value) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

// Whether `key` is set: as "?key=" / "&key=" in a URL, or as a "key=" word in key=value form.
bool has_parameter(const std::string& s, std::string_view key, bool url) {
  const std::string needle = std::string(key) + "=";
  for (auto pos = s.find(needle); pos != std::string::npos; pos = s.find(needle, pos + 1)) {
    if (pos == 0) return !url;
    char before = s[pos - 1];
    if (url ? (before == '?' || before == '&') : std::isspace(static_cast<unsigned char>(before))) return true;
  }
  return false;
}

}  // namespace

std::string with_connection_parameter(const std::string& connection_string, std::string_view key,
                                      std::string_view value) {
  const bool url = is_url(connection_string);
  if (has_parameter(connection_string, key, url)) return connection_string;
  if (url) {
    const char separator = connection_string.find('?') == std::string::npos ? '?' : '&';
    return connection_string + separator + std::string(key) + "=" + percent_encode(value);
  }
  std::string setting = std::string(key) + "=" + quote_value(value);
  return connection_string.empty() ? setting : connection_string + " " + setting;
}

std::optional<std::string> connection_string_problem(const std::string& connection_string) {
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(connection_string.c_str(), &error);
  if (options != nullptr) {
    PQconninfoFree(options);
    return std::nullopt;
  }
  std::string message = error != nullptr ? error : "libpq cannot read it";
  if (error != nullptr) PQfreemem(error);
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  return message;
}

}  // namespace cronwheel::admin
