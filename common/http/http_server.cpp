#include "common/http/http_server.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <utility>

#include <spdlog/spdlog.h>

#include "common/http/connection_stream.h"
#include "common/http/worker_pool.h"
#include "common/protocol/constants.h"
#include "common/protocol/protocol_error.h"

namespace cronwheel::common::http {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// Room for the request line and headers on top of max_body_bytes in a request's byte budget.
constexpr std::size_t kHeaderAllowance = 64 * 1024;

// How often an idle keep-alive connection checks whether a queued connection needs its worker.
constexpr auto kYieldCheckInterval = 50ms;

// After answering a request whose body was not read (413), keep reading and discarding for a
// while before closing: closing a socket with unread input sends a reset, which can destroy the
// answer before the client reads it.
constexpr auto kLingerTime = 2s;
constexpr std::size_t kLingerMaxBytes = 64 * 1024 * 1024;

// Per-connection state the request hooks (pre-routing, error handler) need. cpp-httplib runs
// those hooks on the worker that owns the connection, inside process_request, so a thread-local
// pointer set around the connection loop reaches them.
struct ConnectionContext {
  ConnectionStream* stream = nullptr;
  // The answer went out without the request body being read: the connection cannot carry
  // another request.
  bool close_after = false;
};

thread_local ConnectionContext* tl_connection = nullptr;

std::optional<std::uint64_t> content_length(const httplib::Request& req) {
  if (!req.has_header("Content-Length")) return std::nullopt;
  auto text = req.get_header_value("Content-Length");
  std::uint64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

int poll_millis(Clock::duration timeout) {
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(timeout).count();
  return static_cast<int>(std::clamp<std::chrono::milliseconds::rep>(ms, 0, 1 << 30));
}

void set_thread_name(const std::string& name) {
  std::string truncated = name.substr(0, 15);
  pthread_setname_np(pthread_self(), truncated.c_str());
}

}  // namespace

class HttpServer::Impl final : public httplib::Server {
 public:
  explicit Impl(HttpServerOptions options);
  ~Impl() override;

  Handler wrap(Handler handler) const;
  void start_serving();
  void stop_serving() noexcept;
  int bound_port() const noexcept { return port_.load(); }
  const HttpServerOptions& opts() const noexcept { return options_; }
  void write_error(httplib::Response& res, const ErrorInfo& error) const;

 private:
  // cpp-httplib calls this on a worker for every accepted connection. Its own version waits for
  // the next keep-alive request in a loop that only ends on the keep-alive timeout, so stop()
  // would hang for that long per open connection; this one also wakes on stop and yields idle
  // connections to queued ones. Each request is still parsed and dispatched by cpp-httplib's
  // process_request.
  bool process_and_close_socket(socket_t sock) override;

  // Waits up to `timeout` for the first byte of the next request. False: timeout, stop, or
  // (when `may_yield`) a queued connection claimed this worker.
  bool wait_for_request(int sock, std::chrono::milliseconds timeout, bool may_yield) const;
  void linger_close(int sock) const;

  void reject_oversized(httplib::Response& res) const;
  ErrorInfo error_for_status(const httplib::Request& req, int status) const;
  HandlerResponse on_error(const httplib::Request& req, httplib::Response& res) const;

  const HttpServerOptions options_;
  int stop_fd_ = -1;  // eventfd; readable once stopping
  std::atomic<bool> stopping_{false};
  std::atomic<WorkerPool*> pool_{nullptr};
  std::atomic<int> port_{0};

  enum class State { kIdle, kRunning, kStopped };
  std::mutex lifecycle_mutex_;  // serializes start/stop
  State state_ = State::kIdle;
  std::thread listener_;

