#pragma once

#include <optional>
#include <string>

namespace CLI {
class App;
}

namespace cronwheel::admin {

// Settings of one admin node. Every flag has an environment variable (add_admin_options below,
// and docs/configuration.md's table generated from it).
struct AdminConfig {
  std::string db_url = "postgresql://cronwheel@127.0.0.1:5432/cronwheel";
  std::string listen = "0.0.0.0:8080";  // host:port; port 0 picks a free one
  std::string node_id;                  // default: <hostname>:<port>
  int http_threads = 32;                // HTTP worker threads
  // Open HTTP connections in all, and per client address (common/http/http_server.h). Behind a
  // reverse proxy every client has the proxy's address: raise the per-address cap there.
  int http_max_connections = 4096;
  int http_max_connections_per_address = 256;
  int db_wait_seconds = 60;             // how long start-up waits for the database
  int db_pool_size = 8;                 // PostgreSQL connections the node's work shares
  std::string log_level = "info";
  std::string log_format = "text";  // text or json (one JSON object a line, for log shippers)
  // The web console's built files (server/console_files.h); empty: build/web beside the binary's
  // bin/, or <prefix>/share/cronwheel/web for an installed one.
  std::string web_dir;

  // Sent as XXL-JOB-ACCESS-TOKEN to executors whose group has no token of its own.
  std::string access_token;

  // How often executor registrations are refreshed (dead ones dropped, automatic groups'
  // address lists rewritten from the live ones). Executors calling /api/registry,
  // /api/registryRemove and /api/callback must send access_token when it is set.
  int registry_refresh_ms = 30'000;
  // The lost-result check (complete/lost_result_monitor.h): how often it runs, and how long a run
  // waits for its result before its executor is asked whether it still knows it.
  int lost_check_ms = 60'000;
  int lost_ask_after_ms = 60'000;

  // Live executor registrations one app name takes; one more new address is refused (a group's
  // token cannot flood routing with addresses that lead nowhere).
  int max_executors_per_group = 512;

  // Connections to one executor open at once (kept alive and reused); calls beyond them wait
  // for one.
  int executor_connections = 64;

  // The scheduling core (docs/scheduling.md). Trigger pools: at most this many threads each,
  // and this many fires waiting when every thread is busy (beyond that a fire stays pending and
  // goes out late).
  int fast_pool_max = 300;
  // Lead dispatch (docs/scheduling.md): each second's fires to cronwheel executors that take it
  // are handed over ahead, one request per executor, and started by the executors at the instant.
  // Off: every fire is posted at its instant by /run, as to XXL-JOB's executors.
  bool lead_dispatch = true;
  // How far ahead of their instant lead executors' fires are handed over, as soon as decided
  // (Scheduler::Options::lead_horizon), capped at half the send deadline. 0: 800 ms before each
  // second only.
  int lead_horizon_ms = 4'000;
  // Shedding past capacity (docs/scheduling.md, "Past capacity"): once this node hands a
  // second's fires over more than this late, under load, its scans decide only the share of the
  // fires due it can send and shed the rest (DO_NOTHING jobs, lowest priority first). 0: never.
  int shed_late_ms = 1'000;
  int slow_pool_max = 200;
  int fast_pool_queue = 10'000;
  int slow_pool_queue = 5'000;
  // Due jobs one scan reads at most; 0: (fast_pool_max + slow_pool_max) * 20, as XXL-JOB sizes it.
  int pre_read_count = 0;
  // This node's lease: renewed every heartbeat_ms for lease_ms ahead. Other nodes take its
  // fires over once it expires, so a dead node's fires wait at most lease + heartbeat. The lease
  // must be at least twice the heartbeat.
  int heartbeat_ms = 3'000;
  int lease_ms = 15'000;

  int effective_pre_read_count() const {
    return pre_read_count > 0 ? pre_read_count : (fast_pool_max + slow_pool_max) * 20;
  }

  // Runs (job_log rows) scheduled more than this many days ago are deleted by every node in
  // small batches (docs/operations.md "Retention"); 0 keeps them all.
  int run_retention_days = 30;

  // REST API sessions: how long a console login lasts, and whether the cookie is marked
  // Secure (set it when the console is served over HTTPS, e.g. behind a TLS proxy).
  int session_hours = 12;
  bool secure_cookie = false;

  // Alarms (docs/alarms.md): a job's alarmEmail addresses get a mail when one of its runs ends
  // badly, at most one per job per alarm_quiet_s (a summary of every run since).
  // The SMTP server: smtp://host[:port] (STARTTLS as smtp_starttls says: if-offered, required or
  // never) or smtps://host[:port]; empty: no mail server, alarms are recorded failed.
  std::string smtp_url;
  std::string smtp_starttls = "if-offered";
  std::string smtp_user;
  // From CRONWHEEL_SMTP_PASSWORD, or the file named by --smtp-password-file /
  // CRONWHEEL_SMTP_PASSWORD_FILE; never a flag of its own (a process's arguments are visible to
  // every local user).
  std::string smtp_password;
  std::string smtp_password_file;
  std::string smtp_ca_file;  // PEM file of the CAs trusted for the server; empty: the system's
  std::string alarm_from;    // the mails' From address; empty: cronwheel@<host name>
  int alarm_quiet_s = 300;
  // The console's address as operators reach it (e.g. https://cron.example.com/), for links to
  // runs in alarms; empty: this node's own address.
  std::string console_url;

  // The password of the `admin` user created on first start (no users yet); empty: a random
  // one, printed once to the log. Read from CRONWHEEL_ADMIN_PASSWORD only, never a flag: a
  // process's arguments are visible to every local user.
  std::string admin_password;
};

// Adds every setting of a node to `app` as a flag with its environment variable, its check and
// its default, bound to `config`; `--config` (a settings file) to `config_path`. The command's
// parse fills them, then common::apply_config_sources() what the file says.
void add_admin_options(CLI::App& app, AdminConfig& config, std::string& config_path);

// What is wrong with settings that each pass their own option's check (the lease against the
// heartbeat), as a message naming the options; nullopt when they go together.
std::optional<std::string> admin_config_problem(const AdminConfig& config);

// The passwords taken only from the environment or files, never flags (a process's arguments
// are visible to every local user): admin_password from CRONWHEEL_ADMIN_PASSWORD or
// CRONWHEEL_ADMIN_PASSWORD_FILE, smtp_password from CRONWHEEL_SMTP_PASSWORD or
// smtp_password_file. Throws common::ConfigError when a named file cannot be read.
void read_admin_secrets(AdminConfig& config);

}  // namespace cronwheel::admin
