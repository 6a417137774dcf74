#pragma once

#include <signal.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/admin_process.h"
#include "tests/support/eventually.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_database.h"
#include "tests/support/wall_time.h"

namespace cronwheel::testing {

// A GoogleTest fixture for end-to-end tests that run jobs on one automatic executor group: a real
// cronwheel-admin on a fresh PostgreSQL database and one real cronwheel-executor registered in the
// group. A test derives from it, passes its Options to the constructor and keeps only its own
// helpers.
//
// After SetUp, for the test body:
// - db_ is a fresh database, dropped after the test; work_ a fresh directory, removed after it.
// - admin_ listens on 127.0.0.1 (a port of the OS's choosing, or a fixed one), started with
//   --node-id, --access-token and --registry-refresh-ms 200 (so a registration shows within
//   about 200 ms), plus admin_args; who_ is a console session of the bootstrap admin.
// - group_ is the id of an automatic group (addressType 0) with the app name and title given,
//   plus group_fields (maxRunning, ...).
// - executor_ is a cronwheel-executor registered in it (same access token, --listen
//   127.0.0.1:0, its run logs under logs_dir(), plus executor_args), and the group lists its
//   address.
// A step that fails, or does not happen within its bound, is a fatal failure of SetUp: the test
// body does not run.
//
// TearDown sends the executor SIGTERM and waits up to `bound` for it, then stops the current
// admin with SIGTERM and expects exit code 0. restart_admin() SIGKILLs the admin and starts the
// same node again; the new one is the current admin from then on.
//
// Every wait is bounded; processes are signalled by their own pid only, and the Process
// destructors SIGKILL whatever still runs when a test fails half-way.
class ExecutorGroupE2e : public ::testing::Test {
 public:
  struct Options {
    std::string node_id;
    std::string access_token;
    std::string app_name;
    std::string group_title;
    // More fields of the group, merged into the POST /groups body (e.g. {"maxRunning", 2}).
    nlohmann::json group_fields = nlohmann::json::object();
    // More flags of the admin (e.g. --console-url).
    std::vector<std::string> admin_args = {};
    // More flags of the executor (e.g. --registry-interval-seconds).
    std::vector<std::string> executor_args = {};
    // Listen on a port chosen once (free_port()) so the admin comes back at the same address
    // after restart_admin(), where the executor keeps calling it.
    bool fixed_port = false;
    // AdminProcess::Options::require_answers: whether a call that gets no answer fails the test.
    bool require_answers = true;
    // How long the executor may take to show in its group and to end after SIGTERM, and a killed
    // admin to end in restart_admin().
    std::chrono::milliseconds bound = std::chrono::seconds(60);
  };

 protected:
  explicit ExecutorGroupE2e(Options options) : options_(std::move(options)) {}

  void SetUp() override {
    if (options_.fixed_port) {
      port_ = free_port();
      ASSERT_GT(port_, 0) << "no free port on 127.0.0.1";
    }
    ASSERT_NO_FATAL_FAILURE(start_admin());
    nlohmann::json group = {{"appName", options_.app_name}, {"title", options_.group_title}, {"addressType", 0}};
    group.update(options_.group_fields);
    auto created = admin_->post("groups", who_, group);
    ASSERT_EQ(created.status, 201) << created.text;
    group_ = created.body["id"].get<std::int64_t>();

    std::vector<std::string> executor_argv{
        std::string(CRONWHEEL_BIN_DIR) + "/cronwheel-executor", "--admin", admin_->url(), "--app-name",
        options_.app_name, "--listen", "127.0.0.1:0", "--access-token", options_.access_token, "--log-dir",
        logs_dir().string()};
    executor_argv.insert(executor_argv.end(), options_.executor_args.begin(), options_.executor_args.end());
    executor_ = std::make_unique<Process>(std::move(executor_argv));
    ASSERT_TRUE(eventually(
        [&] {
          auto g = admin_->get("groups/" + std::to_string(group_), who_);
          return !g.body.value("addressList", std::vector<std::string>{}).empty() || !executor_->running();
        },
        options_.bound));
    ASSERT_TRUE(executor_->running()) << executor_->out() << executor_->err();
  }

  void TearDown() override {
    if (executor_) {
      executor_->signal(SIGTERM);
      executor_->wait_for_exit(options_.bound);
    }
    if (admin_) {
      EXPECT_EQ(admin_->stop(), 0) << admin_->process().out() << admin_->process().err();
    }
  }

  // The admin killed with SIGKILL (no shutdown of its own), then the same node started again at
  // the same address on the same database, and who_ logged in to it. Needs Options::fixed_port.
  void restart_admin() {
    ASSERT_TRUE(options_.fixed_port) << "restart_admin() needs Options::fixed_port";
    admin_->process().signal(SIGKILL);
    ASSERT_GE(admin_->process().wait_for_exit(options_.bound), 0) << "the killed admin did not end";
    admin_.reset();
    ASSERT_NO_FATAL_FAILURE(start_admin());
  }

  // Where the executor writes its run logs (<day>/<run id>.log).
  std::filesystem::path logs_dir() const { return work_.path() / "logs"; }

  TestDatabase db_;
  TempDir work_;
  std::unique_ptr<AdminProcess> admin_;
  std::unique_ptr<Process> executor_;
  ApiCredentials who_;
  std::int64_t group_ = 0;

 private:
  void start_admin() {
    AdminProcess::Options admin;
    admin.db_url = db_.url();
    admin.listen = "127.0.0.1:" + std::to_string(port_);
    admin.args = {"--node-id", options_.node_id, "--access-token", options_.access_token, "--registry-refresh-ms", "200"};
    admin.args.insert(admin.args.end(), options_.admin_args.begin(), options_.admin_args.end());
    admin.require_answers = options_.require_answers;
    admin_ = std::make_unique<AdminProcess>(admin);
    const int port = admin_->wait_until_listening();
    ASSERT_GT(port, 0) << admin_->process().out() << admin_->process().err();
    if (port_ != 0) {
      ASSERT_EQ(port, port_) << admin_->process().out() << admin_->process().err();
    }
    who_ = admin_->login();
  }

  Options options_;
  int port_ = 0;  // 0: the OS's choice, anew at each start
};

}  // namespace cronwheel::testing
