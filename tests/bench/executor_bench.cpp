// The executor's trigger path, in one process: an Executor on 127.0.0.1 with a trivial handler,
// a counting admin taking the registrations and callbacks, and clients sending /run bodies as an
// XXL-JOB 2.4 admin does (keep-alive HttpClient, one per thread).
//
//  (a) latency from a /run request to its handler starting: the clock starts just before the
//      client sends the request (so it includes the client's send, loopback, the server's parse,
//      the dispatch, the run log's creation and the hand-over to the job thread) and stops at
//      the handler's first statement. One request at a time; p50/p99/max over --runs requests,
//      for a job whose thread is already running ("warm": the usual case for a recurring job)
//      and for a new job id each time (a job thread is started per run).
//  (b) sustained /run rate: K threads, each with its own keep-alive connection and job id, send
//      /run back to back for --seconds; counted are the answers with code 200 per second.
//      Every accepted run still has to execute (open its log, run, mark the log finished) and
//      be called back; the time the executor needed after the window to finish them all and
//      have every result accepted by the admin is reported too.
//
//   cmake --build build --target executor_bench && build/bin/executor_bench
//   build/bin/executor_bench --runs 5000 --seconds 5 --connections 1,4,8,16 --log-dir /dev/shm
//
// Every run creates its log file in the day's log directory (its end is a mode bit of that
// file), so how fast runs complete depends much on the file system: --log-dir says where.
//
// Not a test: no assertion on timing (shared machines are noisy); it fails only when a run is
// lost.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <spdlog/spdlog.h>

#include "common/http/http_client.h"
#include "common/http/http_server.h"
#include "common/http/xxl_job_call.h"
#include "common/protocol/messages.h"
#include "common/protocol/return_t.h"
#include "cronwheel/executor.h"
#include "tests/support/xxl_job_requests.h"

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using cronwheel::common::http::HttpClient;
using cronwheel::executor::Executor;
using cronwheel::executor::ExecutorOptions;
using cronwheel::executor::JobContext;
using cronwheel::testing::TriggerBody;

// An admin that only counts: it accepts registrations and callbacks as an XXL-JOB 2.4 admin
// does and keeps, per log id, how many callbacks arrived. Cheaper than the tests' FakeAdmin,
// which keeps every callback whole: the bench shares two cores with it.
class CountingAdmin {
 public:
  CountingAdmin() {
    cronwheel::common::http::HttpServerOptions o;
    o.host = "127.0.0.1";
    o.worker_threads = 4;
    o.error_formatter = cronwheel::common::http::xxl_job_error;
    o.name = "bench-admin";
    server_ = std::make_unique<cronwheel::common::http::HttpServer>(o);
    auto ok = [](const cronwheel::common::http::Request&, cronwheel::common::http::Response& res) {
      cronwheel::common::http::write_json(
          res, cronwheel::common::protocol::to_json_string(
                   cronwheel::common::protocol::ReturnT<std::string>::success()));
    };
    server_->post("/api/registry", ok);
    server_->post("/api/registryRemove", ok);
    server_->post("/api/callback", [this, ok](const cronwheel::common::http::Request& req, cronwheel::common::http::Response& res) {
      auto batch = cronwheel::common::protocol::parse<cronwheel::common::protocol::CallbackBatch>(req.body);
      {
        std::lock_guard lock(mutex_);
        for (const auto& c : batch.callbacks) {
          if (++count_[c.log_id] == 1) ++distinct_;
          ++total_;
        }
      }
      changed_.notify_all();
      ok(req, res);
    });
    server_->start();
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(server_->port()) + "/"; }

  // Waits until `distinct` log ids in all were called back, at most `timeout`.
  bool wait_distinct(std::size_t distinct, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return distinct_ >= distinct; });
  }
  bool wait_for(std::int64_t log_id, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return count_.contains(log_id); });
  }
  std::size_t distinct() {
    std::lock_guard lock(mutex_);
    return distinct_;
  }
  std::size_t total() {
    std::lock_guard lock(mutex_);
    return total_;
  }

 private:
  std::unique_ptr<cronwheel::common::http::HttpServer> server_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::unordered_map<std::int64_t, int> count_;
  std::size_t distinct_ = 0;
  std::size_t total_ = 0;
};

struct Settings {
  int runs = 2000;             // latency samples per variant (new-job variant: at most 500)
  double seconds = 3;          // throughput window per connection count
  std::vector<int> connections = {1, 4, 8};
  fs::path log_dir;  // default: a fresh directory under the system's temporary directory
};

