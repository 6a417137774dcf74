// What no anonymous burst or slow executor may do to a real cronwheel-admin (on a fresh
// PostgreSQL database): stall the health check, the executor endpoints or other users, or grow
// the node without bound. Password checks and calls to executors run on lanes of their own
// (admin/api/api_router.h); these tests load them as an attacker and a careless user would and
// check everything else keeps being answered. Every load is bounded in count and time.

#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/http/http_server.h"
#include "tests/support/admin_process.h"
#include "tests/support/eventually.h"
#include "tests/support/raw_connection.h"
#include "tests/support/test_database.h"

namespace cronwheel {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::AdminProcess;
using testing::ApiCredentials;
using testing::eventually;
using testing::RawConnection;
using testing::TestDatabase;
using testing::status_kb;
using Clock = std::chrono::steady_clock;

constexpr const char* kToken = "capacity-e2e-token";
// What "still answers" means: well within a second for one small request. Before lanes, the
// health check took 3.7-15 s under these loads.
constexpr auto kAnswerBound = 1s;

std::string http_request(const std::string& method, const std::string& path, const std::string& body,
                         const std::vector<std::string>& headers = {}) {
  std::string text = method + " " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n";
  for (const auto& header : headers) text += header + "\r\n";
  if (!body.empty() || method == "POST") {
    text += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  }
  return text + "\r\n" + body;
}

class AdminCapacityE2e : public ::testing::Test {
 protected:
  void SetUp() override {
    ::signal(SIGPIPE, SIG_IGN);
    AdminProcess::Options options;
    options.db_url = db_.url();
    options.args = {"--node-id", "capacity-node", "--access-token", kToken};
    options.require_answers = true;
    admin_ = std::make_unique<AdminProcess>(options);
    ASSERT_GT(admin_->wait_until_listening(), 0) << admin_->process().out() << admin_->process().err();
    admin_who_ = admin_->login();
  }

  void TearDown() override {
    if (admin_) {
      EXPECT_EQ(admin_->stop(), 0) << admin_->process().err();
    }
  }

  // One round of what must keep working: the health check, an executor's registration and a
  // logged-in user's call, each answered 200 within kAnswerBound. Returns the slowest, in ms.
  long everything_else_answers() {
    long slowest = 0;
    auto timed = [&](const std::string& what, const std::string& request) {
      const auto started = Clock::now();
      RawConnection connection(admin_->port());
      const int status = connection.status_of(request);
      const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
      EXPECT_EQ(status, 200) << what;
      EXPECT_LT(took, kAnswerBound) << what << " took " << took.count() << " ms";
      slowest = std::max<long>(slowest, took.count());
    };
    timed("GET /healthz", http_request("GET", "/healthz", ""));
    timed("POST /api/registry",
          http_request("POST", "/api/registry",
                       R"({"registryGroup":"EXECUTOR","registryKey":"capacity-e2e","registryValue":"http://127.0.0.1:9/"})",
                       {std::string("XXL-JOB-ACCESS-TOKEN: ") + kToken}));
    timed("GET /api/v1/auth/me", http_request("GET", "/api/v1/auth/me", "", {"Cookie: " + admin_who_.cookie}));
    return slowest;
  }

  TestDatabase db_;
  std::unique_ptr<AdminProcess> admin_;
  ApiCredentials admin_who_;
};

TEST_F(AdminCapacityE2e, AnonymousLoginBurstsLeaveHealthChecksExecutorsAndUsersAnsweredAndMemoryBounded) {
  const pid_t pid = admin_->process().pid();
  everything_else_answers();  // warm: connections, the database pool
  const long peak_before = status_kb(pid, "VmHWM");
  ASSERT_GT(peak_before, 0);

  // 64 logins with unknown names from one address, then 64 from eight addresses, all at once.
  std::mutex statuses_mutex;
  std::map<int, int> statuses;
  auto burst = [&](const std::vector<std::string>& sources) {
    std::vector<std::thread> clients;
    for (int i = 0; i < 64; ++i) {
      clients.emplace_back([&, i] {
        RawConnection connection(admin_->port(), sources[static_cast<std::size_t>(i) % sources.size()]);
        const auto body = json{{"username", "nobody-" + std::to_string(i)}, {"password", "guess-" + std::to_string(i)}};
        const int status = connection.status_of(http_request("POST", "/api/v1/auth/login", body.dump()));
        std::lock_guard lock(statuses_mutex);
        ++statuses[status];
      });
    }
    // While they are in flight, everything else keeps being answered.
    for (int round = 0; round < 5; ++round) {
      everything_else_answers();
      std::this_thread::sleep_for(100ms);
    }
    for (auto& client : clients) client.join();
  };
  burst({"127.0.0.1"});
  burst({"127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5", "127.0.0.6", "127.0.0.7", "127.0.0.8", "127.0.0.9"});

  // Every login was answered: checked and refused (401), or turned away before any check (429
  // by the limiter, 503 when the password lane was full): never a timeout or a server error.
  int answered = 0;
  for (const auto& [status, count] : statuses) {
    EXPECT_TRUE(status == 401 || status == 429 || status == 503) << count << " logins answered " << status;
    answered += count;
  }
  EXPECT_EQ(answered, 128);
  EXPECT_GT(statuses[429] + statuses[503], 0) << "a burst of 64 passed every limit whole";

  // At most half the cores' worth of argon2id checks (64 MiB each) ran at once: the node's peak
  // grew by that, not by one check per concurrent login.
  const long checks_at_once = std::max(1u, std::thread::hardware_concurrency() / 2);
  const long peak_after = status_kb(pid, "VmHWM");
  EXPECT_LT(peak_after - peak_before, checks_at_once * 64 * 1024 + 48 * 1024)
      << "peak resident memory grew from " << peak_before << " kB to " << peak_after << " kB";

  // The limits did not lock anybody out: the owner logs in from an address that did not guess.
  const auto login = json{{"username", "admin"}, {"password", AdminProcess::kPassword}};
  EXPECT_TRUE(eventually([&] {
    RawConnection owner(admin_->port(), "127.0.0.10");
    return owner.status_of(http_request("POST", "/api/v1/auth/login", login.dump())) == 200;
  }, 20s));
}

// An executor that answers /run at once and /log only when the test lets it (or after 20 s).
class SlowLogExecutor {
 public:
  SlowLogExecutor() : server_(options()) {
    server_.post("/run", [](const cronwheel::common::http::Request&, cronwheel::common::http::Response& res) {
      common::http::write_json(res, R"({"code":200,"msg":null})");
    });
    for (const char* path : {"/beat", "/idleBeat", "/kill"}) {
      server_.post(path, [](const cronwheel::common::http::Request&, cronwheel::common::http::Response& res) {
        common::http::write_json(res, R"({"code":200,"msg":null})");
      });
    }
    server_.post("/log", [this](const cronwheel::common::http::Request&, cronwheel::common::http::Response& res) {
      ++log_calls_;
      {
        std::unique_lock lock(mutex_);
        released_.wait_for(lock, 20s, [this] { return release_; });
      }
      common::http::write_json(
          res, R"({"code":200,"msg":null,"content":{"fromLineNum":1,"toLineNum":1,"logContent":"line\n","isEnd":false}})");
    });
    server_.start();
  }
  ~SlowLogExecutor() {
    release();
    server_.stop();
  }

