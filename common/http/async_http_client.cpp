#include "common/http/async_http_client.h"

#include <fcntl.h>

#include <algorithm>
#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_set>
#include <variant>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <spdlog/spdlog.h>

#include "common/http/io_thread.h"
#include "common/http/url.h"
#include "common/protocol/constants.h"

namespace cronwheel::common::http {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = net::ip::tcp;

// The largest answer head read (status line and headers).
constexpr std::uint32_t kMaxAnswerHeadBytes = 64 * 1024;

std::string milliseconds(std::chrono::milliseconds d) { return std::to_string(d.count()) + " ms"; }

bool holds_line_break(std::string_view text) {
  return text.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos;
}

// One kept-alive connection to an origin.
struct Connection {
  explicit Connection(net::io_context& io) : stream(io) {}
  beast::tcp_stream stream;
  beast::flat_buffer buffer;
  Clock::SteadyTime idle_since{};
};

}  // namespace

class AsyncHttpClient::Impl {
 public:
  Impl(AsyncHttpClientOptions options, Clock& clock) : options_(std::move(options)), clock_(clock) {
    keep_running_.emplace(io_.get_executor());
    thread_ = start_io_thread(io_, options_.name);
  }

  ~Impl() {
    net::post(io_, [this] { stop_all(); });
    keep_running_.reset();
    thread_.join();
  }

  void send(AsyncHttpRequest request, Callback done);
  Stats stats() const;
  const AsyncHttpClientOptions& options() const noexcept { return options_; }

 private:
  struct Call;
  struct Origin {
    std::vector<std::unique_ptr<Connection>> idle;  // most recently used last
    std::size_t busy = 0;                           // carrying a call, or being opened for one
    std::deque<std::shared_ptr<Call>> waiting;
  };

  // One request, from send() to its callback.
  struct Call : std::enable_shared_from_this<Call> {
    Call(Impl& client, net::io_context& io) : client(client), wait_timer(io) {}
    Impl& client;
    std::string origin_key;
    std::string host;  // as the resolver takes it: no brackets around an IPv6 address
    std::string port;
    std::string method;
    std::string url;  // for messages
    bhttp::request<bhttp::string_body> request;
    Callback done;
    net::steady_timer wait_timer;  // connection_wait, while waiting for a connection
    // Owned by the call while it carries it, closed or not, so that an operation still pending
    // on it never outlives its buffer; kept-alive connections move to the pool.
    std::unique_ptr<Connection> connection;
    std::optional<tcp::resolver> resolver;
    std::optional<bhttp::response_parser<bhttp::string_body>> parser;
    bool reused = false;
    bool head_received = false;
    bool finished = false;

    void connect();
    void write();
    void read();
    void fail(TransportError error, std::string why, bool request_written);
    void succeed();
  };

  void start(std::shared_ptr<Call> call);
  // Gives the call's connection back (null: closed) and starts the next waiting call.
  void release(Call& call, bool keep);
  void complete(Call& call, HttpResult result);
  void sweep(Clock::SteadyTime now);
  void stop_all();

  const AsyncHttpClientOptions options_;
  Clock& clock_;  // ages idle connections
  net::io_context io_{1};
  std::optional<net::executor_work_guard<net::io_context::executor_type>> keep_running_;
  std::thread thread_;

  // The I/O thread changes these; stats() reads them from anywhere.
  mutable std::mutex mutex_;
  std::map<std::string, Origin> origins_;  // by "host:port"
  std::unordered_set<std::shared_ptr<Call>> active_;  // calls with a connection
  Clock::SteadyTime last_sweep_{};
  bool stopped_ = false;
};

