#include "admin/scheduler/fire_takeover.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <iterator>
#include <thread>

#include <spdlog/spdlog.h>

#include "admin/scheduler/fire_decision.h"
#include "admin/trigger/delivery_check.h"

namespace cronwheel::admin {

namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

ScheduleStore::Delivery delivery_of(DeliveryCheck::Kind kind) {
  switch (kind) {
    case DeliveryCheck::Kind::kDelivered:
      return ScheduleStore::Delivery::kDelivered;
    case DeliveryCheck::Kind::kNotDelivered:
      return ScheduleStore::Delivery::kNotDelivered;
    case DeliveryCheck::Kind::kUnknown:
      break;
  }
  return ScheduleStore::Delivery::kUnknown;
}

}  // namespace

FireTakeover::FireTakeover(ScheduleStore& store, ExecutorClient& executors, common::Clock& clock,
                           std::string node_id, std::string default_access_token, std::int64_t window_ms,
                           FinishedRuns* finished_runs)
    : store_(store), executors_(executors), clock_(clock), node_id_(std::move(node_id)),
      default_access_token_(std::move(default_access_token)), window_ms_(window_ms), finished_runs_(finished_runs) {}

FireTakeover::Report FireTakeover::take_over(const std::vector<std::string>& dead_nodes) {
  Report report;
  std::vector<std::string> dead;
  std::copy_if(dead_nodes.begin(), dead_nodes.end(), std::back_inserter(dead),
               [&](const std::string& n) { return n != node_id_; });

  std::vector<SendingFire> sending = std::move(unresolved_);
  unresolved_.clear();
  if (!dead.empty()) {
    ScheduleStore::Takeover taken;
    try {
      taken = store_.take_over(dead, node_id_);
    } catch (...) {
      unresolved_ = std::move(sending);
      throw;
    }
    report.pending = taken.pending.size();
    take_pending(taken.pending, dead, report);
    if (!taken.pending.empty() || !taken.sending.empty()) {
      spdlog::warn("scheduler: took over {} pending and {} sending fires of dead admin node(s) {}; {} late pending "
                   "fires cancelled by their jobs' misfire strategies",
                   report.pending, taken.sending.size(), joined(dead), report.cancelled);
    }
    sending.insert(sending.end(), taken.sending.begin(), taken.sending.end());
  }

  resolve_all(sending, report);
  std::sort(report.to_send.begin(), report.to_send.end(), due_order);
  return report;
}

FireTakeover::Report FireTakeover::recover_earlier_process() {
  Report report;
  const ScheduleStore::Takeover taken = store_.take_over({node_id_}, node_id_);
  if (!taken.sending.empty()) {
    spdlog::warn("scheduler: node {} restarted while an earlier process of it was sending {} fires; asking their "
                 "executors whether they have them",
                 node_id_, taken.sending.size());
  }
  resolve_all(taken.sending, report);
  std::sort(report.to_send.begin(), report.to_send.end(), due_order);
  return report;
}

void FireTakeover::take_pending(const std::vector<PendingFireRow>& pending, const std::vector<std::string>& dead,
                                Report& report) {
  const std::int64_t now = clock_.now_ms();
  LateFiresVerdict verdict = judge_late_fires(pending, now, window_ms_);
  if (verdict.cancel.empty()) {
    report.to_send = std::move(verdict.send);
    return;
  }
  const std::string why = (dead.size() == 1 ? "admin node " + dead[0] : "one of the admin nodes " + joined(dead)) +
                          " died before sending this fire and " + node_id_ + " took it over; ";
  for (auto& skipped : verdict.cancel) skipped.message = why + skipped.message;
  try {
    const auto plan = follow_ups_of(RunEnd::kMisfireSkipped, now, node_id_);
    report.cancelled =
        count_finished(finished_runs_, FireState::kCancelled, plan, [&](const FollowUpPlanner& counted) {
          return store_.cancel_pending(verdict.cancel, node_id_, counted);
        }).size();
  } catch (const std::exception& e) {
    // Sending the rest now could send a FIRE_ONCE_NOW job's newest late fire while its older
    // ones stay pending; the feeder applies the rule to all of them at its next pass.
    spdlog::error("scheduler: cancelling {} late fires taken over failed; the feeder judges them again: {}",
                  verdict.cancel.size(), e.what());
    return;
  }
  report.to_send = std::move(verdict.send);
}

void FireTakeover::resolve_all(const std::vector<SendingFire>& sending, Report& report) {
  if (sending.empty()) return;
  // The executors are asked concurrently: a node that dies under load was sending up to a
  // second's fires (claimed ahead of their instant), and asked one after another they would
  // come back pending only once they are later than the misfire threshold.
  std::vector<DeliveryCheck> checks(sending.size());
  std::atomic<std::size_t> next{0};
  auto ask = [&] {
    for (std::size_t i = next++; i < sending.size(); i = next++) {
      const SendingFire& fire = sending[i];
      const std::string token = executor_token(fire.access_token, default_access_token_);
      // The run is sent with its logical time as logDateTime (TriggerService, log_date_time:
      // its scheduled time unless it has one), which names the executor's log file: ask with
      // the same.
      checks[i] = check_delivery(executors_, fire.executor_address, token, fire.fire.log_id,
                                 fire.logical_time.value_or(fire.fire.scheduled_time));
    }
  };
  {
    std::vector<std::jthread> askers;
    const std::size_t threads = std::min(kConcurrentChecks, sending.size()) - 1;  // besides this one
    for (std::size_t t = 0; t < threads; ++t) askers.emplace_back(ask);
    ask();
  }
  for (std::size_t i = 0; i < sending.size(); ++i) {
    if (!resolve(sending[i], checks[i], report)) unresolved_.push_back(sending[i]);
  }
}

bool FireTakeover::resolve(const SendingFire& fire, const DeliveryCheck& check, Report& report) {
  const auto delivery = delivery_of(check.kind);

  std::string message;
  switch (delivery) {
    case ScheduleStore::Delivery::kDelivered:
      message = "admin node " + fire.dead_node + " died while sending; executor " + fire.executor_address +
                " has the run, so it was delivered (recovered by " + node_id_ + ")";
      break;
    case ScheduleStore::Delivery::kNotDelivered:
      message = "admin node " + fire.dead_node + " died while sending; executor " + fire.executor_address +
                " has no such run, so " + node_id_ + " sends it again";
      break;
    case ScheduleStore::Delivery::kUnknown:
      message = "delivery unknown: admin node " + fire.dead_node + " died while sending and executor " +
                fire.executor_address + " does not answer (" + check.message +
                "); not sent again, it may be running. If the executor does not have it, the lost-result check "
                "closes it";
      break;
  }
  try {
    if (!store_.resolve_sending(fire.fire.log_id, node_id_, delivery, message)) return true;  // moved on meanwhile
  } catch (const std::exception& e) {
    spdlog::error("scheduler: recording the recovery of fire {} failed, trying again later: {}", fire.fire.log_id,
                  e.what());
    return false;
  }
  switch (delivery) {
    case ScheduleStore::Delivery::kDelivered:
      ++report.delivered;
      break;
    case ScheduleStore::Delivery::kNotDelivered:
      ++report.resent;
      report.to_send.push_back(fire.fire);
      break;
    case ScheduleStore::Delivery::kUnknown:
      ++report.unknown;
      spdlog::warn("scheduler: fire {} of job {}: {}", fire.fire.log_id, fire.fire.job_id, message);
      break;
  }
  return true;
}

}  // namespace cronwheel::admin
