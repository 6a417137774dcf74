// bench_service's routes on Boost.Beast over Boost.Asio (Debian's libboost1.81-dev, header
// only), with the behaviour HttpServer promises:
//  - one I/O thread runs the io_context: it accepts, reads every request whole with
//    http::request_parser and writes every answer, all asynchronously; a connection costs a
//    socket and its buffer, never a thread;
//  - complete requests go to a fixed pool of kWorkerThreads (the /slow route to the lane's);
//    a handler never runs on the I/O thread, and its answer is posted back to it;
//  - deadlines by beast::tcp_stream::expires_*: kHeadTimeout for a new connection's head (from
//    accept) or a kept-alive one's (from its first byte), kRequestTimeout for head and body,
//    kKeepAliveTimeout idle between requests, kWriteTimeout for an answer. At a deadline
//    tcp_stream closes the socket: no 408 is sent (that would take a timer of our own);
//  - header_limit, and the route's body_limit set between the head and the body (413 on the
//    declared length before reading it);
//  - kMaxConnections in all and kMaxConnectionsPerAddress per client address: over either, the
//    oldest connection waiting for a request (of that address, or of all) is closed to make
//    room; with none waiting the newcomer is answered 503;
//  - TCP_NODELAY on every connection.
//
//   http_engine_beast [port]     prints "listening on 127.0.0.1:<port>", stops on SIGTERM
#include <chrono>
#include <cstdlib>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "tests/bench/http_engines/bench_service.h"

namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
namespace engines = cronwheel::bench::http_engines;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;

class Server;

// One connection. Lives as long as an asynchronous operation (or a worker's task) holds it;
// every member is touched on the I/O thread only (a worker only runs the handler and posts).
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, Server& server, std::string address)
      : stream_(std::move(socket)), server_(server), address_(std::move(address)), accepted_(Clock::now()) {}
  ~Session();

  void start() { wait_for_request(); }
  // Closes the connection at once: the server needs its place.
  void evict();

  bool waiting() const { return waiting_; }
  const std::string& address() const { return address_; }
  std::list<Session*>::iterator position;  // in Server::sessions_
  bool registered = true;

 private:
  void wait_for_request();
  void read_head();
  void on_head(beast::error_code ec);
  void on_request(engines::Route route, beast::error_code ec);
  void dispatch(engines::Route route);
  void write(engines::Answer answer, bool keep_alive);

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  Server& server_;
  std::string address_;
  Clock::time_point accepted_;
  Clock::time_point request_started_;
  std::size_t served_ = 0;
  bool waiting_ = true;  // between requests: no byte of the next one yet
};

class Server {
 public:
  Server(net::io_context& io, int port)
      : acceptor_(io, tcp::endpoint(net::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port))),
        workers_(engines::kWorkerThreads),
        lane_(engines::kLaneThreads, engines::kLaneMaxWaiting) {}

  int port() const { return acceptor_.local_endpoint().port(); }
  void accept();

  engines::TaskPool& pool_for(engines::Route route) { return engines::runs_on_lane(route) ? lane_ : workers_; }

  void add(Session& session) {
    session.position = sessions_.insert(sessions_.end(), &session);
    ++per_address_[session.address()];
  }
  void remove(Session& session) {
    sessions_.erase(session.position);
    if (--per_address_[session.address()] == 0) per_address_.erase(session.address());
    session.registered = false;
  }

 private:
  // Closes the oldest waiting connection (of `address`, or of any when empty); false if none.
  bool evict_oldest_waiting(const std::string& address) {
    for (Session* session : sessions_) {
      if (session->waiting() && (address.empty() || session->address() == address)) {
        session->evict();
        return true;
      }
    }
    return false;
  }
  bool make_room(const std::string& address) {
    auto it = per_address_.find(address);
    if (it != per_address_.end() && it->second >= engines::kMaxConnectionsPerAddress &&
        !evict_oldest_waiting(address)) {
      return false;
    }
    return sessions_.size() < engines::kMaxConnections || evict_oldest_waiting({});
  }

  tcp::acceptor acceptor_;
  std::list<Session*> sessions_;  // oldest first
  std::unordered_map<std::string, std::size_t> per_address_;
  engines::TaskPool workers_;
  engines::TaskPool lane_;
};

Session::~Session() {
  if (registered) server_.remove(*this);
}

void Session::evict() {
  server_.remove(*this);
  stream_.close();  // the pending read completes with operation_aborted, ending the session
}