void AsyncHttpClient::Impl::send(AsyncHttpRequest request, Callback done) {
  auto call = std::make_shared<Call>(*this, io_);
  call->method = request.method;
  call->done = std::move(done);
  auto early_failure = [&](std::string why) {
    HttpResult result;
    result.transport_error = TransportError::kOther;
    result.request_written = false;
    result.error = request.method + " " + request.base_url + request.path + ": " + why;
    call->done(std::move(result));
  };
  auto parsed = parse_base_url(request.base_url);
  if (auto* why = std::get_if<std::string>(&parsed)) return early_failure("invalid base URL: " + *why);
  const auto& base = std::get<BaseUrl>(parsed);
  if (base.url.scheme != "http") return early_failure("only http:// URLs are sent asynchronously");
  if (request.method != "POST" && request.method != "GET") return early_failure("unsupported method");
  for (const auto& [name, value] : request.headers) {
    if (name.empty() || holds_line_break(name) || holds_line_break(value)) {
      return early_failure("the header " + name + " holds a CR, LF or NUL");
    }
  }
  std::string host = base.url.host;
  if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  const std::string port = std::to_string(base.url.effective_port());
  const std::string target = base.target(request.path);
  call->url = base.url.origin() + target;
  call->origin_key = host + " " + port;
  call->host = std::move(host);
  call->port = port;
  auto& out = call->request;
  out.method_string(request.method);
  out.target(target);
  out.version(11);
  out.set(bhttp::field::host, base.url.port != 0 ? base.url.host + ":" + port : base.url.host);
  out.keep_alive(true);
  for (auto& [name, value] : request.headers) out.insert(name, value);
  if (request.method == "POST") {
    out.set(bhttp::field::content_type, protocol::kJsonContentType);
    out.body() = std::move(request.body);
  }
  out.prepare_payload();
  net::post(io_, [this, call] { start(call); });
}

void AsyncHttpClient::Impl::start(std::shared_ptr<Call> call) {
  std::vector<std::unique_ptr<Connection>> expired;  // closed outside the lock
  bool open_new = false;
  bool stopped = false;
  {
    std::lock_guard lock(mutex_);
    stopped = stopped_;
  }
  if (stopped) {
    call->fail(TransportError::kOther, "the client stopped", false);
    return;
  }
  {
    std::lock_guard lock(mutex_);
    const auto now = clock_.steady_now();
    if (now - last_sweep_ >= options_.max_idle_time) sweep(now);
    Origin& origin = origins_[call->origin_key];
    // The most recently used first: the likeliest to be alive, and the others age out.
    while (!origin.idle.empty() && !call->connection) {
      auto candidate = std::move(origin.idle.back());
      origin.idle.pop_back();
      if (now - candidate->idle_since < options_.max_idle_time) {
        call->connection = std::move(candidate);
      } else {
        expired.push_back(std::move(candidate));
      }
    }
    if (call->connection) {
      call->reused = true;
    } else if (origin.busy + origin.idle.size() < std::max<std::size_t>(options_.max_connections_per_origin, 1)) {
      open_new = true;
    } else {
      origin.waiting.push_back(call);
      call->wait_timer.expires_after(options_.connection_wait);
      call->wait_timer.async_wait([this, call](const beast::error_code& failure) {
        if (failure) return;  // a connection came (or the client stopped)
        std::size_t busy = 0;
        {
          std::lock_guard lock(mutex_);
          auto it = origins_.find(call->origin_key);
          if (it == origins_.end()) return;
          auto& waiting = it->second.waiting;
          auto mine = std::find(waiting.begin(), waiting.end(), call);
          if (mine == waiting.end()) return;
          waiting.erase(mine);
          busy = it->second.busy;
        }
        call->fail(TransportError::kNoConnection,
                   "no connection to it came free within " + milliseconds(options_.connection_wait) + " (" +
                       std::to_string(busy) + " in use)",
                   false);
      });
      return;
    }
    ++origin.busy;
    active_.insert(call);
  }
  expired.clear();
  if (open_new) {
    call->connection = std::make_unique<Connection>(io_);
    call->connect();
  } else {
    call->write();
  }
}

void AsyncHttpClient::Impl::Call::connect() {
  auto self = shared_from_this();
  resolver.emplace(client.io_);
  connection->stream.expires_after(client.options_.connect_timeout);
  resolver->async_resolve(host, port, [self](const beast::error_code& failure, tcp::resolver::results_type found) {
    if (self->finished) return;
    if (failure) {
      self->fail(TransportError::kConnect, "cannot connect (connection refused, host unreachable or unknown host)",
                 false);
      return;
    }
    self->connection->stream.async_connect(found, [self](const beast::error_code& failed, const tcp::endpoint&) {
      if (self->finished) return;
      if (failed == beast::error::timeout) {
        self->fail(TransportError::kTimeout,
                   "connect timed out after " + milliseconds(self->client.options_.connect_timeout), false);
        return;
      }
      if (failed) {
        self->fail(TransportError::kConnect,
                   "cannot connect (connection refused, host unreachable or unknown host)", false);
        return;
      }
      beast::error_code ignored;
      self->connection->stream.socket().set_option(tcp::no_delay(true), ignored);
      // Not inherited by programs this process starts (scripts): a connection a child held would
      // outlive this client's close.
      ::fcntl(self->connection->stream.socket().native_handle(), F_SETFD, FD_CLOEXEC);
      self->write();
    });
  });
}

