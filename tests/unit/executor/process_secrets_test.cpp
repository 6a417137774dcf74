// Hiding a process's secrets: the in-place erasing is judged from outside, on a probe process
// (executor_process_secrets_probe) started with the access token in its environment and on its
// command line, by reading its /proc/<pid>/environ and /proc/<pid>/cmdline as any other process
// of the user (a script) would.
#include "common/util/process_secrets.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/eventually.h"
#include "tests/support/process.h"

namespace cronwheel::executor {
namespace {

using cronwheel::testing::eventually;
using cronwheel::testing::Process;
using cronwheel::common::erase_environment_variables;
using cronwheel::common::hide_option_values;
using cronwheel::common::make_undumpable;

const std::string kProbe = CRONWHEEL_PROCESS_SECRETS_PROBE;

bool contains(const std::string& text, const std::string& fragment) {
  return text.find(fragment) != std::string::npos;
}

// A /proc file of `pid`, NUL bytes shown as '|'; `readable` says whether it could be read.
std::string proc_file(pid_t pid, const std::string& name, bool& readable) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/" + name, std::ios::binary);
  std::stringstream content;
  content << in.rdbuf();
  readable = static_cast<bool>(in) || !content.str().empty();
  std::string text = content.str();
  for (char& c : text) {
    if (c == '\0') c = '|';
  }
  return text;
}

// The probe, started and waited for until it is ready; SIGTERM at the end of the test.
class Probe {
 public:
  Probe(std::vector<std::string> args, std::vector<std::string> env) {
    args.insert(args.begin(), kProbe);
    process_ = std::make_unique<Process>(std::move(args), std::move(env));
    ready_ = eventually([this] {
      return contains(process_->out(), "\nready\n") || !process_->running();
    }) && process_->running();
  }
  ~Probe() {
    process_->signal(SIGTERM);
    process_->wait_for_exit(std::chrono::seconds(10));
  }
  bool ready() const { return ready_; }
  pid_t pid() const { return process_->pid(); }
  std::string out() const { return process_->out() + process_->err(); }

