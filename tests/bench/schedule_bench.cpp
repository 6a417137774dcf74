// One scheduling scan on a real PostgreSQL: how long it holds the scheduling lock, and how many
// fires per second it decides and durably writes, for N due jobs.
//
//  - Subject: PgScheduleStore::scan (admin/pg/pg_schedule_store.h) with decide_fires, as the
//    schedule thread calls it: lock row, pre-read, decide, then one statement that advances
//    every job (UPDATE ... FROM unnest, guarded by trigger_status = 1 and the next time read)
//    and inserts every fire as a pending job_log row, then commit.
//  - Baseline: XXL-JOB 2.x's way of writing the same decision (JobScheduleHelper calls
//    scheduleUpdate once per job). In one transaction, under the same lock row, the same
//    pre-read and the same decide_fires, then for each job one UPDATE of the job (same guard,
//    same columns) and one INSERT of its fires as pending rows (same columns, same ON
//    CONFLICT): two round trips per job. The baseline's statements are written out below
//    (kBaseline*), prepared on the connection like the store's.
//
// Each N gets a fresh migrated database (tests/support/test_database.h) with one group and N
// jobs on `* * * * * ?`, all due at T (a second boundary); every scan runs with now = T + 0.5 s,
// so each job gets 6 fires (T .. T + 5 s, the 5 s pre-read window) in every scan, whichever
// variant runs. Before each timed scan, untimed: job_log is truncated, the jobs are set back to
// due at T, and job_info is vacuumed (autovacuum is off for the two tables so it cannot start
// in the middle of a scan). The two variants alternate within each round (which goes first
// alternates too), on the same pooled connection. A few warm-up rounds come first: PostgreSQL
// considers a generic plan for a prepared statement from its sixth execution on, and a
// long-running admin node is past that.
//
// The time of a scan is the wall time of the whole call: BEGIN, the lock row, the pre-read,
// the decision, the writes and COMMIT (synchronous, as the server is configured). The lock is
// held from the lock statement to the commit, so this is the lock hold time plus one round
// trip. The result of every scan is checked (every fire inserted, every job advanced); the
// benchmark exits non-zero otherwise.
//
//   CRONWHEEL_TEST_DB_URL=postgresql://user@host:port/postgres build/bin/schedule_bench
//   build/bin/schedule_bench --jobs 100,1000,5000 --rounds 9 --warmup 6
//
// Without CRONWHEEL_TEST_DB_URL (a superuser: each N creates its own database), or when the
// server cannot be reached, it says so and exits 0 without measuring.
//
// Not a test: no assertion on timing (shared machines are noisy).
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <pqxx/pqxx>
#include <spdlog/spdlog.h>

#include "admin/scheduler/fire_decision.h"
#include "admin/pg/connection_string.h"
#include "admin/pg/database.h"
#include "admin/pg/migrator.h"
#include "admin/pg/pg_schedule_store.h"
#include "admin/pg/pg_store_support.h"
#include "tests/support/test_database.h"

