#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/protocol/protocol_error.h"

// Building blocks for reading and writing wire messages. Reading follows what XXL-JOB's Java side
// (Gson in the executor, Jackson in the admin) tolerates, and nothing more:
//  - a missing field or a JSON null takes the field's default (0, "", false);
//  - unknown fields are ignored;
//  - a number must be a JSON number; an integral float (3.0) is accepted, 3.5 is not;
//  - a value of the wrong JSON type, or out of the field's range, is a ProtocolError naming the
//    field, never a crash and never a silent zero.
namespace cronwheel::common::protocol {

// Bounds on a JSON text, checked before it is parsed, so no body can make the parser recurse
// deeply or allocate many times its size (a body of 2 MB of "[[],[],...]" is a million values of
// ~70 bytes each). The defaults fit every message of the wire protocol, callback batches of
// thousands of results included.
struct JsonLimits {
  std::size_t max_depth = 32;
  std::size_t max_values = 200'000;
  // Refuse what JSON parsers disagree on instead of choosing silently: a key given twice in one
  // object (some parsers keep the first, this one the last, so a proxy or an audit reader may
  // see another value than the one applied) and a leading byte order mark.
  bool strict = false;
};

// Throws ProtocolError (empty field) when `text` nests deeper than limits.max_depth or holds
// more than limits.max_values values (counted from brackets and commas outside strings; an
// upper bound). Does not check that the text is valid JSON.
void check_json_shape(std::string_view text, const JsonLimits& limits);

// Parses a message body. Empty or malformed text, text beyond `limits` and numbers beyond
// double's range (1e400) throw ProtocolError with an empty field; with limits.strict, a key given
// twice throws ProtocolError naming it ("name: given twice"), and a leading byte order mark
// throws too.
nlohmann::json parse_json(std::string_view text, const JsonLimits& limits = {});

// Serializes compactly. Invalid UTF-8 inside strings (a script's log output can contain
// anything) is replaced by U+FFFD instead of throwing, so serializing a message never fails.
std::string dump_json(const nlohmann::json& value);

// Conversions of one JSON value; errors carry an empty field (callers nest them).
std::int32_t int32_value(const nlohmann::json& value);  // null → 0
std::int64_t int64_value(const nlohmann::json& value);  // null → 0
std::string string_value(const nlohmann::json& value);  // null → ""
bool bool_value(const nlohmann::json& value);           // null → false

// The wire name of a field plus the aliases it is also accepted under, canonical name first:
// FieldNames{"logDateTim", "logDateTime"}.
class FieldNames {
 public:
  FieldNames(const char* name) : names_{name}, count_(1) {}  // NOLINT: implicit by design
  FieldNames(std::string_view name) : names_{name}, count_(1) {}  // NOLINT
  FieldNames(std::initializer_list<std::string_view> names);

  const std::string_view* begin() const noexcept { return names_.data(); }
  const std::string_view* end() const noexcept { return names_.data() + count_; }
  std::string_view canonical() const noexcept { return names_[0]; }

 private:
  std::array<std::string_view, 3> names_{};
  std::size_t count_ = 0;
};

// Typed access to the fields of one JSON object. When several names are given, the first one
// present with a non-null value wins and errors name the field as it was spelled in the input.
class ObjectReader {
 public:
  // Throws ProtocolError("", "expected a JSON object, got array") unless `value` is an object.
  // `value` must outlive the reader.
  explicit ObjectReader(const nlohmann::json& value);

  std::int32_t get_int32(FieldNames names, std::int32_t fallback = 0) const;
  std::int64_t get_int64(FieldNames names, std::int64_t fallback = 0) const;
  std::string get_string(FieldNames names) const;
  bool get_bool(FieldNames names, bool fallback = false) const;

  struct Found {
    const nlohmann::json* value = nullptr;  // nullptr: absent or null under every name
    std::string_view name;                  // the name it was found under
  };
  Found find(FieldNames names) const;

 private:
  const nlohmann::json& object_;
};

}  // namespace cronwheel::common::protocol
