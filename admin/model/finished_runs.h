#pragma once

// Runs that reached a final state on this node, by executor group and state, since the node
// started: GET /metrics' cronwheel_runs_finished_total{group,outcome}.
//
// A run is counted by the node whose transaction moved it to its final state, once that
// transaction committed; every such transition is guarded (of two nodes or two attempts exactly
// one moves a row), so each run is counted once in the whole cluster, and the sum over nodes is
// the cluster's count. The places that count, each after its store call returned:
//  - succeeded, failed, lost: Completion (executors' results, the lost-result check's verdicts);
//  - failed: TriggerService (no executor took the fire: refused, not reached, no address);
//  - cancelled: the scan's records of fires a misfire strategy skipped (ScheduleThread), late
//    pending fires the misfire rule cancels (PendingFeeder, FireTakeover), and fires an operator
//    cancelled (DELETE logs/{id}).
// Unlike the run report (docs/run-report.md) this counts when the run ended, not when it was
// scheduled, and counts cancelled runs too.
//
// Groups are labelled by id: the app name is not at hand where runs end, and /metrics needs no
// login. The groups counted are those admins created, so the series are bounded by them (a
// deleted group's series stays until the node restarts); never a series per job.
//
// Thread-safe. add() takes a mutex for a map look-up and an add, so it costs little next to the
// transaction that ended the run.

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "admin/model/fire_state.h"
#include "admin/model/run_end.h"

namespace cronwheel::admin {

class FinishedRuns {
 public:
  // Counts `runs` runs of group `group` that ended in `state`: succeeded, failed, lost or
  // cancelled (any other state is not an end, and is ignored).
  void add(std::int64_t group, FireState state, std::uint64_t runs = 1);

  // Called after every add() that counted runs, outside the lock, with the group: runs of it
  // ended, so slots it held are free (the slot dispatcher wakes). Set once, before the first
  // add(); must not block or throw.
  void on_added(std::function<void(std::int64_t group)> listener) { listener_ = std::move(listener); }

  struct Count {
    std::int64_t group = 0;
    FireState state = FireState::kSucceeded;
    std::uint64_t runs = 0;

    friend bool operator==(const Count&, const Count&) = default;
  };
  // Every (group, state) counted so far, by group then state.
  std::vector<Count> counts() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<std::int64_t, FireState>, std::uint64_t> counts_;
  std::function<void(std::int64_t)> listener_;
};

// For a store call that moves runs to `state` and answers only their ids
// (ScheduleStore::cancel_pending): makes `call` with a planner that is `plan` noting the group of
// each run the store asks it about (the store asks once per run it moves, with the run), then
// counts in `finished` (when not null) the runs whose ids the call answered. A retried
// transaction asks again about the same runs; a run asked about in an attempt that rolled back
// but not moved in the end is not counted. Returns what the call returned; throws what it
// throws, having counted nothing.
std::vector<std::int64_t> count_finished(
    FinishedRuns* finished, FireState state, const FollowUpPlanner& plan,
    const std::function<std::vector<std::int64_t>(const FollowUpPlanner& plan)>& call);

}  // namespace cronwheel::admin
