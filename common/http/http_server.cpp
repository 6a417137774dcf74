#include "common/http/http_server.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <limits>
#include <list>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <boost/asio/buffer.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/serializer.hpp>
#include <boost/beast/http/write.hpp>
#include <spdlog/spdlog.h>

#include "common/http/io_thread.h"
#include "common/http/request_parser.h"
#include "common/http/worker_pool.h"
#include "common/protocol/constants.h"
#include "common/protocol/protocol_error.h"

namespace cronwheel::common::http {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = net::ip::tcp;
using SteadyClock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// Descriptors kept free of connections for everything else the process opens (database
// connections, log files, outgoing HTTP).
constexpr std::size_t kReservedDescriptors = 256;
// Bytes asked of the socket per read: a whole small request at once, and a bound on what a
// connection buffers beyond the request it is on.
constexpr std::size_t kReadChunk = 16 * 1024;
// After an answer that ends the connection, what the client still sends is read and dropped
// for this long (at most kLingerMaxBytes), so that closing with unread bytes does not reset the
// connection before the client has read the answer.
constexpr auto kLingerTime = 2s;
constexpr std::size_t kLingerMaxBytes = 16 * 1024 * 1024;
// Accepting pauses this long when the process is out of descriptors.
constexpr auto kAcceptPause = 100ms;

// On every answer: a browser must take a JSON error (or anything else) for what its
// Content-Type says, never sniff it into a script or a page.
constexpr const char* kNoSniffHeader = "X-Content-Type-Options";

std::string code_for(int status) {
  switch (status) {
    case 400: return kBadRequestCode;
    case 404: return kNotFoundCode;
    case 405: return "method_not_allowed";
    case 408: return "request_timeout";
    case 411: return "length_required";
    case 413: return kPayloadTooLargeCode;
    case 414: return "uri_too_long";
    case 431: return "header_too_large";
    case 500: return kInternalCode;
    case 501: return "not_implemented";
    case 503: return "unavailable";
    case 505: return "version_not_supported";
    default: return "http_" + std::to_string(status);
  }
}

void reset_headers(Response& res) {
  res.headers.clear();
  res.set_header(kNoSniffHeader, "nosniff");
}

// The route index that stands for fallback_get's handler (RouteTable's are 0, 1, 2...).
constexpr std::size_t kFallbackRoute = std::numeric_limits<std::size_t>::max();

// How many connections the open file limit leaves room for.
std::size_t connection_room(std::size_t wanted, const std::string& name) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return wanted;
  const auto available = static_cast<std::size_t>(limit.rlim_cur);
  const std::size_t room = available > 2 * kReservedDescriptors ? available - kReservedDescriptors : available / 2;
  if (room >= wanted) return wanted;
  spdlog::warn("{}: the open file limit ({}) allows {} connections, not {}; raise it (ulimit -n) for more", name,
               available, room, wanted);
  return room;
}

// A refusal the connection side answers itself, before any handler: the status, the message
// and, for 405, the methods the path takes.
struct Refusal {
  int status = 0;
  std::string message;
  std::vector<std::string> allow;
};

using Answer = bhttp::response<bhttp::string_body>;

}  // namespace

class HttpServer::Impl {
 public:
  explicit Impl(HttpServerOptions options);
  ~Impl();

  void add_route(const std::string& method, const std::string& pattern, ParamHandler handler,
                 RouteOptions route_options);
  void add_lane(const std::string& name, LaneOptions lane_options);
  std::vector<LaneStats> lanes() const;
  void set_fallback(ParamHandler handler, RouteOptions route_options);
  void bind_listener();
  void start_serving();
  void stop_serving() noexcept;
  int bound_port() const noexcept { return port_.load(); }
  const HttpServerOptions& opts() const noexcept { return options_; }
  ConnectionStats stats() const;
  void write_error(Response& res, const ErrorInfo& error) const;

 private:
  class Session;
  friend class Session;

  // A lane's threads and what is in it (see LaneOptions).
  struct Lane {
    std::string name;
    LaneOptions options;
    ErrorInfo busy;
    std::unique_ptr<WorkerPool> pool;  // from start() to stop()
    mutable std::mutex mutex;
    std::size_t inside = 0;  // waiting or running
    std::unordered_map<std::string, std::size_t> per_address;
    std::atomic<std::uint64_t> refused_full{0};
    std::atomic<std::uint64_t> refused_late{0};

    // Takes a place for a request from `address`; false when the lane or the address's share
    // of it is full.
    bool enter(const std::string& address);
    void leave(const std::string& address);
  };

  struct RouteEntry {
    ParamHandler handler;
    std::size_t max_body_bytes;
    Lane* lane = nullptr;  // nullptr: the server's workers
  };

  // Connections of one client address, and those of them waiting for a request (oldest first).
  struct AddressSlot {
    std::size_t connections = 0;
    std::list<Session*> waiting;
  };

  // What admit() decides for a head: a route to serve it, or a refusal.
  struct Admission {
    Refusal refusal;  // status 0: serve
    std::size_t max_body_bytes = 0;
    RouteTable::Match match;
  };

  ParamHandler wrap(ParamHandler handler) const;
  Admission admit(const RequestHead& head) const;
  std::string render_refusal(const Refusal& refusal) const;
  RouteEntry make_entry(ParamHandler handler, const RouteOptions& route_options) const;
  const RouteEntry& entry_of(const RouteTable::Match& match) const;

  // Runs the request's handler on its lane or a worker, and sends the answer back to the
  // connection. From the I/O thread.
  void dispatch(std::shared_ptr<Session> session, Request request, RouteTable::Match match, bool close_after);
  // The answer to `request`: its handler's, or `refusal` without running it. Never throws.
  Answer serve(const Request& request, const RouteTable::Match& match, const ErrorInfo* refusal) const;

