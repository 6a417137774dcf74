// The dashboard's query (PgOverviewStore::dashboard, docs/run-report.md) on a real PostgreSQL
// holding 1,000,000 runs: what GET /api/v1/dashboard waits for.
//
//  - Data, loaded once (untimed) into a fresh migrated database (tests/support/test_database.h):
//    20 groups of 10 jobs; 1,000,000 runs spread evenly over the 30 days before "now", inserted
//    in statements of 50,000 rows so the report trigger counts them as the admin would; states
//    90 % succeeded, 7 % failed, 1 % lost, 1 % triggered, 1 % pending; 12 live executor
//    registrations and 3 admin nodes. Then VACUUM ANALYZE.
//  - Subject: the store call for the admin (all groups) over 7, 30 and 366 days in UTC, for a
//    normal user of 2 groups over 7 days, and over 7 days cut in Asia/Kolkata (day starts at
//    :30). Each iteration is one read transaction: the figures, the days, today and the latest
//    failures.
//  - Baseline: what the report replaces, counting the run table for the same 7 days
//    (SELECT ... FROM job_log WHERE scheduled_time in range GROUP BY day), with the table's
//    existing indexes.
//
//   CRONWHEEL_TEST_DB_URL=postgresql://user@host:port/postgres build/bin/dashboard_bench
//
// Without CRONWHEEL_TEST_DB_URL (a superuser: it creates its own database) every benchmark is
// skipped with that reason. Not a test: no assertion on timing.

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <pqxx/pqxx>
#include <spdlog/spdlog.h>

#include "admin/pg/database.h"
#include "admin/pg/migrator.h"
#include "admin/pg/pg_overview_store.h"
#include "admin/pg/pg_stores.h"
#include "tests/support/run_rows.h"
#include "tests/support/test_database.h"

