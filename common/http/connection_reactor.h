#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/http/request_head.h"
#include "common/http/route_table.h"

namespace cronwheel::common::http {

// One client connection. The reactor owns it, except while a worker serves its request
// (between ConnectionReactor's `serve` callback and give_back()): then only that worker touches
// the fields under "request" and "answer", and the reactor none.
struct Connection {
  int fd = -1;
  std::string peer_ip;
  int peer_port = 0;

  // request: the bytes received since the current request began, the complete head and body
  // first (head_bytes + body_bytes of them), then possibly the start of a pipelined next one.
  std::string input;
  std::size_t head_bytes = 0;  // 0 until the head has arrived
  std::size_t body_bytes = 0;
  RequestHead head;
  RouteTable::Match match;
  bool continue_sent = false;       // "100 Continue" already went out for this request
  std::size_t requests_served = 0;  // on this connection, before this one

  // answer: what the worker wrote; the worker sends what the socket takes at once, the reactor
  // the rest.
  std::string output;
  std::size_t output_sent = 0;
  bool close_after_output = false;  // the connection ends once `output` is sent

  // The reactor's own bookkeeping.
  enum class Phase { kReceiving, kServing, kSending, kLingering, kClosed };
  Phase phase = Phase::kReceiving;
  std::chrono::steady_clock::time_point deadline{};
  std::chrono::steady_clock::time_point request_started{};
  bool request_begun = false;  // a byte of the current request arrived
  std::size_t head_scanned = 0;
  std::size_t lingered_bytes = 0;
  std::uint32_t watched = 0;  // the epoll events registered; 0: not in the epoll set
  struct AddressSlot* address = nullptr;
  bool waiting = false;  // in the eviction lists below
  std::list<Connection*>::iterator waiting_pos;
  std::list<Connection*>::iterator address_pos;
};

struct AddressSlot {
  std::size_t connections = 0;
  std::list<Connection*> waiting;  // oldest first
};

// Binds and listens on host:port (port 0: the OS picks) with SO_REUSEADDR and a full backlog;
// the socket is non-blocking. Returns the socket and stores the bound port. Throws
// std::system_error naming host:port when it cannot.
int open_listener(const std::string& host, int port, int& bound_port);

// The connection side of HttpServer: one thread that accepts connections, receives every
// request whole (head and body) and sends every answer, so that no worker thread ever waits for
// a client. A worker gets a connection only once its request has fully arrived, runs the handler
// and hands the connection back with the answer written to Connection::output.
//
// What a client can and cannot hold:
//  - A connection waiting for its first bytes, trickling a head or a body, or idle between
//    kept-alive requests costs a socket and its buffered bytes, never a worker.
//  - The request head must be complete within head_timeout of the connection's first byte (of
//    accepting it, for a new connection); the whole request within request_timeout, with no
//    pause longer than read_timeout; an idle kept-alive connection is closed after
//    keep_alive_timeout. An answer that makes no progress for write_timeout is abandoned.
//  - Bodies larger than the route allows (`admit`) are refused with 413 before they are read.
//  - At most max_connections_per_address connections per client address and max_connections in
//    all: a connection over either limit makes room by closing the oldest connection of that
//    address (or of all) that is waiting for a request; when none is waiting, the new one is
//    answered 503 and closed. So a client holding hundreds of idle or slow connections loses
//    its oldest ones, and anyone connecting afresh gets in.
// Refusals the reactor answers itself (400, 404, 405, 408, 411, 413, 414, 431, 501, 503, 505)
// close the connection after the answer, reading and discarding what the client still sends
// for a moment so the answer is not lost to a reset.
//
// Threading: start() and stop() from any one thread; give_back() from workers; stats() from
// any thread. Callbacks run on the reactor thread.
class ConnectionReactor {
 public:
  struct Options {
    std::string name = "http";
    std::chrono::milliseconds head_timeout{10'000};
    std::chrono::milliseconds request_timeout{60'000};
    std::chrono::milliseconds read_timeout{10'000};
    std::chrono::milliseconds write_timeout{10'000};
    std::chrono::milliseconds keep_alive_timeout{15'000};  // zero: one request per connection
    std::size_t keep_alive_max_count = 1000;
    std::size_t max_connections = 4096;
    std::size_t max_connections_per_address = 256;
    HeadLimits head_limits;
  };

  // What to do with a request whose head has arrived.
  struct Admission {
    int status = 0;  // 0: serve it; otherwise refuse with this status and message
    std::string message;
    std::vector<std::string> allow;  // for 405: the methods the path takes
    std::size_t max_body_bytes = 0;
    RouteTable::Match match;
  };
  using Admit = std::function<Admission(const RequestHead&)>;
  // Hands a connection whose request is complete to a worker, which must call give_back().
  using Serve = std::function<void(Connection*)>;
  // The whole HTTP answer (status line, headers, body) for a refusal; it must say
  // "Connection: close".
  using RenderRefusal = std::function<std::string(const Admission&)>;

  struct Stats {
    std::size_t open = 0;     // connections now
    std::size_t serving = 0;  // of which with a worker or waiting for one
    std::uint64_t evicted = 0;    // closed to make room for a newer one
    std::uint64_t refused = 0;    // answered 503: no room
    std::uint64_t timed_out = 0;  // closed by a deadline
  };

  ConnectionReactor(Options options, int listen_fd, Admit admit, Serve serve, RenderRefusal render);
  ~ConnectionReactor();  // stop()

  ConnectionReactor(const ConnectionReactor&) = delete;
  ConnectionReactor& operator=(const ConnectionReactor&) = delete;

  void start();
  // Stops accepting (closing the listening socket), closes every connection that waits for a
  // request, lets requests being served finish and their answers go out (each bounded by
  // write_timeout), then joins the thread. Idempotent.
  void stop() noexcept;

  // From the worker serving `connection`, before give_back(): sends as much of its output as
  // the socket takes now, without waiting, so the answer need not wait for this thread. What
  // does not fit (or fails) is left to the reactor.
  static void send_what_fits(Connection& connection) noexcept;

  // From a worker: the request on `connection` was served; its answer is in `output`, the first
  // `output_sent` bytes of it sent already.
  void give_back(Connection* connection);

  Stats stats() const;

 private:
  using Clock = std::chrono::steady_clock;

  void run();
  void begin_stop();
  void accept_all(Clock::time_point now);
  void linger_read(Connection* c);
  void dispatch(Connection* c);
  bool evict_oldest(std::list<Connection*>& waiting);
  void on_event(Connection* c, std::uint32_t events);
  void receive(Connection* c);
  void advance(Connection* c);
  void send_pending(Connection* c);
  void after_sent(Connection* c);
  void take_returned();
  void sweep(Clock::time_point now);
  void refuse(Connection* c, const Admission& refusal);
  void start_lingering(Connection* c);
  void close_connection(Connection* c);
  void set_waiting(Connection* c, bool waiting);
  void watch(Connection* c, std::uint32_t events);
  void unwatch(Connection* c);

  const Options options_;
  int listen_fd_;
  const Admit admit_;
  const Serve serve_;
  const RenderRefusal render_;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  bool listening_ = true;  // the listening socket is in the epoll set
  Clock::time_point accept_paused_until_{};

  // Reactor thread only.
  std::unordered_map<Connection*, std::unique_ptr<Connection>> connections_;
  // Connections closed while handling the current batch of events, freed after it, so an event
  // of the same batch never reaches freed memory (or a new connection at the same address).
  std::vector<std::unique_ptr<Connection>> closed_;
  std::vector<char> scratch_;  // receive buffer
  std::unordered_map<std::string, AddressSlot> addresses_;
  std::list<Connection*> waiting_;  // every waiting connection, oldest first
  bool stopping_seen_ = false;

  std::mutex returned_mutex_;
  std::vector<Connection*> returned_;

  std::atomic<bool> stopping_{false};
  std::mutex lifecycle_mutex_;
  std::thread thread_;

  std::atomic<std::size_t> open_{0};
  std::atomic<std::size_t> serving_{0};
  std::atomic<std::uint64_t> evicted_{0};
  std::atomic<std::uint64_t> refused_{0};
  std::atomic<std::uint64_t> timed_out_{0};
};

}  // namespace cronwheel::common::http
