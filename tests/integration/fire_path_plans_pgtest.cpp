// The plans of the fire path's statements on a fresh run table that has never been analysed.
//
// A run table that has never been analysed is what every new installation and every restored
// database has for a while: its partial indexes (job_log_pending, job_log_sending, ...) were
// created on an empty table and look empty to the planner, so a lookup "WHERE id = $1 AND
// state = 'pending' AND admin_node = $2" costs less through job_log_pending than through the
// primary key, and then reads every pending run of the node to find one. These tests build
// such a table with many rows and check, for the custom and the generic plan of each
// statement the fire path runs per fire or per batch, that runs and jobs are found by their
// primary key, and that the owner's scans read their own partial index.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "admin/pg/migrator.h"
#include "admin/pg/pg_completion_store.h"
#include "admin/pg/pg_schedule_store.h"
#include "admin/pg/pg_stores.h"
#include "admin/pg/pg_trigger_store.h"
#include "tests/support/test_database.h"

namespace cronwheel::testing {
namespace {

constexpr int kJobs = 5'000;
constexpr int kRuns = 20'000;
// The newest runs are unfinished and belong to node-1: kPending pending, kSending sending.
constexpr int kPending = 5'000;
constexpr int kSending = 1'000;
const std::string kNode = "node-1";
// Custom plans are made for the arguments at hand; a prepared statement switches to the generic
// one after five executions when that looks no costlier.
constexpr const char* kPlanModes[] = {"force_custom_plan", "force_generic_plan"};

// One scan node of a plan: "Index Scan using job_log_pkey on job_log l" is
// {"Index Scan", "job_log_pkey", "job_log"}. A Bitmap Index Scan names its index only; its
// table is looked up.
struct Scan {
  std::string kind;
  std::string index;
  std::string table;
};

// A statement of the fire path, prepared by its store, with arguments to plan it for.
struct Statement {
  std::string name;
  std::string arguments;
};

class FirePathPlansPgTest : public ::testing::Test {
 protected:
  FirePathPlansPgTest() : connection_(migrated(db_)) {
    admin::PgStores::prepare(connection_);
    admin::PgTriggerStore::prepare(connection_);
    admin::PgCompletionStore::prepare(connection_);
    admin::PgScheduleStore::prepare(connection_);
    fill();
    pqxx::nontransaction tx(connection_);
    for (const auto& row : tx.exec("SELECT indexname, tablename FROM pg_indexes WHERE schemaname = 'public'")) {
      index_tables_[row[0].as<std::string>()] = row[1].as<std::string>();
    }
  }

  static std::string migrated(const TestDatabase& db) {
    pqxx::connection c(db.url());
    admin::Migrator().migrate(c);
    return db.url();
  }

  // Many runs, no statistics: autovacuum is off for these tables before the first row is
  // written (whatever the server's setting), and nothing analyses them.
  void fill() {
    pqxx::work tx(connection_);
    for (const char* table : {"job_log", "job_info", "job_group"}) {
      tx.exec(std::string("ALTER TABLE ") + table + " SET (autovacuum_enabled = false)");
    }
    tx.exec("INSERT INTO admin_node (node_id, lease_until) VALUES ('node-1', now() + interval '1 hour'),"
            " ('node-2', now() + interval '1 hour')");
    tx.exec("INSERT INTO job_group (app_name, title, address_type, address_list)"
            " VALUES ('demo-app', 'Demo', 1, '{http://10.0.0.1:9999/}')");
    tx.exec("INSERT INTO job_info (job_group, job_desc, executor_handler, schedule_type, schedule_conf,"
            " trigger_status, trigger_next_time)"
            " SELECT (SELECT id FROM job_group), 'job ' || n, 'demoHandler', 'CRON', '* * * * * ?', 1, 1700000000000"
            " FROM generate_series(1, " + std::to_string(kJobs) + ") n");
    const std::string first_sending = std::to_string(kRuns - kPending - kSending);
    const std::string first_pending = std::to_string(kRuns - kPending);
    const std::string state = "CASE WHEN n > " + first_pending + " THEN 'pending' WHEN n > " + first_sending +
                              " THEN 'sending' WHEN n % 10 = 0 THEN 'triggered' WHEN n % 10 = 1 THEN 'failed'"
                              " ELSE 'succeeded' END";
    tx.exec("INSERT INTO job_log (job_group, job_id, state, trigger_type, scheduled_time, admin_node, executor_address,"
            " executor_handler, trigger_time, trigger_code, handle_time, handle_code)"
            " SELECT job_group, job_id, state, 'SCHEDULE', 1700000000000 + n * 1000, 'node-1', 'http://10.0.0.1:9999/',"
            " 'demoHandler', CASE WHEN state = 'pending' THEN NULL ELSE now() END,"
            " CASE WHEN state IN ('pending', 'sending') THEN 0 ELSE 200 END,"
            " CASE WHEN state IN ('succeeded', 'failed') THEN now() END,"
            " CASE WHEN state = 'succeeded' THEN 200 WHEN state = 'failed' THEN 500 ELSE 0 END"
            " FROM (SELECT n, " + state + " AS state, (SELECT id FROM job_group) AS job_group,"
            "   (SELECT min(id) FROM job_info) + n % " + std::to_string(kJobs) + " AS job_id"
            "   FROM generate_series(1, " + std::to_string(kRuns) + ") n) runs");
    tx.commit();
  }