namespace {

using cronwheel::admin::Database;
using cronwheel::admin::OverviewStore;
using cronwheel::admin::PgOverviewStore;
using cronwheel::testing::insert_runs;
using cronwheel::testing::TestDatabase;

constexpr std::int64_t kRuns = 1'000'000;
constexpr std::int64_t kBatch = 50'000;
constexpr int kGroups = 20;
constexpr int kJobsPerGroup = 10;
constexpr std::int64_t kDayMs = 86'400'000;
// Today's UTC day (2026-11-24) starts at kToday; "now" is its noon.
constexpr std::int64_t kToday = 1'795'478'400'000;
constexpr std::int64_t kNow = kToday + 12 * 3'600'000;

struct Loaded {
  std::unique_ptr<TestDatabase> db;
  std::unique_ptr<Database> database;
  std::unique_ptr<PgOverviewStore> store;
  std::string error;
};

Loaded& loaded() {
  static Loaded l = [] {
    Loaded out;
    const char* url = std::getenv("CRONWHEEL_TEST_DB_URL");
    if (url == nullptr || *url == '\0') {
      out.error = "CRONWHEEL_TEST_DB_URL is not set";
      return out;
    }
    spdlog::set_level(spdlog::level::warn);
    out.db = std::make_unique<TestDatabase>();
    pqxx::connection c(out.db->url());
    cronwheel::admin::Migrator().migrate(c);
    {
      pqxx::work tx(c);
      tx.exec("INSERT INTO job_group (app_name, title) SELECT 'bench-app-' || g, 'Bench ' || g "
              "FROM generate_series(1, " + std::to_string(kGroups) + ") g");
      tx.exec("WITH j AS (INSERT INTO job_info (job_group, job_desc, executor_handler, schedule_type, schedule_conf) "
              "SELECT (j - 1) / " + std::to_string(kJobsPerGroup) + " + 1, 'job ' || j, 'h', 'CRON', '0 * * * * ?'"
              " FROM generate_series(1, " + std::to_string(kGroups * kJobsPerGroup) + ") j RETURNING id, job_group,"
              " substr(job_desc, 5)::int AS n) INSERT INTO job_schedule (job_id, count_group, trigger_status,"
              " trigger_next_time) SELECT id, job_group, n % 2, " + std::to_string(kNow + 60'000) + " FROM j");
      tx.exec("INSERT INTO job_registry (registry_group, registry_key, registry_value) "
              "SELECT 'EXECUTOR', 'bench-app-' || (e % 6 + 1), 'http://10.0.0.' || e || ':9999/' "
              "FROM generate_series(1, 12) e");
      tx.exec("INSERT INTO admin_node (node_id, lease_until) SELECT 'node-' || n, now() + interval '1 hour' "
              "FROM generate_series(1, 3) n");
      tx.commit();
    }
    const std::int64_t span = 30 * kDayMs;
    for (std::int64_t first = 0; first < kRuns; first += kBatch) {
      pqxx::work tx(c);
      tx.exec(insert_runs(
          "job_group, job_id, state, trigger_type, scheduled_time, admin_node, trigger_time, handle_time, handle_code,"
          " handle_msg",
          "SELECT (j - 1) / " + std::to_string(kJobsPerGroup) + " + 1 AS job_group, j AS job_id, s AS state,"
              " 'SCHEDULE' AS trigger_type, t AS scheduled_time, 'node-1' AS admin_node, "
              "CASE WHEN s = 'pending' THEN NULL ELSE to_timestamp(t / 1000.0) END AS trigger_time, "
              "CASE WHEN s IN ('succeeded', 'failed') THEN to_timestamp(t / 1000.0 + 1) END AS handle_time, "
              "CASE s WHEN 'succeeded' THEN 200 WHEN 'failed' THEN 500 ELSE 0 END AS handle_code, "
              "CASE WHEN s = 'failed' THEN 'exit code 1' ELSE '' END AS handle_msg "
              "FROM (SELECT i, (i % " + std::to_string(kGroups * kJobsPerGroup) + ") + 1 AS j, " +
              std::to_string(kNow - span) + " + i::bigint * " + std::to_string(span / kRuns) + " AS t, "
              "CASE WHEN i % 100 < 90 THEN 'succeeded' WHEN i % 100 < 97 THEN 'failed' WHEN i % 100 = 97 "
              "THEN 'lost' WHEN i % 100 = 98 THEN 'triggered' ELSE 'pending' END AS s "
              "FROM generate_series(" + std::to_string(first) + ", " + std::to_string(first + kBatch - 1) +
              ") i) r ORDER BY i"));
      tx.commit();
    }
    {
      pqxx::nontransaction tx(c);
      tx.exec("VACUUM ANALYZE");
    }
    Database::Options options;
    options.url = out.db->url();
    options.pool_size = 1;
    out.database = std::make_unique<Database>(options, &PgOverviewStore::prepare);
    out.store = std::make_unique<PgOverviewStore>(*out.database);
    return out;
  }();
  return l;
}

// Day starts every 24 h from `first`, n days.
OverviewStore::DashboardQuery query(int days, std::int64_t first_day_start, std::int64_t today_start) {
  OverviewStore::DashboardQuery q;
  for (int i = 0; i <= days; ++i) q.day_starts.push_back(first_day_start + i * kDayMs);
  q.today_start = today_start;
  q.today_end = today_start + kDayMs;
  q.executor_dead_after_ms = 3'600'000;
  return q;
}

void run(benchmark::State& state, const OverviewStore::DashboardQuery& q) {
  auto& l = loaded();
  if (!l.store) {
    state.SkipWithError(l.error.c_str());
    return;
  }
  std::int64_t finished = 0;
  for (auto _ : state) {
    auto d = l.store->dashboard(q);
    benchmark::DoNotOptimize(d);
    finished = 0;
    for (const auto& day : d.days) finished += day.succeeded + day.failed;
  }
  state.counters["runs_counted"] = static_cast<double>(finished);
}

void BM_DashboardAdmin7Days(benchmark::State& state) { run(state, query(7, kToday - 6 * kDayMs, kToday)); }
void BM_DashboardAdmin30Days(benchmark::State& state) { run(state, query(30, kToday - 29 * kDayMs, kToday)); }
void BM_DashboardAdmin366Days(benchmark::State& state) { run(state, query(366, kToday - 365 * kDayMs, kToday)); }
void BM_DashboardUserOf2Groups7Days(benchmark::State& state) {
  auto q = query(7, kToday - 6 * kDayMs, kToday);
  q.scope = std::vector<std::int64_t>{3, 7};
  run(state, q);
}
void BM_DashboardAdmin7DaysKolkata(benchmark::State& state) {
  const std::int64_t midnight = kToday - 5 * 3'600'000 - 1'800'000;  // 00:00 +05:30
  run(state, query(7, midnight - 6 * kDayMs, midnight));
}

// What the report replaces: counting the runs of the same 7 days.
void BM_BaselineCountingRuns7Days(benchmark::State& state) {
  auto& l = loaded();
  if (!l.store) {
    state.SkipWithError(l.error.c_str());
    return;
  }
  const std::string sql =
      "SELECT (scheduled_time - " + std::to_string(kToday - 6 * kDayMs) + ") / " + std::to_string(kDayMs) +
      " AS day, count(*) FILTER (WHERE state = 'succeeded'), count(*) FILTER (WHERE state IN ('failed', 'lost')) "
      "FROM job_log WHERE scheduled_time >= " + std::to_string(kToday - 6 * kDayMs) + " AND scheduled_time < " +
      std::to_string(kToday + kDayMs) + " GROUP BY 1";
  std::int64_t finished = 0;
  for (auto _ : state) {
    finished = l.database->read([&](pqxx::read_transaction& tx) {
      std::int64_t n = 0;
      for (const auto& r : tx.exec(sql)) n += r[1].as<std::int64_t>() + r[2].as<std::int64_t>();
      return n;
    });
  }
  state.counters["runs_counted"] = static_cast<double>(finished);
}

BENCHMARK(BM_DashboardAdmin7Days)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DashboardAdmin30Days)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DashboardAdmin366Days)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DashboardUserOf2Groups7Days)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DashboardAdmin7DaysKolkata)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BaselineCountingRuns7Days)->Unit(benchmark::kMillisecond);

}  // namespace