  std::mutex signal_mutex_;  // the listener thread's "accepting" / "exited" signals
  std::condition_variable signal_;
  bool accepting_ = false;
  bool listener_exited_ = false;
};

HttpServer::Impl::Impl(HttpServerOptions options) : options_(std::move(options)) {
  stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (stop_fd_ < 0) throw std::system_error(errno, std::generic_category(), "eventfd");

  // cpp-httplib calls this on the listener thread once it is about to accept (after setting
  // is_running), which is the moment start() waits for.
  new_task_queue = [this] {
    auto* pool = new WorkerPool(options_.worker_threads, options_.name);
    pool_ = pool;
    {
      std::lock_guard lock(signal_mutex_);
      accepting_ = true;
    }
    signal_.notify_all();
    return pool;
  };

  set_tcp_nodelay(true);
  // Replaces cpp-httplib's default options, which include SO_REUSEPORT: with it a second server
  // binds a port already in use and silently shares its connections. SO_REUSEADDR alone still
  // allows a restart while old connections sit in TIME_WAIT.
  set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  set_read_timeout(options_.read_timeout);
  set_write_timeout(options_.write_timeout);
  // Only used for the Keep-Alive response header; the connection loop below enforces them.
  set_keep_alive_max_count(std::max<std::size_t>(options_.keep_alive_max_count, 1));
  set_keep_alive_timeout(static_cast<time_t>(
      std::chrono::ceil<std::chrono::seconds>(options_.keep_alive_timeout).count()));
  set_payload_max_length(options_.max_body_bytes);

  // Before the body is read: refuse a declared oversized body without reading it.
  set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    auto length = content_length(req);
    if (length && *length > options_.max_body_bytes) {
      reject_oversized(res);
      return HandlerResponse::Handled;
    }
    return HandlerResponse::Unhandled;
  });
  set_expect_100_continue_handler([this](const httplib::Request& req, httplib::Response& res) {
    auto length = content_length(req);
    if (length && *length > options_.max_body_bytes) {
      reject_oversized(res);
      return 413;
    }
    return 100;
  });
  set_error_handler(HandlerWithResponse(
      [this](const httplib::Request& req, httplib::Response& res) { return on_error(req, res); }));
  // Routes are wrapped (see wrap()); this catches whatever escapes elsewhere in routing.
  set_exception_handler(
      [this](const httplib::Request& req, httplib::Response& res, std::exception_ptr error) {
        try {
          if (error) std::rethrow_exception(error);
        } catch (const std::exception& e) {
          spdlog::error("{}: {} {}: unhandled exception: {}", options_.name, req.method, req.path,
                        e.what());
        } catch (...) {
          spdlog::error("{}: {} {}: unhandled non-standard exception", options_.name, req.method,
                        req.path);
        }
        res.headers.clear();
        write_error(res, {500, kInternalCode, "internal server error", ""});
      });
  set_logger([this](const httplib::Request& req, const httplib::Response& res) {
    spdlog::debug("{}: {} {} -> {}", options_.name, req.method, req.path, res.status);
  });
}

HttpServer::Impl::~Impl() {
  stop_serving();
  ::close(stop_fd_);
}

HttpServer::Handler HttpServer::Impl::wrap(Handler handler) const {
  return [this, handler = std::move(handler)](const httplib::Request& req,
                                               httplib::Response& res) {
    // A handler that throws may have set headers or a partial body already.
    auto answer = [&](const ErrorInfo& error) {
      res.headers.clear();
      write_error(res, error);
    };
    try {
      handler(req, res);
    } catch (const HttpError& e) {
      answer(e.info());
    } catch (const protocol::ProtocolError& e) {
      answer({400, kBadRequestCode, e.what(), e.field()});
    } catch (const std::exception& e) {
      spdlog::error("{}: {} {} failed: {}", options_.name, req.method, req.path, e.what());
      answer({500, kInternalCode, "internal server error", ""});
    } catch (...) {
      spdlog::error("{}: {} {} failed with a non-standard exception", options_.name, req.method,
                    req.path);
      answer({500, kInternalCode, "internal server error", ""});
    }
  };
}

