#include "admin/trigger/trigger_service.h"

#include <algorithm>
#include <exception>
#include <limits>
#include <unordered_set>
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

// A prepare slower than this is logged: the fires it holds are about to go out late.
constexpr std::chrono::milliseconds kSlowPrepare{250};

// Where a loaded fire goes and with what, before any executor is chosen.
struct TriggerService::Target {
  std::vector<std::string> usable;  // the addresses it may go to
  std::string failure;              // not empty: it cannot go anywhere, and why
  std::string token, handler, param;
  TriggerMessage message;
};

// A fire claimed ahead of its instant, ready to post (FireSender::prepare).
struct PreparedSend {
  TriggerStore::LoadedFire fire;
  TriggerStore::Shard shard;
  TriggerService::Target target;
  common::Clock::SteadyTime send_by;  // the last moment its POST may start
};

TriggerService::TriggerService(TriggerStore& store, ExecutorClient& client, common::Clock& clock,
                               Options options)
    : store_(store), client_(client), clock_(clock), options_(std::move(options)), routes_(client, clock, options_.random) {
  if (options_.node_id.empty()) throw std::invalid_argument("TriggerService: no node id");
  recorder_ = std::jthread([this](std::stop_token stop) { record_accepted(stop); });
}

TriggerService::~TriggerService() {
  recorder_.request_stop();
  {
    std::lock_guard lock(accepted_mutex_);
    accepted_changed_.notify_all();
  }
  recorder_.join();  // after writing what was queued
}

void TriggerService::enqueue_accepted(TriggerStore::Accepted accepted, std::int64_t job_id, std::string address) {
  std::lock_guard lock(accepted_mutex_);
  accepted_.push_back({std::move(accepted), job_id, std::move(address)});
  accepted_changed_.notify_all();
}

void TriggerService::flush() noexcept {
  std::unique_lock lock(accepted_mutex_);
  accepted_changed_.wait(lock, [&] { return accepted_.empty() && !recording_; });
}

void TriggerService::record_accepted(std::stop_token stop) {
  constexpr std::size_t kMaxBatch = 1'000;
  std::unique_lock lock(accepted_mutex_);
  for (;;) {
    accepted_changed_.wait(lock, [&] { return !accepted_.empty() || stop.stop_requested(); });
    if (accepted_.empty()) return;  // stopping, and everything is written
    std::vector<QueuedAccepted> batch;
    while (!accepted_.empty() && batch.size() < kMaxBatch) {
      batch.push_back(std::move(accepted_.front()));
      accepted_.pop_front();
    }
    recording_ = true;
    lock.unlock();
    std::vector<TriggerStore::Accepted> rows;
    rows.reserve(batch.size());
    for (const auto& q : batch) rows.push_back(q.accepted);
    try {
      auto recorded = record([&] { return store_.record_triggered_all(rows); });
      for (std::size_t i = 0; i < batch.size() && i < recorded.size(); ++i) {
        if (recorded[i] == TriggerStore::Recorded::kNotOurs) {
          spdlog::warn("trigger: run {} of job {} was accepted by {} but is no longer this node's",
                       batch[i].accepted.log_id, batch[i].job_id, batch[i].address);
        }
      }
    } catch (const std::exception& e) {
      // The rows stay `sending`: the executors' callbacks still complete them (a result may move
      // a sending run), and a node taking them over asks the executors.
      spdlog::error("trigger: {} accepted runs not recorded as triggered, they stay sending: {}", batch.size(), e.what());
    }
    lock.lock();
    recording_ = false;
    accepted_changed_.notify_all();
  }
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
    return finish(send_loaded(*loaded));
  } catch (const std::exception& e) {
    spdlog::error("trigger: sending fire {} of job {} failed: {}", fire.log_id, fire.job_id, e.what());
  } catch (...) {
    spdlog::error("trigger: sending fire {} of job {} failed", fire.log_id, fire.job_id);
  }
  return finish(SendOutcome::Kind::kDropped);
}

