// The real cronwheel-executor binary as an admin sees it: started as a process
// (tests/support/process.h) beside a FakeAdmin that records registrations and callbacks, and
// driven with request bodies byte for byte as an XXL-JOB 2.4 admin sends them. No sleeps: tests
// wait on conditions with generous bounds.
#include <gtest/gtest.h>

#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/http/http_client.h"
#include "common/http/http_server.h"
#include "common/http/xxl_job_call.h"
#include "common/protocol/constants.h"
#include "common/protocol/messages.h"
#include "tests/support/fake_admin.h"
#include "tests/support/eventually.h"
#include "tests/support/process.h"
#include "tests/support/xxl_job_requests.h"

namespace cronwheel {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using common::http::HttpClient;
using common::http::HttpClientOptions;
using common::http::post_xxl_job;
using common::protocol::HandleCallbackParam;
using common::protocol::kFailCode;
using common::protocol::kSuccessCode;
using common::protocol::kTimeoutCode;
using common::protocol::LogResult;
using common::protocol::ReturnT;
using testing::FakeAdmin;
using testing::Process;
using testing::eventually;
using testing::TriggerBody;

const std::string kExecutor = std::string(CRONWHEEL_BIN_DIR) + "/cronwheel-executor";
// Long enough for a loaded 2-core machine; a test that needs it is failing anyway.
constexpr auto kBound = 30s;
constexpr const char* kAppName = "e2e-executor";

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

// The pids a test script writes to `marker`: "<shell> <child>".
bool read_pids(const fs::path& marker, pid_t& shell, pid_t& child) {
  std::istringstream in(read_file(marker));
  return static_cast<bool>(in >> shell >> child) && shell > 0 && child > 0;
}

bool on_path(const std::string& command) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (!dir.empty() && ::access((fs::path(dir) / command).c_str(), X_OK) == 0) return true;
  }
  return false;
}

bool contains(const std::string& text, const std::string& fragment) {
  return text.find(fragment) != std::string::npos;
}

// A cronwheel-executor process listening on 127.0.0.1 at a port of the OS's choosing.
class ExecutorProcess {
 public:
  ExecutorProcess(std::vector<std::string> args, std::vector<std::string> env = {}) {
    std::vector<std::string> argv{kExecutor};
    argv.insert(argv.end(), args.begin(), args.end());
    process_ = std::make_unique<Process>(argv, env);
  }

  // Waits for the "listening on" line; returns the port, or 0 when the process exited or did
  // not get there in time.
  int wait_until_listening() {
    static const std::regex listening(R"(listening on http://127\.0\.0\.1:(\d+)/)");
    int port = 0;
    eventually([&] {
      std::smatch m;
      std::string out = process_->out();
      if (std::regex_search(out, m, listening)) port = std::stoi(m[1]);
      return port != 0 || !process_->running();
    });
    return port;
  }

  Process& process() { return *process_; }
  std::string output() const { return process_->out() + process_->err(); }

 private:
  std::unique_ptr<Process> process_;
};

class ExecutorE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    dir_ = fs::temp_directory_path() / ("cronwheel-executor-e2e-" + std::to_string(::getpid()) +
                                        "-" + std::to_string(++counter));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }

  void TearDown() override {
    if (executor_) {
      executor_->process().signal(SIGTERM);
      executor_->process().wait_for_exit(kBound);
    }
    executor_.reset();  // kills it if it did not end
    fs::remove_all(dir_);
  }

  std::vector<std::string> default_args() const {
    return {"--admin", admin_.url(), "--app-name", kAppName, "--listen", "127.0.0.1:0",
            "--log-dir", (dir_ / "logs").string(), "--log-level", "debug"};
  }

  // Starts the executor with the default arguments plus `extra`, and waits until it listens.
  void start_executor(std::vector<std::string> extra = {}, std::vector<std::string> env = {},
                      std::string access_token = {}) {
    auto args = default_args();
    args.insert(args.end(), extra.begin(), extra.end());
    executor_ = std::make_unique<ExecutorProcess>(args, env);
    port_ = executor_->wait_until_listening();
    ASSERT_GT(port_, 0) << executor_->output();
    HttpClientOptions options;
    options.access_token = std::move(access_token);
    client_ = std::make_unique<HttpClient>(address(), options);
  }

  // Sends SIGTERM and returns the exit code (-1 when it did not end in time).
  int stop_executor() {
    executor_->process().signal(SIGTERM);
    int code = executor_->process().wait_for_exit(kBound);
    return code;
  }

  std::string address() const { return "http://127.0.0.1:" + std::to_string(port_) + "/"; }

  ReturnT<std::string> post(std::string_view path, const std::string& body) {
    return post_xxl_job<std::string>(*client_, path, body);
  }
  ReturnT<std::string> run(const TriggerBody& trigger) { return post("run", trigger.body()); }

  HandleCallbackParam result_of(std::int64_t log_id) {
    auto result = admin_.wait_for_result(log_id, kBound);
    EXPECT_TRUE(result) << "no callback for log " << log_id << "\n" << executor_->output();
    return result.value_or(HandleCallbackParam{});
  }

  // The run's whole log, once the run is over (isEnd).
  std::string finished_log(const TriggerBody& trigger) {
    std::string text;
    const bool ended = eventually([&] {
      auto page = post_xxl_job<LogResult>(*client_, "log",
                                          testing::log_body(trigger.log_date_time, trigger.log_id, 1));
      if (!page.is_success() || !page.content) return false;
      text = page.content->log_content;
      return page.content->is_end;
    });
    EXPECT_TRUE(ended) << "log " << trigger.log_id << " never ended";
    return text;
  }

  // Waits until the run's log holds `text` (the run is executing, not just queued).
  bool log_shows(const TriggerBody& trigger, const std::string& text) {
    return eventually([&] {
      auto page = post_xxl_job<LogResult>(*client_, "log",
                                          testing::log_body(trigger.log_date_time, trigger.log_id, 1));
      return page.is_success() && page.content && contains(page.content->log_content, text);
    });
  }

  bool busy(int job_id) { return !post("idleBeat", testing::job_id_body(job_id)).is_success(); }

  FakeAdmin admin_;
  fs::path dir_;
  std::unique_ptr<ExecutorProcess> executor_;
  int port_ = 0;
  std::unique_ptr<HttpClient> client_;
};

TriggerBody bean(int job_id, std::int64_t log_id, std::string handler, std::string params = {}) {
  TriggerBody t;
  t.job_id = job_id;
  t.log_id = log_id;
  t.handler = std::move(handler);
  t.params = std::move(params);
  return t;
}

