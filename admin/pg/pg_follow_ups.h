#pragma once

// Writing what follows a run's end (admin/model/run_end.h), for every PostgreSQL store that
// moves a run to a final state: the completion store (results), the trigger store (a failed
// trigger) and the schedule store (fires the trigger pools refused). The planner decides; this
// only reads what it needs and writes what it returns.

#include <cstdint>
#include <vector>

#include <pqxx/pqxx>

#include "admin/model/records.h"
#include "admin/model/run_end.h"

namespace cronwheel::admin::pg {

struct WrittenFollowUps {
  std::vector<JobLog> fires;   // as inserted, ids assigned
  bool next_time_set = false;  // the FIX_DELAY next time was written
};

// Inside the transaction that has just moved `run` to its final state (its row locked): reads
// the run's job and the job's existing children (locked FOR KEY SHARE), calls `plan` once, and
// writes its fires and the FIX_DELAY next time (guarded as FollowUps says). A run whose job is
// gone (deleted meanwhile) has no follow-ups.
WrittenFollowUps write_follow_ups(pqxx::work& tx, const JobLog& run, const FollowUpPlanner& plan);

// The same for many runs moved in one statement, in two reads whatever their number (their
// jobs, then the jobs' existing children) plus one write per fire or FIX_DELAY next time;
// `plan` is called once per run, in order. Answers one entry per run.
std::vector<WrittenFollowUps> write_follow_ups(pqxx::work& tx, const std::vector<JobLog>& runs,
                                               const FollowUpPlanner& plan);

// Registers the statements write_follow_ups uses. Every store that calls it registers them on
// its connections; registering them twice on one connection is harmless.
void prepare_follow_ups(pqxx::connection& connection);

}  // namespace cronwheel::admin::pg
