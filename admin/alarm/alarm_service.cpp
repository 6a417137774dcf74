#include "admin/alarm/alarm_service.h"

#include <algorithm>
#include <exception>
#include <stdexcept>
#include <utility>

#include <spdlog/spdlog.h>

namespace cronwheel::admin {

namespace {

AlarmService::Options checked(AlarmService::Options o) {
  if (o.interval.count() <= 0 || o.quiet.count() < 0 || o.stale.count() <= 0 || o.retry_delay.count() <= 0) {
    throw std::invalid_argument("alarm service: intervals must be positive");
  }
  if (o.max_jobs <= 0 || o.runs_listed <= 0 || o.send_attempts <= 0) {
    throw std::invalid_argument("alarm service: max_jobs, runs_listed and send_attempts must be positive");
  }
  // Every try of an alarm ends before its claim can be taken over: the retry delays, doubling,
  // plus a pass interval of lateness for each try.
  std::chrono::milliseconds tries{0};
  auto delay = o.retry_delay;
  for (int i = 1; i < o.send_attempts; ++i, delay *= 2) tries += delay + o.interval;
  if (o.stale <= tries + o.interval) {
    throw std::invalid_argument("alarm service: the stale claim time (" + std::to_string(o.stale.count()) +
                                " ms) must be longer than an alarm's tries take (" +
                                std::to_string((tries + o.interval).count()) + " ms)");
  }
  return o;
}

}  // namespace

AlarmService::AlarmService(AlarmStore& store, Mailer* mailer, common::RecurringTasks& tasks, Options options)
    : store_(store),
      mailer_(mailer),
      clock_(tasks.clock()),
      options_(checked(std::move(options))),
      task_(tasks, {"alarms", options_.interval}, [this](std::stop_token stop) { pass(std::move(stop)); }) {}

AlarmService::~AlarmService() { stop(); }

AlarmService::Counters AlarmService::counters() const noexcept { return {sent_.load(), failed_.load(), retried_.load()}; }

int AlarmService::pass_once(std::stop_token stop) {
  int sent = 0;
  // Retries that are due, in the order they failed.
  const std::int64_t now = clock_.now_ms();
  std::vector<Waiting> due;
  auto keep = std::stable_partition(waiting_.begin(), waiting_.end(),
                                    [now](const Waiting& w) { return w.next_try_at > now; });
  std::move(keep, waiting_.end(), std::back_inserter(due));
  waiting_.erase(keep, waiting_.end());
  waiting_count_ = waiting_.size();
  for (auto& alarm : due) {
    if (stop.stop_requested()) {
      waiting_.push_back(std::move(alarm));
      continue;
    }
    ++retried_;
    if (attempt(std::move(alarm))) ++sent;
  }
  waiting_count_ = waiting_.size();
  if (stop.stop_requested()) return sent;

  AlarmStore::ClaimRequest request;
  request.now = clock_.now_ms();
  request.quiet_ms = options_.quiet.count();
  request.stale_ms = options_.stale.count();
  request.max_jobs = options_.max_jobs;
  request.runs_listed = options_.runs_listed;
  const AlarmTextOptions text_options{options_.console_url, options_.node_id};
  for (auto& claim : store_.claim(request)) {
    Waiting alarm;
    const AlarmText text = render_alarm(claim, text_options);
    alarm.mail.from = options_.from;
    alarm.mail.to = alarm_recipients(claim.job.alarm_email);
    alarm.mail.subject = text.subject;
    alarm.mail.body = text.body;
    alarm.claim = std::move(claim);
    if (attempt(std::move(alarm))) ++sent;
  }
  return sent;
}

bool AlarmService::attempt(Waiting alarm) {
  const AlarmClaim& claim = alarm.claim;
  std::string error;
  if (mailer_ == nullptr) {
    error = "no SMTP server is configured (--smtp-url)";
    alarm.attempts = options_.send_attempts;  // nothing to retry
  } else {
    ++alarm.attempts;
    try {
      mailer_->send(alarm.mail);
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  if (error.empty()) {
    store_.finish(claim.job.id, claim.claimed_at, AlarmOutcome::kSent, clock_.now_ms());
    ++sent_;
    spdlog::info("alarms: job {} alarm sent to {} ({} run(s), first {})", claim.job.id, claim.job.alarm_email,
                 claim.runs_total, claim.runs.empty() ? 0 : claim.runs.front().id);
    return true;
  }
  if (alarm.attempts < options_.send_attempts) {
    auto delay = options_.retry_delay;
    for (int i = 1; i < alarm.attempts; ++i) delay *= 2;
    alarm.next_try_at = clock_.now_ms() + delay.count();
    spdlog::warn("alarms: job {} alarm not sent (try {} of {}): {}; trying again in {} ms", claim.job.id,
                 alarm.attempts, options_.send_attempts, error, delay.count());
    waiting_.push_back(std::move(alarm));
    waiting_count_ = waiting_.size();
    return false;
  }
  store_.finish(claim.job.id, claim.claimed_at, AlarmOutcome::kFailed, clock_.now_ms());
  ++failed_;
  if (mailer_ != nullptr) {
    spdlog::error("alarms: job {} alarm about {} run(s) given up after {} tries: {}", claim.job.id, claim.runs_total,
                  alarm.attempts, error);
  } else if (!warned_no_mailer_) {
    warned_no_mailer_ = true;
    spdlog::warn("alarms: job {} has alarm addresses but {}: its alarms, and every later one, are recorded failed",
                 claim.job.id, error);
  }
  return false;
}

void AlarmService::pass(std::stop_token stop) noexcept {
  try {
    pass_once(std::move(stop));
  } catch (const std::exception& e) {
    spdlog::error("alarms: pass failed: {}; trying again in {} ms", e.what(), options_.interval.count());
  }
}

}  // namespace cronwheel::admin