TriggerBody script(int job_id, std::int64_t log_id, std::string glue_type, std::string source) {
  TriggerBody t;
  t.job_id = job_id;
  t.log_id = log_id;
  t.handler = "";
  t.glue_type = std::move(glue_type);
  t.glue_source = std::move(source);
  t.glue_updatetime = 1'700'000'000'000;
  return t;
}

// ---------------------------------------------------------------------------------------------
// Starting, registering, stopping

TEST_F(ExecutorE2eTest, RegistersWithTheAdminAndAnswersBeat) {
  start_executor();
  ASSERT_TRUE(admin_.wait_until([](const FakeAdmin& a) { return !a.registrations().empty(); }, kBound));
  const auto registration = admin_.registrations().front();
  EXPECT_EQ(registration.registry_group, "EXECUTOR");
  EXPECT_EQ(registration.registry_key, kAppName);
  EXPECT_EQ(registration.registry_value, address());
  // Its built-in handlers, for the console's suggestions.
  for (const char* name : {"echo", "fail", "http", "sharding", "shell", "sleep"}) {
    EXPECT_NE(std::find(registration.handlers.begin(), registration.handlers.end(), name), registration.handlers.end())
        << name;
  }
  EXPECT_TRUE(contains(executor_->output(), "advertised to the admin as " + address()))
      << executor_->output();
  // XXL-JOB 2.4 sends the JSON string "" as /beat's body.
  EXPECT_TRUE(post("beat", "\"\"").is_success());
}

TEST_F(ExecutorE2eTest, SigtermRemovesTheRegistrationAndExitsZero) {
  start_executor({"--address", "http://executor-1.example:9999/"});
  ASSERT_TRUE(admin_.wait_until([](const FakeAdmin& a) { return !a.registrations().empty(); }, kBound));
  EXPECT_EQ(admin_.registrations().front().registry_value, "http://executor-1.example:9999/");
  EXPECT_EQ(stop_executor(), 0) << executor_->output();
  ASSERT_EQ(admin_.removals().size(), 1u);
  EXPECT_EQ(admin_.removals()[0].registry_key, kAppName);
  EXPECT_EQ(admin_.removals()[0].registry_value, "http://executor-1.example:9999/");
}

TEST_F(ExecutorE2eTest, BadFlagsExitWithCode2AndAOneLineReason) {
  const std::string admin = "http://127.0.0.1:1/";
  const std::vector<std::vector<std::string>> cases = {
      {},
      {"--app-name", "demo-app"},
      {"--admin", admin},
      {"--admin", admin, "--app-name", "abc"},
      {"--admin", "ftp://admin/", "--app-name", "demo-app"},
      {"--admin", admin, "--app-name", "demo-app", "--listen", "no-port"},
      {"--admin", admin, "--app-name", "demo-app", "--listen", "127.0.0.1:70000"},
      {"--admin", admin, "--app-name", "demo-app", "--address", "executor:9999"},
      {"--admin", admin, "--app-name", "demo-app", "--log-retention-days", "-1"},
      {"--admin", admin, "--app-name", "demo-app", "--callback-retry-seconds", "0"},
      {"--admin", admin, "--app-name", "demo-app", "--log-level", "chatty"},
      {"--admin", admin, "--app-name", "demo-app", "--http-allow-hosts", "http://internal/"},
      {"--admin", admin, "--app-name", "demo-app", "--max-run-log-bytes", "100"},
      {"--admin", admin, "--app-name", "demo-app", "--max-run-log-bytes", "lots"},
      {"--admin", admin, "--app-name", "demo-app", "--max-queued-runs-per-job", "0"},
      {"--admin", admin, "--app-name", "demo-app", "--max-job-threads", "0"},
      {"--admin", admin, "--app-name", "demo-app", "--no-such-flag"},
  };
  for (const auto& args : cases) {
    std::vector<std::string> argv{kExecutor};
    argv.insert(argv.end(), args.begin(), args.end());
    auto result = Process::run(argv, kBound);
    std::string shown;
    for (const auto& a : args) shown += a + " ";
    EXPECT_EQ(result.code, 2) << shown << "\n" << result.out << result.err;
    ASSERT_FALSE(result.err.empty()) << shown;
    EXPECT_EQ(result.err.find('\n'), result.err.size() - 1) << shown << ": " << result.err;
  }
}

TEST_F(ExecutorE2eTest, EnvironmentVariablesConfigureItAndTheAccessTokenIsRequired) {
  FakeAdmin admin_with_token(FakeAdmin::Options{"e2e-secret", 0});
  auto dir = (dir_ / "env-logs").string();
  executor_ = std::make_unique<ExecutorProcess>(
      std::vector<std::string>{},
      std::vector<std::string>{"CRONWHEEL_ADMIN_ADDRESSES=" + admin_with_token.url(),
                               "CRONWHEEL_APP_NAME=env-configured",
                               "CRONWHEEL_EXECUTOR_LISTEN=127.0.0.1:0",
                               "CRONWHEEL_ACCESS_TOKEN=e2e-secret", "CRONWHEEL_LOG_DIR=" + dir});
  port_ = executor_->wait_until_listening();
  ASSERT_GT(port_, 0) << executor_->output();
  ASSERT_TRUE(admin_with_token.wait_until(
      [](const FakeAdmin& a) { return !a.registrations().empty(); }, kBound));
  EXPECT_EQ(admin_with_token.registrations().front().registry_key, "env-configured");
  EXPECT_EQ(admin_with_token.rejected_tokens(), 0);

  HttpClient without_token(address());
  auto refused = post_xxl_job<std::string>(without_token, "beat", "\"\"");
  EXPECT_EQ(refused.code, 500);
  EXPECT_EQ(refused.msg, "The access token is wrong.");
  HttpClientOptions o;
  o.access_token = "e2e-secret";
  HttpClient with_token(address(), o);
  EXPECT_TRUE(post_xxl_job<std::string>(with_token, "beat", "\"\"").is_success());
  EXPECT_TRUE(fs::is_directory(dir));
  EXPECT_EQ(stop_executor(), 0);
}

// ---------------------------------------------------------------------------------------------
// Secrets: what a script can see of the executor

// A /proc file of `pid` with its NUL bytes shown as ' '; `readable` says whether it could be read.
std::string proc_file(pid_t pid, const std::string& name, bool& readable) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/" + name, std::ios::binary);
  std::stringstream content;
  content << in.rdbuf();
  readable = static_cast<bool>(in) || !content.str().empty();
  std::string text = content.str();
  for (char& c : text) {
    if (c == '\0') c = ' ';
  }
  return text;
}

