#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/http/http_client.h"
#include "common/protocol/messages.h"
#include "common/protocol/return_t.h"

namespace cronwheel::common::http {

namespace detail {
std::string bad_body_message(std::string_view url, const std::string& problem);
std::string bad_status_message(std::string_view url, const HttpResult& result);
}  // namespace detail

// Reads the ReturnT<T> answer of an XXL-JOB endpoint from a response that arrived (`result`
// has no transport error; `url` names the endpoint in messages), folding what is wrong into a
// failed ReturnT (code kFailCode), as XXL-JOB's own remoting does:
//  - HTTP status other than 200: if the body is a failed ReturnT it is returned as is (its msg
//    says more), otherwise msg names the status, the URL and the start of the body;
//  - a 200 whose body is not a ReturnT<T>: msg names the URL and the ProtocolError.
// Every caller of an XXL-JOB endpoint reads answers through this function.
template <class T = std::string>
protocol::ReturnT<T> read_xxl_job_answer(const HttpResult& result, std::string_view url) {
  using Answer = protocol::ReturnT<T>;
  std::optional<Answer> answer;
  std::string problem;
  try {
    answer = protocol::parse<Answer>(result.body);
  } catch (const protocol::ProtocolError& e) {
    problem = e.what();
  }
  if (result.status == 200) {
    if (answer) return std::move(*answer);
    return Answer::fail(detail::bad_body_message(url, problem));
  }
  if (answer && !answer->is_success()) return std::move(*answer);
  return Answer::fail(detail::bad_status_message(url, result));
}

// POSTs `body` (JSON) to an XXL-JOB endpoint and reads the ReturnT answer, folding every failure
// into a failed ReturnT (code kFailCode) so callers only check is_success(): no answer
// (connect failure, timeout, ...) gives msg = HttpResult::error; an answer is read by
// read_xxl_job_answer. Never throws for anything the server or the network does. Same
// threading rule as HttpClient.
//
//   auto answer = post_xxl_job<LogResult>(client, protocol::kLogPath,
//                                         protocol::to_json_string(log_param));
template <class T = std::string>
protocol::ReturnT<T> post_xxl_job(HttpClient& client, std::string_view path,
                                  std::string_view body) {
  HttpResult result = client.post_json(path, body);
  if (result.transport_error != TransportError::kNone) return protocol::ReturnT<T>::fail(result.error);
  return read_xxl_job_answer<T>(result, client.url(path));
}

}  // namespace cronwheel::common::http
