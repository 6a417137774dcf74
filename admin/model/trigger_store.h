#pragma once

// What sending a fire reads and writes (docs/scheduling.md, "Sending a fire"): the pending row
// with its job and group, the claim (pending → sending, broadcast expansion), and the answer
// (sending → triggered or failed, with the retry a failure leads to).
//
// Every change is one transaction and one guarded transition: it happens only while the row is
// in the expected state and owned by the calling node, so a fire taken over by another node or
// cancelled meanwhile is left alone, and of two concurrent attempts exactly one moves a row.
// No method is ever called with a transaction open across an HTTP call: the caller reads,
// calls the executor, then writes.
//
// Failures: the database's exceptions propagate (StoreUnavailable when it cannot be
// reached); then nothing was written.
//
// One real implementation (PgTriggerStore, admin/pg/pg_trigger_store.h) and one fake
// (tests/support/fake_trigger_store.h). Thread-safe.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "admin/model/fire.h"
#include "admin/model/records.h"
#include "admin/model/run_end.h"
#include "admin/model/slots.h"

namespace cronwheel::admin {

class TriggerStore {
 public:
  virtual ~TriggerStore() = default;

  // A pending fire as it is sent: the row, its job and the job's group, read together.
  struct LoadedFire {
    JobLog log;
    Job job;
    Group group;
  };
  // The row if it is `pending` and owned by `node_id`, with its job and group; nullopt when it
  // is not (sent, cancelled, taken over, deleted with its job).
  virtual std::optional<LoadedFire> load_pending(std::int64_t log_id, std::string_view node_id) = 0;

  // Moves a pending fire to `sending` on its way to the executor(s).
  struct Claim {
    std::int64_t log_id = 0;
    std::string node_id;
    std::int64_t trigger_time = 0;  // epoch ms
    std::string executor_handler;   // what is sent, recorded on every row
    std::string executor_param;
    // One address: the row is sent there as shard (shard_index, shard_total) — 0 of 1 for an
    // ordinary fire, its own shard for a row that is one shard of a broadcast already.
    // Several (SHARDING_BROADCAST): the row becomes shard 0 of addresses.size() sent to
    // addresses[0], and a row for each shard i ≥ 1 is inserted, already `sending` to
    // addresses[i] (same job, trigger type, scheduled time, owner, parameters and retry count).
    std::vector<std::string> addresses;
    int shard_index = 0;
    int shard_total = 1;
    // The claim is refused while the node's own lease (its admin_node row) ends within this
    // time (database clock): another node may be about to take its fires over. A node without
    // an admin_node row has no lease to lose.
    std::int64_t min_lease_ms = 0;
  };
  // One row to send, as claimed.
  struct Shard {
    std::int64_t log_id = 0;
    std::string address;
    int shard_index = 0;
    int shard_total = 1;

    friend bool operator==(const Shard&, const Shard&) = default;
  };
  struct Claimed {
    // The rows to send in shard order (the claimed row first); empty when the claim was refused.
    std::vector<Shard> shards;
    // What was left of the node's lease at the claim (database clock), when it has one.
    std::optional<std::int64_t> lease_left_ms;
  };
  // One transaction: the transition pending → sending guarded by state = 'pending' AND
  // admin_node = node_id (and by the node's lease, see Claim::min_lease_ms), then the broadcast
  // rows. No shards when the guard matched no row: the fire is no longer this node's to send,
  // or not now. A broadcast shard that exists already (a scheduled fire is unique per job,
  // scheduled time and shard) is not inserted again, and not returned.
  virtual Claimed claim(const Claim& claim) = 0;

  // Many at once, for fires prepared ahead of their instant: one answer per id (per claim), in
  // order, each as load_pending() (claim()) would give it. The claims are of one executor each
  // (no broadcast) and are made in one transaction. The defaults call the single ones.
  virtual std::vector<std::optional<LoadedFire>> load_pending_all(const std::vector<std::int64_t>& log_ids,
                                                                  std::string_view node_id) {
    std::vector<std::optional<LoadedFire>> out;
    out.reserve(log_ids.size());
    for (auto id : log_ids) out.push_back(load_pending(id, node_id));
    return out;
  }
  virtual std::vector<Claimed> claim_all(const std::vector<Claim>& claims) {
    std::vector<Claimed> out;
    out.reserve(claims.size());
    for (const auto& c : claims) out.push_back(claim(c));
    return out;
  }

  // How recording an answer came out.
  enum class Recorded {
    kRecorded,     // the row moved (sending → triggered, or → failed)
    kResultFirst,  // the run's result arrived before /run's answer (the row is succeeded or
                   // failed already): its trigger code and message were recorded, its state kept
    kNotOurs,      // the row is no longer this node's (taken over, deleted): nothing written
  };

  // sending → pending, for a claimed row that was not sent in time (TriggerService's send
  // deadline): trigger_time cleared, `note` appended to the trigger message, guarded by
  // state = 'sending' AND admin_node = node_id. False when the row was no longer this node's
  // sending row (nothing written). The row keeps its executor and shard, and is sent again by a
  // later attempt.
  virtual bool release_claim(std::int64_t log_id, std::string_view node_id, const std::string& note) = 0;

