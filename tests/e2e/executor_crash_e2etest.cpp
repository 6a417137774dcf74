// An executor killed with SIGKILL beside a real cronwheel-admin on a fresh PostgreSQL database:
// the result of a run it had finished but not yet delivered comes from its journal after the
// restart (the run ends `succeeded`), and a run it had not finished is closed as `lost`, naming
// the restart, instead of staying `triggered`. Loopback only; every process is stopped by pid.

#include <gtest/gtest.h>

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/admin_process.h"
#include "tests/support/eventually.h"
#include "tests/support/process.h"
#include "tests/support/test_database.h"
#include "tests/support/wall_time.h"

namespace cronwheel {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using nlohmann::json;
using testing::AdminProcess;
using testing::ApiCredentials;
using testing::Process;
using testing::eventually;
using testing::TestDatabase;
using testing::free_port;

constexpr auto kBound = 30s;
constexpr const char* kToken = "e2e-crash-token";
constexpr const char* kAppName = "e2e-crash";

// A listening socket on 127.0.0.1 that never accepts: a connection to it completes (the kernel's
// backlog) and a request sent on it waits for an answer until the client's read timeout. Closed
// on destruction.
class BlackHole {
 public:
  BlackHole() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd_, 64) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      ADD_FAILURE() << "cannot listen on 127.0.0.1";
      return;
    }
    port_ = ntohs(addr.sin_port);
  }
  ~BlackHole() {
    if (fd_ >= 0) ::close(fd_);
  }
  BlackHole(const BlackHole&) = delete;
  BlackHole& operator=(const BlackHole&) = delete;
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/"; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class ExecutorCrashE2e : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    dir_ = fs::temp_directory_path() /
           ("cronwheel-executor-crash-e2e-" + std::to_string(::getpid()) + "-" + std::to_string(++counter));
    fs::remove_all(dir_);
    fs::create_directories(dir_);

    AdminProcess::Options options;
    options.db_url = db_.url();
    // The lost-result check every 300 ms, asking about runs a second old.
    options.args = {"--node-id", "e2e-node", "--access-token", kToken, "--lost-check-ms", "300",
                    "--lost-ask-after-ms", "1000"};
    options.require_answers = true;
    admin_ = std::make_unique<AdminProcess>(options);
    ASSERT_GT(admin_->wait_until_listening(), 0) << admin_->process().out() << admin_->process().err();
    who_ = admin_->login();

    port_ = free_port();
    ASSERT_GT(port_, 0);
    address_ = "http://127.0.0.1:" + std::to_string(port_) + "/";
    // A manual group: runs go to the executor's address whatever its registrations.
    auto group = admin_->post("groups", who_,
                              {{"appName", kAppName},
                               {"title", "E2E crash"},
                               {"addressType", 1},
                               {"addressList", json::array({address_})}});
    ASSERT_EQ(group.status, 201) << group.text;
    group_id_ = group.body["id"].get<std::int64_t>();
  }

  void TearDown() override {
    if (executor_) {
      executor_->signal(SIGTERM);
      executor_->wait_for_exit(kBound);
      executor_.reset();
    }
    if (admin_) {
      EXPECT_EQ(admin_->stop(), 0) << admin_->process().out() << admin_->process().err();
    }
    fs::remove_all(dir_);
  }

  // Starts cronwheel-executor on the test's fixed port, sending results to `admins` in order.
  void start_executor(const std::string& admins) {
    executor_ = std::make_unique<Process>(std::vector<std::string>{
        std::string(CRONWHEEL_BIN_DIR) + "/cronwheel-executor", "--admin", admins, "--app-name", kAppName,
        "--listen", "127.0.0.1:" + std::to_string(port_), "--access-token", kToken, "--log-dir",
        (dir_ / "logs").string()});
    const std::string listening = "listening on " + address_;
    ASSERT_TRUE(eventually([&] { return executor_->out().find(listening) != std::string::npos || !executor_->running(); },
                           kBound));
    ASSERT_TRUE(executor_->running()) << executor_->out() << executor_->err();
  }

  std::int64_t make_job(const std::string& desc, const std::string& handler, const std::string& param) {
    auto job = admin_->post("jobs", who_,
                            {{"jobGroup", group_id_},
                             {"jobDesc", desc},
                             {"scheduleType", "NONE"},
                             {"executorHandler", handler},
                             {"executorParam", param}});
    EXPECT_EQ(job.status, 201) << job.text;
    return job.body.value("id", std::int64_t{0});
  }

  std::int64_t trigger(std::int64_t job) {
    auto fire = admin_->post("jobs/" + std::to_string(job) + "/trigger", who_, json::object());
    EXPECT_EQ(fire.status, 201) << fire.text;
    return fire.body.value("id", std::int64_t{0});
  }

  json log(std::int64_t id) {
    auto r = admin_->get("logs/" + std::to_string(id), who_);
    EXPECT_EQ(r.status, 200) << r.text;
    return r.body;
  }

  // Whether the executor's result journal holds a result for `run`.
  bool journaled(std::int64_t run) {
    const std::string id = "\"logId\":" + std::to_string(run);
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir_ / "logs" / "callbacklog", ec)) {
      if (entry.path().extension() != ".journal") continue;
      const std::string content = read_file(entry.path());
      if (content.find(id + ",") != std::string::npos || content.find(id + "}") != std::string::npos) return true;
    }
    return false;
  }

  TestDatabase db_;
  fs::path dir_;
  std::unique_ptr<AdminProcess> admin_;
  ApiCredentials who_;
  std::int64_t group_id_ = 0;
  int port_ = 0;
  std::string address_;
  std::unique_ptr<Process> executor_;
};

