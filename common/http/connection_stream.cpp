#include "common/http/connection_stream.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <string_view>

namespace cronwheel::common::http {

ConnectionStream::ConnectionStream(Connection& connection)
    : connection_(connection), end_(std::min(connection.input.size(), connection.head_bytes + connection.body_bytes)) {}

bool ConnectionStream::is_readable() const { return position_ < end_; }

ssize_t ConnectionStream::read(char* ptr, size_t size) {
  const std::size_t n = std::min(size, end_ - position_);
  std::memcpy(ptr, connection_.input.data() + position_, n);
  position_ += n;
  return static_cast<ssize_t>(n);
}

ssize_t ConnectionStream::write(const char* ptr, size_t size) {
  static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
  if (!wrote_ && std::string_view(ptr, size) == kContinue) return static_cast<ssize_t>(size);
  wrote_ = true;
  connection_.output.append(ptr, size);
  return static_cast<ssize_t>(size);
}

void ConnectionStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  ip = connection_.peer_ip;
  port = connection_.peer_port;
}

void ConnectionStream::get_local_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  ip.clear();
  port = 0;
  if (::getsockname(connection_.fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return;
  char text[INET6_ADDRSTRLEN] = {};
  if (address.ss_family == AF_INET) {
    const auto& v4 = reinterpret_cast<const sockaddr_in&>(address);
    ::inet_ntop(AF_INET, &v4.sin_addr, text, sizeof(text));
    port = ntohs(v4.sin_port);
  } else if (address.ss_family == AF_INET6) {
    const auto& v6 = reinterpret_cast<const sockaddr_in6&>(address);
    ::inet_ntop(AF_INET6, &v6.sin6_addr, text, sizeof(text));
    port = ntohs(v6.sin6_port);
  }
  ip = text;
}

std::string ConnectionStream::take_body() {
  position_ = end_;
  auto& input = connection_.input;
  const std::size_t start = std::min(connection_.head_bytes, end_);
  if (input.size() == end_ && start == connection_.head_bytes) {
    // Nothing pipelined after this request (the usual case): hand the buffer over instead of
    // copying a body of up to several megabytes. The reactor finds the input empty.
    input.erase(0, start);
    std::string body = std::move(input);
    input.clear();
    return body;
  }
  return input.substr(start, end_ - start);
}

}  // namespace cronwheel::common::http
