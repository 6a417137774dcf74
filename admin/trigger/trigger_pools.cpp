#include "admin/trigger/trigger_pools.h"

#include <spdlog/spdlog.h>

namespace cronwheel::admin {

namespace {

constexpr std::int64_t kMillisPerMinute = 60'000;

}  // namespace

TriggerPools::TriggerPools(Options options, FireSender& sender, common::Clock& clock, Hooks hooks)
    : options_(options), sender_(sender), clock_(clock), hooks_(std::move(hooks)) {
  auto run = [this](const PendingFire& fire) { send(fire); };
  fast_pool_ = std::make_unique<TriggerPool>(
      TriggerPool::Options{"trigger-fast", options_.fast_max_threads, options_.fast_queue_capacity, options_.idle_timeout},
      run);
  slow_pool_ = std::make_unique<TriggerPool>(
      TriggerPool::Options{"trigger-slow", options_.slow_max_threads, options_.slow_queue_capacity, options_.idle_timeout},
      run);
}

TriggerPools::~TriggerPools() { shutdown(); }

void TriggerPools::dispatch(const std::vector<PendingFire>& fires) {
  if (shut_down_.load()) {
    // Not a full queue: the node is stopping, and the fires stay pending for whoever sends them.
    for (const auto& fire : fires) hooks_.finished(fire.log_id);
    return;
  }
  std::size_t refused = 0;
  for (const auto& fire : fires) {
    const bool to_slow = slow(fire.job_id);
    TriggerPool& pool = to_slow ? *slow_pool_ : *fast_pool_;
    if (pool.submit(fire)) {
      (to_slow ? slow_ : fast_).fetch_add(1, std::memory_order_relaxed);
    } else {
      // Back-pressure: the row stays pending and the feeder brings it back within a second.
      ++refused;
      hooks_.finished(fire.log_id);
    }
  }
  if (refused > 0) deferred_full_.fetch_add(refused, std::memory_order_relaxed);
  // Said once when the pools fill up and once when they take everything again, not every second.
  const bool was_full = full_.exchange(refused > 0, std::memory_order_relaxed);
  if (refused > 0 && !was_full) {
    spdlog::warn("scheduler: trigger pools full: {} of {} fires stay pending and go out late, as room frees up",
                 refused, fires.size());
  } else if (refused == 0 && was_full && !fires.empty()) {
    spdlog::info("scheduler: trigger pools take fires again");
  }
}

void TriggerPools::send(const PendingFire& fire) noexcept {
  if (hooks_.may_send && !hooks_.may_send()) {
    deferred_.fetch_add(1, std::memory_order_relaxed);
    hooks_.finished(fire.log_id);
    return;
  }
  const SendOutcome outcome = sender_.send(fire);
  switch (outcome.kind) {
    case SendOutcome::Kind::kTriggered:
      triggered_.fetch_add(1, std::memory_order_relaxed);
      break;
    case SendOutcome::Kind::kFailed:
      failed_.fetch_add(1, std::memory_order_relaxed);
      break;
    case SendOutcome::Kind::kDropped:
      dropped_.fetch_add(1, std::memory_order_relaxed);
      break;
  }
  note_duration(fire.job_id, outcome.took);
  hooks_.finished(fire.log_id);
}

void TriggerPools::note_duration(std::int64_t job_id, std::chrono::milliseconds took) {
  if (took <= options_.slow_trigger) return;
  const std::int64_t minute = clock_.now_ms() / kMillisPerMinute;
  std::lock_guard lock(slow_mutex_);
  if (minute != minute_) {
    slow_counts_.clear();
    minute_ = minute;
  }
  ++slow_counts_[job_id];
}

bool TriggerPools::slow(std::int64_t job_id) const {
  const std::int64_t minute = clock_.now_ms() / kMillisPerMinute;
  std::lock_guard lock(slow_mutex_);
  if (minute != minute_) {
    slow_counts_.clear();
    minute_ = minute;
    return false;
  }
  auto it = slow_counts_.find(job_id);
  return it != slow_counts_.end() && it->second > options_.slow_after;
}

void TriggerPools::shutdown() noexcept {
  shut_down_.store(true);
  for (auto* pool : {fast_pool_.get(), slow_pool_.get()}) {
    for (const auto& fire : pool->close()) hooks_.finished(fire.log_id);
  }
  for (auto* pool : {fast_pool_.get(), slow_pool_.get()}) pool->join();
}

TriggerPools::Stats TriggerPools::stats() const {
  Stats s;
  s.fast = fast_.load(std::memory_order_relaxed);
  s.slow = slow_.load(std::memory_order_relaxed);
  s.deferred_full = deferred_full_.load(std::memory_order_relaxed);
  s.triggered = triggered_.load(std::memory_order_relaxed);
  s.failed = failed_.load(std::memory_order_relaxed);
  s.dropped = dropped_.load(std::memory_order_relaxed);
  s.deferred = deferred_.load(std::memory_order_relaxed);
  s.fast_threads = fast_pool_->threads();
  s.slow_threads = slow_pool_->threads();
  s.fast_queued = fast_pool_->queued();
  s.slow_queued = slow_pool_->queued();
  return s;
}

}  // namespace cronwheel::admin
