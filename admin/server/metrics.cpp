#include "admin/server/metrics.h"

#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include <prometheus/metric_family.h>
#include <prometheus/text_serializer.h>

namespace cronwheel::admin {

namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

// Builds the families one by one, each with its samples.
class Families {
 public:
  using Samples = std::vector<std::pair<ClientMetric::Label, double>>;
  // Samples with any number of labels.
  struct Series {
    std::vector<ClientMetric::Label> labels;
    double value = 0;
  };

  void counter(std::string name, std::string help, Samples samples) {
    add(std::move(name), std::move(help), MetricType::Counter, std::move(samples));
  }
  void counter(std::string name, std::string help, double value) { counter(std::move(name), std::move(help), {{{}, value}}); }

  void gauge(std::string name, std::string help, Samples samples) {
    add(std::move(name), std::move(help), MetricType::Gauge, std::move(samples));
  }
  void gauge(std::string name, std::string help, double value) { gauge(std::move(name), std::move(help), {{{}, value}}); }

  void counter_series(std::string name, std::string help, std::vector<Series> series) {
    add(std::move(name), std::move(help), MetricType::Counter, std::move(series));
  }
  void gauge_series(std::string name, std::string help, std::vector<Series> series) {
    add(std::move(name), std::move(help), MetricType::Gauge, std::move(series));
  }

  // One sample per label (or one unlabelled: an empty label name).
  void histogram(std::string name, std::string help,
                 std::vector<std::pair<ClientMetric::Label, common::Histogram::Snapshot>> samples) {
    MetricFamily f{std::move(name), std::move(help), MetricType::Histogram, {}};
    for (auto& [label, snapshot] : samples) {
      ClientMetric m;
      if (!label.name.empty()) m.label.push_back(std::move(label));
      m.histogram.sample_count = snapshot.count;
      m.histogram.sample_sum = snapshot.sum;
      for (std::size_t i = 0; i < snapshot.upper_bounds.size(); ++i) {
        m.histogram.bucket.push_back({snapshot.cumulative[i], snapshot.upper_bounds[i]});
      }
      m.histogram.bucket.push_back({snapshot.count, std::numeric_limits<double>::infinity()});
      f.metric.push_back(std::move(m));
    }
    out_.push_back(std::move(f));
  }

  const std::vector<MetricFamily>& families() const { return out_; }

 private:
  void add(std::string name, std::string help, MetricType type, Samples samples) {
    std::vector<Series> series;
    for (auto& [label, value] : samples) {
      series.push_back({{}, value});
      if (!label.name.empty()) series.back().labels.push_back(std::move(label));
    }
    add(std::move(name), std::move(help), type, std::move(series));
  }
  void add(std::string name, std::string help, MetricType type, std::vector<Series> series) {
    MetricFamily f{std::move(name), std::move(help), type, {}};
    for (auto& [labels, value] : series) {
      ClientMetric m;
      m.label = std::move(labels);
      (type == MetricType::Counter ? m.counter.value : m.gauge.value) = value;
      f.metric.push_back(std::move(m));
    }
    out_.push_back(std::move(f));
  }

  std::vector<MetricFamily> out_;
};

ClientMetric::Label label(std::string name, std::string value) { return {std::move(name), std::move(value)}; }

double count(std::int64_t n) { return n < 0 ? 0.0 : static_cast<double>(n); }

}  // namespace

