// JobDispatcher and JobThread alone: fake clock, in-memory run logs, results recorded in memory,
// scripts replaced by a fake runner. Real threads, no sleeps: tests wait on conditions.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <ctime>
#include <stdexcept>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "common/protocol/constants.h"
#include "common/protocol/messages.h"
#include "executor/src/job_dispatcher.h"
#include "tests/support/fake_clock.h"
#include "tests/unit/executor/job_test_support.h"

namespace cronwheel::executor {
namespace {

using namespace std::chrono_literals;
using common::protocol::HandleCallbackParam;
using common::protocol::kFailCode;
using common::protocol::kSuccessCode;
using common::protocol::kTimeoutCode;
using common::protocol::TriggerParam;

using test::eventually;
using test::kBound;
using test::Signals;

class MemoryLog final : public RunLogWriter {
 public:
  // One line per '\n'-separated part, as the file's reader sees them.
  void append(std::string_view text) override {
    std::lock_guard lock(mutex_);
    for (;;) {
      const auto end = text.find('\n');
      lines_.emplace_back(text.substr(0, end));
      if (end == std::string_view::npos || end + 1 == text.size()) break;
      text.remove_prefix(end + 1);
    }
  }
  std::vector<std::string> lines() const {
    std::lock_guard lock(mutex_);
    return lines_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> lines_;
};

// Records what the dispatcher reports, and lets tests wait for it.
class Results {
 public:
  void push(HandleCallbackParam result) {
    {
      std::lock_guard lock(mutex_);
      results_.push_back(std::move(result));
    }
    changed_.notify_all();
  }
  std::optional<HandleCallbackParam> wait_for(std::int64_t log_id) {
    std::unique_lock lock(mutex_);
    std::optional<HandleCallbackParam> found;
    changed_.wait_for(lock, kBound, [&] {
      for (const auto& r : results_) {
        if (r.log_id == log_id) found = r;
      }
      return found.has_value();
    });
    return found;
  }
  std::vector<HandleCallbackParam> all() const {
    std::lock_guard lock(mutex_);
    return results_;
  }
  int count(std::int64_t log_id) const {
    std::lock_guard lock(mutex_);
    int n = 0;
    for (const auto& r : results_) n += r.log_id == log_id ? 1 : 0;
    return n;
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<HandleCallbackParam> results_;
};

TriggerParam trigger(std::int32_t job_id, std::int64_t log_id, std::string handler,
                     std::string strategy = "SERIAL_EXECUTION", std::int32_t timeout = 0) {
  TriggerParam t;
  t.job_id = job_id;
  t.executor_handler = std::move(handler);
  t.executor_params = "p" + std::to_string(log_id);
  t.executor_block_strategy = std::move(strategy);
  t.executor_timeout = timeout;
  t.log_id = log_id;
  t.log_date_time = 1'700'000'000'000;
  t.glue_type = "BEAN";
  t.glue_updatetime = 1'700'000'000'000;
  t.broadcast_index = 0;
  t.broadcast_total = 1;
  return t;
}

class JobDispatcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    handlers_->set("echo", [](JobContext& ctx) { ctx.log("echo " + ctx.params()); });
    // Honours its stop token.
    handlers_->set("block", [this](JobContext& ctx) {
      signals_.started(ctx.log_id());
      signals_.wait_release(ctx.stop_token());
      if (ctx.stop_requested()) ctx.fail("saw the stop");
    });
    // Ignores its stop token: returns only when released.
    handlers_->set("stubborn", [this](JobContext& ctx) {
      signals_.started(ctx.log_id());
      signals_.wait_release();
    });
    options_.allow_scripts = true;
    options_.idle_timeout = 90s;
    options_.stop_report_grace = 5s;
  }