// A shell script looking for the access token everywhere a script could: its environment, and
// its parent's (the executor's) /proc/<pid>/environ and /proc/<pid>/cmdline.
constexpr const char* kTokenHunt =
    "echo \"ppid=$PPID\"\n"
    "echo \"own-env: $(env | tr '\\n' ' ')\"\n"
    "if environ=$(tr '\\0' ' ' < /proc/$PPID/environ 2>/dev/null); then\n"
    "  echo \"parent-environ=readable: $environ\"\n"
    "else\n"
    "  echo parent-environ=unreadable\n"
    "fi\n"
    "echo \"parent-cmdline: $(tr '\\0' ' ' < /proc/$PPID/cmdline)\"\n";

TEST_F(ExecutorE2eTest, ScriptsFindTheAccessTokenNeitherInTheirEnvironmentNorInTheExecutor) {
  // Given both ways: the flag wins, and neither may be readable afterwards.
  const std::string flag_token = "tok-5e2e-flag-value";
  const std::string env_token = "tok-5e2e-env-value";
  FakeAdmin admin_with_token(FakeAdmin::Options{flag_token, 0});
  auto args = default_args();
  args[1] = admin_with_token.url();
  args.insert(args.end(), {"--access-token", flag_token});
  executor_ = std::make_unique<ExecutorProcess>(
      args, std::vector<std::string>{"CRONWHEEL_ACCESS_TOKEN=" + env_token});
  port_ = executor_->wait_until_listening();
  ASSERT_GT(port_, 0) << executor_->output();
  HttpClientOptions options;
  options.access_token = flag_token;
  client_ = std::make_unique<HttpClient>(address(), options);
  const pid_t executor_pid = executor_->process().pid();

  // What any process of the machine sees of the executor.
  bool readable = false;
  const std::string cmdline = proc_file(executor_pid, "cmdline", readable);
  ASSERT_TRUE(readable);
  EXPECT_FALSE(contains(cmdline, "tok-5e2e")) << cmdline;
  EXPECT_TRUE(contains(cmdline, "--access-token " + std::string(flag_token.size(), 'x') + " "))
      << cmdline;
  const std::string environ_text = proc_file(executor_pid, "environ", readable);
  if (readable) {  // by root; the executor is not dumpable, so not by its own user
    EXPECT_FALSE(contains(environ_text, "tok-5e2e")) << environ_text;
    EXPECT_FALSE(contains(environ_text, "CRONWHEEL_ACCESS_TOKEN")) << environ_text;
    EXPECT_TRUE(contains(environ_text, "PATH=")) << environ_text;
  } else {
    EXPECT_NE(::geteuid(), 0u);
  }

  // What a script job and the shell handler see.
  auto glue = script(1, 1101, "GLUE_SHELL", kTokenHunt);
  ASSERT_TRUE(run(glue).is_success());
  auto shell = bean(2, 1102, "shell", kTokenHunt);
  ASSERT_TRUE(run(shell).is_success());
  for (const auto& trigger : {glue, shell}) {
    EXPECT_EQ(admin_with_token.wait_for_result(trigger.log_id, kBound).value_or(HandleCallbackParam{})
                  .handle_code,
              kSuccessCode);
    const std::string log = finished_log(trigger);
    EXPECT_FALSE(contains(log, "tok-5e2e")) << log;
    // The script looked where it meant to: at the executor, and it found the rest there.
    EXPECT_TRUE(contains(log, "ppid=" + std::to_string(executor_pid) + "\n")) << log;
    EXPECT_TRUE(contains(log, "own-env: ")) << log;
    EXPECT_TRUE(contains(log, "PATH=")) << log;
    EXPECT_TRUE(contains(log, "--app-name " + std::string(kAppName))) << log;
    if (::geteuid() == 0) {
      // Root may read any process's environ: it must hold no token.
      EXPECT_TRUE(contains(log, "parent-environ=readable: ")) << log;
    } else {
      // The executor is not dumpable: a process of its own user cannot read it.
      EXPECT_TRUE(contains(log, "parent-environ=unreadable\n")) << log;
    }
  }
  if (::geteuid() == 0) {
    EXPECT_TRUE(contains(executor_->output(), "run as root")) << executor_->output();
  }
  // Stopped while its admin still answers: once the admin is gone, the executor's registration
  // removal would wait out its read timeout on the connection it kept open.
  EXPECT_EQ(stop_executor(), 0);
}

TEST_F(ExecutorE2eTest, RunAsRunsScriptJobsAndTheShellHandlerAsThatUser) {
  if (::geteuid() != 0) GTEST_SKIP() << "--run-as needs the executor to run as root";
  const passwd* nobody = ::getpwnam("nobody");
  if (nobody == nullptr) GTEST_SKIP() << "this machine has no user nobody";
  const std::string uid = std::to_string(nobody->pw_uid);
  const std::string gid = std::to_string(nobody->pw_gid);
  start_executor({"--run-as", "nobody"});
  EXPECT_TRUE(contains(executor_->output(), "run as user nobody")) << executor_->output();
  EXPECT_FALSE(contains(executor_->output(), "run as root")) << executor_->output();

  const std::string probe =
      "echo \"ids=$(id -u) $(id -g)\"\n"
      "echo \"user=$USER $LOGNAME $HOME\"\n"
      "if cat /proc/$PPID/environ > /dev/null 2>&1; then echo parent=readable; "
      "else echo parent=unreadable; fi\n";
  auto glue = script(1, 1201, "GLUE_SHELL", probe + "stat -c 'file=%a %U %G' \"$0\"\n");
  ASSERT_TRUE(run(glue).is_success());
  auto shell = bean(2, 1202, "shell", probe);
  ASSERT_TRUE(run(shell).is_success());
  for (const auto& trigger : {glue, shell}) {
    auto result = result_of(trigger.log_id);
    EXPECT_EQ(result.handle_code, kSuccessCode) << result.handle_msg;
    const std::string log = finished_log(trigger);
    EXPECT_TRUE(contains(log, "ids=" + uid + " " + gid + "\n")) << log;
    EXPECT_TRUE(contains(log, "user=nobody nobody " + std::string(nobody->pw_dir) + "\n")) << log;
    EXPECT_TRUE(contains(log, "parent=unreadable\n")) << log;
  }
  const group* nobody_group = ::getgrgid(nobody->pw_gid);
  ASSERT_NE(nobody_group, nullptr);
  EXPECT_TRUE(contains(finished_log(glue),
                       "file=640 root " + std::string(nobody_group->gr_name) + "\n"))
      << finished_log(glue);
}

