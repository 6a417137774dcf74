#include <gtest/gtest.h>

#include <httplib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "admin/pg/migrations.h"
#include "common/http/http_client.h"
#include "tests/support/admin_process.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_database.h"

namespace cronwheel {
namespace {

using namespace std::chrono_literals;
using testing::AdminProcess;
using testing::Process;
using testing::TestDatabase;

// A cronwheel-admin on `db_url` with the flags in `args`, and no bootstrap password configured.
AdminProcess::Options serving(const std::string& db_url, std::vector<std::string> args = {}) {
  return {.db_url = db_url, .args = std::move(args), .admin_password = ""};
}

nlohmann::json healthz(int port, int* status = nullptr) {
  common::http::HttpClient client("http://127.0.0.1:" + std::to_string(port) + "/");
  auto r = client.get("/healthz");
  if (status != nullptr) *status = r.status;
  return r.body.empty() ? nlohmann::json() : nlohmann::json::parse(r.body);
}

TEST(AdminServe, AppliesTheSchemaAndAnswersHealth) {
  TestDatabase db;
  AdminProcess admin(serving(db.url(), {"--node-id", "node-under-test"}));
  int port = admin.wait_until_listening(30s);
  ASSERT_GT(port, 0) << admin.process().out() << admin.process().err();

  int status = 0;
  auto body = healthz(port, &status);
  EXPECT_EQ(status, 200) << body;
  EXPECT_EQ(body["status"], "ok");
  EXPECT_EQ(body["node"], "node-under-test");
  EXPECT_EQ(body["schemaVersion"], static_cast<int>(admin::embedded_migrations().size()));

  pqxx::connection c(db.url());
  pqxx::nontransaction tx(c);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM schema_migrations")[0].as<int>(),
            static_cast<int>(admin::embedded_migrations().size()));

  EXPECT_EQ(admin.stop(10s), 0) << admin.process().out();
}

TEST(AdminServe, ServesTheConsoleWithoutShadowingTheApiHealthOrExecutors) {
  TestDatabase db;
  testing::TempDir web("cronwheel-web");
  std::filesystem::create_directories(web.path() / "assets");
  std::ofstream(web.path() / "index.html") << "<!doctype html><div id=app></div>";
  std::ofstream(web.path() / "assets" / "index-abc123.js") << "export {}";
  AdminProcess admin(serving(db.url(), {"--web-dir", web.path().string()}));
  ASSERT_GT(admin.wait_until_listening(30s), 0) << admin.process().out() << admin.process().err();
  httplib::Client client("127.0.0.1", admin.port());

  for (const char* page : {"/", "/jobs/12", "/runs?jobId=3"}) {
    auto r = client.Get(page);
    ASSERT_TRUE(r) << page;
    EXPECT_EQ(r->status, 200) << page;
    EXPECT_EQ(r->body, "<!doctype html><div id=app></div>") << page;
    EXPECT_EQ(r->get_header_value("Cache-Control"), "no-cache");
  }
  auto asset = client.Get("/assets/index-abc123.js");
  ASSERT_TRUE(asset);
  EXPECT_EQ(asset->body, "export {}");
  EXPECT_EQ(asset->get_header_value("Cache-Control"), "public, max-age=31536000, immutable");

  // The API, the health check and the executors' endpoints answer as before.
  auto unknown_api = client.Get("/api/v1/no-such-thing");
  ASSERT_TRUE(unknown_api);
  EXPECT_EQ(unknown_api->status, 404);
  EXPECT_EQ(nlohmann::json::parse(unknown_api->body)["error"]["code"], "not_found");
  auto jobs = client.Get("/api/v1/jobs");
  ASSERT_TRUE(jobs);
  EXPECT_EQ(jobs->status, 401);
  auto health = client.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(nlohmann::json::parse(health->body)["status"], "ok");
  auto registry_by_get = client.Get("/api/registry");
  ASSERT_TRUE(registry_by_get);
  EXPECT_EQ(registry_by_get->status, 405);
  auto post_to_page = client.Post("/jobs/12", "{}", "application/json");
  ASSERT_TRUE(post_to_page);
  EXPECT_EQ(post_to_page->status, 404);
  auto missing_asset = client.Get("/assets/gone.js");
  ASSERT_TRUE(missing_asset);
  EXPECT_EQ(missing_asset->status, 404);
  EXPECT_EQ(nlohmann::json::parse(missing_asset->body)["error"]["code"], "not_found");

  EXPECT_EQ(admin.stop(10s), 0) << admin.process().out();
}

TEST(AdminServe, SaysSoWhenTheConsoleIsNotInstalled) {
  TestDatabase db;
  testing::TempDir empty("cronwheel-web");
  AdminProcess admin(serving(db.url(), {"--web-dir", empty.path().string()}));
  ASSERT_GT(admin.wait_until_listening(30s), 0) << admin.process().out() << admin.process().err();
  EXPECT_NE(admin.process().out().find("no web console in"), std::string::npos) << admin.process().out();
  httplib::Client client("127.0.0.1", admin.port());
  auto root = client.Get("/");
  ASSERT_TRUE(root);
  EXPECT_EQ(root->status, 404);
  EXPECT_EQ(nlohmann::json::parse(root->body)["error"]["message"], "the web console is not installed on this node");
  EXPECT_EQ(admin.stop(10s), 0) << admin.process().out();
}

// The bytes of /proc/<pid>/<file>, NULs included ("" when unreadable).
std::string proc_file(pid_t pid, const std::string& file) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/" + file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(AdminServe, KeepsItsSecretsOffItsCommandLineAndEnvironment) {
  // The database URL may hold a password: once read, neither it nor the access token or the
  // bootstrap password is left where other processes of the user (or ps) can read them.
  TestDatabase db;
  AdminProcess::Options options = serving(db.url(), {"--access-token", "admin-token-in-argv"});
  options.admin_password = "bootstrap-secret-password";
  options.env = {"CRONWHEEL_ACCESS_TOKEN=admin-token-in-env", "CRONWHEEL_SMTP_PASSWORD=smtp-secret-in-env"};
  AdminProcess admin(options);
  ASSERT_GT(admin.wait_until_listening(30s), 0) << admin.process().out() << admin.process().err();

