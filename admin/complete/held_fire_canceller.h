#pragma once

// Takes back fires handed over ahead of their instant (lead dispatch, docs/scheduling.md) whose
// job was changed, stopped or deleted before that instant, so that a run never starts with what
// an operator has just changed, stopped or removed.
//
// held(job_id) reads, on the caller's thread, the job's runs an executor holds: `triggered`, their
// trigger time (their instant) still ahead (CompletionStore::held_runs). take_back(runs, reason,
// then) queues them; the canceller's thread then asks each executor for its runs in one POST
// /leadCancel (at most kMaxLeadFires ids a request, with the group's access token). Each run the
// executor gave back then becomes what `then` says (GivenBack):
//  - kSendAgain (the job was changed): back to pending for this node
//    (CompletionStore::return_not_started, its trigger message saying why), and the feeder sends it
//    again with the job as it is now, or applies its misfire strategy when it is late: a pending
//    fire of the job is sent with the change too, so the two agree;
//  - kCancel (the job was stopped): cancelled (CompletionStore::cancel_not_started), as the stop
//    cancelled the job's pending fires;
//  - kForget (the job was deleted): nothing to write, the runs went with it; the executors are
//    only asked to drop them (runs read before the deletion).
// A run the executor started meanwhile, or did not give back (it cannot be reached, it does not
// hold it), is left as it is: it runs as it was sent.
//
// Runs still `sending` are read too: claimed ahead of their instant, they may be on their way to
// the executor in a POST /lead at this moment (or held there, not yet recorded `triggered`). One
// such run its executor does not know yet is asked about again, up to in_flight_checks times,
// in_flight_wait apart, so a hand-over that crossed the change is still taken back (the thread
// waits meanwhile). One handed over to nobody (its executor refused it) is posted at its instant.
//
// Bounded: at most kMaxQueuedRuns runs wait; take_back() beyond that drops the rest with a warning
// (they run, as above). Never throws from take_back(); failures of the thread's calls are logged.
//
// Threading: take_back() from any thread; one thread of its own makes the calls, in queue order.
// stop() (and the destructor) ends it after the request under way; queued ones are dropped.
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "admin/model/completion_store.h"
#include "admin/model/executor_client.h"
#include "admin/model/records.h"
#include "common/util/clock.h"

namespace cronwheel::admin {

class HeldFireCanceller {
 public:
  static constexpr std::size_t kMaxQueuedRuns = 100'000;
  static constexpr int kMaxHeldRunsRead = 10'000;  // held runs of one job read at once

  struct Options {
    // This node's id: the owner of the runs sent again.
    std::string node_id;
    // The access token for an executor of `group_id`: the group's own, or the admin's.
    std::function<std::string(std::int64_t group_id)> token_of;
    // Runs `sending` that their executor did not know: asked about again this often, this far apart.
    int in_flight_checks = 5;
    std::chrono::milliseconds in_flight_wait{100};
  };

  // Everything given must outlive the canceller.
  HeldFireCanceller(CompletionStore& store, ExecutorClient& executors, common::Clock& clock, Options options);
  ~HeldFireCanceller();  // stop()

  HeldFireCanceller(const HeldFireCanceller&) = delete;
  HeldFireCanceller& operator=(const HeldFireCanceller&) = delete;

  // The job's runs held by executors now (see above). Throws what the store throws.
  std::vector<JobLog> held(std::int64_t job_id);
  // Queues `runs` to be taken back (see above). Returns at once.
  void take_back(std::vector<JobLog> runs, std::string reason, GivenBack then) noexcept;
  // The same for the held runs of each of `job_ids`, read on the canceller's thread (a group's
  // pause stops all its jobs at once: reading each one's held runs is not the API call's to wait
  // for). At most kMaxQueuedRuns jobs wait; beyond that the rest are dropped with a warning.
  void take_back_jobs(std::vector<std::int64_t> job_ids, std::string reason, GivenBack then) noexcept;

  // Blocks until everything queued so far has been handled (for tests).
  void wait_idle();
  void stop() noexcept;

  struct Counters {
    std::uint64_t asked = 0;      // runs asked back from their executors
    std::uint64_t cancelled = 0;  // given back before they started
    std::uint64_t sent_again = 0;  // of those, back to pending to be sent again (kSendAgain)
    std::uint64_t ended = 0;       // of those, ended cancelled (kCancel)
    std::uint64_t started = 0;    // started meanwhile: left to run
    std::uint64_t rechecked = 0;  // runs `sending` asked about again
  };
  Counters counters() const;

 private:
  struct Request {
    std::vector<std::int64_t> job_ids;  // whose held runs are read first (take_back_jobs)
    std::vector<JobLog> runs;
    std::string reason;
    GivenBack then = GivenBack::kForget;
  };
  void work();
  // Asks for the request's runs back and records what the executors gave back. Answers the runs
  // that were `sending` and that their executor did not know.
  std::vector<JobLog> handle(const Request& request) noexcept;
  // Asks again about runs handle() answered, while they stay in flight (see above).
  void recheck(std::vector<JobLog> in_flight, const Request& request) noexcept;

  CompletionStore& store_;
  ExecutorClient& executors_;
  common::Clock& clock_;
  const Options options_;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Request> queue_;
  std::size_t queued_runs_ = 0;
  bool busy_ = false;
  bool stopping_ = false;
  Counters counters_;
  std::thread worker_;  // last: it uses the members above
};

}  // namespace cronwheel::admin