std::string metrics_text(const NodeMetrics& metrics) {
  Families f;
  f.gauge("cronwheel_node_info", "This admin node, by its node id (always 1)",
          {{label("node", metrics.node_id), 1.0}});
  f.gauge("cronwheel_scheduler_running", "1 while this node schedules and sends fires, 0 otherwise",
          metrics.scheduler ? 1.0 : 0.0);

  // Absent rather than zero while the node does not schedule: a restart must not look like
  // counters going back to 0 with a live scheduler.
  if (metrics.scheduler) {
    const auto& s = *metrics.scheduler;
    f.counter("cronwheel_scans_total", "Scans of due jobs this node made under the scheduling lock",
              s.schedule.scans);
    f.counter("cronwheel_scans_failed_total", "Scans that failed (database unavailable, ...)",
              s.schedule.failed_scans);
    f.counter("cronwheel_fires_decided_total", "Fires this node's scans decided and wrote as pending",
              s.schedule.fires);
    f.counter("cronwheel_fires_shed_total",
              "Fires this node's scans shed past capacity: not decided, recorded as skipped (each job's as one "
              "cancelled MISFIRE run) because this node handed its fires over late",
              s.schedule.shed);
    f.gauge("cronwheel_scan_keep_ratio",
            "The share of the fires due this node's scans keep (1: all; less while it sheds past capacity)",
            s.schedule.keep);
    f.gauge("cronwheel_ring_fires", "Fires held in the second ring until their second", static_cast<double>(s.ring_held));
    f.counter("cronwheel_trigger_pool_fires_total", "Fires handed to each trigger pool",
              {{label("pool", "fast"), s.pools.fast}, {label("pool", "slow"), s.pools.slow}});
    f.counter("cronwheel_trigger_pool_full_total",
              "Fires both trigger pools refused (threads and queue full): back-pressure, the fire stays "
              "pending and is fed again (a fire may be counted once per attempt)",
              s.pools.deferred_full);
    f.counter("cronwheel_fires_led_total",
              "Fires handed over to their executors ahead of their instant (lead dispatch), for the executors to start "
              "at the instant",
              s.pools.led);
    f.gauge("cronwheel_trigger_pool_threads", "Threads of each trigger pool now",
            {{label("pool", "fast"), static_cast<double>(s.pools.fast_threads)},
             {label("pool", "slow"), static_cast<double>(s.pools.slow_threads)}});
    f.gauge("cronwheel_trigger_pool_queued", "Fires waiting for a thread of each trigger pool",
            {{label("pool", "fast"), static_cast<double>(s.pools.fast_queued)},
             {label("pool", "slow"), static_cast<double>(s.pools.slow_queued)}});
    f.counter("cronwheel_sends_total",
              "Sends by outcome: triggered (the executor accepted), failed, dropped (no longer this "
              "node's fire), deferred (left pending: the lease was about to run out)",
              {{label("outcome", "triggered"), s.pools.triggered},
               {label("outcome", "failed"), s.pools.failed},
               {label("outcome", "dropped"), s.pools.dropped},
               {label("outcome", "deferred"), s.pools.deferred}});
    f.histogram("cronwheel_fire_lateness_seconds",
                "Seconds from each fire's scheduled instant to the start of its send by this node",
                {{{}, s.pools.lateness}});
    f.histogram("cronwheel_send_duration_seconds",
                "Seconds a send took, from its start to the executor's answer recorded, by outcome",
                {{label("outcome", "triggered"), s.pools.send_triggered},
                 {label("outcome", "failed"), s.pools.send_failed}});
    f.histogram("cronwheel_scan_duration_seconds",
                "Seconds each scan of due jobs held the scheduling lock (its transaction, lock to commit)",
                {{{}, s.schedule.scan_seconds}});
    f.counter("cronwheel_heartbeats_total", "Lease renewals of this node", s.heartbeat.beats);
    f.counter("cronwheel_heartbeats_failed_total", "Lease renewals that failed", s.heartbeat.failed_beats);
    f.counter("cronwheel_fires_taken_over_total", "Pending and sending fires taken over from dead nodes",
              s.heartbeat.taken_over);
  }

  const auto& r = metrics.results;
  f.counter("cronwheel_results_total",
            "Run results executors reported to this node: recorded, duplicate (already had one), "
            "not_running (never sent, or no longer lost), unknown (no such run)",
            {{label("outcome", "recorded"), count(r.recorded)},
             {label("outcome", "duplicate"), count(r.duplicates)},
             {label("outcome", "not_running"), count(r.not_running)},
             {label("outcome", "unknown"), count(r.unknown)}});
  f.counter("cronwheel_results_lost_total",
            "Runs marked lost: their executor was gone for 10 minutes, or restarted and no longer knows them",
            count(r.lost));
  f.counter("cronwheel_follow_up_fires_total", "Fires results led to",
            {{label("type", "child"), count(r.child_fires)}, {label("type", "retry"), count(r.retry_fires)}});
  // Labelled by group id: bounded by the groups admins create (never a series per job), and
  // /metrics, open to anyone, names no group.
  std::vector<Families::Series> finished;
  for (const auto& c : metrics.runs_finished) {
    finished.push_back({{label("group", std::to_string(c.group)), label("outcome", std::string(to_string(c.state)))},
                        static_cast<double>(c.runs)});
  }
  f.counter_series("cronwheel_runs_finished_total",
                   "Runs this node moved to a final state, by executor group id and outcome (the run's state): "
                   "succeeded, failed (by its executor, or no executor took it), lost, cancelled (skipped as a "
                   "misfire, or by an operator)",
                   std::move(finished));

  std::vector<Families::Series> waiting;
  for (const auto& [group, count] : metrics.waiting_for_slot) {
    waiting.push_back({{label("group", std::to_string(group))}, static_cast<double>(count)});
  }
  f.gauge_series("cronwheel_fires_waiting_for_slot",
                 "Fires waiting for a slot of their group's or job's concurrency limit, by executor group id, in the "
                 "whole cluster as this node last read them",
                 std::move(waiting));

  const auto& a = metrics.alarms;
  f.counter("cronwheel_alarms_total",
            "Alarms this node sent (one per job per quiet period, covering every run since), by outcome: "
            "sent (every destination took it), failed (a destination never did: every try failed, or no mail server)",
            {{label("outcome", "sent"), count(a.sent)}, {label("outcome", "failed"), count(a.failed)}});
  f.counter("cronwheel_alarm_retries_total", "Tries of an alarm destination after a failed one", count(a.retried));
  f.counter("cronwheel_runs_deleted_total", "Runs this node deleted as older than --run-retention-days",
            count(metrics.runs_deleted));
  f.counter("cronwheel_workflow_runs_deleted_total",
            "Workflow runs this node deleted as older than --run-retention-days", count(metrics.workflow_runs_deleted));
  {
    Families::Samples by_state;
    for (const auto& [state, n] : metrics.workflow_runs) {
      by_state.push_back({label("state", std::string(to_string(state))), static_cast<double>(n)});
    }
    f.gauge("cronwheel_workflow_runs",
            "Workflow runs in the database by state (waiting, running, succeeded, failed, cancelled, skipped, "
            "timed_out), as counted every 15 s; the same on every node (the database's count)",
            std::move(by_state));
  }
  if (metrics.workflow_handoff) {
    f.histogram("cronwheel_workflow_handoff_seconds",
                "Seconds from a workflow node's parent's end being recorded to the node's run accepted by its "
                "executor, for the runs this node sent",
                {{{}, *metrics.workflow_handoff}});
  }

  // The connection pools: a caller (an HTTP request, a send, a result, a scan) waits here when
  // every connection is busy.
  std::vector<std::pair<ClientMetric::Label, common::Histogram::Snapshot>> waits;
  Families::Samples sizes;
  std::vector<Families::Series> connections, failures;
  for (const auto& [pool, stats] : metrics.db_pools) {
    waits.push_back({label("pool", pool), stats.wait_seconds});
    sizes.push_back({label("pool", pool), static_cast<double>(stats.size)});
    connections.push_back({{label("pool", pool), label("state", "in_use")}, static_cast<double>(stats.in_use)});
    connections.push_back({{label("pool", pool), label("state", "idle")}, static_cast<double>(stats.idle)});
    failures.push_back({{label("pool", pool), label("reason", "timeout")}, static_cast<double>(stats.timeouts)});
    failures.push_back({{label("pool", pool), label("reason", "unreachable")}, static_cast<double>(stats.unreachable)});
  }
  f.histogram("cronwheel_db_pool_wait_seconds",
              "Seconds each take of a database connection waited, by pool: every take, those that found a free "
              "connection at once too (the count is the rate of takes), failed ones included",
              std::move(waits));
  f.gauge_series("cronwheel_db_pool_connections",
                 "Open database connections by pool and state: in_use (leased to a caller, or being opened for "
                 "one), idle",
                 std::move(connections));
  f.gauge("cronwheel_db_pool_size", "The most database connections each pool opens", std::move(sizes));
  f.counter_series("cronwheel_db_pool_acquisitions_failed_total",
                   "Takes of a database connection that failed, by pool and reason: timeout (none came free "
                   "in time), unreachable (a new connection could not be opened, or not yet tried again)",
                   std::move(failures));

  f.counter("cronwheel_registrations_refused_total",
            "Executor registrations refused because their group had --max-executors-per-group live ones",
            static_cast<double>(metrics.registrations_refused));
  std::vector<Families::Series> clock_offsets;
  for (const auto& o : metrics.executor_clock_offsets) {
    clock_offsets.push_back({{label("app", o.app_name), label("address", o.address)},
                             static_cast<double>(o.clock.offset_ms) / 1000.0});
  }
  f.gauge_series("cronwheel_executor_clock_offset_seconds",
                 "The admin's clock minus each live executor's, as the executor estimated it from its registrations "
                 "(NTP's way: the exchange of the smallest round trip among its last 8), by app name and address; "
                 "cronwheel executors only, from their second registration",
                 std::move(clock_offsets));
  f.gauge("cronwheel_executors_suspect",
          "Executor addresses a /run could not reach, routed around until they register again (or 30 s pass)",
          static_cast<double>(metrics.suspect_executors));

  // Lanes: requests that wait long (password checks, calls to executors) run apart from the
  // workers that answer everything else, bounded; refusals are 503s their clients saw.
  Families::Samples inside;
  std::vector<Families::Series> refused;
  for (const auto& lane : metrics.http_lanes) {
    inside.push_back({label("lane", lane.name), static_cast<double>(lane.inside)});
    refused.push_back({{label("lane", lane.name), label("reason", "full")}, static_cast<double>(lane.refused_full)});
    refused.push_back({{label("lane", lane.name), label("reason", "late")}, static_cast<double>(lane.refused_late)});
  }
  f.gauge("cronwheel_http_lane_requests", "HTTP requests in each lane now, waiting or being answered",
          std::move(inside));
  f.counter_series("cronwheel_http_lane_refused_total",
                   "HTTP requests a lane answered 503 without running them, by lane and reason: full (the lane, or "
                   "the client address's share of it, was full), late (waited longer than the lane allows)",
                   std::move(refused));

  return prometheus::TextSerializer().Serialize(f.families());
}

}  // namespace cronwheel::admin
