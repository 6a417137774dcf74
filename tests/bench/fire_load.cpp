// End-to-end load on the fire path, as a user with many jobs sees it: a fresh database on a real
// PostgreSQL, one or two real cronwheel-admin processes (any build: --admin-bin), and fast fake
// executors in this process (fake_executor.h) in a group with a fixed address list. N jobs are
// created and started through the REST API; then it measures, at the executors, every fire's
// lateness from its scheduled instant (the /run body's logDateTime) to receipt, and per
// (job, second) whether it arrived exactly once; and at the admin, its CPU and RSS, and at the
// database, statements, transactions and WAL flushes per fire.
//
//  steady: N jobs `* * * * * ?`; after --warmup seconds, a window of --seconds scheduled seconds.
//  burst:  N jobs `S * * * * ?`, all due in the same second S (a few seconds after the last
//          start); measured from 5.5 s before that second (the scan that decides it) until every
//          run row is final or --drain runs out.
//
// Prints a human summary, one machine-readable line (FIRE_LOAD_JSON {...}) and one markdown
// table row (FIRE_LOAD_ROW | ... |), the same keys and columns for every build and mode, so that
// runs of two admin builds can be set side by side (tests/bench/fire_load.sh does).
//
// --executor-lead true: the fake executors register with the admins as executors that take lead
// dispatch (docs/scheduling.md, "Lead dispatch"), so an admin build that does it hands each
// second's fires over by POST /lead ahead of their instant and the executors start them then;
// the report says how many measured runs came each way ("led", "posted"). Lateness is to the
// start either way.
//
// --check makes it a correctness check: exit 1 unless every fire of the window arrived exactly
// once, no run row failed and the run table has exactly one succeeded row per (job, second).
// Never a check of speed. Without --check it exits 0 once it measured, whatever it measured.
//
// Everything it starts (admins as child processes, executors as threads) it stops by pid or
// joins before exiting; the database it creates it drops (unless --keep-db). Loopback only.
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
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
#include "tests/support/process.h"
#include "tests/support/test_database.h"
#include "tests/support/wall_time.h"

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using nlohmann::json;
using cronwheel::bench::AdminProcess;
using cronwheel::bench::DbCounters;
using cronwheel::bench::DbStats;
using cronwheel::bench::FakeExecutor;
using cronwheel::bench::clock_ticks;
using cronwheel::bench::fixed;
using cronwheel::bench::own_cpu_seconds;
using cronwheel::bench::percentile;
using cronwheel::bench::read_stat;
using cronwheel::bench::rss_kb;
using cronwheel::bench::tree_cpu_ticks;
using cronwheel::bench::Receipt;
using cronwheel::testing::Api;
using cronwheel::testing::Process;
using cronwheel::testing::in_parallel;
using cronwheel::testing::now_ms;
using cronwheel::testing::sleep_until_ms;

constexpr const char* kPassword = "fire-load-password";
constexpr const char* kToken = "fire-load-token";
constexpr const char* kAppName = "fire-load";  // the measured jobs' group
// --executor-lead: how often the admins read the executors' registrations (their default is 30 s).
constexpr const char* kLeadRegistryRefresh = "--registry-refresh-ms 500";

struct Settings {
  std::string db_url;
  std::string admin_bin = std::string(CRONWHEEL_BIN_DIR) + "/cronwheel-admin";
  std::string label = "admin";
  std::string mode = "steady";
  int jobs = 100;
  int seconds = 20;
  int warmup = 5;
  int admins = 1;
  int executors = 2;
  int executor_threads = 4;
  int callback_batch = 1000;  // the real executor's max_batch
  std::string route = "ROUND";
  std::string misfire = "DO_NOTHING";
  std::vector<std::string> admin_args;
  int api_connections = 8;
  int drain = 30;
  int pg_pid = 0;
  int top_statements = 0;
  bool per_second = false;
  bool check = false;
  bool keep_db = false;
  std::string json_out;
  std::string admin_log_dir;  // when set: each admin's output, written there at the end
  int kill_admin_at = -1;     // steady, 2+ admins: SIGKILL the last admin this many s into the window
  int outage_at = -1;         // steady: the database refuses the admins this many s into the window,
  int outage_for = 10;        // for this many s
  int idle_jobs = 0;          // hourly jobs written straight into the database beside the N measured
  int old_runs = 0;           // finished runs 40 days old, written before the admins start
  bool executor_lead = false; // the fake executors register and take lead dispatch
};

[[noreturn]] void fail(const std::string& why) { throw std::runtime_error(why); }

// ---------------------------------------------------------------------------------------------
// Measurement.

struct Snapshot {
  std::int64_t at_ms = 0;
  std::int64_t old_runs = 0;  // --old-runs rows not deleted yet
  std::vector<std::uint64_t> admin_ticks;
  std::uint64_t db_ticks = 0;
  double own_cpu_s = 0;
  DbCounters db;
};

// Samples the admins' RSS every 200 ms while running; keeps the largest per admin.
class RssSampler {
 public:
  explicit RssSampler(std::vector<int> pids) : pids_(std::move(pids)), max_kb_(pids_.size(), 0) {
    thread_ = std::thread([this] {
      while (!stop_) {
        sample();
        std::this_thread::sleep_for(200ms);
      }
    });
  }
  ~RssSampler() { finish(); }
  void finish() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    sample();
  }
  std::vector<std::uint64_t> max_kb() {
    std::lock_guard lock(mutex_);
    return max_kb_;
  }

 private:
  void sample() {
    std::lock_guard lock(mutex_);
    for (std::size_t i = 0; i < pids_.size(); ++i) max_kb_[i] = std::max(max_kb_[i], rss_kb(pids_[i]));
  }
  std::vector<int> pids_;
  std::mutex mutex_;
  std::vector<std::uint64_t> max_kb_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// ---------------------------------------------------------------------------------------------

class FireLoad {
 public:
  explicit FireLoad(Settings s) : s_(std::move(s)) {}

  ~FireLoad() { teardown(); }

  int run() {
    setup();
    create_jobs();
    if (s_.mode == "burst") {
      measure_burst();
    } else {
      measure_steady();
    }
    stop_jobs();
    read_run_table();
    const bool ok = report();
    teardown();
    return s_.check && !ok ? 1 : 0;
  }

 private:
  void setup() {
    server_url_ = s_.db_url;
    database_ = "fire_load_" + std::to_string(::getpid()) + "_" + std::to_string(now_ms() % 1000000);
    {
      pqxx::connection c(server_url_);
      pqxx::nontransaction tx(c);
      tx.exec("CREATE DATABASE " + tx.quote_name(database_));
    }
    created_db_ = true;
    db_url_ = cronwheel::testing::TestDatabase::with_database(server_url_, database_);
    stats_ = std::make_unique<DbStats>(server_url_, database_);
    if (!stats_->note().empty()) notes_.push_back(stats_->note());

    if (s_.old_runs > 0) add_old_runs();
    std::vector<std::string> admin_args = s_.admin_args;
    if (s_.executor_lead && std::none_of(admin_args.begin(), admin_args.end(), [](const std::string& a) {
          return a.find("--registry-refresh-ms") != std::string::npos;
        })) {
      // So that an admin learns within a second that the executors take lead dispatch.
      admin_args.insert(admin_args.begin(), kLeadRegistryRefresh);
    }
    for (int i = 0; i < s_.admins; ++i) {
      admins_.push_back(std::make_unique<AdminProcess>(AdminProcess::Options{
          s_.admin_bin, db_url_, "fire-load-" + std::to_string(i + 1), kPassword, kToken, admin_args}));
    }
    for (auto& a : admins_) {
      if (a->wait_until_listening(90s) == 0) fail("admin " + a->node_id() + " did not start:\n" + a->tail());
    }
    for (int i = 0; i < s_.executors; ++i) {
      FakeExecutor::Options o;
      o.access_token = kToken;
      o.worker_threads = static_cast<std::size_t>(s_.executor_threads);
      o.max_batch = static_cast<std::size_t>(s_.callback_batch);
      o.lead = s_.executor_lead;
      o.app_name = kAppName;
      // Each executor prefers another admin first, as a deployment would spread them.
      for (int k = 0; k < s_.admins; ++k) {
        o.admin_urls.push_back(admins_[static_cast<std::size_t>((i + k) % s_.admins)]->url());
      }
      executors_.push_back(std::make_unique<FakeExecutor>(o));
      executors_.back()->start();
    }
    for (auto& a : admins_) {
      apis_.emplace_back(a->port());
      apis_.back().login("admin", kPassword);
    }
  }

