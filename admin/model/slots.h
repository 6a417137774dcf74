#pragma once

// Concurrency limits and priorities (docs/scheduling.md, "Concurrency limits and priorities"):
// a group may run at most `max_running` runs at once across its executors, a job at most
// `max_concurrent`. A fire of a limited group or job does not go out until it holds a slot: it
// waits, durable (a pending row marked waiting_slot), and a node admits waiting fires as slots
// free, highest priority first. The rules here are pure; SlotStore (slot_store.h) keeps the
// rows, SlotDispatcher (admin/scheduler) runs the admissions.

#include <cstdint>
#include <map>
#include <vector>

#include "admin/model/records.h"

namespace cronwheel::admin {

inline constexpr int kMaxGroupRunning = 10'000;  // job_group.max_running: 0 (no limit) to this
inline constexpr int kMaxJobConcurrent = 1'000;  // job_info.max_concurrent: 0 (no limit) to this
inline constexpr int kMinPriority = -1'000;      // job_info.priority, higher first; 0 by default
inline constexpr int kMaxPriority = 1'000;

// Whether a fire of `job` in `group` must hold a slot before it goes out.
bool needs_slot(const Job& job, const Group& group) noexcept;

// A fire waiting for a slot, as an admission reads it.
struct SlotCandidate {
  std::int64_t log_id = 0;
  std::int64_t job_id = 0;
  int priority = 0;                // its job's, as the job says now
  std::int64_t scheduled_time = 0;
  int job_limit = 0;               // its job's max_concurrent (0: none)

  friend bool operator==(const SlotCandidate&, const SlotCandidate&) = default;
};

// The order slots are given in: higher priority first, then the earlier scheduled time, then
// the older row.
bool slot_order(const SlotCandidate& a, const SlotCandidate& b) noexcept;

// The waiting fires of one group that take slots now, in slot order: `candidates` (any order)
// are taken in slot order while the group has room (`group_limit` minus the runs holding a slot;
// 0: no group limit) and each one's job has room (its job_limit minus the job's runs holding a
// slot, `occupied_by_job`, and those admitted before it here; 0: no job limit). A fire whose job
// is full is passed over, not waited for: the next one in order may take the slot.
std::vector<std::int64_t> admit_waiting(int group_limit, const std::map<std::int64_t, int>& occupied_by_job,
                                        std::vector<SlotCandidate> candidates);

}  // namespace cronwheel::admin