namespace {

using Stopwatch = std::chrono::steady_clock;
using cronwheel::admin::Database;
using cronwheel::admin::DueJob;
using cronwheel::admin::PgScheduleStore;
using cronwheel::admin::ScanDecision;
using cronwheel::testing::TestDatabase;

// As the schedule thread's default (ScheduleThread::Options): every N measured fits one scan.
constexpr int kPreReadCount = 10'000;
constexpr std::int64_t kScanAfterDueMs = 500;
// Fires each due job gets in a scan (--fires-per-job): `* * * * * ?` jobs whose next time is
// T + (6 - K) s, scanned at T + 0.5 s with the 5 s window: 6 is a job scanned for the first
// time (or after a pause), 1 a job in steady state, caught up by the previous scans.
std::size_t g_fires_per_job = 6;
// Enabled jobs that are not due (--idle-jobs): hourly, their next times an hour on, spread over
// the hour. They make job_info the size of a large installation's.
std::size_t g_idle_jobs = 0;
const std::string kNode = "bench-node";

// ---- Baseline: per-job statements, as XXL-JOB 2.x's JobScheduleHelper writes a scan. ----
// The lock row is the store's statement, word for word; the pre-read reads the same rows in one
// statement.
const std::string kBaselineLock = "SELECT lock_name FROM job_lock WHERE lock_name = 'schedule_lock' FOR UPDATE";
const std::string kBaselineDue =
    "SELECT j.id, j.schedule_type, j.schedule_conf, j.timezone, j.misfire_strategy, s.trigger_last_time,"
    " s.trigger_next_time FROM job_schedule s JOIN job_info j ON j.id = s.job_id"
    " WHERE s.trigger_status = 1 AND s.trigger_next_time <= $1 ORDER BY s.trigger_next_time LIMIT $2";
// One job's new times, with the store's guard; returns what its fires' rows copy from the job.
const std::string kBaselineUpdateJob =
    "UPDATE job_schedule s SET trigger_last_time = $2, trigger_next_time = $3, trigger_status = $4 FROM job_info j "
    "WHERE s.job_id = $1 AND s.trigger_status = 1 AND s.trigger_next_time = $5 AND j.id = s.job_id "
    "RETURNING j.job_group, j.executor_handler, j.executor_param, j.executor_fail_retry_count";
// One job's fires (6 here) as pending rows, in one statement.
const std::string kBaselineInsertFires =
    "INSERT INTO job_log_active (job_group, job_id, state, trigger_type, scheduled_time, admin_node,"
    "                            executor_handler, executor_param, executor_fail_retry_count)"
    " SELECT $1, $2, 'pending', f.trigger_type, f.scheduled_time, $3, $4, $5, $6"
    " FROM unnest($7::bigint[], $8::text[]) WITH ORDINALITY AS f(scheduled_time, trigger_type, ord)"
    " ORDER BY f.ord"
    " ON CONFLICT (job_id, scheduled_time, shard_index) WHERE trigger_type IN ('SCHEDULE', 'MISFIRE') DO NOTHING"
    " RETURNING id";

void prepare(pqxx::connection& c) {
  PgScheduleStore::prepare(c);
  c.prepare("baseline_lock", kBaselineLock);
  c.prepare("baseline_due", kBaselineDue);
  c.prepare("baseline_update_job", kBaselineUpdateJob);
  c.prepare("baseline_insert_fires", kBaselineInsertFires);
}

std::string array_literal(const std::vector<std::int64_t>& values) {
  std::string out = "{";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    out += std::to_string(values[i]);
  }
  return out + "}";
}

// Trigger types are SCHEDULE / MISFIRE: no quoting needed.
std::string array_literal(const std::vector<std::string>& values) {
  std::string out = "{";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    out += values[i];
  }
  return out + "}";
}

// The baseline scan. Returns the fires inserted.
std::size_t per_job_scan(Database& db, std::int64_t now) {
  return db.transact([&](pqxx::work& tx) {
    tx.exec_prepared("baseline_lock");
    std::vector<DueJob> due;
    for (const auto& r : tx.exec_prepared("baseline_due", now + cronwheel::admin::kPreReadWindowMs, kPreReadCount)) {
      DueJob job;
      job.id = r["id"].as<std::int64_t>();
      job.schedule_type = cronwheel::admin::pg::enum_of<cronwheel::admin::ScheduleType>(r["schedule_type"]);
      job.schedule_conf = r["schedule_conf"].as<std::string>();
      job.timezone = r["timezone"].as<std::string>();
      job.misfire_strategy = cronwheel::admin::pg::enum_of<cronwheel::admin::MisfireStrategy>(r["misfire_strategy"]);
      job.trigger_last_time = r["trigger_last_time"].as<std::int64_t>();
      job.trigger_next_time = r["trigger_next_time"].as<std::int64_t>();
      due.push_back(std::move(job));
    }
    const ScanDecision decision = cronwheel::admin::decide_fires(due, now);

    // decision.fires is grouped by job, in the order of decision.jobs.
    std::size_t inserted = 0;
    std::size_t next_fire = 0;
    std::vector<std::int64_t> times;
    std::vector<std::string> types;
    for (const auto& job : decision.jobs) {
      times.clear();
      types.clear();
      for (; next_fire < decision.fires.size() && decision.fires[next_fire].job_id == job.job_id; ++next_fire) {
        times.push_back(decision.fires[next_fire].scheduled_time);
        types.push_back(cronwheel::admin::pg::text(decision.fires[next_fire].trigger_type));
      }
      auto updated = tx.exec_prepared("baseline_update_job", job.job_id, job.last_time, job.next_time,
                                      job.trigger_status, job.read_next_time);
      if (updated.empty() || times.empty()) continue;
      const auto& j = updated[0];
      inserted += tx.exec_prepared("baseline_insert_fires", j["job_group"].as<std::int64_t>(), job.job_id, kNode,
                                   j["executor_handler"].as<std::string>(), j["executor_param"].as<std::string>(),
                                   j["executor_fail_retry_count"].as<int>(), array_literal(times),
                                   array_literal(types))
                      .size();
    }
    return inserted;
  });
}

