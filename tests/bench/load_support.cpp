#include "tests/bench/load_support.h"

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "tests/support/test_database.h"

namespace cronwheel::bench {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

long clock_ticks() {
  static const long ticks = ::sysconf(_SC_CLK_TCK);
  return ticks;
}

std::optional<ProcStat> read_stat(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(in, text)) return std::nullopt;
  const auto close = text.rfind(')');  // the command name may hold spaces and parentheses
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(text.substr(close + 2));
  std::vector<std::string> f;
  for (std::string s; rest >> s && f.size() < 14;) f.push_back(s);  // field 3 onwards
  if (f.size() < 14) return std::nullopt;
  ProcStat st;
  st.ppid = std::stoi(f[1]);
  st.cpu_ticks = std::stoull(f[11]) + std::stoull(f[12]);
  return st;
}

std::uint64_t rss_kb(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6));
  }
  return 0;
}

std::uint64_t tree_cpu_ticks(int pid) {
  if (pid <= 0) return 0;
  std::uint64_t total = 0;
  std::error_code ignored;
  for (const auto& entry : fs::directory_iterator("/proc", ignored)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const int p = std::stoi(name);
    auto st = read_stat(p);
    if (st && (p == pid || st->ppid == pid)) total += st->cpu_ticks;
  }
  return total;
}

double own_cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  return s(u.ru_utime) + s(u.ru_stime);
}

DbStats::DbStats(const std::string& server_url, std::string database)
    : conn_(server_url), server_url_(server_url), database_(std::move(database)) {
  try {
    pqxx::nontransaction tx(conn_);
    tx.exec("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
    tx.exec("SELECT 1 FROM pg_stat_statements LIMIT 1");
    statements_ = true;
  } catch (const std::exception& e) {
    std::string why = e.what();
    while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
    note_ = "pg_stat_statements unavailable (" + why.substr(0, why.find('\n')) +
            "): statements not counted; start PostgreSQL with -c shared_preload_libraries=pg_stat_statements";
  }
}

DbCounters DbStats::read() {
  DbCounters c;
  pqxx::nontransaction tx(conn_);
  if (statements_) {
    for (const auto& r : tx.exec_params(
             "SELECT queryid, calls::float8, total_exec_time::float8, left(regexp_replace(query, '\\s+', ' ', 'g'), 160),"
             " rows::float8, NOT toplevel"
             " FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = $1)",
             database_)) {
      DbCounters::Statement st{r[1].as<double>(), r[2].as<double>(), r[4].as<double>(), r[3].as<std::string>(""),
                               r[5].as<bool>()};
      if (!st.nested) {
        c.statements += st.calls;
        c.exec_ms += st.exec_ms;
        std::string head = st.query.substr(0, 8);
        std::transform(head.begin(), head.end(), head.begin(), [](unsigned char ch) { return std::tolower(ch); });
        if (head.rfind("commit", 0) == 0 || head.rfind("rollback", 0) == 0) c.commits += st.calls;
      }
      const auto id = r[0].as<std::int64_t>(0);
      auto& slot = c.by_statement[st.nested ? ~id : id];
      slot.nested = st.nested;
      slot.calls += st.calls;
      slot.exec_ms += st.exec_ms;
      slot.rows += st.rows;
      slot.query = st.query;
    }
  }
  auto w = tx.exec1(
      "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::float8, wal_sync::float8, pg_current_wal_lsn()::text"
      " FROM pg_stat_wal");
  c.wal_bytes = w[0].as<double>();
  c.wal_syncs = w[1].as<double>();
  c.wal_lsn = w[2].as<std::string>();
  auto b = tx.exec1("SELECT (checkpoints_timed + checkpoints_req)::float8, checkpoints_req::float8 FROM pg_stat_bgwriter");
  c.checkpoints = b[0].as<double>();
  c.checkpoints_requested = b[1].as<double>();
  // The bench database's connection is ended by fire_load's database outage: connected again.
  for (int attempt = 0;; ++attempt) {
    try {
      if (!bench_conn_) bench_conn_ = std::make_unique<pqxx::connection>(testing::TestDatabase::with_database(server_url_, database_));
      pqxx::nontransaction bench(*bench_conn_);
      for (const auto& r : bench.exec("SELECT relname, n_tup_ins::float8, n_tup_upd::float8, n_tup_hot_upd::float8,"
                                      " n_tup_del::float8 FROM pg_stat_user_tables")) {
        c.tables[r[0].as<std::string>()] = {r[1].as<double>(), r[2].as<double>(), r[3].as<double>(), r[4].as<double>()};
      }
      return c;
    } catch (const pqxx::broken_connection&) {
      bench_conn_.reset();
      if (attempt > 0) throw;
    }
  }
}

std::map<std::string, DbStats::WalRecords> DbStats::wal_records(const std::string& from_lsn,
                                                                 const std::string& to_lsn) {
  std::map<std::string, WalRecords> out;
  try {
    pqxx::nontransaction tx(conn_);
    tx.exec("CREATE EXTENSION IF NOT EXISTS pg_walinspect");
    for (const auto& r : tx.exec_params("SELECT \"resource_manager/record_type\", count::float8, fpi_size::float8"
                                        " FROM pg_get_wal_stats($1::pg_lsn, $2::pg_lsn, true) WHERE count > 0",
                                        from_lsn, to_lsn)) {
      out[r[0].as<std::string>()] = {r[1].as<double>(), r[2].as<double>()};
    }
  } catch (const std::exception& e) {
    std::string why = e.what();
    note_ = "WAL records not counted (" + why.substr(0, why.find('\n')) + ")";
    out.clear();
  }
  return out;
}

BenchDatabase::BenchDatabase(std::string server_url, const std::string& prefix, bool keep)
    : server_url_(std::move(server_url)), keep_(keep) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
  name_ = prefix + "_" + std::to_string(::getpid()) + "_" + std::to_string(ms % 1000000);
  pqxx::connection c(server_url_);
  pqxx::nontransaction tx(c);
  tx.exec("CREATE DATABASE " + tx.quote_name(name_));
  url_ = testing::TestDatabase::with_database(server_url_, name_);
}