TEST_F(ExecutorE2eTest, AScriptRunAsAnotherUserWritesItsOutputFileAndNothingBeside) {
  if (::geteuid() != 0) GTEST_SKIP() << "--run-as needs the executor to run as root";
  if (::getpwnam("nobody") == nullptr) GTEST_SKIP() << "this machine has no user nobody";
  start_executor({"--run-as", "nobody"});
  // The user may write the file it is given, and nothing else where the file is.
  auto t = script(1, 1211, "GLUE_SHELL",
                  "#!/bin/bash\n"
                  "dir=$(dirname \"$CRONWHEEL_OUTPUT_FILE\")\n"
                  "if touch \"$dir/planted\" 2>/dev/null; then echo planted; else echo not-planted; fi\n"
                  "printf '{\"who\":\"%s\",\"at\":%s}' \"$(id -un)\" \"$CRONWHEEL_LOG_DATE_TIME\" > "
                  "\"$CRONWHEEL_OUTPUT_FILE\"\n");
  t.log_date_time -= 2 * 86'400'000;  // a backfill's instant, two days ago
  ASSERT_TRUE(run(t).is_success());
  auto result = result_of(1211);
  EXPECT_EQ(result.handle_code, kSuccessCode) << result.handle_msg;
  EXPECT_EQ(result.output, "{\"who\":\"nobody\",\"at\":" + std::to_string(t.log_date_time) + "}");
  const std::string log = finished_log(t);
  EXPECT_TRUE(contains(log, "not-planted\n")) << log;
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(dir_ / "logs" / "gluesource")) {
    left.push_back(entry.path().filename().string());
  }
  EXPECT_EQ(left, std::vector<std::string>{"1_1700000000000.sh"}) << "the output file is removed";
}

TEST_F(ExecutorE2eTest, RunAsAUserThatCannotBeUsedExitsWithCode2AndAOneLineReason) {
  auto refused = Process::run(
      {kExecutor, "--admin", "http://127.0.0.1:1/", "--app-name", "demo-app", "--run-as",
       "no-such-user-cronwheel"},
      kBound);
  EXPECT_EQ(refused.code, 2) << refused.out << refused.err;
  EXPECT_EQ(refused.err,
            "cronwheel-executor: --run-as: no user 'no-such-user-cronwheel' on this machine\n");

  // An executor that may not switch users: run as nobody itself (needs root to arrange).
  const passwd* nobody = ::getpwnam("nobody");
  if (::geteuid() != 0 || nobody == nullptr || !on_path("setpriv")) {
    GTEST_SKIP() << "checking an unprivileged executor needs root, the user nobody and setpriv";
  }
  auto unprivileged = Process::run(
      {"/usr/bin/env", "setpriv", "--reuid=" + std::to_string(nobody->pw_uid),
       "--regid=" + std::to_string(nobody->pw_gid), "--clear-groups", kExecutor, "--admin",
       "http://127.0.0.1:1/", "--app-name", "demo-app", "--run-as", "root"},
      kBound);
  EXPECT_EQ(unprivileged.code, 2) << unprivileged.out << unprivileged.err;
  EXPECT_TRUE(unprivileged.err.starts_with(
      "cronwheel-executor: --run-as: this process may not switch to user root"))
      << unprivileged.err;
  EXPECT_EQ(unprivileged.err.find('\n'), unprivileged.err.size() - 1) << unprivileged.err;
}

// ---------------------------------------------------------------------------------------------
// Built-in handlers and script glue types

TEST_F(ExecutorE2eTest, BuiltInHandlersRunAndReportTheirResults) {
  common::http::HttpServerOptions server_options;
  server_options.host = "127.0.0.1";
  server_options.worker_threads = 2;
  common::http::HttpServer target(server_options);
  std::atomic<int> target_calls{0};
  target.get("/ping", [&](const cronwheel::common::http::Request&, cronwheel::common::http::Response& res) {
    ++target_calls;
    res.set_content("pong", "text/plain");
  });
  target.start();
  const std::string target_url = "http://127.0.0.1:" + std::to_string(target.port());
  start_executor({"--http-allow-hosts", "127.0.0.1:" + std::to_string(target.port())});

  ASSERT_TRUE(run(bean(1, 101, "echo", "hello from the admin")).is_success());
  auto sharding = bean(2, 102, "sharding");
  sharding.broadcast_index = 1;
  sharding.broadcast_total = 3;
  ASSERT_TRUE(run(sharding).is_success());
  ASSERT_TRUE(run(bean(3, 103, "fail", "quota exceeded")).is_success());
  ASSERT_TRUE(run(bean(4, 104, "sleep", "0.2")).is_success());
  const auto shell = bean(5, 105, "shell", "echo from-shell; echo shard $1/$2");
  ASSERT_TRUE(run(shell).is_success());
  ASSERT_TRUE(run(bean(6, 106, "shell", "exit 3")).is_success());
  ASSERT_TRUE(run(bean(7, 107, "http", target_url + "/ping")).is_success());
  ASSERT_TRUE(run(bean(8, 108, "http", "http://169.254.169.254/latest/meta-data/")).is_success());
  ASSERT_TRUE(run(bean(9, 109, "sleep", "soon")).is_success());

  auto echo = result_of(101);
  EXPECT_EQ(echo.handle_code, kSuccessCode);
  EXPECT_EQ(echo.handle_msg, "hello from the admin");
  EXPECT_EQ(result_of(102).handle_msg, "shard 1 of 3");
  auto fail = result_of(103);
  EXPECT_EQ(fail.handle_code, kFailCode);
  EXPECT_EQ(fail.handle_msg, "quota exceeded");
  EXPECT_EQ(result_of(104).handle_code, kSuccessCode);
  EXPECT_EQ(result_of(105).handle_code, kSuccessCode) << result_of(105).handle_msg;
  const std::string shell_log = finished_log(shell);
  EXPECT_TRUE(contains(shell_log, "from-shell\n")) << shell_log;
  EXPECT_TRUE(contains(shell_log, "shard 0/1\n")) << shell_log;
  auto shell_failed = result_of(106);
  EXPECT_EQ(shell_failed.handle_code, kFailCode);
  EXPECT_TRUE(contains(shell_failed.handle_msg, "exit code 3")) << shell_failed.handle_msg;
  auto http = result_of(107);
  EXPECT_EQ(http.handle_code, kSuccessCode) << http.handle_msg;
  EXPECT_EQ(target_calls.load(), 1);
  auto refused = result_of(108);
  EXPECT_EQ(refused.handle_code, kFailCode);
  EXPECT_TRUE(contains(refused.handle_msg, "allow-list")) << refused.handle_msg;
  auto bad_sleep = result_of(109);
  EXPECT_EQ(bad_sleep.handle_code, kFailCode);
  EXPECT_TRUE(contains(bad_sleep.handle_msg, "number of seconds")) << bad_sleep.handle_msg;

  // An unknown handler is refused at /run, and the executor keeps serving.
  auto unknown = run(bean(10, 110, "noSuchHandler"));
  EXPECT_EQ(unknown.code, 500);
  EXPECT_EQ(unknown.msg, "job handler [noSuchHandler] not found.");
  EXPECT_TRUE(post("beat", "\"\"").is_success());
}