 private:
  std::unique_ptr<Process> process_;
  bool ready_ = false;
};

class ProcessSecretsTest : public ::testing::Test {
 protected:
  // The probe's environment is this process's plus the test's variables: no token of ours.
  void SetUp() override { ::unsetenv("CRONWHEEL_ACCESS_TOKEN"); }
};

TEST_F(ProcessSecretsTest, TokenIsGoneFromProcEnvironAndCmdlineAndTheRestStays) {
  Probe probe({"--app-name", "demo", "--access-token", "tok-7f3a-argv-1",
               "--access-token=tok-7f3a-argv-2", "--access-token-file=/keep/this"},
              {"CRONWHEEL_ACCESS_TOKEN=tok-7f3a-env-3", "CRONWHEEL_ACCESS_TOKEN_HINT=keep-me"});
  ASSERT_TRUE(probe.ready()) << probe.out();
  const std::string out = probe.out();
  EXPECT_TRUE(contains(out, "getenv=(unset)\n")) << out;
  EXPECT_TRUE(contains(out, "erased=1 hidden=2\n")) << out;

  bool readable = false;
  const std::string cmdline = proc_file(probe.pid(), "cmdline", readable);
  ASSERT_TRUE(readable) << "cmdline is readable by every process";
  EXPECT_FALSE(contains(cmdline, "tok-7f3a")) << cmdline;
  EXPECT_TRUE(contains(cmdline, "|--app-name|demo|--access-token|xxxxxxxxxxxxxxx|"
                                "--access-token=xxxxxxxxxxxxxxx|--access-token-file=/keep/this|"))
      << cmdline;

  // Readable by the same user while the probe is dumpable (this one is), and by root.
  const std::string environ_text = proc_file(probe.pid(), "environ", readable);
  ASSERT_TRUE(readable);
  EXPECT_FALSE(contains(environ_text, "tok-7f3a")) << environ_text;
  EXPECT_FALSE(contains(environ_text, "CRONWHEEL_ACCESS_TOKEN=")) << environ_text;
  EXPECT_TRUE(contains(environ_text, "CRONWHEEL_ACCESS_TOKEN_HINT=keep-me")) << environ_text;
  EXPECT_TRUE(contains(environ_text, "PATH=")) << environ_text;
}

TEST_F(ProcessSecretsTest, UndumpableProcessKeepsItsProcEntriesFromItsUserButItsChildrenRun) {
  Probe dumpable({}, {});
  Probe undumpable({"--undumpable"}, {});
  ASSERT_TRUE(dumpable.ready()) << dumpable.out();
  ASSERT_TRUE(undumpable.ready()) << undumpable.out();
  EXPECT_TRUE(contains(dumpable.out(), "dumpable=1\n")) << dumpable.out();
  EXPECT_TRUE(contains(undumpable.out(), "dumpable=0\n")) << undumpable.out();
  // A child of the non-dumpable process (exec gives it its own flag back) runs, and its output
  // reaches its parent through the pipe.
  EXPECT_TRUE(contains(undumpable.out(), "child: child-ran\n")) << undumpable.out();
  EXPECT_TRUE(contains(undumpable.out(), "child: exit code 0\n")) << undumpable.out();

  if (::geteuid() == 0) {
    // Root reads every process's entries (CAP_SYS_PTRACE): only the flag itself can be checked.
    GTEST_SKIP() << "running as root, which may read a non-dumpable process's /proc entries; "
                    "run as another user to see them refused";
  }
  EXPECT_TRUE(contains(dumpable.out(), "child: parent-environ=readable\n")) << dumpable.out();
  EXPECT_TRUE(contains(undumpable.out(), "child: parent-environ=unreadable\n")) << undumpable.out();
  bool readable = true;
  proc_file(undumpable.pid(), "environ", readable);
  EXPECT_FALSE(readable) << "this test process has the probe's user";
}

TEST(HideOptionValuesTest, HidesBothFormsWhereverTheyAppearAndNothingElse) {
  std::vector<std::string> args = {"prog",           "--access-token", "a b",  "-x",
                                   "--access-token=c=d", "--access-tokens=keep", "--access-token=",
                                   "--", "--access-token"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string_view options[] = {"--access-token"};
  EXPECT_EQ(hide_option_values(static_cast<int>(args.size()), argv.data(), options), 2u);
  EXPECT_EQ(std::string(argv[2]), "xxx");
  EXPECT_EQ(std::string(argv[4]), "--access-token=xxx");
  EXPECT_EQ(std::string(argv[5]), "--access-tokens=keep");
  EXPECT_EQ(std::string(argv[6]), "--access-token=");
  // The last one has no value to hide; argv[0] is never looked at.
  EXPECT_EQ(std::string(argv[8]), "--access-token");
  EXPECT_EQ(std::string(argv[0]), "prog");
  EXPECT_EQ(std::string(argv[3]), "-x");
}

TEST(EraseEnvironmentVariablesTest, RemovesTheVariableFromTheEnvironment) {
  ::setenv("CRONWHEEL_TEST_ERASED_SECRET", "value", 1);
  ::setenv("CRONWHEEL_TEST_ERASED_SECRET_NOT", "kept", 1);
  const std::string_view names[] = {"CRONWHEEL_TEST_ERASED_SECRET", "", "A=B"};
  // Set by setenv, so not in the block the process started with: nothing there to overwrite.
  EXPECT_EQ(erase_environment_variables(names), 0u);
  EXPECT_EQ(std::getenv("CRONWHEEL_TEST_ERASED_SECRET"), nullptr);
  ASSERT_NE(std::getenv("CRONWHEEL_TEST_ERASED_SECRET_NOT"), nullptr);
  EXPECT_EQ(std::string(std::getenv("CRONWHEEL_TEST_ERASED_SECRET_NOT")), "kept");
  ::unsetenv("CRONWHEEL_TEST_ERASED_SECRET_NOT");
}

}  // namespace
}  // namespace cronwheel::executor
