#pragma once

// What the end-to-end load benchmarks (fire_load, workflow_load) share: a real cronwheel-admin as
// a child process, CPU and memory of processes from /proc, and what the database did, from
// pg_stat_statements and pg_stat_wal. Linux only; loopback only.

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "tests/support/process.h"

namespace cronwheel::bench {

// ---------------------------------------------------------------------------------------------
// Processes: CPU and memory from /proc.

long clock_ticks();

struct ProcStat {
  int ppid = 0;
  std::uint64_t cpu_ticks = 0;  // utime + stime
};

std::optional<ProcStat> read_stat(int pid);
// VmRSS in kB; 0 when unreadable.
std::uint64_t rss_kb(int pid);
// CPU ticks of `pid` and all its direct children (PostgreSQL: the postmaster and its backends).
std::uint64_t tree_cpu_ticks(int pid);
// This process's user + system CPU seconds so far.
double own_cpu_seconds();

// ---------------------------------------------------------------------------------------------
// The database.

// What the database did, cumulative, at one instant.
struct DbCounters {
  double statements = 0;  // pg_stat_statements calls in the bench database (BEGIN/COMMIT included)
  double exec_ms = 0;     // their total execution time
  double commits = 0;     // of them, COMMIT and ROLLBACK: transactions opened with BEGIN
  double wal_bytes = 0;   // pg_current_wal_lsn(), whole cluster
  double wal_syncs = 0;   // pg_stat_wal.wal_sync, whole cluster; backends report it up to 10 s late
  std::string wal_lsn;    // pg_current_wal_lsn(), for DbStats::wal_records
  // Checkpoints started, whole cluster (pg_stat_bgwriter): all, and those the WAL's volume asked
  // for (max_wal_size) rather than checkpoint_timeout.
  double checkpoints = 0, checkpoints_requested = 0;
  // Rows written per table of the bench database (pg_stat_user_tables; backends report them up
  // to a second late): inserted, updated, of those HOT (no index entry), deleted.
  struct TableWrites {
    double inserted = 0, updated = 0, hot = 0, deleted = 0;
  };
  std::map<std::string, TableWrites> tables;
  // Per statement (pg_stat_statements queryid; for a statement run inside a function or trigger,
  // which pg_stat_statements.track = all counts apart, its bitwise complement): calls, execution
  // ms and the text. The totals above count only statements the clients sent: a nested one's
  // time is part of theirs.
  struct Statement {
    double calls = 0;
    double exec_ms = 0;
    double rows = 0;
    std::string query;
    bool nested = false;
  };
  std::map<std::int64_t, Statement> by_statement;
};

// Reads DbCounters for one database of a server, on a connection of its own to the server URL
// (a superuser's: it creates the pg_stat_statements extension there when it can). Without the
// extension loaded (shared_preload_libraries) statements are not counted and note() says why.
// One thread at a time.
class DbStats {
 public:
  DbStats(const std::string& server_url, std::string database);

  bool has_statements() const { return statements_; }
  const std::string& note() const { return note_; }

  DbCounters read();

  // The WAL records written between two of read()'s wal_lsn, whole cluster, by type
  // ("Heap/HOT_UPDATE", "Btree/INSERT_LEAF": an index entry, ...), with the bytes of full-page
  // images they carried. Empty, with note() saying why, when pg_walinspect is not there or the WAL
  // between them was recycled (keep it with -c wal_keep_size).
  struct WalRecords {
    double count = 0, full_page_image_bytes = 0;
  };
  std::map<std::string, WalRecords> wal_records(const std::string& from_lsn, const std::string& to_lsn);

 private:
  pqxx::connection conn_;
  std::string server_url_;
  std::string database_;
  std::unique_ptr<pqxx::connection> bench_conn_;  // the bench database's own statistics
  bool statements_ = false;
  std::string note_;
};

// A database of one benchmark run on a PostgreSQL server: created empty, named
// `<prefix>_<pid>_<time>`, on a server URL of a superuser; dropped, its sessions ended, by the
// destructor unless kept. One thread.
class BenchDatabase {
 public:
  BenchDatabase(std::string server_url, const std::string& prefix, bool keep);
  ~BenchDatabase();

  BenchDatabase(const BenchDatabase&) = delete;
  BenchDatabase& operator=(const BenchDatabase&) = delete;

  const std::string& server_url() const { return server_url_; }
  const std::string& name() const { return name_; }
  const std::string& url() const { return url_; }  // the server URL naming this database

 private:
  std::string server_url_;
  std::string name_;
  std::string url_;
  bool keep_;
};

// ---------------------------------------------------------------------------------------------
// A cronwheel-admin as a child process: listening on 127.0.0.1 on a port of the OS's choice,
// the given database, node id and executors' access token, the console's admin password from
// the environment, plus `extra_args` (each split at spaces). Its output is kept in files that go
// with it. The destructor SIGKILLs it if it still runs.
class AdminProcess {
 public:
  struct Options {
    std::string bin;
    std::string db_url;
    std::string node_id;
    std::string password;      // CRONWHEEL_ADMIN_PASSWORD
    std::string access_token;  // --access-token
    std::vector<std::string> extra_args;
  };

  explicit AdminProcess(const Options& options);

  // The port once its log says it listens; 0 when it exited or did not within `timeout`.
  int wait_until_listening(std::chrono::seconds timeout);

  // SIGTERM, at most `timeout`, then SIGKILL. Answers the exit code (128 + signal if killed).
  int stop(std::chrono::seconds timeout);

  // SIGKILL, as a crash: the admin stays down. Answers the CPU ticks it had used by then.
  std::uint64_t kill();
  bool killed() const { return killed_; }

  // The last 3,000 characters of its output, and all of it.
  std::string tail() const;
  std::string output() const { return process_.out() + process_.err(); }

  int pid() const { return process_.pid(); }
  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/"; }
  const std::string& node_id() const { return node_id_; }
  bool running() { return process_.running(); }

 private:
  static std::vector<std::string> argv(const Options& o);

  std::string node_id_;
  testing::Process process_;
  int port_ = 0;
  bool killed_ = false;
};

// ---------------------------------------------------------------------------------------------
// Figures.

// The p-quantile (0..1) of sorted values, nearest rank; 0 when empty.
double percentile(const std::vector<double>& sorted, double p);

// `v` with `digits` decimals.
std::string fixed(double v, int digits);

}  // namespace cronwheel::bench