  std::int64_t run_in(const std::string& state) {
    pqxx::nontransaction tx(connection_);
    return tx.exec1("SELECT max(id) FROM job_log WHERE state = " + tx.quote(state))[0].as<std::int64_t>();
  }
  // An array literal of the newest `n` runs in `state`: a group-committed batch.
  std::string runs_in(const std::string& state, int n) {
    pqxx::nontransaction tx(connection_);
    return "'" + tx.exec1("SELECT array_agg(id)::text FROM (SELECT id FROM job_log WHERE state = " + tx.quote(state) +
                          " ORDER BY id DESC LIMIT " + std::to_string(n) + ") r")[0]
                     .as<std::string>() + "'";
  }
  // An array literal of `n` copies of `value` (a text array element, double-quoted).
  static std::string repeated(const std::string& value, int n) {
    std::string out = "'{";
    for (int i = 0; i < n; ++i) out += (i > 0 ? ",\"" : "\"") + value + "\"";
    return out + "}'";
  }
  std::int64_t job_id() {
    pqxx::nontransaction tx(connection_);
    return tx.exec1("SELECT max(id) FROM job_info")[0].as<std::int64_t>();
  }

  // EXPLAIN of the prepared statement under plan_cache_mode `mode` (force_custom_plan or
  // force_generic_plan), as text.
  std::string plan(const Statement& s, const std::string& mode) {
    connection_.prepare_now(s.name);
    pqxx::nontransaction tx(connection_);
    tx.exec("SET plan_cache_mode = " + mode);
    std::string out;
    for (const auto& row : tx.exec("EXPLAIN EXECUTE " + s.name + "(" + s.arguments + ")")) {
      out += row[0].as<std::string>() + "\n";
    }
    return out;
  }

  std::vector<Scan> scans(const std::string& plan) const {
    static const std::regex scan(
        R"((Seq Scan|Tid Scan|Tid Range Scan|Index Scan(?: Backward)?|Index Only Scan(?: Backward)?|Bitmap Heap Scan)(?: using (\S+))? on (\S+))");
    static const std::regex bitmap(R"(Bitmap Index Scan on (\S+))");
    std::vector<Scan> out;
    std::istringstream lines(plan);
    for (std::string line; std::getline(lines, line);) {
      std::smatch m;
      if (std::regex_search(line, m, bitmap)) {
        auto table = index_tables_.find(m[1]);
        out.push_back({"Bitmap Index Scan", m[1], table == index_tables_.end() ? "" : table->second});
      } else if (std::regex_search(line, m, scan)) {
        out.push_back({m[1], m[2], m[3]});
      }
    }
    return out;
  }

  // Every read of `tables` in the statement's plans goes through the table's primary key (an
  // index scan, or a bitmap scan whose only index is the primary key), and at least one does.
  void expect_primary_key_reads(const Statement& s, const std::vector<std::string>& tables) {
    for (const char* mode : kPlanModes) {
      const std::string text = plan(s, mode);
      int by_key = 0;
      for (const Scan& scan : scans(text)) {
        if (std::find(tables.begin(), tables.end(), scan.table) == tables.end()) continue;
        if (scan.kind == "Bitmap Heap Scan") continue;  // its Bitmap Index Scans are checked
        const bool primary_key = scan.index == scan.table + "_pkey";
        EXPECT_TRUE(primary_key) << s.name << " (" << mode << ") reads " << scan.table << " by " << scan.kind
                                 << (scan.index.empty() ? "" : " using " + scan.index) << ":\n" << text;
        if (primary_key) ++by_key;
      }
      EXPECT_GT(by_key, 0) << s.name << " (" << mode << ") reads none of the tables by primary key:\n" << text;
    }
  }

