// The chaos soak: a cronwheel cluster under steady load while its parts fail, and the proof
// afterwards that no fire was lost, repeated or left stuck.
//
// It runs N real cronwheel-admin processes on one PostgreSQL (started by tests/chaos/soak.sh) and
// M executors (chaos_soak_executor: the executor library embedded in a service, each leaving a
// receipt per run). J jobs fire every second (`* * * * * ?`, ROUND routing, no retries), each run
// sleeping 0-300 ms in its handler. During a window of S scheduled seconds, every --fault-every
// seconds it does the next of these faults, in turn:
//
//   admin-kill     SIGKILL an admin; restart it 2 s later with the same node id and port
//   pg-restart     restart PostgreSQL in immediate mode (a crash: connections cut, WAL replayed)
//   executor-kill  SIGKILL an executor (runs in flight die with it); restart it 1 s later on the
//                  same port and log directory (its result journal)
//   admin-stop     SIGSTOP an admin for its lease + 2 s (the others take its fires over), then
//                  SIGCONT: it must not send what it no longer owns
//   pg-failover    (only when asked for; tests/chaos/failover.sh) the primary PostgreSQL crashes
//                  and its streaming standby is promoted; the admins' multi-host URL
//                  (target_session_attrs=read-write) finds the new primary
//
// Then it waits for every run of the window to end and checks, per (job, scheduled second) of
// the window:
//   - exactly one run row (none missing, none twice), and none left pending, sending or running;
//   - at most one start receipt per run at the executors (no fire ran twice);
//   - a run that ended in the handler ("E" receipt) is `succeeded` in the run table: no result
//     lost, even when its executor was killed before it delivered it;
//   - a succeeded run has its start and end receipts: nothing recorded that did not run;
//   - a run that failed or was lost was on an executor while it was killed (or sent to it while
//     it was down), and a fire skipped by the misfire rule (more than 5 s late) was due while an
//     admin or the database was down: any other failure or skip is a finding.
// It prints what it did and found, one machine-readable line (CHAOS_SOAK_JSON {...}), and exits 0
// only when every check passed; 1 when one failed; 2 on a usage error or when the cluster could
// not be set up.
//
// Loopback only. Everything it starts it stops by pid; it never waits unboundedly (each wait has
// its bound, the whole run about S + 3 min at most).
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <httplib.h>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "tests/support/api_session.h"
#include "tests/support/process.h"
#include "tests/support/wall_time.h"

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using nlohmann::json;
using cronwheel::testing::Api;
using cronwheel::testing::Process;
using cronwheel::testing::in_parallel;
using cronwheel::testing::now_ms;
using cronwheel::testing::sleep_until_ms;

constexpr const char* kPassword = "chaos-soak-password";
constexpr const char* kToken = "chaos-soak-token";
constexpr int kMaxHandlerMs = 300;

struct Settings {
  std::string db_url;
  std::string pg_restart_cmd;   // a shell command that restarts PostgreSQL in immediate mode
  std::string pg_failover_cmd;  // a shell command that fails the primary over to its standby
  std::string admin_bin = std::string(CRONWHEEL_BIN_DIR) + "/cronwheel-admin";
  std::string executor_bin = std::string(CRONWHEEL_BIN_DIR) + "/chaos_soak_executor";
  std::string work_dir;
  int admins = 2;
  int executors = 3;
  int jobs = 200;
  int seconds = 90;
  int warmup = 10;
  int fault_every = 10;
  std::vector<std::string> faults = {"admin-kill", "pg-restart", "executor-kill", "admin-stop"};
  // Shorter than the misfire threshold (5 s): the fires of a node that stops are taken over while
  // still on time and sent. With a longer lease (the default is 15 s) they would be later than
  // the threshold when taken over, and a DO_NOTHING job skips them (recorded `cancelled`).
  int lease_ms = 3000;
  int drain = 120;
  bool lead_dispatch = true;  // the admins hand fires over ahead to executors that take it
};

[[noreturn]] void fail(const std::string& why) { throw std::runtime_error(why); }

// A node of the cluster died on its own: a finding, not a setup problem.
struct Finding : std::runtime_error {
  using std::runtime_error::runtime_error;
};

double since_s(std::int64_t from, std::int64_t at) { return static_cast<double>(at - from) / 1000.0; }