TriggerService::Target TriggerService::target_of(const TriggerStore::LoadedFire& fire) const {
  const JobLog& log = fire.log;
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
  Target t{usable, "", executor_token(group.access_token, options_.access_token), fire.job.executor_handler,
           log.executor_param.empty() ? fire.job.executor_param : log.executor_param,
           TriggerMessage(fire, options_.node_id, usable)};
  if (usable.empty() && !foreign.empty()) {
    t.failure = "address " + foreign.front() + " is not an address of group " + group.app_name +
                " (any more): the group's fires and access token go to its own executors only";
  } else if (usable.empty()) {
    t.failure = "no executor address for group " + group.app_name;
  }
  return t;
}

SendOutcome::Kind TriggerService::fail_pending(const TriggerStore::LoadedFire& fire, const Target& target,
                                               const std::string& reason) {
  TriggerStore::Failure failure;
  failure.log_id = fire.log.id;
  failure.node_id = options_.node_id;
  failure.from = FireState::kPending;
  failure.now = clock_.now_ms();
  failure.trigger_msg = target.message.with_trigger({{"Failed", reason}});
  failure.executor_handler = target.handler;
  failure.executor_param = target.param;
  auto failed = record(
      [&] { return store_.record_failed(failure, follow_ups_of(RunEnd::kTriggerFailed, failure.now, options_.node_id)); });
  spdlog::info("trigger: fire {} of job {} failed: {}", fire.log.id, fire.job.id, reason);
  if (failed.recorded == TriggerStore::Recorded::kRecorded && options_.finished_runs != nullptr) {
    options_.finished_runs->add(fire.log.job_group, FireState::kFailed);
  }
  return failed.recorded == TriggerStore::Recorded::kRecorded ? SendOutcome::Kind::kFailed : SendOutcome::Kind::kDropped;
}

TriggerStore::Claim TriggerService::claim_for(const TriggerStore::LoadedFire& fire, const Target& target,
                                              std::int64_t trigger_time) const {
  TriggerStore::Claim claim;
  claim.log_id = fire.log.id;
  claim.node_id = options_.node_id;
  claim.trigger_time = trigger_time;
  claim.executor_handler = target.handler;
  claim.executor_param = target.param;
  claim.min_lease_ms = options_.lease_margin.count();
  return claim;
}

common::Clock::SteadyTime TriggerService::send_by(common::Clock::SteadyTime claimed_at,
                                                  const TriggerStore::Claimed& claimed) const {
  auto by = claimed_at + options_.send_deadline;
  if (claimed.lease_left_ms) {
    by = std::min(by, claimed_at + std::chrono::milliseconds(*claimed.lease_left_ms) - options_.lease_margin);
  }
  return by;
}

SendOutcome::Kind TriggerService::wait_for_slot(const TriggerStore::LoadedFire& fire) {
  const std::string note = fire.group.max_running > 0
                               ? "waiting for a slot: group " + fire.group.app_name + " runs at most " +
                                     std::to_string(fire.group.max_running) + " at once"
                               : "waiting for a slot: job " + std::to_string(fire.job.id) + " runs at most " +
                                     std::to_string(fire.job.max_concurrent) + " at once";
  try {
    if (store_.wait_for_slot(fire.log.id, options_.node_id, note) && options_.slot_waiting) {
      options_.slot_waiting(fire.log.job_group);
    }
  } catch (const std::exception& e) {
    spdlog::warn("trigger: fire {} of job {} stays pending, cannot set it waiting for a slot: {}", fire.log.id,
                 fire.job.id, e.what());
  }
  return SendOutcome::Kind::kDropped;  // it goes out once a slot dispatcher admits it
}

