// GET /healthz's check against a real PostgreSQL that comes and goes: anonymous callers learn
// only that the database is unavailable, never libpq's text (hosts, ports, users, database
// names); the node's log gets that detail once per change of state, not once per probe.

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <pqxx/pqxx>
#include <spdlog/logger.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include "admin/server/health_check.h"
#include "tests/support/test_database.h"

namespace cronwheel::admin {
namespace {

using testing::TestDatabase;

// spdlog's default logger, captured for one test and restored after it.
class CapturedLog {
 public:
  CapturedLog() : sink_(std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(1000)), previous_(spdlog::default_logger()) {
    sink_->set_pattern("%l %v");
    auto logger = std::make_shared<spdlog::logger>("captured", sink_);
    logger->set_level(spdlog::level::trace);
    spdlog::set_default_logger(logger);
  }
  ~CapturedLog() { spdlog::set_default_logger(previous_); }

  // Lines at `level` ("warning", "info", ...) containing `text`.
  int count(std::string_view level, std::string_view text) const {
    int n = 0;
    for (const auto& line : sink_->last_formatted()) {
      n += line.rfind(std::string(level) + " ", 0) == 0 && line.find(text) != std::string::npos ? 1 : 0;
    }
    return n;
  }
  std::string all() const {
    std::string out;
    for (const auto& line : sink_->last_formatted()) out += line + "\n";
    return out;
  }

 private:
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink_;
  std::shared_ptr<spdlog::logger> previous_;
};

void expect_unavailable_without_detail(const HealthCheck::Result& r, const std::vector<std::string>& secrets) {
  EXPECT_FALSE(r.healthy);
  EXPECT_EQ(r.body["status"], "unavailable");
  EXPECT_EQ(r.body["error"], "database unavailable");
  EXPECT_FALSE(r.body.contains("schemaVersion"));
  const auto text = r.body.dump();
  for (const auto& secret : secrets) EXPECT_EQ(text.find(secret), std::string::npos) << secret << " in " << text;
}

TEST(HealthCheck, AnUnreachableDatabaseIsAnsweredWithoutItsErrorTextAndLoggedOnce) {
  CapturedLog log;
  // Nothing listens on port 9: libpq says "connection to server at "127.0.0.1", port 9 failed:
  // Connection refused".
  HealthCheck health("postgresql://probe-user@127.0.0.1:9/secret_db", "node-1", "1.2.3");
  for (int probe = 0; probe < 20; ++probe) {
    auto r = health.check();
    expect_unavailable_without_detail(r, {"127.0.0.1", "port", "refused", "probe-user", "secret_db"});
    EXPECT_EQ(r.body["node"], "node-1");
    EXPECT_EQ(r.body["version"], "1.2.3");
  }
  EXPECT_EQ(log.count("warning", "database is unavailable"), 1) << log.all();
  EXPECT_EQ(log.count("warning", "127.0.0.1"), 1) << "the detail is for the log: " << log.all();
}

TEST(HealthCheck, LogsEachChangeOfStateOnce) {
  CapturedLog log;
  const auto server = TestDatabase::server_url();
  const std::string name = "cw_health_" + std::to_string(std::random_device()() % 1000000);
  auto admin = [&](const std::string& sql) {
    pqxx::connection c(server);
    pqxx::nontransaction tx(c);
    tx.exec(sql);
  };
  HealthCheck health(TestDatabase::with_database(server, name), "node-1", "1.2.3");

  // Not there yet.
  for (int probe = 0; probe < 5; ++probe) expect_unavailable_without_detail(health.check(), {name, "does not exist"});
  EXPECT_EQ(log.count("warning", "database is unavailable"), 1) << log.all();
  EXPECT_EQ(log.count("warning", name), 1) << log.all();

  admin("CREATE DATABASE " + name);
  for (int probe = 0; probe < 5; ++probe) {
    auto r = health.check();
    EXPECT_TRUE(r.healthy) << r.body;
    EXPECT_EQ(r.body["status"], "ok");
    EXPECT_EQ(r.body["schemaVersion"], 0);  // nothing migrated in it
  }
  EXPECT_EQ(log.count("info", "reachable again"), 1) << log.all();

  admin("DROP DATABASE " + name + " WITH (FORCE)");
  for (int probe = 0; probe < 5; ++probe) expect_unavailable_without_detail(health.check(), {name});
  EXPECT_EQ(log.count("warning", "database is unavailable"), 2) << log.all();
  EXPECT_EQ(log.count("info", "reachable again"), 1) << log.all();
}

}  // namespace
}  // namespace cronwheel::admin