  JobDispatcher& dispatcher() {
    if (!dispatcher_) {
      DispatcherHooks hooks;
      hooks.open_log = [this](const TriggerParam& t) -> std::unique_ptr<RunLogWriter> {
        struct Forward final : RunLogWriter {
          explicit Forward(std::shared_ptr<MemoryLog> l) : log(std::move(l)) {}
          void append(std::string_view text) override { log->append(text); }
          std::shared_ptr<MemoryLog> log;
        };
        std::lock_guard lock(logs_mutex_);
        auto& log = logs_[t.log_id];
        if (!log) log = std::make_shared<MemoryLog>();
        return std::make_unique<Forward>(log);
      };
      hooks.finish_log = [this](const TriggerParam& t) {
        std::lock_guard lock(logs_mutex_);
        finished_.insert(t.log_id);
      };
      hooks.report = [this](HandleCallbackParam r) { results_.push(std::move(r)); };
      hooks.run_script = [this](const ScriptSpec& spec, RunLogWriter& log, std::stop_token) {
        scripts_.push_back(spec);
        log.append("script output");
        return script_outcome_;
      };
      dispatcher_ = std::make_unique<JobDispatcher>(options_, std::move(hooks), handlers_, clock_);
    }
    return *dispatcher_;
  }

  std::vector<std::string> log_of(std::int64_t log_id) {
    std::lock_guard lock(logs_mutex_);
    auto it = logs_.find(log_id);
    return it == logs_.end() ? std::vector<std::string>{} : it->second->lines();
  }
  bool finished(std::int64_t log_id) {
    std::lock_guard lock(logs_mutex_);
    return finished_.contains(log_id);
  }

  void TearDown() override {
    signals_.release();
    if (dispatcher_) dispatcher_->stop(kBound);
  }

