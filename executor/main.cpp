// cronwheel-executor: the standalone executor. It registers with the cronwheel admin (or an
// XXL-JOB 2.4 admin), runs script jobs (GLUE_SHELL, GLUE_PYTHON, ...) and the built-in handlers
// shell, http, echo, sleep, fail and sharding (executor/src/builtin_handlers.h).
//
//   cronwheel-executor --admin http://127.0.0.1:8080/ --app-name demo
//
// Every flag has an environment variable (CRONWHEEL_...; --help lists them); a flag given on the
// command line wins. A flag that cannot work exits 2 with a one-line reason on stderr. SIGTERM
// or SIGINT stops the executor cleanly (runs are stopped and reported, results delivered or kept
// on disk, the registration removed) and exits 0; a second signal while stopping exits at once.
//
// Scripts are code the admin sends; they do not get the executor's secrets. Once the flags are
// read the access token is erased from the process's environment block and command line (what
// /proc/<pid>/environ and /proc/<pid>/cmdline show), and the process makes itself non-dumpable,
// so a script of the same user can neither read its memory nor its /proc entries; scripts get no
// CRONWHEEL_* variable of this process (only their run's own, ExecutorOptions::allow_scripts in
// cronwheel/executor.h lists them). A secret given as a file (CRONWHEEL_ACCESS_TOKEN_FILE) is read once, here;
// only --run-as (scripts as another user, who cannot read that file) keeps scripts from reading it
// themselves, and without it a warning says so at start.

#include <signal.h>

#include <cerrno>
#include <cstdio>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "common/cli/config_sources.h"
#include "common/util/log_format.h"
#include "cronwheel/executor.h"
#include "executor/src/builtin_handlers.h"
#include "common/util/process_secrets.h"

namespace {

using namespace cronwheel::executor;
using cronwheel::common::erase_environment_variables;
using cronwheel::common::hide_option_values;
using cronwheel::common::make_undumpable;

constexpr const char* kVersion = "0.1.0";

struct Flags {
  std::string admin;
  std::string app_name;
  std::string listen = "0.0.0.0:9999";
  std::string address;
  std::string access_token;
  std::string log_dir = ExecutorOptions{}.log_dir;
  int log_retention_days = ExecutorOptions{}.log_retention_days;
  int callback_retry_seconds =
      static_cast<int>(std::chrono::duration_cast<std::chrono::seconds>(ExecutorOptions{}.callback_retry_interval).count());
  int registry_interval_seconds = static_cast<int>(ExecutorOptions{}.registry_interval.count());
  std::size_t max_undelivered_results = ExecutorOptions{}.max_undelivered_results;
  std::size_t max_run_log_bytes = ExecutorOptions{}.max_run_log_bytes;
  std::size_t max_queued_runs_per_job = ExecutorOptions{}.max_queued_runs_per_job;
  std::size_t max_job_threads = ExecutorOptions{}.max_job_threads;
  bool lead_dispatch = ExecutorOptions{}.lead_dispatch;
  std::int64_t max_clock_offset_ms = ExecutorOptions{}.max_clock_offset.count();
  std::size_t max_held_fires = ExecutorOptions{}.max_held_fires;
  bool allow_scripts = true;  // the standalone executor exists to run scripts
  std::string run_as;
  std::string http_allow_hosts;
  std::string log_level = "info";
  std::string log_format = "text";
};

// A flag value that cannot work: exit 2.
struct BadFlag : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::vector<std::string> split_list(std::string_view text) {
  std::vector<std::string> items;
  std::size_t start = 0;
  for (;;) {
    const auto comma = text.find(',', start);
    std::string_view item = text.substr(start, comma - start);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty()) items.emplace_back(item);
    if (comma == std::string_view::npos) return items;
    start = comma + 1;
  }
}

// "host:port" (IPv6 in brackets: "[::]:9999").
void parse_listen(const std::string& listen, ExecutorOptions& options) {
  const auto colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == listen.size()) {
    throw BadFlag("--listen '" + listen + "' is not host:port (e.g. 0.0.0.0:9999)");
  }
  std::string host = listen.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  int port = -1;
  try {
    std::size_t used = 0;
    port = std::stoi(listen.substr(colon + 1), &used);
    if (used != listen.size() - colon - 1) port = -1;
  } catch (const std::exception&) {
    port = -1;
  }
  if (port < 0 || port > 65535) {
    throw BadFlag("--listen '" + listen + "': the port must be 0-65535 (0: any free port)");
  }
  options.listen_host = host;
  options.listen_port = port;
}

