#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "admin/api/api_router.h"
#include "admin/api/executor_call_limiter.h"
#include "admin/api/held_runs.h"
#include "admin/model/calendar_store.h"
#include "admin/model/executor_client.h"
#include "admin/model/finished_runs.h"
#include "admin/model/run_end.h"
#include "admin/model/stores.h"
#include "common/util/clock.h"

// The REST API's resource endpoints: executor groups, jobs, their script source, logs and the
// cron preview. Paths are relative to /api/v1 and documented in openapi.yaml; every route is
// registered on an ApiRouter, which authenticates, checks CSRF and turns errors into the API's
// one error shape. Permissions follow admin/api/resource_access.h: a normal user sees and acts
// on their own groups only, and anything else is answered 404.
//
// Every change goes through the stores with the request's Actor, so it is audited in the same
// transaction; calls to executors (log content, kill) are made outside any transaction.
//
// Handlers keep references to `stores` and the objects it refers to, and a copy of `options`:
// they must outlive the HTTP server the router serves on.
namespace cronwheel::admin {

struct ResourceOptions {
  // This admin node's id: the owner of the pending fires that POST jobs/{id}/trigger creates.
  std::string node_id = "admin";

  // XXL-JOB-ACCESS-TOKEN for calls to executors whose group has no token of its own.
  std::string access_token;

  // When set, called after an automatic group (address type 0) is created or updated: its
  // address list comes from executor registrations, which the node then reads at once.
  std::function<void()> automatic_group_changed;

  // Reads a run's log from its executor and kills runs (logs/{id}/content, logs/{id}/kill);
  // required by add_log_routes. The node's one client, bounded by its own timeouts. Those routes
  // run on the executor-call lane, and each group's calls in flight are bounded by
  // `executor_calls` (shared by every copy of these options).
  ExecutorClient* executors = nullptr;
  std::shared_ptr<ExecutorCallLimiter> executor_calls = std::make_shared<ExecutorCallLimiter>();

  // A registration older than this is no executor online (RegistryMonitor's dead timeout).
  std::chrono::milliseconds executor_dead_after{90'000};

  // When set, the fires operators cancel (DELETE logs/{id}) are counted there, by group.
  FinishedRuns* finished_runs = nullptr;

  // Ends a running run as killed by an operator (Completion::mark_killed), with the message its
  // row gets: POST logs/{id}/kill records the kill at once with it. True when the run was still
  // running and is now ended. Required by add_log_routes.
  std::function<bool(std::int64_t run_id, const std::string& message)> kill_run = {};
  // Ends a run its executor gave back before its instant (lead dispatch) as cancelled by an
  // operator's kill (Completion::mark_cancelled), with the message its row gets. True when the run
  // was still running and is now ended. Required by add_log_routes.
  std::function<bool(std::int64_t run_id, const std::string& message)> cancel_held_run = {};

  // When set, called with each fire POST jobs/{id}/trigger wrote, once committed, so it is sent
  // at once.
  FiresWritten fires_written = {};

  // Where the calendars jobs name are read (admin/api/calendars_api.h): checked to exist when a
  // job names one, and applied to its first fire time and previews. Unset, a job's calendar is
  // neither checked here (the store's foreign key refuses a missing one) nor applied to times the
  // API computes (the scan still applies it).
  CalendarStore* calendars = nullptr;

  // Lead dispatch: when wired, a job changed has its held runs taken back and sent again as it is
  // now, a job stopped (or paused with its group) has them cancelled, and a job deleted has them
  // dropped by its executors.
  HeldRuns held;
};

// groups: GET/POST groups, GET/PUT/DELETE groups/{id}.
void add_group_routes(ApiRouter& router, Stores stores, const ResourceOptions& options);

// jobs: GET/POST jobs, GET/PUT/DELETE jobs/{id}, POST jobs/{id}/copy|start|stop|trigger,
// GET jobs/{id}/next-fires.
void add_job_routes(ApiRouter& router, Stores stores, common::Clock& clock, const ResourceOptions& options);

// script source: GET jobs/{id}/script/versions, POST jobs/{id}/script,
// POST jobs/{id}/script/versions/{versionId}/restore.
void add_script_routes(ApiRouter& router, Stores stores, const ResourceOptions& options);

// logs: GET logs, POST logs/clear, GET/DELETE logs/{id}, GET logs/{id}/content,
// POST logs/{id}/kill.
void add_log_routes(ApiRouter& router, Stores stores, common::Clock& clock, const ResourceOptions& options);

// GET nodes, GET groups/{id}/executors, GET dashboard (admin/api/overview_api.cpp).
void add_overview_routes(ApiRouter& router, Stores stores, common::Clock& clock, const ResourceOptions& options);

// GET cron/next.
void add_cron_routes(ApiRouter& router, common::Clock& clock, const ResourceOptions& options);

// All of the above. `clock` gives "now" (start, trigger, previews, audit times); like `stores`,
// it must outlive the server.
void add_resource_routes(ApiRouter& router, Stores stores, common::Clock& clock, const ResourceOptions& options);

}  // namespace cronwheel::admin
