#include "admin/model/node_store.h"
#include "admin/scheduler/scheduler.h"

#include <stdexcept>

#include <spdlog/spdlog.h>

namespace cronwheel::admin {

Scheduler::Scheduler(ScheduleStore& store, NodeStore& nodes, FireSender& sender, ExecutorClient& executors,
                     common::Clock& clock, common::RecurringTasks& tasks, AdminNode self, Options options)
    : node_id_(self.node_id) {
  if (&tasks.clock() != &clock) throw std::invalid_argument("scheduler: its recurring tasks run on another clock");
  // The ring hands fires to the pools, which report back to the ring: the ring is made first
  // and its hand-off reaches the pools only once its thread runs (start()).
  SecondRing::Ahead ahead;
  if (options.lead_horizon.count() > 0) {
    ahead.offer = [this](const std::vector<PendingFire>& fires) { return pools_->hand_over_ahead(fires); };
    ahead.horizon = options.lead_horizon;
    ahead.chunk = options.lead_chunk;
  }
  ring_ = std::make_unique<SecondRing>(
      clock, [this](std::vector<PendingFire> fires, std::int64_t due_ms) { pools_->dispatch(fires, due_ms); },
      options.prepare_ahead, std::move(ahead));
  if (!options.shedding.sends) options.shedding.sends = [this] { return pools_->sends(); };
  if (!options.shedding.refusals) options.shedding.refusals = [this] { return pools_->fast_refusals(); };
  shedder_ = std::make_unique<LoadShedder>(options.shedding);
  if (shedder_->enabled()) {
    ring_->watch([this](std::size_t fires, std::int64_t due_ms, std::int64_t done_ms) {
      shedder_->handed_over(fires, due_ms, done_ms);
    });
    options.schedule.shedder = shedder_.get();
  }
  heartbeat_ = std::make_unique<NodeHeartbeat>(nodes, store, executors, tasks, std::move(self),
                                               options.default_access_token,
                                               [this](const std::vector<PendingFire>& fires) { push(fires); },
                                               options.heartbeat);
  TriggerPools::Hooks hooks;
  hooks.finished = [this](std::int64_t log_id) { ring_->finished(log_id); };
  hooks.may_send = [this] { return heartbeat_->lease_valid(); };
  pools_ = std::make_unique<TriggerPools>(options.pools, sender, clock, std::move(hooks));
  // The feeder's fires already due (late ones, fires admitted to a concurrency slot) go to the
  // pools at once, not at the ring's next second: a slot freed is refilled without waiting.
  feeder_ = std::make_unique<PendingFeeder>(store, tasks, node_id_,
                                            [this](const PendingFire& fire) { return ring_->push_due_now(fire); },
                                            options.feeder);
  schedule_ = std::make_unique<ScheduleThread>(
      store, clock, node_id_, [this](const std::vector<PendingFire>& fires) { push(fires); }, options.schedule);
}

Scheduler::~Scheduler() { stop(); }

void Scheduler::push(const std::vector<PendingFire>& fires) {
  for (const auto& fire : fires) ring_->push(fire);
}

void Scheduler::start() {
  if (started_) return;
  started_ = true;
  // Register before deciding anything: the fires this node writes name it as their owner.
  if (!heartbeat_->beat_once()) {
    spdlog::warn("scheduler: node {} starts without a lease; it sends nothing until a heartbeat works", node_id_);
  }
  ring_->start();
  feeder_->start();
  schedule_->start();
  heartbeat_->start();
  spdlog::info("scheduler: node {} schedules", node_id_);
}

void Scheduler::stop() noexcept {
  if (!started_ || stopped_) return;
  stopped_ = true;
  schedule_->stop();
  feeder_->stop();
  const auto held = ring_->stop();
  pools_->shutdown();
  heartbeat_->stop();
  heartbeat_->release();
  spdlog::info("scheduler: node {} stopped scheduling; {} fires it held stay pending for the other nodes", node_id_,
               held.size());
}

void Scheduler::wake() { schedule_->wake(); }

void Scheduler::send_soon(const std::vector<JobLog>& fires) {
  for (const auto& fire : fires) {
    if (fire.state != FireState::kPending || fire.admin_node != node_id_) continue;
    ring_->push_due_now({fire.id, fire.job_id, fire.scheduled_time});
  }
}

void Scheduler::feed_now() { feeder_->wake(); }

bool Scheduler::lease_valid() const noexcept { return heartbeat_->lease_valid(); }

Scheduler::Stats Scheduler::stats() const {
  return {schedule_->stats(), pools_->stats(), heartbeat_->stats(), ring_->held()};
}

}  // namespace cronwheel::admin
