#include "common/http/http_client.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <utility>
#include <variant>

#include <httplib.h>

#include "common/http/url.h"
#include "common/protocol/constants.h"

namespace cronwheel::common::http {
namespace {

using Clock = std::chrono::steady_clock;

BaseUrl base_url_or_throw(std::string_view url) {
  auto parsed = parse_base_url(url);
  if (auto* why = std::get_if<std::string>(&parsed)) {
    throw std::invalid_argument("invalid base URL '" + std::string(url) + "': " + *why);
  }
  return std::move(std::get<BaseUrl>(parsed));
}

}  // namespace

std::string_view to_string(TransportError error) noexcept {
  switch (error) {
    case TransportError::kNone:
      return "none";
    case TransportError::kConnect:
      return "connect";
    case TransportError::kTimeout:
      return "timeout";
    case TransportError::kConnection:
      return "connection";
    case TransportError::kTooLarge:
      return "too large";
    case TransportError::kNoConnection:
      return "no connection";
    case TransportError::kOther:
      return "other";
  }
  return "other";
}

std::optional<std::string> HttpResult::header(std::string_view name) const {
  auto same = [name](const std::string& field) {
    return std::equal(field.begin(), field.end(), name.begin(), name.end(), [](unsigned char a, unsigned char b) {
      return std::tolower(a) == std::tolower(b);
    });
  };
  for (const auto& [field, value] : headers) {
    if (same(field)) return value;
  }
  return std::nullopt;
}

struct HttpClient::Impl {
  Impl(std::string_view base, HttpClientOptions opts)
      : base_url(base), parsed(base_url_or_throw(base)), options(std::move(opts)),
        client(parsed.url.origin()) {
    client.set_connection_timeout(options.connect_timeout);
    client.set_read_timeout(options.read_timeout);
    client.set_write_timeout(options.write_timeout);
    client.set_keep_alive(options.keep_alive);
    client.set_tcp_nodelay(true);
    // Called for every socket the client opens (after TCP_NODELAY is set, before the connect):
    // counting them tells a request sent on a kept-alive connection from one that needed a new
    // one, which cpp-httplib 0.11 does not report otherwise.
    client.set_socket_options([this](socket_t) { ++sockets_opened; });
    client.set_follow_location(false);
    if (!options.access_token.empty()) {
      // A CR or LF would end the header and start another of the token's choosing.
      if (options.access_token.find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos) {
        throw std::invalid_argument("the access token must not contain CR, LF or NUL characters");
      }
    }
  }

  std::string target(std::string_view path) const { return parsed.target(path); }

  // Sends `method` `path` (with a JSON body when given), reading at most max_answer_bytes of
  // the answer.
  HttpResult request(const char* method, std::string_view path, std::optional<std::string_view> body) {
    httplib::Request req;
    req.method = method;
    req.path = target(path);
    if (!options.access_token.empty()) req.headers.emplace(protocol::kAccessTokenHeader, options.access_token);
    if (body) {
      req.body.assign(body->data(), body->size());
      req.headers.emplace("Content-Type", protocol::kJsonContentType);
    }
    std::string answer;
    bool too_large = false;
    req.content_receiver = [&](const char* data, std::size_t length, std::uint64_t, std::uint64_t) {
      if (length > options.max_answer_bytes - answer.size()) {
        too_large = true;
        return false;
      }
      answer.append(data, length);
      return true;
    };
    bool head_received = false;
    req.response_handler = [&](const httplib::Response&) {
      head_received = true;
      return true;
    };
    // cpp-httplib reuses an open socket unless it sees the server's close first (it peeks before
    // sending); then it opens a new one, which the count shows.
    const bool had_socket = client.is_socket_open() != 0;
    const auto opened_before = sockets_opened;
    const auto started = Clock::now();
    auto result = client.send(req);
    const bool reused = had_socket && sockets_opened == opened_before;
    if (too_large) {
      // The rest of the answer is still on the connection: it cannot carry another request.
      client.stop();
      HttpResult out;
      out.transport_error = TransportError::kTooLarge;
      out.error = std::string(method) + " " + url(path) + ": the answer is larger than " +
                  std::to_string(options.max_answer_bytes) + " bytes";
      out.answer_head_received = true;
      out.reused_connection = reused;
      return out;
    }
    HttpResult out = finish(method, path, std::move(result), std::move(answer), started, head_received);
    out.reused_connection = reused;
    return out;
  }

