#include "admin/api/held_runs.h"

#include <cstddef>
#include <exception>
#include <utility>

#include <spdlog/spdlog.h>

namespace cronwheel::admin {

std::vector<JobLog> HeldRuns::of(std::int64_t job_id) const noexcept {
  if (!wired()) return {};
  try {
    return read(job_id);
  } catch (const std::exception& e) {
    spdlog::warn("lead dispatch: held runs of job {} not read, not taken back: {}", job_id, e.what());
    return {};
  }
}

void HeldRuns::take_back_runs(std::vector<JobLog> runs, const std::string& reason, GivenBack then) const noexcept {
  if (!wired() || runs.empty()) return;
  const std::size_t n = runs.size();
  try {
    take_back(std::move(runs), reason, then);
  } catch (const std::exception& e) {
    spdlog::warn("lead dispatch: {} held runs not taken back: {}", n, e.what());
  }
}

void HeldRuns::take_back_job(std::int64_t job_id, const std::string& reason, GivenBack then) const noexcept {
  take_back_runs(of(job_id), reason, then);
}

void HeldRuns::take_back_jobs(std::vector<std::int64_t> job_ids, const std::string& reason,
                              GivenBack then) const noexcept {
  if (!wired() || job_ids.empty()) return;
  if (!take_back_many) {
    for (auto id : job_ids) take_back_job(id, reason, then);
    return;
  }
  const std::size_t jobs = job_ids.size();
  try {
    take_back_many(std::move(job_ids), reason, then);
  } catch (const std::exception& e) {
    spdlog::warn("lead dispatch: held runs of {} jobs not taken back: {}", jobs, e.what());
  }
}

}  // namespace cronwheel::admin
