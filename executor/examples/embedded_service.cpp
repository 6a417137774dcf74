// cronwheel-example-service: a small service that embeds the cronwheel executor library.
//
// A service links `cronwheel::executor`, includes <cronwheel/executor.h> (standard library
// only), registers its handlers by name and starts the executor beside its own work. The admin
// then runs the handlers on schedule: a job of glue type BEAN whose JobHandler is
// "reportOrders" or "archiveOrders" calls the functions below in this process.
//
//   build/bin/cronwheel-example-service http://127.0.0.1:8080/ [listen-port]
//
// The app name is "example-orders" (create an executor group with that AppName in the console).
// The executor listens on 127.0.0.1:<listen-port> (default 9998) and registers there; SIGTERM or
// Ctrl-C stops it cleanly. Environment: CRONWHEEL_ACCESS_TOKEN when the admin has a token.
//
// What the handlers show:
//  - reportOrders: reads its parameter, writes to the run's log (readable from the console), and
//    fails with a message when the parameter is not what it expects.
//  - archiveOrders: long work split in steps; checks its stop token between steps, so a kill, a
//    timeout (executorTimeout) or the service stopping ends it promptly; under SHARDING_BROADCAST
//    routing each executor takes the orders whose id falls in its shard.
#include <signal.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <string>

#include <cronwheel/executor.h>

namespace {

using cronwheel::executor::Executor;
using cronwheel::executor::ExecutorOptions;
using cronwheel::executor::JobContext;

// Stands in for the service's own data.
constexpr int kOrderCount = 1000;

void report_orders(JobContext& ctx) {
  const std::string& day = ctx.params();
  if (day.size() != 10 || day.find_first_not_of("0123456789-") != std::string::npos) {
    ctx.fail("expected a day as the parameter (yyyy-MM-dd), got '" + day + "'");
    return;
  }
  ctx.log("building the order report for " + day);
  // What a workflow's next node reads as ${nodes.report.output.orders} (docs/workflows.md).
  ctx.set_output("{\"day\":\"" + day + "\",\"orders\":" + std::to_string(kOrderCount) + "}");
  ctx.succeed("report for " + day + " written");
}

void archive_orders(JobContext& ctx) {
  int archived = 0;
  std::mutex mutex;
  std::condition_variable_any pause;
  for (int order = 0; order < kOrderCount; ++order) {
    // Sharding: executor i of n takes the orders with order % n == i.
    if (order % ctx.shard_total() != ctx.shard_index()) continue;
    if (ctx.stop_requested()) {
      ctx.log("stopped after " + std::to_string(archived) + " orders");
      return;  // the executor reports the run as killed or timed out
    }
    ++archived;
    if (archived % 100 == 0) {
      ctx.log("archived " + std::to_string(archived) + " orders");
      // Pretend each batch takes a while; a wait on the stop token ends early on a stop.
      std::unique_lock lock(mutex);
      pause.wait_for(lock, ctx.stop_token(), std::chrono::milliseconds(200), [] { return false; });
    }
  }
  ctx.succeed("archived " + std::to_string(archived) + " orders (shard " +
              std::to_string(ctx.shard_index()) + " of " + std::to_string(ctx.shard_total()) + ")");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: cronwheel-example-service ADMIN_URL [LISTEN_PORT]\n";
    return 2;
  }
  // Taken by sigwait below; blocked before the executor starts its threads so they inherit it.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  ExecutorOptions options;
  options.admin_addresses = {argv[1]};
  options.app_name = "example-orders";
  options.listen_host = "127.0.0.1";
  options.listen_port = argc > 2 ? std::atoi(argv[2]) : 9998;
  options.log_dir = "example-service-logs";
  if (const char* token = std::getenv("CRONWHEEL_ACCESS_TOKEN")) options.access_token = token;

  try {
    Executor executor(options);
    executor.handle("reportOrders", report_orders);
    executor.handle("archiveOrders", archive_orders);
    executor.start();
    std::cout << "example-orders executor at " << executor.address() << ", admin " << argv[1]
              << std::endl;

    int received = 0;
    sigwait(&signals, &received);
    executor.stop();  // stops the runs, reports them, removes the registration
  } catch (const std::exception& e) {
    std::cerr << "cronwheel-example-service: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