  void release() {
    {
      std::lock_guard lock(mutex_);
      release_ = true;
    }
    released_.notify_all();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(server_.port()) + "/"; }
  int log_calls() const { return log_calls_; }

 private:
  static common::http::HttpServerOptions options() {
    common::http::HttpServerOptions o;
    o.host = "127.0.0.1";
    o.worker_threads = 64;
    o.error_formatter = common::http::xxl_job_error;
    o.name = "slow-executor";
    return o;
  }

  common::http::HttpServer server_;
  std::mutex mutex_;
  std::condition_variable released_;
  bool release_ = false;
  std::atomic<int> log_calls_{0};
};

TEST_F(AdminCapacityE2e, OneGroupsSlowExecutorHoldsOnlyItsShareOfTheCallsToExecutors) {
  SlowLogExecutor slow;
  auto group = admin_->post("groups", admin_who_,
                            {{"appName", "slow-group"}, {"title", "Slow"}, {"addressType", 1}, {"addressList", slow.url()}});
  ASSERT_EQ(group.status, 201) << group.text;
  const int group_id = group.body["id"];
  auto user = admin_->post("users", admin_who_,
                           {{"username", "carol"}, {"password", "carol-password"}, {"role", "normal"}, {"groups", {group_id}}});
  ASSERT_EQ(user.status, 201) << user.text;
  const auto carol = admin_->login("carol", "carol-password");
  auto job = admin_->post("jobs", carol,
                          {{"jobGroup", group_id}, {"jobDesc", "slow log"}, {"author", "carol"}, {"scheduleType", "CRON"}, {"scheduleConf", "0 0 9 * * ?"},
                           {"executorHandler", "anything"}, {"glueType", "BEAN"}});
  ASSERT_EQ(job.status, 201) << job.text;
  auto fire = admin_->post("jobs/" + std::to_string(job.body["id"].get<int>()) + "/trigger", carol);
  ASSERT_EQ(fire.status, 201) << fire.text;
  const auto run = std::to_string(fire.body["id"].get<long>());
  ASSERT_TRUE(eventually([&] { return admin_->get("logs/" + run, carol).body.value("triggerCode", 0) == 200; }, 20s));

  // 48 of carol's reads of the run's log at once, each waiting on the slow executor.
  std::vector<std::future<int>> reads;
  for (int i = 0; i < 48; ++i) {
    reads.push_back(std::async(std::launch::async, [&] {
      RawConnection connection(admin_->port());
      return connection.status_of(http_request("GET", "/api/v1/logs/" + run + "/content", "", {"Cookie: " + carol.cookie}));
    }));
  }
  ASSERT_TRUE(eventually([&] { return slow.log_calls() >= 4; }, 20s));
  for (int round = 0; round < 5; ++round) {
    everything_else_answers();
    std::this_thread::sleep_for(100ms);
  }
  // Another user's reads of the same node's other resources are not held up either.
  const auto started = Clock::now();
  EXPECT_EQ(admin_->get("groups", admin_who_).status, 200);
  EXPECT_LT(Clock::now() - started, kAnswerBound);
  EXPECT_LE(slow.log_calls(), 4) << "more than the group's share of calls reached its executor at once";

  slow.release();
  std::map<int, int> statuses;
  for (auto& read : reads) ++statuses[read.get()];
  EXPECT_EQ(statuses[200] + statuses[503], 48) << "every read answered: the log, or busy";
  EXPECT_GE(statuses[503], 40) << "the group's calls beyond its share were turned away at once";
  EXPECT_GE(statuses[200], 4);
}

}  // namespace
}  // namespace cronwheel
