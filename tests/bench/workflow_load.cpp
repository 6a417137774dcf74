// Workflows under load, end to end: a fresh database on a real PostgreSQL, a real cronwheel-admin
// (any build: --admin-bin) and fast fake executors in this process (fake_executor.h: /run
// answered at once, the result called back as soon as the callback thread gets to it).
//
// N runs (--runs, default 1,000) of a 10-node workflow are triggered through the REST API
// (POST /api/v1/workflows/{id}/trigger) from --api-connections threads, all at once or, with
// --pace P, evenly so that nodes end at about P a second (one run every 10 / P s), in one of two
// shapes (--shape): `chain`, n1 → n2 → … → n10, or `fanout`, a → b1..b8 → z. A workflow runs at
// most 100 runs at once (maxParallel), so the runs are spread over N / --per-workflow identical
// workflows (overlap PARALLEL, maxParallel = --per-workflow): every run starts when triggered.
// The same load runs once first, unmeasured (--warmup-load), followed by VACUUM ANALYZE, so that
// the measured one meets tables as a running installation has them.
//
// What it measures, per child node (every node but the first of a run):
//  - hand-off: from its parents' results being recorded (the latest parent's job_log.handle_time,
//    which the admin stamps when the callback carrying it arrives, before its transaction) to
//    the child's /run arriving at a fake executor; split at the child's trigger_time (stamped when
//    its claim is prepared): "end → claim" is the callback's transaction, its commit and the
//    hand-over to the sending thread; "claim → /run" the claim statement, the trigger pool and the
//    POST;
//  - the same hand-off measured first on --baseline-runs runs triggered one at a time, on the same
//    admin and database: the ratio loaded / one at a time is the figure to compare between runs;
//  - at the database, between two snapshots around the load: statements and transactions per node
//    run (pg_stat_statements; its own queries excluded), the statements that took the most time,
//    deadlocks (pg_stat_database), and every --sample-ms what each of the admin's backends is
//    doing (pg_stat_activity: state, wait event, statement; for a lock wait, the table of the row
//    and what holds it), as average sessions per (state, wait, statement);
//  - CPU of the admin, of PostgreSQL (--pg-pid) and of this process.
//
// Checks, always, over every run it triggered: every run succeeded; every node of every run has
// exactly one run row, succeeded; no run row of these runs is left pending, sending or
// triggered; every run row reached an executor exactly once. --check exits 1 unless all of that
// holds; never a check of speed.
//
// Bounded: at most --drain seconds after the triggers for the runs to end. Everything it starts
// (the admin as a child process, executors as threads) it stops, by pid, or joins before
// exiting; the database it creates it drops (unless --keep-db). Loopback only.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <CLI/CLI.hpp>
#include <httplib.h>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>
#include <spdlog/spdlog.h>

#include "tests/bench/fake_executor.h"
#include "tests/bench/load_support.h"
#include "tests/support/api_session.h"
#include "tests/support/test_database.h"
#include "tests/support/wall_time.h"

namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using cronwheel::bench::AdminProcess;
using cronwheel::bench::DbCounters;
using cronwheel::bench::DbStats;
using cronwheel::bench::FakeExecutor;
using cronwheel::bench::fixed;
using cronwheel::bench::percentile;
using cronwheel::testing::Api;
using cronwheel::testing::in_parallel;
using cronwheel::testing::now_ms;

constexpr const char* kPassword = "workflow-load-password";
constexpr const char* kToken = "workflow-load-token";
// Leads every query this program sends to the bench database, so that pg_stat_statements'
// figures can leave them out (it keeps the text of the first call).
constexpr const char* kOwn = "/* workflow_load */ ";

struct Settings {
  std::string db_url;
  std::string admin_bin = std::string(CRONWHEEL_BIN_DIR) + "/cronwheel-admin";
  std::string label = "admin";
  std::string shape = "chain";
  int runs = 1000;
  int per_workflow = 100;
  int baseline_runs = 20;
  int warmup_runs = 3;
  int warmup_load = -1;  // -1: as many as --runs
  int executors = 2;
  int executor_threads = 8;
  int callback_batch = 1000;  // the real executor's max_batch
  int api_connections = 32;
  int pace = 0;  // node ends a second the triggers aim at; 0: every run triggered at once
  int drain = 120;
  int pg_pid = 0;
  int top_statements = 10;
  int sample_ms = 10;
  int top_waits = 12;
  bool check = false;
  bool keep_db = false;
  std::string json_out;
  std::string admin_log;
  std::vector<std::string> admin_args;
  std::vector<std::string> sql_before_load;
};

[[noreturn]] void fail(const std::string& why) { throw std::runtime_error(why); }

// ---------------------------------------------------------------------------------------------
// The two shapes: node keys in order, and each node's parents.

struct Shape {
  std::vector<std::string> keys;
  std::map<std::string, std::vector<std::string>> parents;
  // How a child's hand-off is labelled: "chain", or in the fan-out "1 → 8" and "8 → 1".
  std::map<std::string, std::string> edge_kind;
};

Shape make_shape(const std::string& name) {
  Shape s;
  if (name == "chain") {
    for (int i = 1; i <= 10; ++i) s.keys.push_back("n" + std::to_string(i));
    for (std::size_t i = 1; i < s.keys.size(); ++i) {
      s.parents[s.keys[i]] = {s.keys[i - 1]};
      s.edge_kind[s.keys[i]] = "chain";
    }
  } else {
    s.keys.push_back("a");
    for (int i = 1; i <= 8; ++i) {
      const std::string b = "b" + std::to_string(i);
      s.keys.push_back(b);
      s.parents[b] = {"a"};
      s.edge_kind[b] = "1 → 8";
      s.parents["z"].push_back(b);
    }
    s.keys.push_back("z");
    s.edge_kind["z"] = "8 → 1";
  }
  return s;
}

// ---------------------------------------------------------------------------------------------
// What the admin's database sessions are doing, sampled.