void HttpServer::Impl::start_serving() {
  std::lock_guard lock(lifecycle_mutex_);
  if (state_ != State::kIdle) throw std::logic_error("HttpServer::start: already started");

  errno = 0;
  int bound = -1;
  if (options_.port == 0) {
    bound = bind_to_any_port(options_.host);
  } else if (bind_to_port(options_.host, options_.port)) {
    bound = options_.port;
  }
  if (bound <= 0) {
    int error = errno;
    std::string what = "cannot listen on " + options_.host + ":" + std::to_string(options_.port);
    if (error == 0) throw std::runtime_error(what + ": address not available");
    throw std::system_error(error, std::generic_category(), what);
  }
  port_ = bound;
  // cpp-httplib listens with a backlog of 5: a burst of connects (an admin's trigger threads
  // reaching one executor at once) overflows it, and each dropped SYN costs the client a 1 s
  // retransmit. Calling listen() again on a listening socket just raises the backlog.
  if (::listen(svr_sock_.load(), SOMAXCONN) != 0) {
    spdlog::warn("{}: cannot raise the listen backlog: {}", options_.name, std::strerror(errno));
  }

  listener_ = std::thread([this] {
    set_thread_name(options_.name + "-accept");
    if (!listen_after_bind()) {
      spdlog::error("{}: accept loop on port {} ended with an error", options_.name, port_.load());
    }
    {
      std::lock_guard signal_lock(signal_mutex_);
      listener_exited_ = true;
    }
    signal_.notify_all();
  });
  bool accepting = false;
  {
    std::unique_lock signal_lock(signal_mutex_);
    signal_.wait(signal_lock, [this] { return accepting_ || listener_exited_; });
    accepting = accepting_;
  }
  if (!accepting) {
    listener_.join();
    throw std::runtime_error("cannot listen on " + options_.host + ":" + std::to_string(bound) +
                             ": the accept loop did not start");
  }
  state_ = State::kRunning;
  spdlog::info("{}: listening on {}:{}", options_.name, options_.host, port_.load());
}

void HttpServer::Impl::stop_serving() noexcept {
  std::lock_guard lock(lifecycle_mutex_);
  if (state_ == State::kRunning) {
    stopping_ = true;
    std::uint64_t one = 1;
    [[maybe_unused]] auto written = ::write(stop_fd_, &one, sizeof(one));
    httplib::Server::stop();  // closes the listening socket; the accept loop then joins workers
    if (listener_.joinable()) listener_.join();
    pool_ = nullptr;  // deleted by cpp-httplib once its workers were joined
    spdlog::info("{}: stopped listening on port {}", options_.name, port_.load());
  }
  state_ = State::kStopped;
}

bool HttpServer::Impl::process_and_close_socket(socket_t sock) {
  int yes = 1;
  ::setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));

  ConnectionStream stream(sock, stop_fd_,
                          {options_.read_timeout, options_.write_timeout,
                           options_.max_body_bytes + kHeaderAllowance});
  ConnectionContext context{&stream};
  tl_connection = &context;

  const std::size_t max_requests = std::max<std::size_t>(options_.keep_alive_max_count, 1);
  bool ok = false;
  try {
    const bool keep_alive = options_.keep_alive_timeout > std::chrono::milliseconds::zero();
    for (std::size_t served = 0; served < max_requests && !stopping_; ++served) {
      // A new connection gets read_timeout to start its request; between kept-alive requests
      // the connection is idle, and an idle one may give its worker up.
      bool idle = served > 0;
      if (!stream.has_buffered_data() &&
          !wait_for_request(sock, idle ? options_.keep_alive_timeout : options_.read_timeout,
                            idle)) {
        break;
      }
      stream.begin_request();
      bool last = served + 1 == max_requests || !keep_alive || stopping_;
      bool connection_closed = false;
      ok = process_request(stream, last, connection_closed, nullptr);
      if (!ok || connection_closed || context.close_after) break;
    }
  } catch (const std::exception& e) {
    spdlog::error("{}: connection failed: {}", options_.name, e.what());
    ok = false;
  }
  tl_connection = nullptr;

  if (context.close_after) linger_close(sock);
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return ok;
}