TEST_F(ExecutorE2eTest, ScriptGlueTypesRunWithParamsAndShardAndGroovyIsRefused) {
  start_executor();
  auto shell = script(1, 201, "GLUE_SHELL",
                      "#!/bin/bash\necho \"args=$1 $2 $3\"\necho to-stderr >&2\nexit 0\n");
  shell.params = "day=2024-01-01";  // Gson sends '=' as \u003d
  shell.broadcast_index = 1;
  shell.broadcast_total = 2;
  ASSERT_TRUE(run(shell).is_success());
  EXPECT_EQ(result_of(201).handle_code, kSuccessCode) << result_of(201).handle_msg;
  const std::string log = finished_log(shell);
  EXPECT_TRUE(contains(log, "args=day=2024-01-01 1 2\n")) << log;
  EXPECT_TRUE(contains(log, "to-stderr\n")) << log;

  auto failing = script(2, 202, "GLUE_SHELL", "#!/bin/bash\nexit 4\n");
  ASSERT_TRUE(run(failing).is_success());
  EXPECT_EQ(result_of(202).handle_code, kFailCode);

  struct Optional {
    std::string glue_type;
    std::string interpreter;
    std::string source;
    std::string output;
  };
  const std::vector<Optional> optional = {
      {"GLUE_PYTHON", "python3", "import sys\nprint('python-ran', sys.argv[1])\n", "python-ran p"},
      {"GLUE_NODEJS", "node", "console.log('node-ran', process.argv[2])\n", "node-ran p"},
  };
  std::int64_t log_id = 210;
  for (const auto& c : optional) {
    ++log_id;
    auto t = script(static_cast<int>(log_id), log_id, c.glue_type, c.source);
    t.params = "p";
    ASSERT_TRUE(run(t).is_success()) << c.glue_type;
    auto result = result_of(log_id);
    if (on_path(c.interpreter)) {
      EXPECT_EQ(result.handle_code, kSuccessCode) << c.glue_type << ": " << result.handle_msg;
      EXPECT_TRUE(contains(finished_log(t), c.output)) << c.glue_type;
    } else {
      EXPECT_EQ(result.handle_code, kFailCode) << c.glue_type;
      EXPECT_TRUE(contains(result.handle_msg, c.interpreter)) << result.handle_msg;
    }
  }

  auto groovy = run(script(3, 203, "GLUE_GROOVY", "println 'hi'"));
  EXPECT_EQ(groovy.code, 500);
  EXPECT_TRUE(contains(groovy.msg, "not supported")) << groovy.msg;
}

TEST_F(ExecutorE2eTest, WithNoScriptsScriptJobsAndTheShellHandlerAreRefused) {
  start_executor({"--no-scripts"});
  auto refused = run(script(1, 301, "GLUE_SHELL", "#!/bin/bash\necho no\n"));
  EXPECT_EQ(refused.code, 500);
  EXPECT_TRUE(contains(refused.msg, "not allowed")) << refused.msg;
  ASSERT_TRUE(run(bean(2, 302, "shell", "echo no")).is_success());
  auto shell = result_of(302);
  EXPECT_EQ(shell.handle_code, kFailCode);
  EXPECT_TRUE(contains(shell.handle_msg, "--no-scripts")) << shell.handle_msg;
  // Non-script handlers still run.
  ASSERT_TRUE(run(bean(3, 303, "echo", "yes")).is_success());
  EXPECT_EQ(result_of(303).handle_code, kSuccessCode);
}

// ---------------------------------------------------------------------------------------------
// Block strategies, kill, timeout

TEST_F(ExecutorE2eTest, SerialExecutionRunsQueuedTriggersInOrder) {
  start_executor();
  ASSERT_TRUE(run(bean(1, 401, "sleep", "0.3")).is_success());
  ASSERT_TRUE(run(bean(1, 402, "echo", "second")).is_success());
  ASSERT_TRUE(run(bean(1, 403, "echo", "third")).is_success());
  result_of(403);
  std::vector<std::int64_t> order;
  for (const auto& c : admin_.callbacks()) order.push_back(c.log_id);
  EXPECT_EQ(order, (std::vector<std::int64_t>{401, 402, 403}));
}

TEST_F(ExecutorE2eTest, DiscardLaterRefusesWhileTheJobRuns) {
  start_executor();
  auto first = bean(1, 501, "sleep", "600");
  first.strategy = "DISCARD_LATER";
  ASSERT_TRUE(run(first).is_success());
  ASSERT_TRUE(log_shows(first, "sleeping 600 s"));
  EXPECT_TRUE(busy(1));
  // The same handler: another one would replace the job's thread instead.
  auto later = bean(1, 502, "sleep", "0");
  later.strategy = "DISCARD_LATER";
  auto answer = run(later);
  EXPECT_EQ(answer.code, 500);
  EXPECT_EQ(answer.msg, "block strategy effect：Discard Later");

  EXPECT_TRUE(post("kill", testing::job_id_body(1)).is_success());
  EXPECT_EQ(result_of(501).handle_msg, "scheduling center kill job. [job running, killed]");
  // Idle again: the next trigger runs.
  ASSERT_TRUE(eventually([&] { return !busy(1); }));
  later.log_id = 503;
  ASSERT_TRUE(run(later).is_success());
  EXPECT_EQ(result_of(503).handle_code, kSuccessCode);
  for (const auto& c : admin_.callbacks()) EXPECT_NE(c.log_id, 502);
}