void AsyncHttpClient::Impl::Call::write() {
  auto self = shared_from_this();
  connection->stream.expires_after(client.options_.write_timeout);
  bhttp::async_write(connection->stream, request, [self](const beast::error_code& failure, std::size_t) {
    if (self->finished) return;
    if (failure == beast::error::timeout) {
      self->fail(TransportError::kTimeout,
                 "could not send the request within the write timeout of " +
                     milliseconds(self->client.options_.write_timeout),
                 false);
      return;
    }
    if (failure) {
      self->fail(TransportError::kConnection, "connection closed or reset while sending the request (not sent whole)",
                 false);
      return;
    }
    self->parser.emplace();
    self->parser->header_limit(kMaxAnswerHeadBytes);
    self->parser->body_limit(self->client.options_.max_answer_bytes);
    self->read();
  });
}

void AsyncHttpClient::Impl::Call::read() {
  auto self = shared_from_this();
  // Per wait, as HttpClient's read timeout: an answer trickling in may take longer in all.
  connection->stream.expires_after(client.options_.read_timeout);
  bhttp::async_read_some(connection->stream, connection->buffer, *parser,
                         [self](const beast::error_code& failure, std::size_t) {
                           if (self->finished) return;
                           if (self->parser->is_header_done()) self->head_received = true;
                           if (failure == beast::error::timeout) {
                             self->fail(TransportError::kTimeout,
                                        "no answer within the read timeout of " +
                                            milliseconds(self->client.options_.read_timeout),
                                        true);
                           } else if (failure == bhttp::error::body_limit) {
                             self->head_received = true;
                             self->fail(TransportError::kTooLarge,
                                        "the answer is larger than " +
                                            std::to_string(self->client.options_.max_answer_bytes) + " bytes",
                                        true);
                           } else if (failure) {
                             self->fail(TransportError::kConnection,
                                        self->head_received
                                            ? "connection closed before a complete answer"
                                            : "connection closed or reset after the request was sent, before any answer",
                                        true);
                           } else if (self->parser->is_done()) {
                             self->succeed();
                           } else {
                             self->read();
                           }
                         });
}

void AsyncHttpClient::Impl::Call::fail(TransportError error, std::string why, bool request_written) {
  HttpResult result;
  result.transport_error = error;
  result.request_written = request_written;
  result.answer_head_received = head_received;
  result.reused_connection = reused;
  result.error = method + " " + url + ": " + why;
  client.release(*this, false);
  client.complete(*this, std::move(result));
}

void AsyncHttpClient::Impl::Call::succeed() {
  auto answer = parser->release();
  HttpResult result;
  result.status = static_cast<int>(answer.result_int());
  result.body = std::move(answer.body());
  result.answer_head_received = true;
  result.reused_connection = reused;
  client.release(*this, answer.keep_alive());
  client.complete(*this, std::move(result));
}

