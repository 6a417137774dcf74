#include "admin/api/held_runs.h"

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

void HeldRuns::take_back_job(std::int64_t job_id, const std::string& reason, GivenBack then) const noexcept {
  auto runs = of(job_id);
  if (runs.empty()) return;
  try {
    take_back(std::move(runs), reason, then);
  } catch (const std::exception& e) {
    spdlog::warn("lead dispatch: held runs of job {} not taken back: {}", job_id, e.what());
  }
}

}  // namespace cronwheel::admin