SendOutcome::Kind TriggerService::send_loaded(const TriggerStore::LoadedFire& fire) {
  const JobLog& log = fire.log;
  const Job& job = fire.job;
  if (needs_slot(job, fire.group) && !log.slot_admitted) return wait_for_slot(fire);
  Target target = target_of(fire);
  if (!target.failure.empty()) return fail_pending(fire, target, target.failure);

  TriggerStore::Claim claim = claim_for(fire, target, clock_.now_ms());
  if (log.shard_total > 1) {
    // One shard of a broadcast already expanded: only this shard, to its own executor.
    std::string address;
    if (!log.executor_address.empty() && target.usable.size() == 1) {
      address = target.usable.front();
    } else if (static_cast<std::size_t>(log.shard_index) < target.usable.size()) {
      address = target.usable[static_cast<std::size_t>(log.shard_index)];
    } else {
      return fail_pending(fire, target,
                          "no executor for shard " + std::to_string(log.shard_index) + ": group " + fire.group.app_name +
                              " has " + std::to_string(target.usable.size()) + " address(es)");
    }
    claim.addresses = {address};
    claim.shard_index = log.shard_index;
    claim.shard_total = log.shard_total;
  } else {
    RouteResult route = route_among(fire, target, target.usable);
    if (!route.ok) return fail_pending(fire, target, route.message.empty() ? "routing found no executor" : route.message);
    target.message.routing(route.message);
    claim.addresses = std::move(route.addresses);
  }

  TriggerStore::Claimed claimed;
  const auto claimed_at = clock_.steady_now();  // before the claim commits: errs on the early side
  try {
    claimed = store_.claim(claim);
  } catch (const std::exception& e) {
    spdlog::warn("trigger: fire {} of job {} stays pending, cannot claim it: {}", log.id, job.id, e.what());
    return SendOutcome::Kind::kDropped;
  }
  if (claimed.shards.empty()) {
    spdlog::debug("trigger: fire {} of job {} not claimed: taken over, cancelled, or this node's lease is ending",
                  log.id, job.id);
    return SendOutcome::Kind::kDropped;
  }
  const auto by = send_by(claimed_at, claimed);
  int triggered = 0, failed = 0;
  for (const auto& shard : claimed.shards) {
    switch (post(fire, target, shard, by, Recording::kNow)) {
      case SendOutcome::Kind::kTriggered:
        ++triggered;
        break;
      case SendOutcome::Kind::kFailed:
        ++failed;
        break;
      case SendOutcome::Kind::kDropped:
        break;
    }
  }
  if (failed > 0) return SendOutcome::Kind::kFailed;
  return triggered > 0 ? SendOutcome::Kind::kTriggered : SendOutcome::Kind::kDropped;
}

RouteResult TriggerService::route_among(const TriggerStore::LoadedFire& fire, const Target& target,
                                       std::vector<std::string> addresses) {
  const auto strategy = fire.job.executor_route_strategy;
  // A broadcast's shards are every address, suspect or not: each shard is its executor's.
  if (options_.suspects != nullptr && strategy != RouteStrategy::kShardingBroadcast) {
    addresses = options_.suspects->usable(addresses);
  }
  try {
    return routes_.route(strategy, RouteRequest{fire.job.id, std::move(addresses), target.token});
  } catch (const std::exception& e) {
    return RouteResult::failed(std::string("routing failed: ") + e.what());
  }
}

std::optional<std::string> TriggerService::next_address(const TriggerStore::LoadedFire& fire, const Target& target,
                                                        const std::vector<std::string>& tried) {
  std::vector<std::string> left;
  for (const auto& address : target.usable) {
    if (std::find(tried.begin(), tried.end(), address) == tried.end()) left.push_back(address);
  }
  if (left.empty()) return std::nullopt;
  auto route = route_among(fire, target, std::move(left));
  if (!route.ok || route.addresses.size() != 1) return std::nullopt;
  return route.addresses.front();
}

