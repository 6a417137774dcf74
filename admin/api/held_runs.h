#pragma once

// Lead dispatch, for the routes that change, stop or delete jobs: the runs of a job its executors
// hold for their instant, and taking such runs back (HeldFireCanceller, which the server wires;
// docs/scheduling.md, "Lead dispatch"). Unset, nothing is taken back. Neither function may block
// on an executor: take_back queues the calls.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "admin/model/completion_store.h"
#include "admin/model/records.h"

namespace cronwheel::admin {

struct HeldRuns {
  std::function<std::vector<JobLog>(std::int64_t job_id)> read = {};
  std::function<void(std::vector<JobLog> runs, std::string reason, GivenBack then)> take_back = {};
  // The same for the held runs of many jobs, read by the taker (HeldFireCanceller::take_back_jobs)
  // rather than on the caller's thread. Unset, take_back_jobs() below reads them here.
  std::function<void(std::vector<std::int64_t> job_ids, std::string reason, GivenBack then)> take_back_many = {};

  bool wired() const { return read && take_back; }
  // The job's held runs now; none when unwired or when they cannot be read (logged: the change
  // itself is made, and those runs start as they were sent).
  std::vector<JobLog> of(std::int64_t job_id) const noexcept;
  // Queues `runs` to be taken back, each then becoming what `then` says; nothing when unwired.
  void take_back_runs(std::vector<JobLog> runs, const std::string& reason, GivenBack then) const noexcept;
  // The same for the job's held runs now.
  void take_back_job(std::int64_t job_id, const std::string& reason, GivenBack then) const noexcept;
  // The same for each of `job_ids` (take_back_many when set).
  void take_back_jobs(std::vector<std::int64_t> job_ids, const std::string& reason, GivenBack then) const noexcept;
};

}  // namespace cronwheel::admin
