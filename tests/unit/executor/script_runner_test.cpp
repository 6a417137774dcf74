#include "executor/src/script_runner.h"

#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cronwheel/executor.h"
#include "executor/src/script_file.h"
#include "tests/support/temp_dir.h"

namespace cronwheel::executor {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using common::protocol::GlueType;
using Kind = ScriptOutcome::Kind;
using SteadyClock = std::chrono::steady_clock;

// Generous bound for anything the tests wait for: a loaded machine is slow, never this slow.
constexpr auto kBound = 30s;

using testing::TempDir;

// A run log in memory that tests can wait on. Keeps the first kKeep bytes (a script flooding its
// output would fill the memory otherwise) and counts the rest.
class MemoryLog final : public RunLogWriter {
 public:
  static constexpr std::size_t kKeep = 1 << 20;

  void append(std::string_view text) override {
    std::lock_guard lock(mutex_);
    total_ += text.size();
    if (text_.size() < kKeep) {
      text_.append(text.substr(0, kKeep - text_.size()));
      if (text_.empty() || text_.back() != '\n') text_.push_back('\n');
    }
    changed_.notify_all();
  }

  std::string text() const {
    std::lock_guard lock(mutex_);
    return text_;
  }

  std::vector<std::string> lines() const {
    std::vector<std::string> result;
    std::istringstream in(text());
    for (std::string line; std::getline(in, line);) result.push_back(line);
    return result;
  }

  // The first line starting with `prefix`, once it is there (empty after kBound).
  std::string wait_for_line(const std::string& prefix) const {
    std::unique_lock lock(mutex_);
    std::string found;
    changed_.wait_for(lock, kBound, [&] {
      std::istringstream in(text_);
      for (std::string line; std::getline(in, line);) {
        if (line.rfind(prefix, 0) == 0) {
          found = line;
          return true;
        }
      }
      return false;
    });
    return found;
  }

  std::size_t total_bytes() const {
    std::lock_guard lock(mutex_);
    return total_;
  }

