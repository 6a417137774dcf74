#include "admin/admin_config.h"

#include <cstdlib>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "common/cli/config_sources.h"

namespace cronwheel::admin {
namespace {

void add_server_options(CLI::App* cmd, AdminConfig& config, std::string& config_path) {
  cmd->add_option("--config", config_path,
                  "Settings file (TOML or INI, keys named as the options: db-url = \"...\"); flags and the "
                  "environment override it")
      ->envname("CRONWHEEL_CONFIG");
  cmd->add_option("--db-url", config.db_url, "PostgreSQL connection URL")
      ->envname("CRONWHEEL_DB_URL")
      ->capture_default_str();
  cmd->add_option("--db-wait", config.db_wait_seconds, "Seconds start-up waits for the database")
      ->envname("CRONWHEEL_DB_WAIT")
      ->check(CLI::Range(0, 3600))
      ->capture_default_str();
  cmd->add_option("--log-level", config.log_level, "trace, debug, info, warn or error")
      ->envname("CRONWHEEL_LOG_LEVEL")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}))
      ->capture_default_str();
  cmd->add_option("--log-format", config.log_format,
                  "text, or json: one JSON object a line (time, level, msg), for log shippers")
      ->envname("CRONWHEEL_LOG_FORMAT")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
}
void add_serve_options(CLI::App* cmd, AdminConfig& config) {
  cmd->add_option("--listen", config.listen, "HTTP listen address host:port (port 0: any free port)")
      ->envname("CRONWHEEL_LISTEN")
      ->capture_default_str();
  cmd->add_option("--node-id", config.node_id, "This node's name (default <hostname>:<port>)")
      ->envname("CRONWHEEL_NODE_ID");
  cmd->add_option("--web-dir", config.web_dir,
                  "The web console's built files, served at every path the API, /healthz and /metrics do not use (default: "
                  "../web or ../share/cronwheel/web beside the binary's directory)")
      ->envname("CRONWHEEL_WEB_DIR");
  cmd->add_option("--http-threads", config.http_threads, "HTTP worker threads")
      ->envname("CRONWHEEL_HTTP_THREADS")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  cmd->add_option("--http-max-connections", config.http_max_connections,
                  "Open HTTP connections at most; beyond, the oldest idle one is closed")
      ->envname("CRONWHEEL_HTTP_MAX_CONNECTIONS")
      ->check(CLI::Range(16, 1'000'000))
      ->capture_default_str();
  cmd->add_option("--http-max-connections-per-address", config.http_max_connections_per_address,
                  "Open HTTP connections per client address at most (behind a reverse proxy every client has its address: "
                  "raise it there)")
      ->envname("CRONWHEEL_HTTP_MAX_CONNECTIONS_PER_ADDRESS")
      ->check(CLI::Range(1, 1'000'000))
      ->capture_default_str();
  cmd->add_option("--db-pool-size", config.db_pool_size, "PostgreSQL connections of the node's pool")
      ->envname("CRONWHEEL_DB_POOL_SIZE")
      ->check(CLI::Range(1, 512))
      ->capture_default_str();
  cmd->add_option("--access-token", config.access_token,
                  "XXL-JOB-ACCESS-TOKEN for executors whose group sets none. Prefer the environment or its _FILE: a "
                  "command line is visible to every local user")
      ->envname("CRONWHEEL_ACCESS_TOKEN");
  cmd->add_option("--registry-refresh-ms", config.registry_refresh_ms,
                  "How often executor registrations are refreshed into automatic groups, in ms")
      ->envname("CRONWHEEL_REGISTRY_REFRESH_MS")
      ->check(CLI::Range(100, 3'600'000))
      ->capture_default_str();
  cmd->add_option("--lost-check-ms", config.lost_check_ms, "How often runs whose result is lost are looked for, in ms")
      ->envname("CRONWHEEL_LOST_CHECK_MS")
      ->check(CLI::Range(100, 3'600'000))
      ->capture_default_str();
  cmd->add_option("--lost-ask-after-ms", config.lost_ask_after_ms,
                  "How long a run waits for its result before its executor is asked whether it still knows it, in ms")
      ->envname("CRONWHEEL_LOST_ASK_AFTER_MS")
      ->check(CLI::Range(100, 86'400'000))
      ->capture_default_str();
  cmd->add_option("--max-executors-per-group", config.max_executors_per_group,
                  "Live executor registrations one app name takes; one more new address is refused")
      ->envname("CRONWHEEL_MAX_EXECUTORS_PER_GROUP")
      ->check(CLI::Range(1, 100'000))
      ->capture_default_str();
  cmd->add_option("--executor-connections", config.executor_connections,
                  "Connections to one executor open at once, kept alive; calls beyond them wait for one")
      ->envname("CRONWHEEL_EXECUTOR_CONNECTIONS")
      ->check(CLI::Range(1, 10'000))
      ->capture_default_str();
  cmd->add_option("--lead-dispatch", config.lead_dispatch,
                  "Hand each second's fires to cronwheel executors that take it ahead of their instant, one request per "
                  "executor, for them to start at the instant (true|false)")
      ->envname("CRONWHEEL_LEAD_DISPATCH")
      ->default_str("true");
  cmd->add_option("--lead-horizon-ms", config.lead_horizon_ms,
                  "Lead dispatch: hand fires over as soon as they are decided, up to this far ahead of their instant "
                  "(a second of more fires than can be claimed in its last 800 ms still reaches its executors in time); "
                  "at most half the send deadline; 0: each second's fires 800 ms before it")
      ->envname("CRONWHEEL_LEAD_HORIZON_MS")
      ->check(CLI::Range(0, 30'000))
      ->capture_default_str();
  cmd->add_option("--shed-late-ms", config.shed_late_ms,
                  "Shedding past capacity: once this node hands a second's fires over more than this late while "
                  "handing over at least 500 a second, its scans decide only the share of the fires due it can send "
                  "and skip the rest (jobs with misfire strategy DO_NOTHING, lowest priority first), each job's "
                  "with a cancelled MISFIRE run; 0: never")
      ->envname("CRONWHEEL_SHED_LATE_MS")
      ->check(CLI::Range(0, 60'000))
      ->capture_default_str();
  cmd->add_option("--fast-pool-max", config.fast_pool_max, "Fast trigger pool: most threads")
      ->envname("CRONWHEEL_FAST_POOL_MAX")
      ->check(CLI::Range(1, 10'000))
      ->capture_default_str();
  cmd->add_option("--slow-pool-max", config.slow_pool_max,
                  "Slow trigger pool (jobs whose triggers are often slow): most threads")
      ->envname("CRONWHEEL_SLOW_POOL_MAX")
      ->check(CLI::Range(1, 10'000))
      ->capture_default_str();
  cmd->add_option("--fast-pool-queue", config.fast_pool_queue, "Fires the fast pool queues when all its threads are busy; beyond it a fire stays pending and goes out "
                  "late, never fails")
      ->envname("CRONWHEEL_FAST_POOL_QUEUE")
      ->check(CLI::Range(0, 1'000'000))
      ->capture_default_str();
  cmd->add_option("--slow-pool-queue", config.slow_pool_queue, "Fires the slow pool queues when all its threads are busy")
      ->envname("CRONWHEEL_SLOW_POOL_QUEUE")
      ->check(CLI::Range(0, 1'000'000))
      ->capture_default_str();
  cmd->add_option("--pre-read-count", config.pre_read_count,
                  "Due jobs one scan reads at most (0: (fast + slow pool max) * 20)")
      ->envname("CRONWHEEL_PRE_READ_COUNT")
      ->check(CLI::Range(0, 1'000'000))
      ->capture_default_str();
  cmd->add_option("--heartbeat-ms", config.heartbeat_ms, "How often this node renews its lease, in ms")
      ->envname("CRONWHEEL_HEARTBEAT_MS")
      ->check(CLI::Range(100, 600'000))
      ->capture_default_str();
  cmd->add_option("--lease-ms", config.lease_ms,
                  "How long this node's lease lasts, in ms; after it other nodes take its fires over")
      ->envname("CRONWHEEL_LEASE_MS")
      ->check(CLI::Range(200, 3'600'000))
      ->capture_default_str();
  cmd->add_option("--session-hours", config.session_hours, "How long a console login lasts, in hours")
      ->envname("CRONWHEEL_SESSION_HOURS")
      ->check(CLI::Range(1, 720))
      ->capture_default_str();
  cmd->add_flag("--secure-cookie", config.secure_cookie,
                "Mark the session cookie Secure (the console is served over HTTPS)")
      ->envname("CRONWHEEL_SECURE_COOKIE");
  cmd->add_option("--run-retention-days", config.run_retention_days,
                  "Days runs are kept (by scheduled time); older finished runs are deleted. 0 keeps all")
      ->envname("CRONWHEEL_RUN_RETENTION_DAYS")
      ->check(CLI::Range(0, 36'500))
      ->capture_default_str();
  cmd->add_option("--smtp-url", config.smtp_url,
                  "SMTP server for alarm mail: smtp://host[:port] or smtps://host[:port] (empty: no mail)")
      ->envname("CRONWHEEL_SMTP_URL");
  cmd->add_option("--smtp-starttls", config.smtp_starttls, "STARTTLS on smtp:// URLs: if-offered, required or never")
      ->envname("CRONWHEEL_SMTP_STARTTLS")
      ->check(CLI::IsMember({"if-offered", "required", "never"}))
      ->capture_default_str();
  cmd->add_option("--smtp-user", config.smtp_user, "SMTP user name (AUTH); its password from CRONWHEEL_SMTP_PASSWORD "
                                                   "or --smtp-password-file")
      ->envname("CRONWHEEL_SMTP_USER");
  cmd->add_option("--smtp-password-file", config.smtp_password_file, "File holding the SMTP password")
      ->envname("CRONWHEEL_SMTP_PASSWORD_FILE");
  cmd->add_option("--smtp-ca-file", config.smtp_ca_file,
                  "PEM file of the CAs trusted for the SMTP server's certificate (default: the system's)")
      ->envname("CRONWHEEL_SMTP_CA_FILE");
  cmd->add_option("--alarm-from", config.alarm_from, "From address of alarm mail (default cronwheel@<host name>)")
      ->envname("CRONWHEEL_ALARM_FROM");
  cmd->add_option("--alarm-quiet-s", config.alarm_quiet_s,
                  "Seconds after a job's alarm before its next; what fails meanwhile comes in one summary")
      ->envname("CRONWHEEL_ALARM_QUIET_S")
      ->check(CLI::Range(0, 86'400))
      ->capture_default_str();
  cmd->add_option("--console-url", config.console_url,
                  "The console's address as operators reach it, for links in alarms (default: this node's)")
      ->envname("CRONWHEEL_CONSOLE_URL");
}

}  // namespace

void add_admin_options(CLI::App& app, AdminConfig& config, std::string& config_path) {
  add_server_options(&app, config, config_path);
  add_serve_options(&app, config);
}

std::optional<std::string> admin_config_problem(const AdminConfig& config) {
  if (config.lease_ms < 2 * config.heartbeat_ms) {
    return "--lease-ms (" + std::to_string(config.lease_ms) + ") must be at least twice --heartbeat-ms (" +
           std::to_string(config.heartbeat_ms) + "): a node must get to renew its lease before it runs out";
  }
  return std::nullopt;
}

void read_admin_secrets(AdminConfig& config) {
  if (const char* password = std::getenv("CRONWHEEL_ADMIN_PASSWORD")) {
    config.admin_password = password;
  } else if (const char* file = std::getenv("CRONWHEEL_ADMIN_PASSWORD_FILE"); file != nullptr && *file != '\0') {
    config.admin_password = common::read_secret_file(file, "CRONWHEEL_ADMIN_PASSWORD_FILE");
  }
  if (const char* password = std::getenv("CRONWHEEL_SMTP_PASSWORD")) {
    config.smtp_password = password;
  } else if (!config.smtp_password_file.empty()) {
    config.smtp_password = common::read_secret_file(config.smtp_password_file, "--smtp-password-file");
  }
}

}  // namespace cronwheel::admin
