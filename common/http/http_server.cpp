#include "common/http/http_server.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

#include <httplib.h>
#include <spdlog/spdlog.h>

#include "common/http/connection_stream.h"
#include "common/http/worker_pool.h"
#include "common/protocol/constants.h"
#include "common/protocol/protocol_error.h"

namespace cronwheel::common::http {
namespace {

// Descriptors kept free of connections for everything else the process opens (database
// connections, log files, outgoing HTTP).
constexpr std::size_t kReservedDescriptors = 256;

// What the request hooks (pre-routing, error handler) need of the request being served.
// cpp-httplib runs them on the worker serving the connection, inside process_request, so a
// thread-local pointer set around it reaches them.
struct ServingContext {
  Connection* connection = nullptr;
  ConnectionStream* stream = nullptr;
  // Set: answer this instead of running the route's handler (a lane refused the request).
  const ErrorInfo* refusal = nullptr;
  // cpp-httplib refused the request itself: what follows on the connection cannot be trusted.
  bool close_after = false;
};

thread_local ServingContext* tl_serving = nullptr;

const char* reason_phrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 411: return "Length Required";
    case 413: return "Payload Too Large";
    case 414: return "URI Too Long";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Error";
  }
}

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

// On every answer: a browser must take a JSON error (or anything else) for what its
// Content-Type says, never sniff it into a script or a page.
constexpr const char* kNoSniffHeader = "X-Content-Type-Options";

void reset_headers(Response& res) {
  res.headers.clear();
  res.set_header(kNoSniffHeader, "nosniff");
}

// The request as handlers see it, from cpp-httplib's reading of it and the body the reactor
// received.
Request to_request(const httplib::Request& req, std::string body) {
  Request request;
  request.method = req.method;
  request.target = req.target;
  request.path = req.path;
  request.params.insert(req.params.begin(), req.params.end());
  request.headers.insert(req.headers.begin(), req.headers.end());
  request.body = std::move(body);
  request.remote_addr = req.remote_addr;
  request.remote_port = req.remote_port;
  return request;
}

// Puts an answer into cpp-httplib's, which sends it: its headers replace those of the same name
// cpp-httplib set by default.
void deliver(Response&& answer, httplib::Response& res) {
  res.status = answer.status;
  for (const auto& [name, value] : answer.headers) res.headers.erase(name);
  for (auto& [name, value] : answer.headers) res.headers.emplace(name, std::move(value));
  res.body = std::move(answer.body);
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

}  // namespace

class HttpServer::Impl final : public httplib::Server {
 public:
  explicit Impl(HttpServerOptions options);
  ~Impl() override;

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
  ConnectionReactor::Stats stats() const;
  void write_error(Response& res, const ErrorInfo& error) const;

 private:
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

  ParamHandler wrap(ParamHandler handler) const;
  ConnectionReactor::Admission admit(const RequestHead& head) const;
  std::string render_refusal(const ConnectionReactor::Admission& refusal) const;
  RouteEntry make_entry(ParamHandler handler, const RouteOptions& route_options) const;
  const RouteEntry& entry_of(const Connection& connection) const;
  // Hands a complete request to a lane's thread or a worker.
  void dispatch(Connection* connection);
  // Serves the request on `connection` (answering `refusal` instead of running its handler
  // when set) and gives the connection back to the reactor.
  void serve_and_return(Connection* connection, const ErrorInfo* refusal = nullptr);
  void serve(Connection* connection, const ErrorInfo* refusal);
  ErrorInfo error_for_status(const httplib::Request& req, int status) const;
  HandlerResponse on_error(const httplib::Request& req, httplib::Response& res) const;

  const HttpServerOptions options_;
  RouteTable table_;
  std::vector<RouteEntry> routes_;  // by RouteTable index
  std::vector<std::unique_ptr<Lane>> lanes_;
  std::optional<RouteEntry> fallback_;  // fallback_get's, matched as kFallbackRoute
  std::atomic<int> port_{0};
  std::atomic<bool> stopping_{false};
  int listen_fd_ = -1;  // bound by bind_listener(), not yet served; under lifecycle_mutex_

