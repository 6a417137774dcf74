#pragma once

// The rows of an XXL-JOB 2.4 admin database that `cronwheel import xxl-job` reads: plain
// copies of the columns of xxl_job_group, xxl_job_info, xxl_job_logglue and xxl_job_user
// (tests/fixtures/xxl_job/tables.sql describes them). A NULL text column reads as "".
// DATETIME columns are kept as MySQL writes them, "YYYY-MM-DD HH:MM:SS" (or ""), the local
// wall time of the XXL-JOB admin's JVM.
//
// Every string is valid UTF-8 (the reader refuses a database that gives anything else).
// Nothing else is promised: values come from another system and are checked where they are
// mapped.

#include <cstdint>
#include <string>
#include <vector>

namespace cronwheel::cli::xxl_job {

struct GroupRow {
  std::int64_t id = 0;
  std::string app_name;
  std::string title;
  std::int64_t address_type = 0;  // 0: executors register; 1: address_list typed in
  std::string address_list;       // comma-separated URLs
};

struct JobRow {
  std::int64_t id = 0;
  std::int64_t job_group = 0;  // GroupRow::id
  std::string job_desc;
  std::string author;
  std::string alarm_email;
  std::string schedule_type;
  std::string schedule_conf;
  std::string misfire_strategy;
  std::string executor_route_strategy;
  std::string executor_handler;
  std::string executor_param;
  std::string executor_block_strategy;
  std::int64_t executor_timeout = 0;
  std::int64_t executor_fail_retry_count = 0;
  std::string glue_type;
  std::string glue_source;
  std::string glue_remark;
  std::string glue_updatetime;
  std::string child_jobid;  // comma-separated JobRow ids
  std::int64_t trigger_status = 0;  // 1: running
};

// One saved version of a script job (XXL-JOB keeps the latest 30, the current one among them).
struct GlueVersionRow {
  std::int64_t id = 0;
  std::int64_t job_id = 0;  // JobRow::id
  std::string glue_type;
  std::string glue_source;
  std::string glue_remark;
  std::string add_time;
};

// xxl_job_user without its password (an unsalted MD5 digest, never read).
struct UserRow {
  std::int64_t id = 0;
  std::string username;
  std::int64_t role = 0;   // 1: administrator, 0: normal user
  std::string permission;  // comma-separated GroupRow ids
};

struct XxlJobTables {
  std::vector<GroupRow> groups;
  std::vector<JobRow> jobs;
  std::vector<GlueVersionRow> glue_versions;
  std::vector<UserRow> users;
};

}  // namespace cronwheel::cli::xxl_job