  void create_jobs() {
    const auto started = std::chrono::steady_clock::now();
    std::vector<std::string> addresses;
    for (auto& e : executors_) addresses.push_back(e->address());
    {
      auto client = apis_[0].client();
      auto g = apis_[0].post(*client, "groups",
                             {{"appName", kAppName}, {"title", "fire load"}, {"addressType", 1},
                              {"addressList", addresses}});
      if (g.status != 201) fail("cannot create the group: " + std::to_string(g.status) + " " + g.text);
      group_id_ = g.body.value("id", std::int64_t{0});
    }
    if (s_.executor_lead) wait_for_lead_registrations();
    if (s_.idle_jobs > 0) add_idle_jobs(addresses);

    std::string cron = "* * * * * ?";
    if (s_.mode == "burst") {
      // All jobs due at second S of a minute, chosen so that the first such second comes a few
      // seconds after the last start: the API's pace is measured on 40 jobs that are never
      // started. If the starts take longer after all, the burst is the next minute's.
      const int probes = 40;
      const auto probing = std::chrono::steady_clock::now();
      in_parallel(apis_, std::max(1, s_.api_connections), probes, [&](const Api& api, httplib::Client& client, int i) {
        auto r = api.post(client, "jobs", {{"jobGroup", group_id_}, {"jobDesc", "fire load probe " + std::to_string(i)},
                                           {"scheduleType", "NONE"}, {"executorHandler", "fire"}});
        if (r.status != 201) fail("cannot create a job: " + std::to_string(r.status) + " " + r.text);
      });
      const double per_call_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - probing).count() / probes;
      const std::int64_t expected_ms =
          now_ms() + static_cast<std::int64_t>(2.5 * per_call_s * 2 * s_.jobs * 1000) + 8000;
      burst_second_ = static_cast<int>((expected_ms / 1000) % 60);
      planned_burst_ms_ = expected_ms / 1000 * 1000;
      cron = std::to_string(burst_second_) + " * * * * ?";
    }
    job_ids_.assign(static_cast<std::size_t>(s_.jobs), 0);
    first_fire_.assign(static_cast<std::size_t>(s_.jobs), 0);
    const int threads = std::max(1, s_.api_connections);
    in_parallel(apis_, threads, s_.jobs, [&](const Api& api, httplib::Client& client, int i) {
      json body = {{"jobGroup", group_id_},
                   {"jobDesc", "fire load " + std::to_string(i)},
                   {"author", "fire_load"},
                   {"scheduleType", "CRON"},
                   {"scheduleConf", cron},
                   {"misfireStrategy", s_.misfire},
                   {"executorRouteStrategy", s_.route},
                   {"executorHandler", "fire"},
                   {"executorBlockStrategy", "SERIAL_EXECUTION"}};
      auto r = api.post(client, "jobs", body);
      if (r.status != 201) fail("cannot create a job: " + std::to_string(r.status) + " " + r.text);
      job_ids_[static_cast<std::size_t>(i)] = r.body.value("id", std::int64_t{0});
    });
    create_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const auto starting = std::chrono::steady_clock::now();
    in_parallel(apis_, threads, s_.jobs, [&](const Api& api, httplib::Client& client, int i) {
      auto r = api.post(client, "jobs/" + std::to_string(job_ids_[static_cast<std::size_t>(i)]) + "/start", json::object());
      if (r.status != 200) fail("cannot start a job: " + std::to_string(r.status) + " " + r.text);
      first_fire_[static_cast<std::size_t>(i)] = r.body.value("triggerNextTime", std::int64_t{0});
    });
    started_at_ms_ = now_ms();
    start_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - starting).count();
    for (std::size_t i = 0; i < job_ids_.size(); ++i) index_of_[job_ids_[i]] = i;
  }

  // --executor-lead: waits until the admins' registry says every fake executor takes lead
  // dispatch (GET groups/{id}/executors), then one more registry refresh of the admins (500 ms),
  // so that the jobs' first fires already go by lead where the admin build does lead dispatch.
  // Whether an admin build then uses it is its own business: a build started with
  // --lead-dispatch false posts every fire to /run.
  void wait_for_lead_registrations() {
    std::set<std::string> want;
    for (auto& e : executors_) want.insert(e->address());
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    auto client = apis_[0].client();
    std::string seen;
    while (true) {
      auto r = apis_[0].get(*client, "groups/" + std::to_string(group_id_) + "/executors?limit=100");
      std::set<std::string> leading;
      if (r.status == 200 && r.body.is_object() && r.body.contains("items") && r.body["items"].is_array()) {
        for (const auto& item : r.body["items"]) {
          if (item.is_object() && item.value("leadDispatch", false)) leading.insert(item.value("address", ""));
        }
        seen = r.text.substr(0, 1000);
      } else {
        seen = std::to_string(r.status) + " " + r.text.substr(0, 300);
      }
      if (std::includes(leading.begin(), leading.end(), want.begin(), want.end())) break;
      if (std::chrono::steady_clock::now() >= deadline) {
        std::string why;
        for (auto& e : executors_) {
          why += "\n  " + e->address() + ": " + std::to_string(e->registrations()) + " registrations accepted" +
                 (e->last_registry_error().empty() ? "" : ", last refusal: " + e->last_registry_error());
        }
        fail("--executor-lead: after 20 s the admin still does not list every fake executor with leadDispatch "
             "true; GET groups/" + std::to_string(group_id_) + "/executors answered: " + seen + why);
      }
      check_alive();
      std::this_thread::sleep_for(100ms);
    }
    std::this_thread::sleep_for(1s);
  }

  // --idle-jobs: M enabled jobs in a group of their own on the same executors, each firing once an
  // hour at its own second of the hour (job k at second k % 3600), so about M / 3600 fires a
  // second beside the measured jobs', with their next times as the API would have set them.
  // Written straight into the database, 100,000 a transaction: the API takes about 175 jobs a
  // second, hours for a million. Their fires reach the executors but are not measured (every
  // count of the run table is of the measured group).
  void add_idle_jobs(const std::vector<std::string>& addresses) {
    const auto started = std::chrono::steady_clock::now();
    std::int64_t idle_group = 0;
    {
      auto client = apis_[0].client();
      auto g = apis_[0].post(*client, "groups",
                             {{"appName", "fire-load-idle"}, {"title", "fire load, idle jobs"}, {"addressType", 1},
                              {"addressList", addresses}});
      if (g.status != 201) fail("cannot create the idle jobs' group: " + std::to_string(g.status) + " " + g.text);
      idle_group = g.body.value("id", std::int64_t{0});
    }
    pqxx::connection c(db_url_);
    constexpr int kChunk = 100'000;
    for (int from = 1; from <= s_.idle_jobs; from += kChunk) {
      const int to = std::min(s_.idle_jobs, from + kChunk - 1);
      const std::int64_t now = now_ms();
      pqxx::work tx(c);
      tx.exec_params(
          "WITH s AS (SELECT i, i % 3600 AS k FROM generate_series($6::int, $7::int) AS i),"
          " j AS (INSERT INTO job_info (job_group, job_desc, author, schedule_type, schedule_conf, timezone,"
          "                             misfire_strategy, executor_route_strategy, executor_handler) "
          "       SELECT $1, 'fire load idle ' || i, 'fire_load', 'CRON', (k % 60) || ' ' || (k / 60) || ' * * * ?',"
          "              'UTC', $2, $3, 'fire' FROM s RETURNING id, job_group, job_desc) "
          "INSERT INTO job_schedule (job_id, count_group, trigger_status, trigger_next_time) "
          "SELECT j.id, j.job_group, 1,"
          "       CASE WHEN $4::bigint + k * 1000 > $5::bigint + 10000 THEN $4::bigint + k * 1000"
          "            ELSE $4::bigint + k * 1000 + 3600000 END "
          "FROM j JOIN s ON j.job_desc = 'fire load idle ' || s.i",
          idle_group, s_.misfire, s_.route, now / 3'600'000 * 3'600'000, now, from, to);
      tx.commit();
    }
    // Every table the insert touched (job_info_text's search indexes too), so that no autovacuum
    // of a million new rows runs in the measured window.
    pqxx::nontransaction(c).exec("VACUUM (ANALYZE)");
    idle_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::printf("  %d idle hourly jobs written in %.0f s\n", s_.idle_jobs, idle_s_);
    std::fflush(stdout);
  }

  // --old-runs: N succeeded runs scheduled 40 days ago, one a second, of one job in a group of
  // its own, written before the admins start (the schema by `cronwheel-admin migrate`), 100,000 a
  // transaction. The admins' run retention (default 30 days, first pass 10 s after the start)
  // deletes them while the jobs are made and fire; the snapshots count what is left, so the
  // report says whether the deletion overlapped the window. Never counted as measured runs.
  void add_old_runs() {
    const auto started = std::chrono::steady_clock::now();
    Process migrate({s_.admin_bin, "migrate", "--db-url", db_url_});
    if (migrate.wait_for_exit(120s) != 0) fail("cronwheel-admin migrate failed:\n" + migrate.err());
    pqxx::connection c(db_url_);
    {
      pqxx::work tx(c);
      old_group_ = tx.exec1("INSERT INTO job_group (app_name, title) VALUES ('fire-load-old', 'old runs') RETURNING id")[0]
                       .as<std::int64_t>();
      old_job_ = tx.exec_params1("INSERT INTO job_info (job_group, job_desc, schedule_type, executor_handler) "
                                 "VALUES ($1, 'old runs', 'NONE', 'fire') RETURNING id",
                                 old_group_)[0]
                     .as<std::int64_t>();
      tx.commit();
    }
    const std::int64_t first = now_ms() - 40LL * 24 * 3600 * 1000;
    constexpr int kChunk = 100'000;
    for (int from = 0; from < s_.old_runs; from += kChunk) {
      const int to = std::min(s_.old_runs, from + kChunk) - 1;
      pqxx::work tx(c);
      tx.exec_params(
          "INSERT INTO job_log_finished (job_group, job_id, state, trigger_type, scheduled_time, admin_node,"
          "                     executor_address, executor_handler, trigger_time, trigger_code, handle_time, handle_code, alarm_status) "
          "SELECT $1, $2, 'succeeded', 'SCHEDULE', t, 'old-node', 'http://127.0.0.1:1/', 'fire',"
          "       timestamptz 'epoch' + t * interval '1 millisecond', 200,"
          "       timestamptz 'epoch' + (t + 50) * interval '1 millisecond', 200, 1 "
          "FROM (SELECT $3::bigint + i::bigint * 1000 AS t FROM generate_series($4::int, $5::int) AS i) s",
          old_group_, old_job_, first, from, to);
      tx.commit();
    }
    pqxx::nontransaction(c).exec("VACUUM (ANALYZE)");
    old_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::printf("  %d old runs written in %.0f s\n", s_.old_runs, old_s_);
    std::fflush(stdout);
  }

  // The scans' writes between the window's two snapshots: calls (one a scan), statement time and
  // rows (fires and misfire records inserted). PgScheduleStore writes a scan with two statements,
  // sched_advance and sched_insert_fires; builds before migration 0027 with one (sched_write,
  // "WITH advanced AS ..."), so either can be measured.
  struct ScanWrites {
    double calls = 0, exec_ms = 0, rows = 0;
  };
  ScanWrites scan_writes() const {
    ScanWrites w;
    for (const auto& [id, st] : after_.db.by_statement) {
      const bool one_statement = st.query.rfind("WITH advanced AS", 0) == 0;
      // By their first words (DbStats keeps 160 characters of each).
      const bool advance =
          st.query.rfind("WITH guard AS MATERIALIZED (SELECT $1::bigint[] AS ids, $2::bigint[] AS read_nexts", 0) == 0;
      const bool insert = st.query.rfind(
                              "WITH guard AS MATERIALIZED (SELECT $1::bigint[] AS jobs, $2::bigint[] AS times, "
                              "$3::text[] AS types",
                              0) == 0;
      if (!one_statement && !advance && !insert) continue;
      auto b = before_.db.by_statement.find(id);
      const bool seen = b != before_.db.by_statement.end();
      w.exec_ms += st.exec_ms - (seen ? b->second.exec_ms : 0);
      if (advance) continue;
      w.calls += st.calls - (seen ? b->second.calls : 0);
      w.rows += st.rows - (seen ? b->second.rows : 0);
    }
    return w;
  }

  Snapshot snapshot() {
    Snapshot s;
    s.at_ms = now_ms();
    for (std::size_t i = 0; i < admins_.size(); ++i) {
      if (admins_[i]->killed()) {
        s.admin_ticks.push_back(killed_ticks_);
        continue;
      }
      auto st = read_stat(admins_[i]->pid());
      s.admin_ticks.push_back(st ? st->cpu_ticks : 0);
    }
    s.db_ticks = tree_cpu_ticks(s_.pg_pid);
    s.own_cpu_s = own_cpu_seconds();
    s.db = stats_->read();
    if (s_.old_runs > 0) {
      pqxx::nontransaction tx(bench_db());
      s.old_runs = tx.exec_params1("SELECT count(*) FROM job_log WHERE job_group = $1", old_group_)[0].as<std::int64_t>();
    }
    return s;
  }

  std::vector<Receipt> all_receipts() const {
    std::vector<Receipt> all;
    for (const auto& e : executors_) {
      auto r = e->receipts();
      all.insert(all.end(), r.begin(), r.end());
    }
    return all;
  }

  // Receipts of the measured fires: scheduled in [from_, to_) and of this run's jobs.
  std::size_t window_received() const {
    std::size_t n = 0;
    for (const auto& r : all_receipts()) {
      if (r.scheduled_ms >= from_ && r.scheduled_ms < to_ && index_of_.count(r.job_id)) ++n;
    }
    return n;
  }

  void check_alive() {
    for (auto& a : admins_) {
      if (!a->killed() && !a->running()) fail("admin " + a->node_id() + " exited:\n" + a->tail());
    }
  }

  // Waits until every fire of the window arrived, or none can arrive any more (each has its
  // row and none is left pending or sending), or the drain bound; checks the admins meanwhile.
  void drain(std::int64_t until_ms) {
    int round = 0;
    while (now_ms() < until_ms && window_received() < expected_) {
      check_alive();
      if (++round % 5 == 0) {
        pqxx::nontransaction tx(bench_db());
        auto r = tx.exec_params1("SELECT count(*), count(*) FILTER (WHERE state IN ('pending', 'sending')) FROM job_log "
                                 "WHERE job_group = $1 AND scheduled_time >= $2 AND scheduled_time < $3",
                                 group_id_, from_, to_);
        // After a fault a misfire row may stand for many seconds: then only "nothing left to send".
        const bool faults = s_.kill_admin_at >= 0 || s_.outage_at >= 0;
        if ((faults || r[0].as<std::int64_t>() >= static_cast<std::int64_t>(expected_)) && r[1].as<std::int64_t>() == 0) {
          return;
        }
      }
      std::this_thread::sleep_for(200ms);
    }
  }

  void measure_steady() {
    std::int64_t first = 0;
    for (auto t : first_fire_) first = std::max(first, t);
    from_ = (first + 999) / 1000 * 1000 + static_cast<std::int64_t>(s_.warmup) * 1000;
    to_ = from_ + static_cast<std::int64_t>(s_.seconds) * 1000;
    expected_ = static_cast<std::size_t>(s_.jobs) * static_cast<std::size_t>(s_.seconds);
    sleep_until_ms(from_);
    check_alive();
    before_ = snapshot();
    RssSampler rss(admin_pids());
    if (s_.kill_admin_at >= 0) {
      sleep_until_ms(from_ + static_cast<std::int64_t>(s_.kill_admin_at) * 1000);
      // The node holding the most fires claimed ahead (pending or sending): its crash is the
      // one with something to lose.
      std::string holder;
      std::int64_t held = 0;
      {
        pqxx::nontransaction tx(bench_db());
        auto r = tx.exec_params("SELECT admin_node, count(*) FROM job_log WHERE job_group = $1 AND state IN "
                                "('pending', 'sending') GROUP BY 1 ORDER BY 2 DESC LIMIT 1",
                                group_id_);
        if (!r.empty()) {
          holder = r[0][0].as<std::string>("");
          held = r[0][1].as<std::int64_t>();
        }
      }
      killed_ = admins_.size() - 1;
      for (std::size_t i = 0; i < admins_.size(); ++i) {
        if (admins_[i]->node_id() == holder) killed_ = i;
      }
      killed_at_ms_ = now_ms();
      killed_ticks_ = admins_[killed_]->kill();
      std::printf("  killed admin %s (SIGKILL) at %lld, %.1f s into the window; it held %lld fires claimed ahead\n",
                  admins_[killed_]->node_id().c_str(), static_cast<long long>(killed_at_ms_),
                  static_cast<double>(killed_at_ms_ - from_) / 1000.0,
                  static_cast<long long>(admins_[killed_]->node_id() == holder ? held : 0));
    }
    if (s_.outage_at >= 0) database_outage();
    sleep_until_ms(to_);
    after_ = snapshot();
    rss.finish();
    rss_kb_ = rss.max_kb();
    check_alive();
    drain(to_ + static_cast<std::int64_t>(s_.drain) * 1000);
    wait_for_final_rows(now_ms() + 15'000);
  }

  void measure_burst() {
    // The burst: the first second S at least 6 s after the last start, so that the scan decides
    // it as it decides any fire (up to 5 s ahead), not as an overdue catch-up.
    std::int64_t t = (started_at_ms_ + 6000 + 999) / 1000 * 1000;
    while ((t / 1000) % 60 != burst_second_) t += 1000;
    from_ = t;
    to_ = t + 1;
    expected_ = static_cast<std::size_t>(s_.jobs);
    if (t > planned_burst_ms_ + 30'000) {
      notes_.push_back("the starts took longer than planned: the burst is the next minute's (" +
                       std::to_string((t - started_at_ms_) / 1000) + " s after the last start)");
    }
    sleep_until_ms(t - 5500);
    check_alive();
    before_ = snapshot();
    RssSampler rss(admin_pids());
    const std::int64_t bound = t + static_cast<std::int64_t>(std::min(s_.drain, 45)) * 1000;
    drain(bound);
    wait_for_final_rows(bound);
    after_ = snapshot();
    rss.finish();
    rss_kb_ = rss.max_kb();
    // Backends report WAL statistics up to 10 s late: the flushes of the burst are read once
    // they have, before the next minute's scan (at S + 55 s) starts deciding the next burst.
    const std::int64_t settle = std::min(now_ms() + 11'000, t + 53'000);
    sleep_until_ms(settle);
    after_.db.wal_syncs = stats_->read().wal_syncs;
  }

  // The run database goes away for the admins: it refuses new connections and every open one is
  // ended, for outage_for seconds, then it is back. (PostgreSQL itself keeps running, so the
  // measurement's own counters go on.)
  void database_outage() {
    sleep_until_ms(from_ + static_cast<std::int64_t>(s_.outage_at) * 1000);
    pqxx::connection c(server_url_);
    pqxx::nontransaction tx(c);
    const std::string db = tx.quote_name(database_);
    outage_from_ms_ = now_ms();
    tx.exec("ALTER DATABASE " + db + " ALLOW_CONNECTIONS false");
    const std::int64_t until = outage_from_ms_ + static_cast<std::int64_t>(s_.outage_for) * 1000;
    while (now_ms() < until) {
      tx.exec_params("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", database_);
      std::this_thread::sleep_for(200ms);
    }
    tx.exec("ALTER DATABASE " + db + " ALLOW_CONNECTIONS true");
    outage_to_ms_ = now_ms();
    bench_db_.reset();  // ended with the others
    std::printf("  database away for the admins from %.1f s to %.1f s into the window\n",
                static_cast<double>(outage_from_ms_ - from_) / 1000.0, static_cast<double>(outage_to_ms_ - from_) / 1000.0);
  }

  std::size_t callbacks_queued_at_end() const {
    std::size_t n = 0;
    for (const auto& e : executors_) n += e->callbacks_queued();
    return n;
  }

  std::vector<int> admin_pids() const {
    std::vector<int> pids;
    for (const auto& a : admins_) pids.push_back(a->pid());
    return pids;
  }

  pqxx::connection& bench_db() {
    if (!bench_db_) bench_db_ = std::make_unique<pqxx::connection>(db_url_);
    return *bench_db_;
  }

  // Waits until no run row of the window is pending, sending or triggered (or `until_ms`).
  void wait_for_final_rows(std::int64_t until_ms) {
    while (true) {
      std::int64_t open = 0;
      {
        pqxx::nontransaction tx(bench_db());
        open = tx.exec_params1("SELECT count(*) FROM job_log WHERE job_group = $1 AND scheduled_time >= $2 AND "
                               "scheduled_time < $3 AND state IN ('pending', 'sending', 'triggered')",
                               group_id_, from_, to_)[0]
                   .as<std::int64_t>();
      }
      if (open == 0 || now_ms() >= until_ms) return;
      check_alive();
      std::this_thread::sleep_for(250ms);
    }
  }

  // The window is measured and its runs are final: the jobs stop firing, so that reading the run
  // table does not compete with the load, and the run tables' statistics are brought up to date
  // for the reads' plans (at 10,000 fires a second, a 60 s window's exactly-once check ran for
  // minutes, planned while autovacuum had not yet counted the window's 600,000 rows). Fires
  // decided already still go out.
  void stop_jobs() {
    pqxx::nontransaction tx(bench_db());
    // Locks the schedule rows in id order, as the admins' scans and a group's pause do: in another
    // order this statement and a scan each waited for the other until PostgreSQL ended this one
    // as a deadlock.
    tx.exec_params("WITH locked AS (SELECT job_id FROM job_schedule WHERE job_id IN (SELECT id FROM job_info WHERE"
                   " job_group = $1) ORDER BY job_id FOR UPDATE)"
                   " UPDATE job_schedule s SET trigger_status = 0 FROM locked WHERE s.job_id = locked.job_id",
                   group_id_);
    tx.exec("ANALYZE job_log_active, job_log_finished");
  }

  void read_run_table() {
    pqxx::nontransaction tx(bench_db());
    for (const auto& r : tx.exec_params("SELECT state, count(*) FROM job_log WHERE job_group = $1 AND scheduled_time >= $2"
                                        " AND scheduled_time < $3 GROUP BY state ORDER BY state",
                                        group_id_, from_, to_)) {
      log_states_[r[0].as<std::string>()] = r[1].as<std::int64_t>();
    }
    auto d = tx.exec_params1(
        "SELECT count(DISTINCT (job_id, scheduled_time)), count(*) FROM job_log WHERE job_group = $1 AND "
        "scheduled_time >= $2 AND scheduled_time < $3",
        group_id_, from_, to_);
    log_distinct_ = d[0].as<std::int64_t>();
    log_rows_ = d[1].as<std::int64_t>();
    // Of the cancelled rows, the records of fires a scan shed past capacity (docs/scheduling.md,
    // "Past capacity"), each covering several fire times; the rest are fires cancelled one by one.
    shed_records_ = tx.exec_params1("SELECT count(*) FROM job_log WHERE job_group = $1 AND scheduled_time >= $2 AND "
                                    "scheduled_time < $3 AND state = 'cancelled' AND trigger_msg LIKE 'shed: %'",
                                    group_id_, from_, to_)[0]
                        .as<std::int64_t>();
    // Fires that never ran on purpose: cancelled by their job's misfire strategy (after a
    // takeover, too late) or by an operator. Each says so in its row.
    // A row a scan writes for the fires a job missed covers their range ("... scheduled from
    // <first> to <last>: ..."); any other covers its own second.
    for (const auto& r : tx.exec_params(
             "SELECT job_id, scheduled_time, coalesce((extract(epoch FROM substring(trigger_msg FROM "
             "' to (\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(?:\\.\\d+)?(?:Z|[+-]\\d{2}:\\d{2}))')::timestamptz) * 1000)::bigint, "
             "scheduled_time) FROM job_log WHERE job_group = $1 AND scheduled_time < $2 AND state = 'cancelled'",
             group_id_, to_)) {
      cancelled_[r[0].as<std::int64_t>()].push_back({r[1].as<std::int64_t>(), r[2].as<std::int64_t>()});
    }
    // Every row, the set keeps each (job, second) once. With DISTINCT, PostgreSQL planned a hash
    // aggregate for the tens of thousands of pairs its statistics suggest; with a million and
    // more it spilled, and went over its near-empty hash table again and again
    // (tuplehash_iterate) for over ten minutes.
    for (const auto& r : tx.exec_params("SELECT job_id, scheduled_time FROM job_log WHERE job_group = $1 AND "
                                        "scheduled_time >= $2 AND scheduled_time < $3",
                                        group_id_, from_, to_)) {
      with_row_.insert({r[0].as<std::int64_t>(), r[1].as<std::int64_t>()});
    }
    for (const auto& r : tx.exec_params(
             "SELECT left(regexp_replace(CASE WHEN handle_msg <> '' THEN handle_msg ELSE trigger_msg END, '\\s+', ' ', "
             "'g'), 300), count(*) FROM job_log WHERE job_group = $1 AND scheduled_time >= $2 AND scheduled_time < $3 "
             "AND state NOT IN ('succeeded') GROUP BY 1 ORDER BY 2 DESC LIMIT 3",
             group_id_, from_, to_)) {
      problems_.push_back(std::to_string(r[1].as<std::int64_t>()) + " × " + r[0].as<std::string>(""));
    }
  }

  // Prints the summary, the JSON line and the table row; answers whether every fire of the window
  // arrived exactly once and succeeded.
  bool report() {
    const std::int64_t seconds = std::max<std::int64_t>(1, (to_ - from_ + 999) / 1000);
    std::vector<std::uint16_t> cells(static_cast<std::size_t>(s_.jobs) * static_cast<std::size_t>(seconds), 0);
    std::vector<double> lateness;
    std::size_t in_wall_window = 0;  // receipts (any fire of this run) whose arrival fell in the window
    std::size_t unexpected = 0;      // fires of the window off a whole second
    std::int64_t last_receipt_us = 0;
    std::size_t led = 0, posted = 0;  // measured fires' receipts: handed over by /lead, posted to /run
    std::vector<double> lead_ahead;   // of those led: how long before their instant (ms)
    std::vector<std::vector<double>> lateness_by_second(static_cast<std::size_t>(seconds));
    std::vector<std::size_t> led_by_second(static_cast<std::size_t>(seconds), 0);
    const std::int64_t wall_from_us = before_.at_ms * 1000, wall_to_us = after_.at_ms * 1000;
    for (const auto& r : all_receipts()) {
      auto it = index_of_.find(r.job_id);
      if (it == index_of_.end()) continue;
      if (r.received_us >= wall_from_us && r.received_us < wall_to_us) ++in_wall_window;
      if (r.scheduled_ms < from_ || r.scheduled_ms >= to_) continue;
      if (r.scheduled_ms % 1000 != 0) {
        ++unexpected;
        continue;
      }
      const auto second = static_cast<std::size_t>((r.scheduled_ms - from_) / 1000);
      auto& cell = cells[it->second * static_cast<std::size_t>(seconds) + second];
      if (cell < 65535) ++cell;
      lateness.push_back(static_cast<double>(r.received_us - r.scheduled_ms * 1000) / 1000.0);
      lateness_by_second[second].push_back(lateness.back());
      if (r.by_lead) ++led_by_second[second];
      ++(r.by_lead ? led : posted);
      if (r.by_lead) lead_ahead.push_back(static_cast<double>(r.lead_ahead_ms));
      last_receipt_us = std::max(last_receipt_us, r.received_us);
    }
    std::size_t gaps = 0, duplicates = 0, delivered = 0, gaps_cancelled = 0;
    std::int64_t rows_missing_uncovered = 0;  // (job, second) without a row of its own or a misfire row's range
    for (std::size_t k = 0; k < cells.size(); ++k) {
      const auto c = cells[k];
      const auto job = job_ids_[k / static_cast<std::size_t>(seconds)];
      const auto at = from_ + static_cast<std::int64_t>(k % static_cast<std::size_t>(seconds)) * 1000;
      const bool covered = cancelled_covers(job, at);
      if (c == 0) {
        ++gaps;
        if (covered) ++gaps_cancelled;
      }
      if (!with_row_.count({job, at}) && !covered) ++rows_missing_uncovered;
      if (c > 0) ++delivered;
      if (c > 1) duplicates += c - 1;
    }
    std::sort(lateness.begin(), lateness.end());
    std::sort(lead_ahead.begin(), lead_ahead.end());
    const auto within_1s = static_cast<std::size_t>(
        std::lower_bound(lateness.begin(), lateness.end(), 1000.0) - lateness.begin());

    const double wall_s = static_cast<double>(after_.at_ms - before_.at_ms) / 1000.0;
    const double fires_measured = s_.mode == "burst" ? static_cast<double>(delivered)
                                                     : static_cast<double>(in_wall_window);
    auto per_fire = [&](double a, double b) { return fires_measured > 0 ? (b - a) / fires_measured : 0.0; };
    double admin_cpu = 0;
    std::uint64_t admin_rss = 0;
    std::string per_admin;
    for (std::size_t i = 0; i < admins_.size(); ++i) {
      const double cores = static_cast<double>(after_.admin_ticks[i] - before_.admin_ticks[i]) /
                           static_cast<double>(clock_ticks()) / wall_s;
      admin_cpu += cores;
      admin_rss = std::max(admin_rss, rss_kb_[i]);
      per_admin += (per_admin.empty() ? "" : ", ") + admins_[i]->node_id() + " " + fixed(cores, 2) + " cores " +
                   fixed(static_cast<double>(rss_kb_[i]) / 1024.0, 0) + " MB";
    }
    // The server's processes summed: backends ended meanwhile (a database outage ends them all)
    // take their ticks with them, so the figure is then unknown.
    const double db_cpu = s_.pg_pid > 0 && s_.outage_at < 0 && after_.db_ticks >= before_.db_ticks
                              ? static_cast<double>(after_.db_ticks - before_.db_ticks) /
                                    static_cast<double>(clock_ticks()) / wall_s
                              : -1;
    const double own_cpu = (after_.own_cpu_s - before_.own_cpu_s) / wall_s;
    const std::int64_t failed = log_states_.count("failed") ? log_states_["failed"] : 0;
    std::int64_t not_succeeded = 0;
    std::int64_t open = 0;  // rows still pending, sending or triggered when the run ended
    for (const auto& [state, n] : log_states_) {
      if (state != "succeeded") not_succeeded += n;
      if (state == "pending" || state == "sending" || state == "triggered") open += n;
    }
    const double rate = s_.mode == "burst"
                            ? (last_receipt_us > 0 ? static_cast<double>(delivered) /
                                                         std::max(0.001, static_cast<double>(last_receipt_us - from_ * 1000) / 1e6)
                                                   : 0)
                            : static_cast<double>(in_wall_window) / wall_s;

    json out = {{"label", s_.label},
                {"mode", s_.mode},
                {"jobs", s_.jobs},
                {"admins", s_.admins},
                {"executors", s_.executors},
                {"window_s", s_.mode == "burst" ? 0 : s_.seconds},
                {"expected", expected_},
                {"delivered", delivered},
                {"delivered_pct", 100.0 * static_cast<double>(delivered) / static_cast<double>(std::max<std::size_t>(1, expected_))},
                {"fires_per_s", std::round(rate)},
                {"late_p50_ms", std::round(percentile(lateness, 0.50))},
                {"late_p99_ms", std::round(percentile(lateness, 0.99))},
                {"late_max_ms", std::round(lateness.empty() ? 0 : lateness.back())},
                {"within_1s", within_1s},
                {"gaps", gaps},
                {"gaps_cancelled", gaps_cancelled},
                {"rows_missing_uncovered", rows_missing_uncovered},
                {"outage_s", s_.outage_at >= 0 ? json({(outage_from_ms_ - from_) / 1000.0, (outage_to_ms_ - from_) / 1000.0}) : json(nullptr)},
                {"killed_admin_at_s", s_.kill_admin_at >= 0 ? json((killed_at_ms_ - from_) / 1000.0) : json(nullptr)},
                {"duplicates", duplicates},
                {"executor_lead", s_.executor_lead},
                {"led", led},
                {"led_ahead_min_ms", lead_ahead.empty() ? 0.0 : lead_ahead.front()},
                {"led_ahead_p50_ms", std::round(percentile(lead_ahead, 0.50))},
                {"posted", posted},
                {"off_second", unexpected},
                {"failed", failed},
                {"open_rows", open},
                {"callbacks_queued", callbacks_queued_at_end()},
                {"log_states", log_states_},
                {"shed_records", shed_records_},
                {"log_rows", log_rows_},
                {"log_duplicate_rows", log_rows_ - log_distinct_},
                {"log_missing", static_cast<std::int64_t>(expected_) - log_distinct_},
                {"admin_cpu_cores", std::round(admin_cpu * 100) / 100},
                {"admin_rss_mb", std::round(static_cast<double>(admin_rss) / 1024.0)},
                {"db_cpu_cores", db_cpu < 0 ? json(nullptr) : json(std::round(db_cpu * 100) / 100)},
                {"bench_cpu_cores", std::round(own_cpu * 100) / 100},
                {"statements_per_fire", stats_->has_statements() ? json(std::round(per_fire(before_.db.statements, after_.db.statements) * 10) / 10) : json(nullptr)},
                {"db_exec_ms_per_fire", stats_->has_statements() ? json(std::round(per_fire(before_.db.exec_ms, after_.db.exec_ms) * 1000) / 1000) : json(nullptr)},
                {"transactions_per_fire", stats_->has_statements() ? json(std::round(per_fire(before_.db.commits, after_.db.commits) * 10) / 10) : json(nullptr)},
                {"wal_syncs_per_fire", std::round(per_fire(before_.db.wal_syncs, after_.db.wal_syncs) * 100) / 100},
                {"wal_bytes_per_fire", std::round(per_fire(before_.db.wal_bytes, after_.db.wal_bytes))},
                {"checkpoints", after_.db.checkpoints - before_.db.checkpoints},
                {"checkpoints_requested", after_.db.checkpoints_requested - before_.db.checkpoints_requested},
                {"measured_s", wall_s},
                {"create_s", std::round(create_s_ * 10) / 10},
                {"start_s", std::round(start_s_ * 10) / 10},
                {"admin_args", s_.admin_args},
                {"admin_bin", s_.admin_bin}};

    // With an admin killed, a fire the dead node had claimed ahead may be cancelled by its job's
    // misfire strategy once taken over, too late: a gap, accounted for by its row. Nothing else.
    const std::int64_t cancelled = log_states_.count("cancelled") ? log_states_["cancelled"] : 0;
    // A database outage adds misfire rows that stand for many seconds each, so rows are counted
    // by what they cover rather than one per second.
    const bool faults = s_.kill_admin_at >= 0 || s_.outage_at >= 0;
    const bool ok = duplicates == 0 && unexpected == 0 && log_distinct_ == log_rows_ &&
                    (!faults ? gaps == 0 && not_succeeded == 0 && log_rows_ == static_cast<std::int64_t>(expected_)
                             : gaps == gaps_cancelled && not_succeeded == cancelled && rows_missing_uncovered == 0);

    const ScanWrites scans = scan_writes();
    out["scan_writes"] = scans.calls;
    out["scan_write_ms"] = scans.calls > 0 ? json(std::round(scans.exec_ms / scans.calls * 10) / 10) : json(nullptr);
    out["scan_write_rows"] = scans.calls > 0 ? json(std::round(scans.rows / scans.calls)) : json(nullptr);
    out["idle_jobs"] = s_.idle_jobs;
    out["old_runs"] = s_.old_runs;
    out["old_runs_left_at_window_start"] = before_.old_runs;
    out["old_runs_left_at_window_end"] = after_.old_runs;

    std::printf("fire_load %s: %s, %d jobs, %d admin(s), %d fake executor(s), %s\n", s_.label.c_str(), s_.mode.c_str(),
                s_.jobs, s_.admins, s_.executors, s_.admin_bin.c_str());
    std::printf("  jobs created in %.1f s, started in %.1f s (%d API connections)\n", create_s_, start_s_,
                s_.api_connections);
    if (s_.mode == "burst") {
      std::printf("  burst at %lld (second %d of the minute), %.1f s after the last start; measured %.1f s from 5.5 s "
                  "before it\n",
                  static_cast<long long>(from_), burst_second_, static_cast<double>(from_ - started_at_ms_) / 1000.0,
                  wall_s);
    } else {
      std::printf("  window: scheduled seconds [%lld, %lld), %d s after a %d s warm-up\n", static_cast<long long>(from_),
                  static_cast<long long>(to_), s_.seconds, s_.warmup);
    }
    std::printf("  delivered %zu of %zu fires (%.2f %%), %.0f fires/s; within 1 s: %zu\n", delivered, expected_,
                out["delivered_pct"].get<double>(), rate, within_1s);
    std::printf("  lateness, scheduled instant to receipt: p50 %.0f ms, p99 %.0f ms, max %.0f ms\n",
                percentile(lateness, 0.5), percentile(lateness, 0.99), lateness.empty() ? 0.0 : lateness.back());
    {
      std::uint64_t all_led = 0, all_posted = 0, lead_requests = 0;
      for (const auto& e : executors_) {
        all_led += e->received_by_lead();
        all_posted += e->received_by_run();
        lead_requests += e->lead_requests();
      }
      std::printf("  arrived by lead dispatch %zu, by /run %zu (executors %s lead dispatch; whole run: %llu by lead "
                  "in %llu /lead requests, %llu by /run)\n",
                  led, posted, s_.executor_lead ? "take" : "do not take", static_cast<unsigned long long>(all_led),
                  static_cast<unsigned long long>(lead_requests), static_cast<unsigned long long>(all_posted));
      if (led > 0) {
        std::printf("  handed over ahead of their instant (at the executors): min %.0f ms, p50 %.0f ms, max %.0f ms\n",
                    lead_ahead.front(), percentile(lead_ahead, 0.5), lead_ahead.back());
      }
    }
    std::printf("  at the executors: %zu gaps (%zu of them cancelled as misfires, with their rows), %zu duplicates, "
                "%zu off-second fires (job, second)\n",
                gaps, gaps_cancelled, duplicates, unexpected);
    std::string states;
    for (const auto& [state, n] : log_states_) states += " " + state + "=" + std::to_string(n);
    std::printf("  run table: %lld rows, %lld duplicate (job, second) rows, %lld missing (%lld not covered by a "
                "misfire row's range);%s\n",
                static_cast<long long>(log_rows_), static_cast<long long>(log_rows_ - log_distinct_),
                static_cast<long long>(static_cast<std::int64_t>(expected_) - log_distinct_),
                static_cast<long long>(rows_missing_uncovered), states.c_str());
    if (shed_records_ > 0) {
      const std::int64_t cancelled = log_states_.count("cancelled") ? log_states_["cancelled"] : 0;
      std::printf("  of the cancelled rows: %lld records of fires shed past capacity, %lld fires cancelled one by one\n",
                  static_cast<long long>(shed_records_), static_cast<long long>(cancelled - shed_records_));
    }
    for (const auto& p : problems_) std::printf("    %s\n", p.c_str());
    if (s_.per_second && s_.mode == "steady") {
      // Which seconds the late fires belong to: a few seconds all late (a stall) or some of
      // every second (a steady shortfall) have different causes.
      std::printf("  by scheduled second (ms after the window's start: received, by lead, lateness p50/p99/max ms, "
                  "over 1 s late):\n");
      for (std::size_t k = 0; k < lateness_by_second.size(); ++k) {
        auto& v = lateness_by_second[k];
        std::sort(v.begin(), v.end());
        const auto late = static_cast<std::size_t>(v.end() - std::upper_bound(v.begin(), v.end(), 1000.0));
        std::printf("    +%6zu: %6zu %6zu  %6.0f %6.0f %6.0f  %6zu\n", k * 1000, v.size(), led_by_second[k],
                    percentile(v, 0.5), percentile(v, 0.99), v.empty() ? 0.0 : v.back(), late);
      }
    }
    std::printf("  admin: %s; database: %s cores; this process (executors): %.2f cores\n", per_admin.c_str(),
                db_cpu < 0 ? "n/a" : fixed(db_cpu, 2).c_str(), own_cpu);
    auto opt = [](const json& v, int digits) { return v.is_null() ? std::string("n/a") : fixed(v.get<double>(), digits); };
    std::printf("  per fire: %s statements, %s ms of statement time, %s transactions (COMMIT/ROLLBACK), %.2f WAL "
                "flushes, %.0f WAL bytes\n",
                opt(out["statements_per_fire"], 1).c_str(), opt(out["db_exec_ms_per_fire"], 3).c_str(),
                opt(out["transactions_per_fire"], 1).c_str(), out["wal_syncs_per_fire"].get<double>(),
                out["wal_bytes_per_fire"].get<double>());
    std::printf("  checkpoints during the window: %.0f, %.0f of them asked for by the WAL's volume (max_wal_size)\n",
                after_.db.checkpoints - before_.db.checkpoints,
                after_.db.checkpoints_requested - before_.db.checkpoints_requested);
    if (scans.calls > 0) {
      std::printf("  scans' writes (jobs advanced, fires inserted) during the window: %.0f, %.1f ms of statement time "
                  "and %.0f fires each on average\n",
                  scans.calls, scans.exec_ms / scans.calls, scans.rows / scans.calls);
    }
    {
      // What each fire wrote (docs/benchmarks.md, "One write per fire"): row versions by kind and
      // index entries from the WAL, rows per table from the tables' counters.
      const auto wal = stats_->wal_records(before_.db.wal_lsn, after_.db.wal_lsn);
      auto records = [&](std::initializer_list<const char*> types) {
        double n = 0;
        for (const char* t : types) {
          auto it = wal.find(t);
          if (it != wal.end()) n += it->second.count;
        }
        return fires_measured > 0 ? n / fires_measured : 0.0;
      };
      double fpi = 0;
      for (const auto& [type, r] : wal) fpi += r.full_page_image_bytes;
      if (!wal.empty() && fires_measured > 0) {
        json w = {{"heap_inserts", records({"Heap/INSERT", "Heap/INSERT+INIT"})},
                  {"heap_updates", records({"Heap/UPDATE", "Heap/UPDATE+INIT"})},
                  {"heap_hot_updates", records({"Heap/HOT_UPDATE", "Heap/HOT_UPDATE+INIT"})},
                  {"heap_deletes", records({"Heap/DELETE"})},
                  {"heap_locks", records({"Heap/LOCK"})},
                  {"index_entries", records({"Btree/INSERT_LEAF"})},
                  {"full_page_image_bytes", fpi / fires_measured}};
        for (auto& [k, v] : w.items()) v = std::round(v.get<double>() * 100) / 100;
        out["wal_records_per_fire"] = w;
        std::printf("  per fire, from the WAL: %.2f row inserts, %.2f updates and %.2f HOT updates (no index entry), "
                    "%.2f deletes, %.2f row locks, %.2f index entries, %.0f bytes of full-page images\n",
                    w["heap_inserts"].get<double>(), w["heap_updates"].get<double>(),
                    w["heap_hot_updates"].get<double>(), w["heap_deletes"].get<double>(), w["heap_locks"].get<double>(),
                    w["index_entries"].get<double>(), w["full_page_image_bytes"].get<double>());
      } else if (!stats_->note().empty()) {
        notes_.push_back(stats_->note());
      }
      json tables = json::object();
      std::string line;
      for (const char* name : {"job_log_active", "job_log_finished", "job_log", "job_schedule", "job_info"}) {
        auto a = after_.db.tables.find(name);
        if (a == after_.db.tables.end() || fires_measured <= 0) continue;
        auto b = before_.db.tables.find(name);
        const auto zero = cronwheel::bench::DbCounters::TableWrites{};
        const auto& was = b == before_.db.tables.end() ? zero : b->second;
        auto r = [&](double now, double then) { return std::round((now - then) / fires_measured * 100) / 100; };
        json t = {{"inserted", r(a->second.inserted, was.inserted)},
                  {"updated", r(a->second.updated, was.updated)},
                  {"hot", r(a->second.hot, was.hot)},
                  {"deleted", r(a->second.deleted, was.deleted)}};
        if (t["inserted"] == 0.0 && t["updated"] == 0.0 && t["deleted"] == 0.0) continue;
        tables[name] = t;
        line += std::string(line.empty() ? "" : "; ") + name + " " + fixed(t["inserted"].get<double>(), 2) + " / " +
                fixed(t["updated"].get<double>(), 2) + " (" + fixed(t["hot"].get<double>(), 2) + " HOT) / " +
                fixed(t["deleted"].get<double>(), 2);
      }
      out["table_rows_per_fire"] = tables;
      if (!line.empty()) std::printf("  rows per fire, inserted / updated (HOT) / deleted: %s\n", line.c_str());
    }
    if (s_.old_runs > 0) {
      std::printf("  old runs (--old-runs %d) not yet deleted: %lld at the window's start, %lld at its end\n",
                  s_.old_runs, static_cast<long long>(before_.old_runs), static_cast<long long>(after_.old_runs));
    }
    if (s_.top_statements > 0 && stats_->has_statements() && fires_measured > 0) {
      // By execution time in the window (a nested statement's time is also its caller's).
      std::vector<std::pair<double, std::int64_t>> order;
      for (const auto& [id, st] : after_.db.by_statement) {
        auto b = before_.db.by_statement.find(id);
        order.emplace_back(st.exec_ms - (b == before_.db.by_statement.end() ? 0 : b->second.exec_ms), id);
      }
      std::sort(order.rbegin(), order.rend());
      std::printf("  statements by execution time per fire (calls per fire, ms of execution per fire, text):\n");
      for (std::size_t i = 0; i < order.size() && i < static_cast<std::size_t>(s_.top_statements); ++i) {
        const auto& st = after_.db.by_statement[order[i].second];
        auto b = before_.db.by_statement.find(order[i].second);
        const double calls = st.calls - (b == before_.db.by_statement.end() ? 0 : b->second.calls);
        if (order[i].first <= 0) break;
        std::printf("    %6.2f %7.3f %s %s\n", calls / fires_measured, order[i].first / fires_measured,
                    st.nested ? "(nested)" : "        ", st.query.c_str());
      }
    }
    std::uint64_t retries = 0;
    std::size_t queued = 0;
    for (auto& e : executors_) {
      retries += e->callback_retries();
      queued += e->callbacks_queued();
    }
    std::printf("  results not yet accepted by an admin at the end: %zu (queued or being sent at the executors)\n", queued);
    if (retries > 0) notes_.push_back(std::to_string(retries) + " callback batches were refused and re-sent");
    for (const auto& n : notes_) std::printf("  note: %s\n", n.c_str());
    std::printf("FIRE_LOAD_JSON %s\n", out.dump().c_str());
    std::printf("FIRE_LOAD_ROW | %s | %s | %d | %d | %.1f | %.0f | %.0f | %.0f | %.0f | %lld | %lld | %zu | %zu | %.2f | %llu | %s | %s | %s |\n",
                s_.label.c_str(), s_.mode.c_str(), s_.jobs, s_.admins, out["delivered_pct"].get<double>(), rate,
                percentile(lateness, 0.5), percentile(lateness, 0.99), lateness.empty() ? 0.0 : lateness.back(),
                static_cast<long long>(failed), static_cast<long long>(open), duplicates, gaps, admin_cpu,
                static_cast<unsigned long long>(admin_rss / 1024), opt(out["db_cpu_cores"], 2).c_str(),
                opt(out["statements_per_fire"], 1).c_str(), opt(out["transactions_per_fire"], 1).c_str());
    if (s_.check) {
      std::printf("fire_load --check: %s\n", !ok                     ? "FAILED"
                                             : !faults ? "every fire exactly once, all succeeded"
                                                                    : "every fire exactly once, or skipped as a misfire with a row that says so");
    }
    std::fflush(stdout);
    if (!s_.json_out.empty()) {
      std::ofstream f(s_.json_out, std::ios::app);
      f << out.dump() << "\n";
    }
    return ok;
  }

  void teardown() noexcept {
    try {
      // Executors first: they deliver the results they still hold while the admins are up.
      for (auto& e : executors_) e->stop(2s);
      for (auto& a : admins_) {
        const int code = a->killed() ? 0 : a->stop(30s);
        if (code != 0) std::fprintf(stderr, "admin %s ended with %d\n%s\n", a->node_id().c_str(), code, a->tail().c_str());
        if (!s_.admin_log_dir.empty()) {
          const std::string path = s_.admin_log_dir + "/" + s_.label + "-" + s_.mode + "-" + std::to_string(s_.jobs) +
                                   "-" + a->node_id() + ".log";
          std::error_code made;
          std::filesystem::create_directories(s_.admin_log_dir, made);
          std::ofstream out(path);
          out << a->output();
          if (!out) std::fprintf(stderr, "fire_load: cannot write %s\n", path.c_str());
        }
      }
      admins_.clear();
      executors_.clear();
      bench_db_.reset();
      stats_.reset();
      if (created_db_ && !s_.keep_db) {
        pqxx::connection c(server_url_);
        pqxx::nontransaction tx(c);
        tx.exec("DROP DATABASE IF EXISTS " + tx.quote_name(database_) + " WITH (FORCE)");
      }
      created_db_ = false;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "fire_load: clean-up: %s\n", e.what());
    }
  }

  Settings s_;
  std::string server_url_, database_, db_url_;
  bool created_db_ = false;
  std::unique_ptr<DbStats> stats_;
  std::unique_ptr<pqxx::connection> bench_db_;
  std::vector<std::unique_ptr<AdminProcess>> admins_;
  std::size_t killed_ = 0;  // which admin --kill-admin-at killed
  std::int64_t killed_at_ms_ = 0;
  std::uint64_t killed_ticks_ = 0;  // the killed admin's CPU ticks at its death
  // Per job, the [first, last] scheduled times each cancelled row stands for.
  std::map<std::int64_t, std::vector<std::pair<std::int64_t, std::int64_t>>> cancelled_;
  std::set<std::pair<std::int64_t, std::int64_t>> with_row_;  // (job, scheduled ms) with a row of its own
  std::int64_t outage_from_ms_ = 0, outage_to_ms_ = 0;
  bool cancelled_covers(std::int64_t job, std::int64_t at) const {
    auto it = cancelled_.find(job);
    if (it == cancelled_.end()) return false;
    for (const auto& [first, last] : it->second) {
      if (at >= first && at <= last) return true;
    }
    return false;
  }
  std::vector<std::unique_ptr<FakeExecutor>> executors_;
  std::vector<Api> apis_;
  std::int64_t group_id_ = 0;
  std::vector<std::int64_t> job_ids_, first_fire_;
  double idle_s_ = 0;
  double old_s_ = 0;
  std::int64_t old_group_ = 0;
  std::int64_t old_job_ = 0;
  std::unordered_map<std::int64_t, std::size_t> index_of_;
  int burst_second_ = 0;
  std::int64_t planned_burst_ms_ = 0;
  std::int64_t started_at_ms_ = 0;
  double create_s_ = 0, start_s_ = 0;
  std::int64_t from_ = 0, to_ = 0;
  std::size_t expected_ = 0;
  Snapshot before_, after_;
  std::vector<std::uint64_t> rss_kb_;
  std::map<std::string, std::int64_t> log_states_;
  std::int64_t shed_records_ = 0;
  std::int64_t log_rows_ = 0, log_distinct_ = 0;
  std::vector<std::string> problems_;
  std::vector<std::string> notes_;
};

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  CLI::App app{"fire_load: end-to-end load on the fire path (real admins, PostgreSQL, fake executors)"};
  app.add_option("--db-url", s.db_url, "PostgreSQL server URL of a superuser (default: $CRONWHEEL_TEST_DB_URL); a fresh database is created on it and dropped")
      ->envname("CRONWHEEL_TEST_DB_URL");
  app.add_option("--admin-bin", s.admin_bin, "The cronwheel-admin binary to measure")->capture_default_str();
  app.add_option("--label", s.label, "Names the admin build in the report")->capture_default_str();
  app.add_option("--mode", s.mode, "steady: N jobs every second; burst: N jobs due in the same second")
      ->check(CLI::IsMember({"steady", "burst"}))
      ->capture_default_str();
  app.add_option("--jobs", s.jobs, "Jobs (N)")->check(CLI::Range(1, 1'000'000))->capture_default_str();
  app.add_option("--seconds", s.seconds, "steady: the measured window, in scheduled seconds")
      ->check(CLI::Range(1, 600))
      ->capture_default_str();
  app.add_option("--warmup", s.warmup, "steady: seconds after the last job's first fire before the window")
      ->check(CLI::Range(0, 600))
      ->capture_default_str();
  app.add_option("--admins", s.admins, "Admin nodes")->check(CLI::Range(1, 8))->capture_default_str();
  app.add_option("--executors", s.executors, "Fake executors")->check(CLI::Range(1, 64))->capture_default_str();
  app.add_option("--callback-batch", s.callback_batch,
                 "Results per callback request of each fake executor, at most (the real executor's max_batch)")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  app.add_option("--executor-threads", s.executor_threads, "Worker threads per fake executor")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_option("--route", s.route, "executorRouteStrategy of the jobs")->capture_default_str();
  app.add_option("--misfire", s.misfire, "misfireStrategy of the jobs")->capture_default_str();
  app.add_option("--admin-log-dir", s.admin_log_dir, "Write each admin's output to DIR/<label>-<mode>-<jobs>-<node>.log at the end");
  app.add_option("--kill-admin-at", s.kill_admin_at,
                 "Steady mode, two or more admins: SIGKILL, S seconds into the window, the admin holding the most "
                 "fires claimed ahead (it stays down); "
                 "--check then allows gaps whose rows say they were cancelled as misfires")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--outage-at", s.outage_at,
                 "Steady mode: S seconds into the window the run database refuses the admins (open connections "
                 "ended, new ones refused) for --outage-for seconds; --check then accepts gaps covered by misfire rows")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--outage-for", s.outage_for, "Seconds the database outage lasts")
      ->check(CLI::Range(1, 600))
      ->capture_default_str();
  app.add_option("--old-runs", s.old_runs,
                 "Finished runs 40 days old written before the admins start, for their run retention to delete "
                 "during the run (compare with --admin-arg='--run-retention-days 0')")
      ->check(CLI::Range(0, 50'000'000));
  app.add_option("--idle-jobs", s.idle_jobs,
                 "Also M enabled hourly jobs, written straight into the database (about M / 3600 fires a second "
                 "beside the measured jobs', not measured themselves)")
      ->check(CLI::Range(0, 10'000'000));
  app.add_option("--executor-lead", s.executor_lead,
                 "The fake executors register with the admins every second saying they take lead dispatch, and "
                 "hold fires handed over by POST /lead until their instant; the admins get "
                 "--registry-refresh-ms 500 unless --admin-arg sets it (true|false)")
      ->capture_default_str();
  app.add_option("--admin-arg", s.admin_args, "More flags for every admin, e.g. --admin-arg='--db-pool-size 16' (repeatable)");
  app.add_option("--api-connections", s.api_connections, "Parallel API connections creating and starting jobs")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_option("--drain", s.drain, "Seconds after the window to wait for late fires and final run rows (burst: at most 45)")
      ->check(CLI::Range(1, 600))
      ->capture_default_str();
  app.add_option("--pg-pid", s.pg_pid, "The postmaster's pid: its and its backends' CPU are reported");
  app.add_option("--top-statements", s.top_statements, "Also list the K statements with the most execution time per fire");
  app.add_flag("--per-second", s.per_second,
               "Steady mode: also list each scheduled second of the window: fires received, by lead dispatch, "
               "lateness p50, p99 and max, and how many arrived over 1 s late");
  app.add_flag("--check", s.check, "Exit 1 unless every fire of the window arrived exactly once and succeeded");
  app.add_flag("--keep-db", s.keep_db, "Keep the database afterwards");
  app.add_option("--json-out", s.json_out, "Append the result's JSON line to this file");
  CLI11_PARSE(app, argc, argv);
  if (s.db_url.empty()) {
    std::fprintf(stderr, "fire_load: no database: pass --db-url or set CRONWHEEL_TEST_DB_URL (tests/bench/fire_load.sh starts one)\n");
    return 2;
  }
  if (s.outage_at >= 0 && (s.mode != "steady" || s.outage_at + s.outage_for >= s.seconds)) {
    std::fprintf(stderr, "fire_load: --outage-at needs --mode steady and an outage that ends within --seconds\n");
    return 2;
  }
  if (s.kill_admin_at >= 0 && (s.mode != "steady" || s.admins < 2 || s.kill_admin_at >= s.seconds)) {
    std::fprintf(stderr, "fire_load: --kill-admin-at needs --mode steady, --admins 2 or more, and a second within "
                         "--seconds\n");
    return 2;
  }
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // progress lines as they come, also into a file or pipe
  spdlog::set_level(spdlog::level::warn);
  ::signal(SIGPIPE, SIG_IGN);
  try {
    FireLoad load(s);
    return load.run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fire_load: %s\n", e.what());
    return 2;
  }
}