// A port free on 127.0.0.1 now, for a process that must come back at the same address.
int fixed_port() {
  const int port = cronwheel::testing::free_port();
  if (port == 0) fail("no free port on 127.0.0.1");
  return port;
}

std::string tail_of(const std::string& text, std::size_t n = 3000) {
  return text.size() <= n ? text : "..." + text.substr(text.size() - n);
}

// One process of the cluster (an admin or an executor) that the soak kills, pauses and restarts
// at a fixed port; each incarnation's output goes to its own files under the work directory.
class Node {
 public:
  Node(std::string name, std::vector<std::string> argv, std::vector<std::string> env, fs::path out_dir,
       std::string ready_text)
      : name_(std::move(name)), argv_(std::move(argv)), env_(std::move(env)), out_dir_(std::move(out_dir)),
        ready_text_(std::move(ready_text)) {}

  ~Node() {
    if (process_ && paused_) process_->signal(SIGCONT);
    save_output();
  }

  const std::string& name() const { return name_; }

  void start() {
    save_output();
    ++incarnation_;
    process_.reset();
    process_ = std::make_unique<Process>(argv_, env_);
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    while (process_->out().find(ready_text_) == std::string::npos) {
      if (!process_->running()) fail(name_ + " exited at start:\n" + tail_of(process_->out() + process_->err()));
      if (std::chrono::steady_clock::now() > deadline) fail(name_ + " not ready within 60 s");
      std::this_thread::sleep_for(20ms);
    }
  }

  void kill() {
    if (paused_) resume();
    process_->signal(SIGKILL);
    process_->wait_for_exit(10s);
  }
  void pause() {
    process_->signal(SIGSTOP);
    paused_ = true;
  }
  void resume() {
    process_->signal(SIGCONT);
    paused_ = false;
  }

  // SIGTERM, then SIGKILL after `timeout`: the exit code of a clean stop (0), else what it was.
  int stop(std::chrono::seconds timeout) {
    if (!process_) return 0;
    if (paused_) resume();
    process_->signal(SIGTERM);
    int code = process_->wait_for_exit(timeout);
    if (code == -1) {
      process_->signal(SIGKILL);
      process_->wait_for_exit(10s);
      return -1;
    }
    return code;
  }

  // Keeps the current incarnation's output as <out_dir>/<name>.<incarnation>.log (the process's
  // own capture files go with it).
  void save_output() const {
    if (!process_) return;
    std::ofstream(out_dir_ / (name_ + "." + std::to_string(incarnation_) + ".log")) << output();
  }

  // Whether the current incarnation is alive (a paused one is).
  bool running() { return process_ && process_->running(); }
  std::string output() const { return process_ ? process_->out() + process_->err() : ""; }

 private:
  std::string name_;
  std::vector<std::string> argv_;
  std::vector<std::string> env_;
  fs::path out_dir_;
  std::string ready_text_;
  std::unique_ptr<Process> process_;
  int incarnation_ = 0;
  bool paused_ = false;
};

struct Fault {
  std::string kind;
  std::string target;  // node name, or "postgresql"
  std::int64_t from_ms = 0;
  std::int64_t to_ms = 0;  // back (restarted, resumed)
  std::string address;     // executor-kill: the executor's address
};

struct Row {
  std::int64_t id = 0;
  std::int64_t job_id = 0;
  std::int64_t scheduled_ms = 0;
  std::string state;
  std::string trigger_type;
  std::string address;
  std::int64_t trigger_ms = 0;  // 0: never sent
  std::string message;          // trigger_msg / handle_msg, for the report
  bool led = false;             // handed over ahead of its instant (lead dispatch)
};

struct Receipts {
  std::map<std::int64_t, int> starts;                 // log id -> start receipts
  std::map<std::int64_t, std::int64_t> start_job;     // log id -> job id of its start receipt
  std::map<std::int64_t, std::int64_t> started_at;    // log id -> when its handler started (epoch ms)
  std::map<std::int64_t, std::int64_t> ended_at;      // log ids that ended in the handler -> when
};

class Soak {
 public:
  explicit Soak(Settings s) : s_(std::move(s)) {}