// Handler start times by log id, for the latency runs.
class StartTimes {
 public:
  void record(std::int64_t log_id) {
    const auto now = Clock::now();
    std::lock_guard lock(mutex_);
    started_[log_id] = now;
    changed_.notify_all();
  }
  // The handler start of `log_id`, waiting for it at most 10 s.
  std::optional<Clock::time_point> wait(std::int64_t log_id) {
    std::unique_lock lock(mutex_);
    if (!changed_.wait_for(lock, 10s, [&] { return started_.contains(log_id); })) return std::nullopt;
    return started_[log_id];
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::unordered_map<std::int64_t, Clock::time_point> started_;
};

double micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const auto index = static_cast<std::size_t>(p * static_cast<double>(values.size() - 1) + 0.5);
  return values[std::min(index, values.size() - 1)];
}

struct LatencyResult {
  int samples = 0;
  double p50 = 0, p99 = 0, max = 0;          // request sent → handler started, µs
  double answer_p50 = 0, answer_p99 = 0;     // request sent → /run answered, µs
};

// One /run at a time; job ids from `job_id` (same id each time when !new_job_each_run).
// Each run is over (its result accepted by the admin) before the next is sent, as for a job
// fired once a second or less: otherwise a run would wait for the end of the one before on the
// job's thread, which is not what is measured here.
LatencyResult measure_latency(Executor& executor, CountingAdmin& admin, StartTimes& starts,
                              int runs, int job_id, bool new_job_each_run,
                              std::int64_t& next_log_id) {
  HttpClient client(executor.address());
  std::vector<double> to_start;
  std::vector<double> to_answer;
  for (int i = 0; i < runs; ++i) {
    TriggerBody t;
    t.job_id = new_job_each_run ? job_id + i : job_id;
    t.handler = "mark";
    t.log_id = ++next_log_id;
    const std::string body = t.body();
    const auto sent = Clock::now();
    auto answer = cronwheel::common::http::post_xxl_job<std::string>(client, "run", body);
    const auto answered = Clock::now();
    if (!answer.is_success()) {
      std::fprintf(stderr, "run %lld refused: %s\n", static_cast<long long>(t.log_id), answer.msg.c_str());
      std::exit(1);
    }
    auto started = starts.wait(t.log_id);
    if (!started) {
      std::fprintf(stderr, "run %lld never started\n", static_cast<long long>(t.log_id));
      std::exit(1);
    }
    to_start.push_back(micros(*started - sent));
    to_answer.push_back(micros(answered - sent));
    if (!admin.wait_for(t.log_id, 10s)) {
      std::fprintf(stderr, "run %lld was never called back\n", static_cast<long long>(t.log_id));
      std::exit(1);
    }
  }
  LatencyResult r;
  r.samples = runs;
  r.p50 = percentile(to_start, 0.50);
  r.p99 = percentile(to_start, 0.99);
  r.max = percentile(to_start, 1.0);
  r.answer_p50 = percentile(to_answer, 0.50);
  r.answer_p99 = percentile(to_answer, 0.99);
  return r;
}

struct ThroughputResult {
  int connections = 0;
  long accepted = 0;
  long refused = 0;
  double window_s = 0;
  double drain_s = 0;  // after the window, until every accepted run was called back
};

ThroughputResult measure_throughput(Executor& executor, CountingAdmin& admin, int connections,
                                    double seconds, std::atomic<long>& ran,
                                    std::int64_t& next_log_id) {
  const long ran_before = ran.load();
  const std::size_t distinct_before = admin.distinct();
  const std::size_t total_before = admin.total();
  std::atomic<long> accepted{0};
  std::atomic<long> refused{0};
  std::atomic<std::int64_t> log_ids{next_log_id};
  const auto start = Clock::now();
  const auto end = start + std::chrono::duration_cast<Clock::duration>(
                               std::chrono::duration<double>(seconds));
  std::vector<std::thread> threads;
  for (int c = 0; c < connections; ++c) {
    threads.emplace_back([&, c] {
      HttpClient client(executor.address());
      TriggerBody t;
      t.job_id = 100'000 + c;  // one job per connection: SERIAL queues do not serialize them all
      t.handler = "trivial";
      while (Clock::now() < end) {
        t.log_id = ++log_ids;
        auto answer = cronwheel::common::http::post_xxl_job<std::string>(client, "run", t.body());
        (answer.is_success() ? accepted : refused)++;
      }
    });
  }
  for (auto& t : threads) t.join();
  const auto window_end = Clock::now();
  next_log_id = log_ids.load();

  ThroughputResult r;
  r.connections = connections;
  r.accepted = accepted.load();
  r.refused = refused.load();
  r.window_s = std::chrono::duration<double>(window_end - start).count();
  const bool drained =
      admin.wait_distinct(distinct_before + static_cast<std::size_t>(r.accepted), 120s);
  r.drain_s = std::chrono::duration<double>(Clock::now() - window_end).count();
  const std::size_t called_back = admin.distinct() - distinct_before;
  const std::size_t received = admin.total() - total_before;
  if (!drained || ran.load() - ran_before != r.accepted ||
      called_back != static_cast<std::size_t>(r.accepted) || received != called_back) {
    std::fprintf(stderr, "runs lost or doubled: %ld accepted, %ld ran, %zu called back (%zu callbacks)\n",
                 r.accepted, ran.load() - ran_before, called_back, received);
    std::exit(1);
  }
  return r;
}