// ---- The subject. ----
std::size_t batched_scan(PgScheduleStore& store, std::int64_t now) {
  auto result = store.scan(kNode, now + cronwheel::admin::kPreReadWindowMs, kPreReadCount,
                           [now](const std::vector<DueJob>& due) { return cronwheel::admin::decide_fires(due, now); });
  return result.fires.size();
}

// A fresh database with one group and `jobs` CRON jobs due at `due`.
class BenchDatabase {
 public:
  BenchDatabase(std::size_t jobs, std::int64_t due)
      : jobs_(jobs), due_(due), migrated_(setup(db_, jobs, due)), database_(options(db_), &prepare),
        store_(database_) {}

  // Untimed, after a scan: exits unless it wrote every fire and advanced every job.
  void check(std::size_t expect_fires, const char* variant) {
    auto lease = database_.acquire();
    pqxx::nontransaction tx(lease.connection());
    const auto r = tx.exec_params1(
        "SELECT (SELECT count(*) FROM job_log WHERE state = 'pending' AND admin_node = $1),"
        "       (SELECT count(*) FROM job_schedule WHERE trigger_status = 1 AND trigger_last_time = $2"
        "          AND trigger_next_time = $3)",
        kNode, due_ + 5'000, due_ + 6'000);
    const auto rows = r[0].as<std::size_t>();
    const auto advanced = r[1].as<std::size_t>();
    if (rows != expect_fires || advanced != jobs_) {
      std::fprintf(stderr, "%s scan wrote %zu pending rows (expected %zu) and advanced %zu jobs (expected %zu)\n",
                   variant, rows, expect_fires, advanced, jobs_);
      std::exit(1);
    }
  }

  // Untimed: empties job_log and puts every job back to due at T.
  void reset() {
    auto lease = database_.acquire();
    pqxx::nontransaction tx(lease.connection());
    tx.exec("TRUNCATE job_log_active, job_log_finished");
    // The measured jobs are the only ones firing every second.
    tx.exec_params(
        "UPDATE job_schedule SET trigger_last_time = 0, trigger_next_time = $1, trigger_status = 1 "
        "WHERE job_id IN (SELECT id FROM job_info WHERE schedule_conf = '* * * * * ?')",
        first_next(due_));
    tx.exec("VACUUM (ANALYZE) job_info");
    tx.exec("VACUUM (ANALYZE) job_schedule");
  }

  Database& database() { return database_; }
  PgScheduleStore& store() { return store_; }

