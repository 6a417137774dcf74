// The paged lists behind GET /api/v1/jobs and GET /api/v1/logs (PgJobStore::list and
// PgLogStore::list) on a real PostgreSQL holding 1,000,000 jobs and 10,000,000 runs.
//
//  - Data, loaded once (untimed) into a fresh migrated database (tests/support/test_database.h):
//    100 groups; 1,000,000 jobs, job i in group 1 + i % 100, described 'job <i> ' and one of
//    five words ('nightly report', 'sync orders', ...), author 'team<i % 50>', handler
//    'handler<i % 500>', 90 % running, inserted in transactions of 10,000 jobs through the
//    job triggers (text search, per-group counts); 10,000,000 runs over the 30 days before "now",
//    scheduled_time increasing with the run, run i of job 1 + (i * 7919) % 1,000,000 (ten runs a
//    job) in that job's group, inserted in statements of 1,000,000 rows through the report
//    trigger; states 97.9 % succeeded, 1.5 % failed, 0.2 % lost, 0.3 % triggered, 0.09 % pending,
//    0.01 % cancelled. Then VACUUM ANALYZE. Loading takes several minutes.
//  - Subject: one store call per iteration, limit 20, on a pool of one connection: jobs for the
//    admin (first page; text matching many, one and no job; stopped jobs), for a normal user of 2
//    groups, and a keyset page 50,000 rows deep; runs for the admin (first page; failures;
//    pending), of one job, of a user of 2 groups (all; failures), failures in one hour in the
//    middle, a keyset page in the middle of the table and the deepest offset page the API allows
//    (9,980).
//  - Baseline: the statements these calls replaced (one catch-all WHERE, count(*) OVER () for
//    the total, LIMIT/OFFSET), raw on a plain connection, for the admin's first pages and the
//    runs of a user of 2 groups. They run on the same tables, so on the indexes the keyset
//    lists brought with them, which the old statements did not have.
//
//   CRONWHEEL_TEST_DB_URL=postgresql://user@host:port/postgres build/bin/list_bench
//
// Without CRONWHEEL_TEST_DB_URL (a superuser: it creates its own database) every benchmark is
// skipped with that reason. Not a test: no assertion on timing.

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <pqxx/pqxx>
#include <spdlog/spdlog.h>

#include "admin/pg/database.h"
#include "admin/pg/migrator.h"
#include "admin/pg/pg_stores.h"
#include "tests/support/run_rows.h"
#include "tests/support/test_database.h"