 private:
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  std::string text_;
  std::size_t total_ = 0;
};

// "child 1234" → 1234.
pid_t pid_in(const std::string& line) {
  auto space = line.rfind(' ');
  return space == std::string::npos ? -1 : static_cast<pid_t>(std::stol(line.substr(space + 1)));
}

// True while `pid` is a live process (a zombie waiting for its parent is dead).
bool alive(pid_t pid) {
  if (pid <= 0) return false;
  if (::kill(pid, 0) != 0) return errno == EPERM;
  std::ifstream stat_file("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(stat_file, stat)) return false;
  auto close = stat.rfind(')');
  char state = close != std::string::npos && close + 2 < stat.size() ? stat[close + 2] : '?';
  return state != 'Z' && state != 'X';
}

// A script run on another thread, stopped and waited for when the test ends however it ends.
class BackgroundRun {
 public:
  BackgroundRun(ScriptSpec spec, RunLogWriter& log, std::chrono::milliseconds grace) {
    result_ = std::async(std::launch::async, [spec = std::move(spec), &log,
                                              token = stop_.get_token(), grace] {
      return run_script(spec, log, token, grace);
    });
  }
  ~BackgroundRun() {
    stop_.request_stop();
    if (result_.valid()) result_.wait();
  }

  void stop() {
    stopped_at_ = SteadyClock::now();
    stop_.request_stop();
  }
  // The outcome, or kFailedToStart with "still running" when it did not end within kBound.
  ScriptOutcome wait() {
    if (result_.wait_for(kBound) != std::future_status::ready) {
      return {Kind::kFailedToStart, 0, "still running after the test's bound"};
    }
    returned_at_ = SteadyClock::now();
    return result_.get();
  }
  SteadyClock::duration stop_to_return() const { return returned_at_ - stopped_at_; }

 private:
  std::stop_source stop_;
  std::future<ScriptOutcome> result_;
  SteadyClock::time_point stopped_at_{};
  SteadyClock::time_point returned_at_{};
};

class ScriptRunnerTest : public ::testing::Test {
 protected:
  ScriptSpec spec(std::string source, GlueType type = GlueType::kGlueShell) {
    ScriptSpec s;
    s.glue_type = type;
    s.source = std::move(source);
    s.job_id = 77;
    s.glue_updatetime = 1700000000000;
    s.log_id = 4242;
    s.log_date_time = 1'700'000'000'000;
    s.params = "p";
    s.shard_index = 2;
    s.shard_total = 5;
    s.script_dir = dir_.path() / "gluesource";
    return s;
  }

  ScriptOutcome run(const ScriptSpec& s, std::chrono::milliseconds grace = 3s) {
    return run_script(s, log_, std::stop_token(), grace);
  }

  TempDir dir_;
  MemoryLog log_;
};

TEST(Interpreter, EachScriptGlueTypeHasOneAndTheOthersNone) {
  auto shell = interpreter_for(GlueType::kGlueShell);
  ASSERT_TRUE(shell);
  EXPECT_EQ(shell->command, "bash");
  EXPECT_EQ(shell->extension, ".sh");
  EXPECT_EQ(interpreter_for(GlueType::kGluePython)->command, "python3");
  EXPECT_EQ(interpreter_for(GlueType::kGluePython)->extension, ".py");
  EXPECT_EQ(interpreter_for(GlueType::kGlueNodejs)->command, "node");
  EXPECT_EQ(interpreter_for(GlueType::kGlueNodejs)->extension, ".js");
  EXPECT_EQ(interpreter_for(GlueType::kGluePhp)->command, "php");
  EXPECT_EQ(interpreter_for(GlueType::kGluePhp)->extension, ".php");
  EXPECT_EQ(interpreter_for(GlueType::kGluePowershell)->command, "pwsh");
  EXPECT_EQ(interpreter_for(GlueType::kGluePowershell)->extension, ".ps1");
  EXPECT_FALSE(interpreter_for(GlueType::kBean));
  EXPECT_FALSE(interpreter_for(GlueType::kGlueGroovy));
}

TEST(FindExecutable, TakesTheFirstExecutableFileInSearchOrder) {
  TempDir dir;
  for (const char* sub : {"a", "b", "c"}) fs::create_directories(dir.path() / sub);
  auto make = [&](const fs::path& path, fs::perms perms) {
    std::ofstream(path) << "#!/bin/sh\n";
    fs::permissions(path, perms);
  };
  make(dir.path() / "a" / "tool", fs::perms::owner_read);  // not executable
  fs::create_directories(dir.path() / "b" / "tool");        // a directory
  make(dir.path() / "c" / "tool", fs::perms::owner_all);
  std::string path = (dir.path() / "a").string() + ":" + (dir.path() / "b").string() + ":" +
                     (dir.path() / "c").string();
  EXPECT_EQ(find_executable("tool", path), dir.path() / "c" / "tool");
  EXPECT_FALSE(find_executable("tool", (dir.path() / "a").string()));
  EXPECT_FALSE(find_executable("absent", path));
  EXPECT_EQ(find_executable((dir.path() / "c" / "tool").string(), ""), dir.path() / "c" / "tool");
}

// GroupEnding alone: fixed times, no process.
using Step = GroupEnding::Step;
using Group = GroupEnding::Group;

GroupEnding::Look look_at(SteadyClock::duration since_start, bool leader_done,
                          bool stop_requested = false, Group group = Group::kAlive) {
  return {leader_done, stop_requested, group, SteadyClock::time_point{} + since_start};
}

TEST(GroupEnding, NothingHappensWhileTheLeaderRunsUnstopped) {
  GroupEnding ending(3s);
  EXPECT_EQ(ending.next(look_at(0s, false)), Step::kWait);
  EXPECT_EQ(ending.next(look_at(1h, false)), Step::kWait);
  EXPECT_FALSE(ending.ending());
}

TEST(GroupEnding, AStopTerminatesTheGroupOnceAndKillsItWhenTheGraceIsOver) {
  GroupEnding ending(3s);
  EXPECT_EQ(ending.next(look_at(10s, false, true)), Step::kTerminateStopped);
  EXPECT_TRUE(ending.ending());
  EXPECT_EQ(ending.kill_at(), SteadyClock::time_point{} + 13s);
  EXPECT_EQ(ending.next(look_at(10s, false, true)), Step::kWait);
  EXPECT_EQ(ending.next(look_at(12s, true, true, Group::kAlive)), Step::kWait);
  EXPECT_EQ(ending.next(look_at(13s, true, true, Group::kAlive)), Step::kKillAfterGrace);
  EXPECT_EQ(ending.next(look_at(13s, true, true, Group::kAlive)), Step::kKill);  // again
  EXPECT_EQ(ending.next(look_at(14s, true, true, Group::kGone)), Step::kDone);
  const auto outcome = ending.outcome(0, false);
  EXPECT_EQ(outcome.kind, Kind::kStopped);
  EXPECT_EQ(outcome.message,
            "stopped: the process group was killed (SIGKILL) after not ending within 3000 ms of "
            "SIGTERM");
}

TEST(GroupEnding, AStoppedGroupEndingOnTermIsNotKilled) {
  GroupEnding ending(3s);
  EXPECT_EQ(ending.next(look_at(0s, false, true)), Step::kTerminateStopped);
  EXPECT_EQ(ending.next(look_at(1s, true, true, Group::kGone)), Step::kDone);
  EXPECT_FALSE(ending.killed());
  EXPECT_EQ(ending.outcome(0, false).message, "stopped: the process group ended on SIGTERM");
}

TEST(GroupEnding, ALeaderExitingAloneEndsTheRunWithItsExitCode) {
  GroupEnding ending(3s);
  EXPECT_EQ(ending.next(look_at(1s, true, false, Group::kGone)), Step::kDone);
  const auto outcome = ending.outcome(3 << 8, false);  // exit(3)
  EXPECT_EQ(outcome.kind, Kind::kExited);
  EXPECT_EQ(outcome.exit_code, 3);
  EXPECT_EQ(outcome.message, "exit code 3");
}

TEST(GroupEnding, ProcessesLeftByAnExitedLeaderAreTerminatedAndTheExitCodeKept) {
  GroupEnding ending(3s);
  EXPECT_EQ(ending.next(look_at(1s, true, false, Group::kAlive)), Step::kTerminateLeftovers);
  EXPECT_EQ(ending.next(look_at(2s, true, false, Group::kGone)), Step::kDone);
  const auto outcome = ending.outcome(0, false);
  EXPECT_EQ(outcome.kind, Kind::kExited);
  EXPECT_EQ(outcome.message, "exit code 0");
}

TEST(GroupEnding, ProcessesThatCannotBeSignalledEndTheRunOnlyAfterTheKill) {
  GroupEnding ending(3s);
  EXPECT_EQ(ending.next(look_at(0s, true, false, Group::kUnsignalable)),
            Step::kTerminateLeftovers);
  EXPECT_EQ(ending.next(look_at(1s, true, false, Group::kUnsignalable)), Step::kWait);
  EXPECT_EQ(ending.next(look_at(3s, true, false, Group::kUnsignalable)), Step::kKillAfterGrace);
  EXPECT_EQ(ending.next(look_at(3s, true, false, Group::kUnsignalable)), Step::kDone);
  EXPECT_EQ(ending.outcome(0, false).message,
            "exit code 0; processes of its group that this executor may not signal are still "
            "running");
}

TEST(GroupEnding, OutcomeNamesTheSignalOrALostStatus) {
  GroupEnding ending(3s);
  ASSERT_EQ(ending.next(look_at(0s, true, false, Group::kGone)), Step::kDone);
  const auto signaled = ending.outcome(SIGSEGV, false);  // a wait status for death by SIGSEGV
  EXPECT_EQ(signaled.kind, Kind::kSignaled);
  EXPECT_EQ(signaled.exit_code, SIGSEGV);
  EXPECT_EQ(signaled.message, "killed by SIGSEGV");
  const auto lost = ending.outcome(0, true);
  EXPECT_EQ(lost.kind, Kind::kExited);
  EXPECT_EQ(lost.exit_code, -1);
  EXPECT_NE(lost.message.find("exit status unknown"), std::string::npos);
}

TEST_F(ScriptRunnerTest, OutputLinesReachTheLogInOrderWithStderrMerged) {
  auto outcome = run(spec("echo one\necho two >&2\necho three\necho four >&2\n"));
  EXPECT_EQ(outcome.kind, Kind::kExited) << outcome.message;
  EXPECT_EQ(outcome.exit_code, 0);
  EXPECT_EQ(log_.lines(), (std::vector<std::string>{"one", "two", "three", "four"}));
}

TEST_F(ScriptRunnerTest, ArgumentsAreParamsShardIndexAndShardTotal) {
  auto s = spec("echo \"argc=$#\"\necho \"1=$1\"\necho \"2=$2\"\necho \"3=$3\"\n");
  s.params = "a b  'c'";
  run(s);
  EXPECT_EQ(log_.lines(),
            (std::vector<std::string>{"argc=3", "1=a b  'c'", "2=2", "3=5"}));
}

TEST_F(ScriptRunnerTest, NonZeroExitIsReportedWithItsCode) {
  auto outcome = run(spec("echo failing\nexit 3\n"));
  EXPECT_EQ(outcome.kind, Kind::kExited);
  EXPECT_EQ(outcome.exit_code, 3);
  EXPECT_EQ(outcome.message, "exit code 3");
}

TEST_F(ScriptRunnerTest, DeathBySignalNobodyHereSentIsSignaled) {
  auto outcome = run(spec("kill -KILL $$\n"));
  EXPECT_EQ(outcome.kind, Kind::kSignaled) << outcome.message;
  EXPECT_EQ(outcome.exit_code, SIGKILL);
  EXPECT_EQ(outcome.message, "killed by SIGKILL");
}

TEST_F(ScriptRunnerTest, LastLineWithoutNewlineIsWrittenWhenTheScriptEnds) {
  run(spec("printf 'first\\nno newline'\n"));
  EXPECT_EQ(log_.text(), "first\nno newline\n");
}

TEST_F(ScriptRunnerTest, VeryLongOutputLineIsSplitIntoLinesThatFitAPage) {
  auto outcome = run(spec("head -c 150000 /dev/zero | tr '\\0' x\necho\necho end\n"));
  EXPECT_EQ(outcome.exit_code, 0) << outcome.message;
  auto lines = log_.lines();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], std::string(kMaxOutputLineBytes, 'x'));
  EXPECT_EQ(lines[1], std::string(kMaxOutputLineBytes, 'x'));
  EXPECT_EQ(lines[2], std::string(150000 - 2 * kMaxOutputLineBytes, 'x'));
  EXPECT_EQ(lines[3], "end");
}

