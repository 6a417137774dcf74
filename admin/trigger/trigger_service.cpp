#include "admin/trigger/trigger_service.h"

#include <algorithm>
#include <exception>
#include <utility>

#include <spdlog/spdlog.h>

#include "admin/route/group_addresses.h"
#include "admin/model/store_errors.h"
#include "admin/trigger/delivery_check.h"
#include "common/protocol/constants.h"

namespace cronwheel::admin {

namespace protocol = common::protocol;

std::vector<std::string> split_addresses(const std::string& list) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    auto comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    auto first = list.find_first_not_of(" \t", start);
    auto last = list.find_last_not_of(" \t", comma == 0 ? 0 : comma - 1);
    if (first != std::string::npos && first < comma && last != std::string::npos && last >= first) {
      out.push_back(list.substr(first, last - first + 1));
    }
    start = comma + 1;
  }
  return out;
}

namespace {

// Where a fire's addresses came from, for the trigger message.
std::string_view source_of(const JobLog& log, const Group& group) {
  if (!log.executor_address.empty()) return "the fire's own list";
  return group.address_type == 1 ? "entered by hand" : "automatic registration";
}

std::string joined(const std::vector<std::string>& addresses) {
  std::string out;
  for (const auto& a : addresses) out += (out.empty() ? "" : ", ") + a;
  return out.empty() ? "(none)" : out;
}

// The trigger message of a log row: how the fire was routed and what the executor answered,
// one fact a line (XXL-JOB's triggerMsg, in English and without HTML).
class TriggerMessage {
 public:
  TriggerMessage(const TriggerStore::LoadedFire& fire, const std::string& node, const std::vector<std::string>& addresses) {
    const auto& [log, job, group] = fire;
    line("Trigger type", to_string(log.trigger_type));
    line("Admin node", node);
    line("Executor group", group.app_name);
    line("Addresses (" + std::string(source_of(log, group)) + ")", joined(addresses));
    line("Route strategy", to_string(job.executor_route_strategy));
    line("Block strategy", to_string(job.executor_block_strategy));
    line("Timeout", std::to_string(job.executor_timeout) + " s");
    line("Retries left", std::to_string(log.executor_fail_retry_count));
  }