void AsyncHttpClient::Impl::release(Call& call, bool keep) {
  std::shared_ptr<Call> next;
  bool open_for_next = false;
  bool close_mine = false;
  {
    std::lock_guard lock(mutex_);
    auto it = origins_.find(call.origin_key);
    // Only a call that held a place frees one (not one that gave up waiting for it).
    const bool held_a_place = active_.erase(call.shared_from_this()) > 0;
    if (held_a_place && it != origins_.end()) --it->second.busy;
    std::unique_ptr<Connection> reusable;
    if (call.connection) {
      if (keep && !stopped_ && it != origins_.end()) {
        reusable = std::move(call.connection);
      } else {
        close_mine = true;
      }
    }
    if (it != origins_.end()) {
      Origin& origin = it->second;
      if (held_a_place && !stopped_ && !origin.waiting.empty()) {
        next = std::move(origin.waiting.front());
        origin.waiting.pop_front();
        ++origin.busy;
        active_.insert(next);
        if (reusable) {
          next->connection = std::move(reusable);
          next->reused = true;
        } else {
          open_for_next = true;
        }
      } else if (reusable) {
        reusable->idle_since = clock_.steady_now();
        origin.idle.push_back(std::move(reusable));
      }
      if (origin.idle.empty() && origin.busy == 0 && origin.waiting.empty()) origins_.erase(it);
    }
  }
  if (close_mine) {
    // What is still pending on it ends with operation_aborted, and finds the call finished.
    if (call.resolver) call.resolver->cancel();
    beast::error_code ignored;
    call.connection->stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    call.connection->stream.close();
  }
  if (!next) return;
  next->wait_timer.cancel();
  if (open_for_next) {
    next->connection = std::make_unique<Connection>(io_);
    next->connect();
  } else {
    next->write();
  }
}

void AsyncHttpClient::Impl::complete(Call& call, HttpResult result) {
  if (call.finished) return;
  call.finished = true;
  try {
    call.done(std::move(result));
  } catch (const std::exception& e) {
    spdlog::error("{}: a callback of {} {} threw: {}", options_.name, call.method, call.url, e.what());
  } catch (...) {
    spdlog::error("{}: a callback of {} {} threw", options_.name, call.method, call.url);
  }
}

void AsyncHttpClient::Impl::sweep(Clock::SteadyTime now) {
  last_sweep_ = now;
  for (auto it = origins_.begin(); it != origins_.end();) {
    auto& idle = it->second.idle;
    // Oldest first: the expired ones form a prefix.
    std::size_t stale = 0;
    while (stale < idle.size() && now - idle[stale]->idle_since >= options_.max_idle_time) ++stale;
    idle.erase(idle.begin(), idle.begin() + static_cast<std::ptrdiff_t>(stale));
    const bool unused = idle.empty() && it->second.busy == 0 && it->second.waiting.empty();
    it = unused ? origins_.erase(it) : std::next(it);
  }
}

void AsyncHttpClient::Impl::stop_all() {
  std::vector<std::shared_ptr<Call>> unsent;
  std::vector<std::shared_ptr<Call>> in_flight;
  {
    std::lock_guard lock(mutex_);
    stopped_ = true;
    for (auto& [key, origin] : origins_) {
      origin.idle.clear();
      unsent.insert(unsent.end(), origin.waiting.begin(), origin.waiting.end());
      origin.waiting.clear();
    }
    in_flight.assign(active_.begin(), active_.end());
  }
  for (auto& call : unsent) {
    call->wait_timer.cancel();
    call->fail(TransportError::kOther, "the client stopped", false);
  }
  for (auto& call : in_flight) {
    call->fail(TransportError::kOther, "the client stopped", call->parser.has_value());
  }
}

AsyncHttpClient::Stats AsyncHttpClient::Impl::stats() const {
  std::lock_guard lock(mutex_);
  Stats out;
  for (const auto& [key, origin] : origins_) {
    out.idle += origin.idle.size();
    out.busy += origin.busy;
    out.waiting += origin.waiting.size();
  }
  out.origins = origins_.size();
  return out;
}

AsyncHttpClient::AsyncHttpClient(AsyncHttpClientOptions options, Clock& clock)
    : impl_(std::make_shared<Impl>(std::move(options), clock)) {}

AsyncHttpClient::~AsyncHttpClient() = default;

void AsyncHttpClient::send(AsyncHttpRequest request, Callback done) { impl_->send(std::move(request), std::move(done)); }

HttpResult AsyncHttpClient::send_and_wait(AsyncHttpRequest request) {
  std::promise<HttpResult> promise;
  auto result = promise.get_future();
  send(std::move(request), [&promise](HttpResult answer) { promise.set_value(std::move(answer)); });
  return result.get();
}

AsyncHttpClient::Stats AsyncHttpClient::stats() const { return impl_->stats(); }

const AsyncHttpClientOptions& AsyncHttpClient::options() const noexcept { return impl_->options(); }

}  // namespace cronwheel::common::http