SendOutcome::Kind TriggerService::post(const TriggerStore::LoadedFire& fire, const Target& target,
                                       const TriggerStore::Shard& claimed_shard, common::Clock::SteadyTime by,
                                       Recording when) {
  // The shard as it is finally sent: its address changes when an executor is not reached.
  TriggerStore::Shard shard = claimed_shard;
  const std::string& node = options_.node_id;
  const JobLog& log = fire.log;
  const Job& job = fire.job;
  // Too late to send safely (Options::send_deadline): back to pending, for a later attempt.
  if (clock_.steady_now() >= by) return release_late(fire, shard);
  std::vector<std::pair<std::string, std::string>> facts;
  if (shard.shard_total > 1) {
    facts.emplace_back("Shard", std::to_string(shard.shard_index) + " of " + std::to_string(shard.shard_total));
  }
  ExecutorClient::Result answer;
  std::vector<std::string> tried;
  for (;;) {
    try {
      answer = client_.run(shard.address, target.token, trigger_param(fire, shard, target.handler, target.param));
    } catch (const std::exception& e) {  // the client promises not to throw; a fake might
      answer = ExecutorClient::Result::fail(e.what());
    }
    if (answer.code != kNotReachedCode || shard.shard_total > 1) break;
    // Provably not delivered: the next address, if the group has one left and there is time.
    if (options_.suspects != nullptr) options_.suspects->mark(shard.address);
    tried.push_back(shard.address);
    auto next = next_address(fire, target, tried);
    if (!next || clock_.steady_now() >= by) break;
    const std::string note = "Not reached: " + shard.address + " (" + answer_msg(answer) + "); sent to " + *next;
    bool moved = false;
    try {
      moved = record([&] { return store_.move_claim(shard.log_id, node, shard.address, *next, note); });
    } catch (const std::exception& e) {
      spdlog::warn("trigger: run {} of job {} cannot move to {}: {}", shard.log_id, job.id, *next, e.what());
    }
    if (!moved) break;  // no longer this node's sending row at that address: recorded as it is
    spdlog::info("trigger: run {} of job {}: {} not reached ({}), sending to {}", shard.log_id, job.id, shard.address,
                 answer_msg(answer), *next);
    facts.emplace_back("Not reached", shard.address + ": " + answer_msg(answer));
    shard.address = *next;
  }
  facts.emplace_back("Address", shard.address);
  facts.emplace_back("Code", std::to_string(answer.code));
  facts.emplace_back("Msg", answer_msg(answer));

  bool accepted = answer.is_success();
  if (accepted) note_handoff(log);
  if (answer.code == protocol::kTimeoutCode) {
    // The request went out and no answer came: ask before anything is sent again.
    auto check = check_delivery(client_, shard.address, target.token, shard.log_id, log_date_time(log));
    facts.emplace_back("Delivery check", check.message);
    accepted = check.kind == DeliveryCheck::Kind::kDelivered;
    if (check.kind == DeliveryCheck::Kind::kUnknown) {
      // It may be running, or may never have arrived: neither failed nor sent again. It waits
      // for its result, and the lost-result check asks the executor about it.
      facts.emplace_back("Unconfirmed", "delivery unknown: executor " + shard.address +
                                            " answered neither /run nor /log; not sent again, it may be running. "
                                            "If the executor does not have it, the lost-result check closes it");
      auto recorded = record([&] { return store_.record_unconfirmed(shard.log_id, node, target.message.with_trigger(facts)); });
      spdlog::warn("trigger: run {} of job {} sent to {}, delivery unknown (no answer to /run nor /log)", shard.log_id,
                   job.id, shard.address);
      return recorded == TriggerStore::Recorded::kNotOurs ? SendOutcome::Kind::kDropped : SendOutcome::Kind::kTriggered;
    }
  }

  if (accepted && when == Recording::kLater) {
    enqueue_accepted({shard.log_id, node, target.message.with_trigger(facts)}, job.id, shard.address);
    return SendOutcome::Kind::kTriggered;
  }
  if (accepted) {
    auto recorded = record([&] { return store_.record_triggered(shard.log_id, node, target.message.with_trigger(facts)); });
    if (recorded == TriggerStore::Recorded::kNotOurs) {
      spdlog::warn("trigger: run {} of job {} was accepted by {} but is no longer this node's", shard.log_id, job.id,
                   shard.address);
      return SendOutcome::Kind::kDropped;
    }
    return SendOutcome::Kind::kTriggered;
  }
  TriggerStore::Failure failure;
  failure.log_id = shard.log_id;
  failure.node_id = node;
  failure.from = FireState::kSending;
  failure.now = clock_.now_ms();
  failure.trigger_msg = target.message.with_trigger(facts);
  auto result = record([&] { return store_.record_failed(failure, follow_ups_of(RunEnd::kTriggerFailed, failure.now, node)); });
  spdlog::info("trigger: run {} of job {} failed at {}: {}{}", shard.log_id, job.id, shard.address, answer_msg(answer),
               result.fires.empty() ? "" : ", retry " + std::to_string(result.fires.front().id) + " scheduled");
  if (result.recorded == TriggerStore::Recorded::kRecorded && options_.finished_runs != nullptr) {
    options_.finished_runs->add(log.job_group, FireState::kFailed);  // a broadcast's shards share it
  }
  if (!result.fires.empty() && options_.fires_written) options_.fires_written(result.fires);
  return result.recorded == TriggerStore::Recorded::kRecorded ? SendOutcome::Kind::kFailed : SendOutcome::Kind::kDropped;
}

