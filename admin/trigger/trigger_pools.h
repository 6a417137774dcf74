#pragma once

// The fast and the slow trigger pool (docs/scheduling.md, "Sending a fire: the trigger pools").
//
// dispatch() gives each fire to the fast pool, or to the slow one when its job's triggers took
// longer than `slow_trigger` more than `slow_after` times in the current minute (the wall
// clock's minute; the counts start again each minute), so a few jobs with slow executors
// cannot hold every fast thread. A pool thread calls FireSender::send, which routes, claims,
// calls the executor and records the answer.
//
// A full pool is back-pressure, not a failure. A fire neither pool can take (maximum threads and
// a full queue) stays pending, untouched (it is a durable row already), is reported finished at
// once and counted in Stats::deferred_full; the pending feeder reads it again within a second and
// the ring hands it back, until a pool has room. So under load fires go out late, never
// `failed`; the feeder applies the job's misfire strategy to those that waited too long
// (docs/scheduling.md). Room is counted per task a pool thread takes, after routing and before
// any claim (FireSender::prepare's `admit`): a fire posted on its own takes one place, and the
// fires handed over to one lead executor take one between them.
//
// Every fire handed to dispatch() is reported to `finished` exactly once, when the pools are
// done with it (sent, failed, dropped, or left pending: by a full pool, by the lease check, at
// shutdown), so the ring may accept its log id again.
//
// Lead dispatch (docs/scheduling.md, "Lead dispatch"): of the fires prepared ahead of their
// instant by dispatch(fires, not_before_ms), those at least kMinLeadMs ahead whose executor takes
// it (FireSender::lead_key) are not posted one by one at the instant: the fires of one executor go
// to one fast-pool thread, which hands them over at once in one request (FireSender::lead) and
// leaves the executor to start them. Those it did not hand over are posted at their instant as
// any other, each on a pool thread of its own. Fires already due (a node behind, the feeder's
// late fires) go the same way when several are for one lead executor, which starts them at
// once: one request for them all, not one /run each; a lone one is posted.
//
// Before sending, `may_send` (when given) is asked: false (this node's lease may have run out,
// so another node may be taking its fires over) leaves the fire pending, untouched.
//
// Thread-safe. shutdown() stops both pools: running sends finish (each bounded by the
// executor client's timeouts); queued fires, and prepared ones still waiting for their instant,
// are left pending (their claims given back) for this node or a node that takes them over.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <unordered_map>
#include <vector>

#include "admin/model/fire.h"
#include "admin/trigger/fire_thread_pool.h"
#include "common/util/clock.h"
#include "common/util/histogram.h"

namespace cronwheel::admin {

class TriggerPools {
 public:
  struct Options {
    std::size_t fast_max_threads = 300;
    std::size_t slow_max_threads = 200;
    std::size_t fast_queue_capacity = 10'000;
    std::size_t slow_queue_capacity = 5'000;
    std::chrono::milliseconds idle_timeout{60'000};
    std::chrono::milliseconds slow_trigger{500};
    int slow_after = 10;
  };
  struct Hooks {
    std::function<void(std::int64_t log_id)> finished;  // required
    std::function<bool()> may_send;                     // optional
  };
  struct Stats {
    std::uint64_t fast = 0;       // fires given to the fast pool
    std::uint64_t slow = 0;       // fires given to the slow pool
    std::uint64_t deferred_full = 0;  // refusals of a full pool: the fire stayed pending, to be fed again
    std::uint64_t triggered = 0;  // sends the executor accepted
    std::uint64_t failed = 0;     // sends that failed
    std::uint64_t dropped = 0;    // sends that found the fire no longer this node's to send
    std::uint64_t deferred = 0;   // fires left pending because may_send said no
    std::uint64_t led = 0;        // fires handed over ahead (counted in triggered too)
    std::size_t fast_threads = 0, slow_threads = 0;
    std::size_t fast_queued = 0, slow_queued = 0;
    // Seconds from each fire's scheduled instant to the start of its send (its lateness), and
    // how long sends took (start to recorded answer) by outcome.
    common::Histogram::Snapshot lateness;
    common::Histogram::Snapshot send_triggered, send_failed;
  };

  TriggerPools(Options options, FireSender& sender, common::Clock& clock, Hooks hooks);
  ~TriggerPools();  // shutdown()

  TriggerPools(const TriggerPools&) = delete;
  TriggerPools& operator=(const TriggerPools&) = delete;

