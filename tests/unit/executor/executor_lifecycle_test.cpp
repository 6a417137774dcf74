// The public Executor on the system clock, with the OS: the address it advertises, and stop()
// with the processes of script runs, which must not return while a process of a script job (or
// of the built-in shell handler) is alive, even when shutdown_timeout is shorter than the script
// runner's TERM-to-KILL grace; otherwise the standalone executor exits right after stop() and a
// script ignoring SIGTERM outlives it. (executor_test.cpp drives the same executor, an
// ExecutorCore, on a fake clock.)
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>

#include "common/http/http_client.h"
#include "common/http/xxl_job_call.h"
#include "cronwheel/executor.h"
#include "executor/src/builtin_handlers.h"
#include "executor/src/script_runner.h"
#include "tests/support/fake_admin.h"
#include "tests/support/xxl_job_requests.h"
#include "tests/unit/executor/job_test_support.h"

namespace cronwheel::executor {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using cronwheel::testing::FakeAdmin;
using cronwheel::testing::TriggerBody;
using test::eventually;

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Gone: no such process, or a zombie waiting for a parent that is not us.
bool process_gone(pid_t pid) {
  if (::kill(pid, 0) != 0) return errno == ESRCH;
  std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  auto paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'Z';
}

// The two pids a test command writes to `marker`: its shell's and its child's.
struct Pids {
  pid_t shell = 0;
  pid_t child = 0;
};
bool read_pids(const fs::path& marker, Pids& pids) {
  std::istringstream in(read_file(marker));
  return static_cast<bool>(in >> pids.shell >> pids.child) && pids.shell > 0 && pids.child > 0;
}

// A command that ignores SIGTERM (the shell and, by inheritance, its child), so only the
// runner's SIGKILL after the grace ends it.
std::string stubborn_command(const fs::path& marker) {
  return "trap '' TERM; sleep 300 & echo $$ $! > '" + marker.string() + "'; wait";
}

class ExecutorLifecycleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    dir_ = fs::temp_directory_path() / ("cronwheel-shutdown-test-" + std::to_string(::getpid()) +
                                        "-" + std::to_string(++counter));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    executor_.reset();
    fs::remove_all(dir_);
  }

  ExecutorOptions options() const {
    ExecutorOptions o;
    o.admin_addresses = {admin_.url()};
    o.app_name = "cronwheel-test";
    o.listen_host = "127.0.0.1";
    o.listen_port = 0;
    o.log_dir = (dir_ / "logs").string();
    o.allow_scripts = true;
    o.http_threads = 4;
    return o;
  }

  void start(std::chrono::milliseconds shutdown_timeout) {
    ExecutorOptions o = options();
    o.shutdown_timeout = shutdown_timeout;
    executor_ = std::make_unique<Executor>(o);
    add_builtin_handlers(*executor_, BuiltinHandlerOptions{});
    executor_->start();
    client_ = std::make_unique<common::http::HttpClient>(executor_->address());
  }

  bool run(const TriggerBody& trigger) {
    return common::http::post_xxl_job<std::string>(*client_, "run", trigger.body()).is_success();
  }

  FakeAdmin admin_;
  fs::path dir_;
  std::unique_ptr<Executor> executor_;
  std::unique_ptr<common::http::HttpClient> client_;
};

TEST_F(ExecutorLifecycleTest, AdvertisesAnIpv6ListenAddressInBrackets) {
  ExecutorOptions o = options();
  o.listen_host = "::1";
  Executor executor(o);
  try {
    executor.start();
  } catch (const std::system_error& e) {
    GTEST_SKIP() << "no IPv6 loopback here: " << e.what();
  }
  EXPECT_EQ(executor.address(), "http://[::1]:" + std::to_string(executor.port()) + "/");
  // The admin can call it there.
  common::http::HttpClient client(executor.address());
  EXPECT_TRUE(common::http::post_xxl_job<std::string>(client, "beat", "\"\"").is_success());
  executor.stop();
}

TEST_F(ExecutorLifecycleTest, StopReturnsOnlyOnceEveryScriptProcessIsGoneEvenWithAShortTimeout) {
  ASSERT_LT(100ms, kScriptKillGrace);  // the case under test: the timeout ends before the KILL
  start(100ms);

  TriggerBody script;
  script.job_id = 1;
  script.log_id = 11;
  script.glue_type = "GLUE_SHELL";
  script.handler = "";
  script.glue_source = "#!/bin/bash\n" + stubborn_command(dir_ / "script.pids") + "\n";
  ASSERT_TRUE(run(script));

  TriggerBody shell;
  shell.job_id = 2;
  shell.log_id = 12;
  shell.handler = "shell";
  shell.params = stubborn_command(dir_ / "shell.pids");
  ASSERT_TRUE(run(shell));

  Pids script_pids;
  Pids shell_pids;
  ASSERT_TRUE(eventually([&] {
    return read_pids(dir_ / "script.pids", script_pids) && read_pids(dir_ / "shell.pids", shell_pids);
  }));

  executor_->stop();

  // No waiting here: stop() itself must have waited.
  EXPECT_TRUE(process_gone(script_pids.shell));
  EXPECT_TRUE(process_gone(script_pids.child));
  EXPECT_TRUE(process_gone(shell_pids.shell));
  EXPECT_TRUE(process_gone(shell_pids.child));

  // Both runs were reported (at the shutdown bound, as XXL-JOB words it), once each.
  auto callbacks = admin_.callbacks();
  ASSERT_EQ(callbacks.size(), 2u);
  for (const auto& c : callbacks) {
    EXPECT_EQ(c.handle_msg, "executor is stopping [job running, killed]") << c.log_id;
  }
}

TEST_F(ExecutorLifecycleTest, StopDoesNotWaitForScriptsThatEndOnTerm) {
  start(10s);
  TriggerBody script;
  script.glue_type = "GLUE_SHELL";
  script.handler = "";
  script.log_id = 21;
  script.glue_source = "#!/bin/bash\nsleep 300 & echo $$ $! > '" + (dir_ / "polite.pids").string() +
                       "'\nwait\n";
  ASSERT_TRUE(run(script));
  Pids pids;
  ASSERT_TRUE(eventually([&] { return read_pids(dir_ / "polite.pids", pids); }));

  const auto before = std::chrono::steady_clock::now();
  executor_->stop();
  // TERM ends it: no KILL grace to sit out (the bound is generous for a loaded machine).
  EXPECT_LT(std::chrono::steady_clock::now() - before, kScriptKillGrace);
  EXPECT_TRUE(process_gone(pids.shell));
  EXPECT_TRUE(process_gone(pids.child));
}

}  // namespace
}  // namespace cronwheel::executor
