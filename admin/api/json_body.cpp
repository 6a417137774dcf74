#include "admin/api/json_body.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>

#include "admin/api/api_errors.h"
#include "common/protocol/json_reader.h"
#include "common/protocol/protocol_error.h"

namespace cronwheel::admin {

namespace {

std::string type_name(const nlohmann::json& v) {
  if (v.is_string()) return "string";
  if (v.is_boolean()) return "boolean";
  if (v.is_number_integer() || v.is_number_unsigned()) return "integer";
  if (v.is_number()) return "number";
  if (v.is_array()) return "array";
  if (v.is_object()) return "object";
  return "null";
}

[[noreturn]] void wrong_type(std::string_view field, std::string_view expected, const nlohmann::json& v) {
  throw invalid(field, std::string(field) + ": expected " + std::string(expected) + ", got " + type_name(v));
}

std::int64_t as_int(std::string_view field, const nlohmann::json& v) {
  // Unsigned first: nlohmann counts an unsigned number as an integer too, and reading 2^63 as
  // int64 would wrap it to -2^63.
  if (v.is_number_unsigned()) {
    auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(INT64_MAX)) {
      throw invalid(field, std::string(field) + ": " + std::to_string(u) + " is out of range (at most " +
                               std::to_string(INT64_MAX) + ")");
    }
    return static_cast<std::int64_t>(u);
  }
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_number_float()) {
    // Integers beyond uint64 arrive as doubles: say they are out of range, not of the wrong type.
    const double d = v.get<double>();
    if (std::isfinite(d) && std::trunc(d) == d && std::fabs(d) >= 9.2e18) {
      throw invalid(field, std::string(field) + ": " + v.dump() + " is out of range (at most " +
                               std::to_string(INT64_MAX) + ")");
    }
  }
  wrong_type(field, "an integer", v);
}

// Which characters a string field may hold (see json_body.h).
enum class TextKind { kLine, kMultiline, kAny };

TextKind text_kind(std::string_view field) {
  static constexpr std::array<std::string_view, 4> kAny = {"glueSource", "password", "currentPassword", "newPassword"};
  // executorParam, and a workflow node's parameter template (what becomes one).
  static constexpr std::array<std::string_view, 2> kMultiline = {"executorParam", "params"};
  if (std::find(kAny.begin(), kAny.end(), field) != kAny.end()) return TextKind::kAny;
  if (std::find(kMultiline.begin(), kMultiline.end(), field) != kMultiline.end()) return TextKind::kMultiline;
  return TextKind::kLine;
}

void check_characters(std::string_view field, std::string_view value, TextKind kind) {
  const auto bytes = reinterpret_cast<const unsigned char*>(value.data());
  for (std::size_t i = 0; i < value.size(); ++i) {
    const unsigned char c = bytes[i];
    if (c == 0) throw invalid(field, std::string(field) + ": must not contain NUL characters");
    if (kind == TextKind::kAny) continue;
    const bool line_break = c == '\n' || c == '\r' || c == '\t';
    // C0 controls and DEL; C1 controls (U+0080-U+009F) are C2 80-9F in UTF-8.
    const bool control = c < 0x20 || c == 0x7f || (c == 0xc2 && i + 1 < value.size() && bytes[i + 1] >= 0x80 && bytes[i + 1] <= 0x9f);
    if (control && !(kind == TextKind::kMultiline && line_break)) {
      throw invalid(field, std::string(field) + (kind == TextKind::kMultiline
                                                     ? ": must not contain control characters other than line breaks and tabs"
                                                     : ": must not contain control characters or line breaks"));
    }
  }
}

}  // namespace

JsonBody::JsonBody(std::string_view text) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    json_ = nlohmann::json::object();
    return;
  }
  try {
    json_ = common::protocol::parse_json(text, kLimits);
  } catch (const common::protocol::ProtocolError& e) {
    // From field() and problem(), not what(): a C string ends at the first NUL.
    throw invalid(e.field(), e.field().empty() ? e.problem() : e.field() + ": " + e.problem());
  }
  if (!json_.is_object()) throw invalid("", "the body must be a JSON object, got " + type_name(json_));
}

bool JsonBody::has(std::string_view field) const { return json_.contains(field); }

const nlohmann::json* JsonBody::lookup(std::string_view field) {
  read_.emplace(field);
  auto it = json_.find(field);
  if (it == json_.end() || it->is_null()) return nullptr;
  return &*it;
}

const nlohmann::json* JsonBody::optional_value(std::string_view field) { return lookup(field); }

std::string JsonBody::required_string(std::string_view field) {
  auto value = optional_string(field);
  if (!value) throw invalid(field, std::string(field) + ": is required");
  return *value;
}

std::optional<std::string> JsonBody::optional_string(std::string_view field) {
  const auto* v = lookup(field);
  if (v == nullptr) return std::nullopt;
  if (!v->is_string()) wrong_type(field, "a string", *v);
  const auto& text = v->get_ref<const std::string&>();
  check_characters(field, text, text_kind(field));
  return text;
}

std::int64_t JsonBody::required_int(std::string_view field) {
  auto value = optional_int(field);
  if (!value) throw invalid(field, std::string(field) + ": is required");
  return *value;
}

std::optional<std::int64_t> JsonBody::optional_int(std::string_view field) {
  const auto* v = lookup(field);
  if (v == nullptr) return std::nullopt;
  return as_int(field, *v);
}

std::optional<bool> JsonBody::optional_bool(std::string_view field) {
  const auto* v = lookup(field);
  if (v == nullptr) return std::nullopt;
  if (!v->is_boolean()) wrong_type(field, "a boolean", *v);
  return v->get<bool>();
}

std::optional<std::vector<std::string>> JsonBody::optional_string_list(std::string_view field) {
  const auto* v = lookup(field);
  if (v == nullptr) return std::nullopt;
  if (!v->is_array()) wrong_type(field, "an array of strings", *v);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < v->size(); ++i) {
    const auto& item = (*v)[i];
    if (!item.is_string()) {
      throw invalid(field, std::string(field) + "[" + std::to_string(i) + "]: expected a string, got " + type_name(item));
    }
    const std::string element = std::string(field) + "[" + std::to_string(i) + "]";
    check_characters(element, item.get_ref<const std::string&>(), text_kind(field));
    out.push_back(item.get<std::string>());
  }
  return out;
}

std::optional<std::vector<std::int64_t>> JsonBody::optional_int_list(std::string_view field) {
  const auto* v = lookup(field);
  if (v == nullptr) return std::nullopt;
  if (!v->is_array()) wrong_type(field, "an array of integers", *v);
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < v->size(); ++i) {
    out.push_back(as_int(std::string(field) + "[" + std::to_string(i) + "]", (*v)[i]));
  }
  return out;
}

void JsonBody::finish() const {
  for (const auto& [key, value] : json_.items()) {
    if (read_.find(key) == read_.end()) throw invalid(key, key + ": unknown field");
  }
}

std::optional<std::int64_t> query_int(const std::string& value, std::string_view name) {
  if (value.empty()) return std::nullopt;
  std::int64_t out = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
  if (ec == std::errc::result_out_of_range && end == value.data() + value.size()) {
    throw invalid(name, std::string(name) + ": " + value + " is out of range (at most " + std::to_string(INT64_MAX) + ")");
  }
  if (ec != std::errc() || end != value.data() + value.size()) {
    const std::string shown = value.size() > 40 ? value.substr(0, 40) + "..." : value;
    throw invalid(name, std::string(name) + ": expected an integer, got \"" + shown + "\"");
  }
  return out;
}

}  // namespace cronwheel::admin