BenchDatabase::~BenchDatabase() {
  if (keep_) return;
  try {
    pqxx::connection c(server_url_);
    pqxx::nontransaction tx(c);
    tx.exec("DROP DATABASE IF EXISTS " + tx.quote_name(name_) + " WITH (FORCE)");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cannot drop the benchmark's database %s: %s\n", name_.c_str(), e.what());
  }
}

AdminProcess::AdminProcess(const Options& options)
    : node_id_(options.node_id), process_(argv(options), {"CRONWHEEL_ADMIN_PASSWORD=" + options.password}) {}

std::vector<std::string> AdminProcess::argv(const Options& o) {
  std::vector<std::string> a{o.bin,         "--listen", "127.0.0.1:0",  "--db-url",      o.db_url, "--db-wait", "10",
                             "--node-id", o.node_id, "--access-token", o.access_token};
  for (const auto& extra : o.extra_args) {
    std::istringstream words(extra);
    for (std::string w; words >> w;) a.push_back(w);
  }
  return a;
}

int AdminProcess::wait_until_listening(std::chrono::seconds timeout) {
  static const std::regex listening(R"(listening on http://127\.0\.0\.1:(\d+)/)");
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    std::smatch m;
    const std::string out = process_.out();
    if (std::regex_search(out, m, listening)) return port_ = std::stoi(m[1]);
    if (!process_.running()) return 0;
    std::this_thread::sleep_for(20ms);
  }
  return 0;
}

int AdminProcess::stop(std::chrono::seconds timeout) {
  process_.signal(SIGTERM);
  int code = process_.wait_for_exit(timeout);
  if (code == -1) {
    process_.signal(SIGKILL);
    code = process_.wait_for_exit(10s);
  }
  return code;
}

std::uint64_t AdminProcess::kill() {
  auto st = read_stat(process_.pid());
  process_.signal(SIGKILL);
  process_.wait_for_exit(10s);
  killed_ = true;
  return st ? st->cpu_ticks : 0;
}

std::string AdminProcess::tail() const {
  std::string text = process_.out() + process_.err();
  return text.size() <= 3000 ? text : "..." + text.substr(text.size() - 3000);
}

double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const auto i = static_cast<std::size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  return sorted[std::min(sorted.size() - 1, i == 0 ? 0 : i - 1)];
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

}  // namespace cronwheel::bench