TEST_F(ExecutorE2eTest, CoverEarlyStopsTheRunningAndQueuedRunsAndRunsTheNewOne) {
  start_executor();
  const auto running_run = bean(1, 601, "sleep", "600");
  ASSERT_TRUE(run(running_run).is_success());
  ASSERT_TRUE(log_shows(running_run, "sleeping 600 s"));  // executing, not queued
  // The same handler throughout: another one would replace the job's thread instead.
  ASSERT_TRUE(run(bean(1, 602, "sleep", "0")).is_success());
  auto cover = bean(1, 603, "sleep", "0");
  cover.strategy = "COVER_EARLY";
  ASSERT_TRUE(run(cover).is_success());
  auto running = result_of(601);
  EXPECT_EQ(running.handle_code, kFailCode);
  EXPECT_EQ(running.handle_msg, "block strategy effect：Cover Early [job running, killed]");
  EXPECT_EQ(result_of(602).handle_msg,
            "block strategy effect：Cover Early [job not executed, in the job queue, killed.]");
  auto covering = result_of(603);
  EXPECT_EQ(covering.handle_code, kSuccessCode);
  EXPECT_EQ(covering.handle_msg, "slept 0 s");
}

TEST_F(ExecutorE2eTest, KillEndsAShellScriptJobAndEveryProcessItStarted) {
  start_executor();
  const fs::path marker = dir_ / "kill.pids";
  auto t = script(1, 701, "GLUE_SHELL",
                  "#!/bin/bash\n"
                  "trap '' TERM\n"  // ignores TERM: ending it takes the KILL
                  "sleep 600 &\n"
                  "echo $$ $! > \"$1\"\n"
                  "wait\n");
  t.params = marker.string();
  ASSERT_TRUE(run(t).is_success());
  pid_t shell = 0;
  pid_t child = 0;
  ASSERT_TRUE(eventually([&] { return read_pids(marker, shell, child); }));

  EXPECT_TRUE(post("kill", testing::job_id_body(1)).is_success());
  auto result = result_of(701);
  EXPECT_EQ(result.handle_code, kFailCode);
  EXPECT_EQ(result.handle_msg, "scheduling center kill job. [job running, killed]");
  EXPECT_TRUE(eventually([&] { return process_gone(shell); }));
  EXPECT_TRUE(eventually([&] { return process_gone(child); }));
}

TEST_F(ExecutorE2eTest, TimeoutEndsAShellHandlerRunAndEveryProcessItStarted) {
  start_executor();
  const fs::path marker = dir_ / "timeout.pids";
  auto t = bean(1, 801, "shell", "sleep 600 & echo $$ $! > '" + marker.string() + "'; wait");
  t.timeout = 1;
  ASSERT_TRUE(run(t).is_success());
  pid_t shell = 0;
  pid_t child = 0;
  ASSERT_TRUE(eventually([&] { return read_pids(marker, shell, child); }));
  auto result = result_of(801);
  EXPECT_EQ(result.handle_code, kTimeoutCode) << result.handle_msg;
  EXPECT_TRUE(eventually([&] { return process_gone(shell); }));
  EXPECT_TRUE(eventually([&] { return process_gone(child); }));
}

TEST_F(ExecutorE2eTest, SigtermEndsRunningScriptsBeforeTheExecutorExits) {
  start_executor();
  const fs::path marker = dir_ / "sigterm.pids";
  auto t = script(1, 901, "GLUE_SHELL",
                  "#!/bin/bash\ntrap '' TERM\nsleep 600 &\necho $$ $! > \"$1\"\nwait\n");
  t.params = marker.string();
  ASSERT_TRUE(run(t).is_success());
  pid_t shell = 0;
  pid_t child = 0;
  ASSERT_TRUE(eventually([&] { return read_pids(marker, shell, child); }));

  EXPECT_EQ(stop_executor(), 0) << executor_->output();
  // The executor is gone; so are the processes of its script.
  EXPECT_TRUE(process_gone(shell));
  EXPECT_TRUE(eventually([&] { return process_gone(child); }, 2s));
  EXPECT_EQ(result_of(901).handle_msg, "executor is stopping [job running, killed]");
}

// ---------------------------------------------------------------------------------------------
// Delivery

TEST_F(ExecutorE2eTest, EveryResultArrivesExactlyOnceAcrossAnAdminOutageAndAnExecutorRestart) {
  start_executor();
  ASSERT_TRUE(admin_.wait_until([](const FakeAdmin& a) { return !a.registrations().empty(); }, kBound));
  admin_.stop();

  std::vector<TriggerBody> triggers;
  for (int i = 0; i < 6; ++i) {
    // A job id each: a job whose handler changes would have its earlier run replaced.
    triggers.push_back(i % 3 == 2 ? bean(i + 1, 1000 + i, "fail", "failure " + std::to_string(i))
                                  : bean(i + 1, 1000 + i, "echo", "result " + std::to_string(i)));
  }
  for (const auto& t : triggers) ASSERT_TRUE(run(t).is_success());
  for (const auto& t : triggers) finished_log(t);  // every run is over

  // Stopped while no admin answers: the results go to the spool on disk.
  EXPECT_EQ(stop_executor(), 0) << executor_->output();
  EXPECT_TRUE(admin_.callbacks().empty());
  bool spooled = false;
  for (const auto& entry : fs::recursive_directory_iterator(dir_ / "logs")) {
    if (entry.path().extension() == ".spool") spooled = true;
  }
  EXPECT_TRUE(spooled);

  // The admin comes back, then a new executor process on the same log directory re-sends.
  admin_.start();
  start_executor();
  ASSERT_TRUE(admin_.wait_until(
      [&](const FakeAdmin& a) { return a.callbacks().size() >= triggers.size(); }, kBound))
      << executor_->output();
  EXPECT_EQ(stop_executor(), 0);

  std::map<std::int64_t, int> count;
  for (const auto& c : admin_.callbacks()) ++count[c.log_id];
  ASSERT_EQ(count.size(), triggers.size());
  for (const auto& t : triggers) {
    EXPECT_EQ(count[t.log_id], 1) << "log " << t.log_id;
  }
  for (const auto& c : admin_.callbacks()) {
    const std::int64_t i = c.log_id - 1000;
    EXPECT_EQ(c.handle_code, i % 3 == 2 ? kFailCode : kSuccessCode) << c.log_id;
  }
}

// ---------------------------------------------------------------------------------------------
// Bounds and privacy against a hostile admin or user (each bounded in count and time)

// The run log directory of a run's time: its UTC day.
std::string utc_day_name(std::int64_t epoch_ms) {
  const std::chrono::year_month_day day(std::chrono::floor<std::chrono::days>(
      std::chrono::sys_time<std::chrono::milliseconds>(std::chrono::milliseconds(epoch_ms))));
  char text[16];
  std::snprintf(text, sizeof text, "%04d-%02u-%02u", static_cast<int>(day.year()),
                static_cast<unsigned>(day.month()), static_cast<unsigned>(day.day()));
  return text;
}

