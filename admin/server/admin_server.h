#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "admin/admin_config.h"
#include "admin/alarm/alarm_delivery.h"
#include "admin/alarm/alarm_service.h"
#include "admin/api/rest_api.h"
#include "admin/housekeeping/run_retention.h"
#include "admin/model/finished_runs.h"
#include "admin/outbound/curl_webhook_sender.h"
#include "admin/outbound/http_executor_client.h"
#include "admin/outbound/smtp_mailer.h"
#include "admin/pg/database.h"
#include "admin/pg/pg_alarm_store.h"
#include "admin/pg/pg_node_store.h"
#include "admin/pg/pg_retention_store.h"
#include "admin/pg/pg_schedule_store.h"
#include "admin/pg/pg_stores.h"
#include "admin/pg/pg_trigger_store.h"
#include "admin/scheduler/scheduler.h"
#include "admin/server/console_files.h"
#include "admin/server/executor_side.h"
#include "admin/server/health_check.h"
#include "admin/trigger/trigger_service.h"
#include "common/http/http_server.h"
#include "common/timer/hierarchical_wheel_timer.h"
#include "common/timer/recurring_task.h"

namespace cronwheel::admin {

// The admin node: its database pool and stores, and its HTTP face: /healthz, /metrics, the REST
// API under /api/v1, the executor-facing endpoints, and the web console's files at every other
// path (console_files.h).
//
// Construction registers the routes but touches neither the network nor the database.
// start() creates the first admin user when there is none (the schema must be migrated by
// then), binds config.listen, then starts the scheduling core (admin/scheduler/scheduler.h)
// and returns once it accepts connections and schedules. stop() is idempotent: it stops the
// scheduling core cleanly (its pending fires go to the other nodes), then waits for requests
// in progress.
class AdminServer {
 public:
  AdminServer(const AdminConfig& config, std::string version);
  ~AdminServer();

  AdminServer(const AdminServer&) = delete;
  AdminServer& operator=(const AdminServer&) = delete;

  void start();
  void stop() noexcept;

  const std::string& host() const noexcept { return host_; }
  int port() const noexcept;
  // config.node_id, or <hostname>:<port> (the bound port, once started). For the thread that
  // calls start().
  const std::string& node_id() const noexcept { return node_id_; }

 private:
  void add_routes();
  // Where fires written outside a scan (trigger, retries, child jobs) go to be sent at once:
  // the running scheduler, when there is one.
  FiresWritten fires_written();
  // The web console at every GET path no other route serves (after add_routes' own).
  void add_console_route();
  // Builds and starts the scheduling core (sending, scheduling, heartbeat) for node_id_.
  void start_scheduler();
  // Builds and starts the alarm service (docs/alarms.md).
  void start_alarms();
  // Builds and starts the deletion of old runs, unless --run-retention-days is 0.
  void start_retention();
  // This node's own address, http://host:port/.
  std::string own_address() const;
  // The console's address as alarms link to it (--console-url, else own_address()), ending '/'.
  std::string console_url() const;

  // Declared in dependency order: members are destroyed in reverse, after stop() has waited
  // for every handler, so nothing a handler uses goes away under it.
  AdminConfig config_;
  std::string version_;
  std::string host_;
  std::string node_id_;  // settled in the constructor (the port is bound there), then constant
  // Runs this node ended, by group and state (/metrics): counted by the completion, the
  // sends, the scheduling core and the API, which all hold a pointer to it.
  FinishedRuns finished_runs_;
  // The node's one timer for its in-memory deadlines, and the recurring tasks on it: the lease
  // renewal, the takeover of dead nodes' fires, the pending-fire feeder, the registry refresh
  // and the lost-result check. Each task runs on a lane of its own; the timer keeps deadlines
  // only (admin_server.cpp says why this timer). Declared before every room that uses them.
  common::HierarchicalWheelTimer timer_;
  common::RecurringTasks recurring_;
  Database database_;
  PgStores stores_;
  // The node's one way to reach executors: trigger sends, takeover checks, the console's log
  // reads and kills.
  HttpExecutorClient executor_client_;
  // Executors a /run did not reach, routed around until they register again (the trigger
  // service marks them, registrations clear them).
  SuspectAddresses suspects_{common::SystemClock::instance()};
  common::http::HttpServer http_;
  std::unique_ptr<HealthCheck> health_;
  std::unique_ptr<ConsoleFiles> console_;  // GET of every path no route serves
  std::unique_ptr<RestApi> api_;
  std::unique_ptr<ExecutorSide> executors_;  // /api/registry, /api/callback and their monitors

  // Alarms: the mail server (null when none is configured), the webhook client, both behind one
  // delivery (the alarm service's and the API's test alarms), the runs to alarm about and the
  // channels, and the service that sends them, made by start().
  std::unique_ptr<SmtpMailer> mailer_;
  std::unique_ptr<CurlWebhookSender> webhooks_;
  std::unique_ptr<AlarmDelivery> delivery_;
  PgAlarmStore alarm_store_;
  std::unique_ptr<AlarmService> alarms_;
  std::atomic<AlarmService*> running_alarms_{nullptr};  // alarms_ once started, for /metrics

  // Deletes old runs (--run-retention-days; none when 0), made by start().
  PgRetentionStore retention_store_;
  std::unique_ptr<RunRetention> retention_;
  std::atomic<RunRetention*> running_retention_{nullptr};  // for /metrics

  // The scheduling core (docs/scheduling.md). The schedule thread, the feeder and the heartbeat
  // use a small pool of their own, so a scan holding the scheduling lock never waits for a
  // connection behind hundreds of trigger threads; sending uses the node's pool.
  Database scheduling_database_;
  PgScheduleStore schedule_store_;
  PgNodeStore node_store_;
  PgTriggerStore trigger_store_;
  std::unique_ptr<TriggerService> trigger_service_;
  std::unique_ptr<Scheduler> scheduler_;  // made by start(), once the node id is known
  // scheduler_ while it runs, for HTTP handlers (results waking the schedule thread).
  std::atomic<Scheduler*> running_scheduler_{nullptr};
};

// Splits "host:port" (IPv4 or name; "[v6]:port" too). Throws std::invalid_argument naming
// the value on anything else.
std::pair<std::string, int> parse_listen_address(const std::string& listen);

}  // namespace cronwheel::admin
