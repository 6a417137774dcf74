#include "admin/scheduler/schedule_thread.h"

#include <algorithm>
#include <chrono>
#include <exception>

#include <spdlog/spdlog.h>

namespace cronwheel::admin {

namespace {

constexpr std::int64_t kOneSecondMs = 1000;

std::int64_t to_next_second(std::int64_t now) {
  const std::int64_t into = ((now % kOneSecondMs) + kOneSecondMs) % kOneSecondMs;
  return kOneSecondMs - into;
}

}  // namespace

ScheduleThread::ScheduleThread(ScheduleStore& store, common::Clock& clock, std::string node_id, Sink sink,
                               Options options)
    : store_(store), clock_(clock), node_id_(std::move(node_id)), sink_(std::move(sink)), options_(options) {
  if (options_.calendars != nullptr) calendars_.emplace(*options_.calendars);
}

ScheduleThread::~ScheduleThread() { stop(); }

void ScheduleThread::start() {
  if (thread_.joinable()) return;
  thread_ = std::jthread([this](std::stop_token stop) { run(std::move(stop)); });
}

void ScheduleThread::stop() noexcept {
  if (!thread_.joinable()) return;
  thread_.request_stop();
  thread_.join();
}

void ScheduleThread::wake() {
  std::lock_guard lock(wake_mutex_);
  wake_requested_ = true;
  sleep_.request_stop();
}

ScheduleThread::ScanOutcome ScheduleThread::scan_once() {
  ScanOutcome outcome;
  const std::int64_t now = clock_.now_ms();
  const std::int64_t window = options_.window_ms;
  ScanDecision decided;
  static const ScanCalendars kNoCalendars;
  const ScanCalendars& calendars = calendars_ ? calendars_->calendars() : kNoCalendars;
  LoadShedder* const shedder = options_.shedder;
  const double keep = shedder != nullptr ? shedder->keep(now) : 1.0;
  std::size_t shed = 0, shed_jobs = 0;
  try {
    const auto scan_started = clock_.steady_now();
    auto result = store_.scan(node_id_, now + window, options_.pre_read_count,
                              [&](const std::vector<DueJob>& due) {
                                decided = decide_fires(due, now, window, calendars);
                                shed = shed_jobs = 0;
                                if (keep < 1.0) {
                                  const std::size_t records = decided.skipped.size();
                                  shed = shed_fires(decided, due, keep, now, shed_reason(keep));
                                  shed_jobs = decided.skipped.size() - records;
                                }
                                return decided;
                              });
    scan_seconds_.observe(std::chrono::duration<double>(clock_.steady_now() - scan_started).count());
    outcome.ok = true;
    outcome.jobs_read = result.jobs_read;
    outcome.fires = result.fires.size();
    outcome.full = result.jobs_read >= static_cast<std::size_t>(options_.pre_read_count);
    outcome.next_due = result.next_due;
    outcome.shed = shed;
    scans_.fetch_add(1, std::memory_order_relaxed);
    fires_.fetch_add(result.fires.size(), std::memory_order_relaxed);
    shed_.fetch_add(shed, std::memory_order_relaxed);
    keep_.store(keep, std::memory_order_relaxed);
    // What the scans decide, before shedding: the demand the shedder weighs its hand-offs by.
    if (shedder != nullptr) shedder->decided(result.fires.size() + shed, now);
    if (options_.finished_runs != nullptr) {
      for (auto group : result.misfire_groups) options_.finished_runs->add(group, FireState::kCancelled);
    }
    if (shed > 0 && !shedding_) {
      spdlog::warn("scheduler: this node is past its capacity: its scans keep {:.0f} % of the fire times due and "
                   "shed the rest (jobs with misfire strategy DO_NOTHING, lowest priority first), each job's as one "
                   "cancelled MISFIRE run",
                   keep * 100);
    } else if (shed == 0 && shedding_ && keep >= 1.0) {
      spdlog::info("scheduler: this node keeps up again; its scans shed no fires");
    }
    if (shed > 0) shedding_ = true;
    if (keep >= 1.0) shedding_ = false;
    if (result.misfire_records > shed_jobs) {
      spdlog::info("scheduler: {} job(s) missed fires by more than the misfire threshold; each has a cancelled "
                   "MISFIRE run saying how many its misfire strategy skipped or coalesced",
                   result.misfire_records - shed_jobs);
    }
    if (failing_) spdlog::info("scheduler: scans work again");
    failing_ = false;
    // Committed: only now may the fires be sent.
    if (!result.fires.empty()) sink_(result.fires);
  } catch (const std::exception& e) {
    failed_scans_.fetch_add(1, std::memory_order_relaxed);
    if (!failing_) spdlog::error("scheduler: scan failed, retrying every second: {}", e.what());
    failing_ = true;
    return outcome;
  }
  for (const auto& job : decided.jobs) {
    if (job.trigger_status == 0) spdlog::warn("scheduler: job {} stopped: {}", job.job_id, job.stop_reason);
  }
  // Jobs whose calendar this scan lacked wait for the next one, which has it.
  if (calendars_ && !decided.calendars_wanted.empty()) {
    try {
      calendars_->load(decided.calendars_wanted);
    } catch (const std::exception& e) {
      spdlog::error("scheduler: cannot read calendars, their jobs wait: {}", e.what());
    }
  }
  return outcome;
}

void ScheduleThread::run(std::stop_token stop) {
  while (!stop.stop_requested()) {
    {
      std::lock_guard lock(wake_mutex_);
      wake_requested_ = false;
    }
    const ScanOutcome outcome = scan_once();
    const std::int64_t now = clock_.now_ms();
    std::int64_t wait = 0;
    if (!outcome.ok || (outcome.jobs_read > 0 && !outcome.full)) {
      wait = to_next_second(now);
    } else if (outcome.jobs_read == 0) {
      // Wake at the last second boundary within the window: every job due before then was read.
      wait = std::max<std::int64_t>(to_next_second(now) + options_.window_ms - kOneSecondMs, 0);
      // Or sooner, a whole window before the next job is due, so that its fires are decided (and
      // a burst of them handed over) that far ahead rather than with what is left of the window.
      if (outcome.next_due) wait = std::clamp<std::int64_t>(*outcome.next_due - options_.window_ms - now, 0, wait);
    }
    if (wait <= 0) continue;

    std::stop_source sleep;
    {
      std::lock_guard lock(wake_mutex_);
      if (wake_requested_) continue;
      sleep_ = sleep;
    }
    std::stop_callback forward(stop, [&sleep] { sleep.request_stop(); });
    clock_.sleep_until(clock_.steady_now() + std::chrono::milliseconds(wait), sleep.get_token());
  }
}

ScheduleThread::Stats ScheduleThread::stats() const {
  return {scans_.load(std::memory_order_relaxed), failed_scans_.load(std::memory_order_relaxed),
          fires_.load(std::memory_order_relaxed), shed_.load(std::memory_order_relaxed),
          keep_.load(std::memory_order_relaxed), scan_seconds_.snapshot()};
}

std::string ScheduleThread::shed_reason(double keep) const {
  std::string late;
  if (options_.shedder != nullptr) {
    const auto s = options_.shedder->stats();
    if (s.last_late_ms > 0) late = " (the latest by " + std::to_string(s.last_late_ms) + " ms)";
  }
  return "admin node " + node_id_ + " is past its capacity, its fires handed over or sent late" + late +
         ", so its scans keep " + std::to_string(static_cast<int>(keep * 100 + 0.5)) +
         " % of the fires due and shed the rest";
}

}  // namespace cronwheel::admin
