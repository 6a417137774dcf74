#pragma once

// `cronwheel import xxl-job`: an XXL-JOB 2.4 installation's groups, jobs (with their scripts'
// earlier versions) and users as one cronwheel jobs file (docs/jobs-as-code.md), plus what
// could not be carried as it is (docs/migrating-from-xxl-job.md).
//
// Contract of import_xxl_job:
//  - It only reads: one read-only transaction on the XXL-JOB database (xxl_job_reader.h), and
//    nothing is written anywhere. Applying or writing the document is the caller's.
//  - `document` is the JSON form of a jobs file, ready for jobs_file::to_yaml or
//    POST /api/v1/apply: {"apiVersion": "cronwheel/v1", "groups": [...], "users": [...]}
//    ("users" only when there are some), mapped by map_xxl_job (xxl_job_mapping.h, where the
//    rules are listed). Every job is `running: false` unless keep_running is set, and even
//    then jobs with a kReview finding are.
//  - `findings` lists, one line each (to_string), everything not imported, imported
//    differently (those jobs are stopped) and what to do next (users have no password yet,
//    executors' tokens). The caller shows them all; it is no error to have some.
//  - Errors throw XxlJobImportError with one line naming what was wrong: the URL ("mysql URL:
//    the port must be 1-65535, got '0'"), the zone ("--zone: unknown time zone 'Mars/Base'"),
//    the connection ("access denied at mysql://xxl@db:3306/xxl_job ..."), the database ("not an
//    XXL-JOB 2.4 database: table xxl_job_info missing"), or a limit. The password never
//    appears in a message.
//  - Bounded: see ReadOptions for the timeouts and the limits on rows and bytes.

#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/xxl_job/xxl_job_mapping.h"
#include "cli/xxl_job/xxl_job_reader.h"

namespace cronwheel::cli::xxl_job {

struct ImportOptions {
  std::string mysql_url;      // mysql://USER[:PASS]@HOST[:PORT]/DB (mysql_url.h)
  std::string zone;           // the XXL-JOB admin JVM's IANA zone: its cron expressions' zone
  bool keep_running = false;  // --keep-running
  ReadOptions read;           // timeouts and limits
};

struct ImportResult {
  nlohmann::json document;
  std::vector<Finding> findings;
};

class XxlJobImportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

ImportResult import_xxl_job(const ImportOptions& options);

}  // namespace cronwheel::cli::xxl_job