// Every `interval`, on a connection of its own to the bench database (its queries marked as this
// program's, so that they are not counted), reads pg_stat_activity for the database's other
// client backends that are in a transaction or running a statement, and counts them by (state,
// wait event, statement); for a backend waiting on a lock, also the table of the row it waits for
// (the tuple lock it holds or waits for; none when it waits on another transaction's index entry,
// as a unique check or an upsert does) and what the first blocking backend runs. count / samples
// is the average number of sessions in that state ("average active sessions"): where the
// database's time goes, and who waits on whom.
class ActivitySampler {
 public:
  ActivitySampler(const std::string& db_url, std::string database, std::chrono::milliseconds interval)
      : conn_(db_url), database_(std::move(database)), interval_(interval) {
    conn_.prepare("activity",
                  std::string(kOwn) +
                      "SELECT a.state, coalesce(a.wait_event_type, '') || ':' || coalesce(a.wait_event, ''),"
                      " (SELECT string_agg(DISTINCT c.relname, ',') FROM pg_locks l JOIN pg_class c ON c.oid = l.relation"
                      "  WHERE l.pid = a.pid AND l.locktype = 'tuple'),"
                      " left(regexp_replace(a.query, '\\s+', ' ', 'g'), 90),"
                      " CASE WHEN a.wait_event_type = 'Lock' THEN (SELECT left(regexp_replace(b.query, '\\s+', ' ', 'g'), 90)"
                      "  || ' [' || b.state || ']' FROM pg_stat_activity b WHERE b.pid = (pg_blocking_pids(a.pid))[1] LIMIT 1) END"
                      " FROM pg_stat_activity a WHERE a.datname = $1 AND a.backend_type = 'client backend'"
                      " AND a.pid <> pg_backend_pid() AND a.state IN ('active', 'idle in transaction')"
                      " AND a.query NOT LIKE '/* workflow_load */%'");
    thread_ = std::thread([this] { run(); });
  }
  ~ActivitySampler() { finish(); }

  void finish() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }

  struct Entry {
    std::string what;
    double sessions = 0;  // average sessions in this state over the samples
  };
  // The states by sessions, largest first, and the number of samples.
  std::vector<Entry> top(std::size_t n, std::size_t& samples) const {
    std::lock_guard lock(mutex_);
    samples = samples_;
    return sorted(counts_, n);
  }
  // Sessions waiting on a lock, by the table of the row waited for.
  std::vector<Entry> lock_waits_by_table() const {
    std::lock_guard lock(mutex_);
    return sorted(by_table_, by_table_.size());
  }
  // Average sessions in a transaction or a statement, and of them waiting on a lock.
  double busy() const { return total(false); }
  double lock_waits() const { return total(true); }

 private:
  std::vector<Entry> sorted(const std::map<std::string, std::uint64_t>& counts, std::size_t n) const {
    std::vector<Entry> out;
    for (const auto& [what, count] : counts) {
      out.push_back({what, samples_ == 0 ? 0.0 : static_cast<double>(count) / static_cast<double>(samples_)});
    }
    std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) { return a.sessions > b.sessions; });
    if (out.size() > n) out.resize(n);
    return out;
  }

  double total(bool locks) const {
    std::lock_guard lock(mutex_);
    const auto n = locks ? lock_count_ : busy_count_;
    return samples_ == 0 ? 0.0 : static_cast<double>(n) / static_cast<double>(samples_);
  }

  void run() {
    while (!stop_) {
      const auto next = std::chrono::steady_clock::now() + interval_;
      try {
        pqxx::nontransaction tx(conn_);
        auto rows = tx.exec_prepared("activity", database_);
        std::lock_guard lock(mutex_);
        ++samples_;
        for (const auto& r : rows) {
          const std::string wait = r[1].as<std::string>("");
          const bool on_lock = wait.rfind("Lock:", 0) == 0;
          std::string what = r[0].as<std::string>("") + " | " + (wait == ":" ? "on CPU" : wait);
          if (on_lock) what += " on " + r[2].as<std::string>("(no row: an index entry)");
          what += " | " + r[3].as<std::string>("");
          if (!r[4].is_null()) what += " | blocked by: " + r[4].as<std::string>("");
          ++counts_[what];
          ++busy_count_;
          if (!on_lock) continue;
          ++lock_count_;
          ++by_table_[r[2].as<std::string>("(no row: an index entry, as a unique check or an upsert waits)")];
        }
      } catch (const std::exception& e) {
        std::fprintf(stderr, "workflow_load: activity sample: %s\n", e.what());
        return;
      }
      std::this_thread::sleep_until(next);
    }
  }

  pqxx::connection conn_;
  std::string database_;
  std::chrono::milliseconds interval_;
  std::atomic<bool> stop_{false};
  mutable std::mutex mutex_;
  std::map<std::string, std::uint64_t> counts_, by_table_;
  std::uint64_t samples_ = 0, busy_count_ = 0, lock_count_ = 0;
  std::thread thread_;
};

// ---------------------------------------------------------------------------------------------

struct Snapshot {
  std::int64_t at_ms = 0;
  std::uint64_t admin_ticks = 0;
  std::uint64_t db_ticks = 0;
  double own_cpu_s = 0;
  DbCounters db;
  double deadlocks = 0;
};

// One node's run row, as the database has it at the end.
struct Row {
  std::int64_t id = 0;
  std::int64_t run = 0;
  std::string node;
  std::string state;
  std::int64_t trigger_ms = 0;  // 0: none
  std::int64_t handle_ms = 0;   // 0: none
};

struct Latencies {
  std::vector<double> handoff, to_claim, claim_to_run, result;  // ms
};

double ms(std::int64_t us) { return static_cast<double>(us) / 1000.0; }

// A bigint[] parameter's text: {1,2,3}.
std::string id_array(const std::vector<std::int64_t>& ids) {
  std::string out = "{";
  for (std::size_t i = 0; i < ids.size(); ++i) out += (i == 0 ? "" : ",") + std::to_string(ids[i]);
  return out + "}";
}

class WorkflowLoad {
 public:
  explicit WorkflowLoad(Settings s) : s_(std::move(s)), shape_(make_shape(s_.shape)) {}
  ~WorkflowLoad() { teardown(); }

  int run() {
    setup();
    create_workflows();
    if (s_.warmup_load > 0) warm_up_load();
    one_at_a_time(s_.warmup_runs, nullptr);
    one_at_a_time(s_.baseline_runs, &baseline_ids_);
    load();
    const bool ok = report();
    teardown();
    return s_.check && !ok ? 1 : 0;
  }

