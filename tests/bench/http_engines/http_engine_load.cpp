// Loads each of the HTTP engine servers (cronwheel_server, beast_server, mhd_server) in turn, in
// one run, on 127.0.0.1, each load bounded in time:
//  (a) keep-alive: 1 and then 16 connections, each sending POST /run (a ~300-byte trigger body)
//      back to back for --seconds after a 0.5 s warm-up: answers per second, p50/p99 latency;
//  (b) hostile, on a freshly started server: 500 idle connections (from 127.0.0.2 and .3, 250
//      each: under the per-address cap), 100 slowloris connections (from 127.0.0.4: a request
//      head that never ends, one more byte a second each) and 32 clients looping GET /slow
//      (from 127.0.0.5); meanwhile a client on 127.0.0.1 opens a connection for GET /healthz
//      every 100 ms for --hostile-seconds: p50/p99/max latency and how many failed (no 200
//      within 3 s). Halfway through, the server's open descriptors and threads; after the
//      window, its peak RSS (VmHWM) and how many slowloris connections it still holds 12 s
//      after they came;
//  (c) a full address: 256 idle connections from 127.0.0.6 (the per-address cap), then one
//      GET /healthz from 127.0.0.6: answered or not.
// Prints one JSON object per server on a line of its own, starting "RESULT ".
//
//   cd build/bin && ./http_engine_load --server baseline=./http_engine_cronwheel
//       --server beast=./http_engine_beast --server mhd=./http_engine_mhd [--seconds 5]
//       [--hostile-seconds 10]
//
// tests/bench/http_engines/compare.sh runs it three times with the build lock held and prints
// the medians (docs/benchmarks.md).
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using nlohmann::json;

// A server binary run as a child process; it prints its port and stops on SIGTERM.
class ServerProcess {
 public:
  // The server's standard output goes to a file (it may log there all along); its error output
  // is this program's.
  explicit ServerProcess(const std::string& binary) {
    char path[] = "/tmp/http_engine_load_XXXXXX";
    const int out = ::mkstemp(path);
    if (out < 0) throw std::runtime_error("mkstemp");
    ::unlink(path);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(out, STDOUT_FILENO);
      ::close(out);
      ::execl(binary.c_str(), binary.c_str(), "0", static_cast<char*>(nullptr));
      std::_Exit(127);
    }
    std::string text;
    const auto deadline = Clock::now() + 10s;
    while (port_ == 0 && Clock::now() < deadline) {
      std::this_thread::sleep_for(20ms);
      char buffer[4096];
      const ssize_t n = ::pread(out, buffer, sizeof(buffer), 0);
      text.assign(buffer, static_cast<std::size_t>(std::max<ssize_t>(n, 0)));
      constexpr std::string_view kLine = "\nlistening on 127.0.0.1:";
      if (auto at = ("\n" + text).find(kLine); at != std::string::npos && text.find('\n', at) != std::string::npos) {
        port_ = std::atoi(text.c_str() + at + kLine.size() - 1);
      }
    }
    ::close(out);
    if (port_ == 0) {
      stop();
      throw std::runtime_error(binary + " did not start: " + text);
    }
  }
  ~ServerProcess() { stop(); }

  int port() const { return port_; }
  pid_t pid() const { return pid_; }

  // A "Name:   1234 kB" (or plain number) line of /proc/PID/status; -1 when missing.
  long status(const std::string& name) const {
    std::ifstream in("/proc/" + std::to_string(pid_) + "/status");
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind(name + ":", 0) == 0) return std::atol(line.c_str() + name.size() + 1);
    }
    return -1;
  }
  int open_descriptors() const {
    int count = 0;
    if (DIR* dir = ::opendir(("/proc/" + std::to_string(pid_) + "/fd").c_str())) {
      while (dirent* entry = ::readdir(dir)) count += entry->d_name[0] != '.';
      ::closedir(dir);
    }
    return count;
  }

  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    for (int i = 0; i < 50; ++i) {
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = 0;
        return;
      }
      std::this_thread::sleep_for(100ms);
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = 0;
  }

 private:
  pid_t pid_ = 0;
  int port_ = 0;
};

void set_timeout(int fd, std::chrono::milliseconds timeout) {
  timeval tv{static_cast<time_t>(timeout.count() / 1000), static_cast<suseconds_t>(timeout.count() % 1000 * 1000)};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

// A blocking connection from `source` (a loopback address) with TCP_NODELAY and `timeout` on
// every send and receive; -1 when it could not connect.
int connect_from(const char* source, int port, std::chrono::milliseconds timeout = 5s) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in local{};
  local.sin_family = AF_INET;
  ::inet_pton(AF_INET, source, &local.sin_addr);
  sockaddr_in remote{};
  remote.sin_family = AF_INET;
  remote.sin_port = htons(static_cast<std::uint16_t>(port));
  remote.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int on = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
  set_timeout(fd, timeout);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof(local)) != 0 ||
      ::connect(fd, reinterpret_cast<sockaddr*>(&remote), sizeof(remote)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool send_all(int fd, const std::string& data) {
  std::size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<std::size_t>(n);
  }
  return true;
}

