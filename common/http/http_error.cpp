#include "common/http/http_error.h"

#include <utility>

#include <nlohmann/json.hpp>

#include "common/protocol/constants.h"
#include "common/protocol/json_reader.h"

namespace cronwheel::common::http {

HttpError::HttpError(int status, std::string code, std::string message, std::string field)
    : std::runtime_error(message),
      info_{status, std::move(code), std::move(message), std::move(field)} {}

HttpError::HttpError(ErrorInfo info) : std::runtime_error(info.message), info_(std::move(info)) {}

ErrorResponse rest_error(const ErrorInfo& info) {
  nlohmann::json error = {{"code", info.code}, {"message", info.message}};
  if (!info.field.empty()) error["field"] = info.field;
  return {info.status, protocol::dump_json({{"error", std::move(error)}})};
}

ErrorResponse xxl_job_error(const ErrorInfo& info) {
  nlohmann::json body = {
      {"code", protocol::kFailCode}, {"msg", info.message}, {"content", nullptr}};
  return {info.status, protocol::dump_json(body)};
}

}  // namespace cronwheel::common::http