  testing::FakeClock clock_;
  std::shared_ptr<HandlerRegistry> handlers_ = std::make_shared<HandlerRegistry>();
  DispatcherOptions options_;
  Results results_;
  Signals signals_;
  std::mutex logs_mutex_;
  std::map<std::int64_t, std::shared_ptr<MemoryLog>> logs_;
  std::set<std::int64_t> finished_;
  std::vector<ScriptSpec> scripts_;
  ScriptOutcome script_outcome_;
  std::unique_ptr<JobDispatcher> dispatcher_;
};

TEST_F(JobDispatcherTest, RunsTheHandlerAndWritesStartAndEndLinesBeforeReporting) {
  ASSERT_TRUE(dispatcher().run(trigger(1, 10, "echo")).is_success());
  auto result = results_.wait_for(10);
  ASSERT_TRUE(result);
  EXPECT_EQ(result->handle_code, kSuccessCode);
  EXPECT_EQ(result->log_date_time, 1'700'000'000'000);
  EXPECT_TRUE(finished(10));
  auto lines = log_of(10);
  ASSERT_GE(lines.size(), 5u);
  EXPECT_NE(lines[0].find("job execute start"), std::string::npos);
  EXPECT_NE(lines[1].find("Param: p10"), std::string::npos);
  EXPECT_NE(lines[2].find("echo p10"), std::string::npos);
  EXPECT_NE(lines.back().find("handleCode=200"), std::string::npos);
}

// "yyyy-MM-dd HH:mm:ss.SSS " in local time, as a run log line stamped at `ms` begins.
std::string local_stamp(std::int64_t ms) {
  const auto seconds = static_cast<std::time_t>(ms / 1000);
  std::tm local{};
  ::localtime_r(&seconds, &local);
  char text[96];
  std::snprintf(text, sizeof text, "%04d-%02d-%02d %02d:%02d:%02d.%03d ", local.tm_year + 1900,
                local.tm_mon + 1, local.tm_mday, local.tm_hour, local.tm_min, local.tm_sec,
                static_cast<int>(ms % 1000));
  return text;
}

TEST_F(JobDispatcherTest, LogLinesAreStampedWithTheClocksTime) {
  handlers_->set("logs", [](JobContext& ctx) { ctx.log("from the handler"); });
  handlers_->set("throws", [](JobContext&) { throw std::runtime_error("out of paper"); });
  clock_.advance(1234ms);
  ASSERT_TRUE(dispatcher().run(trigger(1, 10, "logs")).is_success());
  ASSERT_TRUE(dispatcher().run(trigger(2, 11, "throws")).is_success());
  ASSERT_TRUE(results_.wait_for(10));
  ASSERT_TRUE(results_.wait_for(11));
  const std::string stamp = local_stamp(clock_.now_ms());
  ASSERT_EQ(clock_.now_ms(), 1'700'000'001'234);
  for (std::int64_t log_id : {10, 11}) {
    auto lines = log_of(log_id);
    ASSERT_GE(lines.size(), 4u);
    for (const auto& line : lines) EXPECT_TRUE(line.starts_with(stamp)) << line;
  }
  EXPECT_EQ(log_of(10)[2], stamp + "from the handler");
  EXPECT_EQ(log_of(11)[2], stamp + "----------- handler exception: out of paper");
}

TEST_F(JobDispatcherTest, IdleJobThreadEndsAfterTheIdleTimeout) {
  ASSERT_TRUE(dispatcher().run(trigger(1, 10, "echo")).is_success());
  ASSERT_TRUE(results_.wait_for(10));
  EXPECT_EQ(dispatcher().thread_count(), 1u);
  clock_.wait_for_sleepers(2);  // the deadline timer, and the job thread waiting for work
  clock_.advance(options_.idle_timeout - 1s);
  EXPECT_EQ(dispatcher().thread_count(), 1u);
  clock_.advance(1s);
  EXPECT_TRUE(eventually([&] { return dispatcher().thread_count() == 0; }));
  // The next trigger starts a new thread.
  ASSERT_TRUE(dispatcher().run(trigger(1, 11, "echo")).is_success());
  EXPECT_TRUE(results_.wait_for(11));
}

TEST_F(JobDispatcherTest, TimeoutOfAHandlerHonouringItsTokenIsReportedAs502) {
  ASSERT_TRUE(dispatcher().run(trigger(1, 10, "block", "SERIAL_EXECUTION", 2)).is_success());
  ASSERT_TRUE(signals_.wait_started(10));
  clock_.advance(2s);
  auto result = results_.wait_for(10);
  ASSERT_TRUE(result);
  EXPECT_EQ(result->handle_code, kTimeoutCode);
  EXPECT_NE(result->handle_msg.find("job execute timeout"), std::string::npos);
  EXPECT_EQ(results_.count(10), 1);
}

TEST_F(JobDispatcherTest, HandlerIgnoringItsTimeoutIsReportedAfterTheGraceAndTheNextRunWaits) {
  ASSERT_TRUE(dispatcher().run(trigger(1, 10, "stubborn", "SERIAL_EXECUTION", 1)).is_success());
  ASSERT_TRUE(signals_.wait_started(10));
  ASSERT_TRUE(dispatcher().run(trigger(1, 11, "stubborn")).is_success());
  clock_.advance(1s);  // timeout: stop requested, ignored
  // The deadline timer (the only thread sleeping on the clock) has handled the timeout and waits
  // for the report deadline.
  clock_.wait_for_sleepers(1);
  EXPECT_EQ(results_.count(10), 0);
  clock_.advance(options_.stop_report_grace);
  auto result = results_.wait_for(10);
  ASSERT_TRUE(result);
  EXPECT_EQ(result->handle_code, kTimeoutCode);
  // The stubborn handler still holds the job's thread: the queued run has not started.
  EXPECT_EQ(results_.count(11), 0);
  EXPECT_FALSE(dispatcher().idle_beat(1).is_success());

  signals_.release();
  ASSERT_TRUE(results_.wait_for(11));
  EXPECT_EQ(results_.count(10), 1) << "a run is reported once, however it ends";
}

TEST_F(JobDispatcherTest, ReportingARunCancelsItsTimeout) {
  ASSERT_TRUE(dispatcher().run(trigger(1, 10, "block", "SERIAL_EXECUTION", 2)).is_success());
  ASSERT_TRUE(signals_.wait_started(10));
  EXPECT_EQ(dispatcher().pending_deadlines(), 1u);
  signals_.release();
  auto result = results_.wait_for(10);
  ASSERT_TRUE(result);
  EXPECT_EQ(result->handle_code, kSuccessCode);
  EXPECT_EQ(dispatcher().pending_deadlines(), 0u);
}

TEST_F(JobDispatcherTest, AStoppedRunThatReturnsCancelsItsReportDeadline) {
  ASSERT_TRUE(dispatcher().run(trigger(1, 10, "block")).is_success());
  ASSERT_TRUE(signals_.wait_started(10));
  EXPECT_EQ(dispatcher().pending_deadlines(), 0u);
  // Another handler replaces the work: run 10 is stopped (a report deadline is set), honours
  // its token and returns; run 11 follows on the same thread.
  ASSERT_TRUE(dispatcher().run(trigger(1, 11, "echo")).is_success());
  ASSERT_TRUE(results_.wait_for(11));
  auto stopped = results_.wait_for(10);
  ASSERT_TRUE(stopped);
  EXPECT_NE(stopped->handle_msg.find("terminate the old job thread"), std::string::npos)
      << stopped->handle_msg;
  EXPECT_EQ(dispatcher().pending_deadlines(), 0u);
  EXPECT_EQ(dispatcher().thread_count(), 1u);
}

TEST_F(JobDispatcherTest, SerialExecutionRunsQueuedTriggersInOrder) {
  ASSERT_TRUE(dispatcher().run(trigger(1, 10, "block")).is_success());
  ASSERT_TRUE(signals_.wait_started(10));
  for (int id = 11; id <= 14; ++id) {
    ASSERT_TRUE(dispatcher().run(trigger(1, id, "block")).is_success());
  }
  EXPECT_FALSE(signals_.has_started(11));
  EXPECT_TRUE(results_.all().empty());
  signals_.release();
  ASSERT_TRUE(results_.wait_for(14));
  auto all = results_.all();
  ASSERT_EQ(all.size(), 5u);
  for (std::size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(all[i].log_id, static_cast<std::int64_t>(10 + i));
    EXPECT_EQ(all[i].handle_code, kSuccessCode);
  }
}

TEST_F(JobDispatcherTest, RepeatedLogIdIsNotRunAgainWhileQueuedOrRunning) {
  ASSERT_TRUE(dispatcher().run(trigger(1, 10, "block")).is_success());
  ASSERT_TRUE(signals_.wait_started(10));
  ASSERT_TRUE(dispatcher().run(trigger(1, 11, "block")).is_success());
  auto running = dispatcher().run(trigger(1, 10, "block"));
  EXPECT_TRUE(running.is_success());
  EXPECT_EQ(running.msg, "run 10 was received already: not run again");
  auto queued = dispatcher().run(trigger(1, 11, "block", "COVER_EARLY"));
  EXPECT_TRUE(queued.is_success());
  EXPECT_EQ(queued.msg, "run 11 was received already: not run again");
  // Answered before anything else: COVER_EARLY did not stop the running run.
  EXPECT_EQ(results_.count(10), 0);
  signals_.release();
  ASSERT_TRUE(results_.wait_for(11));
  EXPECT_EQ(results_.all().size(), 2u);
}

TEST_F(JobDispatcherTest, ReRegisteringTheHandlerReplacesTheJobThreadWork) {
  ASSERT_TRUE(dispatcher().run(trigger(1, 10, "block")).is_success());
  ASSERT_TRUE(signals_.wait_started(10));
  ASSERT_TRUE(dispatcher().run(trigger(1, 11, "block")).is_success());
  handlers_->set("block", [](JobContext& ctx) { ctx.succeed("new version"); });
  ASSERT_TRUE(dispatcher().run(trigger(1, 12, "block")).is_success());

  auto running = results_.wait_for(10);
  ASSERT_TRUE(running);
  EXPECT_EQ(running->handle_msg,
            "change jobhandler or glue type, and terminate the old job thread. [job running, "
            "killed]");
  auto queued = results_.wait_for(11);
  ASSERT_TRUE(queued);
  EXPECT_EQ(queued->handle_msg,
            "change jobhandler or glue type, and terminate the old job thread. [job not executed, "
            "in the job queue, killed.]");
  auto fresh = results_.wait_for(12);
  ASSERT_TRUE(fresh);
  EXPECT_EQ(fresh->handle_code, kSuccessCode);
  EXPECT_EQ(fresh->handle_msg, "new version");
}

TEST_F(JobDispatcherTest, KillWithNothingRunningAnswersAlreadyKilled) {
  auto answer = dispatcher().kill(7);
  EXPECT_TRUE(answer.is_success());
  EXPECT_EQ(answer.msg, "job thread already killed.");
}

TEST_F(JobDispatcherTest, KillEndsTheJobThreadOnceItsRunReturned) {
  ASSERT_TRUE(dispatcher().run(trigger(1, 10, "block")).is_success());
  ASSERT_TRUE(signals_.wait_started(10));
  ASSERT_TRUE(dispatcher().run(trigger(1, 11, "block")).is_success());
  EXPECT_TRUE(dispatcher().kill(1).is_success());
  auto running = results_.wait_for(10);
  ASSERT_TRUE(running);
  EXPECT_EQ(running->handle_code, kFailCode);
  EXPECT_EQ(running->handle_msg, "scheduling center kill job. [job running, killed]");
  auto queued = results_.wait_for(11);
  ASSERT_TRUE(queued);
  EXPECT_EQ(queued->handle_msg,
            "scheduling center kill job. [job not executed, in the job queue, killed.]");
  EXPECT_TRUE(eventually([&] { return dispatcher().thread_count() == 0; }));
  EXPECT_EQ(dispatcher().kill(1).msg, "job thread already killed.");
}

TEST_F(JobDispatcherTest, NonStandardExceptionIsAnUnknownExceptionFailure) {
  handlers_->set("throws-int", [](JobContext&) { throw 42; });
  handlers_->set("throws", [](JobContext&) { throw std::runtime_error("database is down"); });
  ASSERT_TRUE(dispatcher().run(trigger(1, 10, "throws-int")).is_success());
  ASSERT_TRUE(dispatcher().run(trigger(2, 11, "throws")).is_success());
  auto unknown = results_.wait_for(10);
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->handle_code, kFailCode);
  EXPECT_EQ(unknown->handle_msg, "unknown exception");
  auto known = results_.wait_for(11);
  ASSERT_TRUE(known);
  EXPECT_EQ(known->handle_msg, "database is down");
}

TEST_F(JobDispatcherTest, ScriptGlueRunsThroughTheScriptRunnerAndItsExitCodeDecides) {
  script_outcome_ = {ScriptOutcome::Kind::kExited, 3, "exit code 3"};
  auto t = trigger(5, 20, "");
  t.glue_type = "GLUE_SHELL";
  t.glue_source = "echo hi; exit 3";
  t.glue_updatetime = 1234;
  t.log_date_time = 1'699'999'200'000;  // a backfill's instant, before the run
  t.broadcast_index = 1;
  t.broadcast_total = 4;
  ASSERT_TRUE(dispatcher().run(t).is_success());
  auto result = results_.wait_for(20);
  ASSERT_TRUE(result);
  EXPECT_EQ(result->handle_code, kFailCode);
  EXPECT_EQ(result->handle_msg, "exit code 3");
  ASSERT_EQ(scripts_.size(), 1u);
  EXPECT_EQ(scripts_[0].source, "echo hi; exit 3");
  EXPECT_EQ(scripts_[0].glue_updatetime, 1234);
  EXPECT_EQ(scripts_[0].params, "p20");
  EXPECT_EQ(scripts_[0].job_id, 5);
  EXPECT_EQ(scripts_[0].log_id, 20);
  EXPECT_EQ(scripts_[0].log_date_time, 1'699'999'200'000);
  EXPECT_EQ(scripts_[0].shard_index, 1);
  EXPECT_EQ(scripts_[0].shard_total, 4);
}

TEST_F(JobDispatcherTest, AScriptWhoseOutputWasRefusedFailsWithTheReasonWhateverItsExitCode) {
  auto t = trigger(5, 20, "");
  t.glue_type = "GLUE_SHELL";
  t.glue_source = "echo 'rows: 42' > \"$CRONWHEEL_OUTPUT_FILE\"";
  script_outcome_ = {ScriptOutcome::Kind::kExited, 0,
                     "exit code 0; output refused: CRONWHEEL_OUTPUT_FILE: not JSON: at 1:1", std::nullopt, true};
  ASSERT_TRUE(dispatcher().run(t).is_success());
  auto refused = results_.wait_for(20);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->handle_code, kFailCode);
  EXPECT_EQ(refused->handle_msg, "exit code 0; output refused: CRONWHEEL_OUTPUT_FILE: not JSON: at 1:1");
  EXPECT_EQ(refused->output, std::nullopt);