  // The I/O thread's side (every member below up to the counters is touched on it only).
  void accept_next();
  void on_accepted(tcp::socket socket);
  // Closes the connection that has waited longest for a request: the oldest of `waiting`, or of
  // the connections a worker re-armed (Session::answer_from_worker), which are in no list, of
  // `address` (nullptr: of any address). False when none waits.
  bool evict_oldest(std::list<Session*>& waiting, const std::string* address);
  void close_all_but_serving();

  const HttpServerOptions options_;
  HeadLimits head_limits_;
  std::size_t max_connections_ = 0;
  RouteTable table_;
  std::vector<RouteEntry> routes_;  // by RouteTable index
  std::vector<std::unique_ptr<Lane>> lanes_;
  std::optional<RouteEntry> fallback_;  // fallback_get's, matched as kFallbackRoute
  std::atomic<int> port_{0};
  std::atomic<bool> stopping_{false};

  net::io_context io_{1};
  std::optional<net::executor_work_guard<net::io_context::executor_type>> keep_running_;
  tcp::acceptor acceptor_{io_};
  net::steady_timer accept_pause_{io_};
  std::thread io_thread_;

  std::unordered_set<Session*> sessions_;
  std::unordered_map<std::string, AddressSlot> addresses_;
  std::list<Session*> waiting_;  // every connection waiting for a request, oldest first

  std::atomic<std::size_t> open_{0};
  std::atomic<std::size_t> serving_{0};
  std::atomic<std::uint64_t> evicted_{0};
  std::atomic<std::uint64_t> refused_{0};
  std::atomic<std::uint64_t> timed_out_{0};

  enum class State { kIdle, kRunning, kStopped };
  mutable std::mutex lifecycle_mutex_;  // serializes bind/start/stop
  State state_ = State::kIdle;
  std::unique_ptr<WorkerPool> pool_;
};

// One client connection, from accept to close. Every member is touched on the I/O thread only,
// except while a worker serves the request (phase kServing): then nothing touches the session
// but the worker, which sends its answer and re-arms the connection itself
// (answer_from_worker) or posts the answer back to the I/O thread. A re-armed connection stays
// in phase kServing until the I/O thread takes it back (take_back) under rearm_mutex_. Kept alive
// by the asynchronous operation (or the worker's task) that holds it.
class HttpServer::Impl::Session : public std::enable_shared_from_this<Session> {
 public:
  Session(Impl& server, tcp::socket socket, std::string peer_ip, int peer_port);

  // Counts the connection in (before room is made for it, so its address stays counted).
  void enter();
  // Starts reading its first request, or refuses it when `refusal` says so.
  void start(const Refusal* refusal);
  // Closes at once; pending operations end without effect. Idempotent.
  void close();
  // From the I/O thread: the worker's answer to the request being served.
  void send_answer(Answer answer, bool close_after);
  // From the worker that made the answer to a kept-alive request (phase kServing, so nothing
  // else touches the session): sends it without blocking and, when the socket took it whole,
  // waits for the next request itself (read and keep-alive deadline armed from the worker), so
  // the I/O thread is not woken in between. False when it sent nothing and the answer must go
  // the usual way (send_answer); true when it is sent or on its way.
  bool answer_from_worker(const Answer& answer);
  // From the I/O thread: a connection the worker re-armed becomes the I/O thread's again
  // (phase kReceiving, not yet in the waiting lists). False when it was not re-armed.
  bool take_back();
  // From the I/O thread: closes the connection when a worker re-armed it. False otherwise.
  bool close_if_rearmed();
  // From the I/O thread: since when the connection waits for a request, when a worker re-armed
  // it.
  std::optional<SteadyClock::time_point> rearmed_since();
  // Since when the connection waits for a request, while it is in the waiting lists.
  SteadyClock::time_point waiting_since() const noexcept { return waiting_since_; }

  enum class Phase { kReceiving, kServing, kSending, kLingering, kClosed };
  Phase phase() const noexcept { return phase_; }
  const std::string& peer_ip() const noexcept { return peer_ip_; }

  // Impl's bookkeeping: waiting for a request, in the waiting lists at these positions.
  AddressSlot* slot = nullptr;
  bool waiting = false;
  std::list<Session*>::iterator waiting_pos;
  std::list<Session*>::iterator address_pos;

 private:
  void set_waiting(bool on);
  void new_request();
  void send_rest(std::shared_ptr<const std::string> text, std::size_t offset);
  void read_more();
  void on_read(const beast::error_code& failure, std::size_t bytes);
  // Feeds what is buffered to the parser; acts on a complete head, a complete request or an
  // error. False when the connection is no longer receiving.
  bool parse_buffered();
  bool on_head(std::size_t head_bytes);
  void hand_over();
  void refuse(const Refusal& refusal);
  void write_raw(std::shared_ptr<const std::string> text, bool then_linger);
  void write_next();
  void after_sent();
  void linger();
  void linger_read();
  void set_deadline(SteadyClock::time_point deadline);
  void clear_deadline();
  void on_deadline();

  Impl& server_;
  tcp::socket socket_;
  net::steady_timer timer_;
  std::string peer_ip_;
  int peer_port_ = 0;
  Phase phase_ = Phase::kReceiving;
  SteadyClock::time_point deadline_ = SteadyClock::time_point::max();

  beast::flat_buffer buffer_;
  std::optional<RequestParser> parser_;
  std::optional<RequestHead> head_;  // set once the head passed the checks
  std::size_t head_bytes_ = 0;       // of the current request's head, once it arrived
  RouteTable::Match match_;
  bool request_begun_ = false;  // a byte of the current request arrived
  SteadyClock::time_point request_started_{};
  std::size_t requests_served_ = 0;

