// GET /metrics' text: Prometheus exposition format, the names monitoring is built on.

#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>

#include "admin/server/metrics.h"

namespace cronwheel::admin {
namespace {

// The value of the sample line `series` (name with its labels, as written), or -1 when absent.
double sample(const std::string& text, const std::string& series) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  }
  return -1;
}

NodeMetrics scheduling_node() {
  NodeMetrics m;
  m.node_id = "admin-1";
  Scheduler::Stats s;
  s.schedule.scans = 120;
  s.schedule.failed_scans = 2;
  s.schedule.fires = 4'000;
  s.schedule.shed = 600;
  s.schedule.keep = 0.75;
  s.pools.fast = 3'900;
  s.pools.slow = 95;
  s.pools.deferred_full = 5;
  s.pools.triggered = 3'980;
  s.pools.failed = 7;
  s.pools.dropped = 1;
  s.pools.deferred = 0;
  s.pools.fast_threads = 12;
  s.pools.slow_queued = 3;
  s.heartbeat.beats = 40;
  s.heartbeat.taken_over = 9;
  s.ring_held = 250;
  common::Histogram lateness{0.1, 1};
  for (double seconds : {0.05, 0.5, 3.0}) lateness.observe(seconds);
  s.pools.lateness = lateness.snapshot();
  common::Histogram scans{0.01};
  scans.observe(0.002);
  s.schedule.scan_seconds = scans.snapshot();
  m.scheduler = s;
  m.results.recorded = 3'970;
  m.results.duplicates = 4;
  m.results.lost = 1;
  m.results.child_fires = 6;
  m.results.retry_fires = 2;
  m.alarms.sent = 11;
  m.alarms.failed = 3;
  m.alarms.retried = 5;
  return m;
}

