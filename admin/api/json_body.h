#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/protocol/json_reader.h"

namespace cronwheel::admin {

// Reads a JSON request body strictly: every field read is checked for its type, required ones
// for presence, and finish() rejects fields nobody read. Every problem is an HttpError 400
// (code "invalid") naming the field, e.g. `executorTimeout: expected an integer, got string`.
//
//   JsonBody body(req.body);
//   auto name = body.required_string("appName");
//   auto title = body.optional_string("title");
//   body.finish();
//
// Bounded before it is parsed (kLimits): a body nesting deeper or holding more values is refused
// without being parsed. Strings never carry NUL (PostgreSQL's text cannot hold it: it would cut
// the value short); and no control character or line break either, except in the fields that
// are multi-line by nature: executorParam (line breaks and tabs), glueSource and passwords
// (anything but NUL).
class JsonBody {
 public:
  // Strict: a key given twice and a leading byte order mark are refused (JsonLimits::strict).
  static constexpr common::protocol::JsonLimits kLimits{16, 10'000, true};

  // Throws HttpError 400 for malformed JSON or a body that is not an object; an empty body
  // reads as {}.
  explicit JsonBody(std::string_view text);

  bool has(std::string_view field) const;

  std::string required_string(std::string_view field);
  std::optional<std::string> optional_string(std::string_view field);
  std::int64_t required_int(std::string_view field);
  std::optional<std::int64_t> optional_int(std::string_view field);
  std::optional<bool> optional_bool(std::string_view field);
  std::optional<std::vector<std::string>> optional_string_list(std::string_view field);
  std::optional<std::vector<std::int64_t>> optional_int_list(std::string_view field);
  // Any JSON value, for the caller to check (nested objects and arrays); nullptr when absent or
  // null. Counts as read.
  const nlohmann::json* optional_value(std::string_view field);

  // Throws HttpError 400 naming the first field that was never read.
  void finish() const;

  const nlohmann::json& json() const noexcept { return json_; }

 private:
  const nlohmann::json* lookup(std::string_view field);  // nullptr when absent or null

  nlohmann::json json_;
  std::set<std::string, std::less<>> read_;
};

// Query parameters, with the same error shape: `limit: expected an integer, got "ten"`.
std::optional<std::int64_t> query_int(const std::string& value, std::string_view name);

}  // namespace cronwheel::admin