  script_outcome_ = {ScriptOutcome::Kind::kSignaled, 9,
                     "killed by SIGKILL; output refused: CRONWHEEL_OUTPUT_FILE holds more than 65536 bytes",
                     std::nullopt, true};
  t.log_id = 21;
  ASSERT_TRUE(dispatcher().run(t).is_success());
  auto signaled = results_.wait_for(21);
  ASSERT_TRUE(signaled);
  EXPECT_EQ(signaled->handle_code, kFailCode);
  EXPECT_EQ(signaled->handle_msg,
            "killed by SIGKILL; output refused: CRONWHEEL_OUTPUT_FILE holds more than 65536 bytes");
}

TEST_F(JobDispatcherTest, AScriptsOutputTravelsWithItsResultWhetherItSucceededOrFailed) {
  auto t = trigger(5, 20, "");
  t.glue_type = "GLUE_SHELL";
  t.glue_source = "echo '{\"rows\":42}' > \"$CRONWHEEL_OUTPUT_FILE\"";
  script_outcome_ = {ScriptOutcome::Kind::kExited, 0, "exit code 0", R"({"rows":42})"};
  ASSERT_TRUE(dispatcher().run(t).is_success());
  auto ok = results_.wait_for(20);
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->handle_code, kSuccessCode);
  EXPECT_EQ(ok->output, R"({"rows":42})");

  script_outcome_ = {ScriptOutcome::Kind::kExited, 3, "exit code 3", "[1]"};
  t.log_id = 21;
  ASSERT_TRUE(dispatcher().run(t).is_success());
  auto failed = results_.wait_for(21);
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->handle_code, kFailCode);
  EXPECT_EQ(failed->handle_msg, "exit code 3");
  EXPECT_EQ(failed->output, "[1]");

  script_outcome_ = {ScriptOutcome::Kind::kExited, 0, "exit code 0"};
  t.log_id = 22;
  ASSERT_TRUE(dispatcher().run(t).is_success());
  auto none = results_.wait_for(22);
  ASSERT_TRUE(none);
  EXPECT_EQ(none->output, std::nullopt);
}