// The library names its options ("ExecutorOptions.app_name: ..."); an operator knows the flags.
std::string in_flag_terms(std::string message) {
  static const std::pair<std::string_view, std::string_view> kNames[] = {
      {"ExecutorOptions.admin_addresses", "--admin"},
      {"ExecutorOptions.app_name", "--app-name"},
      {"ExecutorOptions.listen_host", "--listen"},
      {"ExecutorOptions.listen_port", "--listen"},
      {"ExecutorOptions.address", "--address"},
      {"ExecutorOptions.log_dir", "--log-dir"},
      {"ExecutorOptions.log_retention_days", "--log-retention-days"},
      {"ExecutorOptions.callback_retry_interval", "--callback-retry-seconds"},
      {"ExecutorOptions.registry_interval", "--registry-interval-seconds"},
      {"ExecutorOptions.run_as", "--run-as"},
      {"ExecutorOptions.max_run_log_bytes", "--max-run-log-bytes"},
      {"ExecutorOptions.max_queued_runs_per_job", "--max-queued-runs-per-job"},
      {"ExecutorOptions.max_job_threads", "--max-job-threads"},
      {"ExecutorOptions.max_clock_offset", "--max-clock-offset-ms"},
      {"ExecutorOptions.max_held_fires", "--max-held-fires"},
  };
  for (const auto& [option, flag] : kNames) {
    if (message.starts_with(option)) return std::string(flag) + message.substr(option.size());
  }
  return message;
}

ExecutorOptions executor_options(const Flags& flags) {
  ExecutorOptions options;
  options.admin_addresses = split_list(flags.admin);
  if (options.admin_addresses.empty()) throw BadFlag("--admin: no admin URL given");
  options.app_name = flags.app_name;
  parse_listen(flags.listen, options);
  options.address = flags.address;
  options.access_token = flags.access_token;
  options.log_dir = flags.log_dir;
  options.log_retention_days = flags.log_retention_days;
  options.callback_retry_interval = std::chrono::seconds(flags.callback_retry_seconds);
  options.registry_interval = std::chrono::seconds(flags.registry_interval_seconds);
  options.max_undelivered_results = flags.max_undelivered_results;
  options.max_run_log_bytes = flags.max_run_log_bytes;
  options.max_queued_runs_per_job = flags.max_queued_runs_per_job;
  options.max_job_threads = flags.max_job_threads;
  options.lead_dispatch = flags.lead_dispatch;
  options.max_clock_offset = std::chrono::milliseconds(flags.max_clock_offset_ms);
  options.max_held_fires = flags.max_held_fires;
  options.allow_scripts = flags.allow_scripts;
  options.run_as = flags.run_as;
  return options;
}

// The secrets given on the command line or in the environment, in every form CLI11 reads them.
constexpr std::string_view kSecretVariables[] = {"CRONWHEEL_ACCESS_TOKEN"};
constexpr std::string_view kSecretOptions[] = {"--access-token"};

// What a script (a process of the same user, or of --run-as's) could otherwise read of the
// secrets: see process_secrets.h. Called once the flags are read, before any thread starts.
void hide_secrets(int argc, char** argv) {
  erase_environment_variables(kSecretVariables);
  hide_option_values(argc, argv, kSecretOptions);
  if (!make_undumpable()) {
    spdlog::warn("cannot make this process non-dumpable ({}): scripts running as its user can "
                 "read its memory",
                 std::strerror(errno));
  }
}