  void line(std::string_view name, std::string_view value) {
    text_ += std::string(name) + ": " + std::string(value) + "\n";
  }
  void routing(const std::string& explanation) {
    if (!explanation.empty()) text_ += "Routing:\n" + explanation + "\n";
  }
  // The part written once the trigger happened (or could not).
  std::string with_trigger(const std::vector<std::pair<std::string, std::string>>& facts) const {
    std::string out = text_ + ">>>>>>>>>>> Trigger <<<<<<<<<<<\n";
    for (const auto& [name, value] : facts) out += name + ": " + value + "\n";
    if (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  }

 private:
  std::string text_;
};

protocol::TriggerParam trigger_param(const TriggerStore::LoadedFire& fire, const TriggerStore::Shard& shard,
                                     const std::string& handler, const std::string& param) {
  const auto& [log, job, group] = fire;
  protocol::TriggerParam p;
  p.job_id = static_cast<std::int32_t>(job.id);
  p.executor_handler = handler;
  p.executor_params = param;
  p.executor_block_strategy = to_string(job.executor_block_strategy);
  p.executor_timeout = job.executor_timeout;
  p.log_id = shard.log_id;
  p.log_date_time = log_date_time(log);
  p.glue_type = to_string(job.glue_type);
  p.glue_source = job.glue_source;
  p.glue_updatetime = job.glue_updated_at;
  p.broadcast_index = shard.shard_index;
  p.broadcast_total = shard.shard_total;
  return p;
}

std::string answer_msg(const ExecutorClient::Result& answer) { return answer.msg.empty() ? "(none)" : answer.msg; }

}  // namespace

TriggerService::TriggerService(TriggerStore& store, ExecutorClient& client, common::Clock& clock,
                               Options options)
    : store_(store), client_(client), clock_(clock), options_(std::move(options)), routes_(client, clock, options_.random) {
  if (options_.node_id.empty()) throw std::invalid_argument("TriggerService: no node id");
}

template <class F>
auto TriggerService::record(F&& write) -> decltype(write()) {
  auto backoff = options_.record_backoff;
  for (int attempt = 1;; ++attempt) {
    try {
      return write();
    } catch (const StoreUnavailable& e) {
      if (attempt >= options_.record_attempts) throw;
      spdlog::warn("trigger: database unreachable while recording a trigger (attempt {} of {}): {}", attempt,
                   options_.record_attempts, e.what());
    }
    clock_.sleep_until(clock_.steady_now() + backoff, std::stop_token{});
    backoff *= 2;
  }
}

SendOutcome TriggerService::send(const PendingFire& fire) noexcept {
  const auto started = clock_.steady_now();
  auto finish = [&](SendOutcome::Kind kind) {
    return SendOutcome{kind, std::chrono::duration_cast<std::chrono::milliseconds>(clock_.steady_now() - started)};
  };
  try {
    const std::string& node = options_.node_id;
    std::optional<TriggerStore::LoadedFire> loaded;
    try {
      loaded = store_.load_pending(fire.log_id, node);
    } catch (const std::exception& e) {
      spdlog::warn("trigger: fire {} of job {} stays pending, cannot read it: {}", fire.log_id, fire.job_id, e.what());
      return finish(SendOutcome::Kind::kDropped);
    }
    if (!loaded) {
      spdlog::debug("trigger: fire {} of job {} is no longer this node's to send", fire.log_id, fire.job_id);
      return finish(SendOutcome::Kind::kDropped);
    }
    return finish(send_loaded(*loaded, node).kind);
  } catch (const std::exception& e) {
    spdlog::error("trigger: sending fire {} of job {} failed: {}", fire.log_id, fire.job_id, e.what());
  } catch (...) {
    spdlog::error("trigger: sending fire {} of job {} failed", fire.log_id, fire.job_id);
  }
  return finish(SendOutcome::Kind::kDropped);
}

SendOutcome TriggerService::send_loaded(const TriggerStore::LoadedFire& fire, const std::string& node) {
  // Plain references, not a structured binding: the lambdas below use them, and clang before 16
  // cannot capture structured bindings.
  const JobLog& log = fire.log;
  const Job& job = fire.job;
  const Group& group = fire.group;
  std::vector<std::string> usable;
  std::vector<std::string> foreign;  // asked for, but not the group's: never sent to
  if (!log.executor_address.empty()) {
    for (auto& address : split_addresses(log.executor_address)) {
      (is_group_address(group, address) ? usable : foreign).push_back(std::move(address));
    }
  } else {
    for (const auto& address : group.address_list) {
      if (address.find_first_not_of(" \t") != std::string::npos) usable.push_back(address);
    }
  }
  const std::string token = group.access_token.value_or(options_.access_token);
  const std::string& handler = job.executor_handler;
  const std::string& param = log.executor_param.empty() ? job.executor_param : log.executor_param;
  TriggerMessage message(fire, node, usable);

  // Fails the still pending fire: nothing was sent.
  auto fail_pending = [&](const std::string& reason) {
    TriggerStore::Failure failure;
    failure.log_id = log.id;
    failure.node_id = node;
    failure.from = FireState::kPending;
    failure.now = clock_.now_ms();
    failure.trigger_msg = message.with_trigger({{"Failed", reason}});
    failure.executor_handler = handler;
    failure.executor_param = param;
    auto failed = record(
        [&] { return store_.record_failed(failure, follow_ups_of(RunEnd::kTriggerFailed, failure.now, node)); });
    spdlog::info("trigger: fire {} of job {} failed: {}", log.id, job.id, reason);
    return SendOutcome{failed.recorded == TriggerStore::Recorded::kRecorded ? SendOutcome::Kind::kFailed
                                                                            : SendOutcome::Kind::kDropped};
  };

  if (usable.empty() && !foreign.empty()) {
    return fail_pending("address " + foreign.front() + " is not an address of group " + group.app_name +
                        " (any more): the group's fires and access token go to its own executors only");
  }
  if (usable.empty()) return fail_pending("no executor address for group " + group.app_name);

  TriggerStore::Claim claim;
  claim.log_id = log.id;
  claim.node_id = node;
  claim.trigger_time = clock_.now_ms();
  claim.executor_handler = handler;
  claim.executor_param = param;
  if (log.shard_total > 1) {
    // One shard of a broadcast already expanded: only this shard, to its own executor.
    std::string target;
    if (!log.executor_address.empty() && usable.size() == 1) {
      target = usable.front();
    } else if (static_cast<std::size_t>(log.shard_index) < usable.size()) {
      target = usable[static_cast<std::size_t>(log.shard_index)];
    } else {
      return fail_pending("no executor for shard " + std::to_string(log.shard_index) + ": group " + group.app_name +
                          " has " + std::to_string(usable.size()) + " address(es)");
    }
    claim.addresses = {target};
    claim.shard_index = log.shard_index;
    claim.shard_total = log.shard_total;
  } else {
    RouteResult route;
    try {
      route = routes_.route(job.executor_route_strategy, RouteRequest{job.id, usable, token});
    } catch (const std::exception& e) {
      route = RouteResult::failed(std::string("routing failed: ") + e.what());
    }
    if (!route.ok) return fail_pending(route.message.empty() ? "routing found no executor" : route.message);
    message.routing(route.message);
    claim.addresses = std::move(route.addresses);
  }

  claim.min_lease_ms = options_.lease_margin.count();
  TriggerStore::Claimed claimed;
  const auto claimed_at = clock_.steady_now();  // before the claim commits: errs on the early side
  try {
    claimed = store_.claim(claim);
  } catch (const std::exception& e) {
    spdlog::warn("trigger: fire {} of job {} stays pending, cannot claim it: {}", log.id, job.id, e.what());
    return {SendOutcome::Kind::kDropped};
  }
  const auto& shards = claimed.shards;
  if (shards.empty()) {
    spdlog::debug("trigger: fire {} of job {} not claimed: taken over, cancelled, or this node's lease is ending",
                  log.id, job.id);
    return {SendOutcome::Kind::kDropped};
  }
  // The last moment a POST may start (see Options::send_deadline).
  auto send_by = claimed_at + options_.send_deadline;
  if (claimed.lease_left_ms) {
    send_by = std::min(send_by, claimed_at + std::chrono::milliseconds(*claimed.lease_left_ms) - options_.lease_margin);
  }

  int triggered = 0, failed = 0;
  for (const auto& shard : shards) {
    if (clock_.steady_now() >= send_by) {
      // Too late to send safely (Options::send_deadline): back to pending, for a later attempt.
      const std::string note = "Not sent: too late after the claim by " + node +
                               " (send deadline or lease end); back to pending";
      bool released = false;
      try {
        released = record([&] { return store_.release_claim(shard.log_id, node, note); });
      } catch (const std::exception& e) {
        spdlog::warn("trigger: run {} of job {} stays sending, cannot release it: {}", shard.log_id, job.id, e.what());
      }
      spdlog::warn("trigger: run {} of job {} not sent: too late after its claim{}", shard.log_id, job.id,
                   released ? ", back to pending" : "");
      continue;
    }
    std::vector<std::pair<std::string, std::string>> facts;
    if (shard.shard_total > 1) {
      facts.emplace_back("Shard", std::to_string(shard.shard_index) + " of " + std::to_string(shard.shard_total));
    }
    facts.emplace_back("Address", shard.address);
    ExecutorClient::Result answer;
    try {
      answer = client_.run(shard.address, token, trigger_param(fire, shard, handler, param));
    } catch (const std::exception& e) {  // the client promises not to throw; a fake might
      answer = ExecutorClient::Result::fail(e.what());
    }
    facts.emplace_back("Code", std::to_string(answer.code));
    facts.emplace_back("Msg", answer_msg(answer));

    bool accepted = answer.is_success();
    RunEnd end = RunEnd::kTriggerFailed;
    if (answer.code == protocol::kTimeoutCode) {
      // The request went out and no answer came: ask before anything is sent again.
      auto check = check_delivery(client_, shard.address, token, shard.log_id, log_date_time(log));
      facts.emplace_back("Delivery check", check.message);
      accepted = check.kind == DeliveryCheck::Kind::kDelivered;
      if (check.kind == DeliveryCheck::Kind::kUnknown) {
        end = RunEnd::kDeliveryUnknown;
        facts.emplace_back("Failed", "delivery unknown: executor " + shard.address +
                                         " did not answer /run nor /log; not retried, it may be running");
      }
    }

    if (accepted) {
      auto recorded = record([&] { return store_.record_triggered(shard.log_id, node, message.with_trigger(facts)); });
      if (recorded == TriggerStore::Recorded::kNotOurs) {
        spdlog::warn("trigger: run {} of job {} was accepted by {} but is no longer this node's", shard.log_id, job.id,
                     shard.address);
      } else {
        ++triggered;
      }
      continue;
    }
    TriggerStore::Failure failure;
    failure.log_id = shard.log_id;
    failure.node_id = node;
    failure.from = FireState::kSending;
    failure.now = clock_.now_ms();
    failure.trigger_msg = message.with_trigger(facts);
    auto result = record([&] { return store_.record_failed(failure, follow_ups_of(end, failure.now, node)); });
    if (result.recorded == TriggerStore::Recorded::kRecorded) ++failed;
    spdlog::info("trigger: run {} of job {} failed at {}: {}{}", shard.log_id, job.id, shard.address, answer_msg(answer),
                 result.fires.empty() ? "" : ", retry " + std::to_string(result.fires.front().id) + " scheduled");
  }
  if (failed > 0) return {SendOutcome::Kind::kFailed};
  return {triggered > 0 ? SendOutcome::Kind::kTriggered : SendOutcome::Kind::kDropped};
}

}  // namespace cronwheel::admin
