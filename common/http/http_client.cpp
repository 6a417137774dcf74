#include "common/http/http_client.h"

#include <algorithm>
#include <cctype>
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

struct BaseUrl {
  std::string origin;  // "http://host:port", what cpp-httplib's Client takes
  std::string prefix;  // "" or "/xxl-job-admin": no trailing slash
};

[[noreturn]] void invalid_url(std::string_view url, std::string_view why) {
  throw std::invalid_argument("invalid base URL '" + std::string(url) + "': " + std::string(why));
}

BaseUrl parse_base_url(std::string_view url) {
  auto parsed = parse_http_url(url);
  if (auto* why = std::get_if<std::string>(&parsed)) invalid_url(url, *why);
  const auto& base = std::get<HttpUrl>(parsed);
  if (url.find_first_of("?#") != std::string_view::npos) invalid_url(url, "query and fragment are not supported");
  std::string_view path = base.path;
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  return {base.origin(), std::string(path)};
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
    case TransportError::kOther:
      return "other";
  }
  return "other";
}

struct HttpClient::Impl {
  Impl(std::string_view base, HttpClientOptions opts)
      : base_url(base), parsed(parse_base_url(base)), options(std::move(opts)),
        client(parsed.origin) {
    client.set_connection_timeout(options.connect_timeout);
    client.set_read_timeout(options.read_timeout);
    client.set_write_timeout(options.write_timeout);
    client.set_keep_alive(options.keep_alive);
    client.set_tcp_nodelay(true);
    client.set_follow_location(false);
    if (!options.access_token.empty()) {
      // A CR or LF would end the header and start another of the token's choosing.
      if (options.access_token.find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos) {
        throw std::invalid_argument("the access token must not contain CR, LF or NUL characters");
      }
      client.set_default_headers(
          {{std::string(protocol::kAccessTokenHeader), options.access_token}});
    }
  }

  std::string target(std::string_view path) const {
    path.remove_prefix(std::min(path.find_first_not_of('/'), path.size()));
    return parsed.prefix + "/" + std::string(path);
  }

  HttpResult finish(const char* method, std::string_view path, httplib::Result result,
                    Clock::time_point started) const {
    HttpResult out;
    if (result) {
      out.status = result->status;
      out.body = std::move(result->body);
      return out;
    }
    auto elapsed = Clock::now() - started;
    auto ms = [](std::chrono::milliseconds d) { return std::to_string(d.count()) + " ms"; };
    std::string why;
    switch (result.error()) {
      case httplib::Error::Connection:
        out.transport_error = TransportError::kConnect;
        why = "cannot connect (connection refused, host unreachable or unknown host)";
        break;
      case httplib::Error::ConnectionTimeout:
        out.transport_error = TransportError::kTimeout;
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
          why = "connection closed before a complete answer";
        }
        break;
      case httplib::Error::Write:
        out.transport_error = TransportError::kConnection;
        why = "failed to send the request (connection closed or send timed out)";
        break;
      default:
        out.transport_error = TransportError::kOther;
        why = "request failed: " + httplib::to_string(result.error());
        break;
    }
    out.error = std::string(method) + " " + url(path) + ": " + why;
    return out;
  }

  std::string url(std::string_view path) const { return parsed.origin + target(path); }

  std::string base_url;
  BaseUrl parsed;
  HttpClientOptions options;
  httplib::Client client;
};

HttpClient::HttpClient(std::string_view base_url, HttpClientOptions options)
    : impl_(std::make_unique<Impl>(base_url, std::move(options))) {}

HttpClient::~HttpClient() = default;
HttpClient::HttpClient(HttpClient&&) noexcept = default;
HttpClient& HttpClient::operator=(HttpClient&&) noexcept = default;

HttpResult HttpClient::post_json(std::string_view path, std::string_view body) {
  auto started = Clock::now();
  auto result = impl_->client.Post(impl_->target(path), body.data(), body.size(),
                                   std::string(protocol::kJsonContentType));
  return impl_->finish("POST", path, std::move(result), started);
}

HttpResult HttpClient::get(std::string_view path) {
  auto started = Clock::now();
  auto result = impl_->client.Get(impl_->target(path));
  return impl_->finish("GET", path, std::move(result), started);
}

std::string HttpClient::url(std::string_view path) const { return impl_->url(path); }

const std::string& HttpClient::base_url() const noexcept { return impl_->base_url; }

const HttpClientOptions& HttpClient::options() const noexcept { return impl_->options; }

}  // namespace cronwheel::common::http