TEST_F(JobDispatcherTest, RunAllAnswersEachTriggerAsRunWouldInOrder) {
  ASSERT_TRUE(dispatcher().run(trigger(5, 20, "block")).is_success());
  ASSERT_TRUE(signals_.wait_started(20));

  const auto answers = dispatcher().run_all({
      trigger(1, 10, "block"),
      trigger(1, 11, "block"),
      trigger(2, 30, "nope"),
      trigger(3, 12, "echo"),
      trigger(1, 10, "block"),
      trigger(5, 21, "block", "DISCARD_LATER"),
  });
  ASSERT_EQ(answers.size(), 6u);
  EXPECT_TRUE(answers[0].is_success());
  EXPECT_TRUE(answers[1].is_success());
  EXPECT_EQ(answers[2].msg, "job handler [nope] not found.");
  EXPECT_FALSE(answers[2].is_success());
  EXPECT_TRUE(answers[3].is_success());
  EXPECT_TRUE(answers[4].is_success());
  EXPECT_EQ(answers[4].msg, "run 10 was received already: not run again");
  EXPECT_FALSE(answers[5].is_success());
  EXPECT_EQ(answers[5].msg, "block strategy effect：Discard Later");

  ASSERT_TRUE(results_.wait_for(12));
  signals_.release();
  ASSERT_TRUE(results_.wait_for(11));
  ASSERT_TRUE(results_.wait_for(20));
  EXPECT_EQ(results_.count(10), 1);
  EXPECT_EQ(results_.count(30), 0) << "a refused trigger has no result to call back";
  EXPECT_EQ(results_.count(21), 0);
  std::vector<std::int64_t> job1;
  for (const auto& r : results_.all()) {
    if (r.log_id == 10 || r.log_id == 11) job1.push_back(r.log_id);
  }
  EXPECT_EQ(job1, (std::vector<std::int64_t>{10, 11})) << "one job's runs execute in the order given";
}