TEST_F(ScriptRunnerTest, StdinIsEmpty) {
  run(spec("if read -r line; then echo \"read $line\"; else echo eof; fi\n"));
  EXPECT_EQ(log_.lines(), std::vector<std::string>{"eof"});
}

TEST_F(ScriptRunnerTest, ScriptInheritsTheEnvironmentButNoCronwheelVariableNorOtherDescriptors) {
  ::setenv("CRONWHEEL_ACCESS_TOKEN", "secret", 1);
  ::setenv("CRONWHEEL_ACCESS_TOKEN_FILE", "/run/credentials/access-token", 1);
  ::setenv("CRONWHEEL_ADMIN_ADDRESSES", "http://admin:8080/", 1);
  // The executor's own (it may itself be a script of another executor): replaced by the run's.
  ::setenv("CRONWHEEL_OUTPUT_FILE", "/etc/passwd", 1);
  ::setenv("CRONWHEEL_LOG_DATE_TIME", "1", 1);
  ::setenv("SCRIPT_TEST_VISIBLE", "visible", 1);
  int leaked = ::open("/dev/null", O_RDONLY);  // no O_CLOEXEC, on purpose
  ASSERT_GE(leaked, 3);
  auto outcome = run(spec("echo \"token=${CRONWHEEL_ACCESS_TOKEN-unset}\"\n"
                          "echo \"cronwheel=$(env | grep '^CRONWHEEL_' | cut -d= -f1 | LC_ALL=C sort | tr '\\n' ' ')\"\n"
                          "echo \"output file=$CRONWHEEL_OUTPUT_FILE\"\n"
                          "echo \"other=$SCRIPT_TEST_VISIBLE\"\n"
                          "if [ -e /proc/$$/fd/" + std::to_string(leaked) +
                          " ]; then echo fd=open; else echo fd=closed; fi\n"));
  ::close(leaked);
  ::unsetenv("CRONWHEEL_ACCESS_TOKEN");
  ::unsetenv("CRONWHEEL_ACCESS_TOKEN_FILE");
  ::unsetenv("CRONWHEEL_ADMIN_ADDRESSES");
  ::unsetenv("CRONWHEEL_OUTPUT_FILE");
  ::unsetenv("CRONWHEEL_LOG_DATE_TIME");
  ::unsetenv("SCRIPT_TEST_VISIBLE");
  EXPECT_EQ(outcome.exit_code, 0) << outcome.message;
  auto lines = log_.lines();
  ASSERT_EQ(lines.size(), 5u) << log_.text();
  EXPECT_EQ(lines[0], "token=unset");
  EXPECT_EQ(lines[1], "cronwheel=CRONWHEEL_JOB_ID CRONWHEEL_LOG_DATE_TIME CRONWHEEL_LOG_ID "
                      "CRONWHEEL_OUTPUT_FILE CRONWHEEL_SHARD_INDEX CRONWHEEL_SHARD_TOTAL ")
      << "the run's own variables only";
  EXPECT_EQ(lines[2].rfind("output file=" + (dir_.path() / "gluesource" / ".output-77-").string(), 0),
            0u)
      << lines[2];
  EXPECT_EQ(lines[3], "other=visible");
  EXPECT_EQ(lines[4], "fd=closed");
}

TEST_F(ScriptRunnerTest, TheRunsIdsLogicalTimeAndShardAreItsVariables) {
  auto s = spec("echo \"job=$CRONWHEEL_JOB_ID log=$CRONWHEEL_LOG_ID\"\n"
                "echo \"time=$CRONWHEEL_LOG_DATE_TIME\"\n"
                "echo \"shard=$CRONWHEEL_SHARD_INDEX/$CRONWHEEL_SHARD_TOTAL\"\n"
                "echo \"args=$*\"\n");
  // A backfill's run: an instant long past, not the time it runs at.
  s.log_date_time = 946'771'200'000;  // 2000-01-02T00:00:00Z
  run(s);
  EXPECT_EQ(log_.lines(), (std::vector<std::string>{"job=77 log=4242", "time=946771200000",
                                                    "shard=2/5", "args=p 2 5"}));
}

