#include "common/http/xxl_job_call.h"

namespace cronwheel::common::http::detail {
namespace {

// How much of an unexpected body goes into a message (an HTML error page can be large).
constexpr std::size_t kBodyExcerpt = 200;

}  // namespace

std::string bad_body_message(const HttpClient& client, std::string_view path,
                             const std::string& problem) {
  return "invalid answer from POST " + client.url(path) + ": " + problem;
}

std::string bad_status_message(const HttpClient& client, std::string_view path,
                               const HttpResult& result) {
  std::string message =
      "HTTP " + std::to_string(result.status) + " from POST " + client.url(path);
  if (!result.body.empty()) {
    message += ": " + result.body.substr(0, kBodyExcerpt);
    if (result.body.size() > kBodyExcerpt) message += "...";
  }
  return message;
}

}  // namespace cronwheel::common::http::detail