  // A claimed row's executor was not reached (kNotReachedCode: the run provably never got
  // there): the row, still `sending` for this node at executor `from`, is pointed at executor
  // `to` before /run goes there, `note` appended to its trigger message. Guarded by
  // state = 'sending' AND admin_node = node_id AND executor_address = from; false (nothing
  // written) otherwise. A node that takes this one's fires over then asks the executor the row
  // names, the one the run was really sent to.
  virtual bool move_claim(std::int64_t log_id, std::string_view node_id, const std::string& from,
                          const std::string& to, const std::string& note) = 0;

  // Trigger messages are appended to what the row has (a line break between): a note written
  // by an earlier attempt or by the node that took the fire over is kept.
  //
  // sending → triggered: trigger_code 200, trigger_msg as given. When the result came first
  // (the executor's callback beat the answer to /run), only the trigger code and message are
  // written.
  virtual Recorded record_triggered(std::int64_t log_id, std::string_view node_id,
                                    const std::string& trigger_msg) = 0;
  // Many at once, in one transaction: one answer per run, in order, each as record_triggered()
  // would give it. The default records them one by one.
  struct Accepted {
    std::int64_t log_id = 0;
    std::string node_id;
    std::string trigger_msg;
  };
  virtual std::vector<Recorded> record_triggered_all(const std::vector<Accepted>& accepted) {
    std::vector<Recorded> out;
    out.reserve(accepted.size());
    for (const auto& a : accepted) out.push_back(record_triggered(a.log_id, a.node_id, a.trigger_msg));
    return out;
  }

  // A fire whose delivery is unknown: the executor did not answer /run and could not be asked
  // (/log) either, so the run may be going on there, or may never have arrived. sending →
  // triggered as record_triggered() does, but with trigger_code 500: "sent, not confirmed". It
  // waits for its result like any triggered run, and the lost-result check asks its executor
  // about it (docs/scheduling.md, "Results lost with an executor"). When the result came first,
  // the run was delivered after all: code 200, as record_triggered().
  virtual Recorded record_unconfirmed(std::int64_t log_id, std::string_view node_id,
                                      const std::string& trigger_msg) = 0;

  // A fire that could not be delivered: `from` → failed, trigger_code 500, trigger_msg as
  // given, guarded by state = from AND admin_node = node_id. `from` is "sending" (the executor
  // refused the run, or was not reached) or "pending" (it failed before any executor was
  // chosen: no address, routing failed); a pending row also gets its trigger_time, handler and
  // parameters.
  //
  // In the same transaction, when the transition happened, `plan` (run_end.h: kTriggerFailed)
  // is asked for the follow-ups, which are written: a RETRY fire while retries are left, a
  // FIX_DELAY job's next time.
  struct Failure {
    std::int64_t log_id = 0;
    std::string node_id;
    FireState from = FireState::kSending;
    std::int64_t now = 0;  // epoch ms
    std::string trigger_msg;
    // kPending only: recorded on the row.
    std::string executor_handler;
    std::string executor_param;
  };
  struct Failed {
    // kRecorded, or kNotOurs when the row was no longer in `from` or no longer this node's.
    Recorded recorded = Recorded::kNotOurs;
    std::vector<JobLog> fires;    // kRecorded: the follow-up fires inserted (a RETRY)
    bool next_time_set = false;   // kRecorded: a FIX_DELAY job's next time was written
  };
  virtual Failed record_failed(const Failure& failure, const FollowUpPlanner& plan) = 0;

  // Concurrency limits (admin/model/slots.h). A fire of a limited group or job goes out only
  // once it holds a slot.
  //
  // pending → waiting for a slot: the row, pending, owned by `node_id`, neither waiting nor
  // holding a slot already, is marked waiting_slot (no node's feeder reads it any more) and
  // `note` is appended to its trigger message. False when no row moved.
  virtual bool wait_for_slot(std::int64_t log_id, std::string_view node_id, const std::string& note) = 0;

  // How many fires wait for a slot, by group (groups with none left out).
  virtual std::map<std::int64_t, std::int64_t> waiting_by_group() = 0;

  // One admission for `group_id`, in one transaction: the group's row locked (FOR NO KEY UPDATE
  // SKIP LOCKED: nullopt, nothing done, while another node admits for it), the group's runs
  // holding a slot counted by job (slot_admitted rows pending, sending or triggered), its
  // waiting fires read (at most `max_candidates`, in slot order), then the ones `choose` picks
  // (admit_waiting's signature) become pending fires holding a slot, owned by `node_id`, due as
  // they were. Answers those, in the order chosen.
  using ChooseAdmitted = std::function<std::vector<std::int64_t>(
      int group_limit, const std::map<std::int64_t, int>& occupied_by_job, std::vector<SlotCandidate> candidates)>;
  virtual std::optional<std::vector<PendingFire>> admit(std::int64_t group_id, std::string_view node_id,
                                                        std::size_t max_candidates, const ChooseAdmitted& choose) = 0;
};

}  // namespace cronwheel::admin