  std::optional<Answer> answer_;
  std::optional<bhttp::serializer<false, bhttp::string_body>> serializer_;
  bool close_after_ = false;
  std::optional<net::executor_work_guard<net::io_context::executor_type>> serving_guard_;
  std::size_t lingered_bytes_ = 0;
  std::array<char, 4096> linger_scratch_{};

  // Set by a worker that answered and re-armed the connection (answer_from_worker), while the
  // phase stays kServing; cleared by the I/O thread when it takes the connection back (at the
  // next request's first bytes, the keep-alive deadline, stop or eviction). Both sides hold
  // rearm_mutex_ around it, so the I/O thread never touches the socket, timer or buffer while
  // the worker still does.
  std::mutex rearm_mutex_;
  bool rearmed_ = false;
  SteadyClock::time_point waiting_since_{};  // see waiting_since(), rearmed_since()
};

// --- Session ---------------------------------------------------------------------------------

HttpServer::Impl::Session::Session(Impl& server, tcp::socket socket, std::string peer_ip, int peer_port)
    : server_(server),
      socket_(std::move(socket)),
      timer_(server.io_),
      peer_ip_(std::move(peer_ip)),
      peer_port_(peer_port) {}

void HttpServer::Impl::Session::enter() {
  server_.sessions_.insert(this);
  slot = &server_.addresses_[peer_ip_];
  ++slot->connections;
  ++server_.open_;
}

void HttpServer::Impl::Session::start(const Refusal* refusal) {
  if (refusal != nullptr) {
    refuse(*refusal);
    return;
  }
  set_deadline(SteadyClock::now() + server_.options_.head_timeout);
  new_request();
}

void HttpServer::Impl::Session::set_waiting(bool on) {
  if (on == waiting) return;
  if (on) {
    waiting_since_ = SteadyClock::now();
    waiting_pos = server_.waiting_.insert(server_.waiting_.end(), this);
    address_pos = slot->waiting.insert(slot->waiting.end(), this);
  } else {
    server_.waiting_.erase(waiting_pos);
    slot->waiting.erase(address_pos);
  }
  waiting = on;
}

