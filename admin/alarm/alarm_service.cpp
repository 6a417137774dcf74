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

AlarmService::AlarmService(AlarmStore& store, const AlarmDelivery& delivery, common::RecurringTasks& tasks,
                           Options options, WorkflowStore* workflows)
    : store_(store),
      workflows_(workflows),
      delivery_(delivery),
      clock_(tasks.clock()),
      options_(checked(std::move(options))),
      task_(tasks, {"alarms", options_.interval}, [this](std::stop_token stop) { pass(std::move(stop)); }) {}

AlarmService::~AlarmService() { stop(); }

AlarmService::Counters AlarmService::counters() const noexcept { return {sent_.load(), failed_.load(), retried_.load()}; }

int AlarmService::pass_once(std::stop_token stop) {
  int sent = 0;
  // Alarms with a retry due, in the order they failed; the others wait on.
  std::vector<Alarm> waiting = std::move(waiting_);
  waiting_.clear();
  for (auto& alarm : waiting) {
    if (stop.stop_requested()) {
      waiting_.push_back(std::move(alarm));
      continue;
    }
    if (attempt(alarm, stop)) ++sent;
    if (!alarm.left.empty()) waiting_.push_back(std::move(alarm));
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
    Alarm alarm;
    alarm.what = "job " + std::to_string(claim.job.id);
    alarm.sent_note = std::to_string(claim.runs_total) + " run(s), first " +
                      std::to_string(claim.runs.empty() ? 0 : claim.runs.front().id);
    alarm.finish = [this, job = claim.job.id, at = claim.claimed_at](AlarmOutcome outcome) {
      store_.finish(job, at, outcome, clock_.now_ms());
    };
    alarm.text = render_alarm(claim, text_options);
    alarm.webhook_body = alarm_webhook_body(claim, alarm.text, text_options);
    for (auto& to : destinations(claim)) alarm.left.push_back({std::move(to), 0, 0});
    if (alarm.left.empty()) {  // its addresses or channels went away after the claim
      spdlog::warn("alarms: job {} has nowhere to send its alarm any more; recorded failed", claim.job.id);
    }
    if (send_new(std::move(alarm), stop)) ++sent;
  }
  if (workflows_ != nullptr && !stop.stop_requested()) sent += workflow_alarms(stop);
  if (options_.clock_bound_ms > 0 && !stop.stop_requested()) sent += clock_alarms(stop);
  return sent;
}

int AlarmService::clock_alarms(std::stop_token stop) {
  int sent = 0;
  const AlarmTextOptions text_options{options_.console_url, options_.node_id};
  for (auto& claimed : store_.claim_clock_alarms(clock_.now_ms(), options_.clock_bound_ms, options_.stale.count(),
                                                 options_.max_jobs)) {
    Alarm alarm;
    alarm.what = "the clock of executor " + claimed.address;
    alarm.sent_note = "app " + claimed.app_name + ", " + std::to_string(claimed.offset_ms) + " ms";
    alarm.finish = [this, id = claimed.registration_id, at = claimed.claimed_at](AlarmOutcome outcome) {
      store_.finish_clock_alarm(id, at, outcome);
    };
    alarm.text = render_clock_alarm(claimed, options_.clock_bound_ms, text_options);
    alarm.webhook_body = clock_alarm_webhook_body(claimed, options_.clock_bound_ms, alarm.text, text_options);
    for (const auto& channel : claimed.channels) alarm.left.push_back({AlarmDestination::of(channel), 0, 0});
    if (send_new(std::move(alarm), stop)) ++sent;
  }
  return sent;
}