  // Gives each fire to its pool; a fire both pools refuse is left pending and reported finished
  // at once. After shutdown() every fire is reported finished at once and left pending.
  void dispatch(const std::vector<PendingFire>& fires);
  // The same for fires due at `not_before_ms` (epoch ms), handed over ahead of it: on the
  // caller's thread, the fires the pools have room for are prepared (FireSender::prepare: read
  // and claimed, one statement each for up to kMaxPrepared) and handed to their pools at once; a pool's
  // thread waits for the fire's instant and only posts it (FireSender::deliver). The instant is
  // `not_before_ms`, or the fire's own second when that has passed already (fires of seconds
  // handed over late go at once). The call does not wait for the instant, so the next second
  // is prepared while this one is posted. A prepared fire that never gets posted (shutdown)
  // has its claim given back (FireSender::release).
  void dispatch(const std::vector<PendingFire>& fires, std::int64_t not_before_ms);

  // Lead dispatch of fires due seconds ahead (a burst: docs/scheduling.md, "Lead dispatch"), on
  // the caller's thread: the fires whose every executor takes lead dispatch are prepared
  // (FireSender::prepare_lead, claimed for their own second) and handed over, one request per
  // executor on a fast-pool thread, as dispatch() hands over the ones it prepares; those the
  // executor then refuses are posted at their instant. Answers the fires it left alone (not
  // claimed, not reported finished: the caller holds them for their second), all of them when the
  // pools are shut down or full or may_send says no. Every other fire is reported finished once,
  // as dispatch()'s are.
  std::vector<PendingFire> hand_over_ahead(const std::vector<PendingFire>& fires) noexcept;

  // A fire is handed over ahead only when its instant is at least this far off: one already due
  // is posted at once, without the extra hop.
  static constexpr std::int64_t kMinLeadMs = 20;
  // dispatch() reads and claims at most this many fires at a time (FireSender::prepare), handing
  // each part on before preparing the next: a second's fires at the node's capacity, in one part.
  static constexpr std::size_t kMaxPrepared = 10'000;

  void shutdown() noexcept;

  // Whether the job's triggers go to the slow pool now.
  bool slow(std::int64_t job_id) const;

  Stats stats() const;
  // Sends finished so far (triggered + failed): what the node delivers, cheaply (LoadShedder).
  std::uint64_t sends() const noexcept;
  // Fires the fast pool refused so far (full): its share of Stats::deferred_full.
  std::uint64_t fast_refusals() const noexcept { return fast_refused_.load(std::memory_order_relaxed); }

 private:
  void send(const PendingFire& fire) noexcept;
  // dispatch(fires, not_before_ms) of one part: answers how many fires it refused for room.
  std::size_t dispatch_part(const std::vector<PendingFire>& fires, std::int64_t not_before_ms);
  void count(SendOutcome::Kind kind);
  void note_refused(std::size_t refused, std::size_t of);
  struct Prepared {
    PreparedFire fire;
    std::int64_t post_at = 0;  // epoch ms: not posted before
  };
  std::optional<Prepared> take_prepared(std::int64_t log_id);
  // Fires of one executor to hand over ahead, queued on a pool thread under their first's log id.
  struct LeadBatch {
    std::vector<PreparedFire> fires;
    std::vector<std::int64_t> post_at;
  };
  std::optional<LeadBatch> take_lead_batch(std::int64_t log_id);
  void hand_over(LeadBatch batch) noexcept;
  // Queues each executor's batch on a fast-pool thread; a batch the pool refuses has its claims
  // given back and is reported finished. Answers how many fires were refused so.
  std::size_t submit_lead_batches(std::unordered_map<std::string, LeadBatch>& batches);
  // A prepared fire to post at its instant on a thread of `pool`; when the pool refuses it, its
  // claim goes back and it is reported finished. False then.
  bool submit_prepared(const PreparedFire& fire, std::int64_t post_at, FireThreadPool& pool);
  void note_duration(std::int64_t job_id, std::chrono::milliseconds took);

  const Options options_;
  FireSender& sender_;
  common::Clock& clock_;
  const Hooks hooks_;

  // Slow triggers per job in the current minute.
  mutable std::mutex slow_mutex_;
  mutable std::int64_t minute_ = -1;
  mutable std::unordered_map<std::int64_t, int> slow_counts_;

  std::atomic<bool> shut_down_{false};
  std::atomic<bool> full_{false};  // the last dispatch() had fires refused
  std::atomic<std::uint64_t> fast_{0}, slow_{0}, deferred_full_{0}, triggered_{0}, failed_{0}, dropped_{0}, deferred_{0},
      led_{0}, fast_refused_{0};
  common::Histogram lateness_{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
  common::Histogram send_triggered_{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
  common::Histogram send_failed_{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};

  // Fires prepared and handed to a pool, by log id, until a pool thread takes them.
  std::mutex prepared_mutex_;
  std::unordered_map<std::int64_t, Prepared> prepared_;
  std::unordered_map<std::int64_t, LeadBatch> lead_batches_;  // guarded by prepared_mutex_
  std::stop_source stop_;  // shutdown: ends the waits for instants
  std::unique_ptr<FireThreadPool> fast_pool_;
  std::unique_ptr<FireThreadPool> slow_pool_;
};

}  // namespace cronwheel::admin
