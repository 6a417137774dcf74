#include "cli/command_line.h"

#include <algorithm>
#include <exception>
#include <ostream>
#include <sstream>
#include <utility>

#include "cli/arguments.h"
#include "cli/http_transport.h"
#include "cli/version.h"

namespace cronwheel::cli {

namespace {

constexpr const char* kGlobalHelp =
    "GLOBAL OPTIONS (before or after the command; see cronwheel --help)\n"
    "  --url URL, --token TOKEN, --token-file FILE, --config FILE, -o/--output table|json|yaml,\n"
    "  --timeout SECONDS\n";

constexpr const char* kExitHelp =
    "EXIT STATUS\n"
    "  0  success\n"
    "  1  the operation failed (an error from the server, no such object, no answer)\n"
    "  2  bad usage (unknown option, missing argument, bad value or settings)\n";

// The chosen command: the deepest subcommand the command line named.
const CLI::App* chosen(const CLI::App& app) {
  const CLI::App* at = &app;
  for (auto subcommands = at->get_subcommands(); !subcommands.empty(); subcommands = at->get_subcommands()) {
    at = subcommands.front();
  }
  return at;
}

// "jobs get" for the command `app`, from its parents' names (the program's left out).
std::string path_of(const CLI::App* app) {
  std::string path;
  for (const CLI::App* at = app; at != nullptr && at->get_parent() != nullptr; at = at->get_parent()) {
    path = path.empty() ? at->get_name() : at->get_name() + " " + path;
  }
  return path;
}

std::string names_of_commands(const CLI::App& group) {
  std::string names;
  for (const CLI::App* command : group.get_subcommands({})) {
    if (!names.empty()) names += ", ";
    names += command->get_name();
  }
  return names;
}

}  // namespace

TransportFactory http_transports() {
  return [](const Settings& settings, std::chrono::milliseconds timeout) -> std::unique_ptr<Transport> {
    HttpTransportOptions options;
    options.token = settings.token;
    options.connect_timeout = std::min(timeout, std::chrono::milliseconds(10'000));
    options.read_timeout = timeout;
    options.user_agent = std::string("cronwheel/") + kVersion;
    return std::make_unique<HttpTransport>(settings.url, std::move(options));
  };
}

Context::Context(CommandLine& command_line, std::string command)
    : command_line_(command_line), command_(std::move(command)) {}

std::ostream& Context::out() { return command_line_.io_.out; }
std::ostream& Context::err() { return command_line_.io_.err; }
OutputFormat Context::format() const { return command_line_.format_; }

const Settings& Context::settings() {
  if (!settings_) {
    settings_ = std::make_unique<Settings>(resolve_settings(command_line_.flags_, command_line_.io_.environment));
  }
  return *settings_;
}

ApiClient& Context::api() {
  if (!api_) {
    const Settings& resolved = settings();
    auto transport = command_line_.io_.transports(resolved, std::chrono::seconds(command_line_.timeout_seconds_));
    api_ = std::make_unique<ApiClient>(std::move(transport), !resolved.token.empty());
  }
  return *api_;
}

bool Context::pause(std::chrono::milliseconds duration) { return command_line_.io_.pause(duration); }
std::chrono::steady_clock::time_point Context::now() { return command_line_.io_.now(); }

void Context::report(const std::string& subject, const CliError& error) {
  CliError copy = error;
  if (copy.subject().empty()) copy.set_subject(subject);
  err() << error_line(command_, copy) << "\n";
}

CommandLine::CommandLine(Io io) : io_(std::move(io)), app_("cronwheel: the command-line client of a cronwheel admin", "cronwheel") {
  app_.fallthrough();  // global options after the command's name too: `cronwheel jobs list -o json`
  app_.set_version_flag("--version", std::string("cronwheel ") + kVersion);
  app_.footer(std::string("SETTINGS\n"
                          "  The admin's URL and an API token come from the flags, else the environment\n"
                          "  (CRONWHEEL_URL, CRONWHEEL_TOKEN, CRONWHEEL_TOKEN_FILE), else the settings file\n"
                          "  ($XDG_CONFIG_HOME/cronwheel/cli.toml or ~/.config/cronwheel/cli.toml, keys url,\n"
                          "  token, token-file). Create a token in the console or with POST /api/v1/tokens.\n\n"
                          "EXAMPLES\n"
                          "  export CRONWHEEL_URL=https://cron.example.com CRONWHEEL_TOKEN_FILE=~/.cronwheel-token\n"
                          "  cronwheel jobs list --group billing\n"
                          "  cronwheel jobs trigger billing/nightly-invoices --param '--dry-run'\n"
                          "  cronwheel runs logs -f 1234\n\n") +
              kExitHelp);

  const std::string settings_group = "Settings";
  app_.add_option("--url", url_, "The admin's base URL (default http://127.0.0.1:8080)")
      ->type_name("URL")
      ->group(settings_group)
      ->check(bounded_text_check());
  auto* token = app_.add_option("--token", token_, "API token, sent as Authorization: Bearer")
                    ->type_name("TOKEN")
                    ->group(settings_group)
                    ->check(bounded_text_check());
  auto* token_file = app_.add_option("--token-file", token_file_, "File whose first line is the API token")
                         ->type_name("FILE")
                         ->group(settings_group)
                         ->check(bounded_text_check());
  app_.add_option("--config", config_, "Settings file (default ~/.config/cronwheel/cli.toml)")
      ->type_name("FILE")
      ->group(settings_group)
      ->check(bounded_text_check());
  token->excludes(token_file);
  app_.add_option("-o,--output", output_, "Output: table (for people), json or yaml (the API's objects)")
      ->type_name("FORMAT")
      ->check(CLI::IsMember({"table", "json", "yaml"}))
      ->capture_default_str()
      ->group("Output");
  app_.add_option("--timeout", timeout_seconds_, "Seconds to wait for the server's answer")
      ->type_name("SECONDS")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str()
      ->group("Output");
}

CLI::App* CommandLine::add_group(const std::string& name, const std::string& description) {
  CLI::App* group = app_.add_subcommand(name, description);
  group->footer(kExitHelp);
  return group;
}

CLI::App* CommandLine::add_command(CLI::App& parent, const std::string& name, const std::string& description,
                                   const std::string& help, Action action) {
  CLI::App* command = parent.add_subcommand(name, description);
  command->footer(help + (help.empty() ? "" : "\n") + kGlobalHelp + "\n" + kExitHelp);
  actions_[command] = std::move(action);
  return command;
}

int CommandLine::run(std::vector<std::string> args) {
  std::reverse(args.begin(), args.end());  // CLI11 takes them last first
  try {
    app_.parse(args);
  } catch (const CLI::CallForHelp& e) {
    return app_.exit(e, io_.out, io_.err);
  } catch (const CLI::CallForAllHelp& e) {
    return app_.exit(e, io_.out, io_.err);
  } catch (const CLI::CallForVersion& e) {
    return app_.exit(e, io_.out, io_.err);
  } catch (const CLI::ParseError& e) {
    const std::string path = path_of(chosen(app_));
    io_.err << "cronwheel: " << (path.empty() ? "" : path + ": ") << one_line(e.what()) << "\n";
    return kExitUsage;
  }

  auto flag = [this](const char* name, const std::string& value) -> std::optional<std::string> {
    if (app_.get_option(name)->count() == 0) return std::nullopt;
    return value;
  };
  flags_.url = flag("--url", url_);
  flags_.token = flag("--token", token_);
  flags_.token_file = flag("--token-file", token_file_);
  flags_.config = flag("--config", config_);
  format_ = parse_output_format(output_);

  const CLI::App* command = chosen(app_);
  const std::string path = path_of(command);
  auto action = actions_.find(command);
  if (action == actions_.end()) {
    io_.err << "cronwheel: " << (path.empty() ? "" : path + ": ") << "a command is required: "
            << names_of_commands(*command) << " (see cronwheel " << (path.empty() ? "" : path + " ") << "--help)\n";
    return kExitUsage;
  }

  Context context(*this, path);
  int status = kExitOk;
  try {
    status = action->second(context);
  } catch (const CliError& e) {
    io_.err << error_line(path, e) << "\n";
    status = e.status();
  } catch (const std::exception& e) {
    // A bug, or a resource the system refused (memory): still one line and a failure.
    io_.err << error_line(path, CliError(kExitFailed, e.what())) << "\n";
    status = kExitFailed;
  }
  io_.out.flush();
  if (!io_.out) {
    io_.err << "cronwheel: cannot write the output\n";
    if (status == kExitOk) status = kExitFailed;
  }
  return status;
}

}  // namespace cronwheel::cli