SendOutcome::Kind TriggerService::release_late(const TriggerStore::LoadedFire& fire, const TriggerStore::Shard& shard) {
  const std::string& node = options_.node_id;
  const std::string note = "Not sent: too late after the claim by " + node + " (send deadline or lease end); back to pending";
  bool released = false;
  try {
    released = record([&] { return store_.release_claim(shard.log_id, node, note); });
  } catch (const std::exception& e) {
    spdlog::warn("trigger: run {} of job {} stays sending, cannot release it: {}", shard.log_id, fire.job.id, e.what());
  }
  spdlog::warn("trigger: run {} of job {} not sent: too late after its claim{}", shard.log_id, fire.job.id,
               released ? ", back to pending" : "");
  return SendOutcome::Kind::kDropped;
}

std::optional<std::string> TriggerService::lead_key(const PreparedFire& prepared) const noexcept {
  if (!prepared.send) return std::nullopt;
  return lead_key_of(prepared.send->shard.address, prepared.send->target.token);
}

std::optional<std::string> TriggerService::lead_key_of(const std::string& address, const std::string& token) const noexcept {
  if (!options_.takes_lead) return std::nullopt;
  try {
    if (!options_.takes_lead(address)) return std::nullopt;
    // Neither part holds a line feed: addresses are URLs and tokens are refused with one.
    return address + "\n" + token;
  } catch (...) {
    return std::nullopt;
  }
}

