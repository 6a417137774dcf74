// The executor as an admin sees it: an ExecutorCore (the Executor, on an injected clock) on
// 127.0.0.1 (port chosen by the OS), a FakeAdmin recording registrations and callbacks, and
// requests sent with the exact bodies an XXL-JOB 2.4 admin sends (Gson field order and escaping).
//
// Time is a FakeClock's, moved by hand: executorTimeout, the heartbeat, the callbacks' retries,
// the logDateTime check, executorStartTime and log stamps follow it, and a test waits for the
// executor to have reacted to it with wait_until_idle(). What the OS times stays real (HTTP,
// script processes and their TERM-to-KILL grace). No sleeps: tests wait on conditions.
// executor_lifecycle_test.cpp runs the public Executor on the system clock.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/http/http_client.h"
#include "common/http/xxl_job_call.h"
#include "common/protocol/constants.h"
#include "common/protocol/messages.h"
#include "cronwheel/executor.h"
#include "executor/src/executor_core.h"
#include "executor/src/run_log.h"
#include "executor/src/script_runner.h"
#include "tests/support/fake_admin.h"
#include "tests/support/fake_clock.h"
#include "tests/support/xxl_job_requests.h"
#include "tests/unit/executor/job_test_support.h"

namespace cronwheel::executor {
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
using test::eventually;
using test::kBound;
using test::Signals;
using cronwheel::testing::FakeAdmin;
using cronwheel::testing::FakeClock;

// Where the executor's clock starts (2023-11-14 22:13:20 UTC), and the trigger time the admin
// sends: now (a time older than the log retention would have its day directory removed by the
// executor's retention cleanup, one past tomorrow is refused).
constexpr std::int64_t kStartMs = 1'700'000'000'000;
constexpr std::int64_t kLogDateTime = kStartMs;

// Threads of an ExecutorCore that sleep on its clock whatever it does: the periodic timer's worker
// (heartbeat, retention, callback retries), the deadline timer's and the lead timer's (lead
// dispatch is on by default). Each idle job thread is one more. Everything else waits on
// conditions or on the network.
constexpr std::size_t kTimerThreads = 3;

// POST /run's body as XXL-JOB 2.4's admin writes it, with this file's defaults.
struct Trigger : testing::TriggerBody {
  Trigger() {
    handler = "demoJobHandler";
    log_id = 42;
    log_date_time = kLogDateTime;
    glue_updatetime = kLogDateTime;
  }
};

std::string job_body(int job_id) { return "{\"jobId\":" + std::to_string(job_id) + "}"; }

std::string log_body(std::int64_t log_id, int from_line) {
  return "{\"logDateTim\":" + std::to_string(kLogDateTime) + ",\"logId\":" +
         std::to_string(log_id) + ",\"fromLineNum\":" + std::to_string(from_line) + "}";
}

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

pid_t read_pid(const fs::path& path) {
  pid_t pid = 0;
  std::ifstream(path) >> pid;
  return pid;
}

// The log ids of the results in the spool files under `log_dir`.
std::multiset<std::int64_t> spooled_log_ids(const fs::path& log_dir) {
  std::multiset<std::int64_t> ids;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(log_dir / "callbacklog", ec)) {
    if (entry.path().extension() != ".spool") continue;
    std::istringstream lines(read_file(entry.path()));
    for (std::string line; std::getline(lines, line);) {
      for (const auto& r : common::protocol::parse<common::protocol::CallbackBatch>(line).callbacks) {
        ids.insert(r.log_id);
      }
    }
  }
  return ids;
}

class ExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    log_dir_ = fs::temp_directory_path() / ("cronwheel-executor-test-" + std::to_string(::getpid()) +
                                            "-" + std::to_string(++counter));
    fs::remove_all(log_dir_);
  }

  void TearDown() override {
    signals_.release();
    executor_.reset();
    fs::remove_all(log_dir_);
  }

  ExecutorOptions options() const {
    ExecutorOptions o;
    o.admin_addresses = {admin_.url()};
    o.app_name = "cronwheel-test";
    o.listen_host = "127.0.0.1";
    o.listen_port = 0;
    o.log_dir = log_dir_.string();
    o.allow_scripts = true;
    o.http_threads = 4;
    o.shutdown_timeout = 5s;
    return o;
  }

  void add_handlers(ExecutorCore& executor) {
    executor.handle("demoJobHandler", [this](JobContext& ctx) {
      ctx.log("params=" + ctx.params() + " shard=" + std::to_string(ctx.shard_index()) + "/" +
              std::to_string(ctx.shard_total()));
      std::lock_guard lock(seen_mutex_);
      seen_params_[ctx.log_id()] = ctx.params();
      seen_shards_[ctx.log_id()] = {ctx.shard_index(), ctx.shard_total()};
      run_order_.push_back(ctx.log_id());
    });
    // Runs until released or stopped (honours its token).
    executor.handle("block", [this](JobContext& ctx) {
      {
        std::lock_guard lock(seen_mutex_);
        run_order_.push_back(ctx.log_id());
      }
      signals_.started(ctx.log_id());
      signals_.wait_release(ctx.stop_token());
      if (ctx.stop_requested()) ctx.log("stop seen");
    });
    executor.handle("throws", [](JobContext&) { throw std::runtime_error("disk quota exceeded"); });
    executor.handle("fails", [](JobContext& ctx) { ctx.fail("nothing to do: " + ctx.params()); });
    executor.handle("outputs", [](JobContext& ctx) {
      // What cannot be output is refused and leaves the output set before it.
      ctx.set_output(R"({"rows":42,"files":["a.csv"]})");
      for (const std::string& bad : {std::string("{not json"), std::string(JobContext::kMaxOutputBytes + 1, ' '),
                                    std::string(100, '[') + std::string(100, ']')}) {
        try {
          ctx.set_output(bad);
          ctx.fail("set_output took " + bad.substr(0, 20));
          return;
        } catch (const std::invalid_argument&) {
        }
      }
      ctx.succeed("42 rows");
    });
    executor.handle("chatty", [](JobContext& ctx) {
      const int lines = std::stoi(ctx.params());
      for (int i = 1; i <= lines; ++i) ctx.log("line " + std::to_string(i));
    });
    executor.handle("big", [](JobContext& ctx) {
      for (int i = 0; i < 40; ++i) ctx.log(std::string(10'000, static_cast<char>('a' + i % 26)));
    });
  }

  void start(ExecutorOptions o) {
    HttpClientOptions client_options;
    client_options.access_token = o.access_token;
    executor_ = std::make_unique<ExecutorCore>(std::move(o), clock_);
    add_handlers(*executor_);
    executor_->start();
    client_ = std::make_unique<HttpClient>(executor_->address(), client_options);
  }
  void start() { start(options()); }

  ReturnT<std::string> post(std::string_view path, const std::string& body) {
    return post_xxl_job(*client_, path, body);
  }
  ReturnT<std::string> run(const Trigger& t) { return post("run", t.body()); }

  HandleCallbackParam result_of(std::int64_t log_id) {
    auto result = admin_.wait_for_result(log_id, kBound);
    EXPECT_TRUE(result) << "no callback for log " << log_id;
    return result.value_or(HandleCallbackParam{});
  }

  // Waits until the executor has done all it can without time passing, with `idle_job_threads`
  // job threads waiting for work: every thread that sleeps on the clock is asleep (so every run
  // that ended has pushed its result), the results pushed are sent or spooled, and the periodic
  // work is done (ExecutorCore::wait_idle). Its next deadlines are on the clock then.
  void wait_until_idle(std::size_t idle_job_threads) {
    clock_.wait_for_sleepers(kTimerThreads + idle_job_threads);
    executor_->wait_idle();
  }

  // Every callback the admin accepted names a different run.
  void expect_no_duplicate_callbacks() {
    std::map<std::int64_t, int> count;
    for (const auto& c : admin_.callbacks()) ++count[c.log_id];
    for (const auto& [log_id, n] : count) EXPECT_EQ(n, 1) << "log " << log_id << " called back " << n << " times";
  }

  FakeAdmin admin_;
  fs::path log_dir_;
  Signals signals_;
  std::mutex seen_mutex_;
  std::map<std::int64_t, std::string> seen_params_;
  std::map<std::int64_t, std::pair<int, int>> seen_shards_;
  std::vector<std::int64_t> run_order_;
  FakeClock clock_{kStartMs};  // outlives the executor
  std::unique_ptr<ExecutorCore> executor_;
  std::unique_ptr<HttpClient> client_;
};

// ---------------------------------------------------------------------------------------------
// Registration and running

TEST_F(ExecutorTest, RegistersWithTheAdminAndAnswersBeat) {
  start();
  EXPECT_EQ(executor_->address(), "http://127.0.0.1:" + std::to_string(executor_->port()) + "/");
  ASSERT_TRUE(admin_.wait_until([](const FakeAdmin& a) { return !a.registrations().empty(); }));
  auto registration = admin_.registrations().front();
  EXPECT_EQ(registration.registry_group, "EXECUTOR");
  EXPECT_EQ(registration.registry_key, "cronwheel-test");
  EXPECT_EQ(registration.registry_value, executor_->address());
  // The handlers registered with handle(), sorted, for the console's suggestions.
  EXPECT_TRUE(std::is_sorted(registration.handlers.begin(), registration.handlers.end()));
  for (const char* name : {"big", "chatty", "fails", "throws"}) {
    EXPECT_NE(std::find(registration.handlers.begin(), registration.handlers.end(), name), registration.handlers.end())
        << name;
  }
  // XXL-JOB 2.4 sends the JSON string "" as /beat's body.
  EXPECT_TRUE(post("beat", "\"\"").is_success());
}

TEST_F(ExecutorTest, RegistersAgainEveryRegistryIntervalOfItsClock) {
  auto o = options();
  o.registry_interval = 30s;
  start(o);
  ASSERT_TRUE(admin_.wait_until([](const FakeAdmin& a) { return a.registrations().size() == 1; }));
  wait_until_idle(0);
  clock_.advance(30s - 1ms);
  wait_until_idle(0);
  EXPECT_EQ(admin_.registrations().size(), 1u) << "not before the interval";
  clock_.advance(1ms);
  EXPECT_TRUE(admin_.wait_until([](const FakeAdmin& a) { return a.registrations().size() == 2; }));
  wait_until_idle(0);
  clock_.advance(30s);
  EXPECT_TRUE(admin_.wait_until([](const FakeAdmin& a) { return a.registrations().size() == 3; }));
}

TEST_F(ExecutorTest, BeanHandlerGetsParamsAndShardAndItsResultIsCalledBack) {
  start();
  Trigger t;
  t.params = "date=2024-01-01&force='yes'";  // Gson sends = & ' as \u003d \u0026 \u0027
  t.broadcast_index = 2;
  t.broadcast_total = 3;
  ASSERT_TRUE(run(t).is_success());
  auto result = result_of(42);
  EXPECT_EQ(result.handle_code, kSuccessCode);
  EXPECT_EQ(result.log_date_time, kLogDateTime);
  std::lock_guard lock(seen_mutex_);
  EXPECT_EQ(seen_params_[42], "date=2024-01-01&force='yes'");
  EXPECT_EQ(seen_shards_[42], (std::pair<int, int>{2, 3}));
}

TEST_F(ExecutorTest, FailureSetByTheHandlerIsCalledBackWithItsMessage) {
  start();
  Trigger t;
  t.handler = "fails";
  t.params = "empty inbox";
  ASSERT_TRUE(run(t).is_success());
  auto result = result_of(42);
  EXPECT_EQ(result.handle_code, kFailCode);
  EXPECT_EQ(result.handle_msg, "nothing to do: empty inbox");
}

TEST_F(ExecutorTest, OutputSetByTheHandlerIsCalledBackWithItsResult) {
  start();
  Trigger t;
  t.handler = "outputs";
  ASSERT_TRUE(run(t).is_success());
  auto result = result_of(42);
  EXPECT_EQ(result.handle_code, kSuccessCode) << result.handle_msg;
  EXPECT_EQ(result.handle_msg, "42 rows");
  EXPECT_EQ(result.output, R"({"rows":42,"files":["a.csv"]})");
}

TEST_F(ExecutorTest, HandlerSeesTheRunsLogDateTimeNotTheTimeItRuns) {
  start();
  executor_->handle("when", [](JobContext& ctx) { ctx.succeed(std::to_string(ctx.log_date_time())); });
  // A backfill's run: the instant it stands for is three days before the executor's now.
  Trigger t;
  t.handler = "when";
  t.log_date_time = kStartMs - 3 * 86'400'000;
  ASSERT_TRUE(run(t).is_success());
  auto result = result_of(42);
  EXPECT_EQ(result.handle_code, kSuccessCode) << result.handle_msg;
  EXPECT_EQ(result.handle_msg, std::to_string(kStartMs - 3 * 86'400'000));
  EXPECT_EQ(result.log_date_time, kStartMs - 3 * 86'400'000);
}

TEST_F(ExecutorTest, HandlerExceptionIsAFailureCarryingItsMessage) {
  start();
  Trigger t;
  t.handler = "throws";
  ASSERT_TRUE(run(t).is_success());
  auto result = result_of(42);
  EXPECT_EQ(result.handle_code, kFailCode);
  EXPECT_EQ(result.handle_msg, "disk quota exceeded");
  // The executor is unharmed.
  Trigger next;
  next.job_id = 2;
  next.log_id = 43;
  ASSERT_TRUE(run(next).is_success());
  EXPECT_EQ(result_of(43).handle_code, kSuccessCode);
}

// An admin paused past its lease may post a run after another node sent it again: whether the
// run is running or done by then, it runs once and has one result.
TEST_F(ExecutorTest, ARunReceivedAgainIsNotRunAgain) {
  start();
  Trigger running;
  running.handler = "block";
  running.log_id = 100;
  ASSERT_TRUE(run(running).is_success());
  ASSERT_TRUE(signals_.wait_started(100));
  auto again = run(running);
  EXPECT_TRUE(again.is_success());
  EXPECT_EQ(again.msg, "run 100 was received already: not run again");
  signals_.release();
  EXPECT_EQ(result_of(100).handle_code, kSuccessCode);

  Trigger done;  // demoJobHandler, log 42
  ASSERT_TRUE(run(done).is_success());
  EXPECT_EQ(result_of(42).handle_code, kSuccessCode);
  again = run(done);
  EXPECT_TRUE(again.is_success());
  EXPECT_EQ(again.msg, "run 42 was received already: not run again");
  wait_until_idle(1);  // a second run would have been queued before that answer, and run by now
  {
    std::lock_guard lock(seen_mutex_);
    EXPECT_EQ(run_order_, (std::vector<std::int64_t>{100, 42}));
  }
  expect_no_duplicate_callbacks();
}

TEST_F(ExecutorTest, WhatCannotRunIsRefusedWithoutACallback) {
  start();
  Trigger unknown;
  unknown.handler = "noSuchHandler";
  auto answer = run(unknown);
  EXPECT_EQ(answer.code, kFailCode);
  EXPECT_EQ(answer.msg, "job handler [noSuchHandler] not found.");

  Trigger groovy;
  groovy.log_id = 43;
  groovy.glue_type = "GLUE_GROOVY";
  groovy.glue_source = "package com.xxl.job.service.handler; class DemoGlueJobHandler {}";
  EXPECT_EQ(run(groovy).msg, "GLUE_GROOVY is not supported by this executor");

  Trigger odd;
  odd.log_id = 44;
  odd.glue_type = "GLUE_FORTRAN";
  EXPECT_EQ(run(odd).msg, "glueType[GLUE_FORTRAN] is not valid.");

  Trigger fine;
  fine.log_id = 45;
  ASSERT_TRUE(run(fine).is_success());
  result_of(45);
  EXPECT_EQ(admin_.callbacks().size(), 1u);
}

TEST_F(ExecutorTest, ScriptsAreRefusedWhenNotAllowed) {
  auto o = options();
  o.allow_scripts = false;
  start(o);
  Trigger t;
  t.glue_type = "GLUE_SHELL";
  t.glue_source = "#!/bin/bash\necho hi\n";
  auto answer = run(t);
  EXPECT_EQ(answer.code, kFailCode);
  EXPECT_EQ(answer.msg, "GLUE_SHELL is refused: script jobs are not allowed on this executor");
}

// ---------------------------------------------------------------------------------------------
// Block strategies

TEST_F(ExecutorTest, SerialExecutionQueuesTriggersAndRunsThemInOrder) {
  start();
  Trigger first;
  first.handler = "block";
  first.log_id = 100;
  ASSERT_TRUE(run(first).is_success());
  ASSERT_TRUE(signals_.wait_started(100));
  for (int i = 101; i <= 105; ++i) {
    Trigger t = first;
    t.log_id = i;
    ASSERT_TRUE(run(t).is_success()) << i;
  }
  EXPECT_FALSE(signals_.has_started(101));
  signals_.release();
  for (int i = 100; i <= 105; ++i) EXPECT_EQ(result_of(i).handle_code, kSuccessCode);
  std::lock_guard lock(seen_mutex_);
  EXPECT_EQ(run_order_, (std::vector<std::int64_t>{100, 101, 102, 103, 104, 105}));
}

TEST_F(ExecutorTest, DiscardLaterRefusesWhileTheJobRunsAndAcceptsOnceItIsIdle) {
  start();
  Trigger first;
  first.handler = "block";
  first.strategy = "DISCARD_LATER";
  first.log_id = 100;
  ASSERT_TRUE(run(first).is_success());
  ASSERT_TRUE(signals_.wait_started(100));
  Trigger later = first;
  later.log_id = 101;
  auto refused = run(later);
  EXPECT_EQ(refused.code, kFailCode);
  EXPECT_EQ(refused.msg, "block strategy effect：Discard Later");

  signals_.release();
  EXPECT_EQ(result_of(100).handle_code, kSuccessCode);
  wait_until_idle(1);
  ASSERT_TRUE(post("idleBeat", job_body(1)).is_success());
  later.log_id = 102;
  ASSERT_TRUE(run(later).is_success());
  EXPECT_EQ(result_of(102).handle_code, kSuccessCode);
  EXPECT_FALSE(admin_.wait_for_result(101, 0ms)) << "a refused trigger is not called back";
}

TEST_F(ExecutorTest, CoverEarlyKillsTheRunningAndQueuedRunsAndRunsTheNewOne) {
  start();
  Trigger first;
  first.handler = "block";
  first.log_id = 100;
  ASSERT_TRUE(run(first).is_success());
  ASSERT_TRUE(signals_.wait_started(100));
  Trigger queued = first;
  queued.log_id = 101;
  ASSERT_TRUE(run(queued).is_success());

  Trigger cover;
  cover.strategy = "COVER_EARLY";
  cover.handler = "block";
  cover.log_id = 102;
  ASSERT_TRUE(run(cover).is_success());

  auto running = result_of(100);
  EXPECT_EQ(running.handle_code, kFailCode);
  EXPECT_EQ(running.handle_msg, "block strategy effect：Cover Early [job running, killed]");
  auto waiting = result_of(101);
  EXPECT_EQ(waiting.handle_code, kFailCode);
  EXPECT_EQ(waiting.handle_msg,
            "block strategy effect：Cover Early [job not executed, in the job queue, killed.]");
  ASSERT_TRUE(signals_.wait_started(102));
  signals_.release();
  EXPECT_EQ(result_of(102).handle_code, kSuccessCode);
  expect_no_duplicate_callbacks();
}

TEST_F(ExecutorTest, UnknownBlockStrategyQueuesLikeSerialExecution) {
  start();
  Trigger first;
  first.handler = "block";
  first.strategy = "CONCURRENT_EXECUTION";
  first.log_id = 100;
  ASSERT_TRUE(run(first).is_success());
  ASSERT_TRUE(signals_.wait_started(100));
  Trigger second = first;
  second.handler = "block";
  second.log_id = 101;
  ASSERT_TRUE(run(second).is_success());
  signals_.release();
  EXPECT_EQ(result_of(100).handle_code, kSuccessCode);
  EXPECT_EQ(result_of(101).handle_code, kSuccessCode);
}

TEST_F(ExecutorTest, ChangingTheHandlerReplacesTheJobThread) {
  start();
  Trigger old_work;
  old_work.handler = "block";
  old_work.log_id = 100;
  ASSERT_TRUE(run(old_work).is_success());
  ASSERT_TRUE(signals_.wait_started(100));
  Trigger queued = old_work;
  queued.log_id = 101;
  ASSERT_TRUE(run(queued).is_success());

  Trigger new_work;
  new_work.handler = "demoJobHandler";
  new_work.log_id = 102;
  ASSERT_TRUE(run(new_work).is_success());
  EXPECT_EQ(result_of(100).handle_msg,
            "change jobhandler or glue type, and terminate the old job thread. [job running, "
            "killed]");
  EXPECT_EQ(result_of(101).handle_msg,
            "change jobhandler or glue type, and terminate the old job thread. [job not "
            "executed, in the job queue, killed.]");
  EXPECT_EQ(result_of(102).handle_code, kSuccessCode);
}

// ---------------------------------------------------------------------------------------------
// Timeout and kill

TEST_F(ExecutorTest, TimeoutReports502AndStopsAHandlerHonouringItsToken) {
  start();
  Trigger t;
  t.handler = "block";
  t.timeout = 3;
  ASSERT_TRUE(run(t).is_success());
  ASSERT_TRUE(signals_.wait_started(42));  // its deadline is on the timer from here on
  clock_.advance(3s - 1ms);
  wait_until_idle(0);
  EXPECT_FALSE(admin_.wait_for_result(42, 0ms)) << "not before executorTimeout";
  clock_.advance(1ms);
  auto result = result_of(42);
  EXPECT_EQ(result.handle_code, kTimeoutCode);
  EXPECT_EQ(result.handle_msg, "job execute timeout (executorTimeout 3 s)");
  // The handler saw its stop token and returned: the job is idle again.
  wait_until_idle(1);
  EXPECT_TRUE(post("idleBeat", job_body(1)).is_success());
}

TEST_F(ExecutorTest, KillStopsTheRunningHandlerAndItsQueue) {
  start();
  Trigger t;
  t.handler = "block";
  t.log_id = 100;
  ASSERT_TRUE(run(t).is_success());
  ASSERT_TRUE(signals_.wait_started(100));
  t.log_id = 101;
  ASSERT_TRUE(run(t).is_success());

  EXPECT_TRUE(post("kill", job_body(1)).is_success());
  auto running = result_of(100);
  EXPECT_EQ(running.handle_code, kFailCode);
  EXPECT_EQ(running.handle_msg, "scheduling center kill job. [job running, killed]");
  EXPECT_EQ(result_of(101).handle_msg,
            "scheduling center kill job. [job not executed, in the job queue, killed.]");
  // The job thread has ended.
  ASSERT_TRUE(eventually([&] { return post("kill", job_body(1)).msg == "job thread already killed."; }));
  auto again = post("kill", job_body(1));
  EXPECT_TRUE(again.is_success());
  expect_no_duplicate_callbacks();
}

TEST_F(ExecutorTest, IdleBeatIsBusyWhileTheJobRunsOrHasQueueAndIdleAfterwards) {
  start();
  EXPECT_TRUE(post("idleBeat", job_body(1)).is_success());
  Trigger t;
  t.handler = "block";
  ASSERT_TRUE(run(t).is_success());
  ASSERT_TRUE(signals_.wait_started(42));
  auto busy = post("idleBeat", job_body(1));
  EXPECT_EQ(busy.code, kFailCode);
  EXPECT_EQ(busy.msg, "job thread is running or has trigger queue.");
  EXPECT_TRUE(post("idleBeat", job_body(2)).is_success()) << "another job is idle";
  signals_.release();
  result_of(42);
  wait_until_idle(1);
  EXPECT_TRUE(post("idleBeat", job_body(1)).is_success());
}

// ---------------------------------------------------------------------------------------------
// Scripts

class ScriptTest : public ExecutorTest {
 protected:
  Trigger script(std::string source, std::int64_t log_id = 42) {
    Trigger t;
    t.handler = "";
    t.glue_type = "GLUE_SHELL";
    t.glue_source = std::move(source);
    t.log_id = log_id;
    return t;
  }
  fs::path marker(const std::string& name) const { return log_dir_ / name; }
};

TEST_F(ScriptTest, ShellScriptGetsParamsAndShardAndItsExitCodeDecides) {
  start();
  auto ok = script("#!/bin/bash\necho \"args=$1 $2 $3\"\nexit 0\n", 42);
  ok.params = "x=1";
  ok.broadcast_index = 1;
  ok.broadcast_total = 2;
  ASSERT_TRUE(run(ok).is_success());
  EXPECT_EQ(result_of(42).handle_code, kSuccessCode);

  auto bad = script("#!/bin/bash\necho failing >&2\nexit 3\n", 43);
  bad.glue_updatetime = kLogDateTime + 1;
  ASSERT_TRUE(run(bad).is_success());
  auto failed = result_of(43);
  EXPECT_EQ(failed.handle_code, kFailCode);
  EXPECT_NE(failed.handle_msg.find('3'), std::string::npos) << failed.handle_msg;

  auto log = post_xxl_job<LogResult>(*client_, "log", log_body(42, 1));
  ASSERT_TRUE(log.is_success()) << log.msg;
  EXPECT_NE(log.content->log_content.find("args=x=1 1 2"), std::string::npos)
      << log.content->log_content;
}

TEST_F(ScriptTest, OutputTheScriptWritesIsCalledBackWithItsResult) {
  start();
  ASSERT_TRUE(run(script("#!/bin/bash\necho '{\"rows\":42}' > \"$CRONWHEEL_OUTPUT_FILE\"\n"
                         "echo loaded\n", 42))
                  .is_success());
  auto result = result_of(42);
  EXPECT_EQ(result.handle_code, kSuccessCode) << result.handle_msg;
  EXPECT_EQ(result.output, R"({"rows":42})");

  auto silent = script("#!/bin/bash\necho loaded\n", 43);
  silent.glue_updatetime = kLogDateTime + 1;
  ASSERT_TRUE(run(silent).is_success());
  EXPECT_EQ(result_of(43).output, std::nullopt);
}

TEST_F(ScriptTest, AScriptWhoseOutputIsNotJsonFailsSayingWhy) {
  start();
  ASSERT_TRUE(run(script("#!/bin/bash\necho 'rows: 42' > \"$CRONWHEEL_OUTPUT_FILE\"\n", 42)).is_success());
  auto result = result_of(42);
  EXPECT_EQ(result.handle_code, kFailCode);
  EXPECT_EQ(result.handle_msg.rfind("exit code 0; output refused: CRONWHEEL_OUTPUT_FILE: not JSON: ", 0), 0u)
      << result.handle_msg;
  EXPECT_EQ(result.output, std::nullopt);
  auto log = post_xxl_job<LogResult>(*client_, "log", log_body(42, 1));
  ASSERT_TRUE(log.is_success()) << log.msg;
  EXPECT_NE(log.content->log_content.find("[cronwheel] output refused: CRONWHEEL_OUTPUT_FILE: not JSON: "),
            std::string::npos)
      << log.content->log_content;
}

TEST_F(ScriptTest, AScriptGetsItsRunsLogDateTimeAndShardAsVariables) {
  start();
  auto t = script("#!/bin/bash\n"
                  "printf '{\"at\":%s,\"shard\":\"%s/%s\",\"args\":\"%s\"}' \"$CRONWHEEL_LOG_DATE_TIME\" "
                  "\"$CRONWHEEL_SHARD_INDEX\" \"$CRONWHEEL_SHARD_TOTAL\" \"$*\" > \"$CRONWHEEL_OUTPUT_FILE\"\n",
                  42);
  t.log_date_time = kStartMs - 3 * 86'400'000;  // a backfill's instant
  t.params = "x";
  t.broadcast_index = 1;
  t.broadcast_total = 2;
  ASSERT_TRUE(run(t).is_success());
  auto result = result_of(42);
  EXPECT_EQ(result.handle_code, kSuccessCode) << result.handle_msg;
  EXPECT_EQ(result.output, "{\"at\":" + std::to_string(kStartMs - 3 * 86'400'000) +
                               ",\"shard\":\"1/2\",\"args\":\"x 1 2\"}");
}

TEST_F(ScriptTest, EveryAvailableScriptGlueTypeRuns) {
  start();
  struct Case {
    std::string glue_type;
    std::string interpreter;
    std::string source;
  };
  const std::vector<Case> cases = {
      {"GLUE_SHELL", "bash", "echo shell-ran"},
      {"GLUE_PYTHON", "python3", "print('python-ran')"},
      {"GLUE_NODEJS", "node", "console.log('node-ran')"},
      {"GLUE_PHP", "php", "<?php echo \"php-ran\\n\";"},
      {"GLUE_POWERSHELL", "pwsh", "Write-Output 'powershell-ran'"},
  };
  const char* path = std::getenv("PATH");
  std::int64_t log_id = 500;
  for (const auto& c : cases) {
    ++log_id;
    auto t = script(c.source, log_id);
    t.job_id = static_cast<int>(log_id);
    t.glue_type = c.glue_type;
    ASSERT_TRUE(run(t).is_success()) << c.glue_type;
    auto result = result_of(log_id);
    if (find_executable(c.interpreter, path ? path : "")) {
      EXPECT_EQ(result.handle_code, kSuccessCode) << c.glue_type << ": " << result.handle_msg;
    } else {
      // A missing interpreter is a clear failure naming it.
      EXPECT_EQ(result.handle_code, kFailCode) << c.glue_type;
      EXPECT_NE(result.handle_msg.find(c.interpreter), std::string::npos) << result.handle_msg;
    }
  }
}

TEST_F(ScriptTest, TimeoutEndsTheScriptAndEveryProcessItStarted) {
  start();
  auto t = script(
      "#!/bin/bash\n"
      "echo $$ > \"$1.pid\"\n"
      "sleep 300 &\n"
      "echo $! > \"$1.child\"\n"
      "wait\n");
  t.params = marker("timeout").string();
  t.timeout = 1;
  ASSERT_TRUE(run(t).is_success());
  // Executing (and its deadline on the timer) once it has written its child's pid.
  ASSERT_TRUE(eventually([&] { return read_pid(marker("timeout.child")) > 0; }));
  clock_.advance(1s);
  auto result = result_of(42);
  EXPECT_EQ(result.handle_code, kTimeoutCode) << result.handle_msg;
  // Reported when its body returned, which the script runner does once the whole process group
  // is gone (the report grace of a stopped run never passes on this clock).
  EXPECT_TRUE(process_gone(read_pid(marker("timeout.pid"))));
  EXPECT_TRUE(process_gone(read_pid(marker("timeout.child"))));
}

TEST_F(ScriptTest, KillEndsTheRunningScriptAndEveryProcessItStarted) {
  start();
  auto t = script(
      "#!/bin/bash\n"
      "trap '' TERM\n"  // ignores TERM: the runner has to escalate to KILL
      "echo $$ > \"$1.pid\"\n"
      "sleep 300 &\n"
      "echo $! > \"$1.child\"\n"
      "while true; do sleep 1; done\n");
  t.params = marker("kill").string();
  ASSERT_TRUE(run(t).is_success());
  ASSERT_TRUE(eventually([&] { return fs::exists(marker("kill.child")) && read_pid(marker("kill.child")) > 0; }));
  const pid_t shell = read_pid(marker("kill.pid"));
  const pid_t child = read_pid(marker("kill.child"));

  EXPECT_TRUE(post("kill", job_body(1)).is_success());
  auto result = result_of(42);
  EXPECT_EQ(result.handle_code, kFailCode);
  EXPECT_EQ(result.handle_msg, "scheduling center kill job. [job running, killed]");
  // The runner's KILL (after its grace, on the OS's clock) ended the group before the result.
  EXPECT_TRUE(process_gone(shell));
  EXPECT_TRUE(process_gone(child));
}

TEST_F(ScriptTest, NewGlueVersionReplacesTheJobThread) {
  start();
  auto v1 = script("#!/bin/bash\necho $$ > \"$1\"\nsleep 300\n", 100);
  v1.params = marker("v1.pid").string();
  ASSERT_TRUE(run(v1).is_success());
  ASSERT_TRUE(eventually([&] { return read_pid(marker("v1.pid")) > 0; }));  // v1 is executing
  auto v2 = script("#!/bin/bash\necho v2\n", 101);
  v2.glue_updatetime = kLogDateTime + 60'000;
  ASSERT_TRUE(run(v2).is_success());
  auto old_run = result_of(100);
  EXPECT_EQ(old_run.handle_code, kFailCode);
  EXPECT_EQ(old_run.handle_msg,
            "change job source or glue type, and terminate the old job thread. [job running, killed]");
  EXPECT_TRUE(process_gone(read_pid(marker("v1.pid"))));
  EXPECT_EQ(result_of(101).handle_code, kSuccessCode);
}

// ---------------------------------------------------------------------------------------------
// The protocol's edges

TEST_F(ExecutorTest, WrongOrMissingAccessTokenIsRejectedAndTheExecutorKeepsServing) {
  auto o = options();
  o.access_token = "s3cret-token";
  admin_.stop();  // the FakeAdmin here has no token; registration failures do not matter
  start(o);

  HttpClient anonymous(executor_->address());
  HttpClientOptions wrong_options;
  wrong_options.access_token = "guess";
  HttpClient wrong(executor_->address(), wrong_options);
  for (HttpClient* client : {&anonymous, &wrong}) {
    for (auto [path, body] : std::vector<std::pair<std::string, std::string>>{
             {"beat", "\"\""},
             {"idleBeat", job_body(1)},
             {"run", Trigger{}.body()},
             {"kill", job_body(1)},
             {"log", log_body(42, 1)}}) {
      auto raw = client->post_json(path, body);
      EXPECT_EQ(raw.status, 200) << path;
      auto answer = common::protocol::parse<ReturnT<std::string>>(raw.body);
      EXPECT_EQ(answer.code, kFailCode) << path;
      EXPECT_EQ(answer.msg, "The access token is wrong.") << path;
    }
  }
  EXPECT_FALSE(signals_.has_started(42));
  EXPECT_TRUE(post("beat", "\"\"").is_success());
  EXPECT_TRUE(run(Trigger{}).is_success());
}

TEST_F(ExecutorTest, MalformedRequestsAnswerCode500AndTheExecutorKeepsServing) {
  start();
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"run", "{\"jobId\":1,"},
      {"run", ""},
      {"run", "[1,2,3]"},
      {"run", "{\"jobId\":\"one\",\"logId\":42}"},
      {"idleBeat", "not json"},
      {"kill", "{\"jobId\":1.5}"},
      {"log", "{\"logId\":true}"},
      {"noSuchEndpoint", "{}"},
  };
  for (const auto& [path, body] : bad) {
    auto raw = client_->post_json(path, body);
    EXPECT_EQ(raw.status, 200) << path << " " << body;
    auto answer = common::protocol::parse<ReturnT<std::string>>(raw.body);
    EXPECT_EQ(answer.code, kFailCode) << path << " " << body;
    EXPECT_FALSE(answer.msg.empty()) << path << " " << body;
  }
  auto wrong_type = post("run", "{\"jobId\":\"one\",\"logId\":42}");
  EXPECT_NE(wrong_type.msg.find("jobId"), std::string::npos) << wrong_type.msg;
  ASSERT_TRUE(run(Trigger{}).is_success());
  EXPECT_EQ(result_of(42).handle_code, kSuccessCode);
}

