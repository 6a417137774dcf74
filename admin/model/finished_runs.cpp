#include "admin/model/finished_runs.h"

#include <unordered_map>

namespace cronwheel::admin {

void FinishedRuns::add(std::int64_t group, FireState state, std::uint64_t runs) {
  if (runs == 0 || !(is_finished(state) || state == FireState::kCancelled)) return;
  {
    std::lock_guard lock(mutex_);
    counts_[{group, state}] += runs;
  }
  if (listener_) listener_(group);
}

std::vector<FinishedRuns::Count> FinishedRuns::counts() const {
  std::lock_guard lock(mutex_);
  std::vector<Count> out;
  out.reserve(counts_.size());
  for (const auto& [key, runs] : counts_) out.push_back({key.first, key.second, runs});
  return out;
}

std::vector<std::int64_t> count_finished(
    FinishedRuns* finished, FireState state, const FollowUpPlanner& plan,
    const std::function<std::vector<std::int64_t>(const FollowUpPlanner& plan)>& call) {
  if (finished == nullptr) return call(plan);
  std::unordered_map<std::int64_t, std::int64_t> group_of;  // by run id
  const FollowUpPlanner noting = [&](const JobLog& run, const Job& job, const std::vector<Job>& children) {
    group_of[run.id] = run.job_group;
    return plan(run, job, children);
  };
  auto moved = call(noting);
  for (auto id : moved) {
    if (auto it = group_of.find(id); it != group_of.end()) finished->add(it->second, state);
  }
  return moved;
}

}  // namespace cronwheel::admin