std::vector<std::optional<SendOutcome>> TriggerService::lead(const std::vector<PreparedFire>& fires,
                                                             const std::vector<std::int64_t>& fire_at) noexcept {
  std::vector<std::optional<SendOutcome>> out(fires.size());
  const auto started = clock_.steady_now();
  auto took = [&] { return std::chrono::duration_cast<std::chrono::milliseconds>(clock_.steady_now() - started); };
  try {
    for (std::size_t begin = 0; begin < fires.size(); begin += protocol::kMaxLeadFires) {
      const std::size_t end = std::min(fires.size(), begin + protocol::kMaxLeadFires);
      protocol::LeadRequest request;
      std::vector<std::size_t> sent;
      std::string address, token;
      for (std::size_t i = begin; i < end; ++i) {
        if (!fires[i].send) continue;  // not prepared ahead: delivered at its instant
        const auto& p = *fires[i].send;
        if (clock_.steady_now() >= p.send_by) {
          out[i] = SendOutcome{release_late(p.fire, p.shard), took()};
          continue;
        }
        address = p.shard.address;
        token = p.target.token;
        request.fires.push_back({fire_at[i], trigger_param(p.fire, p.shard, p.target.handler, p.target.param)});
        sent.push_back(i);
      }
      if (sent.empty()) continue;
      request.admin_time = clock_.now_ms();
      ExecutorClient::LeadResult answer;
      try {
        answer = client_.lead(address, token, request);
      } catch (const std::exception& e) {  // the client promises not to throw; a fake might
        answer = ExecutorClient::LeadResult::fail(e.what());
      }
      if (!answer.is_success() || !answer.content) {
        // Not handed over (refused, not reached, or no answer): each goes by /run at its instant,
        // which a fire held after all answers as received already.
        spdlog::debug("trigger: {} fires not handed over to {} ahead ({}); they go at their instant", sent.size(),
                      address, answer.msg.empty() ? std::string("no content") : answer.msg);
        continue;
      }
      std::unordered_set<std::int64_t> accepted(answer.content->accepted.begin(), answer.content->accepted.end());
      for (std::size_t i : sent) {
        const auto& p = *fires[i].send;
        if (accepted.count(p.shard.log_id) == 0) continue;  // refused: /run at its instant says why
        const std::int64_t ahead_ms = fire_at[i] - request.admin_time;
        const std::string handed =
            ahead_ms >= 0 ? "handed over " + std::to_string(ahead_ms) +
                                " ms ahead; the executor starts it at its instant, by its own clock"
                          : "handed over " + std::to_string(-ahead_ms) +
                                " ms after its instant, with others due; the executor starts it at once";
        std::vector<std::pair<std::string, std::string>> facts{
            {"Address", p.shard.address}, {"Lead", handed}, {"Code", std::to_string(answer.code)}};
        enqueue_accepted({p.shard.log_id, options_.node_id, p.target.message.with_trigger(facts)}, p.fire.job.id,
                         p.shard.address);
        note_handoff(p.fire.log);
        out[i] = SendOutcome{SendOutcome::Kind::kTriggered, took()};
      }
    }
  } catch (const std::exception& e) {
    spdlog::error("trigger: handing {} fires over ahead failed: {}", fires.size(), e.what());
  } catch (...) {
    spdlog::error("trigger: handing {} fires over ahead failed", fires.size());
  }
  return out;
}

void TriggerService::note_handoff(const JobLog& log) {
  // A workflow node's fire is due the moment its parent's end was recorded: this is the
  // hand-off, from that moment to the child accepted by its executor (by /run or handed over).
  if (log.trigger_type != TriggerType::kWorkflow || !log.parent_log_id) return;
  workflow_handoff_.observe(static_cast<double>(clock_.now_ms() - log.scheduled_time) / 1000.0);
}

bool TriggerService::prepared_ahead(const TriggerStore::LoadedFire& fire) {
  // A broadcast becomes several rows in its claim, a shard of one goes to its own executor, and
  // FAILOVER and BUSYOVER ask executors before choosing: those are sent whole when delivered.
  const auto strategy = fire.job.executor_route_strategy;
  return fire.log.shard_total <= 1 && strategy != RouteStrategy::kShardingBroadcast &&
         strategy != RouteStrategy::kFailover && strategy != RouteStrategy::kBusyover;
}

std::vector<PreparedFire> TriggerService::prepare(const std::vector<PendingFire>& fires, std::int64_t not_before_ms,
                                                  const AdmitFire& admit) noexcept {
  return prepare_some(fires, not_before_ms, Ahead::kAtTheInstant, admit);
}

std::vector<PreparedFire> TriggerService::prepare_lead(const std::vector<PendingFire>& fires) noexcept {
  bool anyone = static_cast<bool>(options_.takes_lead);
  try {
    anyone = anyone && (!options_.any_takes_lead || options_.any_takes_lead());
  } catch (...) {
    anyone = false;
  }
  if (!anyone) return FireSender::prepare_lead(fires);  // nobody to hand them to: not even read
  // Each for its own second: post_time() of a fire handed on for the end of time.
  return prepare_some(fires, std::numeric_limits<std::int64_t>::max(), Ahead::kLeadOnly, nullptr);
}