TEST_F(ExecutorCrashE2e, AfterASigkillTheFinishedRunSucceedsAndTheUnfinishedOneIsLostNamingTheRestart) {
  // Results go first to an admin that never answers, so the finished run's result is still
  // waiting in the executor (in memory, and in its journal) when the executor is killed.
  BlackHole hole;
  start_executor(hole.url() + "," + admin_->url());

  const auto finished = trigger(make_job("finishes at once", "echo", "done before the crash"));
  const auto unfinished = trigger(make_job("still running", "sleep", "600"));
  ASSERT_TRUE(eventually([&] { return log(finished)["state"] == "triggered" && log(unfinished)["state"] == "triggered"; },
                         kBound))
      << log(finished).dump() << log(unfinished).dump();
  ASSERT_TRUE(eventually([&] { return journaled(finished); }, kBound)) << executor_->out() << executor_->err();

  const pid_t pid = executor_->pid();
  executor_->signal(SIGKILL);
  executor_->wait_for_exit(kBound);
  EXPECT_NE(::kill(pid, 0), 0) << "executor " << pid << " still alive";
  executor_.reset();
  // Nothing reached the admin: only the journal knows the result.
  EXPECT_EQ(log(finished)["state"], "triggered");

  // Back at the same address, with the same log directory.
  start_executor(admin_->url());
  ASSERT_TRUE(eventually([&] { return log(finished)["state"] != "triggered"; }, kBound)) << log(finished).dump();
  auto done = log(finished);
  EXPECT_EQ(done["state"], "succeeded") << done.dump();
  EXPECT_EQ(done["handleMsg"], "done before the crash") << done.dump();

  ASSERT_TRUE(eventually([&] { return log(unfinished)["state"] != "triggered"; }, kBound)) << log(unfinished).dump();
  auto lost = log(unfinished);
  EXPECT_EQ(lost["state"], "lost") << lost.dump();
  EXPECT_EQ(lost["handleCode"], 500);
  const std::string message = lost.value("handleMsg", "");
  EXPECT_NE(message.find("executor " + address_), std::string::npos) << message;
  EXPECT_NE(message.find("no longer knows the run"), std::string::npos) << message;
  EXPECT_NE(message.find("restarted"), std::string::npos) << message;
}

}  // namespace
}  // namespace cronwheel
