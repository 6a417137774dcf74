#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "admin/alarm/alarm_service.h"
#include "admin/complete/completion.h"
#include "admin/model/finished_runs.h"
#include "admin/model/workflow.h"
#include "admin/pg/database_pool_stats.h"
#include "admin/registry/registry_monitor.h"
#include "admin/scheduler/scheduler.h"
#include "common/http/http_server.h"

namespace cronwheel::admin {

// What an admin node exposes at GET /metrics, read at each scrape: the scheduling core's
// counters (absent while the node does not schedule: before start, after stop) and the
// results it took from executors.
struct NodeMetrics {
  std::string node_id;
  std::optional<Scheduler::Stats> scheduler;
  Completion::Counters results;
  std::vector<FinishedRuns::Count> runs_finished;  // runs this node ended, by group and state
  // Fires waiting for a slot by group, as the node's slot dispatcher last read them (cluster-wide).
  std::map<std::int64_t, std::int64_t> waiting_for_slot;
  AlarmService::Counters alarms;
  std::uint64_t runs_deleted = 0;  // by run retention
  std::uint64_t workflow_runs_deleted = 0;  // by run retention
  // Workflow runs in the database by state, as the workflow runner last counted them.
  std::vector<std::pair<WorkflowRunState, std::int64_t>> workflow_runs;
  // Hand-offs between workflow nodes this node sent (TriggerService::workflow_handoff).
  std::optional<common::Histogram::Snapshot> workflow_handoff;
  // The node's PostgreSQL connection pools by name ("main": the API, results and sends;
  // "scheduling": the scheduling core's own), the `pool` label of cronwheel_db_pool_*.
  std::vector<std::pair<std::string, DatabasePoolStats>> db_pools;
  // The HTTP server's lanes (api_router.h: passwords, executor-calls), the `lane` label of
  // cronwheel_http_lane_*.
  std::vector<common::http::HttpServer::LaneStats> http_lanes;
  std::uint64_t registrations_refused = 0;  // for the per-group cap
  std::size_t suspect_executors = 0;        // addresses a /run did not reach, routed around
  // The live executors' clock offsets from the admin's, as the node's registry monitor last read
  // them (RegistryMonitor::clock_offsets).
  std::vector<RegistryMonitor::ClockOffset> executor_clock_offsets;
};

// The Prometheus text exposition format (0.0.4) of `metrics`, written by prometheus-cpp's
// TextSerializer. Names start with `cronwheel_`; counters end in `_total` and count since the
// node started; gauges are the value now. Every admin node answers for itself: sum over
// nodes for the cluster.
std::string metrics_text(const NodeMetrics& metrics);

// Content-Type of metrics_text's answer.
inline constexpr const char* kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

}  // namespace cronwheel::admin
