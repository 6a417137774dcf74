// The standalone executor's built-in handlers, called directly with a job context: shell (real
// processes), http (against a server on 127.0.0.1), echo, sleep, fail, sharding, and the parsing
// of their parameters. No sleeps: tests wait on conditions with a generous bound.
#include "executor/src/builtin_handlers.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/http/http_server.h"
#include "common/protocol/constants.h"
#include "executor/src/run_context.h"
#include "executor/src/script_runner.h"
#include "tests/support/fake_clock.h"
#include "tests/unit/executor/job_test_support.h"

namespace cronwheel::executor {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using common::protocol::kFailCode;
using common::protocol::kSuccessCode;
using test::eventually;
using test::kBound;

// A run log in memory that tests can wait on.
class MemoryLog final : public RunLogWriter {
 public:
  void append(std::string_view text) override {
    std::lock_guard lock(mutex_);
    text_.append(text);
    if (text_.empty() || text_.back() != '\n') text_.push_back('\n');
    changed_.notify_all();
  }
  std::string text() const {
    std::lock_guard lock(mutex_);
    return text_;
  }
  bool wait_for(const std::string& fragment) const {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, kBound,
                             [&] { return text_.find(fragment) != std::string::npos; });
  }

 private:
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  std::string text_;
};

// A run as a handler sees it, outside any executor: a RunContext over a memory log, with the
// script runner's run_process for commands (as the executor provides it).
class HandlerRun {
 public:
  explicit HandlerRun(std::string params, int shard_index = 0, int shard_total = 1,
                      std::int64_t log_date_time = 0) {
    trigger_.job_id = 7;
    trigger_.log_id = 70;
    trigger_.log_date_time = log_date_time;
    trigger_.executor_params = std::move(params);
    trigger_.broadcast_index = shard_index;
    trigger_.broadcast_total = shard_total;
    context_ = std::make_unique<RunContext>(
        trigger_, log_, clock_, stop_.get_token(),
        [](const std::vector<std::string>& argv, RunLogWriter& log, std::stop_token stop,
           const std::vector<std::string>& environment) {
          return run_process(argv, log, std::move(stop), kScriptKillGrace, {}, nullptr, environment);
        });
  }

  // A handler started by start() is stopped and waited for, so a failing test never hangs on it.
  ~HandlerRun() {
    stop_.request_stop();
    if (pending_.valid()) pending_.wait();
  }

  RunResult call(const Handler& handler) {
    handler(*context_);
    return context_->result();
  }
  // Runs `handler` on a thread of its own; the result arrives through the future.
  std::shared_future<RunResult> start(Handler handler) {
    pending_ = std::async(std::launch::async,
                          [this, handler = std::move(handler)] { return call(handler); })
                   .share();
    return pending_;
  }
  void stop() { stop_.request_stop(); }
  const MemoryLog& log() const { return log_; }
  // The clock of the run's log stamps, and the one to give the sleep handler.
  testing::FakeClock& clock() { return clock_; }

 private:
  testing::FakeClock clock_;
  common::protocol::TriggerParam trigger_;
  MemoryLog log_;
  std::stop_source stop_;
  std::unique_ptr<RunContext> context_;
  std::shared_future<RunResult> pending_;  // last: waited for before the rest goes
};