void HttpServer::Impl::Session::close() {
  if (phase_ == Phase::kClosed) return;
  if (phase_ == Phase::kServing) take_back();  // a re-armed connection is no longer served
  if (phase_ == Phase::kServing) --server_.serving_;
  phase_ = Phase::kClosed;
  set_waiting(false);
  beast::error_code ignored;
  socket_.shutdown(tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
  timer_.cancel();
  serving_guard_.reset();
  if (--slot->connections == 0) server_.addresses_.erase(peer_ip_);
  slot = nullptr;
  server_.sessions_.erase(this);
  --server_.open_;
}

// Readies the parser for the next request on the connection; the deadline is the caller's.
void HttpServer::Impl::Session::new_request() {
  phase_ = Phase::kReceiving;
  parser_.emplace();
  prepare_parser(*parser_, server_.head_limits_);
  head_.reset();
  match_ = {};
  request_begun_ = buffer_.size() > 0;
  if (request_begun_) request_started_ = SteadyClock::now();
  set_waiting(true);
  if (parse_buffered()) read_more();
}

void HttpServer::Impl::Session::read_more() {
  auto self = shared_from_this();
  socket_.async_read_some(buffer_.prepare(kReadChunk), [self](const beast::error_code& failure, std::size_t bytes) {
    self->on_read(failure, bytes);
  });
}

void HttpServer::Impl::Session::on_read(const beast::error_code& failure, std::size_t bytes) {
  // A read a worker started after answering: the next request's first bytes (or the end).
  if (phase_ == Phase::kServing && !take_back()) return;
  if (phase_ != Phase::kReceiving) return;
  if (failure) {  // the client closed or the connection broke: what it sent is no whole request
    close();
    return;
  }
  buffer_.commit(bytes);
  const auto now = SteadyClock::now();
  const auto& options = server_.options_;
  if (!request_begun_) {
    request_begun_ = true;
    request_started_ = now;
    set_deadline(now + options.head_timeout);
  } else if (head_) {
    set_deadline(std::min(request_started_ + options.request_timeout, now + options.read_timeout));
  }
  if (parse_buffered()) read_more();
}

bool HttpServer::Impl::Session::parse_buffered() {
  while (phase_ == Phase::kReceiving) {
    if (!head_ && parser_->is_header_done()) {
      if (!on_head(head_bytes_)) return false;
      continue;
    }
    if (parser_->is_done()) {
      hand_over();
      return false;
    }
    if (buffer_.size() == 0) return true;
    beast::error_code failure;
    const std::size_t used = parser_->put(buffer_.data(), failure);
    if (failure == bhttp::error::need_more) return true;
    if (failure) {
      const auto data = buffer_.cdata();
      HeadError refused =
          parse_failure(failure, std::string_view(static_cast<const char*>(data.data()), data.size()), server_.head_limits_);
      refuse({refused.status, std::move(refused.message), {}});
      return false;
    }
    buffer_.consume(used);
    if (!head_ && parser_->is_header_done()) head_bytes_ = used;  // the put that took the head whole
    if (used == 0 && !parser_->is_header_done() && !parser_->is_done()) return true;
  }
  return false;
}

// The head has arrived: refuses it, or readies the body (with "100 Continue" when the client
// waits for it).
bool HttpServer::Impl::Session::on_head(std::size_t head_bytes) {
  auto checked = check_head(*parser_, head_bytes, server_.head_limits_);
  if (auto* error = std::get_if<HeadError>(&checked)) {
    refuse({error->status, std::move(error->message), {}});
    return false;
  }
  RequestHead head = std::move(std::get<RequestHead>(checked));
  Admission admission = server_.admit(head);
  if (admission.refusal.status != 0) {
    refuse(admission.refusal);
    return false;
  }
  const std::uint64_t length = head.content_length.value_or(0);
  if (length > admission.max_body_bytes) {
    refuse({413, "request body exceeds the limit of " + std::to_string(admission.max_body_bytes) + " bytes", {}});
    return false;
  }
  match_ = std::move(admission.match);
  const bool expect_continue = head.expect_continue && length > 0 && buffer_.size() < length;
  head_ = std::move(head);
  parser_->eager(true);
  const auto now = SteadyClock::now();
  set_deadline(std::min(request_started_ + server_.options_.request_timeout, now + server_.options_.read_timeout));
  if (expect_continue) {
    static const std::string kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
    auto self = shared_from_this();
    net::async_write(socket_, net::buffer(kContinue), [self](const beast::error_code& failure, std::size_t) {
      if (self->phase_ != Phase::kReceiving) return;
      if (failure) {
        self->close();
        return;
      }
      if (self->parse_buffered()) self->read_more();
    });
    return false;  // reading resumes once the interim answer is out
  }
  return true;
}

// The request is complete: a worker (or the route's lane) gets it.
void HttpServer::Impl::Session::hand_over() {
  set_waiting(false);
  clear_deadline();
  phase_ = Phase::kServing;
  ++server_.serving_;
  serving_guard_.emplace(server_.io_.get_executor());

  auto message = parser_->release();
  parser_.reset();
  Request request;
  request.method = std::move(head_->method);
  request.target = std::move(head_->target);
  request.path = std::move(head_->path);
  if (const auto query = request.target.find('?'); query != std::string::npos) {
    request.params = parse_query(std::string_view(request.target).substr(query + 1));
  }
  for (const auto& field : message) request.headers.emplace(field.name_string(), field.value());
  request.body = std::move(message.body());
  request.remote_addr = peer_ip_;
  request.remote_port = peer_port_;
  const auto& options = server_.options_;
  const bool close_after = !message.keep_alive() ||
                           requests_served_ + 1 >= std::max<std::size_t>(options.keep_alive_max_count, 1) ||
                           options.keep_alive_timeout <= std::chrono::milliseconds::zero();
  server_.dispatch(shared_from_this(), std::move(request), std::move(match_), close_after);
}

void HttpServer::Impl::Session::send_answer(Answer answer, bool close_after) {
  if (phase_ != Phase::kServing) return;
  --server_.serving_;
  serving_guard_.reset();
  ++requests_served_;
  phase_ = Phase::kSending;
  close_after_ = close_after || server_.stopping_;
  answer_.emplace(std::move(answer));
  answer_->keep_alive(!close_after_);
  serializer_.emplace(*answer_);
  write_next();
}

bool HttpServer::Impl::Session::answer_from_worker(const Answer& answer) {
  std::lock_guard lock(rearm_mutex_);
  // Stopping, or the next request already buffered (pipelined): the I/O thread goes on.
  if (server_.stopping_ || buffer_.size() > 0) return false;
  std::ostringstream out;
  out << answer;
  auto text = std::make_shared<const std::string>(std::move(out).str());
  // Taken before the client can have the answer, so a connection answered later always waits
  // less long (evict_oldest).
  const auto answered = SteadyClock::now();
  const ssize_t sent = ::send(socket_.native_handle(), text->data(), text->size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  if (sent <= 0) return false;  // the socket is full or broken: send_answer waits or closes
  --server_.serving_;
  ++requests_served_;
  if (static_cast<std::size_t>(sent) < text->size()) {
    // The rest waits for the socket, on the I/O thread.
    net::post(server_.io_, [self = shared_from_this(), text, offset = static_cast<std::size_t>(sent)] {
      self->send_rest(text, offset);
    });
    return true;
  }
  waiting_since_ = answered;
  set_deadline(SteadyClock::now() + server_.options_.keep_alive_timeout);
  read_more();
  rearmed_ = true;
  // The pending read holds the I/O thread's io_context from here (stop() closes the connection).
  serving_guard_.reset();
  return true;
}

bool HttpServer::Impl::Session::take_back() {
  {
    std::lock_guard lock(rearm_mutex_);
    if (!rearmed_) return false;
    rearmed_ = false;
  }
  phase_ = Phase::kReceiving;
  parser_.emplace();
  prepare_parser(*parser_, server_.head_limits_);
  head_.reset();
  match_ = {};
  request_begun_ = false;
  set_waiting(true);
  return true;
}

std::optional<SteadyClock::time_point> HttpServer::Impl::Session::rearmed_since() {
  if (phase_ != Phase::kServing) return std::nullopt;
  std::lock_guard lock(rearm_mutex_);
  if (!rearmed_) return std::nullopt;
  return waiting_since_;
}

bool HttpServer::Impl::Session::close_if_rearmed() {
  if (phase_ != Phase::kServing || !take_back()) return false;
  close();
  return true;
}

// The part of a kept-alive answer a worker could not send at once (answer_from_worker).
void HttpServer::Impl::Session::send_rest(std::shared_ptr<const std::string> text, std::size_t offset) {
  if (phase_ != Phase::kServing) return;
  serving_guard_.reset();
  phase_ = Phase::kSending;
  close_after_ = server_.stopping_;
  set_deadline(SteadyClock::now() + server_.options_.write_timeout);
  auto self = shared_from_this();
  net::async_write(socket_, net::buffer(text->data() + offset, text->size() - offset),
                   [self, text](const beast::error_code& failure, std::size_t) {
                     if (self->phase_ != Phase::kSending) return;
                     if (failure) {
                       self->close();
                       return;
                     }
                     self->after_sent();
                   });
}

void HttpServer::Impl::Session::write_next() {
  set_deadline(SteadyClock::now() + server_.options_.write_timeout);
  auto self = shared_from_this();
  bhttp::async_write_some(socket_, *serializer_, [self](const beast::error_code& failure, std::size_t) {
    if (self->phase_ != Phase::kSending) return;
    if (failure) {
      self->close();
      return;
    }
    if (!self->serializer_->is_done()) {
      self->write_next();
      return;
    }
    self->serializer_.reset();
    self->answer_.reset();
    self->after_sent();
  });
}

void HttpServer::Impl::Session::after_sent() {
  if (close_after_ || server_.stopping_) {
    linger();
    return;
  }
  const auto now = SteadyClock::now();
  set_deadline(buffer_.size() > 0 ? now + server_.options_.head_timeout : now + server_.options_.keep_alive_timeout);
  new_request();
}

// Answers `refusal` and ends the connection: what follows on it cannot be trusted to start a
// new request.
void HttpServer::Impl::Session::refuse(const Refusal& refusal) {
  set_waiting(false);
  phase_ = Phase::kSending;
  write_raw(std::make_shared<const std::string>(server_.render_refusal(refusal)), true);
}

void HttpServer::Impl::Session::write_raw(std::shared_ptr<const std::string> text, bool then_linger) {
  set_deadline(SteadyClock::now() + server_.options_.write_timeout);
  auto self = shared_from_this();
  net::async_write(socket_, net::buffer(*text), [self, text, then_linger](const beast::error_code& failure, std::size_t) {
    if (self->phase_ != Phase::kSending) return;
    if (failure || !then_linger) {
      self->close();
      return;
    }
    self->linger();
  });
}

// The answer is complete: FIN after it, then drop what the client still sends for a moment.
void HttpServer::Impl::Session::linger() {
  if (server_.stopping_) {
    close();
    return;
  }
  set_waiting(false);
  phase_ = Phase::kLingering;
  beast::error_code ignored;
  socket_.shutdown(tcp::socket::shutdown_send, ignored);
  lingered_bytes_ = 0;
  set_deadline(SteadyClock::now() + kLingerTime);
  linger_read();
}

void HttpServer::Impl::Session::linger_read() {
  auto self = shared_from_this();
  socket_.async_read_some(net::buffer(linger_scratch_), [self](const beast::error_code& failure, std::size_t bytes) {
    if (self->phase_ != Phase::kLingering) return;
    self->lingered_bytes_ += bytes;
    if (failure || self->lingered_bytes_ > kLingerMaxBytes) {
      self->close();
      return;
    }
    self->linger_read();
  });
}

void HttpServer::Impl::Session::set_deadline(SteadyClock::time_point deadline) {
  deadline_ = deadline;
  timer_.expires_at(deadline);
  auto self = shared_from_this();
  timer_.async_wait([self](const beast::error_code& failure) {
    if (failure != net::error::operation_aborted) self->on_deadline();
  });
}

void HttpServer::Impl::Session::clear_deadline() {
  deadline_ = SteadyClock::time_point::max();
  timer_.cancel();
}

void HttpServer::Impl::Session::on_deadline() {
  // The keep-alive deadline of a connection a worker re-armed.
  if (phase_ == Phase::kServing) {
    bool expired = false;
    {
      std::lock_guard lock(rearm_mutex_);
      expired = rearmed_ && SteadyClock::now() >= deadline_;
    }
    if (expired) close_if_rearmed();
    return;
  }
  // A wait that completed just as the deadline moved on.
  if (SteadyClock::now() < deadline_) return;
  switch (phase_) {
    case Phase::kReceiving:
      if (request_begun_) {
        ++server_.timed_out_;
        refuse({408, "the request did not arrive in time", {}});
      } else {
        close();  // a connection that sent nothing, or idle between requests
      }
      break;
    case Phase::kSending:
    case Phase::kLingering:
      close();
      break;
    case Phase::kServing:
    case Phase::kClosed:
      break;
  }
}

// --- Impl ------------------------------------------------------------------------------------

HttpServer::Impl::Impl(HttpServerOptions options) : options_(std::move(options)) {
  head_limits_.max_head_bytes = options_.max_head_bytes;
  head_limits_.max_target_bytes = options_.max_target_bytes;
}

HttpServer::Impl::~Impl() { stop_serving(); }

void HttpServer::Impl::add_route(const std::string& method, const std::string& pattern, ParamHandler handler,
                                 RouteOptions route_options) {
  if (method != "GET" && method != "POST" && method != "PUT" && method != "DELETE") {
    throw std::invalid_argument("unsupported method " + method);
  }
  std::lock_guard lock(lifecycle_mutex_);
  if (state_ != State::kIdle) throw std::logic_error("HttpServer: routes must be added before start()");
  auto entry = make_entry(std::move(handler), route_options);
  table_.add(method, pattern);
  routes_.push_back(std::move(entry));
}

void HttpServer::Impl::set_fallback(ParamHandler handler, RouteOptions route_options) {
  std::lock_guard lock(lifecycle_mutex_);
  if (state_ != State::kIdle) throw std::logic_error("HttpServer: routes must be added before start()");
  fallback_ = make_entry(std::move(handler), route_options);
}

HttpServer::Impl::RouteEntry HttpServer::Impl::make_entry(ParamHandler handler, const RouteOptions& route_options) const {
  RouteEntry entry{wrap(std::move(handler)), route_options.max_body_bytes.value_or(options_.max_body_bytes), nullptr};
  if (!route_options.lane.empty()) {
    auto it = std::find_if(lanes_.begin(), lanes_.end(), [&](const auto& lane) { return lane->name == route_options.lane; });
    if (it == lanes_.end()) throw std::invalid_argument("HttpServer: no lane named " + route_options.lane);
    entry.lane = it->get();
  }
  return entry;
}

const HttpServer::Impl::RouteEntry& HttpServer::Impl::entry_of(const RouteTable::Match& match) const {
  return match.route == kFallbackRoute ? *fallback_ : routes_[match.route];
}

void HttpServer::Impl::add_lane(const std::string& name, LaneOptions lane_options) {
  std::lock_guard lock(lifecycle_mutex_);
  if (state_ != State::kIdle) throw std::logic_error("HttpServer: lanes must be added before start()");
  if (name.empty()) throw std::invalid_argument("HttpServer: a lane needs a name");
  for (const auto& lane : lanes_) {
    if (lane->name == name) throw std::logic_error("HttpServer: lane " + name + " added twice");
  }
  auto lane = std::make_unique<Lane>();
  lane->name = name;
  lane_options.threads = std::max<std::size_t>(lane_options.threads, 1);
  lane_options.max_per_address = std::max<std::size_t>(lane_options.max_per_address, 1);
  lane_options.retry_after = std::max(lane_options.retry_after, std::chrono::seconds(1));
  lane->busy = {503, "busy", lane_options.busy_message, "", static_cast<int>(lane_options.retry_after.count())};
  lane->options = std::move(lane_options);
  lanes_.push_back(std::move(lane));
}

bool HttpServer::Impl::Lane::enter(const std::string& address) {
  std::lock_guard lock(mutex);
  if (inside >= options.threads + options.max_waiting) return false;
  auto& mine = per_address[address];
  if (mine >= options.max_per_address) return false;
  ++mine;
  ++inside;
  return true;
}

void HttpServer::Impl::Lane::leave(const std::string& address) {
  std::lock_guard lock(mutex);
  --inside;
  auto it = per_address.find(address);
  if (it != per_address.end() && --it->second == 0) per_address.erase(it);
}

std::vector<HttpServer::LaneStats> HttpServer::Impl::lanes() const {
  std::vector<LaneStats> out;
  for (const auto& lane : lanes_) {
    LaneStats stats;
    stats.name = lane->name;
    {
      std::lock_guard lock(lane->mutex);
      stats.inside = lane->inside;
    }
    stats.refused_full = lane->refused_full.load();
    stats.refused_late = lane->refused_late.load();
    out.push_back(std::move(stats));
  }
  return out;
}

void HttpServer::Impl::dispatch(std::shared_ptr<Session> session, Request request, RouteTable::Match match,
                                bool close_after) {
  // The worker sends a kept-alive answer itself when the socket takes it at once
  // (Session::answer_from_worker); any other goes back to the I/O thread, which sends it.
  auto reply = [this, session, close_after](Answer answer) {
    if (!close_after && session->answer_from_worker(answer)) return;
    net::post(io_, [session, close_after, answer = std::move(answer)]() mutable {
      session->send_answer(std::move(answer), close_after);
    });
  };
  Lane* lane = entry_of(match).lane;
  if (lane == nullptr) {
    pool_->enqueue([this, reply, request = std::move(request), match = std::move(match)] {
      reply(serve(request, match, nullptr));
    });
    return;
  }
  if (!lane->enter(request.remote_addr)) {
    ++lane->refused_full;
    // A refusal costs no more than any small answer: a worker writes it.
    pool_->enqueue([this, reply, lane, request = std::move(request), match = std::move(match)] {
      reply(serve(request, match, &lane->busy));
    });
    return;
  }
  const auto queued_at = SteadyClock::now();
  lane->pool->enqueue([this, reply, lane, request = std::move(request), match = std::move(match), queued_at] {
    const bool late = SteadyClock::now() - queued_at > lane->options.max_wait;
    if (late) ++lane->refused_late;
    Answer answer = serve(request, match, late ? &lane->busy : nullptr);
    // Leave before the answer goes back: a client that sends its next request at once must
    // find the place free.
    lane->leave(request.remote_addr);
    reply(std::move(answer));
  });
}

Answer HttpServer::Impl::serve(const Request& request, const RouteTable::Match& match, const ErrorInfo* refusal) const {
  Response res;
  if (refusal != nullptr) {
    reset_headers(res);
    write_error(res, *refusal);
  } else {
    entry_of(match).handler(request, res, match.params);  // wrapped: answers every exception
  }
  Answer answer;
  try {
    answer.version(11);
    answer.result(static_cast<unsigned>(res.status));
    for (auto& [name, value] : res.headers) {
      if (!beast::iequals(name, "Content-Length") && !beast::iequals(name, "Connection")) answer.insert(name, value);
    }
    if (!res.has_header(kNoSniffHeader)) answer.set(kNoSniffHeader, "nosniff");
    const std::size_t size = res.body.size();
    // A HEAD request gets the headers a GET would, without the body.
    if (request.method != "HEAD") answer.body() = std::move(res.body);
    answer.content_length(size);
  } catch (const std::exception& e) {
    spdlog::error("{}: {} {}: the answer could not be made: {}", options_.name, request.method, request.path, e.what());
    Response error;
    reset_headers(error);
    write_error(error, {500, kInternalCode, "internal server error", ""});
    answer = {};
    answer.version(11);
    answer.result(bhttp::status::internal_server_error);
    answer.set(bhttp::field::content_type, protocol::kJsonContentType);
    answer.set(kNoSniffHeader, "nosniff");
    answer.body() = std::move(error.body);
    answer.prepare_payload();
  }
  return answer;
}

HttpServer::ParamHandler HttpServer::Impl::wrap(ParamHandler handler) const {
  return [this, handler = std::move(handler)](const Request& req, Response& res, const PathParams& params) {
    // A handler that throws may have set headers or a partial body already.
    auto answer = [&](const ErrorInfo& error) {
      reset_headers(res);
      write_error(res, error);
    };
    try {
      handler(req, res, params);
    } catch (const HttpError& e) {
      answer(e.info());
    } catch (const protocol::ProtocolError& e) {
      answer({400, kBadRequestCode, e.what(), e.field()});
    } catch (const std::exception& e) {
      spdlog::error("{}: {} {} failed: {}", options_.name, req.method, req.path, e.what());
      answer({500, kInternalCode, "internal server error", ""});
    } catch (...) {
      spdlog::error("{}: {} {} failed with a non-standard exception", options_.name, req.method, req.path);
      answer({500, kInternalCode, "internal server error", ""});
    }
  };
}

HttpServer::Impl::Admission HttpServer::Impl::admit(const RequestHead& head) const {
  Admission admission;
  auto result = table_.match(head.method, head.path);
  if (result.match) {
    admission.max_body_bytes = routes_[result.match->route].max_body_bytes;
    admission.match = std::move(*result.match);
  } else if (fallback_ && result.allowed_methods.empty() && (head.method == "GET" || head.method == "HEAD")) {
    admission.max_body_bytes = fallback_->max_body_bytes;
    admission.match = RouteTable::Match{kFallbackRoute, {}};
  } else if (!result.allowed_methods.empty()) {
    admission.refusal = {405, "method not allowed: " + head.method + " " + head.path, std::move(result.allowed_methods)};
  } else {
    admission.refusal = {404, "not found: " + head.method + " " + head.path, {}};
  }
  return admission;
}

std::string HttpServer::Impl::render_refusal(const Refusal& refusal) const {
  ErrorInfo info{refusal.status, code_for(refusal.status), refusal.message, ""};
  ErrorResponse out = options_.error_formatter ? options_.error_formatter(info) : rest_error(info);
  Answer answer;
  answer.version(11);
  answer.result(static_cast<unsigned>(out.status));
  answer.set(bhttp::field::content_type, protocol::kJsonContentType);
  answer.set(kNoSniffHeader, "nosniff");
  if (!refusal.allow.empty()) {
    std::string allow;
    for (const auto& method : refusal.allow) allow += (allow.empty() ? "" : ", ") + method;
    answer.set(bhttp::field::allow, allow);
  }
  answer.keep_alive(false);
  answer.body() = std::move(out.body);
  answer.prepare_payload();
  std::ostringstream text;
  text << answer;
  return std::move(text).str();
}

void HttpServer::Impl::accept_next() {
  acceptor_.async_accept([this](const beast::error_code& failure, tcp::socket socket) {
    if (stopping_ || failure == net::error::operation_aborted) return;
    if (failure) {
      if (failure == std::errc::too_many_files_open || failure == std::errc::too_many_files_open_in_system ||
          failure == std::errc::no_buffer_space || failure == std::errc::not_enough_memory) {
        spdlog::warn("{}: cannot accept connections ({}); pausing {} ms", options_.name, failure.message(),
                     kAcceptPause.count());
        accept_pause_.expires_after(kAcceptPause);
        accept_pause_.async_wait([this](const beast::error_code& waited) {
          if (!waited && !stopping_) accept_next();
        });
        return;
      }
      accept_next();
      return;
    }
    on_accepted(std::move(socket));
    accept_next();
  });
}

void HttpServer::Impl::on_accepted(tcp::socket socket) {
  // Not inherited by programs this process starts (see bind_listener()).
  ::fcntl(socket.native_handle(), F_SETFD, FD_CLOEXEC);
  beast::error_code failure;
  socket.set_option(tcp::no_delay(true), failure);
  const tcp::endpoint peer = socket.remote_endpoint(failure);
  if (failure) return;  // gone already
  auto address = peer.address();
  if (address.is_v6() && address.to_v6().is_v4_mapped()) {
    address = net::ip::make_address_v4(net::ip::v4_mapped, address.to_v6());
  }
  auto session = std::make_shared<Session>(*this, std::move(socket), address.to_string(), peer.port());
  session->enter();
  bool room = true;
  if (session->slot->connections > options_.max_connections_per_address) {
    room = evict_oldest(session->slot->waiting, &session->peer_ip());
  }
  if (room && sessions_.size() > max_connections_) room = evict_oldest(waiting_, nullptr);
  if (!room) {
    ++refused_;
    const Refusal busy{503, "too many connections; try again shortly", {}};
    session->start(&busy);
    return;
  }
  session->start(nullptr);
}

bool HttpServer::Impl::evict_oldest(std::list<Session*>& waiting, const std::string* address) {
  Session* oldest = waiting.empty() ? nullptr : waiting.front();
  auto since = oldest != nullptr ? oldest->waiting_since() : SteadyClock::time_point::max();
  for (Session* session : sessions_) {
    if (address != nullptr && session->peer_ip() != *address) continue;
    if (auto rearmed = session->rearmed_since(); rearmed && *rearmed < since) {
      oldest = session;
      since = *rearmed;
    }
  }
  if (oldest == nullptr) return false;
  // Closed before it is counted, so a reader who sees the count sees the connection gone too.
  if (!oldest->close_if_rearmed()) oldest->close();
  ++evicted_;
  return true;
}

void HttpServer::Impl::close_all_but_serving() {
  std::vector<Session*> open(sessions_.begin(), sessions_.end());
  for (Session* session : open) {
    // Requests being served finish and their answers go out (each bounded by write_timeout);
    // the connections close after them.
    if (session->phase() != Session::Phase::kServing && session->phase() != Session::Phase::kSending) {
      session->close();
    } else {
      session->close_if_rearmed();  // answered, waiting for a request that will not be served
    }
  }
}

void HttpServer::Impl::bind_listener() {
  std::lock_guard lock(lifecycle_mutex_);
  if (state_ != State::kIdle) throw std::logic_error("HttpServer::bind: already started or stopped");
  if (acceptor_.is_open()) return;
  const std::string where = "cannot listen on " + options_.host + ":" + std::to_string(options_.port);
  beast::error_code failure;
  tcp::resolver resolver(io_);
  const auto endpoints =
      resolver.resolve(options_.host, std::to_string(options_.port),
                       tcp::resolver::passive | tcp::resolver::numeric_service, failure);
  if (failure) throw std::system_error(failure, where);
  failure = std::make_error_code(std::errc::address_not_available);
  for (const auto& entry : endpoints) {
    const tcp::endpoint endpoint = entry.endpoint();
    beast::error_code attempt;
    // Opened close-on-exec (Asio's own open is not): a program this process starts (a script, a
    // tool the embedding service runs) must not inherit the listening socket, or the port would
    // keep taking connections after stop() with nobody to accept them.
    const int fd = ::socket(endpoint.protocol().family(), SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP);
    if (fd < 0) {
      failure = beast::error_code(errno, beast::system_category());
      continue;
    }
    acceptor_.assign(endpoint.protocol(), fd, attempt);
    if (attempt) {
      ::close(fd);
      failure = attempt;
      continue;
    }
    // SO_REUSEADDR lets a restart bind while old connections sit in TIME_WAIT. Not
    // SO_REUSEPORT: with it a second server would bind a port in use and share its connections.
    acceptor_.set_option(tcp::acceptor::reuse_address(true), attempt);
    if (!attempt) acceptor_.bind(endpoint, attempt);
    if (!attempt) acceptor_.listen(tcp::acceptor::max_listen_connections, attempt);
    if (!attempt) {
      port_ = acceptor_.local_endpoint().port();
      return;
    }
    failure = attempt;
    beast::error_code ignored;
    acceptor_.close(ignored);
  }
  throw std::system_error(failure, where);
}

void HttpServer::Impl::start_serving() {
  {
    std::lock_guard lock(lifecycle_mutex_);
    if (state_ != State::kIdle) throw std::logic_error("HttpServer::start: already started");
  }
  bind_listener();
  std::lock_guard lock(lifecycle_mutex_);
  if (state_ != State::kIdle) throw std::logic_error("HttpServer::start: already started");
  max_connections_ = connection_room(std::max<std::size_t>(options_.max_connections, 1), options_.name);
  pool_ = std::make_unique<WorkerPool>(options_.worker_threads, options_.name);
  for (auto& lane : lanes_) lane->pool = std::make_unique<WorkerPool>(lane->options.threads, lane->name);
  keep_running_.emplace(io_.get_executor());
  accept_next();
  io_thread_ = start_io_thread(io_, options_.name);
  state_ = State::kRunning;
  spdlog::info("{}: listening on {}:{}", options_.name, options_.host, port_.load());
}

void HttpServer::Impl::stop_serving() noexcept {
  std::lock_guard lock(lifecycle_mutex_);
  if (state_ == State::kRunning) {
    stopping_ = true;
    net::post(io_, [this] {
      beast::error_code ignored;
      acceptor_.close(ignored);
      accept_pause_.cancel();
      close_all_but_serving();
    });
    // The I/O thread runs until the requests being served have been answered.
    keep_running_.reset();
    io_thread_.join();
    for (auto& lane : lanes_) lane->pool->shutdown();
    pool_->shutdown();
    spdlog::info("{}: stopped listening on port {}", options_.name, port_.load());
  } else if (acceptor_.is_open()) {
    beast::error_code ignored;
    acceptor_.close(ignored);
  }
  state_ = State::kStopped;
}

HttpServer::ConnectionStats HttpServer::Impl::stats() const {
  return {open_.load(), serving_.load(), evicted_.load(), refused_.load(), timed_out_.load()};
}

void HttpServer::Impl::write_error(Response& res, const ErrorInfo& error) const {
  ErrorResponse out = options_.error_formatter ? options_.error_formatter(error) : rest_error(error);
  write_json(res, std::move(out.body), out.status);
  if (error.retry_after_seconds > 0) res.set_header("Retry-After", std::to_string(error.retry_after_seconds));
}

HttpServer::HttpServer(HttpServerOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}

HttpServer::~HttpServer() = default;

void HttpServer::route(const std::string& method, const std::string& pattern, ParamHandler handler,
                       RouteOptions route_options) {
  impl_->add_route(method, pattern, std::move(handler), route_options);
}

namespace {
HttpServer::ParamHandler without_params(HttpServer::Handler handler) {
  return [handler = std::move(handler)](const Request& req, Response& res, const PathParams&) {
    handler(req, res);
  };
}
}  // namespace

void HttpServer::get(const std::string& pattern, Handler handler, RouteOptions route_options) {
  route("GET", pattern, without_params(std::move(handler)), route_options);
}

void HttpServer::post(const std::string& pattern, Handler handler, RouteOptions route_options) {
  route("POST", pattern, without_params(std::move(handler)), route_options);
}

void HttpServer::put(const std::string& pattern, Handler handler, RouteOptions route_options) {
  route("PUT", pattern, without_params(std::move(handler)), route_options);
}

void HttpServer::del(const std::string& pattern, Handler handler, RouteOptions route_options) {
  route("DELETE", pattern, without_params(std::move(handler)), route_options);
}

void HttpServer::fallback_get(Handler handler, RouteOptions route_options) {
  impl_->set_fallback(without_params(std::move(handler)), route_options);
}

void HttpServer::add_lane(const std::string& name, LaneOptions lane_options) {
  impl_->add_lane(name, std::move(lane_options));
}

std::vector<HttpServer::LaneStats> HttpServer::lane_stats() const { return impl_->lanes(); }

void HttpServer::bind() { impl_->bind_listener(); }

void HttpServer::start() { impl_->start_serving(); }

void HttpServer::stop() noexcept { impl_->stop_serving(); }

int HttpServer::port() const noexcept { return impl_->bound_port(); }

const HttpServerOptions& HttpServer::options() const noexcept { return impl_->opts(); }

HttpServer::ConnectionStats HttpServer::connection_stats() const { return impl_->stats(); }

void HttpServer::write_error(Response& res, const ErrorInfo& error) const {
  impl_->write_error(res, error);
}

void write_json(Response& res, std::string body, int status) {
  res.status = status;
  res.set_content(std::move(body), std::string(protocol::kJsonContentType));
}

bool access_token_matches(const Request& req, std::string_view expected) {
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
