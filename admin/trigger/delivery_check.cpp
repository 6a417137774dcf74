#include "admin/trigger/delivery_check.h"

#include <exception>
#include <string_view>

namespace cronwheel::admin {

namespace {

// The start of XXL-JOB's (and cronwheel's) /log content for a run the executor has no log of.
constexpr std::string_view kNoLogFile = "readLog fail, logFile not";

}  // namespace

DeliveryCheck check_delivery(ExecutorClient& client, const std::string& address, const std::string& access_token,
                             std::int64_t log_id, std::int64_t log_date_time) {
  common::protocol::LogParam param;
  param.log_id = log_id;
  param.log_date_time = log_date_time;
  param.from_line_num = 1;
  common::protocol::ReturnT<common::protocol::LogResult> answer;
  try {
    answer = client.log(address, access_token, param);
  } catch (const std::exception& e) {  // the client promises not to throw; a fake might
    answer = decltype(answer)::fail(e.what());
  }
  if (!answer.is_success()) {
    return {DeliveryCheck::Kind::kUnknown,
            "/log for run " + std::to_string(log_id) + " failed: code " + std::to_string(answer.code) +
                (answer.msg.empty() ? "" : ", msg: " + answer.msg)};
  }
  if (!answer.content) {
    return {DeliveryCheck::Kind::kUnknown, "/log for run " + std::to_string(log_id) + " answered no content"};
  }
  const auto& log = *answer.content;
  if (log.to_line_num == 0 && log.log_content.rfind(kNoLogFile, 0) == 0) {
    return {DeliveryCheck::Kind::kNotDelivered, "the executor has no run " + std::to_string(log_id)};
  }
  return {DeliveryCheck::Kind::kDelivered, "the executor has run " + std::to_string(log_id)};
}

}  // namespace cronwheel::admin