 private:
  void setup() {
    server_url_ = s_.db_url;
    database_ = "workflow_load_" + std::to_string(::getpid()) + "_" + std::to_string(now_ms() % 1000000);
    {
      pqxx::connection c(server_url_);
      pqxx::nontransaction tx(c);
      tx.exec("CREATE DATABASE " + tx.quote_name(database_));
    }
    created_db_ = true;
    db_url_ = cronwheel::testing::TestDatabase::with_database(server_url_, database_);
    stats_ = std::make_unique<DbStats>(server_url_, database_);
    if (!stats_->note().empty()) notes_.push_back(stats_->note());
    admin_ = std::make_unique<AdminProcess>(
        AdminProcess::Options{s_.admin_bin, db_url_, "workflow-load-1", kPassword, kToken, s_.admin_args});
    if (admin_->wait_until_listening(90s) == 0) fail("the admin did not start:\n" + admin_->tail());
    for (int i = 0; i < s_.executors; ++i) {
      FakeExecutor::Options o;
      o.access_token = kToken;
      o.worker_threads = static_cast<std::size_t>(s_.executor_threads);
      o.max_batch = static_cast<std::size_t>(s_.callback_batch);
      o.admin_urls.push_back(admin_->url());
      executors_.push_back(std::make_unique<FakeExecutor>(o));
      executors_.back()->start();
    }
    apis_.emplace_back(admin_->port());
    apis_.back().login("admin", kPassword);
    db_ = std::make_unique<pqxx::connection>(db_url_);
  }

  void create_workflows() {
    auto client = apis_[0].client();
    std::vector<std::string> addresses;
    for (auto& e : executors_) addresses.push_back(e->address());
    auto g = apis_[0].post(*client, "groups",
                           {{"appName", "workflow-load"}, {"title", "workflow load"}, {"addressType", 1},
                            {"addressList", addresses}});
    if (g.status != 201) fail("cannot create the group: " + std::to_string(g.status) + " " + g.text);
    const auto group = g.body.value("id", std::int64_t{0});
    std::map<std::string, std::int64_t> job_of;
    for (const auto& key : shape_.keys) {
      auto r = apis_[0].post(*client, "jobs",
                             {{"jobGroup", group}, {"jobDesc", "workflow load " + key}, {"author", "workflow_load"},
                              {"scheduleType", "NONE"}, {"executorRouteStrategy", "ROUND"}, {"executorHandler", "fire"}});
      if (r.status != 201) fail("cannot create a job: " + std::to_string(r.status) + " " + r.text);
      job_of[key] = r.body.value("id", std::int64_t{0});
    }
    json nodes = json::array(), edges = json::array();
    for (const auto& key : shape_.keys) {
      nodes.push_back({{"key", key}, {"jobId", job_of[key]}});
      auto p = shape_.parents.find(key);
      if (p == shape_.parents.end()) continue;
      for (const auto& parent : p->second) edges.push_back({{"from", parent}, {"to", key}});
    }
    const int count = (s_.runs + s_.per_workflow - 1) / s_.per_workflow;
    for (int i = 0; i < count; ++i) {
      auto r = apis_[0].post(*client, "workflows",
                             {{"jobGroup", group},
                              {"name", "load-" + s_.shape + "-" + std::to_string(i + 1)},
                              {"scheduleType", "NONE"},
                              {"overlap", "PARALLEL"},
                              {"maxParallel", s_.per_workflow},
                              {"nodes", nodes},
                              {"edges", edges}});
      if (r.status != 201) fail("cannot create a workflow: " + std::to_string(r.status) + " " + r.text);
      workflow_ids_.push_back(r.body.value("id", std::int64_t{0}));
    }
  }

  // Triggers one run of `workflow`; answers its id. Counts the runs that did not start at once.
  std::int64_t trigger(httplib::Client& client, std::int64_t workflow) {
    auto r = apis_[0].post(client, "workflows/" + std::to_string(workflow) + "/trigger", json::object());
    if (r.status != 201) fail("trigger: " + std::to_string(r.status) + " " + r.text);
    if (r.body.value("state", "") != "running") not_running_.fetch_add(1);
    return r.body.value("id", std::int64_t{0});
  }

  // `count` runs, each triggered once the one before has ended; their ids into `ids` if given.
  void one_at_a_time(int count, std::vector<std::int64_t>* ids) {
    auto client = apis_[0].client();
    for (int i = 0; i < count; ++i) {
      const auto id = trigger(*client, workflow_ids_[0]);
      if (ids != nullptr) ids->push_back(id);
      const std::int64_t until = now_ms() + 30'000;
      while (open_runs({id}) > 0) {
        if (now_ms() > until) fail("run " + std::to_string(id) + " did not end within 30 s, alone");
        check_alive();
        std::this_thread::sleep_for(5ms);
      }
    }
  }

  std::int64_t open_runs(const std::vector<std::int64_t>& ids) {
    pqxx::nontransaction tx(*db_);
    return tx.exec_params1(std::string(kOwn) +
                               "SELECT count(*) FROM workflow_run WHERE id = ANY ($1::bigint[]) AND state IN ('waiting', "
                               "'running')",
                           id_array(ids))[0]
        .as<std::int64_t>();
  }

  std::int64_t open_rows(const std::vector<std::int64_t>& ids) {
    pqxx::nontransaction tx(*db_);
    return tx.exec_params1(std::string(kOwn) +
                               "SELECT count(*) FROM job_log WHERE workflow_run_id = ANY ($1::bigint[]) AND state IN "
                               "('pending', 'sending', 'triggered')",
                           id_array(ids))[0]
        .as<std::int64_t>();
  }

  // The admin's counts of results by outcome (recorded, duplicate, ...) from its /metrics.
  std::string read_results_counters() {
    httplib::Client c("127.0.0.1", admin_->port());
    c.set_connection_timeout(5);
    c.set_read_timeout(10);
    auto r = c.Get("/metrics");
    if (!r || r->status != 200) return "(no /metrics)";
    std::string out;
    std::istringstream lines(r->body);
    for (std::string line; std::getline(lines, line);) {
      const std::string prefix = "cronwheel_results_total{outcome=\"";
      if (line.rfind(prefix, 0) != 0) continue;
      const auto quote = line.find('"', prefix.size());
      out += (out.empty() ? "" : ", ") + line.substr(prefix.size(), quote - prefix.size()) + " " +
             line.substr(line.rfind(' ') + 1);
    }
    return out;
  }

  void check_alive() {
    if (!admin_->running()) fail("the admin exited:\n" + admin_->tail());
  }

