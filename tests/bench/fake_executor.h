#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <queue>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/http/http_server.h"
#include "common/protocol/messages.h"
#include "common/timer/hierarchical_wheel_timer.h"

namespace cronwheel::bench {

// One run as the fake executor received it: a /run, or a fire handed over by /lead at its instant.
struct Receipt {
  std::int64_t job_id = 0;
  std::int64_t scheduled_ms = 0;  // logDateTime: the fire's scheduled instant (epoch ms)
  std::int64_t log_id = 0;
  // System clock (epoch µs) when the handler got the /run request; for a fire handed over by
  // /lead, when the timing wheel started it at its fireAt.
  std::int64_t received_us = 0;
  std::int64_t ended_us = 0;      // system clock when its result was queued for the callback; 0: still held
  bool by_lead = false;           // handed over by /lead (else posted to /run)
  std::int64_t lead_ahead_ms = 0;  // by_lead: its fireAt minus when its /lead request arrived
};

// An executor that does nothing but answer, for load benchmarks of the admin: an HttpServer of
// common/http on 127.0.0.1 (TCP_NODELAY, one I/O thread and a few workers) that speaks XXL-JOB 2.4's
// executor side. /run is answered success at once, after noting the receipt time, as the real
// executor answers before its job thread runs the handler; the run lasts `hold` (none by
// default), then its result (success) is queued, its end time noted, and called back to the
// admin the way the real executor's CallbackSender does it: one background thread, everything queued at the time in one request of at most
// `max_batch` results, to the first admin of the list that accepts it. A batch no admin accepts
// is retried after a short pause, never dropped. /beat and /idleBeat answer success, /kill and
// /log answer what an idle executor would.
//
// No run logs, no job threads, no spool: the point is that the executor costs next to nothing, so
// what a benchmark measures is the admin and its database.
//
// Lead dispatch (Options::lead; docs/scheduling.md, "Lead dispatch"). Off by default, and then
// the executor neither registers nor has /lead: the admin only knows it from its group's fixed
// address list. On:
//  - it registers with every admin of `admin_urls` at start() and then every second
//    (api/registry: registryKey `app_name`, registryValue address(), leadDispatch true and a
//    clock estimate of 0 ms offset over a 0 ms round trip, since it runs on the admins' host and
//    clock), on a thread of its own, and removes the registration (api/registryRemove) at stop().
//    A refused or failed registration is tried again at the next second.
//  - POST /lead accepts every fire of the LeadRequest (a LeadAnswer listing all of them), except
//    one due more than protocol::kMaxLeadAheadMs ahead of this clock or at a negative fireAt,
//    which is refused with a message (a malformed request is answered as a malformed /run is). Accepted fires wait on a hierarchical timing wheel (1 ms tick, system clock), one
//    timer task per distinct fireAt, and each starts no earlier than its fireAt on the system
//    clock: it is then received exactly as a /run at that moment (a Receipt whose received_us is
//    when its start was taken, then the same hold and callback). A logId already held, or
//    already received (by /lead or /run), is accepted again and not held twice.
//  - POST /leadCancel answers each id as cancelled (held, now never started, no result),
//    started (received already) or unknown. /log says a held fire arrived, as for a received one.
// Lead fires still held at stop() never start and nothing is reported for them.
//
// Threading: receipts() and the counters from any thread. start() once; stop() is idempotent and
// gives the callback thread at most `flush_timeout` to deliver what is queued; runs still held
// then never end (as on an executor stopped mid-run).
class FakeExecutor {
 public:
  struct Options {
    std::vector<std::string> admin_urls;  // "http://127.0.0.1:PORT/", in order of preference
    std::string access_token;
    std::size_t worker_threads = 4;
    std::size_t max_batch = 1000;  // as the real executor's CallbackSender (its results are short)
    std::chrono::milliseconds hold{0};  // how long each run lasts, from its receipt to its result
    bool lead = false;     // take lead dispatch, and register to say so (see above)
    std::string app_name;  // the registration's registryKey; used only with `lead`
  };

  explicit FakeExecutor(Options options);
  ~FakeExecutor();

  FakeExecutor(const FakeExecutor&) = delete;
  FakeExecutor& operator=(const FakeExecutor&) = delete;

  void start();
  void stop(std::chrono::milliseconds flush_timeout) noexcept;

  // "http://127.0.0.1:PORT/" once started.
  std::string address() const;

