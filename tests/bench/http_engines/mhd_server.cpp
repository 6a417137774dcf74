// bench_service's routes on GNU libmicrohttpd (Debian's libmicrohttpd-dev, 0.9.75), with as
// much of HttpServer's behaviour as its options give:
//  - MHD_USE_EPOLL_INTERNAL_THREAD: one thread of MHD's reads requests and writes answers for
//    every connection;
//  - a complete request's connection is suspended (MHD_suspend_connection) and its handler run
//    on a fixed pool of kWorkerThreads (/slow on the lane's); the worker resumes the connection
//    (MHD_resume_connection) and MHD's thread queues the answer, so a slow handler holds no MHD
//    thread and a suspended connection does not time out;
//  - MHD_OPTION_CONNECTION_LIMIT and MHD_OPTION_PER_IP_CONNECTION_LIMIT: over either, the
//    newcomer is closed at once (MHD has no eviction of waiting connections, and no 503);
//  - MHD_OPTION_CONNECTION_TIMEOUT: one inactivity timeout (kHeadTimeout) for idle and for
//    reading; every byte restarts it, so a head or body trickling a byte at a time is never cut
//    (MHD has no deadline for a whole request);
//  - the request head is bounded by MHD's per-connection memory pool (32 KiB by default), the
//    route's body limit by this file (413 on the declared length, before reading it);
//  - TCP_NODELAY on every connection (set when MHD reports it started).
//
//   http_engine_mhd [port]     prints "listening on 127.0.0.1:<port>", stops on SIGTERM
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include <microhttpd.h>

#include "tests/bench/http_engines/bench_service.h"

namespace {

namespace engines = cronwheel::bench::http_engines;

struct Pools {
  engines::TaskPool workers{engines::kWorkerThreads};
  engines::TaskPool lane{engines::kLaneThreads, engines::kLaneMaxWaiting};
};

// One request, from its head to its answer (MHD's con_cls).
struct Exchange {
  engines::Route route = engines::Route::kNotFound;
  std::string body;
  bool too_large = false;
  bool dispatched = false;
  // Written by the worker before MHD_resume_connection, read by MHD's thread after it.
  std::optional<engines::Answer> answer;
};

MHD_Result queue(MHD_Connection* connection, const engines::Answer& answer) {
  MHD_Response* response =
      MHD_create_response_from_buffer(answer.body.size(), const_cast<char*>(answer.body.data()), MHD_RESPMEM_MUST_COPY);
  MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
  const MHD_Result queued = MHD_queue_response(connection, static_cast<unsigned>(answer.status), response);
  MHD_destroy_response(response);
  return queued;
}

MHD_Result on_request(void* cls, MHD_Connection* connection, const char* url, const char* method, const char*,
                      const char* upload_data, std::size_t* upload_data_size, void** con_cls) {
  auto* exchange = static_cast<Exchange*>(*con_cls);
  if (exchange == nullptr) {  // the head has arrived
    exchange = new Exchange;
    *con_cls = exchange;
    exchange->route = engines::find_route(method, url);
    const char* length = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (length != nullptr && std::strtoull(length, nullptr, 10) > engines::body_limit(exchange->route)) {
      return queue(connection, engines::error_answer(413, "payload_too_large", "request body too large"));
    }
    return MHD_YES;
  }
  if (*upload_data_size > 0) {  // a piece of the body
    if (exchange->body.size() + *upload_data_size > engines::body_limit(exchange->route)) {
      exchange->too_large = true;
    } else {
      exchange->body.append(upload_data, *upload_data_size);
    }
    *upload_data_size = 0;
    return MHD_YES;
  }
  // The whole request has arrived, or a worker has resumed the connection with its answer.
  if (exchange->answer) return queue(connection, *exchange->answer);
  if (exchange->too_large) {
    return queue(connection, engines::error_answer(413, "payload_too_large", "request body too large"));
  }
  if (exchange->dispatched) return MHD_YES;
  exchange->dispatched = true;
  auto* pools = static_cast<Pools*>(cls);
  auto& pool = engines::runs_on_lane(exchange->route) ? pools->lane : pools->workers;
  MHD_suspend_connection(connection);
  const bool taken = pool.try_submit([connection, exchange] {
    exchange->answer = engines::handle(exchange->route, exchange->body);
    MHD_resume_connection(connection);
  });
  if (!taken) {
    exchange->answer = engines::error_answer(503, "busy", "the server is busy; try again");
    MHD_resume_connection(connection);
  }
  return MHD_YES;
}

void on_completed(void*, MHD_Connection*, void** con_cls, MHD_RequestTerminationCode) {
  delete static_cast<Exchange*>(*con_cls);
  *con_cls = nullptr;
}

void on_connection(void*, MHD_Connection* connection, void**, MHD_ConnectionNotificationCode code) {
  if (code != MHD_CONNECTION_NOTIFY_STARTED) return;
  const MHD_ConnectionInfo* info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
  int on = 1;
  if (info != nullptr) ::setsockopt(info->connect_fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
}

}  // namespace

int main(int argc, char** argv) {
  engines::block_stop_signals();
  Pools pools;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(engines::listen_port(argc, argv)));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  MHD_Daemon* daemon = MHD_start_daemon(
      MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME, 0, nullptr, nullptr,
      &on_request, &pools,
      MHD_OPTION_SOCK_ADDR, reinterpret_cast<sockaddr*>(&address),
      MHD_OPTION_CONNECTION_LIMIT, static_cast<unsigned>(engines::kMaxConnections),
      MHD_OPTION_PER_IP_CONNECTION_LIMIT, static_cast<unsigned>(engines::kMaxConnectionsPerAddress),
      MHD_OPTION_CONNECTION_TIMEOUT, static_cast<unsigned>(engines::kHeadTimeout.count() / 1000),
      MHD_OPTION_NOTIFY_COMPLETED, &on_completed, nullptr,
      MHD_OPTION_NOTIFY_CONNECTION, &on_connection, nullptr,
      MHD_OPTION_END);
  if (daemon == nullptr) {
    std::fprintf(stderr, "libmicrohttpd did not start\n");
    return 1;
  }
  engines::announce(MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT)->port);
  engines::wait_for_stop_signal();
  // A bench server: the process ends without resuming suspended connections, which
  // MHD_stop_daemon would need first.
  std::_Exit(0);
}
