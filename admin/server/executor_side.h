#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include <pqxx/pqxx>

#include "admin/complete/completion.h"
#include "admin/complete/lost_result_monitor.h"
#include "admin/auth/executor_tokens.h"
#include "admin/model/registry_store.h"
#include "admin/registry/registry_monitor.h"
#include "admin/route/suspect_addresses.h"
#include "admin/pg/database.h"
#include "admin/pg/pg_completion_store.h"
#include "admin/pg/pg_registry_store.h"
#include "common/http/http_server.h"
#include "common/timer/recurring_task.h"
#include "common/util/clock.h"

namespace cronwheel::admin {

// The admin node's side of its executors, in one piece: the registry and completion stores,
// result handling (Completion), the executor-facing endpoints (add_executor_routes) and the two
// monitors (registrations, lost results).
//
// Construction registers the endpoints on `http` but touches neither the network nor the
// database; start() starts the monitors (the schema must be migrated by then): recurring tasks
// on the node's shared timer, each on a lane of its own; stop() stops them, waiting for a pass
// under way, and is idempotent. Stop the HTTP server first so no
// callback arrives while the node shuts down; results sent meanwhile are kept by the executors
// and delivered to another node.
class ExecutorSide {
 public:
  struct Options {
    // Required of executors as XXL-JOB-ACCESS-TOKEN when not empty, unless their group has a
    // token of its own (executor_tokens.h).
    std::string access_token;
    // This node's id: owner of the fires results lead to (child jobs, retries).
    std::string node_id;
    RegistryMonitor::Options registry;
    LostResultMonitor::Options lost;
    // Called when a FIX_DELAY job got its next time from a result (Completion::Options).
    std::function<void()> next_time_set;
    // Called with the fires results led to (Completion::Options).
    FiresWritten fires_written = {};
    // The most live registrations one app name takes (ExecutorRouteOptions).
    std::size_t max_executors_per_group = 512;
    // When set, an executor that registers is no longer suspect there; must outlive the object.
    SuspectAddresses* suspects = nullptr;
    // Where the runs results end are counted (Completion::Options); none when null.
    FinishedRuns* finished_runs = nullptr;
  };

  // `groups` and `logs` tell which access token each group's executors must send
  // (executor_tokens.h).
  // `clock` and `tasks` (the node's timer, on `clock`: std::invalid_argument otherwise) must
  // outlive the object.
  ExecutorSide(Database& db, GroupStore& groups, LogStore& logs, common::http::HttpServer& http, common::Clock& clock,
               common::RecurringTasks& tasks, Options options);
  ~ExecutorSide();  // stop()

  ExecutorSide(const ExecutorSide&) = delete;
  ExecutorSide& operator=(const ExecutorSide&) = delete;

  // Registers the stores' statements on a new connection (part of the Database's Preparer).
  static void prepare(pqxx::connection& connection);

  void start();
  void stop() noexcept;

  // Refreshes the automatic groups' address lists now rather than at the next interval: a new
  // automatic group lists the executors already registered under its app name at once.
  void refresh_registry_soon() noexcept { registry_monitor_.wake(); }

  RegistryStore& registry() noexcept { return registry_store_; }
  CompletionStore& completion_store() noexcept { return completion_store_; }
  Completion& completion() noexcept { return completion_; }
  // The live executors' clock offsets, as the registry monitor last read them.
  std::vector<RegistryMonitor::ClockOffset> clock_offsets() const { return registry_monitor_.clock_offsets(); }
  // The token the executors of group `group_id` accept (ExecutorTokens::for_group_id): the one
  // every call to them carries.
  std::string token_for_group(std::int64_t group_id) { return tokens_.for_group_id(group_id); }
  // Whether the live executor at `address` takes lead dispatch (RegistryMonitor::takes_lead).
  bool takes_lead(std::string_view address) const { return registry_monitor_.takes_lead(address); }
  bool any_takes_lead() const { return registry_monitor_.any_takes_lead(); }
  // Registrations refused since start because their group had its most executors.
  std::uint64_t registrations_refused() const noexcept { return registrations_refused_.load(); }

 private:
  PgRegistryStore registry_store_;
  ExecutorTokens tokens_;
  PgCompletionStore completion_store_;
  Completion completion_;
  RegistryMonitor registry_monitor_;
  LostResultMonitor lost_monitor_;
  std::atomic<std::uint64_t> registrations_refused_{0};
};

}  // namespace cronwheel::admin