  // Runs the statement (EXPLAIN ANALYZE, rolled back) under each plan mode and checks that its
  // batch values are unnested once: no Function Scan runs more than once. A plan that put them
  // on the inner side of a nested loop would unnest them again for every run of the batch.
  void expect_values_read_once(const Statement& s) {
    static const std::regex function_scan(R"(Function Scan.*loops=(\d+))");
    for (const char* mode : kPlanModes) {
      connection_.prepare_now(s.name);
      pqxx::work tx(connection_);
      tx.exec("SET LOCAL plan_cache_mode = " + std::string(mode));
      std::string text;
      for (const auto& row : tx.exec("EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) EXECUTE " + s.name + "(" + s.arguments + ")")) {
        text += row[0].as<std::string>() + "\n";
      }
      tx.abort();
      int scans = 0;
      std::istringstream lines(text);
      for (std::string line; std::getline(lines, line);) {
        std::smatch m;
        if (!std::regex_search(line, m, function_scan)) continue;
        ++scans;
        EXPECT_EQ(m[1], "1") << s.name << " (" << mode << ") unnests its values more than once:\n" << text;
      }
      EXPECT_GT(scans, 0) << s.name << " (" << mode << ") has no Function Scan:\n" << text;
    }
  }

  // The statement reads job_log through `index` only.
  void expect_index_reads(const Statement& s, const std::string& index) {
    for (const char* mode : kPlanModes) {
      const std::string text = plan(s, mode);
      int through_index = 0;
      for (const Scan& scan : scans(text)) {
        if (scan.table != "job_log" || scan.kind == "Bitmap Heap Scan") continue;
        EXPECT_EQ(scan.index, index) << s.name << " (" << mode << ") reads job_log by " << scan.kind
                                     << (scan.index.empty() ? "" : " using " + scan.index) << ":\n" << text;
        if (scan.index == index) ++through_index;
      }
      EXPECT_GT(through_index, 0) << s.name << " (" << mode << ") does not read " << index << ":\n" << text;
    }
  }

  TestDatabase db_;
  pqxx::connection connection_;
  std::map<std::string, std::string> index_tables_;
};

TEST_F(FirePathPlansPgTest, TheRunTableHasManyRowsAndNoStatistics) {
  pqxx::nontransaction tx(connection_);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM job_log")[0].as<int>(), kRuns);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM pg_stats WHERE schemaname = 'public'"
                     " AND tablename IN ('job_log', 'job_info', 'job_group')")[0]
                .as<int>(),
            0);
  EXPECT_LT(tx.exec1("SELECT reltuples FROM pg_class WHERE oid = 'job_log'::regclass")[0].as<double>(), 0)
      << "job_log has been vacuumed or analysed";
}

