#include "admin/scheduler/slot_dispatcher.h"

#include <utility>

#include <spdlog/spdlog.h>

#include "admin/model/slots.h"

namespace cronwheel::admin {

SlotDispatcher::SlotDispatcher(TriggerStore& store, common::RecurringTasks& tasks, std::string node_id,
                               Admitted admitted, Options options)
    : store_(store),
      node_id_(std::move(node_id)),
      admitted_(std::move(admitted)),
      options_(options),
      task_(tasks, {"slot dispatcher", options.interval}, [this](std::stop_token) { dispatch_once(); }) {}

SlotDispatcher::~SlotDispatcher() { stop(); }

std::size_t SlotDispatcher::dispatch_once() noexcept {
  try {
    auto waiting = store_.waiting_by_group();
    {
      std::lock_guard lock(mutex_);
      waiting_ = waiting;
    }
    std::size_t total = 0;
    for (const auto& [group, count] : waiting) {
      const auto admitted = store_.admit(group, node_id_, options_.max_candidates, admit_waiting);
      if (!admitted || admitted->empty()) continue;  // held by another node, or no slot free
      total += admitted->size();
      spdlog::debug("scheduler: admitted {} of {} fires waiting for a slot in group {}", admitted->size(), count, group);
      if (admitted_) admitted_(*admitted);
    }
    if (failing_) spdlog::info("scheduler: the slot dispatcher admits again");
    failing_ = false;
    return total;
  } catch (const std::exception& e) {
    if (!failing_) spdlog::error("scheduler: admitting fires waiting for a slot failed, retrying: {}", e.what());
    failing_ = true;
    return 0;
  }
}

std::map<std::int64_t, std::int64_t> SlotDispatcher::waiting() const {
  std::lock_guard lock(mutex_);
  return waiting_;
}

}  // namespace cronwheel::admin
