#pragma once

#include "common/util/histogram.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <stop_token>
#include <thread>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "admin/model/executor_client.h"
#include "admin/model/finished_runs.h"
#include "admin/model/fire.h"
#include "admin/model/trigger_store.h"
#include "admin/route/routing.h"
#include "admin/route/suspect_addresses.h"
#include "common/util/clock.h"

namespace cronwheel::admin {

// Sends fires to executors, exactly as docs/scheduling.md "Sending a fire" says:
//
//  1. load the pending row with its job and group (not this node's pending fire any more:
//     kDropped);
//  2. resolve the addresses: the row's own list (executor_address, comma-separated: an
//     operator's override on a MANUAL or API fire) when not empty, else the group's
//     address_list (entered by hand for a manual group, kept equal to the live registrations
//     for an automatic one). None: the fire fails, "no executor address for group <appName>";
//  3. route with the job's strategy (FAILOVER and BUSYOVER beat the executors first) among the
//     addresses not suspect (Options::suspects; all of them when every one is); a route that
//     finds no executor fails the fire with every answer;
//  4. claim it (pending → sending, with the executor, handler, parameters and shard); a
//     SHARDING_BROADCAST fire becomes one row per address in that same transaction. A claim
//     that matches nothing means the fire was taken over or cancelled: kDropped;
//  5. POST /run to each claimed row's executor, with the group's access token (or the
//     admin's), and record the answer: sending → triggered, or sending → failed with the
//     reason; a failure with retries left gets a RETRY fire (TriggerStore::record_failed).
//     A row whose POST would start later than send_deadline after the claim is not sent: it
//     goes back to pending (see Options::send_deadline).
//     A /run that provably did not reach its executor (kNotReachedCode: connection refused, not
//     made) marks that address suspect and goes to the next address the job's strategy gives
//     among those not tried (the row moved there first: TriggerStore::move_claim), for every
//     fire but a broadcast's shard; the fire fails only when no address of its group took it.
//
// A row that is already one shard of a broadcast (shard_total > 1: a retry of one shard, or a
// shard put back to pending after its node died) is sent as that shard only, not expanded
// again: to its executor_address when that is one address, else to the address at its shard
// index in the current list, as XXL-JOB retries a shard.
//
// When /run gets no answer after the request went out (ExecutorClient's 502), the executor may
// have queued the run, so it is asked (/log) before anything else happens: it has the run →
// triggered; it has not → failed, and retried like any failed trigger; no answer → "delivery
// unknown": triggered, not confirmed (TriggerStore::record_unconfirmed), never sent again since
// that could run it twice; it waits for its result and the lost-result check settles it.
//
// No transaction is open during an HTTP call: each store call is its own short transaction.
// The database unreachable before the claim leaves the fire pending, for a later attempt
// (kDropped). Unreachable when the answer is to be recorded, it is retried a few times; if it
// stays unreachable the row stays `sending` (the executor's result callback, which may move a
// `sending` row, still completes an accepted run).
//
// Thread-safe: the trigger pools call send() from many threads at once. Routing state (ROUND,
// LFU, LRU) is this object's, shared by every send.
class TriggerService final : public FireSender {
 public:
  struct Options {
    // This node's id: the owner of the fires it sends. Required.
    std::string node_id;
    // Sent to executors whose group has no access token of its own (--access-token).
    std::string access_token;
    // A claimed row not POSTed within this time of its claim is not sent by this attempt: it
    // goes back to pending for a later one. This fences a node that stalled (or lost the
    // database but not the executors) after its claim: another node takes its `sending` fires
    // over only once its lease expired, at the earliest lease - heartbeat (12 s by default)
    // after the claim, and asks the executor; a /run still posted after that could run the fire
    // a second time. Must stay below lease - heartbeat interval. It matters for broadcasts,
    // whose shards are posted one after the other.
    std::chrono::milliseconds send_deadline{8'000};
    // The node's own lease must have this much left for a claim, and a POST must start this
    // long before the lease (as it was at the claim) ends, whichever of this and send_deadline
    // comes first.
    std::chrono::milliseconds lease_margin{2'000};
    // Recording an answer while the database is unreachable: attempts, and the wait before the
    // second one (doubling after).
    int record_attempts = 5;
    std::chrono::milliseconds record_backoff{200};
    // Random picks of RANDOM, ROUND and LEAST_FREQUENTLY_USED.
    RandomIndex random = default_random_index();
    // When set, every run this service fails (no executor took it) is counted there, by its
    // group. Must outlive the service.
    FinishedRuns* finished_runs = nullptr;
    // When set, called with the retry a failed send led to, once committed.
    FiresWritten fires_written = {};
    // When set, executors a /run did not reach are marked there and routed around until they
    // register again; must outlive the service.
    SuspectAddresses* suspects = nullptr;
    // When set, called with the group of a fire this service set waiting for a slot (its group
    // or job has a concurrency limit and it holds no slot yet: admin/model/slots.h), so the
    // node's slot dispatcher looks at the group at once. Must not block or throw.
    std::function<void(std::int64_t group_id)> slot_waiting = {};
    // When set, says whether the executor at an address takes lead dispatch
    // (RegistryMonitor::takes_lead); prepared fires to such executors may be handed over ahead of
    // their instant (lead()). Unset: every fire is posted at its instant. Must be thread-safe and
    // must not block.
    std::function<bool(const std::string& address)> takes_lead = {};
    // When set and false, no executor takes lead dispatch now: prepare_lead() leaves every fire
    // alone without reading it. Same requirements as takes_lead.
    std::function<bool()> any_takes_lead = {};
  };

  // Everything given must outlive the service.
  TriggerService(TriggerStore& store, ExecutorClient& client, common::Clock& clock, Options options);
  // Writes the accepted answers still queued, then stops.
  ~TriggerService();

  // Seconds from a workflow node's parent's end being recorded to the node's run accepted by its
  // executor, for the runs this service sent (docs/workflows.md, "Metrics").
  common::Histogram::Snapshot workflow_handoff() const { return workflow_handoff_.snapshot(); }

  TriggerService(const TriggerService&) = delete;
  TriggerService& operator=(const TriggerService&) = delete;

  SendOutcome send(const PendingFire& fire) noexcept override;
  // Loads and claims many fires in one statement each (TriggerStore::load_pending_all,
  // claim_all) and routes them between, so that at their instant only the POST is left. Fires
  // whose routing asks executors (FAILOVER, BUSYOVER), broadcasts and single shards are not
  // prepared: deliver() sends them whole. The claim's trigger time is `not_before_ms` (or now,
  // when later), and the send deadline counts from the claim. `admit` is asked of each fire after
  // its routing (with the lead key of the executor it routed to) and before the claim.
  std::vector<PreparedFire> prepare(const std::vector<PendingFire>& fires, std::int64_t not_before_ms,
                                    const AdmitFire& admit = nullptr) noexcept override;
  // prepare() for fires due seconds ahead whose every usable executor takes lead dispatch
  // (Options::takes_lead), each claimed for its own second; every other fire is left untouched
  // (FireSender::prepare_lead): one waiting for a concurrency slot, a broadcast, FAILOVER or
  // BUSYOVER, a group with no usable executor or one that does not take lead dispatch.
  std::vector<PreparedFire> prepare_lead(const std::vector<PendingFire>& fires) noexcept override;
  SendOutcome deliver(const PreparedFire& fire) noexcept override;
  void release(const PreparedFire& fire) noexcept override;
  // Returns once every accepted answer deliver() and lead() queued so far is written (or given up).
  void flush() noexcept override;
  // The executor's address and access token, when Options::takes_lead says it takes lead
  // dispatch; nullopt for a fire not prepared ahead.
  std::optional<std::string> lead_key(const PreparedFire& fire) const noexcept override;
  // One POST /lead per kMaxLeadFires fires, carrying the admin's time; each accepted fire is
  // recorded triggered (by the recorder thread, as deliver() records it: its trigger time is its
  // instant, set at the claim) with "Lead" in its trigger message; a fire past its send deadline
  // goes back to pending first. Everything else is left to deliver() at the instant (see
  // FireSender::lead).
  std::vector<std::optional<SendOutcome>> lead(const std::vector<PreparedFire>& fires,
                                               const std::vector<std::int64_t>& fire_at) noexcept override;

  Routing& routes() noexcept { return routes_; }

  struct Target;  // where a loaded fire may go, and with what

 private:
  static bool prepared_ahead(const TriggerStore::LoadedFire& fire);
  // Counts a workflow node's run accepted by its executor in workflow_handoff().
  void note_handoff(const JobLog& log);
  enum class Ahead { kAtTheInstant, kLeadOnly };
  std::vector<PreparedFire> prepare_some(const std::vector<PendingFire>& fires, std::int64_t not_before_ms,
                                         Ahead ahead, const AdmitFire& admit) noexcept;
  // lead_key() of a fire routed to `address` with `token`.
  std::optional<std::string> lead_key_of(const std::string& address, const std::string& token) const noexcept;
  bool all_take_lead(const std::vector<std::string>& addresses) const noexcept;
  Target target_of(const TriggerStore::LoadedFire& fire) const;
  TriggerStore::Claim claim_for(const TriggerStore::LoadedFire& fire, const Target& target,
                                std::int64_t trigger_time) const;
  common::Clock::SteadyTime send_by(common::Clock::SteadyTime claimed_at, const TriggerStore::Claimed& claimed) const;
  // Fails a fire still pending (nothing was sent).
  SendOutcome::Kind fail_pending(const TriggerStore::LoadedFire& fire, const Target& target, const std::string& reason);
  SendOutcome::Kind send_loaded(const TriggerStore::LoadedFire& fire);
  // A fire of a limited group or job without a slot: marked waiting (TriggerStore::wait_for_slot),
  // left for the slot dispatcher to admit.
  SendOutcome::Kind wait_for_slot(const TriggerStore::LoadedFire& fire);
  // When an accepted answer is written: before post() returns, or by the recorder thread.
  // The route among `addresses` with the fire's strategy; nullopt when it finds none.
  RouteResult route_among(const TriggerStore::LoadedFire& fire, const Target& target,
                          std::vector<std::string> addresses);
  // Where a /run that did not reach `tried.back()` goes next, if anywhere.
  std::optional<std::string> next_address(const TriggerStore::LoadedFire& fire, const Target& target,
                                          const std::vector<std::string>& tried);
  enum class Recording { kNow, kLater };
  // POSTs one claimed row and records the answer (or releases it when `by` has passed).
  SendOutcome::Kind post(const TriggerStore::LoadedFire& fire, const Target& target, const TriggerStore::Shard& shard,
                         common::Clock::SteadyTime by, Recording when);
  // A claimed row too late to send (its send deadline passed): back to pending. kDropped.
  SendOutcome::Kind release_late(const TriggerStore::LoadedFire& fire, const TriggerStore::Shard& shard);
  void enqueue_accepted(TriggerStore::Accepted accepted, std::int64_t job_id, std::string address);
  // The recorder thread: writes queued accepted answers in batches (sending → triggered).
  void record_accepted(std::stop_token stop);
  // Runs a store write, retrying while the database is unreachable.
  template <class F>
  auto record(F&& write) -> decltype(write());

  TriggerStore& store_;
  ExecutorClient& client_;
  common::Clock& clock_;
  const Options options_;
  Routing routes_;
  common::Histogram workflow_handoff_{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};

  // Accepted answers of delivered fires, waiting for the recorder thread.
  struct QueuedAccepted {
    TriggerStore::Accepted accepted;
    std::int64_t job_id = 0;
    std::string address;
  };
  std::mutex accepted_mutex_;
  std::condition_variable accepted_changed_;
  std::deque<QueuedAccepted> accepted_;
  bool recording_ = false;
  std::jthread recorder_;  // last: it uses the members above
};

// Splits an address list "http://a:9999/, http://b:9999/" at commas, trimming spaces and
// dropping empty entries.
std::vector<std::string> split_addresses(const std::string& list);

}  // namespace cronwheel::admin