// Reads one answer (head and Content-Length body); its status, or 0 when the connection closed
// or timed out first. `closing` (when given) is set when the answer says "Connection: close".
int read_answer(int fd, bool* closing = nullptr) {
  std::string data;
  char buffer[4096];
  std::size_t head_end = std::string::npos;
  std::size_t length = 0;
  for (;;) {
    if (head_end == std::string::npos) {
      head_end = data.find("\r\n\r\n");
      if (head_end != std::string::npos) {
        std::string head = data.substr(0, head_end);
        std::transform(head.begin(), head.end(), head.begin(), [](unsigned char c) { return std::tolower(c); });
        if (auto at = head.find("\r\ncontent-length:"); at != std::string::npos) {
          length = std::strtoul(head.c_str() + at + 17, nullptr, 10);
        }
        if (closing != nullptr) *closing = head.find("\r\nconnection: close") != std::string::npos;
      }
    }
    if (head_end != std::string::npos && data.size() >= head_end + 4 + length) break;
    const ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
    if (n <= 0) return 0;
    data.append(buffer, static_cast<std::size_t>(n));
  }
  return data.rfind("HTTP/1.", 0) == 0 && data.size() > 12 ? std::atoi(data.c_str() + 9) : 0;
}

std::string run_request() {
  // The size and shape of an XXL-JOB 2.4 admin's trigger.
  const std::string body =
      R"({"jobId":42,"executorHandler":"demoJobHandler","executorParams":"a=1&b=2","executorBlockStrategy":)"
      R"("SERIAL_EXECUTION","executorTimeout":0,"logId":1234567,"logDateTime":1767225600000,"glueType":"BEAN",)"
      R"("glueSource":"","glueUpdatetime":1767225600000,"broadcastIndex":0,"broadcastTotal":1})";
  return "POST /run HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const auto at = static_cast<std::size_t>(p * static_cast<double>(values.size() - 1) + 0.5);
  return values[std::min(at, values.size() - 1)];
}

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

