#pragma once

// Child jobs (XXL-JOB's childJobId): a run's success fires each of its job's children
// (run_end.h). A cycle of children (a → b → a, or a → {b, c} → a) would fire forever, doubling
// at each fan-out, so two guards stand against it:
//  1. saving a job whose children would close a cycle is refused, naming it (find_child_cycle);
//  2. a chain that runs away all the same (two edits at once can each close half a cycle) ends
//     at kMaxChildChainDepth: a child fire deeper than that is written cancelled, saying why,
//     instead of run (plan_follow_ups).

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace cronwheel::admin {

// How many child-job steps a chain may take from the run its job fired by itself.
inline constexpr int kMaxChildChainDepth = 32;

// The stored child job ids of each of `jobs` that exists (one read for the lot).
using ChildrenOf = std::function<std::map<std::int64_t, std::vector<std::int64_t>>(const std::vector<std::int64_t>& jobs)>;

// The cycle that job `job`, given `children` as its child jobs, would close: the jobs along it
// from `job` back to `job` ({job, c1, ..., job}, a shortest one), or empty when there is none.
// Every other job's children are as `children_of` answers them, read a level of the graph at a
// time; each job is read at most once.
std::vector<std::int64_t> find_child_cycle(std::int64_t job, const std::vector<std::int64_t>& children,
                                           const ChildrenOf& children_of);

// "5 → 7 → 5"
std::string describe_child_cycle(const std::vector<std::int64_t>& cycle);

// The trigger message of a child fire cut at kMaxChildChainDepth.
std::string child_chain_cut_message(std::int64_t parent_job, std::int64_t child_job);

}  // namespace cronwheel::admin