  enum class State { kIdle, kRunning, kStopped };
  mutable std::mutex lifecycle_mutex_;  // serializes start/stop
  State state_ = State::kIdle;
  std::unique_ptr<WorkerPool> pool_;
  std::unique_ptr<ConnectionReactor> reactor_;
};

HttpServer::Impl::Impl(HttpServerOptions options) : options_(std::move(options)) {
  // Every request is dispatched here, before cpp-httplib's own routing: the reactor matched
  // the route when the head arrived, and the body is already in the connection's buffer.
  set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (tl_serving == nullptr) return HandlerResponse::Unhandled;
    Connection& connection = *tl_serving->connection;
    Response answer;
    if (tl_serving->refusal != nullptr) {
      write_error(answer, *tl_serving->refusal);
    } else {
      entry_of(connection).handler(to_request(req, tl_serving->stream->take_body()), answer, connection.match.params);
    }
    deliver(std::move(answer), res);
    // cpp-httplib would go on to answer byte ranges of any answer (a thousand ranges of a small
    // body make an answer a thousand times its size) and to compress it (brotli at its top level
    // costs a core most of a second for half a megabyte), for anyone who asks. Answers are sent
    // whole and as the handler made them: a handler that wants either reads the request's
    // headers itself, before this.
    auto& served = const_cast<httplib::Request&>(req);
    served.ranges.clear();
    served.headers.erase("Accept-Encoding");
    return HandlerResponse::Handled;
  });
  set_error_handler(HandlerWithResponse(
      [this](const httplib::Request& req, httplib::Response& res) { return on_error(req, res); }));
  // Routes are wrapped (see wrap()); this catches whatever escapes elsewhere in routing.
  set_exception_handler(
      [this](const httplib::Request& req, httplib::Response& res, std::exception_ptr error) {
        try {
          if (error) std::rethrow_exception(error);
        } catch (const std::exception& e) {
          spdlog::error("{}: {} {}: unhandled exception: {}", options_.name, req.method, req.path, e.what());
        } catch (...) {
          spdlog::error("{}: {} {}: unhandled non-standard exception", options_.name, req.method, req.path);
        }
        res.headers.clear();
        Response answer;
        reset_headers(answer);
        write_error(answer, {500, kInternalCode, "internal server error", ""});
        deliver(std::move(answer), res);
      });
  set_default_headers({{kNoSniffHeader, "nosniff"}});
  set_logger([this](const httplib::Request& req, const httplib::Response& res) {
    spdlog::debug("{}: {} {} -> {}", options_.name, req.method, req.path, res.status);
  });
  // Only used for the Keep-Alive response header; the reactor enforces them.
  set_keep_alive_max_count(std::max<std::size_t>(options_.keep_alive_max_count, 1));
  set_keep_alive_timeout(static_cast<time_t>(
      std::chrono::ceil<std::chrono::seconds>(options_.keep_alive_timeout).count()));
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

