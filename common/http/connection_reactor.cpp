#include "common/http/connection_reactor.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <system_error>
#include <utility>

#include <spdlog/spdlog.h>

namespace cronwheel::common::http {
namespace {

using namespace std::chrono_literals;

constexpr std::size_t kReadChunk = 64 * 1024;
// Bytes one connection may receive per event before the others get their turn.
constexpr std::size_t kMaxBytesPerEvent = 256 * 1024;
constexpr auto kSweepInterval = 100ms;
// After a refusal, what the client still sends is read and dropped for this long (or this
// much) before closing: closing a socket with unread input sends a reset, which can destroy
// the answer before the client reads it.
constexpr auto kLingerTime = 2s;
constexpr std::size_t kLingerMaxBytes = 16 * 1024 * 1024;
// Out of file descriptors with nothing to close: stop accepting for this long.
constexpr auto kAcceptPause = 100ms;
// Buffers of idle connections above this size are given back.
constexpr std::size_t kKeepBufferBytes = 64 * 1024;

// epoll_event.data.ptr of the two descriptors that are not connections.
char listen_tag;
char wake_tag;

void set_thread_name(const std::string& name) {
  std::string truncated = name.substr(0, 15);
  pthread_setname_np(pthread_self(), truncated.c_str());
}

std::string address_text(const sockaddr_storage& address, int& port) {
  char text[INET6_ADDRSTRLEN] = {};
  port = 0;
  if (address.ss_family == AF_INET) {
    const auto& v4 = reinterpret_cast<const sockaddr_in&>(address);
    ::inet_ntop(AF_INET, &v4.sin_addr, text, sizeof(text));
    port = ntohs(v4.sin_port);
  } else if (address.ss_family == AF_INET6) {
    const auto& v6 = reinterpret_cast<const sockaddr_in6&>(address);
    ::inet_ntop(AF_INET6, &v6.sin6_addr, text, sizeof(text));
    port = ntohs(v6.sin6_port);
  }
  return text;
}

void release_if_large(std::string& buffer) {
  if (buffer.empty() && buffer.capacity() > kKeepBufferBytes) std::string().swap(buffer);
}

}  // namespace

int open_listener(const std::string& host, int port, int& bound_port) {
  const std::string where = "cannot listen on " + host + ":" + std::to_string(port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  int rc = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &found);
  if (rc != 0) {
    throw std::system_error(std::make_error_code(std::errc::address_not_available),
                            where + ": " + ::gai_strerror(rc));
  }
  int error = EADDRNOTAVAIL;
  for (addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      error = errno;
      continue;
    }
    // SO_REUSEADDR lets a restart bind while old connections sit in TIME_WAIT. Not
    // SO_REUSEPORT: with it a second server would bind a port in use and share its connections.
    int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && ::listen(fd, SOMAXCONN) == 0) {
      sockaddr_storage bound{};
      socklen_t length = sizeof(bound);
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length);
      address_text(bound, bound_port);
      ::freeaddrinfo(found);
      return fd;
    }
    error = errno;
    ::close(fd);
  }
  ::freeaddrinfo(found);
  throw std::system_error(error, std::generic_category(), where);
}

ConnectionReactor::ConnectionReactor(Options options, int listen_fd, Admit admit, Serve serve,
                                     RenderRefusal render)
    : options_(std::move(options)),
      listen_fd_(listen_fd),
      admit_(std::move(admit)),
      serve_(std::move(serve)),
      render_(std::move(render)),
      scratch_(kReadChunk) {
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) throw std::system_error(errno, std::generic_category(), "epoll_create1");
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) {
    int error = errno;
    ::close(epoll_fd_);
    throw std::system_error(error, std::generic_category(), "eventfd");
  }
  epoll_event listen_event{};
  listen_event.events = EPOLLIN;
  listen_event.data.ptr = &listen_tag;
  epoll_event wake_event{};
  wake_event.events = EPOLLIN;
  wake_event.data.ptr = &wake_tag;
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &listen_event) != 0 ||
      ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &wake_event) != 0) {
    int error = errno;
    ::close(wake_fd_);
    ::close(epoll_fd_);
    throw std::system_error(error, std::generic_category(), "epoll_ctl");
  }
}