bool TriggerService::all_take_lead(const std::vector<std::string>& addresses) const noexcept {
  if (addresses.empty() || !options_.takes_lead) return false;
  try {
    return std::all_of(addresses.begin(), addresses.end(),
                       [&](const std::string& address) { return options_.takes_lead(address); });
  } catch (...) {
    return false;
  }
}

std::vector<PreparedFire> TriggerService::prepare_some(const std::vector<PendingFire>& fires, std::int64_t not_before_ms,
                                                       Ahead ahead, const AdmitFire& admit) noexcept {
  const bool lead_only = ahead == Ahead::kLeadOnly;
  std::vector<PreparedFire> out;
  out.reserve(fires.size());
  for (const auto& f : fires) out.push_back({f, std::nullopt, nullptr});
  // The database unreachable: at their instant these stay pending for a later attempt; handed
  // on ahead they are left for their second.
  auto end_all = [&](std::vector<std::size_t> which, SendOutcome::Kind kind) {
    if (lead_only) return;
    for (auto i : which) out[i].ended = SendOutcome{kind, {}};
  };
  std::vector<std::size_t> everyone(fires.size());
  for (std::size_t i = 0; i < fires.size(); ++i) everyone[i] = i;
  try {
    const std::string& node = options_.node_id;
    std::vector<std::int64_t> ids;
    ids.reserve(fires.size());
    for (const auto& f : fires) ids.push_back(f.log_id);
    std::vector<std::optional<TriggerStore::LoadedFire>> loaded;
    const auto started = clock_.steady_now();
    try {
      loaded = store_.load_pending_all(ids, node);
    } catch (const std::exception& e) {
      spdlog::warn("trigger: {} fires stay pending, cannot read them: {}", fires.size(), e.what());
      end_all(everyone, SendOutcome::Kind::kDropped);
      return out;
    }
    const std::int64_t now = clock_.now_ms();
    std::vector<std::size_t> claiming;
    std::vector<TriggerStore::Claim> claims;
    std::vector<std::shared_ptr<PreparedSend>> sends;
    for (std::size_t i = 0; i < fires.size(); ++i) {
      if (!loaded[i]) {
        out[i].ended = SendOutcome{SendOutcome::Kind::kDropped, {}};
        continue;
      }
      const bool waits_for_slot = needs_slot(loaded[i]->job, loaded[i]->group) && !loaded[i]->log.slot_admitted;
      if (lead_only && (waits_for_slot || !prepared_ahead(*loaded[i]))) continue;  // left for its second
      if (waits_for_slot) {
        out[i].ended = SendOutcome{wait_for_slot(*loaded[i]), {}};
        continue;
      }
      if (!prepared_ahead(*loaded[i])) {  // sent whole when delivered
        if (admit && !admit(i, std::nullopt)) out[i].refused = true;
        continue;
      }
      Target aimed = target_of(*loaded[i]);
      // Seconds ahead, only to executors that hold fires for their instant: any other fire is
      // left for its second, where a failure is recorded at the time it was due.
      if (lead_only && (!aimed.failure.empty() || !all_take_lead(aimed.usable))) continue;
      auto send = std::make_shared<PreparedSend>(PreparedSend{std::move(*loaded[i]), {}, std::move(aimed), {}});
      const auto& fire = send->fire;
      Target& target = send->target;
      if (!target.failure.empty()) {
        out[i].ended = SendOutcome{fail_pending(fire, target, target.failure), {}};
        continue;
      }
      RouteResult route = route_among(fire, target, target.usable);
      if (lead_only && (!route.ok || route.addresses.size() != 1)) continue;
      if (!route.ok || route.addresses.size() != 1) {
        out[i].ended = SendOutcome{
            fail_pending(fire, target, route.message.empty() ? "routing found no executor" : route.message), {}};
        continue;
      }
      // Before the claim: a fire the caller has no room for is not written at all.
      if (admit && !admit(i, lead_key_of(route.addresses.front(), target.token))) {
        out[i].refused = true;
        continue;
      }
      target.message.routing(route.message);
      // The time it is posted (post_time), as the trigger pools will post it.
      auto claim = claim_for(fire, target, std::max(now, post_time(fires[i], not_before_ms)));
      claim.addresses = std::move(route.addresses);
      claims.push_back(std::move(claim));
      claiming.push_back(i);
      sends.push_back(std::move(send));
    }
    if (claims.empty()) return out;
    std::vector<TriggerStore::Claimed> claimed;
    const auto claimed_at = clock_.steady_now();  // before the claim commits: errs on the early side
    try {
      claimed = store_.claim_all(claims);
    } catch (const std::exception& e) {
      spdlog::warn("trigger: {} fires stay pending, cannot claim them: {}", claims.size(), e.what());
      end_all(claiming, SendOutcome::Kind::kDropped);
      return out;
    }
    const auto done = clock_.steady_now();
    if (done - started > kSlowPrepare) {
      using std::chrono::duration_cast;
      using std::chrono::milliseconds;
      spdlog::warn("trigger: preparing {} fires took {} ms (reading {} ms, claiming {} ms)", fires.size(),
                   duration_cast<milliseconds>(done - started).count(),
                   duration_cast<milliseconds>(claimed_at - started).count(),
                   duration_cast<milliseconds>(done - claimed_at).count());
    }
    for (std::size_t k = 0; k < claiming.size(); ++k) {
      PreparedFire& p = out[claiming[k]];
      if (claimed[k].shards.empty()) {
        p.ended = SendOutcome{SendOutcome::Kind::kDropped, {}};
        continue;
      }
      sends[k]->shard = claimed[k].shards.front();
      sends[k]->send_by = send_by(claimed_at, claimed[k]);
      p.send = std::move(sends[k]);
    }
  } catch (const std::exception& e) {
    spdlog::error("trigger: preparing {} fires failed: {}", fires.size(), e.what());
    for (auto& p : out) {
      if (!p.ended && !p.send && !lead_only) p.ended = SendOutcome{SendOutcome::Kind::kDropped, {}};
    }
  } catch (...) {
    spdlog::error("trigger: preparing {} fires failed", fires.size());
    for (auto& p : out) {
      if (!p.ended && !p.send && !lead_only) p.ended = SendOutcome{SendOutcome::Kind::kDropped, {}};
    }
  }
  return out;
}