TEST_F(ExecutorE2eTest, ByDefaultAJobQueuesAtMost64RunsAndAtTheJobThreadLimitAnotherJobIsRefused) {
  // The default per-job queue; a job thread limit of 64 (the default, 512, works the same way
  // with more threads).
  start_executor({"--max-job-threads", "64"});
  // One job: one run executing, 64 waiting, the next refused, saying why.
  ASSERT_TRUE(run(bean(1, 1000, "sleep", "600")).is_success());
  for (std::int64_t log_id = 1001; log_id <= 1064; ++log_id) {
    ASSERT_TRUE(run(bean(1, log_id, "sleep", "600")).is_success()) << log_id;
  }
  auto refused = run(bean(1, 1065, "sleep", "600"));
  EXPECT_EQ(refused.code, 500);
  EXPECT_EQ(refused.msg, "job 1 has 64 runs queued already (max-queued-runs-per-job); run refused");

  // 63 more jobs with a run each make 64 busy job threads; a 65th job is refused.
  for (int job = 2; job <= 64; ++job) {
    ASSERT_TRUE(run(bean(job, 2000 + job, "sleep", "600")).is_success()) << job;
  }
  auto another = run(bean(65, 2065, "sleep", "0"));
  EXPECT_EQ(another.code, 500);
  EXPECT_EQ(another.msg,
            "64 jobs have runs executing or queued on this executor already (max-job-threads); run of "
            "job 65 refused");

  // Refused runs left nothing: no log, no result, and each is run once there is room.
  EXPECT_TRUE(post("kill", testing::job_id_body(2)).is_success());
  EXPECT_EQ(result_of(2002).handle_msg, "scheduling center kill job. [job running, killed]");
  EXPECT_TRUE(eventually([&] { return run(bean(65, 2065, "sleep", "0")).is_success(); }));
  EXPECT_EQ(result_of(2065).handle_code, kSuccessCode);
  EXPECT_TRUE(post("kill", testing::job_id_body(1)).is_success());
  EXPECT_EQ(result_of(1064).handle_msg,
            "scheduling center kill job. [job not executed, in the job queue, killed.]");
  for (int job = 3; job <= 64; ++job) EXPECT_TRUE(post("kill", testing::job_id_body(job)).is_success());
  ASSERT_TRUE(run(bean(1, 1065, "echo", "now")).is_success());
  EXPECT_EQ(result_of(1065).handle_code, kSuccessCode);
  int results_of_1065 = 0;
  for (const auto& c : admin_.callbacks()) results_of_1065 += c.log_id == 1065 ? 1 : 0;
  EXPECT_EQ(results_of_1065, 1);
}

TEST_F(ExecutorE2eTest, AScriptsLogStopsAtTheCapAndTheRunGoesOn) {
  start_executor({"--max-run-log-bytes", "1MiB"});
  // 5 MB of output in lines of 1000 bytes, then a last word after the flood.
  auto t = script(1, 1101, "GLUE_SHELL",
                  "#!/bin/bash\n"
                  "head -c 5000000 /dev/zero | tr '\\0' x | fold -w 999\n"
                  "echo still-running\n"
                  "exit 3\n");
  ASSERT_TRUE(run(t).is_success());
  auto result = result_of(1101);
  EXPECT_EQ(result.handle_code, kFailCode);
  EXPECT_EQ(result.handle_msg, "log truncated at 1048576 bytes (max-run-log-bytes); exit code 3");
  const fs::path file = dir_ / "logs" / utc_day_name(t.log_date_time) / "1101.log";
  EXPECT_LE(fs::file_size(file), 1048576u + 1024u);
  const std::string whole = read_file(file);
  const std::string log = whole.substr(whole.size() > 2000 ? whole.size() - 2000 : 0);  // its end
  EXPECT_TRUE(contains(log, "----------- log truncated at 1048576 bytes (max-run-log-bytes): the rest of this "
                            "run's output is dropped\n"))
      << log;
  EXPECT_FALSE(contains(log, "still-running")) << "dropped after the cap";
  EXPECT_TRUE(contains(log, "handleMsg = log truncated at 1048576 bytes")) << "the closing lines go in";
}

TEST_F(ExecutorE2eTest, ScriptsGetNoCronwheelVariableAndCannotFollowTheTokenFile) {
  const std::string token = "tok-file-e2e-secret";
  const fs::path token_file = dir_ / "access-token";
  std::ofstream(token_file) << token << "\n";
  ::chmod(token_file.c_str(), 0600);
  FakeAdmin admin_with_token(FakeAdmin::Options{token, 0});
  auto args = default_args();
  args[1] = admin_with_token.url();
  executor_ = std::make_unique<ExecutorProcess>(
      args, std::vector<std::string>{"CRONWHEEL_ACCESS_TOKEN_FILE=" + token_file.string(),
                                     "CRONWHEEL_HTTP_ALLOW_HOSTS=internal"});
  port_ = executor_->wait_until_listening();
  ASSERT_GT(port_, 0) << executor_->output();
  HttpClientOptions options;
  options.access_token = token;
  client_ = std::make_unique<HttpClient>(address(), options);
  // The token was read from the file: the admin takes the executor's calls.
  ASSERT_TRUE(admin_with_token.wait_until([](const FakeAdmin& a) { return !a.registrations().empty(); }, kBound));
  // Scripts as the executor's own user (or root) are warned about.
  EXPECT_TRUE(contains(executor_->output(), ::geteuid() == 0 ? "run as root" : "run as this executor's own user"))
      << executor_->output();

  const std::string hunt =
      "#!/bin/bash\n"
      "env | grep CRONWHEEL_\n"
      "echo \"variables=$(env | grep '^CRONWHEEL_' | cut -d= -f1 | LC_ALL=C sort | tr '\\n' ' ')\"\n"
      "cat \"$CRONWHEEL_ACCESS_TOKEN_FILE\"\n"
      "echo hunt-over\n";
  auto glue = script(1, 1201, "GLUE_SHELL", hunt);
  ASSERT_TRUE(run(glue).is_success());
  auto shell = bean(2, 1202, "shell", hunt);
  ASSERT_TRUE(run(shell).is_success());
  for (const auto& trigger : {glue, shell}) {
    admin_with_token.wait_for_result(trigger.log_id, kBound);
    const std::string log = finished_log(trigger);
    EXPECT_TRUE(contains(log, "hunt-over")) << log;
    // The log shows the script's source too: what env would print is NAME=value.
    EXPECT_FALSE(contains(log, "CRONWHEEL_ACCESS_TOKEN_FILE=")) << log;
    EXPECT_FALSE(contains(log, "CRONWHEEL_HTTP_ALLOW_HOSTS=")) << log;
    EXPECT_FALSE(contains(log, token)) << log;
  }
  // Exactly these: a script job's run, named after the executor's own were removed; the shell
  // handler's command the same but the output file (it has no output of its own).
  EXPECT_TRUE(contains(finished_log(glue),
                       "variables=CRONWHEEL_JOB_ID CRONWHEEL_LOG_DATE_TIME CRONWHEEL_LOG_ID "
                       "CRONWHEEL_OUTPUT_FILE CRONWHEEL_SHARD_INDEX CRONWHEEL_SHARD_TOTAL \n"))
      << finished_log(glue);
  EXPECT_TRUE(contains(finished_log(shell),
                       "variables=CRONWHEEL_JOB_ID CRONWHEEL_LOG_DATE_TIME CRONWHEEL_LOG_ID "
                       "CRONWHEEL_SHARD_INDEX CRONWHEEL_SHARD_TOTAL \n"))
      << finished_log(shell);
  // Stopped while its admin still answers: once the admin is gone, the executor's registration
  // removal would wait out its read timeout on the connection it kept open.
  EXPECT_EQ(stop_executor(), 0);
}

