// The plans of the fire path's statements on fresh run tables that have never been analysed.
//
// A run table that has never been analysed is what every new installation and every restored
// database has for a while: its partial indexes (job_log_active_waiting_slot, ...) were created
// on an empty table and look empty to the planner, so a lookup "WHERE id = $1 AND waiting_slot"
// costs less through job_log_active_waiting_slot than through the primary key, and then reads
// every run of the index to find one. These tests build
// such a table with many rows and check, for the custom and the generic plan of each
// statement the fire path runs per fire or per batch, that runs and jobs are found by their
// primary key, and that the owner's scans read the index of the node's runs.
//
// A workflow node's run that ends takes its workflow run's next step in the same transaction:
// the workflow tables are built the same way (many runs and nodes, never analysed), and the
// steps' statements must find runs, nodes, run rows and jobs by primary key too.
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
#include "tests/support/run_rows.h"
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

// The run tables (sql/0028_active_runs.sql): runs in flight and finished runs.
const std::vector<std::string> kRunTables = {"job_log_active", "job_log_finished"};
// One scan node of a plan: "Index Scan using job_log_active_pkey on job_log_active l" is
// {"Index Scan", "job_log_active_pkey", "job_log_active"}. A Bitmap Index Scan names its index only; its
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
    for (const char* table : {"job_log_active", "job_log_finished", "job_info", "job_schedule", "job_group"}) {
      tx.exec(std::string("ALTER TABLE ") + table + " SET (autovacuum_enabled = false)");
    }
    tx.exec("INSERT INTO admin_node (node_id, lease_until) VALUES ('node-1', now() + interval '1 hour'),"
            " ('node-2', now() + interval '1 hour')");
    tx.exec("INSERT INTO job_group (app_name, title, address_type, address_list)"
            " VALUES ('demo-app', 'Demo', 1, '{http://10.0.0.1:9999/}')");
    tx.exec("INSERT INTO job_info (job_group, job_desc, executor_handler, schedule_type, schedule_conf)"
            " SELECT (SELECT id FROM job_group), 'job ' || n, 'demoHandler', 'CRON', '* * * * * ?'"
            " FROM generate_series(1, " + std::to_string(kJobs) + ") n");
    tx.exec("UPDATE job_schedule SET trigger_status = 1, trigger_next_time = 1700000000000");
    const std::string first_sending = std::to_string(kRuns - kPending - kSending);
    const std::string first_pending = std::to_string(kRuns - kPending);
    const std::string state = "CASE WHEN n > " + first_pending + " THEN 'pending' WHEN n > " + first_sending +
                              " THEN 'sending' WHEN n % 10 = 0 THEN 'triggered' WHEN n % 10 = 1 THEN 'failed'"
                              " ELSE 'succeeded' END";
    tx.exec(insert_runs(
        "job_group, job_id, state, trigger_type, scheduled_time, admin_node, executor_address, executor_handler,"
        " trigger_time, trigger_code, handle_time, handle_code",
        "SELECT job_group, job_id, state, 'SCHEDULE' AS trigger_type, 1700000000000 + n * 1000 AS scheduled_time,"
        " 'node-1' AS admin_node, 'http://10.0.0.1:9999/' AS executor_address, 'demoHandler' AS executor_handler,"
        " CASE WHEN state = 'pending' THEN NULL ELSE now() END AS trigger_time,"
        " CASE WHEN state IN ('pending', 'sending') THEN 0 ELSE 200 END AS trigger_code,"
        " CASE WHEN state IN ('succeeded', 'failed') THEN now() END AS handle_time,"
        " CASE WHEN state = 'succeeded' THEN 200 WHEN state = 'failed' THEN 500 ELSE 0 END AS handle_code"
        " FROM (SELECT n, " + state + " AS state, (SELECT id FROM job_group) AS job_group,"
        "   (SELECT min(id) FROM job_info) + n % " + std::to_string(kJobs) + " AS job_id"
        "   FROM generate_series(1, " + std::to_string(kRuns) + ") n) numbered ORDER BY n"));
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
  // An array literal of the newest `n` jobs' ids.
  std::string group_id() {
    pqxx::nontransaction tx(connection_);
    return tx.exec1("SELECT id FROM job_group")[0].as<std::string>();
  }
  std::string jobs_newest(int n) {
    pqxx::nontransaction tx(connection_);
    return "'" + tx.exec1("SELECT array_agg(id)::text FROM (SELECT id FROM job_info ORDER BY id DESC LIMIT " +
                          std::to_string(n) + ") j")[0]
                     .as<std::string>() + "'";
  }

  // EXPLAIN of the prepared statement under plan_cache_mode `mode` (force_custom_plan or
  // force_generic_plan), as text.
  std::string plan(const Statement& s, const std::string& mode) {
    connection_.prepare_now(s.name);
    pqxx::nontransaction tx(connection_);
    tx.exec("SET plan_cache_mode = " + mode);
    std::string out;
    const std::string arguments = s.arguments.empty() ? "" : "(" + s.arguments + ")";
    for (const auto& row : tx.exec("EXPLAIN EXECUTE " + s.name + arguments)) {
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

  // The statement reads the run tables through `index` only.
  void expect_index_reads(const Statement& s, const std::string& index) {
    for (const char* mode : kPlanModes) {
      const std::string text = plan(s, mode);
      int through_index = 0;
      for (const Scan& scan : scans(text)) {
        if (std::find(kRunTables.begin(), kRunTables.end(), scan.table) == kRunTables.end() ||
            scan.kind == "Bitmap Heap Scan") {
          continue;
        }
        EXPECT_EQ(scan.index, index) << s.name << " (" << mode << ") reads " << scan.table << " by " << scan.kind
                                     << (scan.index.empty() ? "" : " using " + scan.index) << ":\n" << text;
        if (scan.index == index) ++through_index;
      }
      EXPECT_GT(through_index, 0) << s.name << " (" << mode << ") does not read " << index << ":\n" << text;
    }
  }

  // Every read of `table` in the statement's plans goes through one of `indexes`, and at least
  // one read does.
  void expect_no_reads(const Statement& s, const std::string& table) {
    for (const char* mode : kPlanModes) {
      const std::string text = plan(s, mode);
      for (const Scan& scan : scans(text)) {
        EXPECT_NE(scan.table, table) << s.name << " (" << mode << ") reads " << table << " by " << scan.kind << ":\n"
                                     << text;
      }
    }
  }

  void expect_table_reads(const Statement& s, const std::string& table, const std::vector<std::string>& indexes) {
    for (const char* mode : kPlanModes) {
      const std::string text = plan(s, mode);
      int through_index = 0;
      for (const Scan& scan : scans(text)) {
        if (scan.table != table || scan.kind == "Bitmap Heap Scan") continue;
        const bool listed = std::find(indexes.begin(), indexes.end(), scan.index) != indexes.end();
        EXPECT_TRUE(listed) << s.name << " (" << mode << ") reads " << table << " by " << scan.kind
                            << (scan.index.empty() ? "" : " using " + scan.index) << ":\n" << text;
        if (listed) ++through_index;
      }
      EXPECT_GT(through_index, 0) << s.name << " (" << mode << ") does not read " << table << ":\n" << text;
    }
  }

  TestDatabase db_;
  pqxx::connection connection_;
  std::map<std::string, std::string> index_tables_;
};

TEST_F(FirePathPlansPgTest, TheRunTableHasManyRowsAndNoStatistics) {
  pqxx::nontransaction tx(connection_);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM job_log")[0].as<int>(), kRuns);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM job_log_active")[0].as<int>(), kPending + kSending + (kRuns - kPending - kSending) / 10);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM pg_stats WHERE schemaname = 'public' AND tablename IN"
                     " ('job_log_active', 'job_log_finished', 'job_info', 'job_schedule', 'job_group')")[0]
                .as<int>(),
            0);
  for (const std::string& table : kRunTables) {
    EXPECT_LT(tx.exec1("SELECT reltuples FROM pg_class WHERE oid = '" + table + "'::regclass")[0].as<double>(), 0)
        << table << " has been vacuumed or analysed";
  }
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
  const std::vector<std::string> runs_and_jobs = {"job_log_active", "job_log_finished", "job_info", "job_schedule",
                                                  "job_group"};

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
  // A broadcast's other shards: the claimed row by key, and whether each shard has run already
  // by the job's (the backfill's) history.
  const Statement shards{"trigger_insert_shards", sending + ", '{http://10.0.0.1:9999/,http://10.0.0.2:9999/}'"};
  expect_primary_key_reads(shards, {"job_log_active"});
  expect_table_reads(shards, "job_log_finished", {"job_log_job_time", "job_log_backfill"});
  expect_primary_key_reads({"trigger_release", sending + ", " + node + ", 'note'"}, runs_and_jobs);
  // A fire of a group with a concurrency limit waits for a slot; an admission takes a batch.
  expect_primary_key_reads({"slot_wait", pending + ", " + node + ", 'waiting for a slot'"}, runs_and_jobs);
  expect_primary_key_reads({"slot_admit", pending_batch + ", " + node}, runs_and_jobs);
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
  // What follows a run's end, in the same transaction: the ended runs' jobs and their child
  // jobs, each read once for the whole batch (a callback batch, a cancelled batch of late
  // fires): two jobs and 1,000.
  expect_primary_key_reads({"follow_up_jobs", jobs}, runs_and_jobs);
  expect_primary_key_reads({"follow_up_children", jobs}, runs_and_jobs);
  expect_primary_key_reads({"follow_up_jobs", jobs_newest(1'000)}, runs_and_jobs);
  expect_primary_key_reads({"follow_up_children", jobs_newest(1'000)}, runs_and_jobs);
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

// The scan's writes: every advanced job's schedule by its primary key, then its fires' jobs by
// job_info's, each batch's values unnested once, for one job and for 1,000 that share their
// next time (here, every job is due at the same instant). Looked up in job_schedule_due by that
// time instead, each job walked all of them; joined to a CTE the planner could not count, the
// fires scanned it once each.
// A batch's claim (pending → sending) and its executor's answer (sending → triggered) change no
// indexed column of job_log_active, and the table's pages keep room for a row's next version:
// every one of them is a HOT update, which writes no index entry (sql/0030_active_runs_hot.sql).
// Were an index keyed on, or restricted to, a column they set (the state, the executor, the
// trigger time), each would write an entry in every index of the table.
TEST_F(FirePathPlansPgTest, AClaimAndTheExecutorsAnswerWriteNoIndexEntry) {
  constexpr int n = 1'000;  // the newest pending runs, inserted side by side as a scan's are
  const std::string node = "'" + kNode + "'";
  const std::string ids = runs_in("pending", n);
  auto updates = [&] {
    pqxx::nontransaction tx(connection_);
    tx.exec("SELECT pg_stat_force_next_flush()");  // this session's counts, once it is idle
    tx.exec("SELECT pg_stat_clear_snapshot()");
    const auto r = tx.exec1("SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = 'job_log_active'");
    return std::pair{r[0].as<std::int64_t>(), r[1].as<std::int64_t>()};
  };
  auto execute = [&](const Statement& s) {
    pqxx::work tx(connection_);
    const auto rows = tx.exec("EXECUTE " + s.name + "(" + s.arguments + ")");
    tx.commit();
    return static_cast<int>(rows.size());
  };
  connection_.prepare_now("trigger_claim");
  connection_.prepare_now("trigger_record_triggered");
  const auto before = updates();
  ASSERT_EQ(execute({"trigger_claim", ids + ", " + node + ", " + repeated("http://10.0.0.2:9999/", n) + ", " +
                                          repeated("otherHandler", n) + ", " + repeated("a parameter", n) + ", " +
                                          repeated("0", n) + ", " + repeated("1", n) + ", " +
                                          repeated("1700000000000", n) + ", 5000"}),
            n);
  ASSERT_EQ(execute({"trigger_record_triggered", ids + ", " + node + ", " +
                                                     repeated("handed over 500 ms ahead of its instant", n) + ", " +
                                                     repeated("200", n)}),
            n);
  const auto after = updates();
  EXPECT_EQ(after.first - before.first, 2 * n);
  EXPECT_EQ(after.second - before.second, 2 * n) << "updates that wrote index entries: "
                                                 << (after.first - before.first) - (after.second - before.second);
}

// A scan's advance of a job's schedule changes its next time, which the due index is not keyed
// on: it is keyed on the next time's 10 s slot (sql/0031_job_schedule_hot.sql). An advance within
// the slot is a HOT update, no index entry; one into the next slot writes its entries.
TEST_F(FirePathPlansPgTest, AnAdvanceWithinItsSlotWritesNoIndexEntry) {
  constexpr int n = 1'000;  // the newest jobs, all next due at 1700000000000
  const std::string ids = jobs_newest(n);
  {
    // The fixture set every schedule with one update and keeps autovacuum off: its dead versions
    // fill the pages until a vacuum, which a live table gets.
    pqxx::nontransaction tx(connection_);
    tx.exec("VACUUM job_schedule");
  }
  auto updates = [&] {
    pqxx::nontransaction tx(connection_);
    tx.exec("SELECT pg_stat_force_next_flush()");
    tx.exec("SELECT pg_stat_clear_snapshot()");
    const auto r = tx.exec1("SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = 'job_schedule'");
    return std::pair{r[0].as<std::int64_t>(), r[1].as<std::int64_t>()};
  };
  auto advance = [&](const std::string& from, const std::string& to) {
    connection_.prepare_now("sched_advance");
    pqxx::work tx(connection_);
    const auto rows = tx.exec("EXECUTE sched_advance(" + ids + ", " + repeated(from, n) + ", " + repeated(from, n) +
                              ", " + repeated(to, n) + ", " + repeated("1", n) + ")");
    tx.commit();
    return static_cast<int>(rows.size());
  };
  const auto before = updates();
  ASSERT_EQ(advance("1700000000000", "1700000001000"), n);  // the same slot
  const auto within = updates();
  EXPECT_EQ(within.first - before.first, n);
  EXPECT_EQ(within.second - before.second, n) << "advances that wrote index entries: "
                                              << n - (within.second - before.second);
  ASSERT_EQ(advance("1700000001000", "1700000010000"), n);  // into the next slot
  const auto across = updates();
  EXPECT_EQ(across.first - within.first, n);
  EXPECT_EQ(across.second - within.second, 0);
}

TEST_F(FirePathPlansPgTest, TheScansWritesFindEachJobByPrimaryKeyWhateverTimeTheyShare) {
  for (int n : {1, 1'000}) {
    const std::string jobs = jobs_newest(n);
    const Statement advance{"sched_advance", jobs + ", " + repeated("1700000000000", n) + ", " +
                                                 repeated("1700000000000", n) + ", " +
                                                 repeated("1700000001000", n) + ", " + repeated("1", n)};
    expect_primary_key_reads(advance, {"job_schedule"});
    expect_values_read_once(advance);
    // What each row copies from its job comes with the fire (the scan read it): job_info is not
    // read again.
    const std::string copies = ", " + repeated(group_id(), n) + ", " + repeated("demoHandler", n) + ", " +
                               repeated("", n) + ", " + repeated("0", n);
    const Statement insert{"sched_insert_fires", jobs + ", " + repeated("1700000000500", n) + ", " +
                                                     repeated("SCHEDULE", n) + ", " + repeated("pending", n) + ", " +
                                                     repeated("", n) + ", '" + kNode + "'" + copies};
    expect_no_reads(insert, "job_info");
    expect_values_read_once(insert);
    // Whether each fire has run already: a probe of the job's history by key, never the history
    // whole; a skipped fire's record, whether a scheduled fire of its time is in flight.
    expect_table_reads(insert, "job_log_finished", {"job_log_job_time"});
    const Statement records{"sched_insert_fires", jobs + ", " + repeated("1700000000500", n) + ", " +
                                                      repeated("MISFIRE", n) + ", " + repeated("cancelled", n) + ", " +
                                                      repeated("skipped", n) + ", '" + kNode + "'" + copies};
    expect_no_reads(records, "job_info");
    expect_table_reads(records, "job_log_finished", {"job_log_job_time"});
    expect_table_reads(records, "job_log_active", {"job_log_active_scheduled_fire"});
  }
}

// The schedule thread's pre-read: the due jobs from job_schedule_due, in due order up to the
// limit, then their schedules from job_info by primary key, never either table whole.
TEST_F(FirePathPlansPgTest, TheScansPreReadWalksTheDueIndexAndReadsEachJobByPrimaryKey) {
  const Statement due{"sched_due", "1800000000000, 1000"};
  for (const char* mode : kPlanModes) {
    const std::string text = plan(due, mode);
    // In index order where statistics say the due jobs are few among many; here (none yet) the
    // planner takes every due entry and sorts them: either way only the index's entries.
    EXPECT_NE(text.find("job_schedule_due"), std::string::npos) << "(" << mode << "):\n" << text;
    EXPECT_EQ(text.find("Seq Scan on job_schedule"), std::string::npos) << "(" << mode << "):\n" << text;
  }
  expect_primary_key_reads({"sched_due_jobs", jobs_newest(1'000)}, {"job_info"});
}

TEST_F(FirePathPlansPgTest, OwnersScansReadTheIndexOfTheNodesRuns) {
  // The feeder's read of a node's due fires, and a takeover of a dead node's fires, each with
  // its job's misfire strategy read by the job's primary key.
  const Statement feeder{"sched_pending", "'" + kNode + "', 1800000000000, 1000"};
  const Statement takeover{"sched_takeover_pending", "'{" + kNode + "}', 'node-2'"};
  for (const Statement& s : {feeder, takeover}) {
    expect_index_reads(s, "job_log_active_node");
    expect_primary_key_reads(s, {"job_info", "job_schedule"});
  }
  expect_index_reads({"sched_takeover_sending_lock", "'{" + kNode + "}'"}, "job_log_active_node");
}

// A job's held runs (a stop, a change or a delete takes them back) are among its last few
// seconds' runs: the read goes through the job's runs by time from a second before now, never
// through its whole history (a job that fires every second has millions of runs in a month).
TEST_F(FirePathPlansPgTest, AJobsHeldRunsAreReadFromItsRecentRunsOnly) {
  const Statement held{"completion_held", std::to_string(job_id()) + ", 1700000010000, 10000"};
  expect_index_reads(held, "job_log_active_job");
  for (const char* mode : kPlanModes) {
    const std::string text = plan(held, mode);
    EXPECT_NE(text.find("Index Cond: ((job_id = "), std::string::npos) << mode << ":\n" << text;
    EXPECT_NE(text.find("AND (scheduled_time > "), std::string::npos)
        << mode << ": the job's runs are not bounded by time:\n" << text;
  }
}

TEST_F(FirePathPlansPgTest, SlotAdmissionsReadOnlyTheWaitingAndHoldingIndexes) {
  // Concurrency limits (sql/0023_concurrency_limits.sql): an admission for a group, and the count
  // of fires waiting, read the few rows waiting or holding a slot, never the run table.
  std::string group;
  {
    pqxx::nontransaction tx(connection_);
    group = tx.exec1("SELECT min(id) FROM job_group")[0].as<std::string>();
  }
  expect_index_reads({"slot_candidates", group + ", 1000"}, "job_log_active_waiting_slot");
  expect_index_reads({"slot_waiting_groups", ""}, "job_log_active_waiting_slot");
  expect_index_reads({"slot_holding", group}, "job_log_active_holding_slot");
}

// A node plans its statements when it starts, and a plan without parameters is kept until the
// table's statistics change: at a first start, before any fire, the run table is empty. The count
// of runs waiting for a slot, which the admissions read every second, must still read only its
// index: planned on the empty table, it read the whole table, which under load holds a minute of
// deleted runs until autovacuum comes (most of a second a read at 8,000 fires a second).
// PgTriggerStore::waiting_by_group plans it with reads of tables whole off, as here.
TEST_F(FirePathPlansPgTest, TheCountOfRunsWaitingForASlotReadsOnlyItsIndexPlannedOnAnEmptyTable) {
  connection_.prepare_now("slot_waiting_groups");
  pqxx::work tx(connection_);
  tx.exec("TRUNCATE job_log_active");
  tx.exec("SET LOCAL enable_seqscan = off");
  std::string text;
  for (const auto& row : tx.exec("EXPLAIN EXECUTE slot_waiting_groups")) text += row[0].as<std::string>() + "\n";
  tx.abort();
  EXPECT_NE(text.find("job_log_active_waiting_slot"), std::string::npos) << text;
  EXPECT_EQ(text.find("Seq Scan"), std::string::npos) << text;
}

// The workflow steps of a batch of results (pg::record_workflow_node_ends) on workflow tables
// as unanalysed as the run table: many workflow runs of a four-node chain a → b → c → d, the
// newest of them running (a succeeded, b started with its run triggered, c and d waiting), the
// others succeeded, every node that ran with its run row.
class WorkflowStepPlansPgTest : public FirePathPlansPgTest {
 protected:
  static constexpr int kWorkflows = 100;
  static constexpr int kWorkflowRuns = 20'000;
  static constexpr int kRunningWorkflowRuns = 2'000;

  WorkflowStepPlansPgTest() { fill_workflows(); }

  void fill_workflows() {
    pqxx::work tx(connection_);
    for (const char* table : {"workflow", "workflow_run", "workflow_run_node"}) {
      tx.exec(std::string("ALTER TABLE ") + table + " SET (autovacuum_enabled = false)");
    }
    // Node k of workflow w runs job (first job + (4w + k) mod jobs).
    const std::string job = "(SELECT min(id) FROM job_info) + (4 * w + k) % " + std::to_string(kJobs);
    const std::string graph =
        "(SELECT jsonb_build_object('nodes', jsonb_agg(jsonb_build_object('key', key, 'jobId', " + job +
        ") ORDER BY k), 'edges', '[{\"from\":\"a\",\"to\":\"b\"},{\"from\":\"b\",\"to\":\"c\"},"
        "{\"from\":\"c\",\"to\":\"d\"}]'::jsonb, 'onFailureRunning', 'FINISH')"
        " FROM unnest('{a,b,c,d}'::text[]) WITH ORDINALITY AS g(key, k))";
    tx.exec("INSERT INTO workflow (id, job_group, name, schedule_type, schedule_conf, graph, trigger_status)"
            " SELECT w, (SELECT id FROM job_group), 'workflow ' || w, 'CRON', '0 * * * * ?', " + graph + ", 1"
            " FROM generate_series(1, " + std::to_string(kWorkflows) + ") w");
    const std::string first_running = std::to_string(kWorkflowRuns - kRunningWorkflowRuns);
    tx.exec("INSERT INTO workflow_run (id, workflow_id, job_group, state, trigger_type, scheduled_time, started_at,"
            " ended_at, graph)"
            " SELECT n, w.id, w.job_group, CASE WHEN n > " + first_running + " THEN 'running' ELSE 'succeeded' END,"
            " 'SCHEDULE', 1700000000000 + n * 60000, 1700000000000 + n * 60000,"
            " CASE WHEN n > " + first_running + " THEN NULL ELSE 1700000000000 + n * 60000 + 30000 END, w.graph"
            " FROM generate_series(1, " + std::to_string(kWorkflowRuns) + ") n"
            " JOIN workflow w ON w.id = 1 + n % " + std::to_string(kWorkflows));
    tx.exec("SELECT setval('workflow_run_id_seq', " + std::to_string(kWorkflowRuns) + ")");
    // Every run's four nodes (g) with their jobs (j).
    const std::string nodes =
        " FROM workflow_run r CROSS JOIN unnest('{a,b,c,d}'::text[]) WITH ORDINALITY AS g(key, k)"
        " JOIN LATERAL (SELECT (elem ->> 'jobId')::bigint AS job_id FROM jsonb_array_elements(r.graph -> 'nodes') elem"
        "   WHERE elem ->> 'key' = g.key) j ON true";
    // The run rows of the nodes that ran: every node of a finished run, a and b of a running one.
    tx.exec(insert_runs(
        "job_group, job_id, state, trigger_type, scheduled_time, admin_node, executor_address, executor_handler,"
        " trigger_time, trigger_code, handle_time, handle_code, workflow_run_id, workflow_node",
        "SELECT r.job_group, j.job_id,"
        " CASE WHEN r.state = 'running' AND g.key = 'b' THEN 'triggered' ELSE 'succeeded' END AS state,"
        " 'WORKFLOW' AS trigger_type, r.scheduled_time + g.k * 1000 AS scheduled_time, 'node-1' AS admin_node,"
        " 'http://10.0.0.1:9999/' AS executor_address, 'demoHandler' AS executor_handler, now() AS trigger_time,"
        " 200 AS trigger_code, CASE WHEN r.state = 'running' AND g.key = 'b' THEN NULL ELSE now() END AS handle_time,"
        " CASE WHEN r.state = 'running' AND g.key = 'b' THEN 0 ELSE 200 END AS handle_code,"
        " r.id AS workflow_run_id, g.key AS workflow_node" + nodes +
        " WHERE r.state <> 'running' OR g.key IN ('a', 'b') ORDER BY r.id, g.k"));
    tx.exec("INSERT INTO workflow_run_node (run_id, node_key, job_id, state, log_id, attempts, started_at, ended_at, output)"
            " SELECT r.id, g.key, j.job_id, CASE WHEN l.id IS NULL THEN 'waiting' WHEN l.state = 'triggered' THEN 'started'"
            " ELSE 'succeeded' END, l.id, CASE WHEN l.id IS NULL THEN 0 ELSE 1 END, l.scheduled_time,"
            " CASE WHEN l.state = 'succeeded' THEN l.scheduled_time + 500 END,"
            " CASE WHEN l.state = 'succeeded' THEN '\"done\"' END" + nodes +
            " LEFT JOIN job_log l ON l.workflow_run_id = r.id AND l.workflow_node = g.key");
    tx.commit();
  }

  // One text value the query answers, as an SQL literal.
  std::string literal(const std::string& query) {
    pqxx::nontransaction tx(connection_);
    return tx.quote(tx.exec1(query)[0].as<std::string>());
  }
  // A column of the started b nodes of the newest `n` running runs, as an array literal in run order.
  std::string started(const std::string& column, int n) {
    return literal("SELECT array_agg(" + column + " ORDER BY run_id)::text FROM (SELECT * FROM workflow_run_node"
                   " WHERE node_key = 'b' AND state = 'started' ORDER BY run_id DESC LIMIT " + std::to_string(n) + ") b");
  }
  // The same of their waiting c nodes.
  std::string waiting(const std::string& column, int n) {
    return literal("SELECT array_agg(" + column + " ORDER BY run_id)::text FROM (SELECT * FROM workflow_run_node"
                   " WHERE node_key = 'c' AND state = 'waiting' ORDER BY run_id DESC LIMIT " + std::to_string(n) + ") c");
  }
};

TEST_F(WorkflowStepPlansPgTest, TheWorkflowTablesHaveManyRowsAndNoStatistics) {
  pqxx::nontransaction tx(connection_);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM workflow_run")[0].as<int>(), kWorkflowRuns);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM workflow_run_node")[0].as<int>(), 4 * kWorkflowRuns);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM workflow_run_node WHERE state = 'started'")[0].as<int>(), kRunningWorkflowRuns);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM job_log WHERE trigger_type = 'WORKFLOW'")[0].as<int>(),
            4 * (kWorkflowRuns - kRunningWorkflowRuns) + 2 * kRunningWorkflowRuns);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM pg_stats WHERE schemaname = 'public'"
                     " AND tablename IN ('workflow', 'workflow_run', 'workflow_run_node', 'job_log_active',"
                     " 'job_log_finished')")[0]
                .as<int>(),
            0);
  for (const char* table : {"workflow_run", "workflow_run_node"}) {
    EXPECT_LT(tx.exec1(std::string("SELECT reltuples FROM pg_class WHERE oid = '") + table + "'::regclass")[0].as<double>(), 0)
        << table << " has been vacuumed or analysed";
  }
}

TEST_F(WorkflowStepPlansPgTest, BatchStepsFindRunsNodesAndJobsByPrimaryKey) {
  const std::string node = "'" + kNode + "'";
  const std::vector<std::string> tables = {"workflow", "workflow_run", "workflow_run_node", "job_log_active",
                                           "job_log_finished", "job_info"};
  // A batch of one node end and one of 1,000, each of another running run: the b nodes end, the
  // c nodes start (or end without running), the runs end.
  for (int n : {1, 1'000}) {
    const std::string runs = started("run_id", n), logs = started("log_id", n), jobs = waiting("job_id", n);
    const std::string times = repeated("1700000000000", n);
    const Statement lock{"wfr_lock_rows", runs};
    const Statement end{"wfn_end_all", runs + ", " + repeated("b", n) + ", " + logs + ", " + repeated("succeeded", n) +
                                           ", " + repeated("", n) + ", " + times + ", " + repeated("\\\"out\\\"", n)};
    const Statement nodes{"wfr_nodes_all", runs};
    const Statement node_jobs{"wfn_jobs", jobs};
    const Statement finish{"wfn_finish_all", runs + ", " + repeated("c", n) + ", " + repeated("cancelled", n) + ", " +
                                                 repeated("not run", n) + ", " + times};
    const Statement start{"wfn_start_all", runs + ", " + repeated("c", n) + ", " + repeated("", n) + ", " + times + ", " +
                                               node + ", " + literal("SELECT array_fill((SELECT id FROM job_group), ARRAY[" +
                                                                     std::to_string(n) + "])::text") +
                                               ", " + jobs + ", " + repeated("demoHandler", n) + ", " + repeated("0", n) +
                                               ", " + logs + ", " + times};
    const Statement run_end{"wfr_end_all", runs + ", " + repeated("succeeded", n) + ", " + times + ", " + repeated("", n)};
    for (const Statement& s : {lock, end, nodes, node_jobs, finish, start, run_end}) expect_primary_key_reads(s, tables);
    for (const Statement& s : {end, finish, start, run_end}) expect_values_read_once(s);
  }
}

TEST_F(WorkflowStepPlansPgTest, OneRunsStepAndANodesKillOrRetryFindTheirRowsByPrimaryKey) {
  const std::vector<std::string> tables = {"workflow", "workflow_run", "workflow_run_node", "job_log_active",
                                           "job_log_finished", "job_info"};
  const std::string run = literal("SELECT max(run_id)::text FROM workflow_run_node WHERE state = 'started'");
  const std::string log = literal("SELECT log_id::text FROM workflow_run_node WHERE run_id = " + run + " AND node_key = 'b'");
  const std::string pending = std::to_string(run_in("pending"));
  // A run that takes its step the one-run way (a node's job is gone), a node killed, a node's
  // run retried or, its workflow run ended, not.
  expect_primary_key_reads({"wfr_lock", run}, tables);
  expect_primary_key_reads({"wfr_get", run}, tables);
  expect_primary_key_reads({"wfr_nodes", run}, tables);
  expect_primary_key_reads({"wfn_finish", run + ", 'c', 'failed', 'job 1 no longer exists', 1700000000000"}, tables);
  expect_primary_key_reads({"wfn_kill", run + ", 'b'"}, tables);
  expect_primary_key_reads({"wfn_fire_cancel", pending + ", 'workflow run ended'"}, tables);
  expect_primary_key_reads({"wfn_end", run + ", 'b', " + log + ", 'cancelled', 'not run', 1700000000000, NULL"}, tables);
  expect_primary_key_reads({"wfn_retry", run + ", 'b', " + log + ", " + pending}, tables);
  expect_primary_key_reads({"wfn_retry_cancel", pending + ", 'not retried'"}, tables);
}

}  // namespace
}  // namespace cronwheel::testing
