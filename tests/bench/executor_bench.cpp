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

#include <nlohmann/json.hpp>
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

std::int64_t epoch_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}
std::int64_t epoch_ms() { return epoch_us() / 1000; }

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
    // The registration's answer carries the admin's clock, as a cronwheel admin's does, so that
    // the executor estimates it and takes /lead.
    server_->post("/api/registry", [ok](const cronwheel::common::http::Request& req, cronwheel::common::http::Response& res) {
      const auto now = std::to_string(epoch_ms());
      res.set_header(cronwheel::common::protocol::kClockHeader, now + "," + now);
      ok(req, res);
    });
    server_->post("/api/registryRemove", ok);
    server_->post("/api/callback", [this, ok](const cronwheel::common::http::Request& req, cronwheel::common::http::Response& res) {
      auto batch = cronwheel::common::protocol::parse<cronwheel::common::protocol::CallbackBatch>(req.body);
      {
        std::lock_guard lock(mutex_);
        const auto now = epoch_us();
        for (const auto& c : batch.callbacks) {
          if (++count_[c.log_id] == 1) ++distinct_;
          ++total_;
          const auto i = c.log_id - watch_base_;
          if (i >= 0 && static_cast<std::size_t>(i) < watch_us_.size()) watch_us_[static_cast<std::size_t>(i)] = now;
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
  // From now on, the arrival time (epoch µs) of the callback of each log id in
  // [base, base + count) is kept for called_back_us().
  void watch(std::int64_t base, std::size_t count) {
    std::lock_guard lock(mutex_);
    watch_base_ = base;
    watch_us_.assign(count, 0);
  }
  std::vector<std::int64_t> called_back_us() {
    std::lock_guard lock(mutex_);
    return watch_us_;
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
  std::int64_t watch_base_ = 0;
  std::vector<std::int64_t> watch_us_;
};

struct Settings {
  int runs = 2000;             // latency samples per variant (new-job variant: at most 500)
  double seconds = 3;          // throughput window per connection count
  std::vector<int> connections = {1, 4, 8};
  fs::path log_dir;  // default: a fresh directory under the system's temporary directory
  std::vector<int> lead_rates = {10'000, 20'000};  // fires a second by /lead; empty: no lead rows
  int lead_jobs = 200;                               // job ids the lead fires are spread over
  int lead_connections = 2;
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

// Lead dispatch, as a cronwheel admin hands fires over: every second of the window, `rate` fires
// due at that second's instant (cron's granularity: a second's fires share one instant), spread
// over `jobs` job ids and handed over 500 ms ahead in /lead requests of at most kMaxLeadFires,
// sent over `connections` keep-alive connections. Measured: lateness from the instant to each
// handler's start, the requests' round trips, and runs completed (called back) per second.
struct LeadResult {
  int rate = 0;
  int jobs = 0;
  long fires = 0;
  long refused = 0;
  double late_min_ms = 0, late_p50_ms = 0, late_p99_ms = 0, late_max_ms = 0;  // instant → handler start
  double done_max_ms = 0;  // the worst second: its instant → its last callback at the admin
};

// Handler start lateness by log id for the lead rows: slots indexed from a base log id.
class LeadStarts {
 public:
  void reset(std::int64_t base_log_id, std::size_t count) {
    base_ = base_log_id;
    fire_at_us_.assign(count, 0);
    late_us_ = std::vector<std::atomic<std::int64_t>>(count);
  }
  void expect(std::int64_t log_id, std::int64_t fire_at_ms) {
    fire_at_us_[static_cast<std::size_t>(log_id - base_)] = fire_at_ms * 1000;
  }
  void record(std::int64_t log_id) {
    const auto now = epoch_us();
    const auto i = log_id - base_;
    if (i < 0 || static_cast<std::size_t>(i) >= late_us_.size()) return;
    late_us_[static_cast<std::size_t>(i)].store(now - fire_at_us_[static_cast<std::size_t>(i)] + 1);
  }
  // Lateness in ms of every fire started (0 for fires that did not start).
  std::vector<double> lateness_ms() const {
    std::vector<double> out;
    out.reserve(late_us_.size());
    for (const auto& l : late_us_) {
      const auto v = l.load();
      if (v != 0) out.push_back(static_cast<double>(v - 1) / 1000.0);
    }
    return out;
  }

 private:
  std::int64_t base_ = 0;
  std::vector<std::int64_t> fire_at_us_;
  std::vector<std::atomic<std::int64_t>> late_us_;
};

LeadResult measure_lead(Executor& executor, CountingAdmin& admin, LeadStarts& starts, int rate,
                        int jobs, int connections, double seconds, std::int64_t& next_log_id) {
  namespace protocol = cronwheel::common::protocol;
  const int whole_seconds = std::max(1, static_cast<int>(seconds + 0.5));
  const std::size_t total = static_cast<std::size_t>(rate) * static_cast<std::size_t>(whole_seconds);
  const std::int64_t base = next_log_id + 1;
  starts.reset(base, total);
  admin.watch(base, total);
  const std::size_t distinct_before = admin.distinct();

  // The first instant: the second boundary at least 1.5 s away.
  const std::int64_t first_instant = (epoch_ms() + 1500) / 1000 * 1000 + 1000;
  std::vector<std::string> bodies;  // the requests' fires (JSON arrays), second by second
  std::vector<std::size_t> bodies_of_second(static_cast<std::size_t>(whole_seconds) + 1, 0);
  std::int64_t log_id = base;
  for (int s = 0; s < whole_seconds; ++s) {
    const std::int64_t instant = first_instant + 1000LL * s;
    protocol::LeadRequest request;
    for (int i = 0; i < rate; ++i) {
      TriggerBody t;
      t.job_id = 200'000 + (i % jobs);
      t.handler = "lead";
      t.log_id = log_id++;
      starts.expect(t.log_id, instant);
      protocol::LeadFire fire;
      fire.fire_at = instant;
      fire.trigger = protocol::parse<protocol::TriggerParam>(t.body());
      request.fires.push_back(std::move(fire));
      if (request.fires.size() == protocol::kMaxLeadFires || i + 1 == rate) {
        bodies.push_back(nlohmann::json(request.fires).dump());  // adminTime is added when sent
        request.fires.clear();
      }
    }
    bodies_of_second[static_cast<std::size_t>(s) + 1] = bodies.size();
  }
  next_log_id = log_id - 1;

  // Senders: each second's requests go out 500 ms before its instant, split over the connections.
  std::atomic<long> accepted{0};
  std::atomic<long> refused{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < connections; ++c) {
    threads.emplace_back([&, c] {
      HttpClient client(executor.address());
      for (int s = 0; s < whole_seconds; ++s) {
        const std::int64_t hand_over = first_instant + 1000LL * s - 500;
        std::this_thread::sleep_for(std::chrono::milliseconds(std::max<std::int64_t>(0, hand_over - epoch_ms())));
        for (std::size_t b = bodies_of_second[static_cast<std::size_t>(s)] + static_cast<std::size_t>(c);
             b < bodies_of_second[static_cast<std::size_t>(s) + 1]; b += static_cast<std::size_t>(connections)) {
          const std::string body = "{\"adminTime\":" + std::to_string(epoch_ms()) +
                                   ",\"fires\":" + bodies[b] + "}";
          auto answer = cronwheel::common::http::post_xxl_job<protocol::LeadAnswer>(client, protocol::kLeadPath, body);
          if (!answer.is_success() || !answer.content) {
            std::fprintf(stderr, "/lead refused: %s\n", answer.msg.c_str());
            std::exit(1);
          }
          accepted += static_cast<long>(answer.content->accepted.size());
          refused += static_cast<long>(answer.content->refused.size());
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  const std::int64_t last_instant = first_instant + 1000LL * (whole_seconds - 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(std::max<std::int64_t>(0, last_instant - epoch_ms())));
  const bool drained =
      admin.wait_distinct(distinct_before + static_cast<std::size_t>(accepted.load()), 120s);
  if (!drained || refused.load() != 0 || admin.distinct() - distinct_before != total) {
    std::fprintf(stderr, "lead: %ld accepted, %ld refused, %zu called back of %zu\n", accepted.load(),
                 refused.load(), admin.distinct() - distinct_before, total);
    std::exit(1);
  }
  const auto late = starts.lateness_ms();
  if (late.size() != total) {
    std::fprintf(stderr, "lead: %zu of %zu fires started\n", late.size(), total);
    std::exit(1);
  }
  LeadResult r;
  r.rate = rate;
  r.jobs = jobs;
  r.fires = static_cast<long>(total);
  r.refused = refused.load();
  r.late_min_ms = percentile(late, 0.0);
  r.late_p50_ms = percentile(late, 0.50);
  r.late_p99_ms = percentile(late, 0.99);
  r.late_max_ms = percentile(late, 1.0);
  const auto done = admin.called_back_us();
  for (std::size_t i = 0; i < done.size(); ++i) {
    const auto instant_us = (first_instant + 1000LL * static_cast<std::int64_t>(i / static_cast<std::size_t>(rate))) * 1000;
    r.done_max_ms = std::max(r.done_max_ms, static_cast<double>(done[i] - instant_us) / 1000.0);
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
      settings.connections = std::string(argv[i + 1]) == "0" ? std::vector<int>{} : parse_list(argv[i + 1]);
    } else if (flag == "--log-dir") {
      settings.log_dir = argv[i + 1];
    } else if (flag == "--lead-rates") {
      settings.lead_rates = std::string(argv[i + 1]) == "0" ? std::vector<int>{} : parse_list(argv[i + 1]);
    } else if (flag == "--lead-jobs") {
      settings.lead_jobs = std::max(1, std::atoi(argv[i + 1]));
    } else if (flag == "--lead-connections") {
      settings.lead_connections = std::max(1, std::atoi(argv[i + 1]));
    } else {
      std::fprintf(stderr,
                   "usage: executor_bench [--runs N] [--seconds S] [--connections K,...] [--log-dir DIR]\n"
                   "                      [--lead-rates R,...|0] [--lead-jobs J] [--lead-connections C]\n");
      return 2;
    }
  }
  spdlog::set_level(spdlog::level::warn);

  // The run logs go to a directory of its own (removed at the end), under --log-dir if given.
  const fs::path dir = (settings.log_dir.empty() ? fs::temp_directory_path() : settings.log_dir) /
                       ("cronwheel-executor-bench-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  int max_connections = settings.lead_connections;
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
    LeadStarts lead_starts;
    executor.handle("lead", [&lead_starts](JobContext& ctx) { lead_starts.record(ctx.log_id()); });
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

    if (!settings.connections.empty()) std::printf("\n| connections | /run accepted per s | refused | window s | drain after window s | runs completed per s |\n");
    if (!settings.connections.empty()) std::printf("|---:|---:|---:|---:|---:|---:|\n");
    for (int connections : settings.connections) {
      auto r = measure_throughput(executor, admin, connections, settings.seconds, ran, log_id);
      std::printf("| %d | %.0f | %ld | %.2f | %.2f | %.0f |\n", r.connections,
                  static_cast<double>(r.accepted) / r.window_s, r.refused, r.window_s, r.drain_s,
                  static_cast<double>(r.accepted) / (r.window_s + r.drain_s));
      std::fflush(stdout);
    }

    if (!settings.lead_rates.empty()) {
      // /lead is taken once the executor has estimated the admin's clock (its first registration).
      std::this_thread::sleep_for(200ms);
      std::printf("\n| /lead: fires a second, all due at its instant | jobs | fires | instant → handler start min ms | p50 | p99 | max | instant → last result at the admin, worst second, ms | kept up |\n");
      std::printf("|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
      for (int rate : settings.lead_rates) {
        auto r = measure_lead(executor, admin, lead_starts, rate, settings.lead_jobs,
                              settings.lead_connections, settings.seconds, log_id);
        std::printf("| %d | %d | %ld | %.1f | %.1f | %.1f | %.1f | %.0f | %s |\n", r.rate, r.jobs, r.fires,
                    r.late_min_ms, r.late_p50_ms, r.late_p99_ms, r.late_max_ms, r.done_max_ms,
                    r.done_max_ms < 1000 ? "yes" : "no");
        std::fflush(stdout);
      }
    }
    executor.stop();
  }
  fs::remove_all(dir);
  return 0;
}