TEST_F(JobDispatcherTest, RefusesWhatItCannotRun) {
  EXPECT_EQ(dispatcher().run(trigger(1, 10, "nope")).msg, "job handler [nope] not found.");
  auto groovy = trigger(1, 11, "");
  groovy.glue_type = "GLUE_GROOVY";
  EXPECT_EQ(dispatcher().run(groovy).msg, "GLUE_GROOVY is not supported by this executor");
  auto odd = trigger(1, 12, "");
  odd.glue_type = "GLUE_COBOL";
  EXPECT_EQ(dispatcher().run(odd).msg, "glueType[GLUE_COBOL] is not valid.");
  EXPECT_EQ(dispatcher().thread_count(), 0u);
  EXPECT_TRUE(results_.all().empty()) << "a refused trigger has no result to call back";
}

TEST_F(JobDispatcherTest, CheckSaysWhatRunWouldRefuseAndChangesNothing) {
  options_.allow_scripts = false;
  auto groovy = trigger(1, 11, "");
  groovy.glue_type = "GLUE_GROOVY";
  auto odd = trigger(1, 12, "");
  odd.glue_type = "GLUE_COBOL";
  auto shell = trigger(1, 13, "");
  shell.glue_type = "GLUE_SHELL";
  for (const auto& t : {trigger(1, 10, "nope"), groovy, odd, shell}) {
    auto refusal = dispatcher().check(t);
    ASSERT_TRUE(refusal) << t.glue_type;
    EXPECT_EQ(*refusal, dispatcher().run(t).msg);
  }
  EXPECT_EQ(dispatcher().check(trigger(1, 14, "echo")), std::nullopt);
  EXPECT_EQ(dispatcher().thread_count(), 0u) << "check starts nothing";
  EXPECT_FALSE(dispatcher().is_active(14));
}

