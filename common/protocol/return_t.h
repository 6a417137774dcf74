#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "common/protocol/constants.h"
#include "common/protocol/json_reader.h"
#include "common/protocol/protocol_error.h"

namespace cronwheel::common::protocol {

// XXL-JOB's response envelope, the answer to every admin/executor call:
//   {"code":200,"msg":null,"content":...}
// code is kSuccessCode, kFailCode or kTimeoutCode; msg explains a failure and is null on success;
// content is the call's payload (a LogResult for /log, absent or null for the others, which use
// ReturnT<std::string> as XXL-JOB does).
//
// On input, `data` is accepted in place of `content` (XXL-JOB 3.x renamed it); a missing or null
// msg reads as "", a missing or null content as nullopt. `code` is required: a body without it is
// not a ReturnT. On output all three keys are always written; an empty msg is written as null.
template <class T>
struct ReturnT {
  int code = kSuccessCode;
  std::string msg;
  std::optional<T> content;

  bool is_success() const noexcept { return code == kSuccessCode; }

  static ReturnT success() { return ReturnT(); }
  static ReturnT success(T value) {
    ReturnT result;
    result.content = std::move(value);
    return result;
  }
  static ReturnT fail(std::string message, int code = kFailCode) {
    ReturnT result;
    result.code = code;
    result.msg = std::move(message);
    return result;
  }

  friend bool operator==(const ReturnT&, const ReturnT&) = default;
};

namespace detail {

// How a ReturnT's content is read: a string content must be a JSON string, a json content is
// taken as is, and any other T goes through its own from_json (found by ADL).
void content_from_json(const nlohmann::json& value, std::string& out);
void content_from_json(const nlohmann::json& value, nlohmann::json& out);
template <class T>
void content_from_json(const nlohmann::json& value, T& out) {
  from_json(value, out);
}

// Reads code and msg and returns the content value (nullptr when absent or null).
const nlohmann::json* read_envelope(const nlohmann::json& value, int& code, std::string& msg);

}  // namespace detail

template <class T>
void to_json(nlohmann::json& out, const ReturnT<T>& value) {
  out = nlohmann::json::object();
  out["code"] = value.code;
  out["msg"] = value.msg.empty() ? nlohmann::json(nullptr) : nlohmann::json(value.msg);
  out["content"] = value.content ? nlohmann::json(*value.content) : nlohmann::json(nullptr);
}

// Throws ProtocolError; errors inside the content are reported as "content.<field>".
template <class T>
void from_json(const nlohmann::json& in, ReturnT<T>& out) {
  ReturnT<T> result;
  const nlohmann::json* content = detail::read_envelope(in, result.code, result.msg);
  if (content != nullptr) {
    T value{};
    try {
      detail::content_from_json(*content, value);
    } catch (const ProtocolError& e) {
      throw e.nested_in("content");
    }
    result.content = std::move(value);
  }
  out = std::move(result);
}

}  // namespace cronwheel::common::protocol
