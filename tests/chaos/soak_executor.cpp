// chaos_soak_executor: a service embedding the executor library, as a user's would, whose one
// handler leaves receipts that the soak (chaos_soak.cpp) checks against the run table.
//
//   chaos_soak_executor --admin URL[,URL...] --port P --log-dir DIR --receipts FILE [--token T]
//
// Handler "soak": appends "S <logId> <jobId> <pid> <epoch ms>" to FILE when the run starts, sleeps the
// job's parameter in milliseconds (stopping early when the run is stopped), then appends
// "E <logId> <pid> <epoch ms>" and returns success. Each line is one write(2) on a file opened O_APPEND, so
// lines of concurrent runs never interleave, and a line written is kept when the process is
// killed the next instant. A run whose "E" line exists ended successfully in the handler: its
// result must reach the run table as succeeded, however the executor dies afterwards (the
// result journal in DIR carries it over to the next process on DIR).
//
// Listens on 127.0.0.1:P only. SIGTERM or SIGINT stops it cleanly (Executor::stop()).
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <cronwheel/executor.h>

namespace {

using cronwheel::executor::Executor;
using cronwheel::executor::ExecutorOptions;
using cronwheel::executor::JobContext;

int receipts_fd = -1;

void append(const std::string& line) {
  const std::string text = line + "\n";
  if (::write(receipts_fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
    std::cerr << "chaos_soak_executor: cannot write a receipt: " << std::strerror(errno) << std::endl;
    std::_Exit(3);  // a receipt missing would be a false finding
  }
}

void soak(JobContext& ctx) {
  const std::string pid = std::to_string(::getpid());
  const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::system_clock::now().time_since_epoch());
  append("S " + std::to_string(ctx.log_id()) + " " + std::to_string(ctx.job_id()) + " " + pid + " " +
         std::to_string(now.count()));
  const int ms = std::atoi(ctx.params().c_str());
  if (ms > 0) {
    std::mutex mutex;
    std::condition_variable_any wake;
    std::unique_lock lock(mutex);
    wake.wait_for(lock, ctx.stop_token(), std::chrono::milliseconds(ms), [] { return false; });
    if (ctx.stop_requested()) return;  // reported killed by the executor, no "E": not a success
  }
  const auto end = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::system_clock::now().time_since_epoch());
  append("E " + std::to_string(ctx.log_id()) + " " + pid + " " + std::to_string(end.count()));
}

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  ExecutorOptions options;
  options.app_name = "chaos-soak";
  options.listen_host = "127.0.0.1";
  // The long soak keeps hundreds of jobs busy on one executor at once; the limits that bound a
  // careless user's triggers would refuse them.
  options.max_job_threads = 4096;
  options.max_queued_runs_per_job = 1024;
  // A registration every 2 s: the second carries the clock estimate, and with it the executor
  // says it takes lead dispatch, well before the soak's window.
  options.registry_interval = std::chrono::seconds(2);
  std::string receipts;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--admin") {
      options.admin_addresses = split(value);
    } else if (flag == "--port") {
      options.listen_port = std::atoi(value.c_str());
    } else if (flag == "--log-dir") {
      options.log_dir = value;
    } else if (flag == "--receipts") {
      receipts = value;
    } else if (flag == "--token") {
      options.access_token = value;
    } else {
      std::cerr << "chaos_soak_executor: unknown flag " << flag << "\n";
      return 2;
    }
  }
  if (options.admin_addresses.empty() || options.listen_port <= 0 || receipts.empty()) {
    std::cerr << "usage: chaos_soak_executor --admin URL[,URL] --port P --log-dir DIR --receipts FILE [--token T]\n";
    return 2;
  }
  receipts_fd = ::open(receipts.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (receipts_fd < 0) {
    std::cerr << "chaos_soak_executor: cannot open " << receipts << ": " << std::strerror(errno) << "\n";
    return 1;
  }

  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  try {
    Executor executor(options);
    executor.handle("soak", soak);
    executor.start();
    std::cout << "chaos soak executor at " << executor.address() << std::endl;
    int received = 0;
    sigwait(&signals, &received);
    executor.stop();
  } catch (const std::exception& e) {
    std::cerr << "chaos_soak_executor: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