ConnectionReactor::~ConnectionReactor() {
  stop();
  for (auto& [ptr, connection] : connections_) {
    if (connection->fd >= 0) ::close(connection->fd);
  }
  if (listen_fd_ >= 0) ::close(listen_fd_);
  ::close(wake_fd_);
  ::close(epoll_fd_);
}

void ConnectionReactor::start() {
  std::lock_guard lock(lifecycle_mutex_);
  if (thread_.joinable() || stopping_) return;
  thread_ = std::thread([this] {
    set_thread_name(options_.name + "-io");
    run();
  });
}

void ConnectionReactor::stop() noexcept {
  std::lock_guard lock(lifecycle_mutex_);
  stopping_ = true;
  if (!thread_.joinable()) return;
  std::uint64_t one = 1;
  [[maybe_unused]] auto written = ::write(wake_fd_, &one, sizeof(one));
  thread_.join();
}

void ConnectionReactor::send_what_fits(Connection& connection) noexcept {
  while (connection.output_sent < connection.output.size()) {
    ssize_t n = ::send(connection.fd, connection.output.data() + connection.output_sent,
                       connection.output.size() - connection.output_sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      connection.output_sent += static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      return;  // the socket buffer is full, or the connection broke: the reactor sees to it
    }
  }
}

void ConnectionReactor::give_back(Connection* connection) {
  {
    std::lock_guard lock(returned_mutex_);
    returned_.push_back(connection);
  }
  std::uint64_t one = 1;
  [[maybe_unused]] auto written = ::write(wake_fd_, &one, sizeof(one));
}

ConnectionReactor::Stats ConnectionReactor::stats() const {
  return {open_.load(), serving_.load(), evicted_.load(), refused_.load(), timed_out_.load()};
}

void ConnectionReactor::run() {
  std::array<epoll_event, 256> events;
  auto next_sweep = Clock::now() + kSweepInterval;
  for (;;) {
    if (stopping_ && !stopping_seen_) begin_stop();
    if (stopping_seen_ && connections_.empty()) return;

    auto now = Clock::now();
    int timeout_ms = static_cast<int>(
        std::clamp<long long>(std::chrono::ceil<std::chrono::milliseconds>(next_sweep - now).count(), 0, 1000));
    int n = ::epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()), timeout_ms);
    if (n < 0) {
      if (errno == EINTR) continue;
      spdlog::error("{}: epoll_wait failed: {}", options_.name, std::strerror(errno));
      std::this_thread::sleep_for(10ms);
      continue;
    }
    now = Clock::now();
    for (int i = 0; i < n; ++i) {
      void* tag = events[static_cast<std::size_t>(i)].data.ptr;
      if (tag == &listen_tag) {
        accept_all(now);
      } else if (tag == &wake_tag) {
        std::uint64_t count = 0;
        [[maybe_unused]] auto got = ::read(wake_fd_, &count, sizeof(count));
        take_returned();
      } else {
        auto* connection = static_cast<Connection*>(tag);
        if (connection->phase != Connection::Phase::kClosed) {
          on_event(connection, events[static_cast<std::size_t>(i)].events);
        }
      }
    }
    now = Clock::now();
    if (now >= next_sweep) {
      sweep(now);
      next_sweep = now + kSweepInterval;
    }
    if (!listening_ && !stopping_seen_ && now >= accept_paused_until_) {
      epoll_event listen_event{};
      listen_event.events = EPOLLIN;
      listen_event.data.ptr = &listen_tag;
      if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &listen_event) == 0) listening_ = true;
    }
    closed_.clear();
  }
}