  int run() {
    fs::create_directories(s_.work_dir);
    start_cluster();
    create_jobs();
    std::int64_t first = now_ms();
    from_ = (first + 999) / 1000 * 1000 + static_cast<std::int64_t>(s_.warmup) * 1000;
    to_ = from_ + static_cast<std::int64_t>(s_.seconds) * 1000;
    std::printf("window: %d scheduled seconds from %lld, %d jobs (%d fires), a fault every %d s\n", s_.seconds,
                static_cast<long long>(from_), s_.jobs, s_.jobs * s_.seconds, s_.fault_every);
    std::fflush(stdout);
    inject_faults();
    sleep_until_ms(to_);
    std::printf("window over; waiting for its runs to end (at most %d s)\n", s_.drain);
    std::fflush(stdout);
    const bool drained = drain(to_ + static_cast<std::int64_t>(s_.drain) * 1000);
    const int stop_problems = stop_cluster();
    return check(drained, stop_problems);
  }

  // Stops whatever still runs (after a setup failure): bounded.
  void stop_all() noexcept {
    for (auto& e : executors_) e->stop(15s);
    for (auto& a : admins_) a->stop(30s);
  }

 private:
  std::string admin_url(std::size_t i) const { return "http://127.0.0.1:" + std::to_string(admin_ports_[i]) + "/"; }
  std::string executor_address(std::size_t i) const {
    return "http://127.0.0.1:" + std::to_string(executor_ports_[i]) + "/";
  }

  void start_cluster() {
    const fs::path out = fs::path(s_.work_dir) / "output";
    fs::create_directories(out);
    for (int i = 0; i < s_.admins; ++i) admin_ports_.push_back(fixed_port());
    for (int i = 0; i < s_.admins; ++i) {
      const std::string node = "chaos-" + std::to_string(i + 1);
      std::vector<std::string> argv{s_.admin_bin, "--listen", "127.0.0.1:" + std::to_string(admin_ports_[static_cast<std::size_t>(i)]),
                                    "--db-url", s_.db_url, "--db-wait", "60", "--node-id", node,
                                    "--access-token", kToken,
                                    "--heartbeat-ms", std::to_string(std::max(100, s_.lease_ms / 5)),
                                    "--lease-ms", std::to_string(s_.lease_ms),
                                    "--lost-check-ms", "1000", "--lost-ask-after-ms", "5000",
                                    "--run-retention-days", "0",
                                    "--lead-dispatch", s_.lead_dispatch ? "true" : "false"};
      admins_.push_back(std::make_unique<Node>(node, argv, std::vector<std::string>{std::string("CRONWHEEL_ADMIN_PASSWORD=") + kPassword},
                                               out, "listening on"));
      admins_.back()->start();  // one at a time: the first applies the migrations
    }
    std::string admin_list;
    for (std::size_t i = 0; i < admins_.size(); ++i) admin_list += (i ? "," : "") + admin_url(i);
    for (int i = 0; i < s_.executors; ++i) {
      const int port = fixed_port();
      executor_ports_.push_back(port);
      const fs::path dir = fs::path(s_.work_dir) / ("executor-" + std::to_string(i + 1));
      fs::create_directories(dir);
      receipt_files_.push_back(dir / "receipts.txt");
      std::vector<std::string> argv{s_.executor_bin, "--admin", admin_list, "--port", std::to_string(port),
                                    "--log-dir", (dir / "logs").string(), "--receipts", receipt_files_.back().string(),
                                    "--token", kToken};
      executors_.push_back(std::make_unique<Node>("executor-" + std::to_string(i + 1), argv,
                                                  std::vector<std::string>{}, out, "chaos soak executor at"));
      executors_.back()->start();
    }
    for (std::size_t i = 0; i < admins_.size(); ++i) {
      apis_.emplace_back(admin_ports_[i]);
      apis_.back().login("admin", kPassword);
    }
    std::printf("cluster: %d admins (lease %d ms), %d executors, PostgreSQL at %s\n", s_.admins, s_.lease_ms,
                s_.executors, s_.db_url.c_str());
  }

