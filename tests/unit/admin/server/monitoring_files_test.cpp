// docs/monitoring/ (the Prometheus alerting rules and the Grafana dashboard) against the metrics
// an admin node serves: every metric they name must exist, so a renamed metric cannot leave an
// alert that never fires.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "admin/server/metrics.h"

namespace cronwheel::admin {
namespace {

std::string source(const std::string& path) { return std::string(CRONWHEEL_SOURCE_DIR) + "/" + path; }

// Every series name a scheduling node's /metrics can hold.
std::set<std::string> served_names() {
  NodeMetrics m;
  m.node_id = "admin-1";
  m.scheduler = Scheduler::Stats{};
  std::set<std::string> names;
  static const std::regex type(R"(# TYPE (cronwheel_[a-z_]+) (counter|gauge|histogram))");
  std::istringstream in(metrics_text(m));
  for (std::string line; std::getline(in, line);) {
    std::smatch match;
    if (!std::regex_match(line, match, type)) continue;
    names.insert(match[1]);
    if (match[2] == "histogram") {
      for (const char* suffix : {"_bucket", "_sum", "_count"}) names.insert(match[1].str() + suffix);
    }
  }
  return names;
}

std::set<std::string> named_in(const std::string& expr) {
  static const std::regex metric(R"(cronwheel_[a-z_]+)");
  std::set<std::string> out;
  for (auto it = std::sregex_iterator(expr.begin(), expr.end(), metric); it != std::sregex_iterator(); ++it) {
    out.insert(it->str());
  }
  return out;
}

TEST(MonitoringFiles, EveryAlertHasASeverityAndNamesServedMetricsOnly) {
  const auto served = served_names();
  ASSERT_TRUE(served.count("cronwheel_fire_lateness_seconds_bucket")) << "no lateness histogram served";
  const YAML::Node doc = YAML::LoadFile(source("docs/monitoring/cronwheel-alerts.yml"));
  int alerts = 0;
  for (const auto& group : doc["groups"]) {
    for (const auto& rule : group["rules"]) {
      const std::string name = rule["alert"].as<std::string>();
      ASSERT_TRUE(rule["expr"]) << name;
      EXPECT_TRUE(rule["labels"] && rule["labels"]["severity"]) << name << " has no severity";
      EXPECT_TRUE(rule["annotations"] && rule["annotations"]["summary"]) << name << " has no summary";
      for (const auto& metric : named_in(rule["expr"].as<std::string>())) {
        EXPECT_TRUE(served.count(metric)) << name << " names " << metric << ", which no admin serves";
      }
      ++alerts;
    }
  }
  EXPECT_GE(alerts, 8);
}

TEST(MonitoringFiles, EveryDashboardQueryNamesServedMetricsOnly) {
  const auto served = served_names();
  std::ifstream in(source("docs/monitoring/cronwheel-dashboard.json"));
  const auto dashboard = nlohmann::json::parse(in);
  std::set<int> ids;
  int queries = 0;
  for (const auto& panel : dashboard.at("panels")) {
    EXPECT_TRUE(ids.insert(panel.at("id").get<int>()).second) << "panel id " << panel.at("id") << " twice";
    for (const auto& target : panel.at("targets")) {
      for (const auto& metric : named_in(target.at("expr").get<std::string>())) {
        EXPECT_TRUE(served.count(metric)) << panel.at("title") << " names " << metric << ", which no admin serves";
      }
      ++queries;
    }
  }
  EXPECT_GE(queries, 10);
}

}  // namespace
}  // namespace cronwheel::admin