TEST_F(ScriptRunnerTest, ScriptFilesAndTheirDirectoryAreTheExecutorUsersAlone) {
  const fs::path dir = dir_.path() / "gluesource";
  fs::create_directories(dir);
  ::chmod(dir.c_str(), 0755);  // as an earlier version left it
  auto outcome = run(spec("echo hi\n"));
  EXPECT_EQ(outcome.exit_code, 0) << outcome.message;
  struct stat st {};
  ASSERT_EQ(::stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  ASSERT_EQ(::stat((dir / "77_1700000000000.sh").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
}

TEST_F(ScriptRunnerTest, SignalsIgnoredByTheExecutorHaveTheirDefaultActionInTheScript) {
  struct sigaction ignore {};
  struct sigaction previous {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, &previous);
  // With SIGPIPE ignored `yes` would see EPIPE and exit 1 instead of dying of the signal.
  auto outcome = run(spec("yes | head -n 1 > /dev/null\necho \"status=${PIPESTATUS[0]}\"\n"));
  ::sigaction(SIGPIPE, &previous, nullptr);
  EXPECT_EQ(outcome.exit_code, 0) << outcome.message;
  EXPECT_EQ(log_.lines(), std::vector<std::string>{"status=141"});
}

TEST_F(ScriptRunnerTest, StopEndsALongScriptAndItsBackgroundChildPromptly) {
  BackgroundRun script(spec("echo \"leader $$\"\nsleep 300 &\necho \"child $!\"\nwait\n"), log_,
                       10s);
  pid_t child = pid_in(log_.wait_for_line("child "));
  pid_t leader = pid_in(log_.wait_for_line("leader "));
  ASSERT_GT(child, 0) << log_.text();
  ASSERT_TRUE(alive(child));

  script.stop();
  auto outcome = script.wait();
  EXPECT_EQ(outcome.kind, Kind::kStopped) << outcome.message;
  EXPECT_EQ(outcome.message, "stopped: the process group ended on SIGTERM");
  // SIGTERM ends both at once: well before the 10 s grace that SIGKILL would need.
  EXPECT_LT(script.stop_to_return(), 9s);
  EXPECT_FALSE(alive(leader));
  EXPECT_FALSE(alive(child));
}

TEST_F(ScriptRunnerTest, ScriptThatIgnoresTermIsKilledAfterTheGrace) {
  constexpr auto kGrace = 300ms;
  // Both the script and its child outlive SIGTERM: only SIGKILL ends them.
  BackgroundRun script(spec("trap 'echo got TERM' TERM\n"
                            "echo \"leader $$\"\n"
                            "(trap '' TERM; exec sleep 300) &\n"
                            "echo \"child $!\"\n"
                            "while :; do sleep 0.05; done\n"),
                       log_, kGrace);
  pid_t child = pid_in(log_.wait_for_line("child "));
  pid_t leader = pid_in(log_.wait_for_line("leader "));
  ASSERT_GT(child, 0) << log_.text();

  script.stop();
  auto outcome = script.wait();
  EXPECT_EQ(outcome.kind, Kind::kStopped) << outcome.message;
  EXPECT_NE(outcome.message.find("SIGKILL"), std::string::npos) << outcome.message;
  EXPECT_GE(script.stop_to_return(), kGrace);
  EXPECT_NE(log_.text().find("sending SIGKILL"), std::string::npos) << log_.text();
  EXPECT_FALSE(alive(leader));
  EXPECT_FALSE(alive(child));
}

TEST_F(ScriptRunnerTest, FloodOfOutputDoesNotDelayTheStop) {
  BackgroundRun script(spec("echo start\nyes flood\n"), log_, 10s);
  ASSERT_EQ(log_.wait_for_line("start"), "start");
  script.stop();
  auto outcome = script.wait();
  EXPECT_EQ(outcome.kind, Kind::kStopped) << outcome.message;
  EXPECT_LT(script.stop_to_return(), 9s);
  EXPECT_GT(log_.total_bytes(), 0u);
}

TEST_F(ScriptRunnerTest, ProcessesLeftInTheGroupAreEndedWhenTheScriptExits) {
  auto started = SteadyClock::now();
  auto outcome = run(spec("sleep 300 &\necho \"child $!\"\necho last words\nexit 0\n"), 10s);
  EXPECT_EQ(outcome.kind, Kind::kExited) << outcome.message;
  EXPECT_EQ(outcome.exit_code, 0);
  EXPECT_LT(SteadyClock::now() - started, 9s);
  auto lines = log_.lines();
  ASSERT_EQ(lines.size(), 3u) << log_.text();
  pid_t child = pid_in(lines[0]);
  ASSERT_GT(child, 0);
  EXPECT_FALSE(alive(child));
  EXPECT_EQ(lines[1], "last words");
  EXPECT_EQ(lines[2],
            "[cronwheel] the script exited; ending the processes it left running in its process "
            "group");
}

TEST_F(ScriptRunnerTest, StoppedScriptIsContinuedSoThatItEndsOnTerm) {
  // The trap runs only in a running process: SIGTERM alone would wait for SIGKILL.
  BackgroundRun script(spec("trap 'echo got TERM; exit 0' TERM\necho \"leader $$\"\n"
                            "kill -STOP $$\necho continued\n"),
                       log_, 10s);
  pid_t leader = pid_in(log_.wait_for_line("leader "));
  ASSERT_GT(leader, 0);
  // Wait (bounded) until the kernel shows it stopped.
  auto state = [&] {
    std::ifstream stat_file("/proc/" + std::to_string(leader) + "/stat");
    std::string stat;
    std::getline(stat_file, stat);
    auto close = stat.rfind(')');
    return close != std::string::npos && close + 2 < stat.size() ? stat[close + 2] : '?';
  };
  auto deadline = SteadyClock::now() + kBound;
  while (state() != 'T' && SteadyClock::now() < deadline) std::this_thread::yield();
  ASSERT_EQ(state(), 'T');

  script.stop();
  auto outcome = script.wait();
  EXPECT_EQ(outcome.kind, Kind::kStopped) << outcome.message;
  EXPECT_EQ(outcome.message, "stopped: the process group ended on SIGTERM");
  EXPECT_LT(script.stop_to_return(), 9s);
  EXPECT_FALSE(alive(leader));
  EXPECT_NE(log_.text().find("got TERM"), std::string::npos) << log_.text();
}

TEST_F(ScriptRunnerTest, ProcessThatLeftTheGroupDoesNotHoldTheRunOpenThroughThePipe) {
  fs::path pid_file = dir_.path() / "escaped.pid";
  // The escaped process keeps the output pipe open for 60 s; the script waits until it has
  // written its pid, then ends.
  auto outcome = run(spec("setsid bash -c 'echo $$ > " + pid_file.string() +
                          ".tmp; mv " + pid_file.string() + ".tmp " + pid_file.string() +
                          "; exec sleep 60' &\n"
                          "while [ ! -s " + pid_file.string() + " ]; do sleep 0.01; done\n"
                          "echo done\n"));
  pid_t escaped = -1;
  std::ifstream(pid_file) >> escaped;
  ASSERT_GT(escaped, 0);
  bool was_alive = alive(escaped);
  ::kill(escaped, SIGKILL);  // not ours to leave behind
  EXPECT_EQ(outcome.kind, Kind::kExited) << outcome.message;
  EXPECT_EQ(outcome.exit_code, 0);
  EXPECT_TRUE(was_alive) << "the run returned only when the escaped process ended";
  EXPECT_EQ(log_.lines(), std::vector<std::string>{"done"});
}

TEST_F(ScriptRunnerTest, StopRequestedBeforeTheStartRunsNothing) {
  std::stop_source stop;
  stop.request_stop();
  auto outcome = run_script(spec("echo should not run\n"), log_, stop.get_token());
  EXPECT_EQ(outcome.kind, Kind::kStopped);
  EXPECT_EQ(log_.text(), "");
  EXPECT_FALSE(fs::exists(dir_.path() / "gluesource"));
}

TEST_F(ScriptRunnerTest, MissingInterpreterFailsToStartNamingItAndTheGlueType) {
  fs::create_directories(dir_.path() / "empty-bin");
  auto python = spec("print('hi')\n", GlueType::kGluePython);
  python.search_path = (dir_.path() / "empty-bin").string();
  auto outcome = run(python);
  EXPECT_EQ(outcome.kind, Kind::kFailedToStart);
  EXPECT_EQ(outcome.message, "interpreter python3 for GLUE_PYTHON not found on PATH");

  auto shell = spec("echo hi\n");
  shell.search_path = (dir_.path() / "empty-bin").string();
  outcome = run(shell);
  EXPECT_EQ(outcome.kind, Kind::kFailedToStart);
  EXPECT_EQ(outcome.message, "interpreter bash for GLUE_SHELL not found on PATH");
  EXPECT_EQ(log_.text(), "");
}

TEST_F(ScriptRunnerTest, GroovyAndBeanAreRefusedWithAMessage) {
  auto groovy = run(spec("println 'hi'", GlueType::kGlueGroovy));
  EXPECT_EQ(groovy.kind, Kind::kFailedToStart);
  EXPECT_NE(groovy.message.find("GLUE_GROOVY is not supported"), std::string::npos)
      << groovy.message;
  auto bean = run(spec("", GlueType::kBean));
  EXPECT_EQ(bean.kind, Kind::kFailedToStart);
  EXPECT_EQ(bean.message, "glue type BEAN is not a script");
}

TEST_F(ScriptRunnerTest, UnwritableScriptDirectoryFailsToStart) {
  auto s = spec("echo hi\n");
  std::ofstream(dir_.path() / "a-file") << "x";
  s.script_dir = dir_.path() / "a-file";
  auto outcome = run(s);
  EXPECT_EQ(outcome.kind, Kind::kFailedToStart);
  EXPECT_NE(outcome.message.find("cannot write the script file"), std::string::npos)
      << outcome.message;
  EXPECT_NE(outcome.message.find((dir_.path() / "a-file").string()), std::string::npos)
      << outcome.message;
}

TEST_F(ScriptRunnerTest, ScriptFileIsNamedByJobAndVersionAndRewrittenOnlyWhenItChanges) {
  fs::path dir = dir_.path() / "gluesource";
  fs::path file = dir / "77_1700000000000.sh";
  auto inode = [](const fs::path& p) {
    struct stat st {};
    ::stat(p.c_str(), &st);
    return st.st_ino;
  };
  auto content = [](const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  };

  run(spec("echo v1\n"));
  ASSERT_TRUE(fs::exists(file));
  EXPECT_EQ(content(file), "echo v1\n");
  EXPECT_EQ(fs::status(file).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  auto first = inode(file);

  run(spec("echo v1\n"));
  EXPECT_EQ(inode(file), first) << "an identical file is reused, not rewritten";

  run(spec("echo v1 edited\n"));
  EXPECT_EQ(content(file), "echo v1 edited\n");

  auto next = spec("echo v2\n");
  next.glue_updatetime = 1700000000001;
  run(next);
  EXPECT_EQ(content(dir / "77_1700000000001.sh"), "echo v2\n");
  EXPECT_EQ(log_.lines(), (std::vector<std::string>{"v1", "v1", "v1 edited", "v2"}));

  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"77_1700000000000.sh", "77_1700000000001.sh"}))
      << "no temporary file is left behind";
}

TEST_F(ScriptRunnerTest, ScriptsOfDifferentJobsRunConcurrently) {
  constexpr int kJobs = 4;
  std::vector<MemoryLog> logs(kJobs);
  std::vector<std::future<ScriptOutcome>> results;
  for (int job = 0; job < kJobs; ++job) {
    auto s = spec("for i in 1 2 3; do echo \"job $1 line $i\"; done\n");
    s.job_id = 100 + job;
    s.params = std::to_string(job);
    results.push_back(std::async(std::launch::async, [s, &log = logs[static_cast<std::size_t>(job)]] {
      return run_script(s, log, std::stop_token());
    }));
  }
  for (int job = 0; job < kJobs; ++job) {
    auto outcome = results[static_cast<std::size_t>(job)].get();
    EXPECT_EQ(outcome.exit_code, 0) << outcome.message;
    std::string j = std::to_string(job);
    EXPECT_EQ(logs[static_cast<std::size_t>(job)].lines(),
              (std::vector<std::string>{"job " + j + " line 1", "job " + j + " line 2",
                                        "job " + j + " line 3"}));
  }
}

TEST_F(ScriptRunnerTest, ProgramThatCannotBeExecutedFailsToStartSayingWhy) {
  // Executable, but neither a binary nor a script with a #! line: exec refuses it.
  const fs::path garbage = dir_.path() / "garbage";
  std::ofstream(garbage) << std::string(64, '\x01');
  fs::permissions(garbage, fs::perms::owner_all);
  auto outcome = run_process({garbage.string()}, log_, {});
  EXPECT_EQ(outcome.kind, Kind::kFailedToStart);
  EXPECT_EQ(outcome.message, "cannot start " + garbage.string() + ": Exec format error");
}

// ---------------------------------------------------------------------------------------------
// The run's output (CRONWHEEL_OUTPUT_FILE)

// "file=<path>" as a script logged it → the path.
fs::path logged_file(const MemoryLog& log) {
  for (const auto& line : log.lines()) {
    if (line.rfind("file=", 0) == 0) return line.substr(5);
  }
  return {};
}

// The names in `dir` that start with ".output-".
std::vector<std::string> output_files_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(".output-", 0) == 0) names.push_back(name);
  }
  return names;
}

