#pragma once

// The `cronwheel` command line: the global options, the commands registered on it, and what a
// command gets when it runs (a Context). Commands live in files of their own (jobs_command.cpp,
// ...), each adding itself through one function (commands.h); main.cpp calls them.
//
// run() says every failure as one line on stderr and answers the exit status (cli_error.h):
// --help prints a command's help and answers 0; a usage error answers 2 before anything is
// sent; a command's CliError answers its status.

#include <chrono>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/api_client.h"
#include "cli/cli_error.h"
#include "cli/output.h"
#include "cli/settings.h"

namespace cronwheel::cli {

// Waits `duration`; false when interrupted (Ctrl-C) before or during the wait. A zero duration
// only asks whether an interrupt came.
using Pause = std::function<bool(std::chrono::milliseconds duration)>;
// The transport to the admin the settings name; `timeout` bounds the connect and each wait for
// answer bytes.
using TransportFactory =
    std::function<std::unique_ptr<Transport>(const Settings& settings, std::chrono::milliseconds timeout)>;
// A monotonic clock: what a command waiting against a deadline reads (workflows trigger --wait).
using SteadyNow = std::function<std::chrono::steady_clock::time_point()>;

// What the command line talks to: the real process's streams, environment, network and clock,
// or a test's.
struct Io {
  std::ostream& out;
  std::ostream& err;
  Environment environment;
  TransportFactory transports;
  Pause pause;
  SteadyNow now = [] { return std::chrono::steady_clock::now(); };
};

// HttpTransport for the settings (http_transport.h).
TransportFactory http_transports();

class CommandLine;

// What a running command uses. Settings are resolved, and the transport made, on the first
// call of api(), so commands that do not call the server (version) need no settings.
class Context {
 public:
  Context(CommandLine& command_line, std::string command);

  std::ostream& out();
  std::ostream& err();
  OutputFormat format() const;
  ApiClient& api();
  const Settings& settings();

  // Waits between polls (runs logs -f); false once Ctrl-C was pressed.
  bool pause(std::chrono::milliseconds duration);
  // Now, on the clock deadlines of waits are read on.
  std::chrono::steady_clock::time_point now();

  // Says `error` on stderr as the line for this command acting on `subject`: for commands that
  // go on after one of their objects failed (jobs start A B C).
  void report(const std::string& subject, const CliError& error);

  // Runs `body`; a CliError it throws without a subject gets `subject` (the object the command
  // was acting on), so its line reads "cronwheel: jobs get billing/nightly: no such job".
  template <typename Body>
  auto about(const std::string& subject, Body&& body) -> decltype(body()) {
    try {
      return body();
    } catch (CliError& e) {
      if (e.subject().empty()) e.set_subject(subject);
      throw;
    }
  }

  // The command's path: "jobs get".
  const std::string& command() const noexcept { return command_; }

 private:
  CommandLine& command_line_;
  std::string command_;
  std::unique_ptr<Settings> settings_;
  std::unique_ptr<ApiClient> api_;
};

// A command's work: answers the exit status, or throws CliError.
using Action = std::function<int(Context&)>;

class CommandLine {
 public:
  explicit CommandLine(Io io);
  CommandLine(const CommandLine&) = delete;
  CommandLine& operator=(const CommandLine&) = delete;

  CLI::App& app() noexcept { return app_; }

  // A group of commands ("jobs"); chosen alone it is a usage error naming its commands.
  CLI::App* add_group(const std::string& name, const std::string& description);

  // A command under `parent` (the app or a group) that runs `action` when the command line
  // chooses it. `help` is its man-page-like text after the options: ARGUMENTS, EXAMPLES and
  // the like; the global options and the exit status are added to it. Answers the command, to
  // add its arguments and options to.
  CLI::App* add_command(CLI::App& parent, const std::string& name, const std::string& description,
                        const std::string& help, Action action);

  // Parses `args` (without the program's name), runs the chosen command, and answers the exit
  // status.
  int run(std::vector<std::string> args);

 private:
  friend class Context;

  Io io_;
  CLI::App app_;
  std::map<const CLI::App*, Action> actions_;

  std::string url_, token_, token_file_, config_;  // the global flags, as given
  SettingFlags flags_;                              // which of them were given
  std::string output_ = "table";
  int timeout_seconds_ = 30;
  OutputFormat format_ = OutputFormat::kTable;
};

}  // namespace cronwheel::cli