  // How far a failed request got comes from cpp-httplib's Error and the time it took (0.11 says
  // nothing more):
  //  - Connection, ConnectionTimeout: no connection, nothing sent.
  //  - Write: a write of the request failed, so its last byte was never written. cpp-httplib
  //    peeks before each write and fails it when the server has closed or reset the connection,
  //    or when no send buffer space came within write_timeout (told apart by the time taken:
  //    a poll wait never ends early).
  //  - Read: the whole request was written; then no complete answer, either because the wait
  //    for the next bytes took the full read timeout, or because the server closed or reset the
  //    connection. `head_received` says whether the answer's head had arrived; cpp-httplib does
  //    not say whether part of it had (servers write a head in one piece).
  HttpResult finish(const char* method, std::string_view path, httplib::Result result, std::string answer,
                    Clock::time_point started, bool head_received) const {
    HttpResult out;
    out.answer_head_received = head_received;
    if (result) {
      out.status = result->status;
      out.body = std::move(answer);
      out.headers.assign(result->headers.begin(), result->headers.end());
      out.answer_head_received = true;
      return out;
    }
    auto elapsed = Clock::now() - started;
    auto ms = [](std::chrono::milliseconds d) { return std::to_string(d.count()) + " ms"; };
    std::string why;
    switch (result.error()) {
      case httplib::Error::Connection:
        out.transport_error = TransportError::kConnect;
        out.request_written = false;
        why = "cannot connect (connection refused, host unreachable or unknown host)";
        break;
      case httplib::Error::ConnectionTimeout:
        out.transport_error = TransportError::kTimeout;
        out.request_written = false;
        why = "connect timed out after " + ms(options.connect_timeout);
        break;
      case httplib::Error::Read:
        // cpp-httplib reports a read timeout and a connection closed mid-answer alike; a poll
        // wait never ends early, so only a timeout takes the full read timeout.
        if (elapsed >= options.read_timeout) {
          out.transport_error = TransportError::kTimeout;
          why = "no answer within the read timeout of " + ms(options.read_timeout);
        } else {
          out.transport_error = TransportError::kConnection;
          why = head_received ? "connection closed before a complete answer"
                              : "connection closed or reset after the request was sent, before any answer";
        }
        break;
      case httplib::Error::Write:
        out.request_written = false;
        if (elapsed >= options.write_timeout) {
          out.transport_error = TransportError::kTimeout;
          why = "could not send the request within the write timeout of " + ms(options.write_timeout);
        } else {
          out.transport_error = TransportError::kConnection;
          why = "connection closed or reset while sending the request (not sent whole)";
        }
        break;
      default:
        out.transport_error = TransportError::kOther;
        why = "request failed: " + httplib::to_string(result.error());
        break;
    }
    out.error = std::string(method) + " " + url(path) + ": " + why;
    return out;
  }

  std::string url(std::string_view path) const { return parsed.url.origin() + target(path); }

  std::string base_url;
  BaseUrl parsed;
  HttpClientOptions options;
  std::uint64_t sockets_opened = 0;  // by `client`, ever
  httplib::Client client;
};

HttpClient::HttpClient(std::string_view base_url, HttpClientOptions options)
    : impl_(std::make_unique<Impl>(base_url, std::move(options))) {}

HttpClient::~HttpClient() = default;
HttpClient::HttpClient(HttpClient&&) noexcept = default;
HttpClient& HttpClient::operator=(HttpClient&&) noexcept = default;

HttpResult HttpClient::post_json(std::string_view path, std::string_view body) {
  return impl_->request("POST", path, body);
}

HttpResult HttpClient::get(std::string_view path) { return impl_->request("GET", path, std::nullopt); }

std::string HttpClient::url(std::string_view path) const { return impl_->url(path); }

const std::string& HttpClient::base_url() const noexcept { return impl_->base_url; }

const HttpClientOptions& HttpClient::options() const noexcept { return impl_->options; }

}  // namespace cronwheel::common::http