  Snapshot snapshot() {
    Snapshot s;
    s.at_ms = now_ms();
    auto st = cronwheel::bench::read_stat(admin_->pid());
    s.admin_ticks = st ? st->cpu_ticks : 0;
    s.db_ticks = cronwheel::bench::tree_cpu_ticks(s_.pg_pid);
    s.own_cpu_s = cronwheel::bench::own_cpu_seconds();
    s.db = stats_->read();
    pqxx::connection c(server_url_);
    pqxx::nontransaction tx(c);
    s.deadlocks = tx.exec_params1("SELECT deadlocks::float8 FROM pg_stat_database WHERE datname = $1", database_)[0]
                      .as<double>();
    return s;
  }

  // `count` runs spread over the workflows in turn; answers their ids. With `pace` 0 they are
  // triggered at once; otherwise run i is triggered at i × (nodes per run / pace) seconds from
  // now, so that the runs end `pace` nodes a second once the first runs are under way.
  std::vector<std::int64_t> trigger_runs(int count, int pace) {
    std::vector<std::int64_t> ids(static_cast<std::size_t>(count), 0);
    const auto w = static_cast<int>(workflow_ids_.size());
    const auto start = std::chrono::steady_clock::now();
    const auto every = pace > 0 ? std::chrono::duration<double>(static_cast<double>(shape_.keys.size()) / pace)
                                : std::chrono::duration<double>(0);
    in_parallel(apis_, s_.api_connections, count, [&](const Api&, httplib::Client& client, int i) {
      if (pace > 0) {
        std::this_thread::sleep_until(start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(every * i));
      }
      ids[static_cast<std::size_t>(i)] = trigger(client, workflow_ids_[static_cast<std::size_t>(i % w)]);
    });
    return ids;
  }

  // Waits until none of these runs waits or runs any more, or `until` (epoch ms).
  void wait_for_end(const std::vector<std::int64_t>& ids, std::int64_t until) {
    while (now_ms() < until && open_runs(ids) > 0) {
      check_alive();
      std::this_thread::sleep_for(100ms);
    }
  }

  // The same load once, not measured, then VACUUM ANALYZE: the measured load then meets tables
  // of a size and with statistics that the admin's prepared statements are planned for, as in an
  // installation that has been running, instead of plans made while the tables were nearly
  // empty (a generic plan chosen then is kept until the next ANALYZE; autovacuum's first comes
  // up to a minute later).
  void warm_up_load() {
    const auto started = now_ms();
    warm_ids_ = trigger_runs(s_.warmup_load, 0);
    wait_for_end(warm_ids_, now_ms() + static_cast<std::int64_t>(s_.drain) * 1000);
    pqxx::nontransaction(*db_).exec(std::string(kOwn) + "VACUUM ANALYZE");
    warm_s_ = static_cast<double>(now_ms() - started) / 1000.0;
  }

  void load() {
    for (const auto& sql : s_.sql_before_load) pqxx::nontransaction(*db_).exec(sql);
    before_ = snapshot();
    if (s_.sample_ms > 0) {
      sampler_ = std::make_unique<ActivitySampler>(db_url_, database_, std::chrono::milliseconds(s_.sample_ms));
    }
    triggers_from_ms_ = now_ms();
    load_ids_ = trigger_runs(s_.runs, s_.pace);
    triggers_to_ms_ = now_ms();
    const std::int64_t until = triggers_to_ms_ + static_cast<std::int64_t>(s_.drain) * 1000;
    wait_for_end(load_ids_, until);
    admin_results_ = read_results_counters();
    while (now_ms() < until && open_rows(load_ids_) > 0) std::this_thread::sleep_for(100ms);
    if (sampler_) sampler_->finish();
    after_ = snapshot();
    // Results still queued at the executors would be run rows left open: give them their time.
    for (auto& e : executors_) {
      while (now_ms() < until && e->callbacks_queued() > 0) std::this_thread::sleep_for(50ms);
    }
  }

  // Reads every run row of these runs; answers them by id.
  std::map<std::int64_t, Row> read_rows(const std::vector<std::int64_t>& runs) {
    std::map<std::int64_t, Row> out;
    pqxx::nontransaction tx(*db_);
    for (const auto& r : tx.exec_params(
             std::string(kOwn) +
                 "SELECT id, workflow_run_id, workflow_node, state,"
                 " coalesce((extract(epoch FROM trigger_time) * 1000)::bigint, 0),"
                 " coalesce((extract(epoch FROM handle_time) * 1000)::bigint, 0)"
                 " FROM job_log WHERE workflow_run_id = ANY ($1::bigint[])",
             id_array(runs))) {
      Row row{r[0].as<std::int64_t>(), r[1].as<std::int64_t>(), r[2].as<std::string>(""), r[3].as<std::string>(),
              r[4].as<std::int64_t>(), r[5].as<std::int64_t>()};
      out.emplace(row.id, row);
    }
    return out;
  }

  // Hand-offs of these runs, by edge kind and all together ("all").
  std::map<std::string, Latencies> handoffs(const std::map<std::int64_t, Row>& rows,
                                            const std::unordered_map<std::int64_t, std::int64_t>& received_us) {
    // (run, node) → row; a node with several rows (which --check reports) is left out.
    std::map<std::pair<std::int64_t, std::string>, const Row*> at;
    std::set<std::pair<std::int64_t, std::string>> twice;
    for (const auto& [id, row] : rows) {
      auto key = std::make_pair(row.run, row.node);
      if (!at.emplace(key, &row).second) twice.insert(key);
    }
    std::map<std::string, Latencies> out;
    for (const auto& [key, child] : at) {
      if (twice.count(key)) continue;
      auto received = received_us.find(child->id);
      if (received == received_us.end()) continue;
      if (child->handle_ms > 0) out["all"].result.push_back(static_cast<double>(child->handle_ms) - ms(received->second));
      auto parents = shape_.parents.find(child->node);
      if (parents == shape_.parents.end()) continue;
      std::int64_t parent_end = 0;
      bool complete = true;
      for (const auto& p : parents->second) {
        auto it = at.find({child->run, p});
        if (it == at.end() || it->second->handle_ms == 0) {
          complete = false;
          break;
        }
        parent_end = std::max(parent_end, it->second->handle_ms);
      }
      if (!complete) continue;
      auto add = [&](Latencies& l) {
        l.handoff.push_back(ms(received->second) - static_cast<double>(parent_end));
        if (child->trigger_ms > 0) {
          l.to_claim.push_back(static_cast<double>(child->trigger_ms - parent_end));
          l.claim_to_run.push_back(ms(received->second) - static_cast<double>(child->trigger_ms));
        }
      };
      add(out["all"]);
      // The fan-out's two kinds of hand-off also apart; a chain has one kind only.
      const std::string& kind = shape_.edge_kind[child->node];
      if (kind != "chain") add(out[kind]);
    }
    for (auto& [kind, l] : out) {
      for (auto* v : {&l.handoff, &l.to_claim, &l.claim_to_run, &l.result}) std::sort(v->begin(), v->end());
    }
    return out;
  }