 private:
  // The due jobs' next time: their fires in a scan at T + 0.5 s are T + (6 - K) s .. T + 5 s.
  static std::int64_t first_next(std::int64_t due) {
    return due + static_cast<std::int64_t>(6 - g_fires_per_job) * 1000;
  }
  static bool setup(const TestDatabase& db, std::size_t jobs, std::int64_t due) {
    pqxx::connection c(db.url());
    cronwheel::admin::Migrator().migrate(c);
    pqxx::work tx(c);
    tx.exec(
        "INSERT INTO job_group (app_name, title, address_type, address_list) "
        "VALUES ('schedule-bench', 'Scheduling benchmark', 1, '{http://127.0.0.1:9999/}')");
    // The due jobs are spread evenly among the idle ones (every stride-th id), as a large
    // installation's due jobs are spread over its table.
    const std::size_t stride = (jobs + g_idle_jobs) / jobs;
    tx.exec_params(
        "WITH d AS (SELECT i, i % $3 = 0 AND i / $3 <= $4 AS due FROM generate_series(1, $5::int) AS i),"
        " j AS (INSERT INTO job_info (job_group, job_desc, schedule_type, schedule_conf, executor_handler,"
        "                             executor_param, executor_fail_retry_count) "
        "       SELECT g.id, CASE WHEN d.due THEN 'bench job ' ELSE 'idle job ' END || d.i, 'CRON',"
        "              CASE WHEN d.due THEN '* * * * * ?' ELSE (d.i % 60) || ' ' || (d.i / 60 % 60) || ' * * * ?' END,"
        "              'echo', 'param', 3"
        "       FROM job_group g, d ORDER BY d.i RETURNING id, job_group, job_desc)"
        " INSERT INTO job_schedule (job_id, count_group, trigger_status, trigger_next_time)"
        " SELECT j.id, j.job_group, 1, CASE WHEN d.due THEN $1::bigint ELSE $2::bigint + 3600000 + (d.i % 3600) * 1000 END"
        " FROM j JOIN d ON j.job_desc = CASE WHEN d.due THEN 'bench job ' ELSE 'idle job ' END || d.i ORDER BY j.id",
        first_next(due), due, static_cast<std::int64_t>(stride), static_cast<std::int64_t>(jobs),
        static_cast<int>(jobs + g_idle_jobs));
    // The benchmark vacuums between scans; an autovacuum starting in a timed scan is noise.
    tx.exec("ALTER TABLE job_info SET (autovacuum_enabled = false)");
    tx.exec("ALTER TABLE job_schedule SET (autovacuum_enabled = false)");
    tx.exec("ALTER TABLE job_log_active SET (autovacuum_enabled = false)");
    tx.exec("ALTER TABLE job_log_finished SET (autovacuum_enabled = false)");
    tx.commit();
    return true;
  }
  static Database::Options options(const TestDatabase& db) {
    Database::Options o;
    o.url = db.url();
    o.pool_size = 1;  // both variants on the same connection, hence the same backend
    o.statement_timeout = std::chrono::milliseconds(0);
    return o;
  }

  std::size_t jobs_;
  std::int64_t due_;
  TestDatabase db_;
  bool migrated_;
  Database database_;
  PgScheduleStore store_;
};

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