void ConnectionReactor::begin_stop() {
  stopping_seen_ = true;
  if (listen_fd_ >= 0) {
    if (listening_) ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, listen_fd_, nullptr);
    ::close(listen_fd_);
    listen_fd_ = -1;
    listening_ = false;
  }
  std::vector<Connection*> waiting;
  for (auto& [ptr, connection] : connections_) {
    switch (connection->phase) {
      case Connection::Phase::kReceiving:
      case Connection::Phase::kLingering:
        waiting.push_back(ptr);
        break;
      case Connection::Phase::kSending:
        connection->close_after_output = true;
        break;
      case Connection::Phase::kServing:
      case Connection::Phase::kClosed:
        break;
    }
  }
  for (auto* connection : waiting) close_connection(connection);
  closed_.clear();
}

void ConnectionReactor::accept_all(Clock::time_point now) {
  for (int accepted = 0; accepted < 64 && listen_fd_ >= 0; ++accepted) {
    sockaddr_storage address{};
    socklen_t length = sizeof(address);
    int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&address), &length, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        // Out of descriptors: a waiting connection makes room, or accepting pauses briefly (the
        // listening socket would otherwise wake this loop without end).
        if (evict_oldest(waiting_)) continue;
        spdlog::warn("{}: cannot accept connections: {}; pausing for {} ms", options_.name, std::strerror(errno),
                     kAcceptPause.count());
        ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, listen_fd_, nullptr);
        listening_ = false;
        accept_paused_until_ = now + kAcceptPause;
        return;
      }
      spdlog::warn("{}: accept failed: {}", options_.name, std::strerror(errno));
      return;
    }
    int yes = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));

    auto owned = std::make_unique<Connection>();
    Connection* c = owned.get();
    c->fd = fd;
    c->peer_ip = address_text(address, c->peer_port);
    AddressSlot& slot = addresses_[c->peer_ip];
    c->address = &slot;
    ++slot.connections;
    connections_.emplace(c, std::move(owned));
    ++open_;

    // The new connection counts already, so the address's slot cannot go away while room is
    // made.
    bool room = true;
    if (slot.connections > options_.max_connections_per_address) room = evict_oldest(slot.waiting);
    if (room && connections_.size() > options_.max_connections) room = evict_oldest(waiting_);
    if (!room) {
      ++refused_;
      Admission refusal;
      refusal.status = 503;
      refusal.message = "too many connections; try again shortly";
      refuse(c, refusal);
      continue;
    }
    c->phase = Connection::Phase::kReceiving;
    c->deadline = now + options_.head_timeout;
    set_waiting(c, true);
    watch(c, EPOLLIN);
  }
}

bool ConnectionReactor::evict_oldest(std::list<Connection*>& waiting) {
  if (waiting.empty()) return false;
  // Closed before it is counted, so a reader who sees the count sees the connection gone too.
  close_connection(waiting.front());
  ++evicted_;
  return true;
}

void ConnectionReactor::on_event(Connection* c, std::uint32_t) {
  switch (c->phase) {
    case Connection::Phase::kReceiving:
      receive(c);
      break;
    case Connection::Phase::kSending:
      send_pending(c);
      break;
    case Connection::Phase::kLingering:
      linger_read(c);
      break;
    case Connection::Phase::kServing:
    case Connection::Phase::kClosed:
      break;
  }
}

void ConnectionReactor::receive(Connection* c) {
  std::size_t budget = kMaxBytesPerEvent;
  while (c->phase == Connection::Phase::kReceiving && budget > 0) {
    // Read only what the request still needs (plus the start of a pipelined one), so a client
    // cannot make the buffer grow past its limits.
    const std::size_t needed = c->head_bytes == 0 ? options_.head_limits.max_head_bytes + 1
                                                  : c->head_bytes + c->body_bytes;
    if (c->input.size() >= needed) return;
    const std::size_t want = std::min(kReadChunk, std::max<std::size_t>(needed - c->input.size(), 4096));
    ssize_t n = ::recv(c->fd, scratch_.data(), want, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) close_connection(c);
      return;
    }
    if (n == 0) {  // the client closed; whatever it sent is not a whole request
      close_connection(c);
      return;
    }
    budget -= std::min(budget, static_cast<std::size_t>(n));
    const auto now = Clock::now();
    if (!c->request_begun) {
      c->request_begun = true;
      c->request_started = now;
      c->deadline = now + options_.head_timeout;
    } else if (c->head_bytes != 0) {
      c->deadline = std::min(c->request_started + options_.request_timeout, now + options_.read_timeout);
    }
    c->input.append(scratch_.data(), static_cast<std::size_t>(n));
    advance(c);
  }
}

