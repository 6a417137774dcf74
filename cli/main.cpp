// cronwheel: the command-line client of a cronwheel admin's REST API (docs/cli.md).
//
//   cronwheel jobs list|get|start|stop|delete|trigger
//   cronwheel groups list|pause|resume
//   cronwheel jobs backfill, backfills list|get|cancel
//   cronwheel runs list|get|logs|kill
//   cronwheel workflows list|get|start|stop|delete|trigger|check
//   cronwheel workflow-runs list|get|cancel|rerun
//   cronwheel calendars list|get|create|apply|delete|import|export|days
//   cronwheel export, apply, import xxl-job
//   cronwheel version
//
// Adding a command: write cli/<name>_command.cpp with a function
//   void add_<name>_command(CommandLine& command_line)
// that adds it with command_line.add_command(command_line.app(), "<name>", description, help,
// action) (or add_group first for a family of commands) and binds its options on the CLI::App
// that answers; declare the function in cli/commands.h, list the file in cli/CMakeLists.txt's
// cronwheel_client sources, and call it below. The action gets a Context: ctx.api() for the
// REST API (ApiClient::request for bodies that are not JSON), ctx.format() and ctx.out() for
// what to print; it answers the exit status or throws CliError (cli_error.h).

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <iostream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "common/util/process_secrets.h"

namespace {

using namespace cronwheel::cli;

std::atomic<bool> interrupted{false};

extern "C" void on_interrupt(int) { interrupted.store(true); }

// Once a command waits (runs logs -f, workflows trigger --wait, jobs backfill --wait), Ctrl-C ends the wait at its next
// step instead of killing the process mid-line, and the command says so in its exit status; a
// second Ctrl-C kills it at once (SA_RESETHAND). Commands that never wait keep the default: Ctrl-C ends them.
void catch_interrupt() {
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND;
  sigaction(SIGINT, &action, nullptr);
}

bool pause_unless_interrupted(std::chrono::milliseconds duration) {
  static const bool caught = (catch_interrupt(), true);
  (void)caught;
  constexpr auto kStep = std::chrono::milliseconds(50);
  const auto deadline = std::chrono::steady_clock::now() + duration;
  while (!interrupted.load()) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return true;
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(kStep, deadline - now));
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  // The token and the database URL (with its password) given on the command line are kept from
  // `ps` (the parsed copy above is used).
  constexpr std::string_view kSecretOptions[] = {"--token", "--mysql"};
  cronwheel::common::hide_option_values(argc, argv, kSecretOptions);

  CommandLine command_line(Io{std::cout, std::cerr, process_environment(), http_transports(), pause_unless_interrupted});
  add_jobs_commands(command_line);
  add_groups_commands(command_line);
  add_runs_commands(command_line);
  add_backfills_commands(command_line);
  add_workflows_commands(command_line);
  add_workflow_runs_commands(command_line);
  add_calendars_commands(command_line);
  add_export_command(command_line);
  add_apply_command(command_line);
  add_import_commands(command_line);
  add_version_command(command_line);
  return command_line.run(std::move(args));
}