TEST_F(ExecutorTest, LogIsReadInPagesFromFromLineNumWithIsEndOnceTheRunIsOver) {
  start();
  Trigger t;
  t.handler = "chatty";
  t.params = "10";
  ASSERT_TRUE(run(t).is_success());
  result_of(42);

  auto whole = post_xxl_job<LogResult>(*client_, "log", log_body(42, 1));
  ASSERT_TRUE(whole.is_success()) << whole.msg;
  const LogResult& all = *whole.content;
  EXPECT_EQ(all.from_line_num, 1);
  EXPECT_GE(all.to_line_num, 13);  // start lines, 10 lines, end lines
  EXPECT_NE(all.log_content.find("line 10"), std::string::npos);
  EXPECT_TRUE(all.is_end);

  auto tail = post_xxl_job<LogResult>(*client_, "log", log_body(42, all.to_line_num - 1));
  ASSERT_TRUE(tail.is_success());
  EXPECT_EQ(tail.content->from_line_num, all.to_line_num - 1);
  EXPECT_EQ(tail.content->to_line_num, all.to_line_num);
  EXPECT_EQ(std::count(tail.content->log_content.begin(), tail.content->log_content.end(), '\n'), 2);
  EXPECT_NE(tail.content->log_content.find("handleCode=200"), std::string::npos);
  EXPECT_TRUE(tail.content->is_end);

  auto missing = post_xxl_job<LogResult>(*client_, "log", log_body(4242, 1));
  ASSERT_TRUE(missing.is_success());
  EXPECT_EQ(missing.content->log_content, "readLog fail, logFile not exists");
  EXPECT_TRUE(missing.content->is_end);
}

