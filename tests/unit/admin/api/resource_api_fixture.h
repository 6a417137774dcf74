#pragma once

// The resource endpoints (groups, jobs, scripts, logs, cron) on a real HttpServer on 127.0.0.1,
// over FakeStores and a FakeClock, with users that authenticate by name.

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "admin/api/api_router.h"
#include "admin/api/resource_routes.h"
#include "admin/complete/completion.h"
#include "admin/model/records.h"
#include "admin/outbound/http_executor_client.h"
#include "common/http/http_server.h"
#include "tests/support/fake_clock.h"
#include "tests/support/fake_completion_store.h"
#include "tests/support/fake_registry_store.h"
#include "tests/support/fake_stores.h"

namespace cronwheel::admin {

// "Authorization: Bearer <username>" proves that user (read fresh from the store on every
// request, so a change of their groups applies at once); "Cookie: session=<username>" does too,
// as a session whose CSRF token is "csrf-<username>".
class UserNameAuthenticator : public Authenticator {
 public:
  explicit UserNameAuthenticator(UserStore& users) : users_(users) {}

  std::optional<Principal> authenticate(const Credentials& req) override {
    Principal p;
    std::string name;
    const std::string auth = req.authorization.value_or("");
    const std::string cookie = req.cookie_headers.empty() ? "" : req.cookie_headers.front();
    if (auth.rfind("Bearer ", 0) == 0) {
      name = auth.substr(7);
      p.method = Principal::Method::kToken;
    } else if (cookie.rfind("session=", 0) == 0) {
      name = cookie.substr(8);
      p.method = Principal::Method::kSession;
      p.csrf_token = "csrf-" + name;
    } else {
      return std::nullopt;
    }
    auto user = users_.find_by_username(name);
    if (!user) return std::nullopt;
    p.user = *user;
    return p;
  }

 private:
  UserStore& users_;
};

class ResourceApiTest : public ::testing::Test {
 protected:
  // 2023-11-14T22:13:20Z
  static constexpr std::int64_t kStartMs = 1'700'000'000'000;

  struct Answer {
    int status = 0;
    nlohmann::json body;
    std::string text;

    const nlohmann::json& error() const { return body.at("error"); }
    std::string message() const { return error().at("message").get<std::string>(); }
    std::string field() const { return error().value("field", ""); }
  };

  void SetUp() override {
    system_ = Actor{std::nullopt, "system", ""};
    admin_ = add_user("admin", "admin", {});

    common::http::HttpServerOptions o;
    o.host = "127.0.0.1";
    o.worker_threads = 4;
    server_ = std::make_unique<common::http::HttpServer>(o);
    router_ = std::make_unique<ApiRouter>(*server_, auth_);
    ResourceOptions options;
    options.node_id = "node-under-test";
    options.access_token = "admin-default-token";
    options.executors = &executors_;
    options.finished_runs = &finished_runs_;
    options.automatic_group_changed = [this] { ++automatic_group_changes_; };
    options.kill_run = [this](std::int64_t run_id, const std::string& message) {
      return completion_.mark_killed(run_id, message) == Completion::Outcome::kRecorded;
    };
    options.cancel_held_run = [this](std::int64_t run_id, const std::string& message) {
      return completion_.mark_cancelled(run_id, message) == Completion::Outcome::kRecorded;
    };
    configure(options);
    add_resource_routes(*router_, stores_, clock_, options);
    add_more_routes(*router_);
    server_->start();
  }

  // What a suite sets of the resources' options beyond the above (a calendar store).
  virtual void configure(ResourceOptions& options) { (void)options; }

  // Routes of other resources a suite tests on the same server, added before it starts.
  virtual void add_more_routes(ApiRouter& router) { (void)router; }

  void TearDown() override { server_->stop(); }

  std::atomic<int> automatic_group_changes_{0};  // calls of ResourceOptions::automatic_group_changed
  FinishedRuns finished_runs_;                   // ResourceOptions::finished_runs