  const auto cmdline = proc_file(admin.process().pid(), "cmdline");
  EXPECT_NE(cmdline.find("--access-token"), std::string::npos) << "the option names stay";
  EXPECT_EQ(cmdline.find("admin-token-in-argv"), std::string::npos);
  EXPECT_EQ(cmdline.find(db.url()), std::string::npos);
  const auto environ = proc_file(admin.process().pid(), "environ");  // readable here when root
  EXPECT_EQ(environ.find("admin-token-in-env"), std::string::npos);
  EXPECT_EQ(environ.find("bootstrap-secret-password"), std::string::npos);
  EXPECT_EQ(environ.find("smtp-secret-in-env"), std::string::npos);
  if (::geteuid() != 0) {
    EXPECT_TRUE(environ.empty()) << "a non-dumpable process's environ is root's only";
  }
  EXPECT_EQ(admin.stop(10s), 0) << admin.process().out();
}

TEST(AdminServe, TwoNodesStartingAtOnceShareOneSchema) {
  TestDatabase db;
  AdminProcess first(serving(db.url()));
  AdminProcess second(serving(db.url()));
  int p1 = first.wait_until_listening(30s);
  int p2 = second.wait_until_listening(30s);
  ASSERT_GT(p1, 0) << first.process().out();
  ASSERT_GT(p2, 0) << second.process().out();
  int s1 = 0, s2 = 0;
  auto h1 = healthz(p1, &s1);
  auto h2 = healthz(p2, &s2);
  EXPECT_EQ(s1, 200);
  EXPECT_EQ(s2, 200);
  EXPECT_NE(h1["node"], h2["node"]);  // default node ids carry the port
  pqxx::connection c(db.url());
  pqxx::nontransaction tx(c);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM job_lock")[0].as<int>(), 3);  // the schedule, apply and workflow scan locks
}

TEST(AdminServe, HealthSaysUnavailableWhenTheDatabaseIsGone) {
  auto db = std::make_unique<TestDatabase>();
  AdminProcess admin(serving(db->url()));
  int port = admin.wait_until_listening(30s);
  ASSERT_GT(port, 0) << admin.process().out();
  int status = 0;
  healthz(port, &status);
  ASSERT_EQ(status, 200);

  db.reset();  // DROP DATABASE ... WITH (FORCE) cuts the admin's connections
  auto body = healthz(port, &status);
  EXPECT_EQ(status, 503) << body;
  EXPECT_EQ(body["status"], "unavailable");
  EXPECT_NE(body["error"].get<std::string>().find("database"), std::string::npos) << body;
  EXPECT_TRUE(admin.process().running());
}

TEST(AdminServe, GivesUpWhenTheDatabaseNeverAnswers) {
  // A port nothing listens on (the test cluster's port plus one is as good as any).
  Process admin({AdminProcess::binary(), "--listen", "127.0.0.1:0", "--db-url",
                 "postgresql://cronwheel@127.0.0.1:9/cronwheel", "--db-wait", "1"});
  EXPECT_EQ(admin.wait_for_exit(30s), 1);
  EXPECT_NE(admin.out().find("connect"), std::string::npos) << admin.out() << admin.err();
}