void Session::wait_for_request() {
  waiting_ = true;
  parser_.emplace();
  parser_->header_limit(static_cast<std::uint32_t>(engines::kMaxHeadBytes));
  if (buffer_.size() > 0) return read_head();  // pipelined: the next request has begun
  if (served_ == 0) {
    stream_.expires_at(accepted_ + engines::kHeadTimeout);
  } else {
    stream_.expires_after(engines::kKeepAliveTimeout);
  }
  stream_.async_read_some(buffer_.prepare(4096), [self = shared_from_this()](beast::error_code ec, std::size_t n) {
    if (ec) return;  // closed, timed out or evicted
    self->buffer_.commit(n);
    self->read_head();
  });
}

void Session::read_head() {
  waiting_ = false;
  request_started_ = served_ == 0 ? accepted_ : Clock::now();
  stream_.expires_at(request_started_ + engines::kHeadTimeout);
  http::async_read_header(stream_, buffer_, *parser_,
                          [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_head(ec); });
}

void Session::on_head(beast::error_code ec) {
  if (ec == http::error::header_limit) {
    return write(engines::error_answer(431, "head_too_large", "request head too large"), false);
  }
  if (ec == beast::error::timeout || ec == net::error::operation_aborted || ec == http::error::end_of_stream) return;
  if (ec) return write(engines::error_answer(400, "bad_request", "malformed request"), false);

  const auto& head = parser_->get();
  std::string_view target = head.target();
  const engines::Route route = engines::find_route(head.method_string(), target.substr(0, target.find('?')));
  const std::size_t limit = engines::body_limit(route);
  if (const auto length = parser_->content_length(); length && *length > limit) {
    return write(engines::error_answer(413, "payload_too_large", "request body too large"), false);
  }
  parser_->body_limit(limit);
  if (parser_->is_done()) return dispatch(route);
  stream_.expires_at(request_started_ + engines::kRequestTimeout);
  http::async_read(stream_, buffer_, *parser_,
                   [self = shared_from_this(), route](beast::error_code ec, std::size_t) { self->on_request(route, ec); });
}

void Session::on_request(engines::Route route, beast::error_code ec) {
  if (ec == http::error::body_limit) {
    return write(engines::error_answer(413, "payload_too_large", "request body too large"), false);
  }
  if (ec) return;
  dispatch(route);
}

void Session::dispatch(engines::Route route) {
  stream_.expires_never();  // the handler's time is not the client's
  const bool keep_alive = parser_->get().keep_alive() && ++served_ < engines::kKeepAliveMaxCount;
  auto task = [self = shared_from_this(), route, body = parser_->release().body(), keep_alive]() mutable {
    engines::Answer answer = engines::handle(route, body);
    auto executor = self->stream_.get_executor();
    // The posted handler takes the only reference: the session ends on the I/O thread.
    net::post(executor, [self = std::move(self), answer = std::move(answer), keep_alive]() mutable {
      self->write(std::move(answer), keep_alive);
    });
  };
  if (!server_.pool_for(route).try_submit(std::move(task))) {
    write(engines::error_answer(503, "busy", "the server is busy; try again"), keep_alive);
  }
}

void Session::write(engines::Answer answer, bool keep_alive) {
  auto response = std::make_shared<http::response<http::string_body>>(static_cast<http::status>(answer.status), 11);
  response->set(http::field::content_type, "application/json");
  response->keep_alive(keep_alive);
  response->body() = std::move(answer.body);
  response->prepare_payload();
  stream_.expires_after(engines::kWriteTimeout);
  http::async_write(stream_, *response, [self = shared_from_this(), response](beast::error_code ec, std::size_t) {
    if (ec) return;
    if (!response->keep_alive()) {
      self->stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
      return;
    }
    self->wait_for_request();
  });
}

void Server::accept() {
  acceptor_.async_accept([this](beast::error_code ec, tcp::socket socket) {
    if (!ec) {
      socket.set_option(tcp::no_delay(true), ec);
      std::string address = socket.remote_endpoint(ec).address().to_string();
      if (!ec && make_room(address)) {
        auto session = std::make_shared<Session>(std::move(socket), *this, std::move(address));
        add(*session);
        session->start();
      } else if (!ec) {
        // An empty send buffer takes this at once; the socket then closes.
        static const std::string kBusy = [] {
          const auto busy = engines::error_answer(503, "busy", "too many connections; try again");
          return "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nConnection: close\r\n"
                 "Content-Length: " + std::to_string(busy.body.size()) + "\r\n\r\n" + busy.body;
        }();
        net::write(socket, net::buffer(kBusy), ec);
      }
    }
    accept();
  });
}

}  // namespace

int main(int argc, char** argv) {
  engines::block_stop_signals();
  net::io_context io(1);
  Server server(io, engines::listen_port(argc, argv));
  server.accept();
  std::thread io_thread([&io] { io.run(); });
  engines::announce(server.port());
  engines::wait_for_stop_signal();
  // A bench server: the process ends without draining its connections.
  std::_Exit(0);
}