TEST_F(ExecutorE2eTest, ARunsTimeFarOutOfRangeIsRefusedNamingTheFieldAndCreatesNoDirectory) {
  start_executor();
  auto t = bean(1, 1301, "echo", "x");
  t.log_date_time = -279'000'000'000'000;  // would be the directory -6872-...
  auto refused = run(t);
  EXPECT_EQ(refused.code, 500);
  EXPECT_TRUE(contains(refused.msg, "logDateTime is -279000000000000 (year -6872)")) << refused.msg;
  auto log = post_xxl_job<LogResult>(*client_, "log", testing::log_body(t.log_date_time, t.log_id, 1));
  EXPECT_EQ(log.code, 500);
  EXPECT_TRUE(contains(log.msg, "logDateTim is -279000000000000")) << log.msg;
  for (const auto& entry : fs::directory_iterator(dir_ / "logs")) {
    EXPECT_FALSE(entry.path().filename().string().starts_with("-")) << entry.path();
  }
  EXPECT_TRUE(admin_.callbacks().empty());
}

// Modes, and (as root) that a script run as another user reads none of the executor's files.
TEST_F(ExecutorE2eTest, LogsResultsAndTheTokenAreUnreadableToScriptsRunAsAnotherUser) {
  const bool as_root = ::geteuid() == 0 && ::getpwnam("nobody") != nullptr;
  const std::string token = "tok-runas-e2e-secret";
  const fs::path token_file = dir_ / "access-token";
  std::ofstream(token_file) << token << "\n";
  ::chmod(token_file.c_str(), 0600);
  // The test's directory must let nobody reach the log directory's scripts, as /var/log does.
  ::chmod(dir_.c_str(), 0755);
  FakeAdmin admin_with_token(FakeAdmin::Options{token, 0});
  auto args = default_args();
  args[1] = admin_with_token.url();
  args.insert(args.end(), {"--callback-retry-seconds", "1"});
  if (as_root) args.insert(args.end(), {"--run-as", "nobody"});
  executor_ = std::make_unique<ExecutorProcess>(
      args, std::vector<std::string>{"CRONWHEEL_ACCESS_TOKEN_FILE=" + token_file.string()});
  port_ = executor_->wait_until_listening();
  ASSERT_GT(port_, 0) << executor_->output();
  HttpClientOptions options;
  options.access_token = token;
  client_ = std::make_unique<HttpClient>(address(), options);

  auto first = script(1, 1401, "GLUE_SHELL", "#!/bin/bash\necho first-run-secret\n");
  ASSERT_TRUE(run(first).is_success());
  admin_with_token.wait_for_result(1401, kBound);
  const fs::path logs = dir_ / "logs";
  const std::string day = utc_day_name(first.log_date_time);
  const fs::path first_log = logs / day / "1401.log";

  auto mode = [](const fs::path& path) {
    struct stat st {};
    EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
    return st.st_mode & 0777;
  };
  EXPECT_EQ(mode(logs), as_root ? 0710u : 0700u);
  EXPECT_EQ(mode(logs / day), 0700u);
  EXPECT_EQ(mode(first_log), 0600u);
  EXPECT_EQ(mode(logs / "callbacklog"), 0700u);
  EXPECT_EQ(mode(logs / "gluesource"), as_root ? 0750u : 0700u);
  for (const auto& entry : fs::directory_iterator(logs / "callbacklog")) {
    EXPECT_EQ(mode(entry.path()), 0600u) << entry.path();
  }
  if (!as_root) GTEST_SKIP() << "the modes hold; reading them as another user needs root and the user nobody";

  // The admin is away: the next result waits in the journal, where a script could look.
  admin_with_token.set_refusing(true);
  auto thief = script(2, 1402, "GLUE_SHELL",
                      "#!/bin/bash\n"
                      "echo \"id=$(id -u)\"\n"
                      "cat '" + first_log.string() + "' && echo read-the-log\n"
                      "ls '" + (logs / day).string() + "' && echo listed-the-day\n"
                      "cat '" + (logs / "callbacklog").string() + "'/* && echo read-the-results\n"
                      "ls '" + logs.string() + "' && echo listed-the-logs\n"
                      "cat '" + token_file.string() + "' && echo read-the-token\n"
                      "echo hunt-over\n");
  ASSERT_TRUE(run(thief).is_success());
  const std::string log = finished_log(thief);
  EXPECT_TRUE(contains(log, "id=" + std::to_string(::getpwnam("nobody")->pw_uid) + "\n")) << log;
  EXPECT_TRUE(contains(log, "hunt-over")) << log;
  for (const std::string& leak : std::vector<std::string>{"first-run-secret", "read-the-log", "listed-the-day", "read-the-results",
                                 "listed-the-logs", "read-the-token", token}) {
    EXPECT_FALSE(contains(log, leak)) << leak << " in\n" << log;
  }
  admin_with_token.set_refusing(false);
  EXPECT_TRUE(admin_with_token.wait_for_result(1402, kBound));
  // Stopped while its admin still answers: once the admin is gone, the executor's registration
  // removal would wait out its read timeout on the connection it kept open.
  EXPECT_EQ(stop_executor(), 0);
}

}  // namespace
}  // namespace cronwheel
