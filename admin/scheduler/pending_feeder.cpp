#include "admin/scheduler/pending_feeder.h"

#include <exception>

#include <spdlog/spdlog.h>

namespace cronwheel::admin {

PendingFeeder::PendingFeeder(ScheduleStore& store, common::RecurringTasks& tasks, std::string node_id, Push push,
                             Options options)
    : store_(store),
      clock_(tasks.clock()),
      node_id_(std::move(node_id)),
      push_(std::move(push)),
      options_(options),
      task_(tasks, {"pending-fire feeder", options.interval}, [this](std::stop_token) { feed_once(); }) {}

PendingFeeder::~PendingFeeder() { stop(); }

std::size_t PendingFeeder::feed_once() noexcept {
  try {
    const std::int64_t now = clock_.now_ms();
    auto rows = store_.pending(node_id_, now + options_.window_ms, options_.limit);
    if (failing_) spdlog::info("scheduler: the pending-fire feeder reads again");
    failing_ = false;
    const LateFiresVerdict verdict = judge_late_fires(rows, now, options_.window_ms);
    if (!verdict.cancel.empty()) {
      // Before any push: a FIRE_ONCE_NOW job's newest late fire goes out only once its older
      // ones are cancelled, so none of them can be taken for the newest at a later pass.
      const auto moved = count_finished(options_.finished_runs, FireState::kCancelled,
                                        follow_ups_of(RunEnd::kMisfireSkipped, now, node_id_),
                                        [&](const FollowUpPlanner& plan) {
                                          return store_.cancel_pending(verdict.cancel, node_id_, plan);
                                        });
      spdlog::info("scheduler: cancelled {} late pending fires by their jobs' misfire strategies ({} late fires of "
                   "DO_NOTHING jobs, {} older late fires of FIRE_ONCE_NOW jobs coalesced into their newest){}",
                   moved.size(), verdict.skipped, verdict.coalesced,
                   moved.size() < verdict.cancel.size() ? "; the others had been claimed or taken meanwhile" : "");
    }
    std::size_t pushed = 0;
    for (const auto& fire : verdict.send) pushed += push_(fire) ? 1 : 0;
    if (pushed > 0) spdlog::debug("scheduler: fed {} pending fires to the ring", pushed);
    return pushed;
  } catch (const std::exception& e) {
    if (!failing_) {
      spdlog::error("scheduler: reading or cancelling this node's pending fires failed, retrying: {}", e.what());
    }
    failing_ = true;
    return 0;
  }
}

}  // namespace cronwheel::admin