TEST(Metrics, SchedulerCountersAndGaugesAreExposedUnderTheirNames) {
  const auto text = metrics_text(scheduling_node());

  EXPECT_EQ(sample(text, "cronwheel_scheduler_running"), 1);
  EXPECT_EQ(sample(text, "cronwheel_node_info{node=\"admin-1\"}"), 1);
  EXPECT_EQ(sample(text, "cronwheel_scans_total"), 120);
  EXPECT_EQ(sample(text, "cronwheel_scans_failed_total"), 2);
  EXPECT_EQ(sample(text, "cronwheel_fires_decided_total"), 4'000);
  EXPECT_EQ(sample(text, "cronwheel_fires_shed_total"), 600);
  EXPECT_EQ(sample(text, "cronwheel_scan_keep_ratio"), 0.75);
  EXPECT_EQ(sample(text, "cronwheel_ring_fires"), 250);
  EXPECT_EQ(sample(text, "cronwheel_trigger_pool_fires_total{pool=\"fast\"}"), 3'900);
  EXPECT_EQ(sample(text, "cronwheel_trigger_pool_fires_total{pool=\"slow\"}"), 95);
  EXPECT_EQ(sample(text, "cronwheel_trigger_pool_full_total"), 5);
  EXPECT_EQ(sample(text, "cronwheel_trigger_pool_threads{pool=\"fast\"}"), 12);
  EXPECT_EQ(sample(text, "cronwheel_trigger_pool_queued{pool=\"slow\"}"), 3);
  EXPECT_EQ(sample(text, "cronwheel_sends_total{outcome=\"triggered\"}"), 3'980);
  EXPECT_EQ(sample(text, "cronwheel_sends_total{outcome=\"failed\"}"), 7);
  EXPECT_EQ(sample(text, "cronwheel_heartbeats_total"), 40);
  EXPECT_EQ(sample(text, "cronwheel_fires_taken_over_total"), 9);
  EXPECT_EQ(sample(text, "cronwheel_results_total{outcome=\"recorded\"}"), 3'970);
  EXPECT_EQ(sample(text, "cronwheel_results_total{outcome=\"duplicate\"}"), 4);
  EXPECT_EQ(sample(text, "cronwheel_results_lost_total"), 1);
  EXPECT_EQ(sample(text, "cronwheel_follow_up_fires_total{type=\"child\"}"), 6);
  EXPECT_EQ(sample(text, "cronwheel_follow_up_fires_total{type=\"retry\"}"), 2);
  EXPECT_EQ(sample(text, "cronwheel_alarms_total{outcome=\"sent\"}"), 11);
  EXPECT_EQ(sample(text, "cronwheel_alarms_total{outcome=\"failed\"}"), 3);
  EXPECT_EQ(sample(text, "cronwheel_alarm_retries_total"), 5);
}

TEST(Metrics, LatenessAndDurationsAreHistograms) {
  const auto text = metrics_text(scheduling_node());
  EXPECT_NE(text.find("# TYPE cronwheel_fire_lateness_seconds histogram"), std::string::npos) << text;
  EXPECT_EQ(sample(text, "cronwheel_fire_lateness_seconds_bucket{le=\"0.1\"}"), 1);
  EXPECT_EQ(sample(text, "cronwheel_fire_lateness_seconds_bucket{le=\"1\"}"), 2);
  EXPECT_EQ(sample(text, "cronwheel_fire_lateness_seconds_bucket{le=\"+Inf\"}"), 3);
  EXPECT_EQ(sample(text, "cronwheel_fire_lateness_seconds_count"), 3);
  EXPECT_DOUBLE_EQ(sample(text, "cronwheel_fire_lateness_seconds_sum"), 3.55);
  EXPECT_EQ(sample(text, "cronwheel_scan_duration_seconds_bucket{le=\"0.01\"}"), 1);
  EXPECT_EQ(sample(text, "cronwheel_send_duration_seconds_count{outcome=\"failed\"}"), 0);
}

TEST(Metrics, EveryFamilyHasHelpAndTypeAndEverySampleLineIsWellFormed) {
  const auto text = metrics_text(scheduling_node());
  static const std::regex help(R"(# HELP cronwheel_[a-z_]+ .+)");
  static const std::regex type(R"(# TYPE cronwheel_[a-z_]+ (counter|gauge|histogram))");
  static const std::regex line(R"(cronwheel_[a-z_]+(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})? [0-9.e+-]+)");
  int helps = 0, types = 0, samples = 0;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    if (l.empty()) continue;
    if (l.rfind("# HELP", 0) == 0) {
      EXPECT_TRUE(std::regex_match(l, help)) << l;
      ++helps;
    } else if (l.rfind("# TYPE", 0) == 0) {
      EXPECT_TRUE(std::regex_match(l, type)) << l;
      ++types;
    } else {
      EXPECT_TRUE(std::regex_match(l, line)) << l;
      ++samples;
    }
  }
  EXPECT_EQ(helps, types);
  EXPECT_GT(samples, helps);
}

TEST(Metrics, ANodeThatDoesNotScheduleSaysSoAndShowsNoSchedulerCounters) {
  NodeMetrics m;
  m.node_id = "admin-2";
  m.results.recorded = 3;
  const auto text = metrics_text(m);

  EXPECT_EQ(sample(text, "cronwheel_scheduler_running"), 0);
  EXPECT_EQ(sample(text, "cronwheel_scans_total"), -1) << "absent, not a counter gone back to 0";
  EXPECT_EQ(sample(text, "cronwheel_results_total{outcome=\"recorded\"}"), 3);
}

TEST(Metrics, WorkflowRunsByStateAndHandOffsAreShown) {
  NodeMetrics m;
  m.node_id = "admin-1";
  m.workflow_runs = {{WorkflowRunState::kRunning, 2}, {WorkflowRunState::kTimedOut, 1}};
  common::Histogram handoff{0.01, 0.1};
  handoff.observe(0.05);
  m.workflow_handoff = handoff.snapshot();
  m.workflow_runs_deleted = 7;
  const auto text = metrics_text(m);
  EXPECT_EQ(sample(text, "cronwheel_workflow_runs{state=\"running\"}"), 2);
  EXPECT_EQ(sample(text, "cronwheel_workflow_runs{state=\"timed_out\"}"), 1);
  EXPECT_EQ(sample(text, "cronwheel_workflow_handoff_seconds_count"), 1);
  EXPECT_EQ(sample(text, "cronwheel_workflow_handoff_seconds_bucket{le=\"0.1\"}"), 1);
  EXPECT_EQ(sample(text, "cronwheel_workflow_runs_deleted_total"), 7);
}

TEST(Metrics, DatabasePoolsReportWaitsConnectionsAndFailuresByPool) {
  NodeMetrics m;
  m.node_id = "admin-1";
  DatabasePoolStats main;
  main.size = 8;
  main.in_use = 6;
  main.idle = 1;
  main.timeouts = 4;
  main.unreachable = 2;
  common::Histogram waits{0.001, 0.1};
  for (double seconds : {0.0, 0.0, 0.05, 0.3}) waits.observe(seconds);
  main.wait_seconds = waits.snapshot();
  DatabasePoolStats scheduling;
  scheduling.size = 4;
  scheduling.wait_seconds = common::Histogram{0.001}.snapshot();
  m.db_pools = {{"main", main}, {"scheduling", scheduling}};
  const auto text = metrics_text(m);

  EXPECT_NE(text.find("# TYPE cronwheel_db_pool_wait_seconds histogram"), std::string::npos) << text;
  EXPECT_EQ(sample(text, R"(cronwheel_db_pool_wait_seconds_bucket{pool="main",le="0.001"})"), 2) << "zero waits count";
  EXPECT_EQ(sample(text, R"(cronwheel_db_pool_wait_seconds_bucket{pool="main",le="0.1"})"), 3);
  EXPECT_EQ(sample(text, R"(cronwheel_db_pool_wait_seconds_count{pool="main"})"), 4);
  EXPECT_DOUBLE_EQ(sample(text, R"(cronwheel_db_pool_wait_seconds_sum{pool="main"})"), 0.35);
  EXPECT_EQ(sample(text, R"(cronwheel_db_pool_wait_seconds_count{pool="scheduling"})"), 0);
  EXPECT_EQ(sample(text, R"(cronwheel_db_pool_connections{pool="main",state="in_use"})"), 6);
  EXPECT_EQ(sample(text, R"(cronwheel_db_pool_connections{pool="main",state="idle"})"), 1);
  EXPECT_EQ(sample(text, R"(cronwheel_db_pool_size{pool="main"})"), 8);
  EXPECT_EQ(sample(text, R"(cronwheel_db_pool_size{pool="scheduling"})"), 4);
  EXPECT_EQ(sample(text, R"(cronwheel_db_pool_acquisitions_failed_total{pool="main",reason="timeout"})"), 4);
  EXPECT_EQ(sample(text, R"(cronwheel_db_pool_acquisitions_failed_total{pool="main",reason="unreachable"})"), 2);
  EXPECT_EQ(sample(text, R"(cronwheel_db_pool_acquisitions_failed_total{pool="scheduling",reason="timeout"})"), 0);
}

TEST(Metrics, HttpLanesReportRequestsInsideAndRefusalsByReason) {
  NodeMetrics m;
  m.node_id = "admin-1";
  m.http_lanes = {{"passwords", 3, 40, 2}, {"executor-calls", 0, 0, 0}};
  const auto text = metrics_text(m);
  EXPECT_EQ(sample(text, R"(cronwheel_http_lane_requests{lane="passwords"})"), 3);
  EXPECT_EQ(sample(text, R"(cronwheel_http_lane_refused_total{lane="passwords",reason="full"})"), 40);
  EXPECT_EQ(sample(text, R"(cronwheel_http_lane_refused_total{lane="passwords",reason="late"})"), 2);
  EXPECT_EQ(sample(text, R"(cronwheel_http_lane_refused_total{lane="executor-calls",reason="full"})"), 0);
}

TEST(Metrics, RunsFinishedAreCountedByGroupIdAndOutcome) {
  NodeMetrics m;
  m.node_id = "admin-1";
  m.runs_finished = {{3, FireState::kSucceeded, 120},
                     {3, FireState::kFailed, 4},
                     {3, FireState::kLost, 1},
                     {12, FireState::kCancelled, 2}};
  const auto text = metrics_text(m);

  EXPECT_NE(text.find("# TYPE cronwheel_runs_finished_total counter"), std::string::npos) << text;
  EXPECT_EQ(sample(text, R"(cronwheel_runs_finished_total{group="3",outcome="succeeded"})"), 120);
  EXPECT_EQ(sample(text, R"(cronwheel_runs_finished_total{group="3",outcome="failed"})"), 4);
  EXPECT_EQ(sample(text, R"(cronwheel_runs_finished_total{group="3",outcome="lost"})"), 1);
  EXPECT_EQ(sample(text, R"(cronwheel_runs_finished_total{group="12",outcome="cancelled"})"), 2);
  EXPECT_EQ(sample(text, R"(cronwheel_runs_finished_total{group="12",outcome="succeeded"})"), -1)
      << "only what was counted";
}

TEST(Metrics, ExecutorClockOffsetsAreGaugesInSecondsByAppAndAddress) {
  NodeMetrics m;
  m.node_id = "admin-1";
  EXPECT_NE(metrics_text(m).find("# TYPE cronwheel_executor_clock_offset_seconds gauge"), std::string::npos);
  m.executor_clock_offsets = {{"billing", "http://10.0.0.1:9999/", {-1'500, 4}},
                              {"billing", "http://10.0.0.2:9999/", {20, 1}}};
  const auto text = metrics_text(m);
  EXPECT_EQ(sample(text, R"(cronwheel_executor_clock_offset_seconds{app="billing",address="http://10.0.0.1:9999/"})"),
            -1.5)
      << text;
  EXPECT_EQ(sample(text, R"(cronwheel_executor_clock_offset_seconds{app="billing",address="http://10.0.0.2:9999/"})"),
            0.02);
}

TEST(Metrics, NodeIdsAreEscapedInLabels) {
  NodeMetrics m;
  m.node_id = "host \"a\"\\1";
  EXPECT_EQ(sample(metrics_text(m), R"(cronwheel_node_info{node="host \"a\"\\1"})"), 1);
}

}  // namespace
}  // namespace cronwheel::admin