TEST_F(ExecutorTest, LogOfARunningJobIsNotEndedAndABigLogComesInBoundedPages) {
  start();
  Trigger running;
  running.handler = "block";
  running.log_id = 100;
  ASSERT_TRUE(run(running).is_success());
  ASSERT_TRUE(signals_.wait_started(100));
  auto live = post_xxl_job<LogResult>(*client_, "log", log_body(100, 1));
  ASSERT_TRUE(live.is_success()) << live.msg;
  EXPECT_FALSE(live.content->is_end);
  signals_.release();
  result_of(100);

  Trigger big;
  big.job_id = 2;
  big.handler = "big";
  big.log_id = 101;
  ASSERT_TRUE(run(big).is_success());
  result_of(101);
  int from = 1;
  int pages = 0;
  std::size_t text = 0;
  for (;;) {
    auto page = post_xxl_job<LogResult>(*client_, "log", log_body(101, from));
    ASSERT_TRUE(page.is_success()) << page.msg;
    ASSERT_LE(page.content->log_content.size(), 256u * 1024u);
    ASSERT_GE(page.content->to_line_num, from) << "every page makes progress";
    text += page.content->log_content.size();
    ++pages;
    from = page.content->to_line_num + 1;
    if (page.content->is_end) break;
    ASSERT_LT(pages, 10);
  }
  EXPECT_GE(pages, 2);
  EXPECT_GT(text, 400'000u);
}

// ---------------------------------------------------------------------------------------------
// Delivery and shutdown

TEST_F(ExecutorTest, StopReportsTheRunningAndQueuedRunsAndRemovesTheRegistration) {
  start();
  ASSERT_TRUE(admin_.wait_until([](const FakeAdmin& a) { return !a.registrations().empty(); }));
  Trigger t;
  t.handler = "block";
  t.log_id = 100;
  ASSERT_TRUE(run(t).is_success());
  ASSERT_TRUE(signals_.wait_started(100));
  for (int i = 101; i <= 103; ++i) {
    t.log_id = i;
    ASSERT_TRUE(run(t).is_success());
  }

  const auto before = std::chrono::steady_clock::now();
  executor_->stop();
  EXPECT_LT(std::chrono::steady_clock::now() - before, 15s);

  // Everything was delivered by the time stop() returned.
  EXPECT_EQ(admin_.callbacks().size(), 4u);
  EXPECT_EQ(result_of(100).handle_msg, "executor is stopping [job running, killed]");
  for (int i = 101; i <= 103; ++i) {
    EXPECT_EQ(result_of(i).handle_msg,
              "executor is stopping [job not executed, in the job queue, killed.]");
  }
  ASSERT_EQ(admin_.removals().size(), 1u);
  EXPECT_EQ(admin_.removals()[0].registry_value, executor_->address());
  // Nothing answers any more.
  EXPECT_NE(client_->post_json("beat", "\"\"").transport_error,
            common::http::TransportError::kNone);
  expect_no_duplicate_callbacks();
}

TEST_F(ExecutorTest, LeadFiresStartAtTheirInstantAndStopReportsTheHeldOnesNotStarted) {
  // The admin's clock is 200 ms ahead; the FakeClock stands still during the exchange: delay 0.
  const std::int64_t admin_at_start = kStartMs + 200;
  admin_.set_clock_header(std::to_string(admin_at_start) + "," + std::to_string(admin_at_start));
  start();
  auto lead = [&](std::int64_t log_id, std::int64_t fire_at) {
    common::protocol::TriggerParam t;
    t.job_id = static_cast<std::int32_t>(log_id);
    t.executor_handler = "demoJobHandler";
    t.log_id = log_id;
    t.log_date_time = kLogDateTime;
    t.glue_type = "BEAN";
    common::protocol::LeadRequest request{admin_at_start, {common::protocol::LeadFire{fire_at, t}}};
    return common::protocol::parse<ReturnT<common::protocol::LeadAnswer>>(
        client_->post_json("lead", common::protocol::to_json_string(request)).body);
  };
  ASSERT_TRUE(admin_.wait_until([](const FakeAdmin& a) { return !a.registrations().empty(); }));
  wait_until_idle(0);  // the first registration's exchange is measured
  auto held = lead(1, admin_at_start + 1000);
  ASSERT_TRUE(held.is_success()) << held.msg;
  EXPECT_EQ(held.content->accepted, std::vector<std::int64_t>{1});
  ASSERT_TRUE(lead(2, admin_at_start + 50'000).is_success());

  clock_.advance(1000ms);  // fireAt - 200 ms on the executor's clock
  EXPECT_EQ(result_of(1).handle_code, kSuccessCode);
  executor_->stop();
  auto not_started = result_of(2);
  EXPECT_EQ(not_started.handle_code, kFailCode);
  EXPECT_EQ(not_started.not_started, "executor stopping before the fire's instant");
  expect_no_duplicate_callbacks();
}

TEST_F(ExecutorTest, EveryAcceptedTriggerIsCalledBackExactlyOnce) {
  start();
  std::set<std::int64_t> accepted;
  std::int64_t log_id = 1000;
  const std::vector<std::string> strategies = {"SERIAL_EXECUTION", "DISCARD_LATER", "COVER_EARLY"};
  for (int round = 0; round < 20; ++round) {
    for (int job = 1; job <= 3; ++job) {
      Trigger t;
      t.job_id = job;
      t.handler = round % 4 == 3 ? "fails" : "chatty";
      t.params = "3";
      t.strategy = strategies[static_cast<std::size_t>(job - 1)];
      t.log_id = ++log_id;
      if (run(t).is_success()) accepted.insert(t.log_id);
    }
    if (round == 10) post("kill", job_body(3));
  }
  ASSERT_FALSE(accepted.empty());
  ASSERT_TRUE(admin_.wait_until([&](const FakeAdmin& a) { return a.callbacks().size() >= accepted.size(); }));
  executor_->stop();
  std::set<std::int64_t> called_back;
  for (const auto& c : admin_.callbacks()) called_back.insert(c.log_id);
  EXPECT_EQ(called_back, accepted);
  EXPECT_EQ(admin_.callbacks().size(), accepted.size());
  expect_no_duplicate_callbacks();
}

TEST_F(ExecutorTest, ResultsSurviveAnAdminOutageAndExecutorRestarts) {
  admin_.set_refusing(true);  // up but refusing: stopping it would free its port for the executor to take
  start();
  Trigger t;
  t.log_id = 100;
  ASSERT_TRUE(run(t).is_success());
  t.job_id = 2;
  t.log_id = 101;
  t.handler = "fails";
  ASSERT_TRUE(run(t).is_success());
  // Both runs are over (their job threads wait for work) before the executor goes away.
  wait_until_idle(2);
  executor_->stop();

  // Restarted while the admin is still down: nothing can be delivered, nothing is lost.
  start();
  executor_->stop();

  admin_.set_refusing(false);
  start();
  EXPECT_EQ(result_of(100).handle_code, kSuccessCode);
  EXPECT_EQ(result_of(101).handle_code, kFailCode);
  executor_->stop();
  EXPECT_EQ(admin_.callbacks().size(), 2u);
  expect_no_duplicate_callbacks();
}

TEST_F(ExecutorTest, LogSaysWhetherThisProcessStillHoldsTheRunOrItsResult) {
  clock_.advance(250ms);  // the executor starts at kStartMs + 250
  admin_.set_refusing(true);  // up but refusing: stopping it would free its port for the executor to take
  auto o = options();
  o.callback_retry_interval = 45s;
  start(std::move(o));
  auto state_of = [&](std::int64_t log_id) {
    auto answer = post_xxl_job<LogResult>(*client_, "log", log_body(log_id, 1));
    EXPECT_TRUE(answer.is_success()) << answer.msg;
    EXPECT_EQ(answer.content ? answer.content->executor_start_time : 0, kStartMs + 250);
    return answer.content ? answer.content->run_state : std::string("no answer");
  };
  Trigger t;
  t.handler = "block";
  t.log_id = 7;
  ASSERT_TRUE(run(t).is_success());
  ASSERT_TRUE(signals_.wait_started(7));
  EXPECT_EQ(state_of(7), "active");
  signals_.release();
  // Over, and its result held while no admin takes it: spooled.
  wait_until_idle(1);
  EXPECT_EQ(spooled_log_ids(log_dir_), std::multiset<std::int64_t>{7});
  EXPECT_EQ(state_of(7), "result-pending");
  EXPECT_EQ(state_of(8), "unknown");  // never seen

  admin_.set_refusing(false);
  clock_.advance(45s - 1ms);  // the first retry is 45 s after the start
  wait_until_idle(1);
  EXPECT_FALSE(admin_.wait_for_result(7, 0ms)) << "not before the retry interval";
  clock_.advance(1ms);
  EXPECT_EQ(result_of(7).handle_code, kSuccessCode);
  // Accepted by the admin: this process holds nothing of it any more.
  wait_until_idle(1);
  EXPECT_EQ(state_of(7), "unknown");
}

TEST_F(ExecutorTest, RunsAreRefusedWhileTooManyResultsWaitForAnAdmin) {
  admin_.set_refusing(true);  // up but refusing: stopping it would free its port for the executor to take
  auto o = options();
  o.max_undelivered_results = 2;
  o.callback_retry_interval = 10s;
  start(std::move(o));
  Trigger t;
  for (std::int64_t id = 1; id <= 2; ++id) {
    t.job_id = static_cast<int>(id);
    t.log_id = id;
    ASSERT_TRUE(run(t).is_success());
  }
  wait_until_idle(2);  // both runs over: both results wait for an admin
  t.job_id = 3;
  t.log_id = 3;
  auto refused = run(t);
  EXPECT_FALSE(refused.is_success());
  EXPECT_NE(refused.msg.find("2 results no admin has accepted yet (limit 2)"), std::string::npos) << refused.msg;

  // Once the admin took them (at the first retry: they are spooled), runs are accepted again.
  EXPECT_EQ(spooled_log_ids(log_dir_), (std::multiset<std::int64_t>{1, 2}));
  admin_.set_refusing(false);
  clock_.advance(10s);
  result_of(1);
  result_of(2);
  wait_until_idle(2);
  ASSERT_TRUE(run(t).is_success());
  EXPECT_EQ(result_of(3).handle_code, kSuccessCode);
}

TEST_F(ExecutorTest, InvalidOptionsAreRefusedNamingTheOption) {
  auto expect_invalid = [](ExecutorOptions o, const std::string& option) {
    try {
      Executor executor(std::move(o));
      ADD_FAILURE() << "accepted invalid " << option;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(option), std::string::npos) << e.what();
    }
  };
  auto o = options();
  o.admin_addresses.clear();
  expect_invalid(o, "admin_addresses");
  o = options();
  o.admin_addresses = {"ftp://admin/"};
  expect_invalid(o, "admin_addresses");
  o = options();
  o.app_name = "abc";
  expect_invalid(o, "app_name");
  o = options();
  o.listen_port = 70000;
  expect_invalid(o, "listen_port");
  o = options();
  o.address = "admin:9999";
  expect_invalid(o, "address");
  o = options();
  o.log_dir.clear();
  expect_invalid(o, "log_dir");
  o = options();
  o.callback_retry_interval = std::chrono::milliseconds::zero();
  expect_invalid(o, "callback_retry_interval");
  o = options();
  o.max_run_log_bytes = 100;
  expect_invalid(o, "max_run_log_bytes");
  o = options();
  o.max_queued_runs_per_job = 0;
  expect_invalid(o, "max_queued_runs_per_job");
  o = options();
  o.max_job_threads = 0;
  expect_invalid(o, "max_job_threads");
  o = options();
  o.max_clock_offset = std::chrono::milliseconds::zero();
  expect_invalid(o, "max_clock_offset");
  o = options();
  o.max_held_fires = 0;
  expect_invalid(o, "max_held_fires");
  o = options();
  o.run_as = "no-such-user-cronwheel";
  expect_invalid(o, "ExecutorOptions.run_as: no user 'no-such-user-cronwheel' on this machine");
}

TEST_F(ExecutorTest, StartFailsClearlyWhenTheRunAsUserCannotReachTheScriptDirectory) {
  if (::geteuid() != 0) GTEST_SKIP() << "running scripts as another user needs root";
  // The log directory inside a directory only root may enter.
  const fs::path locked = log_dir_;
  log_dir_ = locked / "logs";
  fs::create_directories(log_dir_);
  fs::permissions(locked, fs::perms::owner_all);
  auto o = options();
  o.run_as = "nobody";
  Executor executor(o);
  try {
    executor.start();
    ADD_FAILURE() << "started although nobody cannot read its scripts";
  } catch (const std::system_error& e) {
    EXPECT_NE(std::string(e.what()).find("user nobody cannot open the script directory " +
                                         (log_dir_ / "gluesource").string()),
              std::string::npos)
        << e.what();
  }
  log_dir_ = locked;  // removed by TearDown
}

TEST_F(ExecutorTest, StartFailsClearlyWhenThePortIsTaken) {
  start();
  auto o = options();
  o.listen_port = executor_->port();
  Executor second(o);
  EXPECT_THROW(second.start(), std::system_error);
}

// ---------------------------------------------------------------------------------------------
// Bounds and privacy

TEST_F(ExecutorTest, ARunsTimeOutOfRangeIsRefusedNamingTheFieldAndCreatesNothing) {
  start();
  for (std::int64_t when : {std::int64_t{-279'000'000'000'000}, std::int64_t{0},
                            std::int64_t{253'402'300'800'000}, kLogDateTime + 2 * 86'400'000}) {
    Trigger t;
    t.log_date_time = when;
    auto answer = run(t);
    EXPECT_EQ(answer.code, kFailCode) << when;
    EXPECT_TRUE(answer.msg.starts_with("logDateTime is " + std::to_string(when))) << answer.msg;
    EXPECT_TRUE(answer.msg.ends_with("; run refused")) << answer.msg;

    auto log = post_xxl_job<LogResult>(*client_, "log",
                                       "{\"logDateTim\":" + std::to_string(when) +
                                           ",\"logId\":42,\"fromLineNum\":1}");
    EXPECT_EQ(log.code, kFailCode) << when;
    EXPECT_TRUE(log.msg.starts_with("logDateTim is " + std::to_string(when))) << log.msg;
  }
  // Nothing but what start() makes: no day directory, no result.
  std::vector<std::string> entries;
  for (const auto& entry : fs::directory_iterator(log_dir_)) entries.push_back(entry.path().filename().string());
  std::sort(entries.begin(), entries.end());
  EXPECT_EQ(entries, (std::vector<std::string>{"callbacklog", "gluesource"}));
  // The same run with its real time is run.
  ASSERT_TRUE(run(Trigger{}).is_success());
  EXPECT_EQ(result_of(42).handle_code, kSuccessCode);
  EXPECT_EQ(admin_.callbacks().size(), 1u);
}

TEST_F(ExecutorTest, ARunsLogStopsAtItsCapAndItsResultSaysSo) {
  auto o = options();
  o.max_run_log_bytes = 64 * 1024;
  start(o);
  Trigger t;
  t.handler = "big";  // 40 lines of 10 000 bytes
  ASSERT_TRUE(run(t).is_success());
  auto result = result_of(42);
  EXPECT_EQ(result.handle_code, kSuccessCode) << "the run itself goes on";
  EXPECT_EQ(result.handle_msg, "log truncated at 65536 bytes (max-run-log-bytes)");
  const fs::path file = log_dir_ / RunLogStore::day_name(kLogDateTime) / "42.log";
  const std::string text = read_file(file);
  EXPECT_LE(text.size(), 65536u + 1024u) << "the cap, its note and the closing lines";
  EXPECT_NE(text.find("----------- log truncated at 65536 bytes (max-run-log-bytes)"), std::string::npos);
  EXPECT_NE(text.find("handleMsg = log truncated at 65536 bytes"), std::string::npos) << "closing lines go in";
  // A run under the cap says nothing of it.
  Trigger small;
  small.log_id = 43;
  ASSERT_TRUE(run(small).is_success());
  EXPECT_EQ(result_of(43).handle_msg, "");
}

TEST_F(ExecutorTest, StartMakesTheLogDirectoryAndWhatEarlierVersionsLeftOpenPrivate) {
  // As an earlier version left them: directories 0755, files 0644.
  const std::string day = RunLogStore::day_name(kLogDateTime);
  for (const auto& dir : {log_dir_, log_dir_ / day, log_dir_ / "callbacklog", log_dir_ / "gluesource"}) {
    fs::create_directories(dir);
    ::chmod(dir.c_str(), 0755);
  }
  std::ofstream(log_dir_ / day / "1.log") << "an old run\n";
  // The output file of a run the earlier process was in when it ended.
  std::ofstream(log_dir_ / "gluesource" / ".output-7-AbC123") << R"({"rows":1})";
  start();
  EXPECT_FALSE(fs::exists(log_dir_ / "gluesource" / ".output-7-AbC123"));
  auto mode = [](const fs::path& path) {
    struct stat st {};
    EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
    return st.st_mode & 07777;
  };
  EXPECT_EQ(mode(log_dir_), 0700u);
  EXPECT_EQ(mode(log_dir_ / day), 0700u);
  EXPECT_EQ(mode(log_dir_ / "callbacklog"), 0700u);
  EXPECT_EQ(mode(log_dir_ / "gluesource"), 0700u);
  EXPECT_EQ(read_file(log_dir_ / day / "1.log"), "an old run\n");

  // What it writes from now on is private too.
  ASSERT_TRUE(run(Trigger{}).is_success());
  EXPECT_EQ(result_of(42).handle_code, kSuccessCode);
  EXPECT_EQ(mode(log_dir_ / day / "42.log") & 0777, 0600u);
}

}  // namespace
}  // namespace cronwheel::executor