TEST(AdminServe, ADatabaseUrlLibpqCannotReadIsAConfigurationErrorAtOnce) {
  // Not "not reachable yet" for --db-wait seconds: it never will be.
  const auto started = std::chrono::steady_clock::now();
  auto r = Process::run({AdminProcess::binary(), "--listen", "127.0.0.1:0", "--db-url",
                         "postgresql://cronwheel:hunter2@127.0.0.1:9/cronwheel?sslmode=disable&statment_timeout=1",
                         "--db-wait", "60"});
  EXPECT_EQ(r.code, 2);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 20s);
  EXPECT_NE(r.err.find("--db-url: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("statment_timeout"), std::string::npos) << r.err;
  EXPECT_EQ((r.out + r.err).find("hunter2"), std::string::npos) << "never the password";
}

TEST(AdminServe, RejectsAMalformedListenAddress) {
  TestDatabase db;
  auto r = Process::run({AdminProcess::binary(), "--listen", "localhost", "--db-url", db.url()});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE((r.out + r.err).find("listen address 'localhost'"), std::string::npos) << r.out << r.err;
}

TEST(AdminServe, RejectsAMalformedSmtpUrlBeforeTouchingTheSchema) {
  TestDatabase db;
  auto r = Process::run({AdminProcess::binary(), "--listen", "127.0.0.1:0", "--db-url", db.url(), "--smtp-url",
                         "http://mail.example.com/"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE((r.out + r.err).find("http://mail.example.com/"), std::string::npos) << r.out << r.err;
  pqxx::connection c(db.url());
  pqxx::nontransaction tx(c);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM pg_tables WHERE tablename = 'job_info'")[0].as<int>(), 0);
}

TEST(AdminServe, SaysWhichSmtpPasswordFileItCannotRead) {
  auto r = Process::run({AdminProcess::binary(), "--smtp-password-file", "/nonexistent/smtp-password"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--smtp-password-file: cannot read /nonexistent/smtp-password"), std::string::npos) << r.err;
}

// docs/configuration.md: flags > environment > configuration file > defaults, secrets from files.
TEST(AdminServe, TakesItsSettingsFromAConfigFileUnlessTheEnvironmentOrAFlagSaysOtherwise) {
  TestDatabase db;
  testing::TempDir dir;
  const auto config = (dir.path() / "admin.toml").string();
  std::ofstream(config) << "# cronwheel-admin\nnode-id = \"node-from-file\"\nrun-retention-days = 7\n"
                           "alarm-quiet-s = 60\nsecure-cookie = false\n";
  // The node id an admin answers in /healthz when started with these arguments and environment.
  auto node_id_when_started = [&](std::vector<std::string> args, std::vector<std::string> env) -> nlohmann::json {
    auto options = serving(db.url(), args);
    options.env.insert(options.env.end(), env.begin(), env.end());
    AdminProcess admin(options);
    const int port = admin.wait_until_listening(30s);
    if (port <= 0) {
      ADD_FAILURE() << "started with " << nlohmann::json(args) << " " << nlohmann::json(env)
                    << ", it did not listen: " << admin.process().err();
      return nullptr;
    }
    auto node = healthz(port)["node"];
    EXPECT_EQ(admin.stop(10s), 0) << nlohmann::json(args) << " " << nlohmann::json(env);
    return node;
  };
  const std::vector<std::string> env_node = {"CRONWHEEL_NODE_ID=node-from-env"};
  EXPECT_EQ(node_id_when_started({"--config", config}, {}), "node-from-file");
  EXPECT_EQ(node_id_when_started({"--config", config}, env_node), "node-from-env");
  EXPECT_EQ(node_id_when_started({"--config", config, "--node-id", "node-from-flag"}, env_node), "node-from-flag");
  // The same after `serve`.
  EXPECT_EQ(node_id_when_started({"serve", "--node-id", "node-from-flag"}, env_node), "node-from-flag");
}

TEST(AdminServe, RefusesAConfigFileWithAMisspeltKeyOrABadValue) {
  testing::TempDir dir;
  const auto misspelt = (dir.path() / "misspelt.toml").string();
  std::ofstream(misspelt) << "run-retention-day = 7\n";
  auto r = Process::run({AdminProcess::binary(), "--config", misspelt});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("misspelt.toml: run-retention-day: no such setting"), std::string::npos) << r.err;
  const auto bad = (dir.path() / "bad.toml").string();
  std::ofstream(bad) << "db-pool-size = 0\n";
  r = Process::run({AdminProcess::binary(), "--config", bad});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("bad.toml: db-pool-size"), std::string::npos) << r.err;
}

TEST(AdminMigrate, ReadsTheDatabaseUrlFromTheFileItsVariableNames) {
  TestDatabase db;
  testing::TempDir dir;
  const auto secret = (dir.path() / "db-url").string();
  std::ofstream(secret) << db.url() << "\n";
  const auto config = (dir.path() / "admin.toml").string();
  // One file for serve and migrate: migrate takes what it needs of it.
  std::ofstream(config) << "listen = \"127.0.0.1:0\"\ndb-wait = 5\n";
  auto r = Process::run({"/usr/bin/env", "CRONWHEEL_DB_URL_FILE=" + secret, AdminProcess::binary(), "migrate",
                         "--config", config});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("schema at version"), std::string::npos) << r.out;
}

TEST(AdminMigrate, AppliesAndExits) {
  TestDatabase db;
  auto r = Process::run({AdminProcess::binary(), "migrate", "--db-url", db.url()});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("schema at version"), std::string::npos) << r.out;
  auto again = Process::run({AdminProcess::binary(), "migrate", "--db-url", db.url()});
  EXPECT_EQ(again.code, 0);
  EXPECT_EQ(again.out.find("applied migration"), std::string::npos) << again.out;
}

}  // namespace
}  // namespace cronwheel
