#include "tests/bench/fake_executor.h"

#include <algorithm>
#include <chrono>
#include <iterator>
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
    std::size_t index = 0;
    {
      std::lock_guard lock(receipts_mutex_);
      index = receipts_.size();
      receipts_.push_back({trigger.job_id, trigger.log_date_time, trigger.log_id, received, 0});
    }
    received_.fetch_add(1);
    answer_success(res);
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
      held_.push({received + std::chrono::duration_cast<std::chrono::microseconds>(options_.hold).count(), index,
                  std::move(result)});
    }
    held_changed_.notify_one();
  });
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
  server_->start();
  callback_thread_ = std::thread([this] { run_callbacks(); });
  if (options_.hold.count() > 0) hold_thread_ = std::thread([this] { run_holds(); });
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
  server_->stop();
  if (hold_thread_.joinable()) hold_thread_.join();
  if (callback_thread_.joinable()) callback_thread_.join();
}

}  // namespace cronwheel::bench
