#include "common/protocol/return_t.h"

namespace cronwheel::common::protocol::detail {

void content_from_json(const nlohmann::json& value, std::string& out) {
  out = string_value(value);
}

void content_from_json(const nlohmann::json& value, nlohmann::json& out) { out = value; }

const nlohmann::json* read_envelope(const nlohmann::json& value, int& code, std::string& msg) {
  ObjectReader reader(value);
  if (reader.find("code").value == nullptr) {
    throw ProtocolError("code", "missing, a response envelope needs a code");
  }
  code = reader.get_int32("code");
  msg = reader.get_string("msg");
  return reader.find({"content", "data"}).value;
}

}  // namespace cronwheel::common::protocol::detail