json keep_alive(int port, int connections, std::chrono::seconds window) {
  const std::string request = run_request();
  const auto start = Clock::now() + 500ms;  // warm-up before
  const auto end = start + window;
  std::vector<std::vector<double>> latencies(static_cast<std::size_t>(connections));
  std::atomic<long> failures{0};
  std::vector<std::thread> clients;
  for (int i = 0; i < connections; ++i) {
    clients.emplace_back([&, i] {
      int fd = -1;
      auto& mine = latencies[static_cast<std::size_t>(i)];
      mine.reserve(200'000);
      while (Clock::now() < end) {
        if (fd < 0 && (fd = connect_from("127.0.0.1", port)) < 0) {
          ++failures;
          std::this_thread::sleep_for(10ms);
          continue;
        }
        const auto sent = Clock::now();
        bool closing = false;
        if (!send_all(fd, request) || read_answer(fd, &closing) != 200) {
          ++failures;
          closing = true;
        } else if (sent >= start) {
          mine.push_back(std::chrono::duration<double, std::micro>(Clock::now() - sent).count());
        }
        if (closing) {  // failed, or the server's last answer on it (keep_alive_max_count)
          ::close(fd);
          fd = -1;
        }
      }
      if (fd >= 0) ::close(fd);
    });
  }
  for (auto& c : clients) c.join();
  std::vector<double> all;
  for (auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  return {{"per_s", static_cast<double>(all.size()) / static_cast<double>(window.count())},
          {"p50_us", percentile(all, 0.50)}, {"p99_us", percentile(all, 0.99)}, {"failures", failures.load()}};
}

// Open, or closed (or answered and closed) by the server.
bool still_open(int fd) {
  char byte;
  const ssize_t n = ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

std::vector<int> open_idle(const char* source, int port, int count) {
  std::vector<int> fds;
  for (int i = 0; i < count; ++i) {
    const int fd = connect_from(source, port);
    if (fd >= 0) fds.push_back(fd);
  }
  return fds;
}

void close_all(std::vector<int>& fds) {
  for (int fd : fds) ::close(fd);
  fds.clear();
}

int healthz(const char* source, int port) {
  const int fd = connect_from(source, port, 3s);
  if (fd < 0) return 0;
  const int status =
      send_all(fd, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n") ? read_answer(fd) : 0;
  ::close(fd);
  return status;
}

json hostile(ServerProcess& server, std::chrono::seconds window) {
  const int port = server.port();
  json out;
  out["rss_start_kb"] = server.status("VmRSS");
  auto idle = open_idle("127.0.0.2", port, 250);
  auto more_idle = open_idle("127.0.0.3", port, 250);
  idle.insert(idle.end(), more_idle.begin(), more_idle.end());
  out["idle_connected"] = idle.size();

  std::vector<int> slowloris;
  const auto slowloris_opened = Clock::now();
  for (int i = 0; i < 100; ++i) {
    const int fd = connect_from("127.0.0.4", port);
    if (fd < 0) continue;
    send_all(fd, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
    slowloris.push_back(fd);
  }
  std::atomic<bool> trickling{true};
  std::thread trickler([&] {
    auto next = Clock::now();
    while (trickling) {
      next += 1s;
      while (trickling && Clock::now() < next) std::this_thread::sleep_for(20ms);
      for (int fd : slowloris) ::send(fd, "a", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    }
  });

  std::atomic<bool> slow_running{true};
  std::atomic<long> slow_ok{0}, slow_busy{0}, slow_failed{0};
  std::vector<std::atomic<int>> slow_fds(32);
  std::vector<std::thread> slow_clients;
  for (auto& slot : slow_fds) {
    slot = -1;
    slow_clients.emplace_back([&, &slot = slot] {
      while (slow_running) {
        int fd = slot.load();
        if (fd < 0) {
          fd = connect_from("127.0.0.5", port, 30s);
          if (fd < 0) {
            ++slow_failed;
            std::this_thread::sleep_for(100ms);
            continue;
          }
          slot = fd;
        }
        const int status = send_all(fd, "GET /slow HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n") ? read_answer(fd) : 0;
        if (status == 200) {
          ++slow_ok;
        } else if (status == 503) {
          ++slow_busy;
        } else {
          if (slow_running) ++slow_failed;
          slot = -1;
          ::close(fd);
        }
      }
    });
  }

  // The measured client: one fresh connection every 100 ms.
  std::this_thread::sleep_for(200ms);
  std::vector<double> latencies;
  long failed = 0;
  const auto window_start = Clock::now();
  const auto window_end = window_start + window;
  bool sampled = false;
  for (auto next = window_start; next < window_end; next += 100ms) {
    std::this_thread::sleep_until(next);
    if (!sampled && next >= window_start + window / 2) {  // everything connected, nothing timed out yet
      sampled = true;
      out["open_descriptors"] = server.open_descriptors();
      out["threads"] = server.status("Threads");
    }
    const auto started = Clock::now();
    if (healthz("127.0.0.1", port) == 200) {
      latencies.push_back(ms_since(started));
    } else {
      ++failed;
    }
  }
  out["healthz_probes"] = latencies.size() + static_cast<std::size_t>(failed);
  out["healthz_failed"] = failed;
  out["healthz_p50_ms"] = percentile(latencies, 0.50);
  out["healthz_p99_ms"] = percentile(latencies, 0.99);
  out["healthz_max_ms"] = latencies.empty() ? 0.0 : *std::max_element(latencies.begin(), latencies.end());

  std::this_thread::sleep_until(slowloris_opened + 12s);
  out["slowloris_open_after_12s"] = std::count_if(slowloris.begin(), slowloris.end(), still_open);
  out["hwm_kb"] = server.status("VmHWM");
  trickling = false;
  trickler.join();
  slow_running = false;
  for (auto& slot : slow_fds) {
    if (const int fd = slot.load(); fd >= 0) ::shutdown(fd, SHUT_RDWR);  // ends a wait for /slow
  }
  for (auto& c : slow_clients) c.join();
  for (auto& slot : slow_fds) {
    if (const int fd = slot.load(); fd >= 0) ::close(fd);
  }
  out["slow_ok"] = slow_ok.load();
  out["slow_busy"] = slow_busy.load();
  out["slow_failed"] = slow_failed.load();
  close_all(idle);
  close_all(slowloris);

  // A full address: does a newcomer from it still get in?
  std::this_thread::sleep_for(500ms);
  auto full = open_idle("127.0.0.6", port, 256);
  std::this_thread::sleep_for(200ms);
  out["full_address_newcomer_status"] = healthz("127.0.0.6", port);
  close_all(full);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::pair<std::string, std::string>> servers;
  int seconds = 5;
  int hostile_seconds = 10;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--server" && value.find('=') != std::string::npos) {
      servers.emplace_back(value.substr(0, value.find('=')), value.substr(value.find('=') + 1));
    } else if (flag == "--seconds") {
      seconds = std::atoi(value.c_str());
    } else if (flag == "--hostile-seconds") {
      hostile_seconds = std::atoi(value.c_str());
    } else {
      std::fprintf(stderr, "usage: %s --server NAME=BINARY... [--seconds 5] [--hostile-seconds 10]\n", argv[0]);
      return 2;
    }
  }
  if (servers.empty()) {
    std::fprintf(stderr, "usage: %s --server NAME=BINARY... [--seconds 5] [--hostile-seconds 10]\n", argv[0]);
    return 2;
  }
  ::signal(SIGPIPE, SIG_IGN);
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &limit);
  }

  for (const auto& [name, binary] : servers) {
    json result = {{"server", name}};
    {
      ServerProcess server(binary);
      result["keep_alive_1"] = keep_alive(server.port(), 1, std::chrono::seconds(seconds));
      result["keep_alive_16"] = keep_alive(server.port(), 16, std::chrono::seconds(seconds));
    }
    {
      ServerProcess server(binary);
      result["hostile"] = hostile(server, std::chrono::seconds(hostile_seconds));
    }
    std::printf("RESULT %s\n", result.dump().c_str());
    std::fflush(stdout);
  }
  return 0;
}