void ConnectionReactor::advance(Connection* c) {
  if (c->phase != Connection::Phase::kReceiving) return;
  if (c->head_bytes == 0) {
    const std::size_t end = find_head_end(c->input, c->head_scanned);
    if (end == 0) {
      if (c->input.size() > options_.head_limits.max_head_bytes) {
        Admission refusal;
        refusal.status = 431;
        refusal.message = "the request line and headers exceed " +
                          std::to_string(options_.head_limits.max_head_bytes) + " bytes";
        refuse(c, refusal);
      }
      return;
    }
    auto parsed = parse_request_head(std::string_view(c->input).substr(0, end), options_.head_limits);
    if (auto* error = std::get_if<HeadError>(&parsed)) {
      Admission refusal;
      refusal.status = error->status;
      refusal.message = error->message;
      refuse(c, refusal);
      return;
    }
    c->head = std::move(std::get<RequestHead>(parsed));
    Admission admission = admit_(c->head);
    if (admission.status != 0) {
      refuse(c, admission);
      return;
    }
    const std::uint64_t length = c->head.content_length.value_or(0);
    if (length > admission.max_body_bytes) {
      Admission refusal;
      refusal.status = 413;
      refusal.message = "request body exceeds the limit of " + std::to_string(admission.max_body_bytes) + " bytes";
      refuse(c, refusal);
      return;
    }
    c->head_bytes = end;
    c->body_bytes = static_cast<std::size_t>(length);
    c->match = std::move(admission.match);
    const auto now = Clock::now();
    c->deadline = std::min(c->request_started + options_.request_timeout, now + options_.read_timeout);
    if (c->head.expect_continue && length > 0 && c->input.size() < end + length) {
      static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      ssize_t sent = ::send(c->fd, kContinue.data(), kContinue.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (sent != static_cast<ssize_t>(kContinue.size())) {
        close_connection(c);
        return;
      }
      c->continue_sent = true;
    }
  }
  if (c->input.size() >= c->head_bytes + c->body_bytes) dispatch(c);
}

void ConnectionReactor::dispatch(Connection* c) {
  set_waiting(c, false);
  unwatch(c);
  c->phase = Connection::Phase::kServing;
  ++serving_;
  serve_(c);
}

void ConnectionReactor::take_returned() {
  std::vector<Connection*> batch;
  {
    std::lock_guard lock(returned_mutex_);
    batch.swap(returned_);
  }
  const auto now = Clock::now();
  for (auto* c : batch) {
    --serving_;
    // The served request's bytes go; a pipelined next request stays.
    c->input.erase(0, std::min(c->input.size(), c->head_bytes + c->body_bytes));
    c->head_bytes = 0;
    c->body_bytes = 0;
    c->head_scanned = 0;
    c->continue_sent = false;
    c->head = {};
    c->match = {};
    ++c->requests_served;
    if (stopping_seen_) c->close_after_output = true;
    c->phase = Connection::Phase::kSending;
    c->output_sent = std::min(c->output_sent, c->output.size());  // what the worker sent already
    c->deadline = now + options_.write_timeout;
    send_pending(c);
  }
}

void ConnectionReactor::send_pending(Connection* c) {
  while (c->output_sent < c->output.size()) {
    ssize_t n = ::send(c->fd, c->output.data() + c->output_sent, c->output.size() - c->output_sent,
                       MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      c->output_sent += static_cast<std::size_t>(n);
      c->deadline = Clock::now() + options_.write_timeout;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      watch(c, EPOLLOUT);
      return;
    }
    close_connection(c);
    return;
  }
  after_sent(c);
}

void ConnectionReactor::after_sent(Connection* c) {
  c->output.clear();
  c->output_sent = 0;
  release_if_large(c->output);
  if (c->close_after_output) {
    if (stopping_seen_) {
      close_connection(c);
    } else {
      start_lingering(c);
    }
    return;
  }
  const auto now = Clock::now();
  c->phase = Connection::Phase::kReceiving;
  c->request_begun = !c->input.empty();
  if (c->request_begun) {
    c->request_started = now;
    c->deadline = now + options_.head_timeout;
  } else {
    c->deadline = now + options_.keep_alive_timeout;
    release_if_large(c->input);
  }
  set_waiting(c, true);
  watch(c, EPOLLIN);
  advance(c);  // a pipelined request may be complete already
}

void ConnectionReactor::refuse(Connection* c, const Admission& refusal) {
  set_waiting(c, false);
  c->output = render_(refusal);
  c->output_sent = 0;
  c->close_after_output = true;
  c->phase = Connection::Phase::kSending;
  c->deadline = Clock::now() + options_.write_timeout;
  send_pending(c);
}

void ConnectionReactor::start_lingering(Connection* c) {
  ::shutdown(c->fd, SHUT_WR);  // the answer is complete: FIN after it
  c->phase = Connection::Phase::kLingering;
  c->deadline = Clock::now() + kLingerTime;
  c->lingered_bytes = 0;
  c->input.clear();
  release_if_large(c->input);
  set_waiting(c, true);
  watch(c, EPOLLIN);
}

void ConnectionReactor::linger_read(Connection* c) {
  for (;;) {
    ssize_t n = ::recv(c->fd, scratch_.data(), scratch_.size(), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) break;  // the client closed (or reset): done
    c->lingered_bytes += static_cast<std::size_t>(n);
    if (c->lingered_bytes > kLingerMaxBytes) break;
  }
  close_connection(c);
}

void ConnectionReactor::sweep(Clock::time_point now) {
  std::vector<Connection*> expired;
  for (auto& [ptr, connection] : connections_) {
    if (connection->phase != Connection::Phase::kServing && connection->phase != Connection::Phase::kClosed &&
        now >= connection->deadline) {
      expired.push_back(ptr);
    }
  }
  for (auto* c : expired) {
    if (c->phase == Connection::Phase::kClosed) continue;
    if (c->phase == Connection::Phase::kReceiving && c->request_begun) {
      ++timed_out_;
      Admission refusal;
      refusal.status = 408;
      refusal.message = "the request did not arrive in time";
      refuse(c, refusal);
    } else {
      if (c->phase != Connection::Phase::kLingering && c->request_begun) ++timed_out_;
      close_connection(c);
    }
  }
}

void ConnectionReactor::close_connection(Connection* c) {
  if (c->phase == Connection::Phase::kClosed) return;
  unwatch(c);
  set_waiting(c, false);
  ::close(c->fd);
  c->fd = -1;
  c->phase = Connection::Phase::kClosed;
  if (--c->address->connections == 0) addresses_.erase(c->peer_ip);
  c->address = nullptr;
  auto it = connections_.find(c);
  if (it != connections_.end()) {
    closed_.push_back(std::move(it->second));
    connections_.erase(it);
  }
  --open_;
}

void ConnectionReactor::set_waiting(Connection* c, bool waiting) {
  if (waiting == c->waiting) return;
  if (waiting) {
    c->waiting_pos = waiting_.insert(waiting_.end(), c);
    c->address_pos = c->address->waiting.insert(c->address->waiting.end(), c);
  } else {
    waiting_.erase(c->waiting_pos);
    c->address->waiting.erase(c->address_pos);
  }
  c->waiting = waiting;
}

void ConnectionReactor::watch(Connection* c, std::uint32_t events) {
  if (c->watched == events) return;
  epoll_event event{};
  event.events = events;
  event.data.ptr = c;
  const int op = c->watched == 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD;
  if (::epoll_ctl(epoll_fd_, op, c->fd, &event) != 0) {
    spdlog::warn("{}: epoll_ctl failed: {}", options_.name, std::strerror(errno));
    close_connection(c);
    return;
  }
  c->watched = events;
}

void ConnectionReactor::unwatch(Connection* c) {
  if (c->watched == 0) return;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, c->fd, nullptr);
  c->watched = 0;
}

}  // namespace cronwheel::common::http
