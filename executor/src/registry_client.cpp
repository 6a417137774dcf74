#include "executor/src/registry_client.h"

#include <algorithm>
#include <cstdlib>
#include <cstdint>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <utility>

#include <spdlog/spdlog.h>

#include "common/http/xxl_job_call.h"
#include "common/protocol/constants.h"
#include "common/protocol/messages.h"
#include "executor/src/clock_offset.h"

namespace cronwheel::executor {

struct RegistryClient::Impl {
  Impl(Options opts, common::RecurringTasks& tasks_ref) : options(std::move(opts)), tasks(tasks_ref) {
    if (options.admin_addresses.empty()) {
      throw std::invalid_argument("registry client: no admin address");
    }
    if (options.interval <= std::chrono::milliseconds::zero()) {
      throw std::invalid_argument("registry client: interval must be positive");
    }
    options.http.access_token = options.access_token;
    for (const auto& address : options.admin_addresses) {
      admins.emplace_back(address, options.http);  // throws std::invalid_argument for a bad URL
    }
  }

  // The registration (or removal) as it is now: the handlers and the clock estimate may have
  // changed since the last one.
  std::string body(bool registration) const {
    common::protocol::RegistryParam param;
    param.registry_group = std::string(common::protocol::kRegistryGroupExecutor);
    param.registry_key = options.app_name;
    param.registry_value = options.address;
    if (registration && options.handler_names) {
      param.handlers = options.handler_names();
      if (param.handlers.size() > common::protocol::kMaxRegistryHandlers) {
        param.handlers.resize(common::protocol::kMaxRegistryHandlers);
      }
    }
    // Only in a registration: a removal's estimate would be stored by no one.
    if (registration) {
      if (auto estimate = clock_filter.estimate()) {
        param.clock_offset_ms = std::clamp(estimate->offset_ms, -common::protocol::kMaxClockOffsetMs,
                                           common::protocol::kMaxClockOffsetMs);
        param.clock_delay_ms = estimate->delay_ms;  // at most ClockOffsetEstimator::kMaxDelayMs
        param.lead_dispatch = options.lead_dispatch &&
                              std::abs(estimate->offset_ms) <= options.max_clock_offset.count();
      }
    }
    return common::protocol::to_json_string(param);
  }

  // One accepted registration's exchange with admin `index`, for the clock filter.
  void measured(std::size_t index, std::int64_t sent_ms, const common::http::HttpResult& result,
                std::int64_t answered_ms) {
    if (measured_admin != index) {
      clock_filter.clear();
      measured_admin = index;
      publish();
    }
    const auto header = result.header(common::protocol::kClockHeader);
    if (!header) return;
    const auto times = parse_clock_header(*header);
    if (!times) {
      spdlog::debug("registry: {} answered a malformed {} header", admins[index].base_url(),
                    common::protocol::kClockHeader);
      return;
    }
    if (clock_filter.add(sent_ms, times->received_ms, times->sent_ms, answered_ms)) publish();
  }

  // Makes clock_filter's estimate what clock_estimate() answers.
  void publish() {
    auto estimate = clock_filter.estimate();
    std::lock_guard lock(estimate_mutex);
    published_estimate = estimate;
  }

  // POSTs the registration body to `path` on the admins in order until one accepts it.
  bool call(std::string_view path, std::string_view what) {
    const std::string body = this->body(path == common::protocol::kRegistryPath);
    std::string failures;
    const bool registration = path == common::protocol::kRegistryPath;
    for (std::size_t index = 0; index < admins.size(); ++index) {
      auto& admin = admins[index];
      const std::int64_t sent_ms = clock.now_ms();
      const auto result = admin.post_json(path, body);
      const std::int64_t answered_ms = clock.now_ms();
      auto answer = result.transport_error != common::http::TransportError::kNone
                        ? common::protocol::ReturnT<std::string>::fail(result.error)
                        : common::http::read_xxl_job_answer<std::string>(result, admin.url(path));
      if (answer.is_success()) {
        spdlog::debug("registry: {} {} at {} accepted", what, options.address, admin.base_url());
        if (registration) measured(index, sent_ms, result, answered_ms);
        return true;
      }
      if (!failures.empty()) failures += "; ";
      failures += admin.base_url() + ": " + answer.msg;
    }
    spdlog::warn("registry: {} {} ({}) accepted by no admin: {}", what, options.address,
                 options.app_name, failures);
    return false;
  }

  void register_once() noexcept {
    try {
      if (!call(common::protocol::kRegistryPath, "registration of")) return;
      // A slow exchange (the first one opens the connection) leaves a wide margin: fires handed
      // over ahead start up to delay / 2 after their instant. Measured again at once, on the
      // connection now open, a few times at most.
      for (int extra = 0; extra < kExtraExchanges; ++extra) {
        const auto estimate = clock_filter.estimate();
        if (!estimate || estimate->delay_ms <= kCloseEnoughDelayMs) break;
        if (!call(common::protocol::kRegistryPath, "registration of")) break;
      }
    } catch (const std::exception& e) {
      spdlog::error("registry: registration failed: {}", e.what());
    } catch (...) {
      spdlog::error("registry: registration failed with a non-standard exception");
    }
  }

  // Exchanges whose round trip took longer than this are measured again at once, up to
  // kExtraExchanges more times a heartbeat.
  static constexpr std::int64_t kCloseEnoughDelayMs = 2;
  static constexpr int kExtraExchanges = 3;

  Options options;
  const common::Clock& clock{options.clock != nullptr ? *options.clock : common::SystemClock::instance()};
  common::RecurringTasks& tasks;
  std::vector<common::http::HttpClient> admins;  // the heartbeat's while it runs; then stop()'s
  // The heartbeat's while it runs (stop()'s removal does not touch them).
  ClockOffsetEstimator clock_filter;
  std::size_t measured_admin = 0;  // whose exchanges clock_filter holds
  mutable std::mutex estimate_mutex;  // guards published_estimate
  std::optional<ClockSample> published_estimate;
  std::mutex state_mutex;                        // serializes start() and stop()
  bool started = false;
  bool stopped = false;
  std::optional<common::RecurringTask> heartbeat;  // made by start()
};

RegistryClient::RegistryClient(Options options, common::RecurringTasks& tasks)
    : impl_(std::make_unique<Impl>(std::move(options), tasks)) {}

RegistryClient::~RegistryClient() {
  try {
    stop();
  } catch (const std::exception& e) {
    spdlog::error("registry: stop failed: {}", e.what());
  } catch (...) {
    spdlog::error("registry: stop failed");
  }
}

void RegistryClient::start() {
  std::lock_guard lock(impl_->state_mutex);
  if (impl_->started || impl_->stopped) {
    throw std::logic_error("registry client: start() called twice or after stop()");
  }
  impl_->heartbeat.emplace(impl_->tasks,
                          common::RecurringTask::Options{.name = "executor registration", .interval = impl_->options.interval},
                          [impl = impl_.get()](std::stop_token) { impl->register_once(); });
  impl_->heartbeat->start();
  impl_->started = true;
}

void RegistryClient::stop() {
  std::lock_guard lock(impl_->state_mutex);
  if (impl_->stopped) return;
  impl_->stopped = true;
  if (!impl_->started) return;
  impl_->heartbeat->stop();
  // The thread is gone: its clients are ours now, and no registration can follow the removal.
  impl_->call(common::protocol::kRegistryRemovePath, "removal of");
}

std::optional<ClockSample> RegistryClient::clock_estimate() const {
  std::lock_guard lock(impl_->estimate_mutex);
  return impl_->published_estimate;
}

}  // namespace cronwheel::executor
