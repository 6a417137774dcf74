#include "admin/outbound/http_executor_client.h"

#include <exception>
#include <optional>
#include <stdexcept>

#include <spdlog/spdlog.h>

#include "common/http/xxl_job_call.h"
#include "common/protocol/constants.h"
#include "common/protocol/messages.h"

namespace cronwheel::admin {

namespace protocol = common::protocol;
using common::http::HttpClient;
using common::http::HttpResult;
using common::http::TransportError;

HttpExecutorClient::HttpExecutorClient(common::Clock& clock) : HttpExecutorClient(clock, Options{}) {}

HttpExecutorClient::HttpExecutorClient(common::Clock& clock, Options options)
    : clock_(clock), options_(options) {}

HttpExecutorClient::~HttpExecutorClient() = default;

namespace {

// The request went out on a kept-alive connection and the executor closed or reset it before the
// request was written whole or before answering anything: the connection was stale (closed as
// idle or evicted just as the request went out), the request was never read.
bool failed_on_stale_connection(const HttpResult& result) {
  return result.reused_connection && result.transport_error == TransportError::kConnection &&
         !result.answer_head_received;
}

}  // namespace

std::unique_ptr<HttpClient> HttpExecutorClient::open(const Key& key) const {
  common::http::HttpClientOptions options;
  options.connect_timeout = options_.connect_timeout;
  options.read_timeout = options_.read_timeout;
  options.write_timeout = options_.write_timeout;
  options.access_token = key.second;
  options.keep_alive = true;
  return std::make_unique<HttpClient>(key.first, options);  // throws std::invalid_argument for a bad URL
}

std::unique_ptr<HttpClient> HttpExecutorClient::checkout(const Key& key) {
  std::vector<Idle> expired;
  std::unique_ptr<HttpClient> client;
  bool open_new = false;
  {
    std::unique_lock lock(mutex_);
    auto now = clock_.steady_now();
    if (now - last_sweep_ >= options_.max_idle_time) sweep(now, expired);
    Pool& pool = pools_[key];
    const auto deadline = std::chrono::steady_clock::now() + options_.connection_wait;
    for (;;) {
      // The most recently used first: the likeliest to be alive, and the others age out.
      while (!pool.idle.empty() && !client) {
        Idle candidate = std::move(pool.idle.back());
        pool.idle.pop_back();
        if (now - candidate.since < options_.max_idle_time) {
          client = std::move(candidate.client);
        } else {
          expired.push_back(std::move(candidate));
        }
      }
      if (client) break;
      if (pool.busy + pool.idle.size() < options_.max_connections_per_address) {
        open_new = true;
        break;
      }
      ++pool.waiting;
      const bool freed = pool.freed.wait_until(lock, deadline, [&] {
        return !pool.idle.empty() || pool.busy + pool.idle.size() < options_.max_connections_per_address;
      });
      --pool.waiting;
      if (!freed) {
        throw std::runtime_error("no connection to it came free within " +
                                 std::to_string(options_.connection_wait.count()) + " ms (" +
                                 std::to_string(pool.busy) + " in use)");
      }
      now = clock_.steady_now();
    }
    ++pool.busy;
  }
  expired.clear();  // closes their connections, outside the lock
  if (!open_new) return client;
  try {
    return open(key);
  } catch (...) {
    give_back(key, nullptr);
    throw;
  }
}

void HttpExecutorClient::give_back(const Key& key, std::unique_ptr<HttpClient> client) {
  std::lock_guard lock(mutex_);
  auto it = pools_.find(key);
  if (it == pools_.end()) return;  // not checked out from here; `client` closes as it goes
  Pool& pool = it->second;
  --pool.busy;
  if (client) pool.idle.push_back({std::move(client), clock_.steady_now()});
  pool.freed.notify_one();
  if (pool.idle.empty() && pool.busy == 0 && pool.waiting == 0) pools_.erase(it);
}

void HttpExecutorClient::sweep(common::Clock::SteadyTime now, std::vector<Idle>& expired) {
  last_sweep_ = now;
  for (auto it = pools_.begin(); it != pools_.end();) {
    auto& idle = it->second.idle;
    // Oldest first: the expired ones form a prefix.
    std::size_t stale = 0;
    while (stale < idle.size() && now - idle[stale].since >= options_.max_idle_time) ++stale;
    for (std::size_t i = 0; i < stale; ++i) expired.push_back(std::move(idle[i]));
    idle.erase(idle.begin(), idle.begin() + static_cast<std::ptrdiff_t>(stale));
    const bool unused = idle.empty() && it->second.busy == 0 && it->second.waiting == 0;
    it = unused ? pools_.erase(it) : std::next(it);
  }
}

template <class Count>
std::size_t HttpExecutorClient::total(Count count) const {
  std::lock_guard lock(mutex_);
  std::size_t n = 0;
  for (const auto& [key, pool] : pools_) n += count(pool);
  return n;
}

std::size_t HttpExecutorClient::idle_connections() const {
  return total([](const Pool& p) { return p.idle.size(); });
}

std::size_t HttpExecutorClient::busy_connections() const {
  return total([](const Pool& p) { return p.busy; });
}

std::size_t HttpExecutorClient::waiting_calls() const {
  return total([](const Pool& p) { return p.waiting; });
}

std::size_t HttpExecutorClient::pools() const {
  std::lock_guard lock(mutex_);
  return pools_.size();
}

template <class T>
protocol::ReturnT<T> HttpExecutorClient::call(const std::string& address, const std::string& access_token,
                                              std::string_view path, std::string_view body) {
  using Answer = protocol::ReturnT<T>;
  const Key key{address, access_token};
  std::unique_ptr<HttpClient> client;
  try {
    client = checkout(key);
  } catch (const std::invalid_argument& e) {
    return Answer::fail("executor address '" + address + "' is not usable: " + e.what(), kNotReachedCode);
  } catch (const std::exception& e) {
    // This node's own connections to the executor are all busy: the executor is fine, only
    // busy with this node, so it is not one to route around.
    return Answer::fail("executor " + address + ": " + e.what());
  }

  const std::string url = client->url(path);
  HttpResult result = client->post_json(path, body);
  std::optional<HttpResult> first;
  if (failed_on_stale_connection(result)) {
    // Once more, at once, on a new connection (see the class comment). The address was usable a
    // moment ago, so open() does not throw.
    spdlog::debug("executor client: {}; sending it again on a new connection", result.error);
    first = std::move(result);
    client = open(key);
    result = client->post_json(path, body);
  }
  if (result.transport_error != TransportError::kNone) {
    // The connection is in an unknown state: `client` is closed, not given back. 500 when the
    // executor cannot have the request, 502 when it may (the first attempt counts too: a request
    // written whole before the executor closed the connection is taken as unread only when the
    // executor then answers on a new one).
    const bool may_have_arrived = result.request_written || (first && first->request_written);
    std::string msg = result.error;
    if (first) msg += " (sent again on a new connection after: " + first->error + ")";
    client.reset();
    give_back(key, nullptr);
    return Answer::fail(std::move(msg), may_have_arrived ? protocol::kTimeoutCode : kNotReachedCode);
  }
  give_back(key, std::move(client));

  return common::http::read_xxl_job_answer<T>(result, url);
}

ExecutorClient::Result HttpExecutorClient::beat(const std::string& address, const std::string& access_token) {
  // XXL-JOB 2.4's admin sends the JSON string "" as /beat's body.
  return call<std::string>(address, access_token, protocol::kBeatPath, "\"\"");
}

ExecutorClient::Result HttpExecutorClient::idle_beat(const std::string& address, const std::string& access_token,
                                                     std::int32_t job_id) {
  return call<std::string>(address, access_token, protocol::kIdleBeatPath,
                           protocol::to_json_string(protocol::IdleBeatParam{job_id}));
}

ExecutorClient::Result HttpExecutorClient::run(const std::string& address, const std::string& access_token,
                                               const protocol::TriggerParam& trigger) {
  return call<std::string>(address, access_token, protocol::kRunPath, protocol::to_json_string(trigger));
}

ExecutorClient::Result HttpExecutorClient::kill(const std::string& address, const std::string& access_token,
                                                std::int32_t job_id) {
  return call<std::string>(address, access_token, protocol::kKillPath,
                           protocol::to_json_string(protocol::KillParam{job_id}));
}

protocol::ReturnT<protocol::LogResult> HttpExecutorClient::log(const std::string& address,
                                                               const std::string& access_token,
                                                               const protocol::LogParam& param) {
  return call<protocol::LogResult>(address, access_token, protocol::kLogPath, protocol::to_json_string(param));
}

}  // namespace cronwheel::admin
