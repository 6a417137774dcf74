#include "common/http/connection_stream.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

namespace cronwheel::common::http {
namespace {

int poll_timeout(std::chrono::milliseconds timeout) {
  return static_cast<int>(std::clamp<std::chrono::milliseconds::rep>(timeout.count(), 0, 1 << 30));
}

// poll() that retries on EINTR. Returns poll's result.
int poll_retrying(pollfd* fds, nfds_t count, int timeout_ms) {
  for (;;) {
    int n = ::poll(fds, count, timeout_ms);
    if (n >= 0 || errno != EINTR) return n;
  }
}

void address_of(const sockaddr_storage& address, std::string& ip, int& port) {
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

}  // namespace

ConnectionStream::ConnectionStream(int sock, int stop_fd, Limits limits)
    : sock_(sock), stop_fd_(stop_fd), limits_(limits) {}

bool ConnectionStream::wait_readable() const {
  pollfd fds[2] = {{sock_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
  int n = poll_retrying(fds, 2, poll_timeout(limits_.read_timeout));
  if (n <= 0 || fds[1].revents != 0) return false;
  return fds[0].revents != 0;
}

bool ConnectionStream::is_readable() const { return has_buffered_data() || wait_readable(); }

bool ConnectionStream::is_writable() const {
  pollfd fd = {sock_, POLLOUT, 0};
  return poll_retrying(&fd, 1, poll_timeout(limits_.write_timeout)) > 0 &&
         (fd.revents & POLLOUT) != 0;
}

std::size_t ConnectionStream::scan_header_bytes(const char* data, std::size_t n) {
  constexpr std::size_t kMaxHeaderText = 64 * 1024;
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(data[i]);
    if (header_text_.size() < kMaxHeaderText) header_text_ += static_cast<char>(std::tolower(c));
    last_bytes_ = (last_bytes_ << 8) | c;
    const bool blank_line = last_bytes_ == 0x0d0a0d0a || (last_bytes_ & 0xffff) == 0x0a0a;
    if (blank_line) {
      in_header_ = false;
      body_absent_ = header_text_.find("\ncontent-length:") == std::string::npos &&
                     header_text_.find("\ntransfer-encoding:") == std::string::npos;
      return i + 1;
    }
  }
  return n;
}

ssize_t ConnectionStream::read(char* ptr, size_t size) {
  if (size == 0) return 0;
  if (body_absent_) return 0;  // the end of this request's (empty) body
  if (!has_buffered_data()) {
    if (!wait_readable()) return -1;
    ssize_t n;
    do {
      n = ::recv(sock_, buffer_.data(), buffer_.size(), 0);
    } while (n < 0 && errno == EINTR);
    if (n <= 0) return n;  // 0: the peer closed; -1: error
    begin_ = 0;
    end_ = static_cast<std::size_t>(n);
  }
  std::size_t n = std::min(size, end_ - begin_);
  if (in_header_) n = scan_header_bytes(buffer_.data() + begin_, n);
  if (request_bytes_ + n > limits_.request_byte_budget) {
    budget_exceeded_ = true;
    return -1;
  }
  std::memcpy(ptr, buffer_.data() + begin_, n);
  begin_ += n;
  request_bytes_ += n;
  return static_cast<ssize_t>(n);
}

ssize_t ConnectionStream::write(const char* ptr, size_t size) {
  // Non-blocking sends with a bounded wait for space before each: a client that stops reading
  // costs at most write_timeout per call, and cpp-httplib loops over partial writes.
  for (;;) {
    if (!is_writable()) return -1;
    ssize_t n = ::send(sock_, ptr, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n >= 0) return n;
    if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK) return -1;
  }
}

void ConnectionStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  if (::getpeername(sock_, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    address_of(address, ip, port);
  }
}

void ConnectionStream::get_local_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  if (::getsockname(sock_, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    address_of(address, ip, port);
  }
}

void ConnectionStream::begin_request() noexcept {
  request_bytes_ = 0;
  budget_exceeded_ = false;
  in_header_ = true;
  body_absent_ = false;
  header_text_.clear();
  last_bytes_ = 0;
}

}  // namespace cronwheel::common::http