// A JobContext that is not the executor's: what a handler sees when called by other code.
class ForeignContext final : public JobContext {
 public:
  explicit ForeignContext(std::string params) : params_(std::move(params)) {}
  std::int64_t job_id() const override { return 1; }
  std::int64_t log_id() const override { return 1; }
  const std::string& params() const override { return params_; }
  int shard_index() const override { return 0; }
  int shard_total() const override { return 1; }
  std::int64_t log_date_time() const override { return 946'684'800'000; }
  std::stop_token stop_token() const override { return {}; }
  void log(std::string_view) override {}
  void succeed(std::string_view message) override { result = {kSuccessCode, std::string(message)}; }
  void fail(std::string_view message) override { result = {kFailCode, std::string(message)}; }
  void set_output(std::string_view json) override { result.output = std::string(json); }
  RunResult result;

 private:
  std::string params_;
};

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

bool contains(const std::string& text, const std::string& fragment) {
  return text.find(fragment) != std::string::npos;
}

// ---------------------------------------------------------------------------------------------
// echo, fail, sharding, sleep

TEST(EchoHandlerTest, LogsParamsAndShardAndSucceedsWithTheParams) {
  HandlerRun run("hello world", 2, 3);
  auto result = run.call(echo_handler());
  EXPECT_EQ(result.code, kSuccessCode);
  EXPECT_EQ(result.msg, "hello world");
  EXPECT_TRUE(contains(run.log().text(), "params: hello world")) << run.log().text();
  EXPECT_TRUE(contains(run.log().text(), "shard 2 of 3")) << run.log().text();
}

TEST(FailHandlerTest, FailsWithTheParamsAsItsMessage) {
  HandlerRun run("disk is full");
  auto result = run.call(fail_handler());
  EXPECT_EQ(result.code, kFailCode);
  EXPECT_EQ(result.msg, "disk is full");
}

TEST(FailHandlerTest, FailsWithAnExplanationWhenGivenNoMessage) {
  HandlerRun run("  ");
  auto result = run.call(fail_handler());
  EXPECT_EQ(result.code, kFailCode);
  EXPECT_TRUE(contains(result.msg, "no message")) << result.msg;
}

TEST(ShardingHandlerTest, LogsAndReportsItsShard) {
  HandlerRun run("", 1, 4);
  auto result = run.call(sharding_handler());
  EXPECT_EQ(result.code, kSuccessCode);
  EXPECT_EQ(result.msg, "shard 1 of 4");
  EXPECT_TRUE(contains(run.log().text(), "shard 1 of 4"));
}

TEST(ShardingHandlerTest, AJobThatIsNotBroadcastIsShardZeroOfOne) {
  HandlerRun run("", 0, 0);  // an admin that leaves broadcastTotal out
  EXPECT_EQ(run.call(sharding_handler()).msg, "shard 0 of 1");
}

TEST(SleepHandlerTest, SleepsTheGivenSecondsOnItsClockAndSucceeds) {
  HandlerRun run("90.5");
  auto result = run.start(sleep_handler(run.clock()));
  ASSERT_TRUE(run.log().wait_for("sleeping 90.5 s"));
  run.clock().wait_for_sleepers(1);
  run.clock().advance(90'499ms);
  EXPECT_EQ(result.wait_for(0ms), std::future_status::timeout) << "a millisecond early";
  run.clock().advance(1ms);
  ASSERT_EQ(result.wait_for(kBound), std::future_status::ready);
  EXPECT_EQ(result.get(), (RunResult{kSuccessCode, "slept 90.5 s"}));
  EXPECT_TRUE(contains(run.log().text(), "slept 90.5 s")) << run.log().text();
}

TEST(SleepHandlerTest, ReturnsAtOnceWhenTheRunIsStoppedSayingHowLongItSlept) {
  HandlerRun run("3600");
  auto result = run.start(sleep_handler(run.clock()));
  ASSERT_TRUE(run.log().wait_for("sleeping 3600 s"));
  run.clock().wait_for_sleepers(1);
  run.clock().advance(1500ms);
  run.stop();  // no time passes: only the stop can end the sleep
  ASSERT_EQ(result.wait_for(kBound), std::future_status::ready);
  EXPECT_EQ(result.get(), (RunResult{kFailCode, "sleep stopped after 1500 ms"}));
}

TEST(SleepHandlerTest, ParamsThatAreNotSecondsFailSayingWhatIsExpected) {
  for (std::string params : {"", "abc", "-1", "5s", "nan", "inf", "1e9"}) {
    HandlerRun run(params);
    auto result = run.call(sleep_handler(run.clock()));
    EXPECT_EQ(result.code, kFailCode) << params;
    EXPECT_TRUE(contains(result.msg, "number of seconds")) << params << ": " << result.msg;
  }
  EXPECT_EQ(parse_sleep_seconds(" 2.5 "), 2500ms);
  EXPECT_EQ(parse_sleep_seconds("0"), 0ms);
}

// ---------------------------------------------------------------------------------------------
// shell

TEST(ShellHandlerTest, RunsTheCommandLineWithItsOutputInTheLog) {
  HandlerRun run("echo out; echo err >&2; echo \"shard $1/$2\"", 1, 2);
  auto result = run.call(shell_handler(true));
  EXPECT_EQ(result.code, kSuccessCode) << result.msg;
  const std::string log = run.log().text();
  EXPECT_TRUE(contains(log, "out\n")) << log;
  EXPECT_TRUE(contains(log, "err\n")) << log;
  EXPECT_TRUE(contains(log, "shard 1/2\n")) << log;
}

// A backfill's run sees the instant it runs for, as a script job does (run_variables).
TEST(ShellHandlerTest, TheCommandGetsItsRunsIdsLogicalTimeAndShard) {
  HandlerRun run("echo \"run $CRONWHEEL_JOB_ID/$CRONWHEEL_LOG_ID at $CRONWHEEL_LOG_DATE_TIME shard "
                 "$CRONWHEEL_SHARD_INDEX/$CRONWHEEL_SHARD_TOTAL output=${CRONWHEEL_OUTPUT_FILE:-none}\"",
                 1, 3, 946'771'200'000);
  auto result = run.call(shell_handler(true));
  EXPECT_EQ(result.code, kSuccessCode) << result.msg;
  EXPECT_TRUE(contains(run.log().text(), "run 7/70 at 946771200000 shard 1/3 output=none\n")) << run.log().text();
}

TEST(ShellHandlerTest, NonZeroExitCodeIsAFailureNamingIt) {
  HandlerRun run("exit 7");
  auto result = run.call(shell_handler(true));
  EXPECT_EQ(result.code, kFailCode);
  EXPECT_TRUE(contains(result.msg, "exit code 7")) << result.msg;
}

TEST(ShellHandlerTest, StopEndsTheCommandAndEveryProcessItStarted) {
  const fs::path marker = fs::temp_directory_path() /
                          ("cronwheel-shell-handler-" + std::to_string(::getpid()) + ".pids");
  fs::remove(marker);
  // The shell ignores TERM (so ending it takes the KILL), its child does not.
  HandlerRun run("trap '' TERM; sleep 300 & echo $$ $! > " + marker.string() + "; wait");
  auto result = run.start(shell_handler(true));
  ASSERT_TRUE(eventually([&] {
    std::istringstream in(read_file(marker));
    pid_t a = 0;
    pid_t b = 0;
    return static_cast<bool>(in >> a >> b);
  }));
  pid_t shell = 0;
  pid_t child = 0;
  std::istringstream(read_file(marker)) >> shell >> child;
  run.stop();
  ASSERT_EQ(result.wait_for(kBound), std::future_status::ready);
  EXPECT_EQ(result.get().code, kFailCode);
  // run_command returns only once the group is gone.
  EXPECT_TRUE(process_gone(shell));
  EXPECT_TRUE(eventually([&] { return process_gone(child); }));
  fs::remove(marker);
}

TEST(ShellHandlerTest, EmptyCommandFailsSayingWhatIsExpected) {
  HandlerRun run("   ");
  auto result = run.call(shell_handler(true));
  EXPECT_EQ(result.code, kFailCode);
  EXPECT_TRUE(contains(result.msg, "command line")) << result.msg;
}

TEST(ShellHandlerTest, DisabledShellFailsSayingScriptsAreNotAllowed) {
  HandlerRun run("echo should not run");
  auto result = run.call(shell_handler(false));
  EXPECT_EQ(result.code, kFailCode);
  EXPECT_TRUE(contains(result.msg, "--no-scripts")) << result.msg;
  EXPECT_FALSE(contains(run.log().text(), "should not run"));
}

TEST(ShellHandlerTest, OutsideAnExecutorItFailsInsteadOfRunningUnsupervised) {
  ForeignContext ctx("echo hi");
  shell_handler(true)(ctx);
  EXPECT_EQ(ctx.result.code, kFailCode);
}

TEST(RunProcessTest, UnknownCommandFailsToStartNamingIt) {
  MemoryLog log;
  auto outcome = run_process({"no-such-command-cronwheel"}, log, {});
  EXPECT_EQ(outcome.kind, ScriptOutcome::Kind::kFailedToStart);
  EXPECT_TRUE(contains(outcome.message, "no-such-command-cronwheel")) << outcome.message;
  EXPECT_EQ(run_process({}, log, {}).kind, ScriptOutcome::Kind::kFailedToStart);
}

// ---------------------------------------------------------------------------------------------
// http: parameters and the allow-list

TEST(HttpAllowListTest, MatchesExactHostsAnyPortOrTheGivenPort) {
  auto allow = HttpAllowList::parse("api.example.com, Reports.Example.com:8443,[::1]:8080,,");
  EXPECT_TRUE(allow.allows("api.example.com", 80));
  EXPECT_TRUE(allow.allows("API.example.com", 1234));
  EXPECT_TRUE(allow.allows("reports.example.com", 8443));
  EXPECT_FALSE(allow.allows("reports.example.com", 443));
  EXPECT_TRUE(allow.allows("[::1]", 8080));
  EXPECT_FALSE(allow.allows("[::1]", 80));
  EXPECT_FALSE(allow.allows("example.com", 80));
  EXPECT_FALSE(allow.allows("evil.api.example.com", 80));
  EXPECT_FALSE(allow.allows("api.example.com.evil.net", 80));
  EXPECT_TRUE(HttpAllowList::parse("").empty());
  EXPECT_TRUE(HttpAllowList::parse(" , ").empty());
}

TEST(HttpAllowListTest, MalformedEntryIsRefusedNamingIt) {
  for (std::string entry : {"http://a.example.com", "a.example.com:0", "a.example.com:99999",
                            "a.example.com:", "a/b", ":80", "[::1", "[zz]", "a b"}) {
    try {
      HttpAllowList::parse("ok.example.com," + entry);
      ADD_FAILURE() << "accepted " << entry;
    } catch (const std::invalid_argument& e) {
      EXPECT_TRUE(contains(e.what(), entry)) << e.what();
    }
  }
}

TEST(HttpParamsTest, AUrlIsAGetWithDefaults) {
  auto r = parse_http_job_params(" https://API.example.com/health?full=1#frag ");
  EXPECT_EQ(r.scheme, "https");
  EXPECT_EQ(r.host, "api.example.com");
  EXPECT_EQ(r.port, 443);
  EXPECT_EQ(r.target, "/health?full=1");
  EXPECT_EQ(r.method, "GET");
  EXPECT_EQ(r.timeout, 10s);
  auto bare = parse_http_job_params("http://10.0.0.5:8080");
  EXPECT_EQ(bare.port, 8080);
  EXPECT_EQ(bare.target, "/");
  EXPECT_EQ(parse_http_job_params("http://h?x=1").target, "/?x=1");
}

TEST(HttpParamsTest, JsonSetsMethodBodyContentTypeAndTimeout) {
  auto r = parse_http_job_params(
      R"({"url":"http://hooks.example.com/run","method":"post","body":"{\"a\":1}","timeout":2.5})");
  EXPECT_EQ(r.method, "POST");
  EXPECT_EQ(r.body, "{\"a\":1}");
  EXPECT_EQ(r.content_type, "application/json");
  EXPECT_EQ(r.timeout, 2500ms);
  auto text = parse_http_job_params(
      R"({"url":"http://h/","method":"PUT","body":"plain","contentType":"text/csv","timeout":"3"})");
  EXPECT_EQ(text.content_type, "text/csv");
  EXPECT_EQ(text.timeout, 3s);
}

TEST(HttpParamsTest, BadParamsAreRefusedSayingWhatIsWrong) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "must be a URL"},
      {"not a url", "space"},
      {"example.com/x", "not an http(s) URL"},
      {"ftp://example.com/", "not an http(s) URL"},
      {"http://user:pw@example.com/", "user information"},
      {"http://example.com:0/", "port"},
      {"http:///path", "missing host"},
      {"http://-h-/", "starts and ends with a letter or digit"},
      {"http://h\xC3\xA9/", "non-ASCII"},
      {"{\"url\":", "not valid JSON"},
      {"{\"method\":\"GET\"}", "no \"url\""},
      {"{\"url\":\"http://h/\",\"methd\":\"GET\"}", "unknown field \"methd\""},
      {"{\"url\":\"http://h/\",\"method\":\"TRACE\"}", "TRACE"},
      {"{\"url\":\"http://h/\",\"timeout\":0}", "timeout"},
      {"{\"url\":\"http://h/\",\"timeout\":\"x\"}", "timeout"},
      {"{\"url\":5}", "\"url\" must be a string"},
  };
  for (const auto& [params, expected] : cases) {
    try {
      parse_http_job_params(params);
      ADD_FAILURE() << "accepted " << params;
    } catch (const std::invalid_argument& e) {
      EXPECT_TRUE(contains(e.what(), expected)) << params << ": " << e.what();
    }
  }
}

// ---------------------------------------------------------------------------------------------
// http: requests

class HttpHandlerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    common::http::HttpServerOptions o;
    o.host = "127.0.0.1";
    o.worker_threads = 4;
    server_ = std::make_unique<common::http::HttpServer>(o);
    server_->get("/ok", [this](const cronwheel::common::http::Request&, cronwheel::common::http::Response& res) {
      ++requests_;
      res.set_header("X-Probe", "yes");
      res.set_content("all good", "text/plain");
    });
    server_->get("/broken", [this](const cronwheel::common::http::Request&, cronwheel::common::http::Response& res) {
      ++requests_;
      res.status = 503;
      res.set_content("down for maintenance", "text/plain");
    });
    server_->get("/moved", [this](const cronwheel::common::http::Request&, cronwheel::common::http::Response& res) {
      ++requests_;
      res.status = 302;
      res.set_header("Location", "http://169.254.169.254/latest/meta-data/");
    });
    server_->get("/big", [this](const cronwheel::common::http::Request&, cronwheel::common::http::Response& res) {
      ++requests_;
      res.set_content(std::string(100'000, 'x'), "text/plain");
    });
    server_->post("/hook", [this](const cronwheel::common::http::Request& req, cronwheel::common::http::Response& res) {
      ++requests_;
      std::lock_guard lock(mutex_);
      posted_body_ = req.body;
      posted_type_ = req.get_header_value("Content-Type");
      res.set_content("accepted", "text/plain");
    });
    // Answers only once released (or after kBound), to test cancellation.
    server_->get("/hang", [this](const cronwheel::common::http::Request&, cronwheel::common::http::Response& res) {
      ++requests_;
      std::unique_lock lock(mutex_);
      hanging_ = true;
      changed_.notify_all();
      changed_.wait_for(lock, kBound, [this] { return released_; });
      res.set_content("late", "text/plain");
    });
    server_->start();
  }

  void TearDown() override {
    {
      std::lock_guard lock(mutex_);
      released_ = true;
      changed_.notify_all();
    }
    server_->stop();
  }

  std::string base() const { return "http://127.0.0.1:" + std::to_string(server_->port()); }
  HttpAllowList allow_server() const {
    return HttpAllowList({"127.0.0.1:" + std::to_string(server_->port())});
  }

  std::unique_ptr<common::http::HttpServer> server_;
  std::atomic<int> requests_{0};
  std::mutex mutex_;
  std::condition_variable changed_;
  bool hanging_ = false;
  bool released_ = false;
  std::string posted_body_;
  std::string posted_type_;
};

TEST_F(HttpHandlerTest, TwoHundredIsSuccessAndTheResponseHeadIsLogged) {
  HandlerRun run(base() + "/ok");
  auto result = run.call(http_handler(allow_server()));
  EXPECT_EQ(result.code, kSuccessCode) << result.msg;
  EXPECT_EQ(result.msg, "HTTP 200");
  const std::string log = run.log().text();
  EXPECT_TRUE(contains(log, "GET " + base() + "/ok")) << log;
  EXPECT_TRUE(contains(log, "HTTP/1.1 200 OK")) << log;
  EXPECT_TRUE(contains(log, "X-Probe: yes")) << log;
  EXPECT_TRUE(contains(log, "all good")) << log;
}

TEST_F(HttpHandlerTest, ErrorStatusIsAFailureNamingIt) {
  HandlerRun run(base() + "/broken");
  auto result = run.call(http_handler(allow_server()));
  EXPECT_EQ(result.code, kFailCode);
  EXPECT_EQ(result.msg, "HTTP 503");
}

TEST_F(HttpHandlerTest, RedirectIsNotFollowed) {
  HandlerRun run(base() + "/moved");
  auto result = run.call(http_handler(allow_server()));
  EXPECT_EQ(result.code, kFailCode);
  EXPECT_TRUE(contains(result.msg, "302")) << result.msg;
  EXPECT_TRUE(contains(result.msg, "not followed")) << result.msg;
  EXPECT_EQ(requests_.load(), 1);
}

TEST_F(HttpHandlerTest, PostSendsTheBodyWithItsContentType) {
  HandlerRun run(R"({"url":")" + base() + R"(/hook","method":"POST","body":"{\"job\":\"nightly\"}"})");
  auto result = run.call(http_handler(allow_server()));
  EXPECT_EQ(result.code, kSuccessCode) << result.msg;
  std::lock_guard lock(mutex_);
  EXPECT_EQ(posted_body_, "{\"job\":\"nightly\"}");
  EXPECT_EQ(posted_type_, "application/json");
}

TEST_F(HttpHandlerTest, ABigBodyIsLoggedOnlyInPart) {
  HandlerRun run(base() + "/big");
  auto result = run.call(http_handler(allow_server()));
  EXPECT_EQ(result.code, kSuccessCode) << result.msg;
  const std::string log = run.log().text();
  EXPECT_TRUE(contains(log, "of 100000 bytes")) << log.substr(0, 300);
  EXPECT_LT(log.size(), 20'000u);
}

TEST_F(HttpHandlerTest, HostNotOnTheAllowListIsRefusedWithoutARequest) {
  HandlerRun run(base() + "/ok");
  auto result = run.call(http_handler(HttpAllowList({"127.0.0.1:1", "localhost"})));
  EXPECT_EQ(result.code, kFailCode);
  EXPECT_TRUE(contains(result.msg, "allow-list")) << result.msg;
  EXPECT_EQ(requests_.load(), 0);
}

TEST_F(HttpHandlerTest, EmptyAllowListRefusesEveryRequestSayingHowToAllowHosts) {
  HandlerRun run(base() + "/ok");
  auto result = run.call(http_handler(HttpAllowList()));
  EXPECT_EQ(result.code, kFailCode);
  EXPECT_TRUE(contains(result.msg, "--http-allow-hosts")) << result.msg;
  EXPECT_EQ(requests_.load(), 0);
}

TEST_F(HttpHandlerTest, BadParamsFailTheRunSayingWhy) {
  HandlerRun run("{\"url\":\"" + base() + "/ok\",\"method\":\"BREW\"}");
  auto result = run.call(http_handler(allow_server()));
  EXPECT_EQ(result.code, kFailCode);
  EXPECT_TRUE(contains(result.msg, "BREW")) << result.msg;
  EXPECT_EQ(requests_.load(), 0);
}

TEST(HttpParamsTest, LineBreaksAndNulInUrlMethodOrContentTypeAreRefusedNamingTheField) {
  // JSON escapes, so the parameter itself is one line: what an admin would send.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"url":"http://h/","method":"POST","body":"x","contentType":"text/plain\r\nX-Injected: 1"})",
       "\"contentType\" holds a CR, LF or NUL"},
      {R"({"url":"http://h/","method":"POST","contentType":"text/plain\nX-Injected: 1"})",
       "\"contentType\" holds a CR, LF or NUL"},
      {R"({"url":"http://h/","method":"POST","contentType":"text/plain\u0000"})",
       "\"contentType\" holds a CR, LF or NUL"},
      {R"({"url":"http://h/","method":"GET / HTTP/1.1\r\nHost: h\r\n\r\nGET"})",
       "\"method\" holds a CR, LF or NUL"},
      {R"({"url":"http://h/x\r\nX-Injected: 1"})", "\"url\" holds a CR, LF or NUL"},
      {R"({"url":"http://h/x\u0000y"})", "\"url\" holds a CR, LF or NUL"},
      {std::string("http://h/x\r\nX-Injected: 1"), "the URL holds a CR, LF or NUL"},
      {std::string("http://h/x\0y", 12), "the URL holds a CR, LF or NUL"},
  };
  for (const auto& [params, expected] : cases) {
    try {
      parse_http_job_params(params);
      ADD_FAILURE() << "accepted " << params;
    } catch (const std::invalid_argument& e) {
      EXPECT_TRUE(contains(e.what(), "http: " + expected)) << params << ": " << e.what();
    }
  }
  // A body may hold anything: it is not a header.
  EXPECT_EQ(parse_http_job_params(R"({"url":"http://h/","method":"POST","body":"a\r\nb"})").body,
            "a\r\nb");
}

TEST_F(HttpHandlerTest, ContentTypeWithCrLfFailsTheRunWithoutARequest) {
  HandlerRun run(R"({"url":")" + base() +
                 R"(/hook","method":"POST","body":"x","contentType":"text/plain\r\nX-Injected: 1"})");
  auto result = run.call(http_handler(allow_server()));
  EXPECT_EQ(result.code, kFailCode);
  EXPECT_TRUE(contains(result.msg, "\"contentType\" holds a CR, LF or NUL")) << result.msg;
  EXPECT_EQ(requests_.load(), 0);
}

TEST_F(HttpHandlerTest, StopCancelsARequestWaitingForItsAnswer) {
  HandlerRun run(R"({"url":")" + base() + R"(/hang","timeout":600})");
  auto result = run.start(http_handler(allow_server()));
  {
    std::unique_lock lock(mutex_);
    ASSERT_TRUE(changed_.wait_for(lock, kBound, [this] { return hanging_; }));
  }
  const auto stopped_at = std::chrono::steady_clock::now();
  run.stop();
  ASSERT_EQ(result.wait_for(kBound), std::future_status::ready);
  EXPECT_LT(std::chrono::steady_clock::now() - stopped_at, 5s);
  auto r = result.get();
  EXPECT_EQ(r.code, kFailCode);
  EXPECT_TRUE(contains(r.msg, "cancelled")) << r.msg;
}

TEST_F(HttpHandlerTest, UnreachableServerFailsNamingTheError) {
  // A port nothing listens on: the server's, once it is stopped.
  const std::string url = base() + "/ok";
  const auto allow = allow_server();
  TearDown();
  HandlerRun run(url);
  auto result = run.call(http_handler(allow));
  EXPECT_EQ(result.code, kFailCode);
  EXPECT_TRUE(contains(result.msg, "failed")) << result.msg;
}

}  // namespace
}  // namespace cronwheel::executor