  void create_jobs() {
    auto client = apis_[0].client();
    // Automatic registration: the group's addresses are the executors that registered, as a
    // restarted executor registers again at once.
    auto g = apis_[0].post(*client, "groups", {{"appName", "chaos-soak"}, {"title", "chaos soak"}, {"addressType", 0}});
    if (g.status != 201) fail("cannot create the group: " + std::to_string(g.status) + " " + g.text);
    group_id_ = g.body.value("id", std::int64_t{0});
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    while (true) {
      auto r = apis_[0].get(*client, "groups/" + std::to_string(group_id_));
      const json list = r.body.is_object() ? r.body.value("addressList", json::array()) : json::array();
      const std::size_t seen = list.is_array() ? list.size() : 0;
      if (seen >= static_cast<std::size_t>(s_.executors)) break;
      if (std::chrono::steady_clock::now() > deadline) fail("the executors did not register within 60 s: " + r.text);
      std::this_thread::sleep_for(500ms);
    }
    job_ids_.assign(static_cast<std::size_t>(s_.jobs), 0);
    in_parallel(apis_, 4, s_.jobs, [&](const Api& api, httplib::Client& c, int i) {
      json body = {{"jobGroup", group_id_},
                   {"jobDesc", "chaos soak " + std::to_string(i)},
                   {"author", "chaos_soak"},
                   {"scheduleType", "CRON"},
                   {"scheduleConf", "* * * * * ?"},
                   {"misfireStrategy", "DO_NOTHING"},
                   {"executorRouteStrategy", "ROUND"},
                   {"executorHandler", "soak"},
                   {"executorParam", std::to_string((i % 4) * kMaxHandlerMs / 3)},
                   {"executorBlockStrategy", "SERIAL_EXECUTION"},
                   {"executorFailRetryCount", 0}};
      auto r = api.post(c, "jobs", body);
      if (r.status != 201) fail("cannot create a job: " + std::to_string(r.status) + " " + r.text);
      job_ids_[static_cast<std::size_t>(i)] = r.body.value("id", std::int64_t{0});
    });
    in_parallel(apis_, 4, s_.jobs, [&](const Api& api, httplib::Client& c, int i) {
      auto r = api.post(c, "jobs/" + std::to_string(job_ids_[static_cast<std::size_t>(i)]) + "/start", json::object());
      if (r.status != 200) fail("cannot start a job: " + std::to_string(r.status) + " " + r.text);
    });
  }

  // The faults, in turn, every fault_every seconds from half a period into the window until 10 s
  // before its end (so the last one is over before the window is).
  void inject_faults() {
    if (s_.faults.empty()) return;
    std::size_t next_kind = 0;
    std::size_t next_admin = 0;
    std::size_t next_executor = 0;
    for (std::int64_t at = from_ + s_.fault_every * 500LL; at + 10'000 <= to_; at += s_.fault_every * 1000LL) {
      sleep_until_ms(at);
      check_alive();
      const std::string kind = s_.faults[next_kind++ % s_.faults.size()];
      Fault f;
      f.kind = kind;
      f.from_ms = now_ms();
      if (kind == "admin-kill") {
        Node& a = *admins_[next_admin++ % admins_.size()];
        f.target = a.name();
        a.kill();
        std::this_thread::sleep_for(2s);
        a.start();
      } else if (kind == "admin-stop") {
        Node& a = *admins_[next_admin++ % admins_.size()];
        f.target = a.name();
        a.pause();
        std::this_thread::sleep_for(std::chrono::milliseconds(s_.lease_ms + 2000));
        a.resume();
      } else if (kind == "executor-kill") {
        const std::size_t i = next_executor++ % executors_.size();
        Node& e = *executors_[i];
        f.target = e.name();
        f.address = executor_address(i);
        e.kill();
        std::this_thread::sleep_for(1s);
        e.start();
      } else if (kind == "pg-restart" || kind == "pg-failover") {
        f.target = "postgresql";
        const std::string& cmd = kind == "pg-restart" ? s_.pg_restart_cmd : s_.pg_failover_cmd;
        const int code = std::system(cmd.c_str());
        if (code != 0) fail("the " + kind + " command failed (" + std::to_string(code) + "): " + cmd);
      }
      f.to_ms = now_ms();
      std::printf("  %5.1f s  %-13s %-11s back after %.1f s\n", since_s(from_, f.from_ms), f.kind.c_str(),
                  f.target.c_str(), since_s(f.from_ms, f.to_ms));
      std::fflush(stdout);
      faults_.push_back(f);
    }
  }