double millis(Stopwatch::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

struct Row {
  std::size_t jobs = 0;
  std::size_t fires = 0;  // per scan
  std::vector<double> batched_ms, per_job_ms, ratios;
};

Row measure(std::size_t jobs, int warmup, int rounds) {
  const std::int64_t now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  const std::int64_t due = now_ms / 1000 * 1000;
  const std::int64_t scan_at = due + kScanAfterDueMs;
  const std::size_t fires = jobs * g_fires_per_job;

  BenchDatabase db(jobs, due);
  Row row;
  row.jobs = jobs;
  row.fires = fires;

  db.reset();
  auto timed = [&](auto&& scan, const char* variant) {
    const auto start = Stopwatch::now();
    const std::size_t inserted = scan();
    const double ms = millis(Stopwatch::now() - start);
    if (inserted != fires) {
      std::fprintf(stderr, "%s scan returned %zu fires (expected %zu)\n", variant, inserted, fires);
      std::exit(1);
    }
    db.check(fires, variant);
    db.reset();
    return ms;
  };
  auto batched = [&] { return timed([&] { return batched_scan(db.store(), scan_at); }, "batched"); };
  auto per_job = [&] { return timed([&] { return per_job_scan(db.database(), scan_at); }, "per-job"); };

  for (int i = 0; i < warmup; ++i) {
    batched();
    per_job();
  }
  for (int i = 0; i < rounds; ++i) {
    double b = 0, p = 0;
    if (i % 2 == 0) {
      b = batched();
      p = per_job();
    } else {
      p = per_job();
      b = batched();
    }
    row.batched_ms.push_back(b);
    row.per_job_ms.push_back(p);
    row.ratios.push_back(p / b);
  }
  return row;
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

std::vector<std::size_t> parse_list(const std::string& s) {
  std::vector<std::size_t> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    const auto comma = s.find(',', start);
    const long v = std::atol(s.substr(start, comma - start).c_str());
    if (v > 0) out.push_back(static_cast<std::size_t>(v));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::size_t> job_counts = {100, 1000, 5000};
  int rounds = 9;
  int warmup = 6;
  for (int i = 1; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (i + 1 < argc && flag == "--jobs") {
      job_counts = parse_list(argv[i + 1]);
    } else if (i + 1 < argc && flag == "--rounds") {
      rounds = std::max(1, std::atoi(argv[i + 1]));
    } else if (i + 1 < argc && flag == "--warmup") {
      warmup = std::max(0, std::atoi(argv[i + 1]));
    } else if (i + 1 < argc && flag == "--fires-per-job") {
      g_fires_per_job = static_cast<std::size_t>(std::clamp(std::atoi(argv[i + 1]), 1, 6));
    } else if (i + 1 < argc && flag == "--idle-jobs") {
      g_idle_jobs = static_cast<std::size_t>(std::max(0L, std::atol(argv[i + 1])));
    } else {
      std::fprintf(stderr, "usage: schedule_bench [--jobs N,...] [--rounds R] [--warmup W] [--fires-per-job 1..6] "
                           "[--idle-jobs M]\n");
      return 2;
    }
  }
  spdlog::set_level(spdlog::level::off);

  const char* url = std::getenv("CRONWHEEL_TEST_DB_URL");
  if (url == nullptr || *url == '\0') {
    std::printf(
        "schedule_bench: skipped: CRONWHEEL_TEST_DB_URL is not set; point it at a PostgreSQL superuser, "
        "e.g. CRONWHEEL_TEST_DB_URL=postgresql://cronwheel@127.0.0.1:5432/postgres\n");
    return 0;
  }
  std::string server;
  try {
    pqxx::connection probe(cronwheel::admin::with_connection_parameter(url, "connect_timeout", "5"));
    pqxx::nontransaction tx(probe);
    const auto r = tx.exec1("SELECT current_setting('server_version'), current_setting('synchronous_commit'),"
                            " current_setting('fsync'), current_setting('shared_buffers')");
    server = "PostgreSQL " + r[0].as<std::string>() + ", synchronous_commit " + r[1].as<std::string>() +
             ", fsync " + r[2].as<std::string>() + ", shared_buffers " + r[3].as<std::string>();
  } catch (const std::exception& e) {
    std::string why = e.what();  // libpq's messages end in a newline
    while (!why.empty() && std::isspace(static_cast<unsigned char>(why.back()))) why.pop_back();
    std::printf("schedule_bench: skipped: cannot reach the database in CRONWHEEL_TEST_DB_URL: %s\n", why.c_str());
    return 0;
  }

  std::printf("schedule_bench: %s; %u cores; %d warm-up + %d measured rounds per N; %zu fires per due job, %zu idle "
              "jobs; load average %s\n\n",
              server.c_str(), std::thread::hardware_concurrency(), warmup, rounds, g_fires_per_job, g_idle_jobs,
              load_average().c_str());
  std::printf("Scan wall time, ms: median (min - max). Fires/s: fires per scan / median scan time.\n"
              "Ratio: median over rounds of per-job ms / batched ms in the same round.\n\n");
  std::printf("| jobs | fires per scan | batched ms | per-job ms (baseline) | batched fires/s | "
              "per-job fires/s | per-job / batched |\n");
  std::printf("|---:|---:|---:|---:|---:|---:|---:|\n");
  std::fflush(stdout);
  for (std::size_t jobs : job_counts) {
    Row r;
    try {
      r = measure(jobs, warmup, rounds);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "schedule_bench: %zu jobs: %s\n", jobs, e.what());
      return 1;
    }
    const double b = median(r.batched_ms);
    const double p = median(r.per_job_ms);
    const auto [b_min, b_max] = std::minmax_element(r.batched_ms.begin(), r.batched_ms.end());
    const auto [p_min, p_max] = std::minmax_element(r.per_job_ms.begin(), r.per_job_ms.end());
    std::printf("| %zu | %zu | %.1f (%.1f - %.1f) | %.1f (%.1f - %.1f) | %.0f | %.0f | %.2f |\n", r.jobs, r.fires, b,
                *b_min, *b_max, p, *p_min, *p_max, static_cast<double>(r.fires) / b * 1000,
                static_cast<double>(r.fires) / p * 1000, median(r.ratios));
    std::fflush(stdout);
  }
  std::printf("\nload average at the end: %s\n", load_average().c_str());
  return 0;
}