TEST_F(JobDispatcherTest, StopAbandonsAHandlerThatDoesNotReturnAndReportsEveryRunOnce) {
  // The handler's captures live as long as the abandoned thread's run: the sentinel says when
  // the thread let go of it.
  struct Sentinel {
    explicit Sentinel(Signals& s) : signals(s) {}
    ~Sentinel() { signals.started(-1); }
    Signals& signals;
  };
  Signals gone;
  auto sentinel = std::make_shared<Sentinel>(gone);
  handlers_->set("stubborn-held", [this, sentinel](JobContext& ctx) {
    signals_.started(ctx.log_id());
    signals_.wait_release();
  });
  sentinel.reset();
  ASSERT_TRUE(dispatcher().run(trigger(1, 10, "stubborn-held")).is_success());
  ASSERT_TRUE(signals_.wait_started(10));
  ASSERT_TRUE(dispatcher().run(trigger(1, 11, "stubborn-held")).is_success());
  handlers_->set("stubborn-held", [](JobContext&) {});  // the registry lets go of its copy

  // stop() waits 100 ms on the clock for the handler, which never returns.
  std::thread stopping([&] { dispatcher().stop(100ms); });
  clock_.wait_for_sleepers(2);  // the deadline timer, and stop() waiting for the job thread
  EXPECT_EQ(results_.count(10), 0) << "not reported before the bound";
  clock_.advance(100ms);
  stopping.join();

  auto running = results_.wait_for(10);
  ASSERT_TRUE(running);
  EXPECT_EQ(running->handle_msg, "executor is stopping [job running, killed]");
  auto queued = results_.wait_for(11);
  ASSERT_TRUE(queued);
  EXPECT_EQ(queued->handle_msg, "executor is stopping [job not executed, in the job queue, killed.]");
  EXPECT_EQ(dispatcher().run(trigger(1, 12, "stubborn-held")).msg, "executor is stopping");

  // Let the abandoned thread finish, and wait until it released everything it held.
  signals_.release();
  ASSERT_TRUE(gone.wait_started(-1));
  EXPECT_EQ(results_.all().size(), 2u);
}

// ---------------------------------------------------------------------------------------------
// Bounds: runs queued per job, job threads alive