  // Everything received so far (a copy), in order of arrival per worker.
  std::vector<Receipt> receipts() const;
  std::size_t received() const { return received_.load(); }
  // Of received(): runs that came as fires handed over by /lead, and runs posted to /run.
  std::uint64_t received_by_lead() const { return received_by_lead_.load(); }
  std::uint64_t received_by_run() const { return received_by_run_.load(); }
  // /lead requests answered success, and registrations an admin accepted.
  std::uint64_t lead_requests() const { return lead_requests_.load(); }
  std::uint64_t registrations() const { return registrations_.load(); }
  // Why the last refused or failed registration was (empty: none was).
  std::string last_registry_error() const;
  std::uint64_t callbacks_sent() const { return callbacks_sent_.load(); }
  std::uint64_t callback_requests() const { return callback_requests_.load(); }
  std::uint64_t callback_retries() const { return callback_retries_.load(); }
  // Results queued or being delivered; runs still held are not counted.
  std::size_t callbacks_queued() const;
  std::size_t held() const;

 private:
  // A run being held: its result is queued at `due_us`.
  struct Held {
    std::int64_t due_us = 0;
    std::size_t receipt = 0;  // index in receipts_
    common::protocol::HandleCallbackParam result;
    bool operator>(const Held& o) const { return due_us > o.due_us; }
  };

  // Fires handed over by /lead with the same fireAt: one timer task starts them all.
  struct LeadGroup {
    common::TimerHandle timer;
    std::vector<common::protocol::TriggerParam> fires;  // not cancelled
  };

  // A run received at `received_us` (epoch µs): its receipt (index in receipts_), then its start:
  // held for Options::hold, or its result queued at once.
  std::size_t note_receipt(const common::protocol::TriggerParam& trigger, std::int64_t received_us, bool by_lead,
                           std::int64_t lead_ahead_ms = 0);
  void start_run(std::size_t index, const common::protocol::TriggerParam& trigger, std::int64_t received_us);
  void end_run(std::size_t receipt, common::protocol::HandleCallbackParam result);
  void run_callbacks();
  void run_holds();
  void run_registry();
  // nullopt once stopping: the request is refused as a whole.
  std::optional<common::protocol::LeadAnswer> take_lead(const common::protocol::LeadRequest& request);
  common::protocol::LeadCancelAnswer cancel_lead(const common::protocol::LeadCancelParam& param);
  // The timer task of `fire_at`'s group (on the timer's worker, which logs what it throws).
  void start_lead_group(std::int64_t fire_at);
  // Schedules `fire_at`'s group's task for its instant. Under lead_mutex_.
  void schedule_lead_group(std::int64_t fire_at, LeadGroup& group);

  const Options options_;
  std::unique_ptr<common::http::HttpServer> server_;

  mutable std::mutex receipts_mutex_;
  std::vector<Receipt> receipts_;
  std::atomic<std::size_t> received_{0};
  std::atomic<std::uint64_t> received_by_lead_{0};
  std::atomic<std::uint64_t> received_by_run_{0};
  std::atomic<std::uint64_t> lead_requests_{0};
  std::atomic<std::uint64_t> registrations_{0};

  // Lead dispatch (only with options_.lead).
  std::unique_ptr<common::HierarchicalWheelTimer> lead_timer_;
  std::mutex lead_mutex_;
  std::unordered_map<std::int64_t, LeadGroup> lead_groups_;           // by fireAt (epoch ms)
  struct HeldLead {
    std::int64_t fire_at = 0;    // epoch ms
    std::int64_t handed_ms = 0;  // when its /lead request arrived (epoch ms)
  };
  std::unordered_map<std::int64_t, HeldLead> lead_held_;              // held log id -> when
  std::unordered_set<std::int64_t> lead_known_;                       // log ids held or received (/lead or /run)
  bool lead_stopped_ = false;                                         // no more scheduling on lead_timer_
  mutable std::mutex registry_error_mutex_;
  std::string registry_error_;
  std::condition_variable registry_wake_;                             // with queue_mutex_ and stopping_
  std::thread registry_thread_;

  mutable std::mutex queue_mutex_;
  std::condition_variable queue_changed_;
  std::vector<common::protocol::HandleCallbackParam> queue_;
  std::size_t in_flight_ = 0;
  std::priority_queue<Held, std::vector<Held>, std::greater<>> held_;  // guarded by queue_mutex_
  std::condition_variable held_changed_;
  std::thread hold_thread_;
  bool stopping_ = false;
  std::chrono::steady_clock::time_point flush_deadline_{};
  std::thread callback_thread_;
  std::atomic<std::uint64_t> callbacks_sent_{0};
  std::atomic<std::uint64_t> callback_requests_{0};
  std::atomic<std::uint64_t> callback_retries_{0};
  bool started_ = false;
  bool stopped_ = false;
};

}  // namespace cronwheel::bench