TEST_F(ScriptRunnerTest, JsonWrittenToTheOutputFileIsTheRunsOutputWithoutSurroundingWhitespace) {
  auto outcome = run(spec("echo '  {\"rows\": 42, \"files\": [\"a.csv\"]}' > \"$CRONWHEEL_OUTPUT_FILE\"\n"
                          "echo done\n"));
  EXPECT_EQ(outcome.kind, Kind::kExited) << outcome.message;
  EXPECT_EQ(outcome.exit_code, 0);
  EXPECT_EQ(outcome.message, "exit code 0");
  EXPECT_FALSE(outcome.output_refused);
  EXPECT_EQ(outcome.output, R"({"rows": 42, "files": ["a.csv"]})");
  EXPECT_EQ(log_.lines(), std::vector<std::string>{"done"}) << "nothing to say about it";
}

TEST_F(ScriptRunnerTest, OutputIsTakenAfterAFailureOrASignalAndTheOutcomeIsUnchanged) {
  auto failed = run(spec("printf '[1,2]' > \"$CRONWHEEL_OUTPUT_FILE\"\nexit 3\n"));
  EXPECT_EQ(failed.kind, Kind::kExited);
  EXPECT_EQ(failed.exit_code, 3);
  EXPECT_EQ(failed.message, "exit code 3");
  EXPECT_EQ(failed.output, "[1,2]");

  auto killed = run(spec("printf '\"partial\"' > \"$CRONWHEEL_OUTPUT_FILE\"\nkill -KILL $$\n"));
  EXPECT_EQ(killed.kind, Kind::kSignaled) << killed.message;
  EXPECT_EQ(killed.output, "\"partial\"");
}

