#include "admin/model/child_jobs.h"

#include <algorithm>
#include <unordered_map>

namespace cronwheel::admin {

std::vector<std::int64_t> find_child_cycle(std::int64_t job, const std::vector<std::int64_t>& children,
                                           const ChildrenOf& children_of) {
  // Breadth first from the job's new children; `reached_from` remembers each job's
  // predecessor on a shortest path, so the cycle can be read back once the job is reached.
  std::unordered_map<std::int64_t, std::int64_t> reached_from;
  std::vector<std::int64_t> level;
  for (auto child : children) {
    if (reached_from.emplace(child, job).second) level.push_back(child);
  }
  auto path_to = [&](std::int64_t last) {
    std::vector<std::int64_t> cycle{job};
    for (auto at = last; at != job; at = reached_from.at(at)) cycle.push_back(at);
    std::reverse(cycle.begin() + 1, cycle.end());
    cycle.push_back(job);
    return cycle;
  };
  if (reached_from.count(job) != 0) return {job, job};
  while (!level.empty()) {
    std::vector<std::int64_t> next;
    for (const auto& [from, its_children] : children_of(level)) {
      if (from == job) continue;  // the job's stored children are replaced by `children`
      for (auto child : its_children) {
        if (child == job) return path_to(from);
        if (reached_from.emplace(child, from).second) next.push_back(child);
      }
    }
    level = std::move(next);
  }
  return {};
}

std::string describe_child_cycle(const std::vector<std::int64_t>& cycle) {
  std::string out;
  for (std::size_t i = 0; i < cycle.size(); ++i) {
    if (i > 0) out += " \u2192 ";
    out += std::to_string(cycle[i]);
  }
  return out;
}

std::string child_chain_cut_message(std::int64_t parent_job, std::int64_t child_job) {
  return "not fired: child job " + std::to_string(child_job) + " of job " + std::to_string(parent_job) + " is " +
         std::to_string(kMaxChildChainDepth + 1) +
         " child-job steps from the run that started the chain (the most is " +
         std::to_string(kMaxChildChainDepth) + "); do the jobs' childJobId lists form a cycle?";
}

}  // namespace cronwheel::admin
