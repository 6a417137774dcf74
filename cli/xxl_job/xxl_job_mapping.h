#pragma once

// XXL-JOB 2.4's rows as a cronwheel jobs file (docs/jobs-as-code.md): one pure function, every
// rule listed here and in docs/migrating-from-xxl-job.md, tested with tables of cases.
//
// Groups (in id order): appName, title, addressType automatic (address_type 0) or manual (1,
// with addressList: address_list split at commas, blanks dropped). An automatic group's
// address_list is XXL-JOB's registry state and is not carried. Groups whose app names
// cronwheel does not take ([A-Za-z0-9][A-Za-z0-9._-]{3,63}) are not imported, nor their jobs.
// Two groups with one app name become one (the executors of both register under it).
//
// Jobs keep every field: jobDesc, author, alarmEmail, scheduleType/scheduleConf (NONE, CRON,
// FIX_RATE, FIX_DELAY; a CRON job gets `timezone: <zone>`, since XXL-JOB reads cron in its
// admin JVM's zone), misfireStrategy, executorRouteStrategy, executorHandler, executorParam,
// executorBlockStrategy (NULL or empty: SERIAL_EXECUTION, as XXL-JOB's executor reads it),
// executorTimeout, executorFailRetryCount, glueType, glueSource, glueRemark, glueHistory,
// childJobs, running. Empty strings and empty lists are left out (the format's defaults).
//  - name: a slug of job_desc (ASCII letters lower-cased and digits; every other run of
//    characters one '-'; no '-' at either end) followed by "-<id>", cut so that the whole is at
//    most 100 characters; "job-<id>" when the slug is empty. Stable (the same row gives the
//    same name) and unique (the id is unique, and is the text after the last '-').
//  - glueHistory: the job's xxl_job_logglue rows of its current glue type, oldest first
//    (add_time, then id), with createdAt as epoch ms (add_time read in `zone`); the newest row
//    is left out when it is the current version (same source and remark). Rows of another
//    glue type are left out, each with a finding.
//  - childJobs: child_jobid's ids as `name` (same group) or `appName/name`; an id that is no
//    job, a job not imported, or an edge that closes a cycle (cronwheel refuses cycles of
//    child jobs; edges are kept in id order and the first edge that closes one is dropped)
//    is left out with a finding.
//  - running: trigger_status 1, only with keep_running, and never for a job with a kReview
//    finding; otherwise false.
// What cannot be carried as it is gives a finding; a job is then imported with the format's
// default for that field and stopped (kReview), or not imported (kNotImported) when nothing
// close enough exists:
//  - an unknown schedule type, misfire, route or block strategy, or glue type (kReview, default);
//  - a cron expression cronwheel refuses, or a FIX_RATE/FIX_DELAY that is not 1 to 10 years
//    of seconds (kReview, scheduleType NONE);
//  - GLUE_GROOVY (kReview: it runs on Java executors only; cronwheel's executor refuses it);
//  - a negative timeout or retry count, more than 100 retries, an empty description (kReview,
//    brought into range);
//  - a script longer than 1 MiB, an executor parameter longer than 64 KiB (kNotImported).
// Users: username, role admin (1) or normal (0; anything else: normal, with a finding), groups
// as app names from `permission` for normal users (ids that are no group, or a group not
// imported, give findings). Users whose names cronwheel does not take are not imported.
// Passwords are never carried (kNote).

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/xxl_job/xxl_job_rows.h"

namespace cronwheel::cli::xxl_job {

struct Finding {
  enum class Kind {
    kNotImported,  // left out of the document
    kReview,       // imported differently from XXL-JOB, and stopped
    kNote,         // imported as it is; something to know or do
  };
  Kind kind = Kind::kNote;
  std::string subject;  // "job 11 (billing-app/weighted-route-11)", "group 3 'ops'", "user 3 'dave'"
  std::string message;  // one line
};

// "not imported: group 3 'ops': ..." / "review: ..." / "note: ...".
std::string to_string(const Finding& finding);

struct MappingOptions {
  std::string zone;           // the IANA zone of the XXL-JOB admin's JVM
  bool keep_running = false;  // carry trigger_status (else every job is stopped)
};

struct MappingResult {
  nlohmann::json document;  // {"apiVersion": "cronwheel/v1", "groups": [...], "users": [...]}
  std::vector<Finding> findings;  // in the order of the rows they are about
};

inline constexpr std::size_t kMaxJobNameChars = 100;

// The name a job gets, as above.
std::string job_name(const std::string& job_desc, std::int64_t id);

// Throws std::invalid_argument when options.zone is not an IANA zone name; never for the rows.
MappingResult map_xxl_job(const XxlJobTables& tables, const MappingOptions& options);

}  // namespace cronwheel::cli::xxl_job
