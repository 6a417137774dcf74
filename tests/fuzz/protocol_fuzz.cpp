// Fuzz target: common/protocol, the bodies admins and executors send each other (XXL-JOB 2.4).
// The input is a request or response body; it is read as every message type.
//
// Properties:
//  - parse_json() and parse<T>() throw nothing but ProtocolError;
//  - JSON that parses round-trips: parse_json(dump_json(v)) == v;
//  - parse<T>(text) agrees with from_json() on the parsed value (same value, or both refuse);
//  - a message that reads writes back to a body that reads as the same message
//    (parse<T>(to_json_string(m)) == m), aliases (logDateTim, data, end, callbackList) included.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/protocol/json_reader.h"
#include "common/protocol/messages.h"
#include "common/protocol/protocol_error.h"
#include "common/protocol/return_t.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using namespace cronwheel::common::protocol;

template <class T>
std::optional<T> read(const nlohmann::json& json) {
  try {
    T value{};
    from_json(json, value);
    return value;
  } catch (const ProtocolError&) {
    return std::nullopt;
  }
}

template <class T>
void check_message(std::string_view text, const nlohmann::json& json) {
  const std::optional<T> value = read<T>(json);
  std::optional<T> parsed;
  try {
    parsed = parse<T>(text);
  } catch (const ProtocolError&) {
  }
  FUZZ_CHECK(parsed == value, "parse<T>(text) reads what from_json reads from parse_json(text)");
  if (!value) return;
  const std::string written = to_json_string(*value);
  std::optional<T> again;
  try {
    again = parse<T>(written);
  } catch (const ProtocolError&) {
  }
  FUZZ_CHECK(again == value, "a message read and written back reads the same");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  nlohmann::json json;
  try {
    json = parse_json(text);
  } catch (const ProtocolError& e) {
    FUZZ_CHECK(e.field().empty(), "a document-level ProtocolError names no field");
    // Every message type refuses what parse_json refuses.
    try {
      parse<TriggerParam>(text);
      FUZZ_CHECK(false, "parse<TriggerParam> reads text that parse_json refuses");
    } catch (const ProtocolError&) {
    }
    return 0;
  }

  const std::string dumped = dump_json(json);
  nlohmann::json reparsed;
  try {
    reparsed = parse_json(dumped);
  } catch (const ProtocolError&) {
    FUZZ_CHECK(false, "dump_json of parsed JSON parses again");
  }
  FUZZ_CHECK(reparsed == json, "JSON round-trips through dump_json");

  check_message<TriggerParam>(text, json);
  check_message<IdleBeatParam>(text, json);
  check_message<KillParam>(text, json);
  check_message<LogParam>(text, json);
  check_message<LogResult>(text, json);
  check_message<HandleCallbackParam>(text, json);
  check_message<CallbackBatch>(text, json);
  check_message<RegistryParam>(text, json);
  check_message<ReturnT<std::string>>(text, json);
  check_message<ReturnT<LogResult>>(text, json);
  check_message<ReturnT<nlohmann::json>>(text, json);
  return 0;
}