  // Prints the summary, the JSON line and the table row; answers whether every check held.
  bool report() {
    std::vector<std::int64_t> all_ids = load_ids_;
    all_ids.insert(all_ids.end(), baseline_ids_.begin(), baseline_ids_.end());
    all_ids.insert(all_ids.end(), warm_ids_.begin(), warm_ids_.end());
    const auto rows = read_rows(all_ids);
    const auto load_rows = read_rows(load_ids_);
    const auto baseline_rows = read_rows(baseline_ids_);

    // Receipts at the executors, by run row.
    std::unordered_map<std::int64_t, std::int64_t> received_us;
    std::unordered_map<std::int64_t, int> receipts;
    for (const auto& e : executors_) {
      for (const auto& r : e->receipts()) {
        if (++receipts[r.log_id] == 1) received_us[r.log_id] = r.received_us;
      }
    }
    std::size_t duplicates = 0, never_received = 0;
    for (const auto& [id, row] : rows) {
      auto it = receipts.find(id);
      if (it == receipts.end()) {
        ++never_received;
      } else if (it->second > 1) {
        duplicates += static_cast<std::size_t>(it->second - 1);
      }
    }

    // The run table: runs, nodes, rows.
    std::map<std::string, std::int64_t> run_states, row_states;
    std::int64_t nodes_not_succeeded = 0;
    {
      pqxx::nontransaction tx(*db_);
      for (const auto& r : tx.exec_params(std::string(kOwn) +
                                              "SELECT state, count(*) FROM workflow_run WHERE id = ANY ($1::bigint[]) "
                                              "GROUP BY 1",
                                          id_array(all_ids))) {
        run_states[r[0].as<std::string>()] = r[1].as<std::int64_t>();
      }
      nodes_not_succeeded = tx.exec_params1(std::string(kOwn) +
                                                "SELECT count(*) FROM workflow_run_node WHERE run_id = ANY ($1::bigint[]) "
                                                "AND state <> 'succeeded'",
                                            id_array(all_ids))[0]
                                .as<std::int64_t>();
    }
    std::map<std::pair<std::int64_t, std::string>, int> per_node;
    for (const auto& [id, row] : rows) {
      ++per_node[{row.run, row.node}];
      ++row_states[row.state];
    }
    const auto expected_nodes = static_cast<std::int64_t>(all_ids.size() * shape_.keys.size());
    std::int64_t nodes_without_one_row = expected_nodes - static_cast<std::int64_t>(per_node.size());
    for (const auto& [key, n] : per_node) {
      if (n != 1) ++nodes_without_one_row;
    }
    std::int64_t open = 0;
    for (const auto& st : {"pending", "sending", "triggered"}) {
      if (row_states.count(st)) open += row_states[st];
    }
    const std::int64_t succeeded_runs = run_states.count("succeeded") ? run_states["succeeded"] : 0;
    const bool ok = succeeded_runs == static_cast<std::int64_t>(all_ids.size()) && nodes_without_one_row == 0 &&
                    open == 0 && nodes_not_succeeded == 0 &&
                    static_cast<std::int64_t>(rows.size()) == expected_nodes &&
                    (row_states.size() == 1 && row_states.count("succeeded")) && duplicates == 0 && never_received == 0;

    // Latencies.
    auto loaded = handoffs(load_rows, received_us);
    auto alone = handoffs(baseline_rows, received_us);
    // Node ends per second of the load (handle times), and when the last one was recorded.
    std::map<std::int64_t, int> ends_per_s;
    std::int64_t last_end = 0;
    for (const auto& [id, row] : load_rows) {
      if (row.handle_ms == 0) continue;
      ++ends_per_s[(row.handle_ms - triggers_from_ms_) / 1000];
      last_end = std::max(last_end, row.handle_ms);
    }
    int peak = 0;
    for (const auto& [second, n] : ends_per_s) peak = std::max(peak, n);
    const double load_s = static_cast<double>(std::max<std::int64_t>(1, last_end - triggers_from_ms_)) / 1000.0;
    const double node_ends_per_s = static_cast<double>(load_rows.size()) / load_s;
    // Runs' durations: trigger to end.
    std::vector<double> durations;
    {
      pqxx::nontransaction tx(*db_);
      for (const auto& r : tx.exec_params(std::string(kOwn) +
                                              "SELECT (ended_at - started_at)::float8 FROM workflow_run WHERE id = ANY "
                                              "($1::bigint[]) AND ended_at IS NOT NULL",
                                          id_array(load_ids_))) {
        durations.push_back(r[0].as<double>());
      }
    }
    std::sort(durations.begin(), durations.end());

    // The database and the processes.
    const double wall_s = static_cast<double>(after_.at_ms - before_.at_ms) / 1000.0;
    const double nodes = static_cast<double>(std::max<std::size_t>(1, load_rows.size()));
    const double ticks = static_cast<double>(cronwheel::bench::clock_ticks());
    const double admin_cpu = static_cast<double>(after_.admin_ticks - before_.admin_ticks) / ticks / wall_s;
    const double db_cpu = s_.pg_pid > 0 ? static_cast<double>(after_.db_ticks - before_.db_ticks) / ticks / wall_s : -1;
    const double own_cpu = (after_.own_cpu_s - before_.own_cpu_s) / wall_s;
    struct Delta {
      double calls = 0, exec_ms = 0, rows = 0;
      std::string query;
    };
    std::vector<Delta> statements;
    double calls = 0, exec_ms = 0, commits = 0;
    for (const auto& [id, st] : after_.db.by_statement) {
      if (st.query.rfind("/* workflow_load */", 0) == 0) continue;
      auto b = before_.db.by_statement.find(id);
      const bool seen = b != before_.db.by_statement.end();
      Delta d{st.calls - (seen ? b->second.calls : 0), st.exec_ms - (seen ? b->second.exec_ms : 0),
              st.rows - (seen ? b->second.rows : 0), (st.nested ? "(nested) " : "") + st.query};
      if (d.calls <= 0) continue;
      if (st.nested) {  // its time is its caller's already (pg_stat_statements.track = all)
        statements.push_back(std::move(d));
        continue;
      }
      calls += d.calls;
      exec_ms += d.exec_ms;
      std::string head = d.query.substr(0, 8);
      std::transform(head.begin(), head.end(), head.begin(), [](unsigned char ch) { return std::tolower(ch); });
      if (head.rfind("commit", 0) == 0 || head.rfind("rollback", 0) == 0) commits += d.calls;
      statements.push_back(std::move(d));
    }
    std::sort(statements.begin(), statements.end(), [](const Delta& a, const Delta& b) { return a.exec_ms > b.exec_ms; });
    const double deadlocks = after_.deadlocks - before_.deadlocks;

    auto p = [](const std::vector<double>& v, double q) { return std::round(percentile(v, q) * 10) / 10; };
    auto latency_json = [&](const Latencies& l) {
      return json{{"count", l.handoff.size()},
                  {"handoff_p50_ms", p(l.handoff, 0.5)},
                  {"handoff_p99_ms", p(l.handoff, 0.99)},
                  {"handoff_max_ms", l.handoff.empty() ? 0.0 : l.handoff.back()},
                  {"end_to_claim_p50_ms", p(l.to_claim, 0.5)},
                  {"end_to_claim_p99_ms", p(l.to_claim, 0.99)},
                  {"claim_to_run_p50_ms", p(l.claim_to_run, 0.5)},
                  {"claim_to_run_p99_ms", p(l.claim_to_run, 0.99)}};
    };
    json by_kind = json::object(), alone_json = json::object();
    for (const auto& [kind, l] : loaded) by_kind[kind] = latency_json(l);
    for (const auto& [kind, l] : alone) alone_json[kind] = latency_json(l);
    const Latencies& L = loaded["all"];
    const Latencies& A = alone["all"];
    // A result's own way, /run received → recorded at the admin (kept for all nodes only).
    by_kind["all"]["result_p50_ms"] = p(L.result, 0.5);
    by_kind["all"]["result_p99_ms"] = p(L.result, 0.99);
    auto ratio = [](double a, double b) { return b > 0 ? std::round(a / b * 10) / 10 : 0.0; };
    json out = {{"label", s_.label},
                {"shape", s_.shape},
                {"runs", s_.runs},
                {"pace_node_ends_per_s", s_.pace},
                {"workflows", workflow_ids_.size()},
                {"nodes_per_run", shape_.keys.size()},
                {"baseline_runs", baseline_ids_.size()},
                {"warmup_load_runs", warm_ids_.size()},
                {"ok", ok},
                {"runs_by_state", run_states},
                {"rows_by_state", row_states},
                {"nodes_without_exactly_one_row", nodes_without_one_row},
                {"nodes_not_succeeded", nodes_not_succeeded},
                {"open_rows", open},
                {"duplicate_receipts", duplicates},
                {"rows_never_received", never_received},
                {"triggers_not_running", not_running_.load()},
                {"trigger_span_s", static_cast<double>(triggers_to_ms_ - triggers_from_ms_) / 1000.0},
                {"load_s", load_s},
                {"node_ends_per_s", std::round(node_ends_per_s)},
                {"node_ends_peak_per_s", peak},
                {"run_p50_ms", p(durations, 0.5)},
                {"run_p99_ms", p(durations, 0.99)},
                {"loaded", by_kind},
                {"one_at_a_time", alone_json},
                {"handoff_ratio_p50", ratio(percentile(L.handoff, 0.5), percentile(A.handoff, 0.5))},
                {"handoff_ratio_p99", ratio(percentile(L.handoff, 0.99), percentile(A.handoff, 0.99))},
                {"admin_cpu_cores", std::round(admin_cpu * 100) / 100},
                {"db_cpu_cores", db_cpu < 0 ? json(nullptr) : json(std::round(db_cpu * 100) / 100)},
                {"bench_cpu_cores", std::round(own_cpu * 100) / 100},
                {"admin_rss_mb", std::round(static_cast<double>(cronwheel::bench::rss_kb(admin_->pid())) / 1024.0)},
                {"statements_per_node", stats_->has_statements() ? json(std::round(calls / nodes * 10) / 10) : json(nullptr)},
                {"transactions_per_node", stats_->has_statements() ? json(std::round(commits / nodes * 100) / 100) : json(nullptr)},
                {"statement_ms_per_node", stats_->has_statements() ? json(std::round(exec_ms / nodes * 1000) / 1000) : json(nullptr)},
                {"wal_syncs_per_node", std::round((after_.db.wal_syncs - before_.db.wal_syncs) / nodes * 100) / 100},
                {"deadlocks", deadlocks},
                {"lock_wait_sessions", sampler_ ? json(std::round(sampler_->lock_waits() * 100) / 100) : json(nullptr)},
                {"busy_sessions", sampler_ ? json(std::round(sampler_->busy() * 100) / 100) : json(nullptr)},
                {"measured_s", wall_s},
                {"admin_args", s_.admin_args},
                {"sql_before_load", s_.sql_before_load},
                {"executors", s_.executors},
                {"callback_batch", s_.callback_batch},
                {"admin_bin", s_.admin_bin}};

    std::printf("workflow_load %s: %s, %d runs of %zu nodes over %zu workflows, %d fake executors (%d threads, "
                "callbacks of up to %d results), %s\n",
                s_.label.c_str(), s_.shape.c_str(), s_.runs, shape_.keys.size(), workflow_ids_.size(), s_.executors,
                s_.executor_threads, s_.callback_batch, s_.admin_bin.c_str());
    if (!warm_ids_.empty()) {
      std::printf("  warm-up: %zu runs at once and VACUUM ANALYZE, %.1f s, not measured (checked with the others)\n",
                  warm_ids_.size(), warm_s_);
    }
    std::printf("  %d runs triggered in %.2f s from %d connections (%d not running at once); the last node ended "
                "%.1f s after the first trigger\n",
                s_.runs, out["trigger_span_s"].get<double>(), s_.api_connections, not_running_.load(), load_s);
    std::printf("  node ends: %.0f a second on average, %d in the busiest second; runs took p50 %.0f ms, p99 %.0f ms\n",
                node_ends_per_s, peak, percentile(durations, 0.5), percentile(durations, 0.99));
    std::printf("  checks: runs %s; %lld nodes without exactly one run row; %lld nodes not succeeded; %lld rows open; "
                "%zu duplicate /run; %zu rows never received: %s\n",
                json(run_states).dump().c_str(), static_cast<long long>(nodes_without_one_row),
                static_cast<long long>(nodes_not_succeeded), static_cast<long long>(open), duplicates, never_received,
                ok ? "all good" : "FAILED");
    auto line = [&](const std::string& what, const Latencies& l) {
      std::printf("  %-26s %6zu  p50 %7.1f  p99 %7.1f  max %7.1f | end→claim p50 %6.1f p99 %7.1f | claim→/run p50 "
                  "%6.1f p99 %7.1f\n",
                  what.c_str(), l.handoff.size(), percentile(l.handoff, 0.5), percentile(l.handoff, 0.99),
                  l.handoff.empty() ? 0.0 : l.handoff.back(), percentile(l.to_claim, 0.5), percentile(l.to_claim, 0.99),
                  percentile(l.claim_to_run, 0.5), percentile(l.claim_to_run, 0.99));
    };
    std::printf("  hand-off, parent's result recorded → child's /run received (ms):\n");
    line("one at a time", A);
    line("loaded", L);
    for (const auto& [kind, l] : loaded) {
      if (kind != "all") line("loaded, " + kind, l);
    }
    std::printf("  loaded / one at a time: p50 %.1f, p99 %.1f; result (/run → recorded) p50 %.1f ms, p99 %.1f ms\n",
                out["handoff_ratio_p50"].get<double>(), out["handoff_ratio_p99"].get<double>(), percentile(L.result, 0.5),
                percentile(L.result, 0.99));
    std::printf("  admin %.2f cores, %s MB; database %s cores; this process (executors, API clients) %.2f cores\n",
                admin_cpu, out["admin_rss_mb"].dump().c_str(), db_cpu < 0 ? "n/a" : fixed(db_cpu, 2).c_str(), own_cpu);
    if (stats_->has_statements()) {
      std::printf("  per node run: %.1f statements, %.2f transactions, %.3f ms of statement time, %.2f WAL flushes; "
                  "%.0f deadlocks\n",
                  calls / nodes, commits / nodes, exec_ms / nodes, out["wal_syncs_per_node"].get<double>(), deadlocks);
      std::printf("  statements by time (calls per node, ms per node, mean ms, rows per call, text; \"nested\": run by "
                  "a trigger or function, its time part of its caller's):\n");
      auto list = [&](const std::vector<Delta>& v) {
        for (std::size_t i = 0; i < v.size() && i < static_cast<std::size_t>(s_.top_statements); ++i) {
          const auto& d = v[i];
          std::printf("    %6.2f %7.3f %7.3f %7.1f  %s\n", d.calls / nodes, d.exec_ms / nodes, d.exec_ms / d.calls,
                      d.rows / d.calls, d.query.c_str());
        }
      };
      list(statements);
      std::printf("  statements by calls:\n");
      auto by_calls = statements;
      std::sort(by_calls.begin(), by_calls.end(), [](const Delta& a, const Delta& b) { return a.calls > b.calls; });
      list(by_calls);
    }
    if (sampler_) {
      std::size_t samples = 0;
      auto top = sampler_->top(static_cast<std::size_t>(s_.top_waits), samples);
      std::printf("  the admin's database sessions, every %d ms (%zu samples): %.2f busy on average, %.2f of them "
                  "waiting on a lock; by (state | wait | statement):\n",
                  s_.sample_ms, samples, sampler_->busy(), sampler_->lock_waits());
      for (const auto& e : top) std::printf("    %5.2f  %s\n", e.sessions, e.what.c_str());
      std::printf("  sessions waiting on a lock, by the table of the row waited for:\n");
      for (const auto& e : sampler_->lock_waits_by_table()) std::printf("    %5.2f  %s\n", e.sessions, e.what.c_str());
    }
    std::uint64_t requests = 0, sent = 0, retries = 0;
    for (const auto& e : executors_) {
      requests += e->callback_requests();
      sent += e->callbacks_sent();
      retries += e->callback_retries();
    }
    std::printf("  callbacks: %llu results in %llu requests (%llu refused and sent again); the admin counts %s\n",
                static_cast<unsigned long long>(sent), static_cast<unsigned long long>(requests),
                static_cast<unsigned long long>(retries), admin_results_.c_str());
    std::printf("  node ends per second from the first trigger:");
    for (const auto& [second, n] : ends_per_s) std::printf(" %d", n);
    std::printf("\n");
    for (const auto& sql : s_.sql_before_load) std::printf("  before the load: %s\n", sql.c_str());
    for (const auto& n : notes_) std::printf("  note: %s\n", n.c_str());
    std::printf("WORKFLOW_LOAD_JSON %s\n", out.dump().c_str());
    const std::string runs_told =
        std::to_string(s_.runs) + (s_.pace > 0 ? " paced at " + std::to_string(s_.pace) + " node ends/s" : " at once");
    std::printf("WORKFLOW_LOAD_ROW | %s | %s | %s | %s | %.2f | %.0f | %d | %.1f / %.1f | %.1f / %.1f | %.1f / %.1f | "
                "%.1f / %.1f | %.1f / %.1f | %.2f | %s | %s | %s | %.0f | %s |\n",
                s_.label.c_str(), s_.shape.c_str(), runs_told.c_str(), ok ? "yes" : "**no**", out["trigger_span_s"].get<double>(),
                node_ends_per_s, peak, percentile(L.handoff, 0.5), percentile(L.handoff, 0.99), percentile(A.handoff, 0.5),
                percentile(A.handoff, 0.99), out["handoff_ratio_p50"].get<double>(), out["handoff_ratio_p99"].get<double>(),
                percentile(L.to_claim, 0.5), percentile(L.to_claim, 0.99), percentile(L.claim_to_run, 0.5),
                percentile(L.claim_to_run, 0.99), admin_cpu, db_cpu < 0 ? "n/a" : fixed(db_cpu, 2).c_str(),
                out["statements_per_node"].is_null() ? "n/a" : fixed(calls / nodes, 1).c_str(),
                out["transactions_per_node"].is_null() ? "n/a" : fixed(commits / nodes, 2).c_str(), deadlocks,
                sampler_ ? fixed(sampler_->lock_waits(), 2).c_str() : "n/a");
    std::fflush(stdout);
    if (!s_.json_out.empty()) {
      std::ofstream f(s_.json_out, std::ios::app);
      f << out.dump() << "\n";
    }
    return ok;
  }

