#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include <httplib.h>

namespace cronwheel::common::http {

// One accepted server connection as cpp-httplib's Stream: buffered reads, and writes, on a
// blocking socket, each wait bounded by its timeout. HttpServer drives its own keep-alive loop
// over it (see http_server.cpp), which is what lets stop() end idle connections at once.
//
// Two guards beyond cpp-httplib's own SocketStream:
//  - every read also watches `stop_fd` (an eventfd that becomes readable when the server stops):
//    a request still being received is abandoned instead of holding stop() for a read timeout;
//  - a request whose header block has neither Content-Length nor Transfer-Encoding has no body
//    (RFC 9112 section 6.3): reads after its header block report the end of input, so
//    cpp-httplib, which would otherwise wait for the connection to close before routing a
//    body-less POST, answers it at once and the connection stays usable;
//  - the bytes handed out per request are capped: a body sent without Content-Length (chunked)
//    cannot grow past the limit; the read that would cross it fails and budget_exceeded() says so.
//
// Not thread-safe: used by the one worker that owns the connection. Does not own the socket.
class ConnectionStream final : public httplib::Stream {
 public:
  struct Limits {
    std::chrono::milliseconds read_timeout;   // per wait for incoming bytes
    std::chrono::milliseconds write_timeout;  // per wait for send buffer space
    std::size_t request_byte_budget;          // request line + headers + body, per request
  };

  ConnectionStream(int sock, int stop_fd, Limits limits);

  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return sock_; }

  // Starts counting a new request against the byte budget.
  void begin_request() noexcept;
  bool budget_exceeded() const noexcept { return budget_exceeded_; }
  // Bytes already received but not yet consumed (a pipelined next request).
  bool has_buffered_data() const noexcept { return begin_ < end_; }

 private:
  // Waits until the socket has something to read (data, EOF or error). False on timeout or stop.
  bool wait_readable() const;

  // Watches the header block go by (cpp-httplib reads it a byte at a time) and, at its end,
  // decides whether a body follows. Returns how many of the `n` bytes at `data` belong to the
  // header block (all of them until its end is seen).
  std::size_t scan_header_bytes(const char* data, std::size_t n);

  int sock_;
  int stop_fd_;
  Limits limits_;
  bool in_header_ = true;      // still handing out the request line and headers
  bool body_absent_ = false;   // the header block ended without Content-Length/Transfer-Encoding
  std::string header_text_;    // the header block so far, lower-cased, bounded
  std::uint32_t last_bytes_ = 0;  // the last four bytes seen, to spot the blank line
  std::array<char, 16 * 1024> buffer_{};
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  std::size_t request_bytes_ = 0;
  bool budget_exceeded_ = false;
};

}  // namespace cronwheel::common::http