TEST_F(ScriptRunnerTest, NothingOrOnlyWhitespaceWrittenGivesNoOutputAndNoLine) {
  auto nothing = run(spec("echo hi\n"));
  EXPECT_EQ(nothing.exit_code, 0) << nothing.message;
  EXPECT_EQ(nothing.output, std::nullopt);
  EXPECT_FALSE(nothing.output_refused);
  auto blank = run(spec("echo > \"$CRONWHEEL_OUTPUT_FILE\"\necho hi\n"));
  EXPECT_EQ(blank.output, std::nullopt);
  EXPECT_FALSE(blank.output_refused);
  EXPECT_EQ(blank.message, "exit code 0");
  EXPECT_EQ(log_.lines(), (std::vector<std::string>{"hi", "hi"}));
}

TEST_F(ScriptRunnerTest, TextThatIsNotJsonIsRefusedSayingWhyInTheMessageAndTheLog) {
  auto outcome = run(spec("echo 'rows: 42' > \"$CRONWHEEL_OUTPUT_FILE\"\n"));
  EXPECT_EQ(outcome.kind, Kind::kExited);
  EXPECT_EQ(outcome.exit_code, 0);
  EXPECT_TRUE(outcome.output_refused);
  EXPECT_EQ(outcome.output, std::nullopt);
  EXPECT_EQ(outcome.message.rfind("exit code 0; output refused: CRONWHEEL_OUTPUT_FILE: not JSON: ", 0), 0u)
      << outcome.message;
  auto lines = log_.lines();
  ASSERT_EQ(lines.size(), 1u) << log_.text();
  EXPECT_EQ(lines[0].rfind("[cronwheel] output refused: CRONWHEEL_OUTPUT_FILE: not JSON: ", 0), 0u)
      << lines[0];

  // A failed script's refused output keeps its exit code first in the message.
  auto failed = run(spec("echo '{' > \"$CRONWHEEL_OUTPUT_FILE\"\nexit 3\n"));
  EXPECT_EQ(failed.exit_code, 3);
  EXPECT_TRUE(failed.output_refused);
  EXPECT_EQ(failed.message.rfind("exit code 3; output refused: CRONWHEEL_OUTPUT_FILE: not JSON: ", 0), 0u)
      << failed.message;
}

TEST_F(ScriptRunnerTest, OutputOfExactly64KiBIsTakenAndOneByteMoreIsRefused) {
  // A JSON string: the quotes and 65534 letters are 65536 bytes.
  const std::string fits = "printf '\"' > \"$CRONWHEEL_OUTPUT_FILE\"\n"
                           "head -c 65534 /dev/zero | tr '\\0' x >> \"$CRONWHEEL_OUTPUT_FILE\"\n"
                           "printf '\"' >> \"$CRONWHEEL_OUTPUT_FILE\"\n";
  auto taken = run(spec(fits));
  ASSERT_TRUE(taken.output.has_value()) << log_.text();
  EXPECT_EQ(taken.output->size(), JobContext::kMaxOutputBytes);
  EXPECT_EQ(*taken.output, "\"" + std::string(65534, 'x') + "\"");
  EXPECT_EQ(log_.text(), "");

  EXPECT_FALSE(taken.output_refused);

  auto refused = run(spec(fits + "printf ' ' >> \"$CRONWHEEL_OUTPUT_FILE\"\n"));
  EXPECT_EQ(refused.exit_code, 0);
  EXPECT_TRUE(refused.output_refused);
  EXPECT_EQ(refused.output, std::nullopt);
  EXPECT_EQ(refused.message,
            "exit code 0; output refused: CRONWHEEL_OUTPUT_FILE holds more than 65536 bytes");
  EXPECT_EQ(log_.lines(), std::vector<std::string>{
                              "[cronwheel] output refused: CRONWHEEL_OUTPUT_FILE holds more than 65536 bytes"});
}

TEST_F(ScriptRunnerTest, AHugeOutputFileIsRefusedWithoutReadingItAll) {
  // 2 GiB, sparse: a read of it all would take the memory (and the time) it names.
  auto outcome = run(spec("truncate -s 2G \"$CRONWHEEL_OUTPUT_FILE\"\necho \"file=$CRONWHEEL_OUTPUT_FILE\"\n"));
  EXPECT_EQ(outcome.exit_code, 0) << outcome.message;
  EXPECT_TRUE(outcome.output_refused);
  EXPECT_EQ(outcome.output, std::nullopt);
  EXPECT_EQ(log_.lines().back(),
            "[cronwheel] output refused: CRONWHEEL_OUTPUT_FILE holds more than 65536 bytes");
  EXPECT_FALSE(fs::exists(logged_file(log_))) << "removed after the run";
}