  void teardown() noexcept {
    try {
      sampler_.reset();
      // Executors first: they deliver the results they still hold while the admin is up.
      for (auto& e : executors_) e->stop(2s);
      if (admin_) {
        const int code = admin_->stop(30s);
        if (code != 0) std::fprintf(stderr, "the admin ended with %d\n%s\n", code, admin_->tail().c_str());
        if (!s_.admin_log.empty()) {
          std::ofstream f(s_.admin_log);
          f << admin_->output();
        }
      }
      admin_.reset();
      executors_.clear();
      db_.reset();
      stats_.reset();
      if (created_db_ && !s_.keep_db) {
        pqxx::connection c(server_url_);
        pqxx::nontransaction tx(c);
        tx.exec("DROP DATABASE IF EXISTS " + tx.quote_name(database_) + " WITH (FORCE)");
      }
      created_db_ = false;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "workflow_load: clean-up: %s\n", e.what());
    }
  }

  Settings s_;
  Shape shape_;
  std::string server_url_, database_, db_url_;
  bool created_db_ = false;
  std::unique_ptr<DbStats> stats_;
  std::unique_ptr<AdminProcess> admin_;
  std::vector<std::unique_ptr<FakeExecutor>> executors_;
  std::vector<Api> apis_;
  std::unique_ptr<pqxx::connection> db_;
  std::unique_ptr<ActivitySampler> sampler_;
  std::vector<std::int64_t> workflow_ids_;
  std::vector<std::int64_t> warm_ids_, baseline_ids_, load_ids_;
  double warm_s_ = 0;
  std::atomic<int> not_running_{0};
  std::int64_t triggers_from_ms_ = 0, triggers_to_ms_ = 0;
  std::string admin_results_;
  Snapshot before_, after_;
  std::vector<std::string> notes_;
};

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  CLI::App app{"workflow_load: many workflow runs at once, end to end (a real admin, PostgreSQL, fake executors)"};
  app.add_option("--db-url", s.db_url,
                 "PostgreSQL server URL of a superuser (default: $CRONWHEEL_TEST_DB_URL); a fresh database is created "
                 "on it and dropped")
      ->envname("CRONWHEEL_TEST_DB_URL");
  app.add_option("--admin-bin", s.admin_bin, "The cronwheel-admin binary to measure")->capture_default_str();
  app.add_option("--label", s.label, "Names the admin build in the report")->capture_default_str();
  app.add_option("--shape", s.shape, "chain: n1 → … → n10; fanout: a → b1..b8 → z")
      ->check(CLI::IsMember({"chain", "fanout"}))
      ->capture_default_str();
  app.add_option("--runs", s.runs, "Runs triggered (at once, unless --pace)")->check(CLI::Range(1, 100'000))->capture_default_str();
  app.add_option("--pace", s.pace,
                 "Node ends a second to aim at: the runs are triggered evenly, one every nodes-per-run / PACE "
                 "seconds (0: all at once)")
      ->check(CLI::Range(0, 100'000))
      ->capture_default_str();
  app.add_option("--per-workflow", s.per_workflow,
                 "Runs per workflow (its maxParallel): the runs are spread over runs / this identical workflows")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  app.add_option("--baseline-runs", s.baseline_runs, "Runs measured one at a time before the load")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--warmup-load", s.warmup_load,
                 "Runs triggered at once first, not measured, then VACUUM ANALYZE (default: as many as --runs; 0: none)")
      ->check(CLI::Range(-1, 100'000));
  app.add_option("--warmup-runs", s.warmup_runs, "Runs one at a time before those, not measured")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  app.add_option("--executors", s.executors, "Fake executors")->check(CLI::Range(1, 64))->capture_default_str();
  app.add_option("--executor-threads", s.executor_threads, "Worker threads per fake executor")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_option("--callback-batch", s.callback_batch,
                 "Results per callback request at most (the real executor's: 1000)")
      ->check(CLI::Range(1, 10'000))
      ->capture_default_str();
  app.add_option("--api-connections", s.api_connections, "Parallel API connections triggering the runs")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_option("--drain", s.drain, "Seconds after the triggers the runs may take to end")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  app.add_option("--pg-pid", s.pg_pid, "The postmaster's pid: its and its backends' CPU are reported");
  app.add_option("--top-statements", s.top_statements, "Statements listed, by time")->capture_default_str();
  app.add_option("--sample-ms", s.sample_ms, "pg_stat_activity sampled this often during the load (0: not at all)")
      ->check(CLI::Range(0, 10'000))
      ->capture_default_str();
  app.add_option("--top-waits", s.top_waits, "Session states listed")->capture_default_str();
  app.add_option("--admin-arg", s.admin_args, "More flags for the admin, e.g. --admin-arg='--db-pool-size 16' (repeatable)");
  app.add_option("--sql-before-load", s.sql_before_load,
                 "A statement run on the bench database after the runs one at a time, before the load: what-if "
                 "experiments, e.g. \"ALTER TABLE job_log_finished DISABLE TRIGGER job_run_report_on_update\" (repeatable)");
  app.add_option("--admin-log", s.admin_log, "Write the admin's output to this file at the end");
  app.add_flag("--check", s.check, "Exit 1 unless every run succeeded and every node ran exactly once");
  app.add_flag("--keep-db", s.keep_db, "Keep the database afterwards");
  app.add_option("--json-out", s.json_out, "Append the result's JSON line to this file");
  CLI11_PARSE(app, argc, argv);
  if (s.db_url.empty()) {
    std::fprintf(stderr, "workflow_load: no database: pass --db-url or set CRONWHEEL_TEST_DB_URL "
                         "(tests/bench/workflow_load.sh starts one)\n");
    return 2;
  }
  if (s.warmup_load < 0) s.warmup_load = s.runs;
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  spdlog::set_level(spdlog::level::warn);
  ::signal(SIGPIPE, SIG_IGN);
  try {
    WorkflowLoad load(s);
    return load.run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "workflow_load: %s\n", e.what());
    return 2;
  }
}
