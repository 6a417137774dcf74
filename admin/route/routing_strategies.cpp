#include "admin/route/routing_strategies.h"

#include <algorithm>
#include <exception>
#include <random>

namespace cronwheel::admin {

namespace {

// XXL-JOB starts a counter again past this value so it never overflows an int.
constexpr std::uint64_t kCounterLimit = 1'000'000;
// ROUND's random start is below this.
constexpr std::size_t kRoundRandomStart = 100;

RouteResult no_address() { return RouteResult::failed("no executor address to route to"); }

// Clears per-job state once its day is over. Call with the router's mutex held.
template <class Map>
void expire_daily(common::Clock& clock, std::int64_t& valid_until, Map& state) {
  const std::int64_t now = clock.now_ms();
  if (now >= valid_until) {
    state.clear();
    valid_until = now + kRouteStateLifetimeMs;
  }
}

// One line of FAILOVER's and BUSYOVER's explanation.
std::string beat_line(std::string_view call, const std::string& address, const ExecutorClient::Result& answer) {
  std::string line = std::string(call) + " " + address + ": code " + std::to_string(answer.code);
  if (!answer.msg.empty()) line += ", msg: " + answer.msg;
  return line;
}

// The first address whose `beat` succeeds; `call` names the beat in the explanation.
template <class Beat>
RouteResult first_answering(const RouteRequest& request, std::string_view call, Beat&& beat) {
  if (request.addresses.empty()) return no_address();
  std::string message;
  for (const auto& address : request.addresses) {
    ExecutorClient::Result answer;
    try {
      answer = beat(address);
    } catch (const std::exception& e) {  // the client promises not to throw; a fake might
      answer = ExecutorClient::Result::fail(e.what());
    }
    if (!message.empty()) message += '\n';
    message += beat_line(call, address, answer);
    if (answer.is_success()) return RouteResult::chose(address, std::move(message));
  }
  return RouteResult::failed(std::move(message));
}

}  // namespace

RandomIndex default_random_index() {
  struct Source {
    std::mutex mutex;
    std::mt19937_64 engine{std::random_device{}()};
  };
  auto source = std::make_shared<Source>();
  return [source](std::size_t bound) {
    std::lock_guard lock(source->mutex);
    return std::uniform_int_distribution<std::size_t>(0, bound - 1)(source->engine);
  };
}

std::uint64_t stable_hash(std::string_view key) noexcept {
  std::uint64_t h = 14695981039346656037ULL;  // FNV-1a offset basis
  for (unsigned char c : key) {
    h ^= c;
    h *= 1099511628211ULL;  // FNV prime
  }
  // MurmurHash3 fmix64: every input bit affects every output bit.
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

RouteResult FirstRouter::route(const RouteRequest& request) {
  if (request.addresses.empty()) return no_address();
  return RouteResult::chose(request.addresses.front());
}

RouteResult LastRouter::route(const RouteRequest& request) {
  if (request.addresses.empty()) return no_address();
  return RouteResult::chose(request.addresses.back());
}

RouteResult RandomRouter::route(const RouteRequest& request) {
  if (request.addresses.empty()) return no_address();
  return RouteResult::chose(request.addresses[random_(request.addresses.size()) % request.addresses.size()]);
}

RouteResult RoundRouter::route(const RouteRequest& request) {
  if (request.addresses.empty()) return no_address();
  std::uint64_t count = 0;
  {
    std::lock_guard lock(mutex_);
    expire_daily(clock_, valid_until_, counters_);
    auto [it, inserted] = counters_.try_emplace(request.job_id, 0);
    if (inserted || it->second > kCounterLimit) {
      it->second = random_(kRoundRandomStart) % kRoundRandomStart;
    } else {
      ++it->second;
    }
    count = it->second;
  }
  return RouteResult::chose(request.addresses[count % request.addresses.size()]);
}

std::shared_ptr<const ConsistentHashRouter::Ring> ConsistentHashRouter::ring_for(
    const std::vector<std::string>& addresses) {
  std::string key;
  for (const auto& address : addresses) key += address + '\n';
  {
    std::lock_guard lock(mutex_);
    auto it = rings_.find(key);
    if (it != rings_.end()) return it->second;
  }
  auto ring = std::make_shared<Ring>();
  ring->reserve(addresses.size() * kVirtualNodes);
  for (std::size_t i = 0; i < addresses.size(); ++i) {
    for (int node = 0; node < kVirtualNodes; ++node) {
      ring->emplace_back(stable_hash("SHARD-" + addresses[i] + "-NODE-" + std::to_string(node)), i);
    }
  }
  // Equal points (astronomically unlikely) resolve to the earlier address, the same everywhere.
  std::sort(ring->begin(), ring->end());
  std::lock_guard lock(mutex_);
  if (rings_.size() >= kCachedRings) rings_.clear();  // address lists changed a lot: start over
  rings_.emplace(std::move(key), ring);
  return ring;
}

RouteResult ConsistentHashRouter::route(const RouteRequest& request) {
  if (request.addresses.empty()) return no_address();
  auto ring = ring_for(request.addresses);
  const std::uint64_t point = stable_hash(std::to_string(request.job_id));
  auto it = std::lower_bound(ring->begin(), ring->end(), std::make_pair(point, std::size_t{0}));
  if (it == ring->end()) it = ring->begin();
  return RouteResult::chose(request.addresses[it->second]);
}

RouteResult LeastFrequentlyUsedRouter::route(const RouteRequest& request) {
  if (request.addresses.empty()) return no_address();
  const auto& addresses = request.addresses;
  std::lock_guard lock(mutex_);
  expire_daily(clock_, valid_until_, counts_);
  auto& counts = counts_[request.job_id];
  for (auto it = counts.begin(); it != counts.end();) {
    it = std::find(addresses.begin(), addresses.end(), it->first) == addresses.end() ? counts.erase(it)
                                                                                      : std::next(it);
  }
  const std::string* least = nullptr;
  std::uint64_t least_count = 0;
  for (const auto& address : addresses) {
    auto [it, inserted] = counts.try_emplace(address, 0);
    if (inserted || it->second > kCounterLimit) it->second = random_(addresses.size()) % addresses.size();
    if (least == nullptr || it->second < least_count) {
      least = &address;
      least_count = it->second;
    }
  }
  ++counts[*least];
  return RouteResult::chose(*least);
}

RouteResult LeastRecentlyUsedRouter::route(const RouteRequest& request) {
  if (request.addresses.empty()) return no_address();
  const auto& addresses = request.addresses;
  std::lock_guard lock(mutex_);
  expire_daily(clock_, valid_until_, orders_);
  auto& order = orders_[request.job_id];
  order.remove_if([&](const std::string& a) { return std::find(addresses.begin(), addresses.end(), a) == addresses.end(); });
  for (const auto& address : addresses) {
    if (std::find(order.begin(), order.end(), address) == order.end()) order.push_back(address);
  }
  order.splice(order.end(), order, order.begin());  // the least recent becomes the most recent
  return RouteResult::chose(order.back());
}

RouteResult FailoverRouter::route(const RouteRequest& request) {
  return first_answering(request, "beat", [&](const std::string& address) {
    return client_.beat(address, request.access_token);
  });
}

RouteResult BusyoverRouter::route(const RouteRequest& request) {
  return first_answering(request, "idleBeat", [&](const std::string& address) {
    return client_.idle_beat(address, request.access_token, static_cast<std::int32_t>(request.job_id));
  });
}

RouteResult ShardingBroadcastRouter::route(const RouteRequest& request) {
  if (request.addresses.empty()) return no_address();
  return {true, request.addresses, {}};
}

}  // namespace cronwheel::admin