TEST_F(FirePathPlansPgTest, PerFireAndPerBatchLookupsFindRunsAndJobsByPrimaryKey) {
  const std::string node = "'" + kNode + "'";
  const std::string pending = std::to_string(run_in("pending"));
  const std::string sending = std::to_string(run_in("sending"));
  const std::string triggered = std::to_string(run_in("triggered"));
  const std::string job = std::to_string(job_id());
  const std::string pending_batch = "'{" + pending + "," + std::to_string(run_in("pending") - 1) + "}'";
  const std::string sending_batch = "'{" + sending + "," + std::to_string(run_in("sending") - 1) + "}'";
  const std::string jobs = "'{" + job + "," + std::to_string(job_id() - 1) + "}'";
  const std::vector<std::string> runs_and_jobs = {"job_log", "job_info", "job_group"};

  // The trigger: load, claim (and a broadcast's other shards), release, the executor's answer.
  // Load, claim and answer are group-committed: planned for one run and for a batch of 1,000.
  for (int n : {1, 1'000}) {
    const std::string pendings = runs_in("pending", n), sendings = runs_in("sending", n);
    expect_primary_key_reads({"trigger_load", pendings + ", " + node}, runs_and_jobs);
    expect_primary_key_reads({"trigger_claim", pendings + ", " + node + ", " + repeated("http://10.0.0.1:9999/", n) +
                                                   ", " + repeated("demoHandler", n) + ", " + repeated("", n) + ", " +
                                                   repeated("0", n) + ", " + repeated("1", n) + ", " +
                                                   repeated("1700000000000", n) + ", 5000"},
                             runs_and_jobs);
    expect_primary_key_reads(
        {"trigger_record_triggered", sendings + ", " + node + ", " + repeated("ok", n) + ", " + repeated("200", n)}, runs_and_jobs);
    expect_values_read_once({"trigger_claim", pendings + ", " + node + ", " + repeated("http://10.0.0.1:9999/", n) + ", " +
                                                  repeated("demoHandler", n) + ", " + repeated("", n) + ", " +
                                                  repeated("0", n) + ", " + repeated("1", n) + ", " +
                                                  repeated("1700000000000", n) + ", 5000"});
    expect_values_read_once({"trigger_record_triggered", sendings + ", " + node + ", " + repeated("ok", n) + ", " + repeated("200", n)});
  }
  expect_primary_key_reads({"trigger_claim_one", pending + ", " + node +
                                                     ", 'http://10.0.0.1:9999/', 'demoHandler', '', 0, 2, 1700000000000, 5000"},
                           runs_and_jobs);
  expect_primary_key_reads({"trigger_insert_shards", sending + ", '{http://10.0.0.1:9999/,http://10.0.0.2:9999/}'"},
                           runs_and_jobs);
  expect_primary_key_reads({"trigger_release", sending + ", " + node + ", 'note'"}, runs_and_jobs);
  expect_primary_key_reads({"trigger_record_failed", pending + ", " + node + ", 'pending', 'no executor address',"
                                                                           " 1700000000000, 'demoHandler', ''"},
                           runs_and_jobs);
  // The executor's callback: the run's group (for its token), the result, or the run as it is.
  expect_primary_key_reads({"log_get", triggered}, runs_and_jobs);
  expect_primary_key_reads({"completion_finish", triggered + ", 'succeeded', 1700000000000, 200, '', NULL"}, runs_and_jobs);
  expect_primary_key_reads({"completion_lose", triggered + ", 1700000000000, 500, 'lost', 1700000000000, 90000"},
                           runs_and_jobs);
  expect_primary_key_reads({"completion_run", triggered}, runs_and_jobs);
  // A callback batch: one run and 1,000.
  for (int n : {1, 1'000}) {
    const std::string runs = runs_in("triggered", n);
    expect_primary_key_reads({"completion_finish_all", runs + ", " + repeated("succeeded", n) + ", " +
                                                           repeated("1700000000000", n) + ", " + repeated("200", n) +
                                                           ", " + repeated("", n) + ", " + repeated("", n) + ", " +
                                                           repeated("f", n)},
                             runs_and_jobs);
    expect_values_read_once({"completion_finish_all", runs + ", " + repeated("succeeded", n) + ", " +
                                                          repeated("1700000000000", n) + ", " + repeated("200", n) +
                                                          ", " + repeated("", n) + ", " + repeated("", n) + ", " +
                                                          repeated("f", n)});
    expect_primary_key_reads({"completion_runs", runs}, runs_and_jobs);
    expect_primary_key_reads({"log_groups", runs}, runs_and_jobs);
  }
  // What follows a run's end, in the same transaction.
  expect_primary_key_reads({"follow_up_jobs", jobs}, runs_and_jobs);
  expect_primary_key_reads({"follow_up_children", jobs}, runs_and_jobs);
  expect_primary_key_reads({"follow_up_fix_delay", job + ", 1700000000000, 253402300799000"}, runs_and_jobs);
  // Late pending fires the misfire rule cancels (a batch of two, and the feeder's thousand), a
  // takeover's sending fires, and their resolution.
  expect_primary_key_reads({"sched_cancel_pending", pending_batch + ", '{\"late\",\"coalesced\"}', " + node},
                           runs_and_jobs);
  expect_primary_key_reads(
      {"sched_cancel_pending", runs_in("pending", 1'000) + ", " + repeated("misfire", 1'000) + ", " + node},
      runs_and_jobs);
  expect_primary_key_reads({"sched_takeover_sending", sending_batch + ", " + node}, runs_and_jobs);
  // An operator's cancel of a pending fire: the run locked, then moved, by id.
  expect_primary_key_reads({"log_lock", pending}, runs_and_jobs);
  expect_primary_key_reads({"log_cancel", pending}, runs_and_jobs);
  expect_primary_key_reads({"sched_resolve_delivered", sending + ", " + node + ", 'delivered'"}, runs_and_jobs);
  expect_primary_key_reads({"sched_resolve_not_delivered", sending + ", " + node + ", 'not delivered'"}, runs_and_jobs);
  expect_primary_key_reads({"sched_resolve_unknown", sending + ", " + node + ", 'unknown'"}, runs_and_jobs);
}

TEST_F(FirePathPlansPgTest, OwnersScansReadTheirPartialIndex) {
  // The feeder's read of a node's due fires, and a takeover of a dead node's fires, each with
  // its job's misfire strategy read by the job's primary key.
  const Statement feeder{"sched_pending", "'" + kNode + "', 1800000000000, 1000"};
  const Statement takeover{"sched_takeover_pending", "'{" + kNode + "}', 'node-2'"};
  for (const Statement& s : {feeder, takeover}) {
    expect_index_reads(s, "job_log_pending");
    expect_primary_key_reads(s, {"job_info"});
  }
  expect_index_reads({"sched_takeover_sending_lock", "'{" + kNode + "}'"}, "job_log_sending");
}

}  // namespace
}  // namespace cronwheel::testing