SendOutcome TriggerService::deliver(const PreparedFire& prepared) noexcept {
  if (!prepared.send) return send(prepared.fire);
  const auto started = clock_.steady_now();
  SendOutcome::Kind kind = SendOutcome::Kind::kDropped;
  const auto& p = *prepared.send;
  try {
    kind = post(p.fire, p.target, p.shard, p.send_by, Recording::kLater);
  } catch (const std::exception& e) {
    spdlog::error("trigger: sending run {} of job {} failed: {}", p.shard.log_id, p.fire.job.id, e.what());
  } catch (...) {
    spdlog::error("trigger: sending run {} of job {} failed", p.shard.log_id, p.fire.job.id);
  }
  return {kind, std::chrono::duration_cast<std::chrono::milliseconds>(clock_.steady_now() - started)};
}

void TriggerService::release(const PreparedFire& prepared) noexcept {
  if (!prepared.send) return;
  const auto& p = *prepared.send;
  try {
    store_.release_claim(p.shard.log_id, options_.node_id,
                         "Not sent: node " + options_.node_id + " could not send it after its claim; back to pending");
  } catch (const std::exception& e) {
    spdlog::warn("trigger: run {} of job {} stays sending, cannot release it: {}", p.shard.log_id, p.fire.job.id,
                 e.what());
  }
}

}  // namespace cronwheel::admin