TEST_F(ScriptRunnerTest, OutputFileIsFreshEmptyPrivateAndRemovedAfterTheRun) {
  const std::string show = "echo \"file=$CRONWHEEL_OUTPUT_FILE\"\n"
                           "stat -c 'mode=%a size=%s type=%F' \"$CRONWHEEL_OUTPUT_FILE\"\n"
                           "echo '{\"a\":1}' > \"$CRONWHEEL_OUTPUT_FILE\"\n";
  run(spec(show));
  const fs::path first = logged_file(log_);
  const auto first_lines = log_.lines();
  ASSERT_EQ(first_lines.size(), 2u) << log_.text();
  EXPECT_EQ(first_lines[1], "mode=600 size=0 type=regular empty file");
  EXPECT_EQ(first.parent_path(), dir_.path() / "gluesource");
  EXPECT_FALSE(fs::exists(fs::symlink_status(first)));

  MemoryLog second_log;
  auto second = run_script(spec(show), second_log, std::stop_token());
  EXPECT_EQ(second.output, R"({"a":1})");
  EXPECT_NE(logged_file(second_log), first) << "each run gets a file of its own";
  EXPECT_EQ(second_log.lines()[1], "mode=600 size=0 type=regular empty file")
      << "not what the run before wrote";
  EXPECT_TRUE(output_files_in(dir_.path() / "gluesource").empty());
}

TEST_F(ScriptRunnerTest, ASymlinkPutInPlaceOfTheOutputFileIsNeitherReadNorWritten) {
  // A file of the executor's user that the script's symlink points at.
  const fs::path other = dir_.path() / "secret.json";
  std::ofstream(other) << R"({"token":"secret"})";
  fs::permissions(other, fs::perms::owner_read | fs::perms::owner_write);
  auto outcome = run(spec("echo \"file=$CRONWHEEL_OUTPUT_FILE\"\n"
                          "rm -f \"$CRONWHEEL_OUTPUT_FILE\"\n"
                          "ln -s '" + other.string() + "' \"$CRONWHEEL_OUTPUT_FILE\"\n"));
  EXPECT_EQ(outcome.exit_code, 0) << outcome.message;
  EXPECT_TRUE(outcome.output_refused);
  EXPECT_EQ(outcome.output, std::nullopt);
  EXPECT_EQ(log_.lines().back(),
            "[cronwheel] output refused: the script removed or replaced CRONWHEEL_OUTPUT_FILE (write "
            "into the file it names)");
  std::ifstream in(other);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, R"({"token":"secret"})") << "the link's target is left alone";
  EXPECT_FALSE(fs::exists(fs::symlink_status(logged_file(log_)))) << "the link is removed";
}

TEST_F(ScriptRunnerTest, AFileRenamedOverTheOutputFileIsNotRead) {
  auto outcome = run(spec("echo '{\"a\":1}' > \"$CRONWHEEL_OUTPUT_FILE.new\"\n"
                          "mv \"$CRONWHEEL_OUTPUT_FILE.new\" \"$CRONWHEEL_OUTPUT_FILE\"\n"));
  EXPECT_EQ(outcome.exit_code, 0) << outcome.message << log_.text();
  EXPECT_TRUE(outcome.output_refused);
  EXPECT_EQ(outcome.output, std::nullopt);
  EXPECT_EQ(outcome.message,
            "exit code 0; output refused: the script removed or replaced CRONWHEEL_OUTPUT_FILE "
            "(write into the file it names)");
  EXPECT_EQ(log_.lines().back(),
            "[cronwheel] output refused: the script removed or replaced CRONWHEEL_OUTPUT_FILE (write "
            "into the file it names)");
}

TEST_F(ScriptRunnerTest, AStoppedScriptHasNoOutput) {
  BackgroundRun script(spec("echo '{\"a\":1}' > \"$CRONWHEEL_OUTPUT_FILE\"\n"
                            "echo \"file=$CRONWHEEL_OUTPUT_FILE\"\nsleep 300\n"),
                       log_, 3s);
  ASSERT_FALSE(log_.wait_for_line("file=").empty()) << log_.text();
  script.stop();
  auto outcome = script.wait();
  EXPECT_EQ(outcome.kind, Kind::kStopped) << outcome.message;
  EXPECT_EQ(outcome.output, std::nullopt);
  EXPECT_FALSE(fs::exists(logged_file(log_)));
}

TEST_F(ScriptRunnerTest, OutputFilesLeftByAnEarlierProcessAreRemovedAndScriptsKept) {
  const fs::path dir = dir_.path() / "gluesource";
  fs::create_directories(dir);
  std::ofstream(dir / ".output-7-AbC123") << "left";
  std::ofstream(dir / "7_1700000000000.sh") << "echo hi\n";
  fs::create_symlink(dir_.path() / "kept", dir / ".output-8-XyZ789");
  std::ofstream(dir_.path() / "kept") << "kept";
  remove_leftover_output_files(dir);
  EXPECT_TRUE(output_files_in(dir).empty());
  EXPECT_TRUE(fs::exists(dir / "7_1700000000000.sh"));
  EXPECT_TRUE(fs::exists(dir_.path() / "kept")) << "a link's target is not removed";
}

// ---------------------------------------------------------------------------------------------
// Scripts run as another user (root only: switching users needs it; CI runs as root)

class RunAsTest : public ScriptRunnerTest {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "running scripts as another user needs root";
    nobody_ = std::make_shared<const RunAsUser>(find_user("nobody"));
    // mkdtemp made the directory root's only; the user must reach the script directory in it.
    fs::permissions(dir_.path(), fs::perms::owner_all | fs::perms::group_exec |
                                     fs::perms::others_exec);
  }

  ScriptSpec spec_as_nobody(std::string source) {
    auto s = spec(std::move(source));
    s.run_as = nobody_;
    return s;
  }

  std::shared_ptr<const RunAsUser> nobody_;
};

TEST_F(RunAsTest, ScriptRunsWithTheUsersIdsGroupsAndEnvironment) {
  ::setenv("CRONWHEEL_ACCESS_TOKEN", "secret", 1);
  auto outcome = run(spec_as_nobody("echo \"uid=$(id -u) gid=$(id -g) groups=$(id -G)\"\n"
                                    "echo \"HOME=$HOME USER=$USER LOGNAME=$LOGNAME\"\n"
                                    "echo \"pwd=$(pwd)\"\n"
                                    "echo \"token=${CRONWHEEL_ACCESS_TOKEN-unset}\"\n"));
  ::unsetenv("CRONWHEEL_ACCESS_TOKEN");
  EXPECT_EQ(outcome.exit_code, 0) << outcome.message << "\n" << log_.text();
  std::string groups;
  for (gid_t g : nobody_->groups) groups += (groups.empty() ? "" : " ") + std::to_string(g);
  // The home directory when it exists, "/" otherwise (Debian's nobody has /nonexistent).
  const std::string pwd = fs::is_directory(nobody_->home) ? nobody_->home : "/";
  EXPECT_EQ(log_.lines(),
            (std::vector<std::string>{
                "uid=" + std::to_string(nobody_->uid) + " gid=" + std::to_string(nobody_->gid) +
                    " groups=" + groups,
                "HOME=" + nobody_->home + " USER=nobody LOGNAME=nobody", "pwd=" + pwd,
                "token=unset"}));
}

