#include "cli/http_transport.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <variant>

#include <httplib.h>

#include "common/http/url.h"

namespace cronwheel::cli {

namespace {

using Clock = std::chrono::steady_clock;

std::string seconds(std::chrono::milliseconds d) {
  const auto ms = d.count();
  return ms % 1000 == 0 ? std::to_string(ms / 1000) + " s" : std::to_string(ms) + " ms";
}

std::string lower_first(std::string text) {
  if (!text.empty()) text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
  return text;
}

// Why a TCP connection to host:port cannot be made, as the system says it: cpp-httplib reports
// only that the connect failed. Tries each address once, within `timeout` in all.
std::string why_cannot_connect(std::string host, int port, std::chrono::milliseconds timeout) {
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* addresses = nullptr;
  const int resolved = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &addresses);
  if (resolved != 0) {
    if (resolved == EAI_NONAME || resolved == EAI_NODATA) return "unknown host " + host;
    return "cannot resolve " + host + ": " + lower_first(::gai_strerror(resolved));
  }
  const auto deadline = Clock::now() + timeout;
  std::string why;
  for (addrinfo* a = addresses; a != nullptr && why.empty(); a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    int error = 0;
    if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      error = errno;
      if (error == EINPROGRESS) {
        pollfd p{fd, POLLOUT, 0};
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
        const int ready = ::poll(&p, 1, static_cast<int>(left > 0 ? left : 0));
        if (ready == 0) {
          error = ETIMEDOUT;
        } else {
          socklen_t length = sizeof(error);
          if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0) error = errno;
        }
      }
    }
    ::close(fd);
    if (error == ETIMEDOUT) why = "no connection within " + seconds(timeout);
    else if (error != 0) why = lower_first(std::strerror(error));
  }
  ::freeaddrinfo(addresses);
  // Connected this time: the server started or stopped refusing in between.
  return why.empty() ? "cannot connect" : why;
}

CliError unreachable(const std::string& what) { return CliError(kExitFailed, what, true); }

}  // namespace

struct HttpTransport::Impl {
  Impl(std::string_view base_url, HttpTransportOptions opts) : options(std::move(opts)) {
    auto parsed = common::http::parse_base_url(base_url);
    if (auto* why = std::get_if<std::string>(&parsed)) {
      throw CliError(kExitUsage, "'" + one_line(base_url, 200) + "' is not an http(s) URL: " + *why, true);
    }
    base = std::get<common::http::BaseUrl>(std::move(parsed));
    shown = std::string(base_url);
    while (shown.size() > 1 && shown.back() == '/') shown.pop_back();
    client = std::make_unique<httplib::Client>(base.url.origin());
    client->set_connection_timeout(options.connect_timeout);
    client->set_read_timeout(options.read_timeout);
    client->set_write_timeout(options.read_timeout);
    client->set_keep_alive(true);
    client->set_tcp_nodelay(true);
    client->set_follow_location(false);
  }

  ApiAnswer send(const ApiRequest& request) {
    httplib::Request req;
    req.method = request.method;
    req.path = base.target(request.target);
    req.headers.emplace("Accept", request.accept);
    if (!options.user_agent.empty()) req.headers.emplace("User-Agent", options.user_agent);
    if (!options.token.empty()) req.headers.emplace("Authorization", "Bearer " + options.token);
    if (request.body) {
      req.body = *request.body;
      req.headers.emplace("Content-Type", request.content_type);
    }
    std::string body;
    bool too_large = false;
    req.content_receiver = [&](const char* data, std::size_t length, std::uint64_t, std::uint64_t) {
      if (length > options.max_answer_bytes - body.size()) {
        too_large = true;
        return false;
      }
      body.append(data, length);
      return true;
    };
    const auto started = Clock::now();
    auto result = client->send(req);
    if (too_large) {
      client->stop();  // the rest of the answer is still on the connection
      const std::size_t mib = 1024 * 1024;
      throw unreachable("the answer from " + shown + " is larger than " +
                        (options.max_answer_bytes % mib == 0 ? std::to_string(options.max_answer_bytes / mib) + " MiB"
                                                             : std::to_string(options.max_answer_bytes) + " bytes"));
    }
    if (result) {
      ApiAnswer answer;
      answer.status = result->status;
      answer.body = std::move(body);
      answer.content_type = result->get_header_value("Content-Type");
      return answer;
    }
    const auto elapsed = Clock::now() - started;
    switch (result.error()) {
      case httplib::Error::Connection:
        throw unreachable("cannot reach " + shown + ": " +
                          why_cannot_connect(base.url.host, base.url.effective_port(), options.connect_timeout));
      case httplib::Error::ConnectionTimeout:
        throw unreachable("cannot reach " + shown + ": no connection within " + seconds(options.connect_timeout));
      case httplib::Error::Read:
        if (elapsed >= options.read_timeout) {
          throw unreachable(shown + " did not answer within " + seconds(options.read_timeout));
        }
        throw unreachable("the connection to " + shown + " broke before a complete answer");
      case httplib::Error::Write:
        throw unreachable("the connection to " + shown + " broke while the request was sent");
      case httplib::Error::SSLConnection:
        throw unreachable("cannot reach " + shown + ": the TLS handshake failed");
      case httplib::Error::SSLLoadingCerts:
        throw unreachable("cannot reach " + shown + ": cannot load the system's CA certificates");
      case httplib::Error::SSLServerVerification:
        throw unreachable("cannot reach " + shown + ": its TLS certificate is not trusted");
      case httplib::Error::Compression:
        throw unreachable("the answer from " + shown + " cannot be decompressed");
      default:
        throw unreachable("cannot reach " + shown + ": the request failed (" + httplib::to_string(result.error()) + ")");
    }
  }

  HttpTransportOptions options;
  common::http::BaseUrl base;
  std::string shown;  // the base URL as given, for messages
  std::unique_ptr<httplib::Client> client;
};

HttpTransport::HttpTransport(std::string_view base_url, HttpTransportOptions options)
    : impl_(std::make_unique<Impl>(base_url, std::move(options))) {}

HttpTransport::~HttpTransport() = default;

ApiAnswer HttpTransport::send(const ApiRequest& request) { return impl_->send(request); }

}  // namespace cronwheel::cli
