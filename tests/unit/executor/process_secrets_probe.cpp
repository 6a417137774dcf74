// A process that hides its secrets as cronwheel-executor does, for process_secrets_test to look
// at from outside (its /proc entries can only be judged from another process).
//
//   executor_process_secrets_probe [--undumpable] [arguments...]
//
// Erases CRONWHEEL_ACCESS_TOKEN from its environment and hides the values of --access-token in
// its arguments, makes itself non-dumpable when asked, starts a shell as a script would be
// started (run_process) that says whether it can read its parent's /proc/<pid>/environ, then
// prints, one a line:
//
//   getenv=<CRONWHEEL_ACCESS_TOKEN, or (unset)>
//   erased=<entries erased from the environment block> hidden=<argument values hidden>
//   dumpable=<prctl(PR_GET_DUMPABLE)>
//   child: child-ran
//   child: parent-environ=readable|unreadable
//   child: <how the child ended>
//   ready
//
// and waits for a signal (SIGTERM ends it).
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "common/util/process_secrets.h"
#include "executor/src/run_log.h"
#include "executor/src/script_runner.h"

namespace {

using namespace cronwheel::executor;
using cronwheel::common::erase_environment_variables;
using cronwheel::common::hide_option_values;
using cronwheel::common::make_undumpable;

// The child's output, straight to stdout.
class StdoutLog final : public RunLogWriter {
 public:
  void append(std::string_view text) override {
    std::string line = "child: " + std::string(text);
    while (!line.empty() && line.back() == '\n') line.pop_back();
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  }
};

constexpr std::string_view kVariables[] = {"CRONWHEEL_ACCESS_TOKEN"};
constexpr std::string_view kOptions[] = {"--access-token"};

}  // namespace

int main(int argc, char** argv) {
  const bool undumpable = argc > 1 && std::strcmp(argv[1], "--undumpable") == 0;
  const std::size_t erased = erase_environment_variables(kVariables);
  const std::size_t hidden = hide_option_values(argc, argv, kOptions);
  if (undumpable && !make_undumpable()) {
    std::perror("prctl");
    return 1;
  }
  const char* token = std::getenv("CRONWHEEL_ACCESS_TOKEN");
  std::printf("getenv=%s\nerased=%zu hidden=%zu\ndumpable=%d\n", token != nullptr ? token : "(unset)",
              erased, hidden, ::prctl(PR_GET_DUMPABLE, 0, 0, 0, 0));
  std::fflush(stdout);

  StdoutLog log;
  const ScriptOutcome outcome = run_process(
      {"/bin/sh", "-c",
       "echo child-ran; if cat /proc/$PPID/environ > /dev/null 2>&1; then "
       "echo parent-environ=readable; else echo parent-environ=unreadable; fi"},
      log, {});
  std::printf("child: %s\nready\n", outcome.message.c_str());
  std::fflush(stdout);
  for (;;) ::pause();
}