int AlarmService::workflow_alarms(std::stop_token stop) {
  int sent = 0;
  const AlarmTextOptions text_options{options_.console_url, options_.node_id};
  for (auto& claimed : workflows_->claim_alarms(clock_.now_ms(), options_.stale.count(), options_.max_jobs)) {
    Alarm alarm;
    alarm.what = "workflow run " + std::to_string(claimed.run.run.id);
    alarm.sent_note = "workflow " + claimed.workflow.name;
    alarm.finish = [this, run = claimed.run.run.id, at = claimed.claimed_at](AlarmOutcome outcome) {
      workflows_->finish_alarm(run, at, outcome);
    };
    alarm.text = render_workflow_alarm(claimed, text_options);
    alarm.webhook_body = workflow_alarm_webhook_body(claimed, alarm.text, text_options);
    if (!claimed.workflow.alarm_email.empty()) {
      AlarmDestination to;
      to.name = "alarmEmail";
      to.kind = AlarmChannelKind::kEmail;
      to.target = claimed.workflow.alarm_email;
      alarm.left.push_back({std::move(to), 0, 0});
    }
    for (const auto& channel : claimed.channels) alarm.left.push_back({AlarmDestination::of(channel), 0, 0});
    if (send_new(std::move(alarm), stop)) ++sent;
  }
  return sent;
}

bool AlarmService::send_new(Alarm alarm, std::stop_token stop) {
  if (alarm.left.empty()) alarm.gave_up = true;  // its destinations went away since the claim
  const bool sent = attempt(alarm, stop);
  if (!alarm.left.empty()) waiting_.push_back(std::move(alarm));
  waiting_count_ = waiting_.size();
  return sent;
}

bool AlarmService::attempt(Alarm& alarm, std::stop_token stop) {
  const std::int64_t now = clock_.now_ms();
  std::vector<Destination> left;
  for (auto& destination : alarm.left) {
    if (destination.next_try_at > now || stop.stop_requested()) {
      left.push_back(std::move(destination));
      continue;
    }
    if (destination.attempts > 0) ++retried_;
    ++destination.attempts;
    std::string error;
    bool retry = true;
    try {
      delivery_.deliver(destination.to, alarm.text, alarm.webhook_body);
    } catch (const AlarmDelivery::NotConfigured& e) {
      error = e.what();
      retry = false;
      if (!warned_not_configured_) {
        warned_not_configured_ = true;
        spdlog::warn("alarms: {} alarm to its {}: {}; such alarms, now and later, are recorded failed", alarm.what,
                     destination.to.name, error);
      }
    } catch (const std::exception& e) {
      error = e.what();
    }
    if (error.empty()) {
      spdlog::info("alarms: {} alarm sent to its {} ({})", alarm.what, destination.to.name, alarm.sent_note);
      continue;
    }
    if (retry && destination.attempts < options_.send_attempts) {
      auto delay = options_.retry_delay;
      for (int i = 1; i < destination.attempts; ++i) delay *= 2;
      destination.next_try_at = now + delay.count();
      spdlog::warn("alarms: {} alarm not sent to its {} (try {} of {}): {}; trying again in {} ms", alarm.what,
                   destination.to.name, destination.attempts, options_.send_attempts, error, delay.count());
      left.push_back(std::move(destination));
      continue;
    }
    alarm.gave_up = true;
    if (retry) {
      spdlog::error("alarms: {} alarm ({}) to its {} given up after {} tries: {}", alarm.what, alarm.sent_note,
                    destination.to.name, destination.attempts, error);
    }
  }
  alarm.left = std::move(left);
  if (!alarm.left.empty()) return false;
  const auto outcome = alarm.gave_up ? AlarmOutcome::kFailed : AlarmOutcome::kSent;
  alarm.finish(outcome);
  if (alarm.gave_up) {
    ++failed_;
    return false;
  }
  ++sent_;
  return true;
}

void AlarmService::pass(std::stop_token stop) noexcept {
  try {
    pass_once(std::move(stop));
  } catch (const std::exception& e) {
    spdlog::error("alarms: pass failed: {}; trying again in {} ms", e.what(), options_.interval.count());
  }
}

}  // namespace cronwheel::admin