  // Every node we did not kill must be alive.
  void check_alive() {
    for (auto& n : admins_) {
      if (!n->running()) throw Finding(n->name() + " exited on its own:\n" + tail_of(n->output()));
    }
    for (auto& n : executors_) {
      if (!n->running()) throw Finding(n->name() + " exited on its own:\n" + tail_of(n->output()));
    }
  }

  // A connection to the database for the checks, made again after a restart.
  pqxx::connection& db() {
    if (!db_ || !db_->is_open()) db_ = std::make_unique<pqxx::connection>(s_.db_url);
    return *db_;
  }

  // Waits until no run of the window is pending, sending or running (or the bound).
  bool drain(std::int64_t until_ms) {
    while (now_ms() < until_ms) {
      try {
        pqxx::nontransaction tx(db());
        auto r = tx.exec_params1(
            "SELECT count(*) FILTER (WHERE state IN ('pending', 'sending', 'triggered')) FROM job_log "
            "WHERE job_group = $1 AND scheduled_time >= $2 AND scheduled_time < $3",
            group_id_, from_, to_);
        if (r[0].as<std::int64_t>() == 0) return true;
      } catch (const pqxx::broken_connection&) {
        db_.reset();
      }
      std::this_thread::sleep_for(1s);
    }
    return false;
  }

  // SIGTERM to everything; a node that does not stop cleanly is a finding.
  int stop_cluster() {
    int problems = 0;
    for (auto& e : executors_) {
      const int code = e->stop(30s);
      if (code != 0) {
        std::printf("FAIL: %s did not stop cleanly (exit %d)\n%s\n", e->name().c_str(), code, tail_of(e->output()).c_str());
        ++problems;
      }
    }
    for (auto& a : admins_) {
      const int code = a->stop(30s);
      if (code != 0) {
        std::printf("FAIL: %s did not stop cleanly (exit %d)\n%s\n", a->name().c_str(), code, tail_of(a->output()).c_str());
        ++problems;
      }
    }
    return problems;
  }

  Receipts read_receipts() const {
    Receipts r;
    for (const auto& file : receipt_files_) {
      std::ifstream in(file);
      for (std::string line; std::getline(in, line);) {
        std::istringstream words(line);
        std::string kind;
        std::int64_t log_id = 0;
        words >> kind >> log_id;
        if (kind == "S") {
          std::int64_t job = 0, pid = 0, at = 0;
          words >> job >> pid >> at;
          ++r.starts[log_id];
          r.start_job[log_id] = job;
          r.started_at[log_id] = at;
        } else if (kind == "E") {
          std::int64_t pid = 0, at = 0;
          words >> pid >> at;
          r.ended_at[log_id] = at;
        }
      }
    }
    return r;
  }

  std::vector<Row> read_rows() {
    std::vector<Row> rows;
    pqxx::nontransaction tx(db());
    for (const auto& r : tx.exec_params(
             "SELECT id, job_id, scheduled_time, state, trigger_type, executor_address,"
             " coalesce((extract(epoch FROM trigger_time) * 1000)::bigint, 0),"
             " left(trigger_msg, 200) || ' | ' || left(handle_msg, 200),"
             " strpos(trigger_msg, 'Lead: handed over') > 0"
             " FROM job_log WHERE job_group = $1 AND scheduled_time >= $2 AND scheduled_time < $3",
             group_id_, from_, to_)) {
      Row row;
      row.id = r[0].as<std::int64_t>();
      row.job_id = r[1].as<std::int64_t>();
      row.scheduled_ms = r[2].as<std::int64_t>();
      row.state = r[3].as<std::string>();
      row.trigger_type = r[4].as<std::string>();
      row.address = r[5].as<std::string>();
      row.trigger_ms = r[6].as<std::int64_t>();
      row.message = r[7].as<std::string>("");
      row.led = r[8].as<bool>(false);
      rows.push_back(std::move(row));
    }
    return rows;
  }

  // Whether a failed or lost run is explained by an executor fault: it was sent to the killed
  // executor from shortly before the kill (running there: its handler takes at most
  // kMaxHandlerMs) until shortly after the restart.
  bool explained_by_executor_fault(const Row& row) const {
    for (const auto& f : faults_) {
      if (f.kind != "executor-kill" || f.address != row.address) continue;
      const std::int64_t sent = row.trigger_ms != 0 ? row.trigger_ms : row.scheduled_ms;
      if (sent >= f.from_ms - kMaxHandlerMs - 2000 && sent <= f.to_ms + 2000) return true;
    }
    return false;
  }

