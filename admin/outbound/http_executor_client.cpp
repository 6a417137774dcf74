#include "admin/outbound/http_executor_client.h"

#include <optional>
#include <string_view>
#include <variant>

#include <spdlog/spdlog.h>

#include "common/http/url.h"
#include "common/http/xxl_job_call.h"
#include "common/protocol/constants.h"
#include "common/protocol/messages.h"

namespace cronwheel::admin {

namespace protocol = common::protocol;
using common::http::HttpClient;
using common::http::HttpResult;
using common::http::TransportError;

namespace {

common::http::AsyncHttpClientOptions client_options(const HttpExecutorClient::Options& options) {
  common::http::AsyncHttpClientOptions out;
  out.connect_timeout = options.connect_timeout;
  out.read_timeout = options.read_timeout;
  out.write_timeout = options.write_timeout;
  out.max_connections_per_origin = options.max_connections_per_address;
  out.connection_wait = options.connection_wait;
  out.max_idle_time = options.max_idle_time;
  out.name = "executor-client";
  return out;
}

// The request went out on a kept-alive connection and the executor closed or reset it before the
// request was written whole or before answering anything: the connection was stale (closed as
// idle or evicted just as the request went out), the request was never read.
bool failed_on_stale_connection(const HttpResult& result) {
  return result.reused_connection && result.transport_error == TransportError::kConnection &&
         !result.answer_head_received;
}

bool is_https(std::string_view address) {
  return address.size() >= 8 && (address.substr(0, 8) == "https://" || address.substr(0, 8) == "HTTPS://");
}

}  // namespace

HttpExecutorClient::HttpExecutorClient(common::Clock& clock) : HttpExecutorClient(clock, Options{}) {}

HttpExecutorClient::HttpExecutorClient(common::Clock& clock, Options options)
    : options_(options), client_(client_options(options_), clock) {}

HttpExecutorClient::~HttpExecutorClient() = default;

std::size_t HttpExecutorClient::idle_connections() const { return client_.stats().idle; }

std::size_t HttpExecutorClient::busy_connections() const { return client_.stats().busy; }

std::size_t HttpExecutorClient::waiting_calls() const { return client_.stats().waiting; }

std::size_t HttpExecutorClient::pools() const { return client_.stats().origins; }

HttpResult HttpExecutorClient::post(const std::string& address, const std::string& access_token,
                                    std::string_view path, std::string_view body) {
  if (is_https(address)) {
    common::http::HttpClientOptions options;
    options.connect_timeout = options_.connect_timeout;
    options.read_timeout = options_.read_timeout;
    options.write_timeout = options_.write_timeout;
    options.access_token = access_token;
    options.keep_alive = false;
    return HttpClient(address, options).post_json(path, body);
  }
  common::http::AsyncHttpRequest request;
  request.base_url = address;
  request.path = std::string(path);
  request.body = std::string(body);
  if (!access_token.empty()) request.headers.emplace_back(protocol::kAccessTokenHeader, access_token);
  return client_.send_and_wait(std::move(request));
}

template <class T>
protocol::ReturnT<T> HttpExecutorClient::call(const std::string& address, const std::string& access_token,
                                              std::string_view path, std::string_view body) {
  using Answer = protocol::ReturnT<T>;
  auto parsed = common::http::parse_base_url(address);
  if (auto* why = std::get_if<std::string>(&parsed)) {
    return Answer::fail("executor address '" + address + "' is not usable: invalid base URL '" + address +
                            "': " + *why,
                        kNotReachedCode);
  }
  if (access_token.find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos) {
    return Answer::fail("executor address '" + address +
                            "' is not usable: the access token must not contain CR, LF or NUL characters",
                        kNotReachedCode);
  }
  const std::string url = std::get<common::http::BaseUrl>(parsed).url.origin() +
                          std::get<common::http::BaseUrl>(parsed).target(path);

  HttpResult result = post(address, access_token, path, body);
  if (result.transport_error == TransportError::kNoConnection) {
    // This node's own connections to the executor are all busy: the executor is fine, only
    // busy with this node, so it is not one to route around.
    return Answer::fail(result.error);
  }
  std::optional<HttpResult> first;
  if (failed_on_stale_connection(result)) {
    // Once more, at once, on a new connection (see the class comment): the stale one was closed,
    // so the pool opens a new one unless a connection was given back meanwhile.
    spdlog::debug("executor client: {}; sending it again on a new connection", result.error);
    first = std::move(result);
    result = post(address, access_token, path, body);
  }
  if (result.transport_error != TransportError::kNone) {
    // 500 when the executor cannot have the request, 502 when it may (the first attempt counts
    // too: a request written whole before the executor closed the connection is taken as unread
    // only when the executor then answers on a new one).
    const bool may_have_arrived = result.request_written || (first && first->request_written);
    std::string msg = result.error;
    if (first) msg += " (sent again on a new connection after: " + first->error + ")";
    return Answer::fail(std::move(msg), may_have_arrived ? protocol::kTimeoutCode : kNotReachedCode);
  }
  return common::http::read_xxl_job_answer<T>(result, url);
}

ExecutorClient::Result HttpExecutorClient::beat(const std::string& address, const std::string& access_token) {
  // XXL-JOB 2.4's admin sends the JSON string "" as /beat's body.
  return call<std::string>(address, access_token, protocol::kBeatPath, "\"\"");
}

ExecutorClient::Result HttpExecutorClient::idle_beat(const std::string& address, const std::string& access_token,
                                                     std::int32_t job_id) {
  return call<std::string>(address, access_token, protocol::kIdleBeatPath,
                           protocol::to_json_string(protocol::IdleBeatParam{job_id}));
}

ExecutorClient::Result HttpExecutorClient::run(const std::string& address, const std::string& access_token,
                                               const protocol::TriggerParam& trigger) {
  return call<std::string>(address, access_token, protocol::kRunPath, protocol::to_json_string(trigger));
}

ExecutorClient::Result HttpExecutorClient::kill(const std::string& address, const std::string& access_token,
                                                std::int32_t job_id) {
  return call<std::string>(address, access_token, protocol::kKillPath,
                           protocol::to_json_string(protocol::KillParam{job_id}));
}

protocol::ReturnT<protocol::LogResult> HttpExecutorClient::log(const std::string& address,
                                                               const std::string& access_token,
                                                               const protocol::LogParam& param) {
  return call<protocol::LogResult>(address, access_token, protocol::kLogPath, protocol::to_json_string(param));
}

ExecutorClient::LeadResult HttpExecutorClient::lead(const std::string& address, const std::string& access_token,
                                                    const protocol::LeadRequest& request) {
  return call<protocol::LeadAnswer>(address, access_token, protocol::kLeadPath, protocol::to_json_string(request));
}

ExecutorClient::LeadCancelResult HttpExecutorClient::cancel_lead(const std::string& address,
                                                                 const std::string& access_token,
                                                                 const protocol::LeadCancelParam& param) {
  return call<protocol::LeadCancelAnswer>(address, access_token, protocol::kLeadCancelPath,
                                          protocol::to_json_string(param));
}

}  // namespace cronwheel::admin
