// The baseline of http_engine_load: bench_service's routes on common::http::HttpServer (Boost.Beast
// on Asio since this comparison chose them; before, an epoll loop of ours in front of
// cpp-httplib), with HttpServerOptions' defaults and /slow on a lane.
//
//   http_engine_cronwheel [port]     prints "listening on 127.0.0.1:<port>", stops on SIGTERM
#include <string>
#include <utility>

#include "common/http/http_server.h"
#include "tests/bench/http_engines/bench_service.h"

namespace engines = cronwheel::bench::http_engines;
using cronwheel::common::http::HttpServer;

namespace {

HttpServer::Handler serve(engines::Route route) {
  return [route](const cronwheel::common::http::Request& req, cronwheel::common::http::Response& res) {
    auto answer = engines::handle(route, req.body);
    res.status = answer.status;
    res.set_content(std::move(answer.body), "application/json");
  };
}

}  // namespace

int main(int argc, char** argv) {
  engines::block_stop_signals();
  cronwheel::common::http::HttpServerOptions options;
  options.host = "127.0.0.1";
  options.port = engines::listen_port(argc, argv);
  options.worker_threads = engines::kWorkerThreads;
  options.head_timeout = engines::kHeadTimeout;
  options.request_timeout = engines::kRequestTimeout;
  options.keep_alive_timeout = engines::kKeepAliveTimeout;
  options.write_timeout = engines::kWriteTimeout;
  options.keep_alive_max_count = engines::kKeepAliveMaxCount;
  options.max_body_bytes = engines::kMaxBodyBytes;
  options.max_head_bytes = engines::kMaxHeadBytes;
  options.max_connections = engines::kMaxConnections;
  options.max_connections_per_address = engines::kMaxConnectionsPerAddress;
  options.name = "baseline";
  HttpServer server(options);

  cronwheel::common::http::LaneOptions lane;
  lane.threads = engines::kLaneThreads;
  lane.max_waiting = engines::kLaneMaxWaiting;
  lane.max_per_address = engines::kLaneThreads + engines::kLaneMaxWaiting;  // as TaskPool: no share
  lane.max_wait = engines::kRequestTimeout;                                 // as TaskPool: no limit
  server.add_lane("slow", lane);

  server.get("/healthz", serve(engines::Route::kHealthz));
  server.post("/run", serve(engines::Route::kRun), {.max_body_bytes = engines::kRunMaxBodyBytes});
  server.get("/slow", serve(engines::Route::kSlow), {.lane = "slow"});
  server.start();
  engines::announce(server.port());
  engines::wait_for_stop_signal();
  server.stop();
  return 0;
}
