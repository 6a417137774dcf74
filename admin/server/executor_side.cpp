#include "admin/server/executor_side.h"

#include <stdexcept>
#include <utility>

#include "admin/api/executor_api.h"

namespace cronwheel::admin {

namespace {

common::RecurringTasks& on_clock(common::RecurringTasks& tasks, const common::Clock& clock) {
  if (&tasks.clock() != &clock) throw std::invalid_argument("executor side: its recurring tasks run on another clock");
  return tasks;
}

// The lost-result check asks each run's executor with the token its group's executors accept.
LostResultMonitor::Options with_group_tokens(LostResultMonitor::Options options, ExecutorTokens& tokens) {
  if (!options.token_of) options.token_of = [&tokens](std::int64_t group) { return tokens.for_group_id(group); };
  return options;
}

}  // namespace

ExecutorSide::ExecutorSide(Database& db, GroupStore& groups, LogStore& logs, common::http::HttpServer& http,
                           common::Clock& clock, common::RecurringTasks& tasks, Options options)
    : registry_store_(db),
      tokens_(groups, logs, std::move(options.access_token)),
      completion_store_(db),
      completion_(completion_store_, clock, Completion::Options{options.node_id, options.next_time_set, options.finished_runs, options.fires_written}),
      registry_monitor_(registry_store_, on_clock(tasks, clock), options.registry),
      lost_monitor_(completion_store_, completion_, tasks, with_group_tokens(options.lost, tokens_)) {
  // A new executor is in its group's list within a moment rather than at the next refresh.
  ExecutorRouteOptions routes;
  routes.registrations_changed = [this] { registry_monitor_.wake(); };
  if (options.suspects != nullptr) {
    routes.registered = [suspects = options.suspects](const std::string& address) { suspects->cleared(address); };
  }
  routes.refused_full = [this](const std::string&) { ++registrations_refused_; };
  routes.max_executors_per_group = options.max_executors_per_group;
  routes.dead_after_ms = options.registry.dead_after.count();
  routes.clock = &clock;
  add_executor_routes(http, registry_store_, completion_, tokens_, std::move(routes));
}

ExecutorSide::~ExecutorSide() { stop(); }

void ExecutorSide::prepare(pqxx::connection& connection) {
  PgRegistryStore::prepare(connection);
  PgCompletionStore::prepare(connection);
}

void ExecutorSide::start() {
  registry_monitor_.start();
  lost_monitor_.start();
}

void ExecutorSide::stop() noexcept {
  lost_monitor_.stop();
  registry_monitor_.stop();
}

}  // namespace cronwheel::admin
