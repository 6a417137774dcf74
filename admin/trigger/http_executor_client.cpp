#include "admin/trigger/http_executor_client.h"

#include <exception>
#include <optional>

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

std::unique_ptr<HttpClient> HttpExecutorClient::checkout(const Key& key) {
  std::vector<Idle> expired;
  std::unique_ptr<HttpClient> client;
  {
    std::lock_guard lock(mutex_);
    const auto now = clock_.steady_now();
    if (now - last_sweep_ >= options_.max_idle_time) sweep(now, expired);
    auto it = idle_.find(key);
    if (it != idle_.end()) {
      auto& idle = it->second;
      // The most recently used first: the likeliest to be alive, and the others age out.
      while (!idle.empty() && !client) {
        Idle candidate = std::move(idle.back());
        idle.pop_back();
        if (now - candidate.since < options_.max_idle_time) {
          client = std::move(candidate.client);
        } else {
          expired.push_back(std::move(candidate));
        }
      }
      if (idle.empty()) idle_.erase(it);
    }
  }
  expired.clear();  // closes their connections, outside the lock
  if (client) return client;

  common::http::HttpClientOptions options;
  options.connect_timeout = options_.connect_timeout;
  options.read_timeout = options_.read_timeout;
  options.write_timeout = options_.write_timeout;
  options.access_token = key.second;
  options.keep_alive = true;
  return std::make_unique<HttpClient>(key.first, options);  // throws std::invalid_argument for a bad URL
}

void HttpExecutorClient::give_back(const Key& key, std::unique_ptr<HttpClient> client) {
  std::lock_guard lock(mutex_);
  auto& idle = idle_[key];
  if (idle.size() >= options_.max_idle_per_address) return;  // `client` closes as it goes
  idle.push_back({std::move(client), clock_.steady_now()});
}

void HttpExecutorClient::sweep(common::Clock::SteadyTime now, std::vector<Idle>& expired) {
  last_sweep_ = now;
  for (auto it = idle_.begin(); it != idle_.end();) {
    auto& idle = it->second;
    // Oldest first: the expired ones form a prefix.
    std::size_t stale = 0;
    while (stale < idle.size() && now - idle[stale].since >= options_.max_idle_time) ++stale;
    for (std::size_t i = 0; i < stale; ++i) expired.push_back(std::move(idle[i]));
    idle.erase(idle.begin(), idle.begin() + static_cast<std::ptrdiff_t>(stale));
    it = idle.empty() ? idle_.erase(it) : std::next(it);
  }
}

std::size_t HttpExecutorClient::idle_connections() const {
  std::lock_guard lock(mutex_);
  std::size_t n = 0;
  for (const auto& [key, idle] : idle_) n += idle.size();
  return n;
}

std::size_t HttpExecutorClient::pools() const {
  std::lock_guard lock(mutex_);
  return idle_.size();
}

template <class T>
protocol::ReturnT<T> HttpExecutorClient::call(const std::string& address, const std::string& access_token,
                                              std::string_view path, std::string_view body) {
  using Answer = protocol::ReturnT<T>;
  const Key key{address, access_token};
  std::unique_ptr<HttpClient> client;
  try {
    client = checkout(key);
  } catch (const std::exception& e) {
    return Answer::fail("executor address '" + address + "' is not usable: " + e.what());
  }

  const std::string url = client->url(path);
  const auto started = std::chrono::steady_clock::now();
  HttpResult result = client->post_json(path, body);
  if (result.transport_error != TransportError::kNone) {
    // The connection is in an unknown state: `client` is closed, not given back. Whether the
    // executor got the request: surely not when the connect failed (a connect timeout comes
    // before the read timeout could), possibly in every other case.
    const bool before_read_timeout = std::chrono::steady_clock::now() - started < options_.read_timeout;
    const bool never_sent = result.transport_error == TransportError::kConnect ||
                            (result.transport_error == TransportError::kTimeout && before_read_timeout);
    return Answer::fail(result.error, never_sent ? protocol::kFailCode : protocol::kTimeoutCode);
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
