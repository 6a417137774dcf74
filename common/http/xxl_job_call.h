#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/http/http_client.h"
#include "common/protocol/messages.h"
#include "common/protocol/return_t.h"

namespace cronwheel::common::http {

namespace detail {
std::string bad_body_message(const HttpClient& client, std::string_view path,
                             const std::string& problem);
std::string bad_status_message(const HttpClient& client, std::string_view path,
                               const HttpResult& result);
}  // namespace detail

// POSTs `body` (JSON) to an XXL-JOB endpoint and reads the ReturnT answer, folding every failure
// into a failed ReturnT (code kFailCode) as XXL-JOB's own remoting does, so callers only check
// is_success():
//  - no answer (connect failure, timeout, ...): msg is HttpResult::error;
//  - HTTP status other than 200: if the body is a failed ReturnT it is returned as is (its msg
//    says more), otherwise msg names the status, the URL and the start of the body;
//  - a 200 whose body is not a ReturnT<T>: msg names the URL and the ProtocolError.
// Never throws for anything the server or the network does. Same threading rule as HttpClient.
//
//   auto answer = post_xxl_job<LogResult>(client, protocol::kLogPath,
//                                         protocol::to_json_string(log_param));
template <class T = std::string>
protocol::ReturnT<T> post_xxl_job(HttpClient& client, std::string_view path,
                                  std::string_view body) {
  using Answer = protocol::ReturnT<T>;
  HttpResult result = client.post_json(path, body);
  if (result.transport_error != TransportError::kNone) return Answer::fail(result.error);

  std::optional<Answer> answer;
  std::string problem;
  try {
    answer = protocol::parse<Answer>(result.body);
  } catch (const protocol::ProtocolError& e) {
    problem = e.what();
  }
  if (result.status == 200) {
    if (answer) return std::move(*answer);
    return Answer::fail(detail::bad_body_message(client, path, problem));
  }
  if (answer && !answer->is_success()) return std::move(*answer);
  return Answer::fail(detail::bad_status_message(client, path, result));
}

}  // namespace cronwheel::common::http