TEST_F(RunAsTest, ScriptFileIsReadableByTheUsersGroupAndNobodyElse) {
  fs::path dir = dir_.path() / "gluesource";
  fs::path file = dir / "77_1700000000000.sh";
  // Left by an earlier executor that ran scripts as itself: a file only root may read.
  run(spec("echo as-root\n"));
  ASSERT_EQ(fs::status(file).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);

  auto outcome = run(spec_as_nobody("echo as-root\n"));
  EXPECT_EQ(outcome.exit_code, 0) << outcome.message << "\n" << log_.text();
  EXPECT_EQ(log_.lines(), (std::vector<std::string>{"as-root", "as-root"}));
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_EQ(st.st_uid, ::geteuid()) << "the script cannot rewrite its own file";
  EXPECT_EQ(st.st_gid, nobody_->gid);
  ASSERT_EQ(::stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0750u);
  EXPECT_EQ(st.st_gid, nobody_->gid);
}

TEST_F(RunAsTest, StopEndsTheUsersScriptAndItsChildren) {
  BackgroundRun script(spec_as_nobody("echo \"leader $$\"\nsleep 300 &\necho \"child $!\"\nwait\n"),
                       log_, 10s);
  pid_t child = pid_in(log_.wait_for_line("child "));
  pid_t leader = pid_in(log_.wait_for_line("leader "));
  ASSERT_GT(child, 0) << log_.text();
  script.stop();
  auto outcome = script.wait();
  EXPECT_EQ(outcome.kind, Kind::kStopped) << outcome.message;
  EXPECT_LT(script.stop_to_return(), 9s);
  EXPECT_FALSE(alive(leader));
  EXPECT_FALSE(alive(child));
}

TEST_F(RunAsTest, CommandsRunAsTheUserToo) {
  auto outcome = run_process({"/bin/sh", "-c", "id -u"}, log_, {}, 3s, {}, nobody_.get());
  EXPECT_EQ(outcome.exit_code, 0) << outcome.message;
  EXPECT_EQ(log_.lines(), std::vector<std::string>{std::to_string(nobody_->uid)});
}

TEST_F(RunAsTest, OutputFileIsTheUsersAloneAndWhatItWritesIsTheOutput) {
  auto outcome = run(spec_as_nobody("stat -c 'owner=%u:%g mode=%a' \"$CRONWHEEL_OUTPUT_FILE\"\n"
                                    "echo \"{\\\"who\\\":\\\"$(id -un)\\\"}\" > \"$CRONWHEEL_OUTPUT_FILE\"\n"));
  EXPECT_EQ(outcome.exit_code, 0) << outcome.message << "\n" << log_.text();
  EXPECT_EQ(outcome.output, R"({"who":"nobody"})") << log_.text();
  EXPECT_EQ(log_.lines(), std::vector<std::string>{"owner=" + std::to_string(nobody_->uid) + ":" +
                                                   std::to_string(nobody_->gid) + " mode=600"});
}

TEST_F(RunAsTest, TheUserCannotReplaceTheOutputFileSoItsWritesAreRead) {
  auto outcome = run(spec_as_nobody(
      "if rm -f \"$CRONWHEEL_OUTPUT_FILE\" 2>/dev/null; then echo removed; else echo kept; fi\n"
      "if ln -s /etc/shadow \"$CRONWHEEL_OUTPUT_FILE.x\" 2>/dev/null; then echo linked; else echo no-link; fi\n"
      "echo '[\"still mine\"]' > \"$CRONWHEEL_OUTPUT_FILE\"\n"));
  EXPECT_EQ(outcome.exit_code, 0) << outcome.message << "\n" << log_.text();
  EXPECT_EQ(log_.lines(), (std::vector<std::string>{"kept", "no-link"}));
  EXPECT_EQ(outcome.output, R"(["still mine"])");
  EXPECT_TRUE(output_files_in(dir_.path() / "gluesource").empty());
}

struct LanguageCase {
  GlueType type;
  std::string source;
};

void PrintTo(const LanguageCase& c, std::ostream* out) { *out << common::protocol::to_string(c.type); }

class ScriptLanguageTest : public ScriptRunnerTest,
                           public ::testing::WithParamInterface<LanguageCase> {};

TEST_P(ScriptLanguageTest, RunsWithTheArgumentsAndReportsTheExitCode) {
  const auto& param = GetParam();
  auto interpreter = interpreter_for(param.type);
  ASSERT_TRUE(interpreter);
  const char* path = std::getenv("PATH");
  if (!find_executable(interpreter->command, path != nullptr ? path : "")) {
    GTEST_SKIP() << interpreter->command << " is not installed";
  }
  auto outcome = run(spec(param.source, param.type));
  EXPECT_EQ(outcome.kind, Kind::kExited) << outcome.message;
  EXPECT_EQ(outcome.exit_code, 4) << log_.text();
  EXPECT_EQ(log_.lines(), (std::vector<std::string>{"args p,2,5", "to stderr"}));
}

INSTANTIATE_TEST_SUITE_P(
    Interpreters, ScriptLanguageTest,
    ::testing::Values(
        LanguageCase{GlueType::kGlueShell,
                     "IFS=,; echo \"args $*\"\necho 'to stderr' >&2\nexit 4\n"},
        LanguageCase{GlueType::kGluePython,
                     "import sys\nprint('args ' + ','.join(sys.argv[1:]), flush=True)\n"
                     "print('to stderr', file=sys.stderr, flush=True)\nsys.exit(4)\n"},
        LanguageCase{GlueType::kGlueNodejs,
                     "console.log('args ' + process.argv.slice(2).join(','));\n"
                     "console.error('to stderr');\nprocess.exitCode = 4;\n"},
        LanguageCase{GlueType::kGluePhp,
                     "<?php\necho 'args ' . implode(',', array_slice($argv, 1)) . \"\\n\";\n"
                     "fflush(STDOUT);\nfwrite(STDERR, \"to stderr\\n\");\nexit(4);\n"},
        LanguageCase{GlueType::kGluePowershell,
                     "[Console]::Out.WriteLine('args ' + ($args -join ','))\n"
                     "[Console]::Out.Flush()\n[Console]::Error.WriteLine('to stderr')\nexit 4\n"}),
    [](const ::testing::TestParamInfo<LanguageCase>& info) {
      return std::string(interpreter_for(info.param.type)->command);
    });

}  // namespace
}  // namespace cronwheel::executor
