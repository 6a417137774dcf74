#include "executor/src/registry_client.h"

#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <stop_token>
#include <thread>
#include <utility>

#include <spdlog/spdlog.h>

#include "common/http/xxl_job_call.h"
#include "common/protocol/constants.h"
#include "common/protocol/messages.h"

namespace cronwheel::executor {

struct RegistryClient::Impl {
  explicit Impl(Options opts) : options(std::move(opts)) {
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
    common::protocol::RegistryParam param;
    param.registry_group = std::string(common::protocol::kRegistryGroupExecutor);
    param.registry_key = options.app_name;
    param.registry_value = options.address;
    body = common::protocol::to_json_string(param);
  }

  // POSTs the registration body to `path` on the admins in order until one accepts it.
  bool call(std::string_view path, std::string_view what) {
    std::string failures;
    for (auto& admin : admins) {
      auto answer = common::http::post_xxl_job<std::string>(admin, path, body);
      if (answer.is_success()) {
        spdlog::debug("registry: {} {} at {} accepted", what, options.address, admin.base_url());
        return true;
      }
      if (!failures.empty()) failures += "; ";
      failures += admin.base_url() + ": " + answer.msg;
    }
    spdlog::warn("registry: {} {} ({}) accepted by no admin: {}", what, options.address,
                 options.app_name, failures);
    return false;
  }

  void run(const std::stop_token& stop) noexcept {
    try {
      std::unique_lock lock(wait_mutex);
      while (!stop.stop_requested()) {
        auto next = std::chrono::steady_clock::now() + options.interval;
        lock.unlock();
        call(common::protocol::kRegistryPath, "registration of");
        lock.lock();
        // Wakes at the deadline or, at once, when stop() is called.
        wake.wait_until(lock, stop, next, [] { return false; });
      }
    } catch (const std::exception& e) {
      spdlog::critical("registry thread failed: {}", e.what());
    }
  }

  Options options;
  std::string body;
  std::vector<common::http::HttpClient> admins;  // the thread's while it runs; then stop()'s
  std::mutex wait_mutex;
  std::condition_variable_any wake;  // only ever woken by the stop token
  std::mutex state_mutex;            // serializes start() and stop()
  bool started = false;
  bool stopped = false;
  std::jthread worker;
};

RegistryClient::RegistryClient(Options options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}

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
  impl_->started = true;
  impl_->worker = std::jthread([impl = impl_.get()](std::stop_token stop) { impl->run(stop); });
}

void RegistryClient::stop() {
  std::lock_guard lock(impl_->state_mutex);
  if (impl_->stopped) return;
  impl_->stopped = true;
  if (!impl_->started) return;
  impl_->worker.request_stop();
  impl_->worker.join();
  // The thread is gone: its clients are ours now, and no registration can follow the removal.
  impl_->call(common::protocol::kRegistryRemovePath, "removal of");
}

}  // namespace cronwheel::executor