  User add_user(const std::string& name, const std::string& role, std::vector<std::int64_t> groups) {
    User u;
    u.username = name;
    u.password_hash = "$argon2id$v=19$m=65536,t=2,p=1$fake";
    u.role = role;
    u.groups = std::move(groups);
    return stores_.users.create(u, system_);
  }

  Group add_group(const std::string& app_name, int address_type = 0, std::vector<std::string> addresses = {}) {
    Group g;
    g.app_name = app_name;
    g.title = "Title of " + app_name;
    g.address_type = address_type;
    g.address_list = std::move(addresses);
    return stores_.groups.create(g, system_);
  }

  Job add_job(std::int64_t group, const std::string& desc = "nightly report", ScheduleType type = ScheduleType::kCron,
              const std::string& conf = "0 0 3 * * ?", const std::string& zone = "UTC") {
    Job j;
    j.job_group = group;
    j.job_desc = desc;
    j.schedule_type = type;
    j.schedule_conf = conf;
    j.timezone = zone;
    j.executor_handler = "reportHandler";
    return stores_.jobs.create(j, system_);
  }

  Answer call(const std::string& method, const std::string& path, const std::string& body = "",
              const std::string& user = "admin", httplib::Headers headers = {}) {
    if (!user.empty()) headers.emplace("Authorization", "Bearer " + user);
    httplib::Client client("127.0.0.1", server_->port());
    client.set_connection_timeout(5);
    client.set_read_timeout(30);
    const std::string url = "/api/v1/" + path;
    httplib::Result r = method == "GET"      ? client.Get(url.c_str(), headers)
                        : method == "PUT"    ? client.Put(url.c_str(), headers, body, "application/json")
                        : method == "DELETE" ? client.Delete(url.c_str(), headers)
                                             : client.Post(url.c_str(), headers, body, "application/json");
    Answer a;
    if (!r) {
      ADD_FAILURE() << method << " " << url << ": no answer";
      return a;
    }
    a.status = r->status;
    a.text = r->body;
    if (!r->body.empty()) a.body = nlohmann::json::parse(r->body, nullptr, false);
    return a;
  }

  Answer get(const std::string& path, const std::string& user = "admin") { return call("GET", path, "", user); }
  Answer post(const std::string& path, const nlohmann::json& body = nlohmann::json::object(),
              const std::string& user = "admin") {
    return call("POST", path, body.dump(), user);
  }
  Answer put(const std::string& path, const nlohmann::json& body, const std::string& user = "admin") {
    return call("PUT", path, body.dump(), user);
  }
  Answer del(const std::string& path, const std::string& user = "admin") { return call("DELETE", path, "", user); }

  // The newest audit entry.
  AuditEntry last_audit() {
    AuditStore::Filter f;
    f.page.limit = 1;
    auto page = stores_.audit.list(f);
    EXPECT_FALSE(page.items.empty());
    return page.items.empty() ? AuditEntry{} : page.items.front();
  }

  testing::FakeClock clock_{kStartMs};
  testing::FakeStores fake_{clock_};
  Stores stores_ = fake_.stores();
  // Where the kill route ends runs, as the admin node's results do.
  testing::FakeRegistryStore registry_{fake_, clock_};
  testing::FakeCompletionStore completion_store_{fake_, registry_};
  Completion completion_{completion_store_, clock_, Completion::Options{"node-under-test"}};
  UserNameAuthenticator auth_{stores_.users};
  // The node's real client: logs/{id}/content and kill reach executors served on 127.0.0.1.
  HttpExecutorClient executors_{common::SystemClock::instance(),
                                HttpExecutorClient::Options{std::chrono::milliseconds(2'000),
                                                            std::chrono::milliseconds(5'000),
                                                            std::chrono::milliseconds(5'000)}};
  Actor system_;
  User admin_;
  std::unique_ptr<common::http::HttpServer> server_;
  std::unique_ptr<ApiRouter> router_;
};

}  // namespace cronwheel::admin