  // Whether the run's executor was killed within a second after its handler's end: the result
  // may not have reached the executor's journal yet (the handler's last receipt line comes just
  // before the executor takes its result), so the run ends `lost` without anything being wrong.
  bool killed_right_after(const Row& row, std::int64_t ended_ms) const {
    for (const auto& f : faults_) {
      if (f.kind == "executor-kill" && f.address == row.address && f.from_ms >= ended_ms && f.from_ms <= ended_ms + 1000) {
        return true;
      }
    }
    return false;
  }

  // Whether a fire cancelled by its job's misfire rule was due while an admin or the database was
  // down or paused (or the second after): its node could not send it in time, and the rule
  // skips a fire more than 5 s late rather than send it late. On a busy machine a takeover can
  // take that long (the lease, then asking the executors); the count is reported.
  bool skipped_after_node_fault(const Row& row) const {
    for (const auto& f : faults_) {
      if (f.kind == "executor-kill") continue;
      if (row.scheduled_ms >= f.from_ms - 1000 && row.scheduled_ms <= f.to_ms + 1000) return true;
    }
    return false;
  }

  int check(bool drained, int stop_problems) {
    const auto rows = read_rows();
    const auto receipts = read_receipts();
    std::map<std::pair<std::int64_t, std::int64_t>, std::vector<const Row*>> by_fire;
    for (const auto& r : rows) by_fire[{r.job_id, r.scheduled_ms / 1000}].push_back(&r);

    std::map<std::string, std::int64_t> states;
    std::int64_t missing = 0, duplicated = 0, not_final = 0, ran_twice = 0, wrong_job = 0, result_lost = 0,
                 succeeded_without_run = 0, explained = 0, unexplained = 0, ended_then_killed = 0,
                 skipped_after_fault = 0;
    // A few examples of each kind of finding.
    std::vector<std::string> samples;
    std::map<std::string, int> sampled;
    auto sample = [&](const std::string& kind, const std::string& what) {
      if (++sampled[kind] <= 4) samples.push_back(what);
    };
    std::vector<std::int64_t> lateness;
    std::int64_t led = 0;
    for (std::int64_t job : job_ids_) {
      for (std::int64_t second = from_ / 1000; second < to_ / 1000; ++second) {
        auto it = by_fire.find({job, second});
        if (it == by_fire.end()) {
          ++missing;
          sample("missing", "no run of job " + std::to_string(job) + " at " + std::to_string(second * 1000));
          continue;
        }
        if (it->second.size() > 1) {
          duplicated += static_cast<std::int64_t>(it->second.size()) - 1;
          sample("duplicated", std::to_string(it->second.size()) + " runs of job " + std::to_string(job) + " at " +
                 std::to_string(second * 1000));
        }
        for (const Row* row : it->second) {
          ++states[row->state];
          if (row->led) ++led;
          const auto starts = receipts.starts.find(row->id);
          const int started = starts == receipts.starts.end() ? 0 : starts->second;
          if (started > 0) lateness.push_back(receipts.started_at.at(row->id) - row->scheduled_ms);
          const auto end = receipts.ended_at.find(row->id);
          const bool ended = end != receipts.ended_at.end();
          if (started > 1) {
            ++ran_twice;
            sample("ran twice", "run " + std::to_string(row->id) + " started " + std::to_string(started) + " times");
          }
          if (started > 0 && receipts.start_job.at(row->id) != row->job_id) {
            ++wrong_job;
            sample("wrong job", "run " + std::to_string(row->id) + " ran for job " + std::to_string(receipts.start_job.at(row->id)));
          }
          if (row->state == "pending" || row->state == "sending" || row->state == "triggered") {
            ++not_final;
            sample("not final", "run " + std::to_string(row->id) + " still " + row->state);
          } else if (row->state == "succeeded") {
            if (started == 0 || !ended) {
              ++succeeded_without_run;
              sample("succeeded without run", "run " + std::to_string(row->id) + " succeeded without " + (started ? "ending" : "starting") +
                     " at an executor");
            }
          } else if (ended && killed_right_after(*row, end->second)) {
            ++ended_then_killed;
          } else if (ended) {
            ++result_lost;
            sample("result lost", "run " + std::to_string(row->id) + " ended at its executor but is " + row->state + ": " + row->message);
          } else if ((row->state == "failed" || row->state == "lost") && explained_by_executor_fault(*row)) {
            ++explained;
          } else if (row->state == "cancelled" && row->message.find("misfire") != std::string::npos &&
                     skipped_after_node_fault(*row)) {
            ++skipped_after_fault;
          } else {
            ++unexplained;
            sample("unexplained", "run " + std::to_string(row->id) + " of job " + std::to_string(row->job_id) + " at " +
                   std::to_string(row->scheduled_ms) + " (" + std::to_string(row->scheduled_ms - from_) + " ms in) is " +
                   row->state + " on " + row->address + ": " + row->message);
          }
        }
      }
    }
    std::sort(lateness.begin(), lateness.end());
    auto pct = [&](double p) -> std::int64_t {
      if (lateness.empty()) return 0;
      return lateness[std::min(lateness.size() - 1, static_cast<std::size_t>(p * static_cast<double>(lateness.size())))];
    };

    const std::int64_t expected = static_cast<std::int64_t>(s_.jobs) * s_.seconds;
    std::printf("\nfires expected %lld, rows %zu; by state:", static_cast<long long>(expected), rows.size());
    for (const auto& [state, n] : states) std::printf(" %s %lld", state.c_str(), static_cast<long long>(n));
    std::printf("\nscheduled instant to handler start, ms: p50 %lld, p99 %lld, max %lld\n", static_cast<long long>(pct(0.5)),
                static_cast<long long>(pct(0.99)), static_cast<long long>(lateness.empty() ? 0 : lateness.back()));
    std::printf("failed or lost with an executor killed under them: %lld (and %lld that ended in the handler "
                "just before their executor was killed)\n",
                static_cast<long long>(explained), static_cast<long long>(ended_then_killed));
    std::printf("skipped by the misfire rule, due while an admin or the database was down: %lld\n",
                static_cast<long long>(skipped_after_fault));
    std::printf("handed over to their executor ahead of the instant (lead dispatch %s): %lld\n",
                s_.lead_dispatch ? "on" : "off", static_cast<long long>(led));
    struct Check {
      const char* what;
      std::int64_t count;
    };
    const Check checks[] = {{"(job, second) without a run", missing},
                            {"(job, second) with more than one run", duplicated},
                            {"runs not final after the drain", not_final},
                            {"runs started twice at the executors", ran_twice},
                            {"runs started for another job", wrong_job},
                            {"results lost (ended at the executor, not succeeded)", result_lost},
                            {"runs succeeded that did not run", succeeded_without_run},
                            {"runs failed or lost with no executor fault to explain it", unexplained},
                            {"nodes that did not stop cleanly", stop_problems},
                            {"lead dispatch on, yet no fire handed over ahead", s_.lead_dispatch && led == 0 ? 1 : 0}};
    bool ok = drained;
    if (!drained) std::printf("FAIL: runs of the window still unfinished %d s after it\n", s_.drain);
    for (const auto& c : checks) {
      std::printf("%s: %s %lld\n", c.count == 0 ? "ok" : "FAIL", c.what, static_cast<long long>(c.count));
      if (c.count != 0) ok = false;
    }
    for (const auto& s : samples) std::printf("  e.g. %s\n", s.c_str());

    json faults = json::array();
    for (const auto& f : faults_) {
      faults.push_back({{"kind", f.kind}, {"target", f.target}, {"at_s", since_s(from_, f.from_ms)},
                        {"back_after_s", since_s(f.from_ms, f.to_ms)}});
    }
    json out = {{"admins", s_.admins}, {"executors", s_.executors}, {"jobs", s_.jobs}, {"seconds", s_.seconds},
                {"expected", expected}, {"rows", rows.size()}, {"states", states},
                {"late_p50_ms", pct(0.5)}, {"late_p99_ms", pct(0.99)},
                {"late_max_ms", lateness.empty() ? 0 : lateness.back()}, {"explained_by_executor_kill", explained}, {"ended_then_killed", ended_then_killed},
                {"skipped_after_fault", skipped_after_fault}, {"led", led},
                {"faults", faults}, {"ok", ok}};
    for (const auto& c : checks) out["checks"][c.what] = c.count;
    std::printf("CHAOS_SOAK_JSON %s\n", out.dump().c_str());
    std::printf("%s\n", ok ? "chaos soak passed" : "chaos soak FAILED");
    return ok ? 0 : 1;
  }

