#include "admin/api/json_body.h"

#include <charconv>

#include "admin/api/api_errors.h"

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
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_number_unsigned()) {
    auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(INT64_MAX)) throw invalid(field, std::string(field) + ": out of range");
    return static_cast<std::int64_t>(u);
  }
  wrong_type(field, "an integer", v);
}

}  // namespace

JsonBody::JsonBody(std::string_view text) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    json_ = nlohmann::json::object();
    return;
  }
  try {
    json_ = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw invalid("", std::string("malformed JSON: ") + e.what());
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

std::string JsonBody::required_string(std::string_view field) {
  auto value = optional_string(field);
  if (!value) throw invalid(field, std::string(field) + ": is required");
  return *value;
}

std::optional<std::string> JsonBody::optional_string(std::string_view field) {
  const auto* v = lookup(field);
  if (v == nullptr) return std::nullopt;
  if (!v->is_string()) wrong_type(field, "a string", *v);
  return v->get<std::string>();
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
  if (ec != std::errc() || end != value.data() + value.size()) {
    throw invalid(name, std::string(name) + ": expected an integer, got \"" + value + "\"");
  }
  return out;
}

}  // namespace cronwheel::admin