std::vector<int> parse_list(const char* text) {
  std::vector<int> out;
  std::string s(text);
  std::size_t start = 0;
  while (start <= s.size()) {
    const auto comma = s.find(',', start);
    out.push_back(std::atoi(s.substr(start, comma - start).c_str()));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Settings settings;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--runs") {
      settings.runs = std::max(1, std::atoi(argv[i + 1]));
    } else if (flag == "--seconds") {
      settings.seconds = std::max(0.1, std::atof(argv[i + 1]));
    } else if (flag == "--connections") {
      settings.connections = parse_list(argv[i + 1]);
    } else if (flag == "--log-dir") {
      settings.log_dir = argv[i + 1];
    } else {
      std::fprintf(stderr, "usage: executor_bench [--runs N] [--seconds S] [--connections K,...] [--log-dir DIR]\n");
      return 2;
    }
  }
  spdlog::set_level(spdlog::level::warn);

  // The run logs go to a directory of its own (removed at the end), under --log-dir if given.
  const fs::path dir = (settings.log_dir.empty() ? fs::temp_directory_path() : settings.log_dir) /
                       ("cronwheel-executor-bench-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  int max_connections = 1;
  for (int c : settings.connections) max_connections = std::max(max_connections, c);

  CountingAdmin admin;
  StartTimes starts;
  std::atomic<long> ran{0};
  {
    ExecutorOptions options;
    options.admin_addresses = {admin.url()};
    options.app_name = "executor-bench";
    options.listen_host = "127.0.0.1";
    options.listen_port = 0;
    options.log_dir = dir.string();
    // A keep-alive connection holds a server worker: one each, and a few to spare.
    options.http_threads = static_cast<std::size_t>(max_connections) + 4;
    // Runs as fast as one connection can send them, queued for one job: measured, not refused.
    options.max_queued_runs_per_job = 1'000'000;
    Executor executor(options);
    executor.handle("mark", [&starts](JobContext& ctx) { starts.record(ctx.log_id()); });
    executor.handle("trivial", [&ran](JobContext&) { ++ran; });
    executor.start();

    std::int64_t log_id = 0;
    // Warm-up: connections, first log directory, first job thread.
    measure_latency(executor, admin, starts, 50, 1, false, log_id);
    const auto warm = measure_latency(executor, admin, starts, settings.runs, 1, false, log_id);
    const auto fresh =
        measure_latency(executor, admin, starts, std::min(settings.runs, 500), 10'000, true, log_id);

    std::printf("executor_bench: %d latency samples per row, %.1f s throughput windows, %u cores, "
                "run logs in %s\n\n",
                settings.runs, settings.seconds, std::thread::hardware_concurrency(),
                dir.parent_path().c_str());
    std::printf("| /run → handler start (µs) | samples | p50 | p99 | max | /run answered p50 | p99 |\n");
    std::printf("|---|---:|---:|---:|---:|---:|---:|\n");
    auto row = [](const char* name, const LatencyResult& r) {
      std::printf("| %s | %d | %.0f | %.0f | %.0f | %.0f | %.0f |\n", name, r.samples, r.p50, r.p99,
                  r.max, r.answer_p50, r.answer_p99);
    };
    row("same job (thread running)", warm);
    row("new job id each run", fresh);

    std::printf("\n| connections | /run accepted per s | refused | window s | drain after window s | runs completed per s |\n");
    std::printf("|---:|---:|---:|---:|---:|---:|\n");
    for (int connections : settings.connections) {
      auto r = measure_throughput(executor, admin, connections, settings.seconds, ran, log_id);
      std::printf("| %d | %.0f | %ld | %.2f | %.2f | %.0f |\n", r.connections,
                  static_cast<double>(r.accepted) / r.window_s, r.refused, r.window_s, r.drain_s,
                  static_cast<double>(r.accepted) / (r.window_s + r.drain_s));
      std::fflush(stdout);
    }
    executor.stop();
  }
  fs::remove_all(dir);
  return 0;
}
