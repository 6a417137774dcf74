#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

namespace cronwheel::testing {

// A raw loopback TCP connection, for requests cpp-httplib's client cannot make (partial heads,
// pipelining, slow clients).
class RawConnection {
 public:
  // `source_ip`: connect from this loopback address (127.0.0.2, ...: Linux answers all of
  // 127/8), so one test can be several clients to per-address limits; empty: the OS's choice.
  explicit RawConnection(int port, const std::string& source_ip = {}) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (!source_ip.empty()) {
      sockaddr_in source{};
      source.sin_family = AF_INET;
      if (::inet_pton(AF_INET, source_ip.c_str(), &source.sin_addr) != 1 ||
          ::bind(fd_, reinterpret_cast<sockaddr*>(&source), sizeof(source)) != 0) {
        return;  // not connected
      }
    }
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  }
  ~RawConnection() { ::close(fd_); }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool connected() const { return connected_; }
  void send(const std::string& data) {
    ASSERT_EQ(::send(fd_, data.data(), data.size(), MSG_NOSIGNAL), static_cast<ssize_t>(data.size()));
  }
  // Sends without asserting: false when the server has closed the connection.
  bool try_send(const std::string& data) {
    return ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(data.size());
  }
  // Everything until the peer closes, or `timeout` passes.
  std::string read_all(std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    std::string out;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      if (!wait_readable(deadline)) return out;
      char buffer[4096];
      ssize_t n = ::recv(fd_, buffer, sizeof(buffer), 0);
      if (n <= 0) return out;
      out.append(buffer, static_cast<std::size_t>(n));
    }
  }
  // The status of the answer to one request sent whole, read until the peer closes (send
  // "Connection: close"); 0 when none came within `timeout`.
  int status_of(const std::string& request, std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
    if (!connected_ || !try_send(request)) return 0;
    const std::string answer = read_all(timeout);
    if (answer.rfind("HTTP/1.1 ", 0) != 0 || answer.size() < 12) return 0;
    return std::atoi(answer.c_str() + 9);
  }
  // Reads until `text` has arrived (true), the peer closes or `timeout` passes (false).
  bool read_until(const std::string& text, std::string& out,
                  std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (out.find(text) == std::string::npos) {
      if (!wait_readable(deadline)) return false;
      char buffer[4096];
      ssize_t n = ::recv(fd_, buffer, sizeof(buffer), 0);
      if (n <= 0) return false;
      out.append(buffer, static_cast<std::size_t>(n));
    }
    return true;
  }
  // True once the server has closed the connection (within `timeout`).
  bool closed_by_peer(std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      if (!wait_readable(deadline)) return false;
      char buffer[4096];
      ssize_t n = ::recv(fd_, buffer, sizeof(buffer), 0);
      if (n <= 0) return true;
    }
  }

 private:
  bool wait_readable(std::chrono::steady_clock::time_point deadline) const {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd fd{fd_, POLLIN, 0};
    return ::poll(&fd, 1, static_cast<int>(left.count())) > 0;
  }

  int fd_ = -1;
  bool connected_ = false;
};

}  // namespace cronwheel::testing
