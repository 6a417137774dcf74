// cronwheel-admin: an admin node of the cronwheel scheduling center, and its tools.
//
//   cronwheel-admin [serve]    run the node (migrates the schema first)
//   cronwheel-admin migrate    apply pending migrations and exit
//   cronwheel-admin cron next  print the next fire times of a cron expression

#include <signal.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <set>
#include <string_view>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "admin/admin_config.h"
#include "admin/cli/cron_command.h"
#include "admin/server/admin_server.h"
#include "admin/server/schema_setup.h"
#include "common/cli/config_sources.h"
#include "common/util/clock.h"
#include "common/util/log_format.h"
#include "common/util/process_secrets.h"

namespace {

using namespace cronwheel;
using namespace cronwheel::admin;

constexpr const char* kVersion = "0.1.0";

int migrate(const AdminConfig& config) {
  migrate_schema(config);
  return 0;
}

int serve(AdminConfig config) {
  // Signals are taken synchronously by this thread (sigwait); every thread started below
  // inherits the mask, so none of them is interrupted by SIGTERM/SIGINT.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  AdminServer server(config, kVersion);  // validates the listen address before migrating
  migrate(config);
  server.start();
  spdlog::info("cronwheel-admin {} node {} listening on http://{}:{}/", kVersion, server.node_id(),
               server.host(), server.port());

  int received = 0;
  sigwait(&signals, &received);
  spdlog::info("received {}, shutting down", received == SIGTERM ? "SIGTERM" : "SIGINT");
  server.stop();
  spdlog::info("stopped");
  return 0;
}

// The database URL (which may hold a password), the access token and the bootstrap password,
// in every form they are read from: once read, they are kept from other processes of this
// user (see process_secrets.h). Called before any thread starts.
void hide_secrets(int argc, char** argv) {
  constexpr std::string_view kVariables[] = {"CRONWHEEL_DB_URL", "CRONWHEEL_ACCESS_TOKEN", "CRONWHEEL_ADMIN_PASSWORD",
                                             "CRONWHEEL_SMTP_PASSWORD"};
  constexpr std::string_view kOptions[] = {"--db-url", "--access-token"};
  cronwheel::common::erase_environment_variables(kVariables);
  cronwheel::common::hide_option_values(argc, argv, kOptions);
  if (!cronwheel::common::make_undumpable()) {
    spdlog::warn("cannot make this process non-dumpable ({}): processes of its user can read its memory",
                 std::strerror(errno));
  }
}

}  // namespace

int main(int argc, char** argv) {
  cronwheel::common::use_escaping_log_format();
  CLI::App app{"cronwheel-admin: an admin node of the cronwheel distributed cron scheduler"};
  app.set_version_flag("--version", kVersion);
  app.require_subcommand(0, 1);

  AdminConfig config;
  std::string config_path;
  // Serving is the default: the options are the top level's, and `serve` and `migrate` take
  // them after their name too (fallthrough). Each option exists once: two copies bound to one
  // variable let one copy's environment variable overwrite the other's flag.
  add_admin_options(app, config, config_path);
  // docs/configuration.md's table of these options (scripts/gen-config-docs.sh); not in --help.
  bool print_options = false;
  app.add_flag("--print-option-table", print_options)->group("");
  app.add_subcommand("serve", "Run an admin node (the default)")->fallthrough();
  auto* migrate_cmd =
      app.add_subcommand("migrate", "Apply pending schema migrations and exit (takes --db-url, --db-wait, --config)")
          ->fallthrough();

  auto* cron_cmd = app.add_subcommand("cron", "Cron expression tools");
  cron_cmd->require_subcommand(1);
  CronNextOptions next;
  std::int64_t from_ms = -1;
  auto* next_cmd = cron_cmd->add_subcommand("next", "Print the next fire times of a cron expression");
  next_cmd->add_option("EXPR", next.expression, "Quartz cron expression, e.g. '0 15 10 ? * 6L'")->required();
  next_cmd->add_option("--tz", next.time_zone, "IANA time zone")->capture_default_str();
  next_cmd->add_option("--from", from_ms, "Start instant, epoch milliseconds (default: now)");
  next_cmd->add_option("--count", next.count, "How many fire times")->capture_default_str();

  if (auto status = cronwheel::common::parse_command_line(app, argc, argv, std::cerr)) return *status;

  const std::set<std::string> secrets = {"--db-url", "--access-token"};
  if (print_options) {
    cronwheel::common::print_option_table(app, secrets, std::cout);
    return 0;
  }
  if (*next_cmd) {
    if (*next_cmd->get_option("--from")) next.from_ms = from_ms;
    return run_cron_next(next, common::SystemClock::instance().now_ms(), std::cout, std::cerr);
  }

  try {
    cronwheel::common::apply_config_sources(app, {config_path, secrets});
  } catch (const cronwheel::common::ConfigError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }

  // A connection string libpq cannot read never becomes reachable: say so now, not after the
  // wait for the database.
  if (auto problem = db_url_problem(config.db_url)) {
    std::cerr << "--db-url: " << *problem << "\n";
    return 2;
  }
  if (auto problem = admin_config_problem(config)) {
    std::cerr << *problem << "\n";
    return 2;
  }
  try {
    read_admin_secrets(config);
  } catch (const cronwheel::common::ConfigError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  hide_secrets(argc, argv);

  spdlog::set_level(spdlog::level::from_str(config.log_level));
  cronwheel::common::use_log_format(config.log_format);
  try {
    if (*migrate_cmd) return migrate(config);
    return serve(config);
  } catch (const std::exception& e) {
    spdlog::critical("{}", e.what());
    return 1;
  }
}
