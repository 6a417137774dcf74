#pragma once

// What the scheduling core's deciding and timing side reads and writes (docs/scheduling.md):
// the scan under the scheduling lock, this node's pending fires, and the takeover of dead
// nodes' fires. Every transition is guarded by the state it leaves and, where the contract says
// so, by the owning node; a guarded transition that matches no row did not happen.
//
// One real implementation (PgScheduleStore, admin/pg/pg_schedule_store.h) and one fake
// (tests/support/fake_schedule_store.h). Implementations are thread-safe; every method is one
// short transaction and throws what the database throws (StoreUnavailable when it cannot
// be reached), in which case nothing was written.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "admin/model/fire.h"
#include "admin/model/run_end.h"
#include "admin/model/scan.h"

namespace cronwheel::admin {

// A fire a dead node was sending when it died, now owned by the node that took it over. Its
// fate is unknown until the executor that was called is asked.
struct SendingFire {
  PendingFire fire;
  std::string dead_node;         // the node that was sending it
  std::string executor_address;  // the executor it was sent to
  std::int64_t job_group = 0;
  std::optional<std::string> access_token;  // the group's own token; none: the admin's
  // The run's logical time (JobLog::logical_time): what it was sent with as logDateTime instead
  // of its scheduled time, and so what the executor is asked about it with.
  std::optional<std::int64_t> logical_time;

  friend bool operator==(const SendingFire&, const SendingFire&) = default;
};

// A pending fire as the feeder and the takeover read it: the fire, why it exists and its job's
// misfire strategy as the job says now, what the misfire rule for late fires needs.
struct PendingFireRow {
  PendingFire fire;
  TriggerType trigger_type = TriggerType::kSchedule;
  MisfireStrategy misfire_strategy = MisfireStrategy::kDoNothing;

  friend bool operator==(const PendingFireRow&, const PendingFireRow&) = default;
};

// A pending fire the misfire rule cancels, and why (added to the row's trigger_msg).
struct SkippedFire {
  std::int64_t log_id = 0;
  std::string message;

  friend bool operator==(const SkippedFire&, const SkippedFire&) = default;
};

class ScheduleStore {
 public:
  virtual ~ScheduleStore() = default;

  struct ScanResult {
    std::size_t jobs_read = 0;       // jobs the pre-read returned
    std::vector<PendingFire> fires;  // fires inserted, committed, in due order
    std::size_t misfire_records = 0;  // records of skipped fires inserted (ScanDecision::skipped)
    std::vector<std::int64_t> misfire_groups;  // the job group of each of those records, one each
    // When no job was due: the earliest trigger_next_time of an enabled job (after due_before),
    // so the scan that decides it can come a whole window ahead of it; nullopt when none.
    std::optional<std::int64_t> next_due;
  };
  // Called with the jobs read, inside the scan's transaction; must be pure (no I/O, no
  // blocking): the transaction holds the scheduling lock, and a retried transaction calls it
  // again.
  using Decide = std::function<ScanDecision(const std::vector<DueJob>& due)>;

  // One scan, in one transaction:
  //  1. SELECT ... FOR UPDATE the scheduling lock row (one scan at a time across all nodes),
  //     and record on it that `node` scans now (OverviewStore::nodes reads it);
  //  2. read enabled jobs with trigger_next_time <= due_before, oldest first, at most `limit`
  //     (none: read the earliest trigger_next_time of an enabled job, ScanResult::next_due);
  //  3. decide(jobs);
  //  4. write every job's advance in one statement, guarded by trigger_status = 1 and the next
  //     time read, and, for the jobs it updated, insert their fires as pending rows owned by
  //     `node` (ON CONFLICT on the scheduled-fire index DO NOTHING), with the job's handler,
  //     parameter and retry count, and each of their records of skipped fires as a run row in
  //     state cancelled, trigger type MISFIRE, scheduled at its first skipped time, with its
  //     message as trigger_msg, owned by `node` (the same ON CONFLICT). A record is an end that
  //     was never a fire: it has no follow-ups (the planner's for a misfire, RunEnd::
  //     kMisfireSkipped, are no retry, no child and a FIX_DELAY job's next time, which is the
  //     advance written with it);
  //  5. commit.
  // Returns the fires inserted (only those may be sent) and how many records, with their groups.
  virtual ScanResult scan(std::string_view node, std::int64_t due_before, int limit, const Decide& decide) = 0;

  // The pending fires `node` owns that are due at or before `due_before`, oldest first, at most
  // `limit` (the feeder: fires of the REST API, retries, child jobs, fires taken over, fires a
  // full trigger pool left waiting, and, after a restart, the node's own stale fires), each with
  // what the misfire rule (admin/scheduler/fire_decision.h, judge_late_fires) reads.
  virtual std::vector<PendingFireRow> pending(std::string_view node, std::int64_t due_before, int limit) = 0;

  // pending → cancelled for those of `fires` that are still pending and owned by `node`, by
  // primary key, each with its message added to trigger_msg (what the row said is kept); in the
  // same transaction `plan` (run_end.h, kMisfireSkipped) is asked once per moved fire and its
  // follow-ups are written (a FIX_DELAY job's next time: no result will come). A fire claimed,
  // cancelled or taken over meanwhile is left as it is. Returns the ids that moved, ascending.
  virtual std::vector<std::int64_t> cancel_pending(const std::vector<SkippedFire>& fires, std::string_view node,
                                                   const FollowUpPlanner& plan) = 0;

  struct Takeover {
    std::vector<PendingFireRow> pending;  // now owned by the caller, still pending, due order
    std::vector<SendingFire> sending;     // now owned by the caller, still sending
  };
  // In one transaction, for the fires owned by any of `dead_nodes`: every pending and every
  // sending fire becomes owned by `node`, as it is. The caller applies the misfire rule to the
  // pending ones (cancel_pending) and resolves the sending ones (resolve_sending).
  // Of nodes racing to take over the same fires, each fire goes to exactly one.
  virtual Takeover take_over(const std::vector<std::string>& dead_nodes, std::string_view node) = 0;

  // What the executor said about a taken-over sending fire.
  enum class Delivery {
    kDelivered,     // it has the run: sending → triggered (trigger code 200)
    kNotDelivered,  // it has no such run: sending → pending (same executor address and shard,
                    // no trigger time), to be sent again
    kUnknown,       // it did not answer: sending → triggered with trigger code 500 ("sent, not
                    // confirmed"), never resent since it may be running; it waits for its
                    // result, and the lost-result check asks the executor about it
                    // (TriggerStore::record_unconfirmed)
  };
  // Moves the fire as `delivery` says, guarded by state sending and owner `node`; `message` is
  // added to trigger_msg. False when the fire had moved on (its result came first). No run
  // ends here, so there are no follow-ups.
  virtual bool resolve_sending(std::int64_t log_id, std::string_view node, Delivery delivery,
                               std::string_view message) = 0;
};

}  // namespace cronwheel::admin