bool HttpServer::Impl::wait_for_request(int sock, std::chrono::milliseconds timeout,
                                        bool may_yield) const {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    auto remaining = deadline - Clock::now();
    if (remaining <= Clock::duration::zero()) return false;
    pollfd fds[2] = {{sock, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    int n = ::poll(fds, 2, poll_millis(std::min<Clock::duration>(remaining, kYieldCheckInterval)));
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (fds[1].revents != 0) return false;
    if (fds[0].revents != 0) return true;  // a request, or EOF/error which process_request sees
    if (auto* pool = pool_.load(); may_yield && pool != nullptr && pool->claim_yield()) {
      return false;
    }
  }
}

void HttpServer::Impl::linger_close(int sock) const {
  ::shutdown(sock, SHUT_WR);  // the answer is complete: send FIN after it
  const auto deadline = Clock::now() + kLingerTime;
  std::array<char, 16 * 1024> scratch;
  std::size_t discarded = 0;
  while (discarded < kLingerMaxBytes) {
    auto remaining = deadline - Clock::now();
    if (remaining <= Clock::duration::zero()) return;
    pollfd fds[2] = {{sock, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    int n = ::poll(fds, 2, poll_millis(remaining));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || fds[1].revents != 0) return;
    ssize_t got = ::recv(sock, scratch.data(), scratch.size(), MSG_DONTWAIT);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (got <= 0) return;  // the client closed (or reset): done
    discarded += static_cast<std::size_t>(got);
  }
}

void HttpServer::Impl::reject_oversized(httplib::Response& res) const {
  if (tl_connection != nullptr) tl_connection->close_after = true;
  res.headers.clear();
  res.set_header("Connection", "close");
  write_error(res, {413, kPayloadTooLargeCode,
                    "request body exceeds the limit of " +
                        std::to_string(options_.max_body_bytes) + " bytes",
                    ""});
}

ErrorInfo HttpServer::Impl::error_for_status(const httplib::Request& req, int status) const {
  switch (status) {
    case 400:
      return {400, kBadRequestCode, "malformed HTTP request", ""};
    case 404:
      return {404, kNotFoundCode, "not found: " + req.method + " " + req.path, ""};
    case 413:
      return {413, kPayloadTooLargeCode,
              "request body exceeds the limit of " + std::to_string(options_.max_body_bytes) +
                  " bytes",
              ""};
    case 500:
      return {500, kInternalCode, "internal server error", ""};
    default:
      return {status, "http_" + std::to_string(status), "HTTP error " + std::to_string(status),
              ""};
  }
}

httplib::Server::HandlerResponse HttpServer::Impl::on_error(const httplib::Request& req,
                                                            httplib::Response& res) const {
  if (tl_connection != nullptr && tl_connection->stream->budget_exceeded()) {
    // cpp-httplib saw a failed read (400); the cause was a body past the limit.
    reject_oversized(res);
    return HandlerResponse::Handled;
  }
  if (!res.body.empty()) return HandlerResponse::Unhandled;  // a handler answered already
  if (res.status != 404 && tl_connection != nullptr) {
    // cpp-httplib rejected the request itself (malformed request line or headers, unreadable
    // body): what follows on the connection cannot be trusted to start a new request.
    tl_connection->close_after = true;
    res.set_header("Connection", "close");
  }
  write_error(res, error_for_status(req, res.status));
  return HandlerResponse::Handled;
}

void HttpServer::Impl::write_error(httplib::Response& res, const ErrorInfo& error) const {
  ErrorResponse out = options_.error_formatter ? options_.error_formatter(error) : rest_error(error);
  write_json(res, std::move(out.body), out.status);
}

HttpServer::HttpServer(HttpServerOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}

HttpServer::~HttpServer() = default;

void HttpServer::get(const std::string& pattern, Handler handler) {
  impl_->Get(pattern, impl_->wrap(std::move(handler)));
}

void HttpServer::post(const std::string& pattern, Handler handler) {
  impl_->Post(pattern, impl_->wrap(std::move(handler)));
}

void HttpServer::put(const std::string& pattern, Handler handler) {
  impl_->Put(pattern, impl_->wrap(std::move(handler)));
}

void HttpServer::del(const std::string& pattern, Handler handler) {
  impl_->Delete(pattern, impl_->wrap(std::move(handler)));
}

void HttpServer::start() { impl_->start_serving(); }

void HttpServer::stop() noexcept { impl_->stop_serving(); }

int HttpServer::port() const noexcept { return impl_->bound_port(); }

const HttpServerOptions& HttpServer::options() const noexcept { return impl_->opts(); }

void HttpServer::write_error(httplib::Response& res, const ErrorInfo& error) const {
  impl_->write_error(res, error);
}

void write_json(httplib::Response& res, std::string body, int status) {
  res.status = status;
  res.set_content(std::move(body), std::string(protocol::kJsonContentType));
}

bool access_token_matches(const httplib::Request& req, std::string_view expected) {
  if (expected.empty()) return true;
  const std::string header(protocol::kAccessTokenHeader);
  if (!req.has_header(header)) return false;
  const std::string got = req.get_header_value(header);
  if (got.size() != expected.size()) return false;
  unsigned char difference = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    difference |= static_cast<unsigned char>(got[i] ^ expected[i]);
  }
  return difference == 0;
}

}  // namespace cronwheel::common::http