int serve(const Flags& flags) {
  // Signals are taken synchronously (sigwait) by this thread; every thread started below
  // inherits the mask, so none of them is interrupted by SIGTERM/SIGINT. Scripts start with
  // every signal unblocked and at its default (the script runner resets them).
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  // A peer closing a connection is an error code on the write, not the end of the process.
  ::signal(SIGPIPE, SIG_IGN);

  std::unique_ptr<Executor> executor;
  std::string listen_host;
  BuiltinHandlerOptions builtins;
  try {
    ExecutorOptions options = executor_options(flags);
    listen_host = options.listen_host;
    executor = std::make_unique<Executor>(std::move(options));
    builtins.allow_shell = flags.allow_scripts;
    try {
      builtins.http_allow_hosts = HttpAllowList::parse(flags.http_allow_hosts);
    } catch (const std::invalid_argument& e) {
      throw BadFlag(std::string("--http-allow-hosts: ") + e.what());
    }
  } catch (const BadFlag& e) {
    std::cerr << "cronwheel-executor: " << e.what() << "\n";
    return 2;
  } catch (const std::invalid_argument& e) {
    std::cerr << "cronwheel-executor: " << in_flag_terms(e.what()) << "\n";
    return 2;
  }
  add_builtin_handlers(*executor, builtins);

  try {
    executor->start();
  } catch (const std::exception& e) {
    spdlog::critical("cannot start: {}", e.what());
    return 1;
  }
  const std::string shown_host =
      listen_host.find(':') != std::string::npos ? "[" + listen_host + "]" : listen_host;
  spdlog::info("cronwheel-executor {} app {} listening on http://{}:{}/", kVersion, flags.app_name,
               shown_host, executor->port());
  spdlog::info("advertised to the admin as {}; scripts {}; http handler hosts: {}",
               executor->address(), flags.allow_scripts ? "allowed" : "not allowed",
               flags.http_allow_hosts.empty() ? "none" : flags.http_allow_hosts);

  int received = 0;
  sigwait(&signals, &received);
  spdlog::info("received {}, shutting down", received == SIGTERM ? "SIGTERM" : "SIGINT");
  // A second signal means "now": the operator gives up on a clean stop.
  std::thread([signals]() {
    int again = 0;
    sigwait(&signals, &again);
    std::fputs("cronwheel-executor: second signal while stopping, exiting at once\n", stderr);
    std::_Exit(1);
  }).detach();
  executor->stop();
  spdlog::info("stopped");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  cronwheel::common::use_escaping_log_format();
  CLI::App app{"cronwheel-executor: runs cron jobs for a cronwheel (or XXL-JOB 2.4) admin"};
  app.set_version_flag("--version", kVersion);
  Flags flags;
  std::string config_path;
  app.add_option("--config", config_path,
                 "Settings file (TOML or INI, keys named as the options: app-name = \"...\"); flags and the "
                 "environment override it")
      ->envname("CRONWHEEL_CONFIG");
  // Required, from any source (checked once the configuration file was read).
  app.add_option("--admin", flags.admin, "Admin base URL(s), comma-separated: http://host:port/ (required)")
      ->envname("CRONWHEEL_ADMIN_ADDRESSES");
  app.add_option("--app-name", flags.app_name, "Executor group app name (registryKey), 4-64 characters (required)")
      ->envname("CRONWHEEL_APP_NAME");
  app.add_option("--listen", flags.listen, "HTTP listen address host:port (port 0: any free port)")
      ->envname("CRONWHEEL_EXECUTOR_LISTEN")
      ->capture_default_str();
  app.add_option("--address", flags.address,
                 "URL the admin calls this executor at (default http://<first non-loopback IPv4>:<port>/; set it behind NAT "
                 "or in containers)")
      ->envname("CRONWHEEL_EXECUTOR_ADDRESS");
  app.add_option("--access-token", flags.access_token, "Shared secret with the admin (XXL-JOB-ACCESS-TOKEN): required on its calls, sent with ours. Prefer the "
                 "environment or its _FILE: a command line is visible to every local user")
      ->envname("CRONWHEEL_ACCESS_TOKEN");
  app.add_option("--log-dir", flags.log_dir, "Run logs, script files and undelivered results")
      ->envname("CRONWHEEL_LOG_DIR")
      ->capture_default_str();
  app.add_option("--log-retention-days", flags.log_retention_days,
                 "Days of run logs kept (0 keeps all)")
      ->envname("CRONWHEEL_LOG_RETENTION_DAYS")
      ->check(CLI::Range(0, 36500))
      ->capture_default_str();
  app.add_option("--callback-retry-seconds", flags.callback_retry_seconds,
                 "While no admin accepts results, they are kept on disk and offered again this often")
      ->envname("CRONWHEEL_CALLBACK_RETRY_SECONDS")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
  // At most 60 s: an admin takes a registration older than 90 s for a dead executor.
  app.add_option("--registry-interval-seconds", flags.registry_interval_seconds,
                 "The executor registers with the admin this often (each registration also measures its clock's "
                 "offset from the admin's); at most 60, as the admin drops registrations older than 90 s")
      ->envname("CRONWHEEL_REGISTRY_INTERVAL_SECONDS")
      ->check(CLI::Range(1, 60))
      ->capture_default_str();
  app.add_option("--max-undelivered-results", flags.max_undelivered_results,
                 "At most this many results wait for an admin (in memory and in --log-dir); at the limit /run is refused "
                 "(the admin retries it like a failed trigger)")
      ->envname("CRONWHEEL_MAX_UNDELIVERED_RESULTS")
      ->check(CLI::Range(std::size_t{1}, std::size_t{100'000'000}))
      ->capture_default_str();
  app.add_option("--max-run-log-bytes", flags.max_run_log_bytes,
                 "A run's log stops at this size (a number of bytes, or with a unit: 16MiB, 512KiB): one line says it "
                 "was truncated, the rest of the run's output is dropped, and its result says so")
      ->envname("CRONWHEEL_MAX_RUN_LOG_BYTES")
      ->transform(CLI::AsSizeValue(false))
      ->check(CLI::Range(std::size_t{4096}, std::size_t{1} << 40))
      ->capture_default_str();
  app.add_option("--max-queued-runs-per-job", flags.max_queued_runs_per_job,
                 "Runs that may wait for one job's thread; beyond, /run is refused with the reason (the run's result)")
      ->envname("CRONWHEEL_MAX_QUEUED_RUNS_PER_JOB")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1'000'000}))
      ->capture_default_str();
  app.add_option("--max-job-threads", flags.max_job_threads,
                 "Jobs with runs executing or queued at once (one thread each); beyond, an idle job thread is ended or "
                 "/run is refused with the reason")
      ->envname("CRONWHEEL_MAX_JOB_THREADS")
      ->check(CLI::Range(std::size_t{1}, std::size_t{100'000}))
      ->capture_default_str();
  app.add_option("--lead-dispatch", flags.lead_dispatch,
                 "Take the fires of a coming second ahead of time from a cronwheel admin (POST /lead) and start each at its "
                 "instant on the admin's clock (true|false); offered only while the admin's clock is measured and within "
                 "--max-clock-offset-ms")
      ->envname("CRONWHEEL_LEAD_DISPATCH")
      ->default_str(flags.lead_dispatch ? "true" : "false");
  app.add_option("--max-clock-offset-ms", flags.max_clock_offset_ms,
                 "Lead dispatch is offered and taken only while the admin's clock is estimated at most this far from this "
                 "machine's")
      ->envname("CRONWHEEL_MAX_CLOCK_OFFSET_MS")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{60'000}))
      ->capture_default_str();
  app.add_option("--max-held-fires", flags.max_held_fires,
                 "Fires held for lead dispatch at once; beyond, a fire is refused and the admin sends it at its instant")
      ->envname("CRONWHEEL_MAX_HELD_FIRES")
      ->check(CLI::Range(std::size_t{1}, std::size_t{10'000'000}))
      ->capture_default_str();
  app.add_flag("--allow-scripts,!--no-scripts", flags.allow_scripts,
               "Run script jobs (GLUE_SHELL, GLUE_PYTHON, ...) and the shell handler (default: allowed). A script job runs "
               "whatever code the admin sends")
      ->envname("CRONWHEEL_ALLOW_SCRIPTS");
  app.add_option("--run-as", flags.run_as,
                 "User that script jobs and the shell handler run as, with its groups, from its home directory (needs root "
                 "or CAP_SETUID, CAP_SETGID and CAP_KILL; default: this process's user, which lets scripts read its files: "
                 "a warning says so at start)")
      ->envname("CRONWHEEL_RUN_AS");
  app.add_option("--http-allow-hosts", flags.http_allow_hosts,
                 "Hosts the http handler may call, comma-separated host (any port) or host:port, exact names (default: none, "
                 "every http run fails)")
      ->envname("CRONWHEEL_HTTP_ALLOW_HOSTS");
  app.add_option("--log-level", flags.log_level, "trace, debug, info, warn or error")
      ->envname("CRONWHEEL_LOG_LEVEL")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}))
      ->capture_default_str();
  app.add_option("--log-format", flags.log_format,
                 "text, or json: one JSON object a line (time, level, msg), for log shippers")
      ->envname("CRONWHEEL_LOG_FORMAT")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();

  // docs/configuration.md's table of these options (scripts/gen-config-docs.sh); not in --help.
  bool print_options = false;
  app.add_flag("--print-option-table", print_options)->group("");

  if (auto status = cronwheel::common::parse_command_line(app, argc, argv, std::cerr, "cronwheel-executor: ")) {
    return *status;
  }

  const std::set<std::string> secrets = {"--access-token"};
  if (print_options) {
    cronwheel::common::print_option_table(app, secrets, std::cout);
    return 0;
  }
  try {
    cronwheel::common::apply_config_sources(app, {config_path, secrets});
  } catch (const cronwheel::common::ConfigError& e) {
    std::cerr << "cronwheel-executor: " << e.what() << "\n";
    return 2;
  }
  for (const auto& [name, value] : {std::pair<const char*, const std::string*>{"--admin", &flags.admin},
                                    std::pair<const char*, const std::string*>{"--app-name", &flags.app_name}}) {
    if (value->empty()) {
      std::cerr << "cronwheel-executor: " << name << " is required (a flag, its environment variable or a key of "
                << "--config)\n";
      return 2;
    }
  }

  spdlog::set_level(spdlog::level::from_str(flags.log_level));
  cronwheel::common::use_log_format(flags.log_format);
  hide_secrets(argc, argv);
  try {
    return serve(flags);
  } catch (const std::exception& e) {
    spdlog::critical("{}", e.what());
    return 1;
  }
}
