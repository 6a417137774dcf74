#include "common/http/xxl_job_call.h"

namespace cronwheel::common::http::detail {
namespace {

// How much of an unexpected body goes into a message (an HTML error page can be large).
constexpr std::size_t kBodyExcerpt = 200;

}  // namespace

std::string bad_body_message(std::string_view url, const std::string& problem) {
  return "invalid answer from POST " + std::string(url) + ": " + problem;
}

std::string bad_status_message(std::string_view url, const HttpResult& result) {
  std::string message = "HTTP " + std::to_string(result.status) + " from POST " + std::string(url);
  if (!result.body.empty()) {
    message += ": " + result.body.substr(0, kBodyExcerpt);
    if (result.body.size() > kBodyExcerpt) message += "...";
  }
  return message;
}

}  // namespace cronwheel::common::http::detail
