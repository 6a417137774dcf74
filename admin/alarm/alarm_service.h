#pragma once

#include <functional>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <stop_token>
#include <string>
#include <vector>

#include "admin/alarm/alarm_delivery.h"
#include "admin/alarm/alarm_message.h"
#include "admin/model/alarm_store.h"
#include "admin/model/workflow_store.h"
#include "common/timer/recurring_task.h"
#include "common/util/clock.h"

namespace cronwheel::admin {

// Sends the alarms of runs that ended badly (docs/alarms.md), every `interval`:
//
//  1. Destinations whose send failed earlier and whose retry is due are tried again. Each
//     destination of an alarm gets `send_attempts` tries, `retry_delay` apart, doubling.
//  2. New claims are made (AlarmStore::claim: at most one alarm per job per `quiet` period,
//     with every run since in it) and each is sent: one message per job to each of its
//     destinations (admin/alarm/alarm_delivery.h: the job's alarmEmail addresses, the channels
//     of its group and of itself).
//  3. Workflow runs that failed or timed out are claimed (WorkflowStore::claim_alarms) and each
//     is sent, one message per run, to its workflow's alarmEmail addresses and the channels of
//     its group, with the same tries.
//  4. Executors whose clock is off the admin's by more than Options::clock_bound_ms are claimed
//     (AlarmStore::claim_clock_alarms: once per drift, across nodes) and each is sent to the
//     channels of the groups of its app name, with the same tries.
// An alarm is done when every destination took it or ran out of tries: its runs are then
// recorded sent (alarm_status 2, counted in `sent`) when all took it, failed otherwise (3,
// counted in `failed`).
//
// Once: the store hands a run to one node only; this node records the outcome when its
// destinations have answered. A node that dies between its claim and that record leaves the runs claimed, and
// after `stale` another node claims and sends them again: an alarm is sent once, or twice when
// its node died while sending. So `stale` must be longer than all of an alarm's tries: the
// constructor checks it.
//
// Without a mailer (no SMTP server configured) mail destinations fail at once, without retries;
// the first time is logged as a warning that says so.
//
// Threading: the passes are a common::RecurringTask on the node's timer, running on a lane of
// their own, which owns the store calls, the sends and the retries waiting in memory. The
// counters may be read from any thread. stop() cancels the next pass and waits for one under
// way (a send in progress finishes); alarms waiting for a retry are left claimed, and another
// node (or this one, restarted) sends them once their claim is stale. A failed pass (store
// unreachable) is logged and tried again at the next interval.
class AlarmService {
 public:
  struct Options {
    std::string node_id;
    std::chrono::milliseconds interval{5'000};
    std::chrono::milliseconds quiet{300'000};
    std::chrono::milliseconds stale{600'000};
    int max_jobs = 100;    // per claim
    int runs_listed = 20;  // per message; the rest are counted
    int send_attempts = 4;
    std::chrono::milliseconds retry_delay{10'000};
    std::string console_url;  // links to runs (AlarmTextOptions)
    // Executors whose clock is off the admin's by more than this alarm the channels of their
    // groups (4. above); 0: never. The bound cronwheel executors refuse lead dispatch beyond by
    // default, and RegistryMonitor's warning.
    std::int64_t clock_bound_ms = 1'000;
  };

  struct Counters {
    std::uint64_t sent = 0;     // alarms every destination took
    std::uint64_t failed = 0;   // alarms a destination never took (every try failed, or no mailer)
    std::uint64_t retried = 0;  // tries of a destination after a failed one
  };

  // `store`, `delivery` and `tasks` (the node's timer and clock) must outlive the service.
  // Throws std::invalid_argument for non-positive durations or counts, or a `stale` shorter
  // than an alarm's tries take.
  // `workflows`, when given, also has its failed and timed-out workflow runs alarmed, in the same
  // passes, with the same destinations' tries (WorkflowStore::claim_alarms); it must outlive
  // the service.
  AlarmService(AlarmStore& store, const AlarmDelivery& delivery, common::RecurringTasks& tasks, Options options,
               WorkflowStore* workflows = nullptr);
  ~AlarmService();  // stop()

  AlarmService(const AlarmService&) = delete;
  AlarmService& operator=(const AlarmService&) = delete;

  void start() { task_.start(); }
  void stop() noexcept { task_.stop(); }
  // A pass as soon as the lane is free (a run just ended badly).
  void wake() noexcept { task_.wake(); }

  // One pass, as the lane does it. Returns the alarms sent. Throws what the store throws.
  int pass_once(std::stop_token stop = {});

  Counters counters() const noexcept;
  // Alarms waiting for a retry of one of their destinations.
  std::size_t waiting() const noexcept { return waiting_count_.load(); }

 private:
  struct Destination {
    AlarmDestination to;
    int attempts = 0;
    std::int64_t next_try_at = 0;  // epoch ms
  };
  struct Alarm {
    std::string what;  // for log lines: "job 7", "workflow run 12"
    std::string sent_note;  // for the log line of a destination that took it
    std::function<void(AlarmOutcome)> finish;  // records the outcome in the store
    AlarmText text;
    std::string webhook_body;
    std::vector<Destination> left;  // not taken yet, with tries left
    bool gave_up = false;           // a destination ran out of tries
  };

  // Tries the destinations of `alarm` that are due; records the alarm once none is left. True
  // when it was recorded sent.
  bool attempt(Alarm& alarm, std::stop_token stop);
  // A claimed alarm's first tries: attempt(), then it waits for its retries when a destination
  // is left; one with no destination at all is recorded failed. True when it was recorded sent.
  bool send_new(Alarm alarm, std::stop_token stop);
  void pass(std::stop_token stop) noexcept;

  // Claims workflow runs' alarms and sends them (the same tries as jobs').
  int workflow_alarms(std::stop_token stop);
  // Claims executors' clock alarms and sends them (the same tries as jobs').
  int clock_alarms(std::stop_token stop);

  AlarmStore& store_;
  WorkflowStore* workflows_;
  const AlarmDelivery& delivery_;
  common::Clock& clock_;
  const Options options_;
  std::vector<Alarm> waiting_;  // the lane's
  std::atomic<std::size_t> waiting_count_{0};
  std::atomic<std::uint64_t> sent_{0}, failed_{0}, retried_{0};
  bool warned_not_configured_ = false;  // the lane's
  common::RecurringTask task_;     // last: its lane uses the members above
};

}  // namespace cronwheel::admin
