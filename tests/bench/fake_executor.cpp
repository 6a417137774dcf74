#include "tests/bench/fake_executor.h"

#include <algorithm>
#include <chrono>
#include <iterator>
#include <string>
#include <utility>

#include "common/http/http_client.h"
#include "common/http/xxl_job_call.h"
#include "common/protocol/constants.h"
#include "common/protocol/return_t.h"

namespace cronwheel::bench {

namespace http = common::http;
namespace protocol = common::protocol;

namespace {

std::int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void answer_success(cronwheel::common::http::Response& res) {
  http::write_json(res, protocol::to_json_string(protocol::ReturnT<std::string>::success()));
}

}  // namespace

FakeExecutor::FakeExecutor(Options options) : options_(std::move(options)) {
  http::HttpServerOptions o;
  o.host = "127.0.0.1";
  o.port = 0;
  o.worker_threads = options_.worker_threads;
  o.error_formatter = http::xxl_job_error;
  o.name = "fake-executor";
  // Every trigger thread of every admin may keep a connection to this executor: let them all.
  o.max_connections = 16'384;
  o.max_connections_per_address = 16'384;
  server_ = std::make_unique<http::HttpServer>(o);

  auto authorized = [this](const cronwheel::common::http::Request& req, cronwheel::common::http::Response& res) {
    if (http::access_token_matches(req, options_.access_token)) return true;
    http::write_json(res, protocol::to_json_string(protocol::ReturnT<std::string>::fail("The access token is wrong.")));
    return false;
  };
  server_->post(std::string(protocol::kRunPath), [this, authorized](const cronwheel::common::http::Request& req, cronwheel::common::http::Response& res) {
    const std::int64_t received = now_us();
    if (!authorized(req, res)) return;
    const auto trigger = protocol::parse<protocol::TriggerParam>(req.body);
    if (options_.lead) {
      std::lock_guard lock(lead_mutex_);
      lead_known_.insert(trigger.log_id);
    }
    const std::size_t index = note_receipt(trigger, received, false);
    answer_success(res);
    start_run(index, trigger, received);
  });
  if (options_.lead) {
    server_->post(std::string(protocol::kLeadPath), [this, authorized](const cronwheel::common::http::Request& req, cronwheel::common::http::Response& res) {
      if (!authorized(req, res)) return;
      const auto request = protocol::parse<protocol::LeadRequest>(req.body);
      auto answer = take_lead(request);
      if (!answer) {
        http::write_json(res, protocol::to_json_string(protocol::ReturnT<protocol::LeadAnswer>::fail("the executor is stopping")));
        return;
      }
      lead_requests_.fetch_add(1);
      http::write_json(res, protocol::to_json_string(protocol::ReturnT<protocol::LeadAnswer>::success(std::move(*answer))));
    });
    server_->post(std::string(protocol::kLeadCancelPath), [this, authorized](const cronwheel::common::http::Request& req, cronwheel::common::http::Response& res) {
      if (!authorized(req, res)) return;
      const auto param = protocol::parse<protocol::LeadCancelParam>(req.body);
      http::write_json(res, protocol::to_json_string(protocol::ReturnT<protocol::LeadCancelAnswer>::success(cancel_lead(param))));
    });
  }
  auto idle = [authorized](const cronwheel::common::http::Request& req, cronwheel::common::http::Response& res) {
    if (authorized(req, res)) answer_success(res);
  };
  server_->post(std::string(protocol::kBeatPath), idle);
  server_->post(std::string(protocol::kIdleBeatPath), idle);
  server_->post(std::string(protocol::kKillPath), idle);
  // The admin's delivery check asks /log whether a run arrived: say so truthfully.
  server_->post(std::string(protocol::kLogPath), [this, authorized](const cronwheel::common::http::Request& req, cronwheel::common::http::Response& res) {
    if (!authorized(req, res)) return;
    const auto param = protocol::parse<protocol::LogParam>(req.body);
    bool known = false;
    {
      std::lock_guard lock(receipts_mutex_);
      known = std::any_of(receipts_.begin(), receipts_.end(), [&](const Receipt& r) { return r.log_id == param.log_id; });
    }
    if (!known && options_.lead) {
      // Held for its instant: it arrived, as the real executor says of a fire it holds.
      std::lock_guard lock(lead_mutex_);
      known = lead_held_.count(param.log_id) > 0;
    }
    protocol::LogResult log;
    log.from_line_num = param.from_line_num;
    log.to_line_num = known ? 1 : 0;
    log.log_content = known ? "fire_load: run received\n" : "readLog fail, logFile not exists";
    log.is_end = true;
    http::write_json(res, protocol::to_json_string(protocol::ReturnT<protocol::LogResult>::success(log)));
  });
}

FakeExecutor::~FakeExecutor() { stop(std::chrono::milliseconds(0)); }

void FakeExecutor::start() {
  started_ = true;
  if (options_.lead) {
    common::HierarchicalWheelOptions wheel;
    wheel.tick = std::chrono::milliseconds(1);
    common::TimerOptions timer;
    timer.on_error = common::logging_timer_errors("fake executor: lead fires");
    lead_timer_ = std::make_unique<common::HierarchicalWheelTimer>(common::SystemClock::instance(), wheel, timer);
  }
  server_->start();
  callback_thread_ = std::thread([this] { run_callbacks(); });
  if (options_.hold.count() > 0) hold_thread_ = std::thread([this] { run_holds(); });
  if (options_.lead) registry_thread_ = std::thread([this] { run_registry(); });
}

std::size_t FakeExecutor::note_receipt(const protocol::TriggerParam& trigger, std::int64_t received_us, bool by_lead,
                                       std::int64_t lead_ahead_ms) {
  std::size_t index = 0;
  {
    std::lock_guard lock(receipts_mutex_);
    index = receipts_.size();
    receipts_.push_back({trigger.job_id, trigger.log_date_time, trigger.log_id, received_us, 0, by_lead, lead_ahead_ms});
  }
  received_.fetch_add(1);
  (by_lead ? received_by_lead_ : received_by_run_).fetch_add(1);
  return index;
}

void FakeExecutor::start_run(std::size_t index, const protocol::TriggerParam& trigger, std::int64_t received_us) {
  protocol::HandleCallbackParam result;
  result.log_id = trigger.log_id;
  result.log_date_time = trigger.log_date_time;
  result.handle_code = protocol::kSuccessCode;
  if (options_.hold.count() <= 0) {
    end_run(index, std::move(result));
    return;
  }
  {
    std::lock_guard lock(queue_mutex_);
    held_.push({received_us + std::chrono::duration_cast<std::chrono::microseconds>(options_.hold).count(), index,
                std::move(result)});
  }
  held_changed_.notify_one();
}

std::optional<protocol::LeadAnswer> FakeExecutor::take_lead(const protocol::LeadRequest& request) {
  protocol::LeadAnswer answer;
  const std::int64_t now = now_us() / 1000;
  std::lock_guard lock(lead_mutex_);
  if (lead_stopped_) return std::nullopt;
  std::vector<std::int64_t> fresh;  // fireAts of groups this request creates
  for (const auto& fire : request.fires) {
    const std::int64_t id = fire.trigger.log_id;
    if (fire.fire_at < 0) {
      answer.refused.push_back({id, "fireAt must be epoch milliseconds, not " + std::to_string(fire.fire_at)});
      continue;
    }
    if (fire.fire_at - now > protocol::kMaxLeadAheadMs) {
      answer.refused.push_back({id, "fireAt " + std::to_string(fire.fire_at) + " is more than " +
                                        std::to_string(protocol::kMaxLeadAheadMs) + " ms ahead of this executor's clock"});
      continue;
    }
    answer.accepted.push_back(id);
    if (!lead_known_.insert(id).second) continue;  // held or received already: once is enough
    auto [group, created] = lead_groups_.try_emplace(fire.fire_at);
    group->second.fires.push_back(fire.trigger);
    if (created) fresh.push_back(fire.fire_at);
    lead_held_[id] = {fire.fire_at, now};
  }
  for (const std::int64_t fire_at : fresh) schedule_lead_group(fire_at, lead_groups_[fire_at]);
  return answer;
}

void FakeExecutor::schedule_lead_group(std::int64_t fire_at, LeadGroup& group) {
  // The wheel counts on the steady clock; the instant is on the system clock. start_lead_group
  // checks the system clock again, so a drift between the two makes a fire late, never early.
  const std::int64_t delay_us = std::max<std::int64_t>(0, fire_at * 1000 - now_us());
  group.timer = lead_timer_->schedule([this, fire_at] { start_lead_group(fire_at); },
                                      std::chrono::microseconds(delay_us));
}

void FakeExecutor::start_lead_group(std::int64_t fire_at) {
  std::vector<protocol::TriggerParam> fires;
  std::vector<std::int64_t> ahead_ms;  // of each fire: how long before its instant it was handed over
  {
    std::lock_guard lock(lead_mutex_);
    auto group = lead_groups_.find(fire_at);
    if (group == lead_groups_.end()) return;
    if (now_us() < fire_at * 1000) {
      if (!lead_stopped_) {
        try {
          schedule_lead_group(fire_at, group->second);
        } catch (const std::exception&) {
          // Out of memory or stopped: the fires never start, as on an executor stopped before
          // their instant.
        }
      }
      return;
    }
    fires = std::move(group->second.fires);
    lead_groups_.erase(group);
    for (const auto& f : fires) {
      auto held = lead_held_.find(f.log_id);
      ahead_ms.push_back(held == lead_held_.end() ? 0 : fire_at - held->second.handed_ms);
      if (held != lead_held_.end()) lead_held_.erase(held);
    }
  }
  for (std::size_t i = 0; i < fires.size(); ++i) {
    const auto& trigger = fires[i];
    const std::int64_t received = now_us();
    const std::size_t index = note_receipt(trigger, received, true, ahead_ms[i]);
    start_run(index, trigger, received);
  }
}

protocol::LeadCancelAnswer FakeExecutor::cancel_lead(const protocol::LeadCancelParam& param) {
  protocol::LeadCancelAnswer answer;
  std::lock_guard lock(lead_mutex_);
  for (const std::int64_t id : param.log_ids) {
    auto held = lead_held_.find(id);
    if (held == lead_held_.end()) {
      (lead_known_.count(id) > 0 ? answer.started : answer.unknown).push_back(id);
      continue;
    }
    auto group = lead_groups_.find(held->second.fire_at);
    if (group != lead_groups_.end()) {
      auto& fires = group->second.fires;
      fires.erase(std::remove_if(fires.begin(), fires.end(), [&](const protocol::TriggerParam& t) { return t.log_id == id; }),
                  fires.end());
      if (fires.empty()) {
        group->second.timer.cancel();
        lead_groups_.erase(group);
      }
    }
    lead_held_.erase(held);
    lead_known_.erase(id);
    answer.cancelled.push_back(id);
  }
  return answer;
}

// Registers every second with every admin, as the real executor's RegistryClient does every 30 s
// (a second here, so that an admin refreshing its registry often learns of it at once).
void FakeExecutor::run_registry() {
  std::vector<http::HttpClient> clients;
  try {
    for (const auto& url : options_.admin_urls) {
      http::HttpClientOptions o;
      o.access_token = options_.access_token;
      o.connect_timeout = std::chrono::milliseconds(1'000);
      o.read_timeout = std::chrono::milliseconds(2'000);
      o.write_timeout = std::chrono::milliseconds(2'000);
      clients.emplace_back(url, o);
    }
  } catch (const std::exception& e) {
    std::lock_guard error_lock(registry_error_mutex_);
    registry_error_ = std::string("cannot register: ") + e.what();
    return;
  }
  protocol::RegistryParam param;
  param.registry_group = std::string(protocol::kRegistryGroupExecutor);
  param.registry_key = options_.app_name;
  param.registry_value = address();
  param.clock_offset_ms = 0;  // the admins' host and clock
  param.clock_delay_ms = 0;
  param.lead_dispatch = true;
  const std::string body = protocol::to_json_string(param);
  std::unique_lock lock(queue_mutex_);
  while (!stopping_) {
    lock.unlock();
    for (auto& client : clients) {
      auto answer = http::post_xxl_job(client, protocol::kRegistryPath, body);
      if (answer.is_success()) {
        registrations_.fetch_add(1);
      } else {
        std::lock_guard error_lock(registry_error_mutex_);
        registry_error_ = client.url(protocol::kRegistryPath) + ": " + answer.msg;
      }
    }
    lock.lock();
    registry_wake_.wait_for(lock, std::chrono::seconds(1), [&] { return stopping_; });
  }
  lock.unlock();
  for (auto& client : clients) http::post_xxl_job(client, protocol::kRegistryRemovePath, body);
}

std::string FakeExecutor::last_registry_error() const {
  std::lock_guard lock(registry_error_mutex_);
  return registry_error_;
}

void FakeExecutor::end_run(std::size_t receipt, protocol::HandleCallbackParam result) {
  {
    std::lock_guard lock(receipts_mutex_);
    receipts_[receipt].ended_us = now_us();
  }
  {
    std::lock_guard lock(queue_mutex_);
    queue_.push_back(std::move(result));
  }
  queue_changed_.notify_one();
}

// Ends each held run at its due time, on a thread of its own: a callback request in flight never
// stretches a run.
void FakeExecutor::run_holds() {
  std::unique_lock lock(queue_mutex_);
  while (!stopping_) {
    if (held_.empty()) {
      held_changed_.wait(lock);
      continue;
    }
    const std::int64_t due = held_.top().due_us;
    const std::int64_t now = now_us();
    if (due > now) {
      held_changed_.wait_for(lock, std::chrono::microseconds(due - now));
      continue;
    }
    Held run = held_.top();
    held_.pop();
    lock.unlock();
    end_run(run.receipt, std::move(run.result));
    lock.lock();
  }
}

std::string FakeExecutor::address() const { return "http://127.0.0.1:" + std::to_string(server_->port()) + "/"; }

std::vector<Receipt> FakeExecutor::receipts() const {
  std::lock_guard lock(receipts_mutex_);
  return receipts_;
}

std::size_t FakeExecutor::callbacks_queued() const {
  std::lock_guard lock(queue_mutex_);
  return queue_.size() + in_flight_;
}

std::size_t FakeExecutor::held() const {
  std::lock_guard lock(queue_mutex_);
  return held_.size();
}

void FakeExecutor::run_callbacks() {
  std::vector<http::HttpClient> clients;
  for (const auto& url : options_.admin_urls) {
    http::HttpClientOptions o;
    o.access_token = options_.access_token;
    o.connect_timeout = std::chrono::milliseconds(2'000);
    o.read_timeout = std::chrono::milliseconds(30'000);
    clients.emplace_back(url, o);
  }
  std::unique_lock lock(queue_mutex_);
  while (true) {
    queue_changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty() || (stopping_ && std::chrono::steady_clock::now() >= flush_deadline_)) return;
    const std::size_t n = std::min(queue_.size(), options_.max_batch);
    protocol::CallbackBatch batch;
    batch.callbacks.assign(std::make_move_iterator(queue_.begin()), std::make_move_iterator(queue_.begin() + n));
    queue_.erase(queue_.begin(), queue_.begin() + n);
    in_flight_ = n;
    lock.unlock();
    const std::string body = protocol::to_json_string(batch);
    bool accepted = false;
    for (auto& client : clients) {
      callback_requests_.fetch_add(1);
      if (http::post_xxl_job(client, protocol::kCallbackPath, body).is_success()) {
        accepted = true;
        break;
      }
    }
    lock.lock();
    in_flight_ = 0;
    if (accepted) {
      callbacks_sent_.fetch_add(n);
    } else {
      // No admin took it: first in line again, after a pause (as the real executor, minus the spool).
      callback_retries_.fetch_add(1);
      queue_.insert(queue_.begin(), std::make_move_iterator(batch.callbacks.begin()),
                    std::make_move_iterator(batch.callbacks.end()));
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      lock.lock();
    }
  }
}

void FakeExecutor::stop(std::chrono::milliseconds flush_timeout) noexcept {
  if (stopped_) return;
  stopped_ = true;
  if (!started_) return;
  {
    std::lock_guard lock(queue_mutex_);
    stopping_ = true;
    flush_deadline_ = std::chrono::steady_clock::now() + flush_timeout;
  }
  queue_changed_.notify_all();
  held_changed_.notify_all();
  registry_wake_.notify_all();
  server_->stop();
  if (lead_timer_) {
    {
      std::lock_guard lock(lead_mutex_);
      lead_stopped_ = true;
    }
    lead_timer_->stop();  // what it still holds never starts
  }
  if (registry_thread_.joinable()) registry_thread_.join();
  if (hold_thread_.joinable()) hold_thread_.join();
  if (callback_thread_.joinable()) callback_thread_.join();
}

}  // namespace cronwheel::bench
