#pragma once

// An in-memory RegistryStore with the semantics of PgRegistryStore, over a FakeStores' groups:
// refresh() rewrites the automatic groups' address lists that FakeStores::groups() then shows,
// as the database's job_group table does. Ages use the Clock given, which stands for the
// database's clock (a FakeClock in tests, moved by hand).
//
// Thread-safe. Lock order: this store's mutex, then the FakeStores' (never the reverse), so it
// may be used beside the other fakes from many threads.

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "admin/model/records.h"
#include "admin/model/registry_store.h"
#include "admin/model/stores.h"
#include "common/util/clock.h"
#include "tests/support/fake_stores.h"

namespace cronwheel::testing {

class FakeRegistryStore final : public admin::RegistryStore {
 public:
  FakeRegistryStore(FakeStores& stores, common::Clock& clock) : stores_(stores), clock_(clock) {}

  bool upsert(std::string_view registry_group, std::string_view key, std::string_view value) override {
    if (registry_group != "EXECUTOR" && registry_group != "ADMIN") {
      throw admin::Conflict("registry group must be EXECUTOR or ADMIN", "registryGroup");
    }
    if (key.empty()) throw admin::Conflict("registry key must not be empty", "registryKey");
    if (value.empty()) throw admin::Conflict("registry value must not be empty", "registryValue");
    std::lock_guard lock(mutex_);
    auto& entry = entries_[Key{std::string(registry_group), std::string(key), std::string(value)}];
    const bool created = entry.id == 0;
    if (created) {
      entry.id = next_id_++;
      entry.registry_group = registry_group;
      entry.registry_key = key;
      entry.registry_value = value;
    }
    entry.updated_at = clock_.now_ms();
    return created;
  }

  Registered register_capped(std::string_view registry_group, std::string_view key, std::string_view value,
                             const std::vector<std::string>& handlers,
                             const std::optional<admin::ClockEstimate>& clock, std::size_t max_live,
                             std::int64_t dead_after_ms) override {
    {
      std::lock_guard lock(mutex_);
      if (entries_.count(Key{std::string(registry_group), std::string(key), std::string(value)}) == 0) {
        std::size_t live = 0;
        for (const auto& [k, e] : entries_) {
          live += e.registry_group == registry_group && e.registry_key == key && alive(e, dead_after_ms) ? 1 : 0;
        }
        if (live >= max_live) return Registered::kFull;
      }
    }
    const bool created = upsert(registry_group, key, value);
    std::lock_guard lock(mutex_);
    auto& entry = entries_.at(Key{std::string(registry_group), std::string(key), std::string(value)});
    entry.handlers = handlers;
    entry.clock = clock;
    return created ? Registered::kNew : Registered::kRenewed;
  }

  bool remove(std::string_view registry_group, std::string_view key, std::string_view value) override {
    std::lock_guard lock(mutex_);
    return entries_.erase(Key{std::string(registry_group), std::string(key), std::string(value)}) > 0;
  }

  std::vector<std::string> live_addresses(std::string_view app_name, std::int64_t dead_after_ms) override {
    std::lock_guard lock(mutex_);
    std::vector<std::string> out;
    for (const auto& [key, e] : entries_) {
      if (e.registry_group == "EXECUTOR" && e.registry_key == app_name && alive(e, dead_after_ms)) {
        out.push_back(e.registry_value);
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  std::vector<admin::RegistryEntry> live(std::int64_t dead_after_ms) override {
    std::lock_guard lock(mutex_);
    std::vector<admin::RegistryEntry> out;
    for (const auto& [key, e] : entries_) {
      if (alive(e, dead_after_ms)) out.push_back(e);
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
      return std::tie(a.registry_key, a.registry_value, a.registry_group) <
             std::tie(b.registry_key, b.registry_value, b.registry_group);
    });
    return out;
  }

  int refresh(std::int64_t dead_after_ms) override {
    std::lock_guard lock(mutex_);
    std::erase_if(entries_, [&](const auto& kv) { return !alive(kv.second, dead_after_ms); });
    std::map<std::string, std::vector<std::string>> by_app;
    for (const auto& [key, e] : entries_) {
      if (e.registry_group == "EXECUTOR") by_app[e.registry_key].push_back(e.registry_value);
    }
    for (auto& [app, addresses] : by_app) std::sort(addresses.begin(), addresses.end());
    return stores_.with_state([&](fake_stores_detail::State& s) {
      int changed = 0;
      for (auto& [id, group] : s.groups) {
        if (group.address_type != 0) continue;
        auto it = by_app.find(group.app_name);
        auto addresses = it == by_app.end() ? std::vector<std::string>{} : it->second;
        if (group.address_list == addresses) continue;
        group.address_list = std::move(addresses);  // updated_at kept: not a person's change
        ++changed;
      }
      return changed;
    });
  }

  // Test setup: when a registration was last renewed (as if its executor stopped calling then).
  void set_updated_at(std::string_view registry_group, std::string_view key, std::string_view value,
                      std::int64_t at_ms) {
    std::lock_guard lock(mutex_);
    entries_.at(Key{std::string(registry_group), std::string(key), std::string(value)}).updated_at = at_ms;
  }

 private:
  using Key = std::tuple<std::string, std::string, std::string>;

  bool alive(const admin::RegistryEntry& e, std::int64_t dead_after_ms) const {
    return e.updated_at > clock_.now_ms() - dead_after_ms;
  }

  FakeStores& stores_;
  common::Clock& clock_;
  std::mutex mutex_;
  std::map<Key, admin::RegistryEntry> entries_;
  std::int64_t next_id_ = 1;
};

}  // namespace cronwheel::testing
