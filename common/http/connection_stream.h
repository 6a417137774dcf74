#pragma once

#include <cstddef>
#include <string>

#include <httplib.h>

#include "common/http/connection_reactor.h"

namespace cronwheel::common::http {

// A request that has arrived whole, as cpp-httplib's Stream, for the worker serving it: reads
// come from the connection's buffered request (head and body, never past them, never from the
// socket) and writes go to the connection's output, which the reactor sends once the worker is
// done. Nothing here waits for the client.
//
// A "100 Continue" interim answer cpp-httplib writes is dropped: the reactor has already sent
// one when the client was waiting for it.
//
// Not thread-safe: used by the one worker serving the connection.
class ConnectionStream final : public httplib::Stream {
 public:
  explicit ConnectionStream(Connection& connection);

  bool is_readable() const override;
  bool is_writable() const override { return true; }
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return connection_.fd; }

  // The request body: the `body_bytes` after the head (cpp-httplib has read the head by then).
  // Moved out of the connection's input when nothing follows it there, which leaves the input
  // empty; copied otherwise. Call once, after the head has been read.
  std::string take_body();

 private:
  Connection& connection_;
  std::size_t position_ = 0;
  const std::size_t end_;  // head + body
  bool wrote_ = false;
};

}  // namespace cronwheel::common::http
