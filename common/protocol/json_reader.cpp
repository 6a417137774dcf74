#include "common/protocol/json_reader.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace cronwheel::common::protocol {
namespace {

// Upper bound on how much of nlohmann's parse message (which quotes the input near the error)
// goes into a ProtocolError, so a huge malformed body does not become a huge error message.
constexpr std::size_t kMaxParseMessage = 240;

std::string describe(const nlohmann::json& value) {
  if (value.is_number_float()) return "number " + value.dump();
  return value.type_name();
}

template <class Int>
Int integer_value(const nlohmann::json& value, const char* expected) {
  using Limits = std::numeric_limits<Int>;
  auto out_of_range = [&] {
    return ProtocolError("", "out of range for " + std::string(expected) + ": " + value.dump());
  };
  if (value.is_null()) return 0;
  if (value.is_number_unsigned()) {
    auto v = value.get<std::uint64_t>();
    if (v > static_cast<std::uint64_t>(Limits::max())) throw out_of_range();
    return static_cast<Int>(v);
  }
  if (value.is_number_integer()) {
    auto v = value.get<std::int64_t>();
    if (v < Limits::min() || v > Limits::max()) throw out_of_range();
    return static_cast<Int>(v);
  }
  if (value.is_number_float()) {
    // Jackson and Gson accept 3.0 for an int field; a fraction would silently lose data.
    auto v = value.get<double>();
    if (!std::isfinite(v) || std::trunc(v) != v) {
      throw ProtocolError("", "expected an integer, got " + describe(value));
    }
    // The bounds are powers of two (exactly representable); max()+1 is the first value outside.
    if (v < static_cast<double>(Limits::min()) || v >= -static_cast<double>(Limits::min())) {
      throw out_of_range();
    }
    return static_cast<Int>(v);
  }
  throw ProtocolError("", "expected an integer, got " + describe(value));
}

}  // namespace

void check_json_shape(std::string_view text, const JsonLimits& limits) {
  // One pass over the bytes, outside strings: brackets give the depth, commas and brackets
  // bound the number of values. Malformed text is left for the parser to describe.
  std::size_t depth = 0;
  std::size_t values = 1;
  bool in_string = false;
  bool escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        break;
      case '[':
      case '{':
        if (++depth > limits.max_depth) {
          throw ProtocolError("", "JSON nested deeper than " + std::to_string(limits.max_depth) + " levels");
        }
        ++values;
        break;
      case ']':
      case '}':
        if (depth > 0) --depth;
        break;
      case ',':
        ++values;
        break;
      default:
        break;
    }
    if (values > limits.max_values) {
      throw ProtocolError("", "JSON with more than " + std::to_string(limits.max_values) + " values");
    }
  }
}

nlohmann::json parse_json(std::string_view text, const JsonLimits& limits) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    throw ProtocolError("", "empty body, expected JSON");
  }
  check_json_shape(text, limits);
  if (limits.strict && text.substr(0, 3) == "\xEF\xBB\xBF") {
    throw ProtocolError("", "the body starts with a byte order mark; send UTF-8 JSON without one");
  }
  try {
    if (!limits.strict) return nlohmann::json::parse(text);
    // Keys seen in each object being parsed, innermost last.
    std::vector<std::vector<std::string>> open_objects;
    auto unique_keys = [&open_objects](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
      using Event = nlohmann::json::parse_event_t;
      if (event == Event::object_start) {
        open_objects.emplace_back();
      } else if (event == Event::object_end) {
        if (!open_objects.empty()) open_objects.pop_back();
      } else if (event == Event::key && !open_objects.empty()) {
        auto& keys = open_objects.back();
        const auto& key = parsed.get_ref<const std::string&>();
        if (std::find(keys.begin(), keys.end(), key) != keys.end()) {
          // Shown as JSON writes it: a NUL or line break in a key must not cut or split the
          // message it lands in.
          std::string shown;
          for (const char c : key.substr(0, 64)) {
            const auto u = static_cast<unsigned char>(c);
            if (u < 0x20 || u == 0x7f) {
              static constexpr char kHex[] = "0123456789abcdef";
              shown += "\\u00";
              shown += kHex[u >> 4];
              shown += kHex[u & 15];
            } else {
              shown += c;
            }
          }
          if (key.size() > 64) shown += "...";
          throw ProtocolError(shown, "given twice");
        }
        keys.push_back(key);
      }
      return true;
    };
    return nlohmann::json::parse(text, unique_keys);
  } catch (const nlohmann::json::out_of_range&) {
    // "1e400": nlohmann reports a number beyond double's range this way.
    throw ProtocolError("", "malformed JSON: a number is out of range");
  } catch (const nlohmann::json::parse_error& e) {
    // e.what() is "[json.exception.parse_error.101] parse error at line 1, column 2: ...".
    std::string message = e.what();
    if (auto pos = message.find("] "); pos != std::string::npos) message.erase(0, pos + 2);
    if (message.size() > kMaxParseMessage) message = message.substr(0, kMaxParseMessage) + "...";
    throw ProtocolError("", "malformed JSON: " + message);
  } catch (const nlohmann::json::exception&) {
    throw ProtocolError("", "malformed JSON");
  }
}

std::string dump_json(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::int32_t int32_value(const nlohmann::json& value) {
  return integer_value<std::int32_t>(value, "a 32-bit integer");
}

std::int64_t int64_value(const nlohmann::json& value) {
  return integer_value<std::int64_t>(value, "a 64-bit integer");
}

std::string string_value(const nlohmann::json& value) {
  if (value.is_null()) return {};
  if (!value.is_string()) throw ProtocolError("", "expected a string, got " + describe(value));
  return value.get<std::string>();
}

bool bool_value(const nlohmann::json& value) {
  if (value.is_null()) return false;
  if (!value.is_boolean()) throw ProtocolError("", "expected a boolean, got " + describe(value));
  return value.get<bool>();
}

FieldNames::FieldNames(std::initializer_list<std::string_view> names) {
  for (auto name : names) {
    if (count_ == names_.size()) break;  // more aliases than any message needs
    names_[count_++] = name;
  }
}

ObjectReader::ObjectReader(const nlohmann::json& value) : object_(value) {
  if (!value.is_object()) {
    throw ProtocolError("", "expected a JSON object, got " + describe(value));
  }
}

ObjectReader::Found ObjectReader::find(FieldNames names) const {
  for (auto name : names) {
    auto it = object_.find(std::string(name));
    if (it != object_.end() && !it->is_null()) return {&*it, name};
  }
  return {nullptr, names.canonical()};
}

namespace {

template <class Convert>
auto read_field(const ObjectReader& reader, const FieldNames& names, Convert convert,
                decltype(convert(nlohmann::json())) fallback) {
  auto found = reader.find(names);
  if (found.value == nullptr) return fallback;
  try {
    return convert(*found.value);
  } catch (const ProtocolError& e) {
    throw e.nested_in(found.name);
  }
}

}  // namespace

std::int32_t ObjectReader::get_int32(FieldNames names, std::int32_t fallback) const {
  return read_field(*this, names, int32_value, fallback);
}

std::int64_t ObjectReader::get_int64(FieldNames names, std::int64_t fallback) const {
  return read_field(*this, names, int64_value, fallback);
}

std::string ObjectReader::get_string(FieldNames names) const {
  return read_field(*this, names, string_value, std::string());
}

bool ObjectReader::get_bool(FieldNames names, bool fallback) const {
  return read_field(*this, names, bool_value, fallback);
}

}  // namespace cronwheel::common::protocol