TEST_F(JobDispatcherTest, ARunBeyondTheJobsQueueLimitIsRefusedAndLeavesNothingBehind) {
  options_.max_queued_runs_per_job = 3;
  ASSERT_TRUE(dispatcher().run(trigger(7, 10, "block")).is_success());
  ASSERT_TRUE(signals_.wait_started(10));
  for (std::int64_t log_id = 11; log_id <= 13; ++log_id) {
    ASSERT_TRUE(dispatcher().run(trigger(7, log_id, "block")).is_success()) << log_id;
  }
  auto refused = dispatcher().run(trigger(7, 14, "block"));
  EXPECT_FALSE(refused.is_success());
  EXPECT_EQ(refused.msg, "job 7 has 3 runs queued already (max-queued-runs-per-job); run refused");
  EXPECT_FALSE(dispatcher().is_active(14));
  // Another job has a queue of its own.
  ASSERT_TRUE(dispatcher().run(trigger(8, 20, "echo")).is_success());
  ASSERT_TRUE(results_.wait_for(20));

  signals_.release();
  for (std::int64_t log_id = 10; log_id <= 13; ++log_id) ASSERT_TRUE(results_.wait_for(log_id)) << log_id;
  EXPECT_EQ(results_.count(14), 0) << "a refused run gets no result: its refusal is the answer";
  EXPECT_TRUE(log_of(14).empty());
  EXPECT_FALSE(finished(14));
  // Nothing of it remains: the same run sent again once there is room is run.
  ASSERT_TRUE(dispatcher().run(trigger(7, 14, "echo")).is_success());
  auto result = results_.wait_for(14);
  ASSERT_TRUE(result);
  EXPECT_EQ(result->handle_code, kSuccessCode);
}

TEST_F(JobDispatcherTest, TheQueueLimitDoesNotRefuseWhatReplacesTheQueue) {
  options_.max_queued_runs_per_job = 1;
  ASSERT_TRUE(dispatcher().run(trigger(7, 10, "block")).is_success());
  ASSERT_TRUE(signals_.wait_started(10));
  ASSERT_TRUE(dispatcher().run(trigger(7, 11, "block")).is_success());
  // COVER_EARLY withdraws the queued run before queueing its own.
  ASSERT_TRUE(dispatcher().run(trigger(7, 12, "block", "COVER_EARLY")).is_success());
  auto covered = results_.wait_for(11);
  ASSERT_TRUE(covered);
  EXPECT_NE(covered->handle_msg.find("Cover Early"), std::string::npos) << covered->handle_msg;
  signals_.release();
  ASSERT_TRUE(results_.wait_for(12));
}

TEST_F(JobDispatcherTest, AtTheThreadLimitAnIdleJobThreadMakesRoomAndBusyOnesRefuseANewJob) {
  options_.max_job_threads = 2;
  ASSERT_TRUE(dispatcher().run(trigger(1, 10, "echo")).is_success());
  ASSERT_TRUE(results_.wait_for(10));
  // Job 1's thread is idle once it waits for work (it reports a run before it lets go of it).
  clock_.wait_for_sleepers(2);  // the deadline timer, and that thread
  ASSERT_TRUE(dispatcher().run(trigger(2, 20, "block")).is_success());
  ASSERT_TRUE(signals_.wait_started(20));
  EXPECT_EQ(dispatcher().thread_count(), 2u);

  // Job 3 takes the idle thread's place.
  ASSERT_TRUE(dispatcher().run(trigger(3, 30, "block")).is_success());
  ASSERT_TRUE(signals_.wait_started(30));
  EXPECT_EQ(dispatcher().thread_count(), 2u);

  // Both threads are busy: job 4 is refused, and leaves nothing behind.
  auto refused = dispatcher().run(trigger(4, 40, "echo"));
  EXPECT_FALSE(refused.is_success());
  EXPECT_EQ(refused.msg,
            "2 jobs have runs executing or queued on this executor already (max-job-threads); run of job 4 refused");
  EXPECT_EQ(dispatcher().thread_count(), 2u);
  EXPECT_FALSE(dispatcher().is_active(40));
  // The busy jobs still take runs of their own.
  ASSERT_TRUE(dispatcher().run(trigger(2, 21, "echo")).is_success());

  signals_.release();
  for (std::int64_t log_id : {20, 21, 30}) ASSERT_TRUE(results_.wait_for(log_id)) << log_id;
  EXPECT_EQ(results_.count(40), 0);
  EXPECT_TRUE(log_of(40).empty());
  // Now idle, the threads make room for job 4.
  ASSERT_TRUE(dispatcher().run(trigger(4, 40, "echo")).is_success());
  ASSERT_TRUE(results_.wait_for(40));
  EXPECT_LE(dispatcher().thread_count(), 2u);
}

}  // namespace
}  // namespace cronwheel::executor
