#pragma once

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "admin/model/node_store.h"
#include "admin/model/store_errors.h"
#include "admin/model/records.h"
#include "admin/model/stores.h"
#include "common/util/clock.h"

namespace cronwheel::testing {

// An in-memory NodeStore with PgNodeStore's semantics. The Clock given plays the database's
// clock: leases are set and compared with its wall time, as PgNodeStore does with now().
// fail_with(...) makes every call throw StoreUnavailable until cleared.
//
// Thread-safe.
class FakeNodeStore final : public admin::NodeStore {
 public:
  explicit FakeNodeStore(common::Clock& clock) : clock_(clock) {}

  void heartbeat(const admin::AdminNode& node, std::int64_t lease_ms, bool starting) override {
    std::lock_guard lock(mutex_);
    enter();
    const auto now = clock_.now_ms();
    auto it = nodes_.find(node.node_id);
    admin::AdminNode n = node;
    n.started_at = it == nodes_.end() || starting ? now : it->second.started_at;
    n.heartbeat_at = now;
    n.lease_until = now + lease_ms;
    nodes_[n.node_id] = n;
    ++heartbeats_;
  }
  void release(std::string_view node_id) override {
    std::lock_guard lock(mutex_);
    enter();
    auto it = nodes_.find(std::string(node_id));
    if (it != nodes_.end()) it->second.lease_until = std::max(clock_.now_ms(), it->second.heartbeat_at);
  }
  std::vector<admin::AdminNode> list() override {
    std::lock_guard lock(mutex_);
    enter();
    std::vector<admin::AdminNode> out;
    for (const auto& [id, n] : nodes_) out.push_back(n);
    return out;
  }
  std::vector<std::string> expired() override {
    std::lock_guard lock(mutex_);
    enter();
    std::vector<std::string> out;
    for (const auto& [id, n] : nodes_) {
      if (n.lease_until <= clock_.now_ms()) out.push_back(id);
    }
    return out;
  }

  // Test setup: a node row as given.
  void put(const admin::AdminNode& node) {
    std::lock_guard lock(mutex_);
    nodes_[node.node_id] = node;
  }
  std::optional<admin::AdminNode> get(const std::string& node_id) const {
    std::lock_guard lock(mutex_);
    auto it = nodes_.find(node_id);
    return it == nodes_.end() ? std::nullopt : std::optional<admin::AdminNode>(it->second);
  }
  int heartbeats() const {
    std::lock_guard lock(mutex_);
    return heartbeats_;
  }
  void fail_with(std::optional<std::string> message) {
    std::lock_guard lock(mutex_);
    failure_ = std::move(message);
  }

 private:
  void enter() {
    if (failure_) throw admin::StoreUnavailable(*failure_);
  }

  common::Clock& clock_;
  mutable std::mutex mutex_;
  std::map<std::string, admin::AdminNode> nodes_;
  std::optional<std::string> failure_;
  int heartbeats_ = 0;
};

}  // namespace cronwheel::testing
