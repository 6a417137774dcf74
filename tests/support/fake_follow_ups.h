#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <vector>

#include "admin/model/fire.h"
#include "admin/model/records.h"
#include "admin/model/run_end.h"

namespace cronwheel::testing {

struct FakeWrittenFollowUps {
  std::vector<admin::JobLog> fires;
  bool next_time_set = false;
};

// What admin/pg/pg_follow_ups.h does, over a fake's maps: reads the run's job and its existing
// children, asks `plan` once, inserts its fires (as planned: pending, or cancelled; new ids) and writes the FIX_DELAY next
// time under the same guard. Call with the fake's mutex held.
inline FakeWrittenFollowUps write_fake_follow_ups(std::map<std::int64_t, admin::Job>& jobs,
                                                  std::map<std::int64_t, admin::JobLog>& logs, std::int64_t& next_log,
                                                  const admin::JobLog& run, const admin::FollowUpPlanner& plan) {
  FakeWrittenFollowUps out;
  auto job = jobs.find(run.job_id);
  if (job == jobs.end()) return out;
  std::vector<admin::Job> children;
  std::map<std::int64_t, bool> seen;
  for (auto id : job->second.child_job_ids) {
    auto child = jobs.find(id);
    if (child != jobs.end() && id != job->first && !seen[id]) children.push_back(child->second);
    seen[id] = true;
  }
  std::sort(children.begin(), children.end(), [](const admin::Job& a, const admin::Job& b) { return a.id < b.id; });
  const admin::FollowUps follow = plan(run, job->second, children);
  for (admin::JobLog fire : follow.fires) {
    fire.id = next_log++;
    logs[fire.id] = fire;
    out.fires.push_back(fire);
  }
  admin::Job& j = job->second;
  if (follow.fix_delay_next_time && j.trigger_status == 1 && j.trigger_next_time == admin::kAwaitingCompletion) {
    j.trigger_next_time = *follow.fix_delay_next_time;
    out.next_time_set = true;
  }
  return out;
}

}  // namespace cronwheel::testing
