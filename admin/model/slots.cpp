#include "admin/model/slots.h"

#include <algorithm>

namespace cronwheel::admin {

bool needs_slot(const Job& job, const Group& group) noexcept {
  return job.max_concurrent > 0 || group.max_running > 0;
}

bool slot_order(const SlotCandidate& a, const SlotCandidate& b) noexcept {
  if (a.priority != b.priority) return a.priority > b.priority;
  if (a.scheduled_time != b.scheduled_time) return a.scheduled_time < b.scheduled_time;
  return a.log_id < b.log_id;
}

std::vector<std::int64_t> admit_waiting(int group_limit, const std::map<std::int64_t, int>& occupied_by_job,
                                        std::vector<SlotCandidate> candidates) {
  std::sort(candidates.begin(), candidates.end(), slot_order);
  std::map<std::int64_t, int> held = occupied_by_job;
  long group_held = 0;
  for (const auto& [job, count] : occupied_by_job) group_held += count;
  std::vector<std::int64_t> admitted;
  for (const auto& c : candidates) {
    if (group_limit > 0 && group_held >= group_limit) break;
    int& job_held = held[c.job_id];
    if (c.job_limit > 0 && job_held >= c.job_limit) continue;
    admitted.push_back(c.log_id);
    ++job_held;
    ++group_held;
  }
  return admitted;
}

}  // namespace cronwheel::admin
