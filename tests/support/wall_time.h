#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <thread>

// The wall clock and loopback ports, for programs and tests that drive real processes (load
// benchmarks, the chaos soak, e2e tests): fire times are epoch milliseconds of the system clock.
namespace cronwheel::testing {

inline std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Sleeps until the system clock reads `at` (epoch ms), in steps of at most 200 ms, so a clock
// that is stepped meanwhile does not stretch the wait.
inline void sleep_until_ms(std::int64_t at) {
  while (true) {
    const std::int64_t left = at - now_ms();
    if (left <= 0) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min<std::int64_t>(left, 200)));
  }
}

// A port free on 127.0.0.1 now (the OS's pick), for a process that must come back at the same
// address after a restart; 0 when none could be had.
inline int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = 0;
  if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  if (fd >= 0) ::close(fd);
  return port;
}

}  // namespace cronwheel::testing