  Settings s_;
  std::vector<int> admin_ports_;
  std::vector<int> executor_ports_;
  std::vector<fs::path> receipt_files_;
  std::vector<std::unique_ptr<Node>> admins_;
  std::vector<std::unique_ptr<Node>> executors_;
  std::vector<Api> apis_;
  std::int64_t group_id_ = 0;
  std::vector<std::int64_t> job_ids_;
  std::int64_t from_ = 0;
  std::int64_t to_ = 0;
  std::vector<Fault> faults_;
  std::unique_ptr<pqxx::connection> db_;
};

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  CLI::App app{"chaos_soak: a cronwheel cluster under load while its parts fail; checks exactly-once afterwards"};
  // soak.sh's profiles come first: a later option overrides them.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_option("--db-url", s.db_url, "PostgreSQL URL of an empty database (its cluster is restarted)")->required();
  app.add_option("--pg-restart-cmd", s.pg_restart_cmd, "Shell command restarting PostgreSQL in immediate mode");
  app.add_option("--pg-failover-cmd", s.pg_failover_cmd, "Shell command failing PostgreSQL over to its standby");
  app.add_option("--work-dir", s.work_dir, "Directory for executors' logs, receipts and outputs")->required();
  app.add_option("--admin-bin", s.admin_bin, "cronwheel-admin to run");
  app.add_option("--executor-bin", s.executor_bin, "chaos_soak_executor to run");
  app.add_option("--admins", s.admins, "Admin nodes")->check(CLI::Range(1, 5));
  app.add_option("--executors", s.executors, "Executors")->check(CLI::Range(1, 10));
  app.add_option("--jobs", s.jobs, "Jobs firing every second")->check(CLI::Range(1, 5000));
  app.add_option("--seconds", s.seconds, "Window of scheduled seconds checked")->check(CLI::Range(20, 7200));
  app.add_option("--warmup", s.warmup, "Seconds before the window")->check(CLI::Range(2, 120));
  app.add_option("--fault-every", s.fault_every, "Seconds between faults")->check(CLI::Range(5, 600));
  app.add_option("--faults", s.faults, "Faults, in turn: admin-kill pg-restart executor-kill admin-stop (pg-failover)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->check(CLI::IsMember({"admin-kill", "pg-restart", "executor-kill", "admin-stop", "pg-failover"}));
  app.add_option("--lease-ms", s.lease_ms, "The admins' lease")->check(CLI::Range(1000, 60000));
  app.add_option("--lead-dispatch", s.lead_dispatch,
                 "Admins hand fires over ahead to the executors that take it (true|false)")
      ->capture_default_str();
  app.add_option("--drain", s.drain, "Seconds the runs of the window get to end after it")->check(CLI::Range(10, 600));
  CLI11_PARSE(app, argc, argv);
  const bool restarts_pg = std::find(s.faults.begin(), s.faults.end(), "pg-restart") != s.faults.end();
  if (restarts_pg && s.pg_restart_cmd.empty()) {
    std::cerr << "chaos_soak: the pg-restart fault needs --pg-restart-cmd\n";
    return 2;
  }
  if (std::find(s.faults.begin(), s.faults.end(), "pg-failover") != s.faults.end() && s.pg_failover_cmd.empty()) {
    std::cerr << "chaos_soak: the pg-failover fault needs --pg-failover-cmd\n";
    return 2;
  }
  if ((std::find(s.faults.begin(), s.faults.end(), "admin-kill") != s.faults.end() ||
       std::find(s.faults.begin(), s.faults.end(), "admin-stop") != s.faults.end()) &&
      s.admins < 2) {
    std::cerr << "chaos_soak: admin faults need --admins 2 or more\n";
    return 2;
  }

  Soak soak(s);
  try {
    return soak.run();
  } catch (const Finding& e) {
    std::printf("FAIL: %s\nchaos soak FAILED\n", e.what());
    soak.stop_all();
    return 1;
  } catch (const std::exception& e) {
    std::printf("chaos soak could not run: %s\n", e.what());
    soak.stop_all();
    return 2;
  }
}