const HttpServer::Impl::RouteEntry& HttpServer::Impl::entry_of(const Connection& connection) const {
  return connection.match.route == kFallbackRoute ? *fallback_ : routes_[connection.match.route];
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

void HttpServer::Impl::dispatch(Connection* connection) {
  Lane* lane = entry_of(*connection).lane;
  if (lane == nullptr) {
    pool_->enqueue([this, connection] { serve_and_return(connection); });
    return;
  }
  // The lane's own bookkeeping uses a copy: the connection is not ours after give_back().
  std::string address = connection->peer_ip;
  if (!lane->enter(address)) {
    ++lane->refused_full;
    // A refusal costs no more than any small answer: a worker writes it.
    pool_->enqueue([this, connection, lane] { serve_and_return(connection, &lane->busy); });
    return;
  }
  const auto queued_at = std::chrono::steady_clock::now();
  lane->pool->enqueue([this, connection, lane, address = std::move(address), queued_at] {
    const bool late = std::chrono::steady_clock::now() - queued_at > lane->options.max_wait;
    if (late) ++lane->refused_late;
    serve(connection, late ? &lane->busy : nullptr);  // catches everything
    // Leave before the answer goes back: a client that sends its next request at once must
    // find the place free.
    lane->leave(address);
    ConnectionReactor::send_what_fits(*connection);
    reactor_->give_back(connection);
  });
}

void HttpServer::Impl::serve_and_return(Connection* connection, const ErrorInfo* refusal) {
  serve(connection, refusal);
  ConnectionReactor::send_what_fits(*connection);
  reactor_->give_back(connection);
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

ConnectionReactor::Admission HttpServer::Impl::admit(const RequestHead& head) const {
  ConnectionReactor::Admission admission;
  auto result = table_.match(head.method, head.path);
  if (result.match) {
    admission.max_body_bytes = routes_[result.match->route].max_body_bytes;
    admission.match = std::move(*result.match);
  } else if (fallback_ && result.allowed_methods.empty() && (head.method == "GET" || head.method == "HEAD")) {
    admission.max_body_bytes = fallback_->max_body_bytes;
    admission.match = RouteTable::Match{kFallbackRoute, {}};
  } else if (!result.allowed_methods.empty()) {
    admission.status = 405;
    admission.message = "method not allowed: " + head.method + " " + head.path;
    admission.allow = std::move(result.allowed_methods);
  } else {
    admission.status = 404;
    admission.message = "not found: " + head.method + " " + head.path;
  }
  return admission;
}

std::string HttpServer::Impl::render_refusal(const ConnectionReactor::Admission& refusal) const {
  ErrorInfo info{refusal.status, code_for(refusal.status), refusal.message, ""};
  ErrorResponse out = options_.error_formatter ? options_.error_formatter(info) : rest_error(info);
  std::string text = "HTTP/1.1 " + std::to_string(out.status) + " " + reason_phrase(out.status) + "\r\n";
  text += "Content-Type: ";
  text += protocol::kJsonContentType;
  text += "\r\nContent-Length: " + std::to_string(out.body.size()) + "\r\nConnection: close\r\n";
  text += std::string(kNoSniffHeader) + ": nosniff\r\n";
  if (!refusal.allow.empty()) {
    text += "Allow: ";
    for (std::size_t i = 0; i < refusal.allow.size(); ++i) text += (i > 0 ? ", " : "") + refusal.allow[i];
    text += "\r\n";
  }
  text += "\r\n";
  text += out.body;
  return text;
}

void HttpServer::Impl::serve(Connection* connection, const ErrorInfo* refusal) {
  ConnectionStream stream(*connection);
  ServingContext context{connection, &stream, refusal};
  tl_serving = &context;
  const bool last = connection->requests_served + 1 >= std::max<std::size_t>(options_.keep_alive_max_count, 1) ||
                    options_.keep_alive_timeout <= std::chrono::milliseconds::zero() || stopping_;
  bool connection_closed = false;
  bool ok = false;
  try {
    ok = process_request(stream, last, connection_closed, nullptr);
  } catch (const std::exception& e) {
    spdlog::error("{}: request failed: {}", options_.name, e.what());
  } catch (...) {
    spdlog::error("{}: request failed with a non-standard exception", options_.name);
  }
  tl_serving = nullptr;
  connection->close_after_output = !ok || connection_closed || last || context.close_after;
}

void HttpServer::Impl::bind_listener() {
  std::lock_guard lock(lifecycle_mutex_);
  if (state_ != State::kIdle) throw std::logic_error("HttpServer::bind: already started or stopped");
  if (listen_fd_ >= 0) return;
  int bound = 0;
  listen_fd_ = open_listener(options_.host, options_.port, bound);
  port_ = bound;
}

void HttpServer::Impl::start_serving() {
  std::lock_guard lock(lifecycle_mutex_);
  if (state_ != State::kIdle) throw std::logic_error("HttpServer::start: already started");

  int listen_fd = listen_fd_;
  listen_fd_ = -1;
  if (listen_fd < 0) {
    int bound = 0;
    listen_fd = open_listener(options_.host, options_.port, bound);
    port_ = bound;
  }

  ConnectionReactor::Options reactor_options;
  reactor_options.name = options_.name;
  reactor_options.head_timeout = options_.head_timeout;
  reactor_options.request_timeout = options_.request_timeout;
  reactor_options.read_timeout = options_.read_timeout;
  reactor_options.write_timeout = options_.write_timeout;
  reactor_options.keep_alive_timeout = options_.keep_alive_timeout;
  reactor_options.keep_alive_max_count = options_.keep_alive_max_count;
  reactor_options.max_connections = connection_room(std::max<std::size_t>(options_.max_connections, 1), options_.name);
  reactor_options.max_connections_per_address = std::max<std::size_t>(options_.max_connections_per_address, 1);
  reactor_options.head_limits.max_head_bytes = options_.max_head_bytes;
  reactor_options.head_limits.max_target_bytes = options_.max_target_bytes;

  pool_ = std::make_unique<WorkerPool>(options_.worker_threads, options_.name);
  for (auto& lane : lanes_) lane->pool = std::make_unique<WorkerPool>(lane->options.threads, lane->name);
  try {
    reactor_ = std::make_unique<ConnectionReactor>(
        reactor_options, listen_fd, [this](const RequestHead& head) { return admit(head); },
        [this](Connection* connection) { dispatch(connection); },
        [this](const ConnectionReactor::Admission& refusal) { return render_refusal(refusal); });
  } catch (...) {
    ::close(listen_fd);
    for (auto& lane : lanes_) lane->pool.reset();
    pool_.reset();
    throw;
  }
  reactor_->start();
  state_ = State::kRunning;
  spdlog::info("{}: listening on {}:{}", options_.name, options_.host, port_.load());
}

void HttpServer::Impl::stop_serving() noexcept {
  std::lock_guard lock(lifecycle_mutex_);
  if (listen_fd_ >= 0) {
    ::close(listen_fd_);
    listen_fd_ = -1;
  }
  if (state_ == State::kRunning) {
    stopping_ = true;
    reactor_->stop();  // waits for the requests being served and sends their answers
    for (auto& lane : lanes_) lane->pool->shutdown();
    pool_->shutdown();
    spdlog::info("{}: stopped listening on port {}", options_.name, port_.load());
  }
  state_ = State::kStopped;
}

ConnectionReactor::Stats HttpServer::Impl::stats() const {
  std::lock_guard lock(lifecycle_mutex_);
  return reactor_ ? reactor_->stats() : ConnectionReactor::Stats{};
}

ErrorInfo HttpServer::Impl::error_for_status(const httplib::Request& req, int status) const {
  switch (status) {
    case 400:
      return {400, kBadRequestCode, "malformed HTTP request", ""};
    case 404:
      return {404, kNotFoundCode, "not found: " + req.method + " " + req.path, ""};
    case 500:
      return {500, kInternalCode, "internal server error", ""};
    default:
      return {status, code_for(status), "HTTP error " + std::to_string(status), ""};
  }
}

httplib::Server::HandlerResponse HttpServer::Impl::on_error(const httplib::Request& req,
                                                            httplib::Response& res) const {
  if (!res.body.empty()) return HandlerResponse::Unhandled;  // a handler answered already
  if (res.status != 404 && tl_serving != nullptr) {
    // cpp-httplib rejected the request itself (a line it could not parse): what follows on the
    // connection cannot be trusted to start a new request.
    tl_serving->close_after = true;
    res.set_header("Connection", "close");
  }
  Response answer;
  write_error(answer, error_for_status(req, res.status));
  deliver(std::move(answer), res);
  return HandlerResponse::Handled;
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

ConnectionReactor::Stats HttpServer::connection_stats() const { return impl_->stats(); }

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