namespace {

using cronwheel::admin::Database;
using cronwheel::admin::JobStore;
using cronwheel::admin::LogStore;
using cronwheel::admin::Page;
using cronwheel::admin::PageKey;
using cronwheel::admin::PgStores;
using cronwheel::testing::insert_runs;
using cronwheel::testing::TestDatabase;

constexpr std::int64_t kGroups = 100;
constexpr std::int64_t kJobs = 1'000'000;
constexpr std::int64_t kRuns = 10'000'000;
constexpr std::int64_t kJobBatch = 10'000;
constexpr std::int64_t kBatch = 1'000'000;
constexpr std::int64_t kDayMs = 86'400'000;
constexpr std::int64_t kHourMs = 3'600'000;
constexpr std::int64_t kSpan = 30 * kDayMs;
// "now" is 2026-11-24 12:00 UTC; the runs fill the 30 days before it.
constexpr std::int64_t kNow = 1'795'521'600'000;
constexpr std::int64_t kFirstRun = kNow - kSpan;
constexpr std::int64_t kRunStepMs = kSpan / kRuns;  // 259 ms
constexpr std::int64_t kLimit = 20;
// The last page of 20 within the API's offset cap (kMaxListOffset, 10,000).
constexpr std::int64_t kDeepestOffset = 9'980;
constexpr std::int64_t kJobsKeysetDepth = 50'000;    // rows before the keyset page of jobs
constexpr std::int64_t kOneJob = 777'777;
const std::vector<std::int64_t> kTwoGroups{3, 7};

struct Loaded {
  std::unique_ptr<TestDatabase> db;
  std::unique_ptr<Database> database;
  std::unique_ptr<PgStores> stores;
  std::unique_ptr<pqxx::connection> baseline;  // plain connection for the old statements
  PageKey jobs_deep;    // the job 50,000 rows down the list
  PageKey runs_middle;  // the run halfway down the list
  std::string error;
};

void load(pqxx::connection& c) {
  {
    pqxx::work tx(c);
    tx.exec("INSERT INTO job_group (app_name, title) SELECT 'bench-app-' || g, 'Bench ' || g "
            "FROM generate_series(1, " + std::to_string(kGroups) + ") g");
    tx.commit();
  }
  // Job i gets id i, so a run's group (1 + job_id % 100) is its job's. In transactions of
  // kJobBatch: each job's row trigger updates its group's job_count row, and within one
  // transaction those updates chain up (no old version can be pruned before commit), so one
  // statement of 1,000,000 jobs takes quadratic time.
  for (std::int64_t first = 1; first <= kJobs; first += kJobBatch) {
    pqxx::work tx(c);
    tx.exec("WITH j AS (INSERT INTO job_info (id, job_group, job_desc, author, executor_handler, schedule_type, "
            "schedule_conf) "
            "SELECT i, 1 + i % " + std::to_string(kGroups) + ", 'job ' || i || ' ' || "
            "(ARRAY['nightly report', 'sync orders', 'clean cache', 'send mail', 'rebuild index'])[1 + i % 5], "
            "'team' || i % 50, 'handler' || i % 500, 'CRON', '0 * * * * ?' FROM generate_series(" +
            std::to_string(first) + ", " + std::to_string(first + kJobBatch - 1) + ") i RETURNING id, job_group) "
            "INSERT INTO job_schedule (job_id, count_group, trigger_status, trigger_next_time) "
            "SELECT id, job_group, CASE WHEN id % 10 = 0 THEN 0 ELSE 1 END, CASE WHEN id % 10 = 0 THEN 0 ELSE " +
            std::to_string(kNow + 60'000) + " END FROM j");
    tx.commit();
  }
  {
    pqxx::work tx(c);
    tx.exec("SELECT setval('job_info_id_seq', " + std::to_string(kJobs) + ")");
    tx.commit();
  }
  for (std::int64_t first = 0; first < kRuns; first += kBatch) {
    pqxx::work tx(c);
    tx.exec(insert_runs(
        "job_group, job_id, state, trigger_type, scheduled_time, admin_node, trigger_time, handle_time, handle_code,"
        " handle_msg",
        "SELECT 1 + j % " + std::to_string(kGroups) + " AS job_group, j AS job_id, s AS state,"
            " 'SCHEDULE' AS trigger_type, t AS scheduled_time, 'node-1' AS admin_node, "
            "CASE WHEN s IN ('pending', 'cancelled') THEN NULL ELSE to_timestamp(t / 1000.0) END AS trigger_time, "
            "CASE WHEN s IN ('succeeded', 'failed') THEN to_timestamp(t / 1000.0 + 1) END AS handle_time, "
            "CASE s WHEN 'succeeded' THEN 200 WHEN 'failed' THEN 500 ELSE 0 END AS handle_code, "
            "CASE WHEN s = 'failed' THEN 'exit code 1' ELSE '' END AS handle_msg "
            "FROM (SELECT i, 1 + (i * 7919) % " + std::to_string(kJobs) + " AS j, " + std::to_string(kFirstRun) +
            " + i * " + std::to_string(kRunStepMs) + " AS t, "
            "CASE WHEN i % 10000 < 9790 THEN 'succeeded' WHEN i % 10000 < 9940 THEN 'failed' "
            "WHEN i % 10000 < 9960 THEN 'lost' WHEN i % 10000 < 9990 THEN 'triggered' "
            "WHEN i % 10000 < 9999 THEN 'pending' ELSE 'cancelled' END AS s "
            "FROM generate_series(" + std::to_string(first) + "::bigint, " + std::to_string(first + kBatch - 1) +
            ") i) r ORDER BY i"));
    tx.commit();
  }
  pqxx::nontransaction tx(c);
  tx.exec("SET maintenance_work_mem = '512MB'");
  tx.exec("VACUUM ANALYZE");
}

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
    load(c);
    {
      pqxx::read_transaction tx(c);
      out.jobs_deep.id = tx.exec1("SELECT id FROM job_info ORDER BY id DESC OFFSET " +
                                  std::to_string(kJobsKeysetDepth - 1) + " LIMIT 1")[0]
                             .as<std::int64_t>();
      auto middle = tx.exec1("SELECT scheduled_time, id FROM job_log ORDER BY scheduled_time DESC, id DESC OFFSET " +
                             std::to_string(kRuns / 2 - 1) + " LIMIT 1");
      out.runs_middle.time = middle[0].as<std::int64_t>();
      out.runs_middle.id = middle[1].as<std::int64_t>();
    }
    Database::Options options;
    options.url = out.db->url();
    options.pool_size = 1;
    out.database = std::make_unique<Database>(options, &PgStores::prepare);
    out.stores = std::make_unique<PgStores>(*out.database);
    out.baseline = std::make_unique<pqxx::connection>(out.db->url());
    return out;
  }();
  return l;
}

template <class T>
void count(benchmark::State& state, const Page<T>& page) {
  state.counters["items"] = static_cast<double>(page.items.size());
  state.counters["total"] = static_cast<double>(page.total);
  state.counters["total_exact"] = page.total_exact ? 1 : 0;
}

JobStore::Filter jobs_filter() {
  JobStore::Filter f;
  f.page.limit = kLimit;
  return f;
}

LogStore::Filter runs_filter() {
  LogStore::Filter f;
  f.page.limit = kLimit;
  return f;
}

void jobs(benchmark::State& state, JobStore::Filter f) {
  auto& l = loaded();
  if (!l.stores) {
    state.SkipWithError(l.error.c_str());
    return;
  }
  Page<cronwheel::admin::Job> page;
  for (auto _ : state) {
    page = l.stores->jobs().list(f);
    benchmark::DoNotOptimize(page);
  }
  count(state, page);
}

void runs(benchmark::State& state, LogStore::Filter f) {
  auto& l = loaded();
  if (!l.stores) {
    state.SkipWithError(l.error.c_str());
    return;
  }
  Page<cronwheel::admin::JobLog> page;
  for (auto _ : state) {
    page = l.stores->logs().list(f);
    benchmark::DoNotOptimize(page);
  }
  count(state, page);
}

// --- Jobs

void BM_JobsAdminFirstPage(benchmark::State& state) { jobs(state, jobs_filter()); }
void BM_JobsAdminTextMany(benchmark::State& state) {
  auto f = jobs_filter();
  f.text = "report";
  jobs(state, f);
}
void BM_JobsAdminTextOneJob(benchmark::State& state) {
  auto f = jobs_filter();
  f.text = "job 777777 ";
  jobs(state, f);
}
void BM_JobsAdminTextNoMatch(benchmark::State& state) {
  auto f = jobs_filter();
  f.text = "zq";
  jobs(state, f);
}
void BM_JobsUserOf2Groups(benchmark::State& state) {
  auto f = jobs_filter();
  f.scope = kTwoGroups;
  jobs(state, f);
}
void BM_JobsAdminStopped(benchmark::State& state) {
  auto f = jobs_filter();
  f.trigger_status = 0;
  jobs(state, f);
}
void BM_JobsAdminKeyset50000Deep(benchmark::State& state) {
  auto f = jobs_filter();
  if (auto& l = loaded(); l.stores) f.page.after = l.jobs_deep;
  jobs(state, f);
}

// --- Runs

void BM_RunsAdminFirstPage(benchmark::State& state) { runs(state, runs_filter()); }
void BM_RunsAdminFailure(benchmark::State& state) {
  auto f = runs_filter();
  f.status = cronwheel::admin::LogStore::Filter::Status::kFailure;
  runs(state, f);
}
void BM_RunsAdminPending(benchmark::State& state) {
  auto f = runs_filter();
  f.status = cronwheel::admin::LogStore::Filter::Status::kPending;
  runs(state, f);
}
void BM_RunsOneJob(benchmark::State& state) {
  auto f = runs_filter();
  f.job_id = kOneJob;
  runs(state, f);
}
void BM_RunsUserOf2Groups(benchmark::State& state) {
  auto f = runs_filter();
  f.scope = kTwoGroups;
  runs(state, f);
}
void BM_RunsUserOf2GroupsFailure(benchmark::State& state) {
  auto f = runs_filter();
  f.scope = kTwoGroups;
  f.status = cronwheel::admin::LogStore::Filter::Status::kFailure;
  runs(state, f);
}
void BM_RunsAdminOneHourFailure(benchmark::State& state) {
  auto f = runs_filter();
  f.from = kFirstRun + 15 * kDayMs;
  f.to = kFirstRun + 15 * kDayMs + kHourMs;
  f.status = cronwheel::admin::LogStore::Filter::Status::kFailure;
  runs(state, f);
}
void BM_RunsAdminKeysetMiddle(benchmark::State& state) {
  auto f = runs_filter();
  if (auto& l = loaded(); l.stores) f.page.after = l.runs_middle;
  runs(state, f);
}
void BM_RunsAdminOffset9980(benchmark::State& state) {
  auto f = runs_filter();
  f.page.offset = kDeepestOffset;
  runs(state, f);
}

// --- Baseline: the statements the list calls replaced, with * for the store's column lists.

const char* const kOldJobList =
    "SELECT *, count(*) OVER () AS total FROM job_info JOIN job_schedule ON job_id = id "
    "WHERE ($1::bigint[] IS NULL OR job_group = ANY ($1::bigint[])) "
    "AND ($2::bigint IS NULL OR job_group = $2) AND ($3::integer IS NULL OR trigger_status = $3) "
    "AND (job_desc ILIKE $4 OR executor_handler ILIKE $4 OR author ILIKE $4) ORDER BY id DESC LIMIT $5 OFFSET $6";
const char* const kOldLogList =
    "SELECT *, count(*) OVER () AS total FROM job_log WHERE ($1::bigint[] IS NULL OR job_group = ANY ($1::bigint[])) "
    "AND ($2::bigint IS NULL OR job_group = $2) AND ($3::bigint IS NULL OR job_id = $3) "
    "AND ($4::text[] IS NULL OR state = ANY ($4::text[])) AND ($5::bigint IS NULL OR scheduled_time >= $5) "
    "AND ($6::bigint IS NULL OR scheduled_time < $6) ORDER BY scheduled_time DESC, id DESC LIMIT $7 OFFSET $8";

using NoValue = std::optional<std::int64_t>;

// One old statement per iteration in a read transaction, as the old store did; the page's rows
// and the total from the first of them.
template <class... Args>
void baseline(benchmark::State& state, const char* sql, const Args&... args) {
  auto& l = loaded();
  if (!l.stores) {
    state.SkipWithError(l.error.c_str());
    return;
  }
  std::size_t items = 0;
  std::int64_t total = 0;
  for (auto _ : state) {
    pqxx::read_transaction tx(*l.baseline);
    const pqxx::result rows = tx.exec_params(sql, args...);
    items = rows.size();
    total = rows.empty() ? 0 : rows[0]["total"].as<std::int64_t>();
    benchmark::DoNotOptimize(rows);
  }
  state.counters["items"] = static_cast<double>(items);
  state.counters["total"] = static_cast<double>(total);
  state.counters["total_exact"] = 1;
}

const std::optional<std::string> kNoGroups;
const std::optional<std::string> kTwoGroupsArray{"{3,7}"};
const std::optional<std::string> kNoStates;

void BM_BaselineJobsAdminFirstPage(benchmark::State& state) {
  baseline(state, kOldJobList, kNoGroups, NoValue{}, std::optional<int>{}, std::string("%%"), kLimit,
           std::int64_t{0});
}
void BM_BaselineRunsAdminFirstPage(benchmark::State& state) {
  baseline(state, kOldLogList, kNoGroups, NoValue{}, NoValue{}, kNoStates, NoValue{}, NoValue{}, kLimit,
           std::int64_t{0});
}
void BM_BaselineRunsUserOf2Groups(benchmark::State& state) {
  baseline(state, kOldLogList, kTwoGroupsArray, NoValue{}, NoValue{}, kNoStates, NoValue{}, NoValue{}, kLimit,
           std::int64_t{0});
}

BENCHMARK(BM_JobsAdminFirstPage)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_JobsAdminTextMany)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_JobsAdminTextOneJob)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_JobsAdminTextNoMatch)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_JobsUserOf2Groups)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_JobsAdminStopped)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_JobsAdminKeyset50000Deep)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RunsAdminFirstPage)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RunsAdminFailure)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RunsAdminPending)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RunsOneJob)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RunsUserOf2Groups)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RunsUserOf2GroupsFailure)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RunsAdminOneHourFailure)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RunsAdminKeysetMiddle)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RunsAdminOffset9980)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BaselineJobsAdminFirstPage)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BaselineRunsAdminFirstPage)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BaselineRunsUserOf2Groups)->Unit(benchmark::kMillisecond);

}  // namespace
