#pragma once

// Reads an XXL-JOB 2.4 admin database's groups, jobs, script versions and users through
// libmariadb (MySQL 5.7/8 and MariaDB alike), in one read-only transaction with a consistent
// snapshot, so the four tables agree with each other even while XXL-JOB runs.
//
// The database is another system's and may be hostile or simply huge: connecting and every
// read have timeouts, each table's rows are counted against ReadLimits as they arrive (more
// is refused, not truncated), every value is capped in bytes and must be UTF-8 (the session is
// utf8mb4), and LOAD DATA LOCAL is disabled, so the server cannot ask for local files. Users'
// passwords are never read. The connection is TCP only, never encrypted by this reader: reach
// a remote database through a tunnel.

#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include "cli/xxl_job/mysql_url.h"
#include "cli/xxl_job/xxl_job_rows.h"

namespace cronwheel::cli::xxl_job {

struct ReadOptions {
  unsigned connect_timeout_seconds = 10;
  unsigned read_timeout_seconds = 60;  // each network read or write, not the whole import
  std::size_t max_groups = 10'000;
  std::size_t max_jobs = 100'000;
  std::size_t max_glue_versions = 3'000'000;  // XXL-JOB keeps at most 30 per job
  std::size_t max_users = 100'000;
  std::size_t max_total_bytes = 256 * 1024 * 1024;  // of all the text read
};

// One line saying what failed, naming the server (never the password) and the table:
// "cannot connect to mysql://xxl@db:3306/xxl_job: Can't connect to server on 'db' (111)",
// "not an XXL-JOB 2.4 database: table xxl_job_info missing".
class XxlJobReadError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws XxlJobReadError.
XxlJobTables read_xxl_job_tables(const MysqlUrl& url, const ReadOptions& options = {});

}  // namespace cronwheel::cli::xxl_job
