#include "admin/server/admin_server.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <exception>
#include <stdexcept>

#include <spdlog/spdlog.h>

#include "admin/alarm/alarm_delivery.h"
#include "admin/alarm/alarm_service.h"
#include "admin/api/rest_api.h"
#include "admin/auth/bootstrap_admin.h"
#include "admin/housekeeping/run_retention.h"
#include "admin/model/finished_runs.h"
#include "admin/outbound/curl_webhook_sender.h"
#include "admin/outbound/http_executor_client.h"
#include "admin/outbound/smtp_mailer.h"
#include "admin/pg/database.h"
#include "admin/pg/pg_alarm_store.h"
#include "admin/pg/pg_apply_store.h"
#include "admin/pg/pg_backfill_store.h"
#include "admin/pg/pg_calendar_store.h"
#include "admin/pg/pg_workflow_store.h"
#include "admin/scheduler/workflow_runner.h"
#include "admin/pg/pg_node_store.h"
#include "admin/pg/pg_retention_store.h"
#include "admin/pg/pg_schedule_store.h"
#include "admin/pg/pg_stores.h"
#include "admin/pg/pg_trigger_store.h"
#include "admin/scheduler/backfill_pump.h"
#include "admin/scheduler/scheduler.h"
#include "admin/scheduler/slot_dispatcher.h"
#include "admin/server/console_files.h"
#include "admin/complete/held_fire_canceller.h"
#include "admin/server/executor_side.h"
#include "admin/server/health_check.h"
#include "admin/server/metrics.h"
#include "admin/trigger/trigger_service.h"
#include "common/http/http_server.h"
#include "common/timer/hierarchical_wheel_timer.h"
#include "common/timer/recurring_task.h"
#include "common/util/clock.h"

namespace cronwheel::admin {

std::pair<std::string, int> parse_listen_address(const std::string& listen) {
  auto colon = listen.rfind(':');
  auto bad = [&listen](const std::string& why) {
    return std::invalid_argument("listen address '" + listen + "': " + why);
  };
  if (colon == std::string::npos) throw bad("expected host:port");
  std::string host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host.empty()) throw bad("expected host:port");
  int port = -1;
  const char* begin = listen.data() + colon + 1;
  const char* end = listen.data() + listen.size();
  auto [ptr, ec] = std::from_chars(begin, end, port);
  if (ec != std::errc() || ptr != end || begin == end || port < 0 || port > 65535) {
    throw bad("port must be a number 0-65535");
  }
  return {host, port};
}

namespace {

common::http::HttpServerOptions server_options(const AdminConfig& config) {
  auto [host, port] = parse_listen_address(config.listen);
  common::http::HttpServerOptions options;
  options.host = host;
  options.port = port;
  options.worker_threads = static_cast<std::size_t>(config.http_threads);
  options.max_connections = static_cast<std::size_t>(config.http_max_connections);
  options.max_connections_per_address = static_cast<std::size_t>(config.http_max_connections_per_address);
  options.error_formatter = common::http::rest_error;
  options.name = "admin-api";
  return options;
}

HttpExecutorClient::Options executor_client_options(const AdminConfig& config) {
  HttpExecutorClient::Options options;
  options.max_connections_per_address = static_cast<std::size_t>(config.executor_connections);
  return options;
}

Database::Options database_options(const AdminConfig& config) {
  Database::Options options;
  options.url = config.db_url;
  options.pool_size = static_cast<std::size_t>(config.db_pool_size);
  return options;
}

// The scheduling core's own pool: the schedule thread, the feeder, the lease renewal and the
// takeover.
Database::Options scheduling_database_options(const AdminConfig& config) {
  Database::Options options;
  options.url = config.db_url;
  options.pool_size = 4;
  return options;
}

// The timer of the node's recurring tasks: Kafka's hierarchical wheel rather than Netty's
// hashed wheel. It holds a handful of deadlines 1 s to 60 s apart (feeder 1 s, lease renewal
// and takeover 3 s, registry refresh 30 s, lost results 60 s) and is idle in between, and
// docs/benchmarks.md measured that an idle hierarchical wheel's worker sleeps until its next
// non-empty bucket (no wake-up, no CPU) while the hashed wheel's wakes every tick, due or not
// (ten times a second at 100 ms); the hashed wheel wins only when it is kept busy by many
// short timeouts, as the executor's run deadlines do. A 10 ms tick gives a first wheel of
// 5.12 s, so the 1 s and 3 s deadlines go straight into it and wake the worker once each; a run
// at most 10 ms late is nothing for work done every second or less often. The tasks are handed
// over inline (they only wake a lane), so the timer needs no pool.
common::HierarchicalWheelOptions recurring_wheel() {
  common::HierarchicalWheelOptions wheel;
  wheel.tick = std::chrono::milliseconds(10);
  return wheel;
}

common::TimerOptions recurring_timer_options() {
  common::TimerOptions options;
  options.on_error = common::logging_timer_errors("admin timer");
  return options;
}

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "admin";
  return name;
}

}  // namespace

class AdminServer::Impl {
 public:
  Impl(const AdminConfig& config, std::string version);
  ~Impl();

  void start();
  void stop() noexcept;

  const std::string& host() const noexcept { return host_; }
  int port() const noexcept;
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
  // Takes back runs held by executors whose job was changed or deleted (after executors_: it uses
  // its completion store, and goes first).
  std::unique_ptr<HeldFireCanceller> held_fires_;

  // Alarms: the mail server (null when none is configured), the webhook client, both behind one
  // delivery (the alarm service's and the API's test alarms), the runs to alarm about and the
  // channels, and the service that sends them, made by start().
  std::unique_ptr<SmtpMailer> mailer_;
  std::unique_ptr<CurlWebhookSender> webhooks_;
  std::unique_ptr<AlarmDelivery> delivery_;
  PgAlarmStore alarm_store_;
  std::unique_ptr<AlarmService> alarms_;
  std::atomic<AlarmService*> running_alarms_{nullptr};  // alarms_ once started, for /metrics

  // Jobs files: POST apply and GET export (docs/jobs-as-code.md).
  PgApplyStore apply_store_;
  // Business calendars (docs/scheduling.md, "Calendars"): the API's, and the schedule thread's
  // (read after a scan, outside the scheduling lock, so the node's pool serves it).
  PgCalendarStore calendar_store_;
  // Workflows (docs/workflows.md): their store, and the runner that schedules them, times their
  // runs out and kills the node runs of ended runs, made by start_scheduler().
  PgWorkflowStore workflow_store_;
  std::unique_ptr<WorkflowRunner> workflow_runner_;
  std::atomic<WorkflowRunner*> running_workflow_runner_{nullptr};  // for /metrics

  // Backfills (docs/scheduling.md, "Backfill"): their store, and the pump that writes their runs,
  // made by start_scheduler().
  PgBackfillStore backfill_store_;
  std::unique_ptr<BackfillPump> backfill_pump_;
  std::atomic<BackfillPump*> running_backfill_pump_{nullptr};  // for the API: a new backfill wakes it

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
  std::atomic<TriggerService*> running_trigger_service_{nullptr};  // for /metrics
  std::unique_ptr<Scheduler> scheduler_;  // made by start(), once the node id is known
  // scheduler_ while it runs, for HTTP handlers (results waking the schedule thread).
  std::atomic<Scheduler*> running_scheduler_{nullptr};
  // Concurrency limits (admin/model/slots.h): admits fires waiting for a slot, made by
  // start_scheduler(); woken by runs this node ends and fires it sets waiting.
  std::unique_ptr<SlotDispatcher> slot_dispatcher_;
  std::atomic<SlotDispatcher*> running_slot_dispatcher_{nullptr};
};

AdminServer::Impl::Impl(const AdminConfig& config, std::string version)
    : config_(config),
      version_(std::move(version)),
      host_(parse_listen_address(config.listen).first),
      timer_(common::SystemClock::instance(), recurring_wheel(), recurring_timer_options()),
      recurring_(timer_, common::SystemClock::instance()),
      database_(database_options(config),
                [](pqxx::connection& c) {
                  PgStores::prepare(c);
                  ExecutorSide::prepare(c);
                  PgTriggerStore::prepare(c);
                  PgAlarmStore::prepare(c);
                  PgRetentionStore::prepare(c);
                  PgApplyStore::prepare(c);
                  PgWorkflowStore::prepare(c);
                  PgCalendarStore::prepare(c);
                  PgBackfillStore::prepare(c);
                }),
      stores_(database_),
      executor_client_(common::SystemClock::instance(), executor_client_options(config)),
      http_(server_options(config)),
      alarm_store_(database_, common::SystemClock::instance()),
      apply_store_(database_, common::SystemClock::instance()),
      calendar_store_(database_, common::SystemClock::instance()),
      workflow_store_(database_, common::SystemClock::instance()),
      backfill_store_(database_, common::SystemClock::instance()),
      retention_store_(database_),
      scheduling_database_(scheduling_database_options(config),
                           [](pqxx::connection& c) {
                             PgScheduleStore::prepare(c);
                             PgNodeStore::prepare(c);
                           }),
      schedule_store_(scheduling_database_),
      node_store_(scheduling_database_),
      trigger_store_(database_) {
  // A run this node ended may have freed a slot of its group.
  finished_runs_.on_added([this](std::int64_t) {
    if (SlotDispatcher* slots = running_slot_dispatcher_.load()) slots->wake();
  });
  // Bound now, so the node id (host:port, the OS's port when configured as 0) is settled
  // before any room is built with it; requests wait in the backlog until start().
  http_.bind();
  node_id_ = config_.node_id.empty() ? host_name() + ":" + std::to_string(http_.port()) : config_.node_id;
  health_ = std::make_unique<HealthCheck>(config_.db_url, node_id_, version_);
  // Checked now, before the schema is touched: a malformed --smtp-url stops the node at once.
  if (!config_.smtp_url.empty()) {
    SmtpMailer::Options mail;
    mail.url = config_.smtp_url;
    mail.starttls = config_.smtp_starttls == "required" ? SmtpMailer::Options::StartTls::kRequired
                    : config_.smtp_starttls == "never"  ? SmtpMailer::Options::StartTls::kNever
                                                        : SmtpMailer::Options::StartTls::kIfOffered;
    mail.username = config_.smtp_user;
    mail.password = config_.smtp_password;
    mail.ca_file = config_.smtp_ca_file;
    mailer_ = std::make_unique<SmtpMailer>(std::move(mail));
  }
  webhooks_ = std::make_unique<CurlWebhookSender>(common::SystemClock::instance(), CurlWebhookSender::Options{});
  delivery_ = std::make_unique<AlarmDelivery>(mailer_.get(), webhooks_.get(),
                                              config_.alarm_from.empty() ? "cronwheel@" + host_name() : config_.alarm_from);
  add_routes();
}

AdminServer::Impl::~Impl() { stop(); }

void AdminServer::Impl::start() {
  bootstrap_admin(stores_.users(), api_->passwords(), config_.admin_password);
  http_.start();
  executors_->start();
  start_scheduler();
  start_alarms();
  start_retention();
}

void AdminServer::Impl::start_retention() {
  if (config_.run_retention_days == 0) {
    spdlog::info("run retention: off (--run-retention-days 0): runs are kept for ever");
    return;
  }
  RunRetention::Options options;
  options.keep = std::chrono::hours(24) * config_.run_retention_days;
  // Soon after start, so a node restarted now and then still keeps the table trimmed.
  options.first_delay = std::chrono::seconds(10);
  retention_ = std::make_unique<RunRetention>(retention_store_, recurring_, options);
  retention_->start();
  running_retention_.store(retention_.get());
}

std::string AdminServer::Impl::console_url() const {
  std::string url = config_.console_url.empty() ? own_address() : config_.console_url;
  if (url.back() != '/') url += '/';
  return url;
}

std::string AdminServer::Impl::own_address() const {
  return "http://" + (host_ == "0.0.0.0" || host_ == "::" ? host_name() : host_) + ":" + std::to_string(http_.port()) +
         "/";
}

void AdminServer::Impl::start_alarms() {
  if (mailer_) {
    spdlog::info("alarms: mail goes through {}", mailer_->server());
  } else {
    spdlog::info("alarms: no SMTP server configured (--smtp-url): jobs' alarm mails are recorded failed");
  }
  AlarmService::Options options;
  options.node_id = node_id_;
  options.quiet = std::chrono::seconds(config_.alarm_quiet_s);
  options.console_url = console_url();
  alarms_ = std::make_unique<AlarmService>(alarm_store_, *delivery_, recurring_, std::move(options), &workflow_store_);
  alarms_->start();
  running_alarms_.store(alarms_.get());
}

void AdminServer::Impl::start_scheduler() {
  AdminNode self;
  self.node_id = node_id_;
  self.address = own_address();
  self.version = version_;

  const auto heartbeat = std::chrono::milliseconds(config_.heartbeat_ms);
  const auto lease = std::chrono::milliseconds(config_.lease_ms);
  TriggerService::Options sending;
  sending.node_id = node_id_;
  sending.access_token = config_.access_token;
  // A claim not posted within this time goes back to pending: it must stay below the time
  // another node may take this node's sending fires over (lease - heartbeat after the claim).
  sending.send_deadline = std::min<std::chrono::milliseconds>(sending.send_deadline, (lease - heartbeat) * 2 / 3);
  const std::chrono::milliseconds send_deadline = sending.send_deadline;
  sending.lease_margin = std::min<std::chrono::milliseconds>(sending.lease_margin, heartbeat);
  sending.finished_runs = &finished_runs_;
  sending.fires_written = fires_written();
  sending.suspects = &suspects_;
  if (config_.lead_dispatch) {
    sending.takes_lead = [this](const std::string& address) { return executors_->takes_lead(address); };
    sending.any_takes_lead = [this] { return executors_->any_takes_lead(); };
  }
  sending.slot_waiting = [this](std::int64_t) {
    if (SlotDispatcher* slots = running_slot_dispatcher_.load()) slots->wake();
  };
  trigger_service_ = std::make_unique<TriggerService>(trigger_store_, executor_client_,
                                                      common::SystemClock::instance(), std::move(sending));

  Scheduler::Options options;
  options.pools.fast_max_threads = static_cast<std::size_t>(config_.fast_pool_max);
  options.pools.slow_max_threads = static_cast<std::size_t>(config_.slow_pool_max);
  options.pools.fast_queue_capacity = static_cast<std::size_t>(config_.fast_pool_queue);
  options.pools.slow_queue_capacity = static_cast<std::size_t>(config_.slow_pool_queue);
  options.schedule.pre_read_count = config_.effective_pre_read_count();
  if (config_.lead_dispatch) {
    // A fire handed over ahead that its executor refuses is posted at its instant, within the
    // claim's send deadline: the horizon stays at half of it.
    options.lead_horizon =
        std::min<std::chrono::milliseconds>(std::chrono::milliseconds(config_.lead_horizon_ms), send_deadline / 2);
  }
  options.shedding.late_after = std::chrono::milliseconds(config_.shed_late_ms);
  options.heartbeat.interval = heartbeat;
  options.heartbeat.lease = lease;
  options.default_access_token = config_.access_token;
  options.schedule.finished_runs = &finished_runs_;
  options.schedule.calendars = &calendar_store_;
  options.feeder.finished_runs = &finished_runs_;
  options.heartbeat.finished_runs = &finished_runs_;
  scheduler_ = std::make_unique<Scheduler>(schedule_store_, node_store_, *trigger_service_, executor_client_,
                                           common::SystemClock::instance(), recurring_, std::move(self),
                                           std::move(options));
  scheduler_->start();
  // From now on a FIX_DELAY result wakes the schedule thread (ExecutorSide::Options).
  running_scheduler_.store(scheduler_.get());

  // Fires admitted to a slot are this node's pending fires: its feeder reads them at once.
  slot_dispatcher_ = std::make_unique<SlotDispatcher>(
      trigger_store_, recurring_, node_id_,
      [this](const std::vector<PendingFire>&) {
        if (Scheduler* scheduler = running_scheduler_.load()) scheduler->feed_now();
      },
      SlotDispatcher::Options{});
  slot_dispatcher_->start();
  running_slot_dispatcher_.store(slot_dispatcher_.get());

  // A node run whose workflow run ended with it to be killed: told to its executor, recorded
  // killed whatever the executor says (it may be gone), as POST logs/{id}/kill does.
  auto kill = [this](const JobLog& run) {
    try {
      const std::string token = executors_->token_for_group(run.job_group);
      std::string told = "; its executor could not be told";
      if (run.job_id <= INT32_MAX) {
        auto answer = executor_client_.kill(run.executor_address, token, static_cast<std::int32_t>(run.job_id));
        if (answer.is_success()) told = "; the executor ended it";
      }
      executors_->completion().mark_killed(run.id, "killed: workflow run " + std::to_string(run.workflow_run_id.value_or(0)) +
                                                       " ended" + told);
    } catch (const std::exception& e) {
      spdlog::warn("workflow runner: killing run {}: {}", run.id, e.what());
    }
  };
  WorkflowRunner::Options runner_options;
  runner_options.calendars = &calendar_store_;
  workflow_runner_ = std::make_unique<WorkflowRunner>(workflow_store_, recurring_, node_id_, fires_written(),
                                                      std::move(kill), runner_options);
  workflow_runner_->start();
  running_workflow_runner_.store(workflow_runner_.get());

  BackfillPump::Options pump_options;
  // Runs are written owned by this node: only while it may send them.
  pump_options.may_write = [this] {
    Scheduler* scheduler = running_scheduler_.load();
    return scheduler != nullptr && scheduler->lease_valid();
  };
  backfill_pump_ = std::make_unique<BackfillPump>(backfill_store_, stores_.stores().jobs, workflow_store_, calendar_store_,
                                                  recurring_, node_id_, fires_written(), std::move(pump_options));
  backfill_pump_->start();
  running_backfill_pump_.store(backfill_pump_.get());
  running_trigger_service_.store(trigger_service_.get());
}

void AdminServer::Impl::stop() noexcept {
  // The scheduling core first, while the HTTP server still takes the results of the runs it
  // sent: it stops deciding, hands back what it held (pending rows for the other nodes), lets
  // the sends in progress finish and releases this node's lease.
  running_workflow_runner_.store(nullptr);
  running_trigger_service_.store(nullptr);
  running_backfill_pump_.store(nullptr);
  if (backfill_pump_) backfill_pump_->stop();
  if (workflow_runner_) workflow_runner_->stop();
  running_slot_dispatcher_.store(nullptr);
  if (slot_dispatcher_) slot_dispatcher_->stop();
  running_scheduler_.store(nullptr);
  if (scheduler_) scheduler_->stop();
  if (alarms_) alarms_->stop();
  if (retention_) retention_->stop();
  http_.stop();
  if (held_fires_) held_fires_->stop();
  if (executors_) executors_->stop();
  timer_.stop();  // every recurring task has stopped
}

int AdminServer::Impl::port() const noexcept { return http_.port(); }

FiresWritten AdminServer::Impl::fires_written() {
  return [this](const std::vector<JobLog>& fires) {
    if (Scheduler* scheduler = running_scheduler_.load()) scheduler->send_soon(fires);
  };
}

void AdminServer::Impl::add_routes() {
  http_.get("/healthz", [this](const common::http::Request&, common::http::Response& res) {
    auto result = health_->check();
    common::http::write_json(res, result.body.dump(), result.healthy ? 200 : 503);
  });
  // Like /healthz, for monitoring systems: no login. Counts only, nothing about jobs or users.
  http_.get("/metrics", [this](const common::http::Request&, common::http::Response& res) {
    NodeMetrics metrics;
    metrics.node_id = node_id_;
    if (Scheduler* scheduler = running_scheduler_.load()) metrics.scheduler = scheduler->stats();
    metrics.results = executors_->completion().counters();
    metrics.runs_finished = finished_runs_.counts();
    if (SlotDispatcher* slots = running_slot_dispatcher_.load()) metrics.waiting_for_slot = slots->waiting();
    if (AlarmService* alarms = running_alarms_.load()) metrics.alarms = alarms->counters();
    if (RunRetention* retention = running_retention_.load()) {
      metrics.runs_deleted = retention->counters().deleted;
      metrics.workflow_runs_deleted = retention->counters().workflow_runs_deleted;
    }
    if (WorkflowRunner* runner = running_workflow_runner_.load()) metrics.workflow_runs = runner->run_counts();
    if (TriggerService* sending = running_trigger_service_.load()) metrics.workflow_handoff = sending->workflow_handoff();
    metrics.db_pools = {{"main", database_.pool_stats()}, {"scheduling", scheduling_database_.pool_stats()}};
    metrics.http_lanes = http_.lane_stats();
    metrics.registrations_refused = executors_->registrations_refused();
    metrics.suspect_executors = suspects_.size();
    metrics.executor_clock_offsets = executors_->clock_offsets();
    res.set_content(metrics_text(metrics), kMetricsContentType);
  });

  RestApi::Options api;
  api.sessions.session_lifetime = std::chrono::hours(config_.session_hours);
  api.sessions.secure_cookie = config_.secure_cookie;
  api.resources.node_id = node_id_;
  api.resources.access_token = config_.access_token;
  api.resources.executors = &executor_client_;
  api.resources.finished_runs = &finished_runs_;
  api.resources.fires_written = fires_written();
  // executors_ is made just below; kills come once the server serves.
  api.resources.kill_run = [this](std::int64_t run_id, const std::string& message) {
    return executors_->completion().mark_killed(run_id, message) == Completion::Outcome::kRecorded;
  };
  api.resources.cancel_held_run = [this](std::int64_t run_id, const std::string& message) {
    return executors_->completion().mark_cancelled(run_id, message) == Completion::Outcome::kRecorded;
  };
  // Set before the server starts, so every handler sees it.
  api.resources.automatic_group_changed = [this] { executors_->refresh_registry_soon(); };
  if (config_.lead_dispatch) {
    // held_fires_ is made just below, with executors_.
    api.resources.held.read = [this](std::int64_t job_id) { return held_fires_->held(job_id); };
    api.resources.held.take_back = [this](std::vector<JobLog> runs, std::string reason, GivenBack then) {
      held_fires_->take_back(std::move(runs), std::move(reason), then);
    };
    api.resources.held.take_back_many = [this](std::vector<std::int64_t> job_ids, std::string reason, GivenBack then) {
      held_fires_->take_back_jobs(std::move(job_ids), std::move(reason), then);
    };
    api.jobs_files.held = api.resources.held;
  }
  api.alarm_channels.store = &alarm_store_;
  api.jobs_files.store = &apply_store_;
  api.workflows.store = &workflow_store_;
  api.workflows.node_id = node_id_;
  api.workflows.fires_written = fires_written();
  api.calendars.store = &calendar_store_;
  api.backfills.store = &backfill_store_;
  api.backfills.node_id = node_id_;
  api.backfills.finished_runs = &finished_runs_;
  api.backfills.created = [this] {
    if (BackfillPump* pump = running_backfill_pump_.load()) pump->wake();
  };
  api.alarm_channels.delivery = delivery_.get();
  api.alarm_channels.text = {console_url(), node_id_};
  api_ = std::make_unique<RestApi>(http_, stores_.stores(), common::SystemClock::instance(), std::move(api));

  ExecutorSide::Options executors;
  executors.access_token = config_.access_token;
  executors.node_id = node_id_;
  executors.registry.interval = std::chrono::milliseconds(config_.registry_refresh_ms);
  // The lost-result check asks executors about runs they may no longer know (restarted).
  executors.lost.executors = &executor_client_;
  executors.lost.access_token = config_.access_token;
  executors.lost.interval = std::chrono::milliseconds(config_.lost_check_ms);
  executors.lost.ask_after = std::chrono::milliseconds(config_.lost_ask_after_ms);
  executors.finished_runs = &finished_runs_;
  executors.fires_written = fires_written();
  executors.suspects = &suspects_;
  executors.max_executors_per_group = static_cast<std::size_t>(config_.max_executors_per_group);
  executors.next_time_set = [this] {
    if (Scheduler* scheduler = running_scheduler_.load()) scheduler->wake();
  };
  auto stores = stores_.stores();
  executors_ = std::make_unique<ExecutorSide>(database_, stores.groups, stores.logs, http_,
                                              common::SystemClock::instance(), recurring_, std::move(executors));
  HeldFireCanceller::Options held;
  held.node_id = node_id_;
  held.token_of = [this](std::int64_t group_id) { return executors_->token_for_group(group_id); };
  held_fires_ = std::make_unique<HeldFireCanceller>(executors_->completion_store(), executor_client_,
                                                    common::SystemClock::instance(), std::move(held));

  add_console_route();
}

void AdminServer::Impl::add_console_route() {
  std::filesystem::path directory = config_.web_dir;
  if (directory.empty()) directory = ConsoleFiles::default_directory().value_or("web");
  // Loads the files now and logs what it serves, or why nothing (console_files.h).
  console_ = std::make_unique<ConsoleFiles>(std::move(directory));
  // Requests carry no body worth taking: a GET's is refused unread.
  http_.fallback_get(
      [this](const common::http::Request& req, common::http::Response& res) {
        if (ConsoleFiles::owns(req.path)) {
          console_->serve(req, res);
          if (res.status != 404) return;
          if (req.path == "/" && !console_->installed()) {
            throw common::http::HttpError(404, common::http::kNotFoundCode,
                                          "the web console is not installed on this node");
          }
        }
        throw common::http::HttpError(404, common::http::kNotFoundCode, "not found: " + req.method + " " + req.path);
      },
      {.max_body_bytes = 0});
}

AdminServer::AdminServer(const AdminConfig& config, std::string version)
    : impl_(std::make_unique<Impl>(config, std::move(version))) {}

AdminServer::~AdminServer() = default;

void AdminServer::start() { impl_->start(); }

void AdminServer::stop() noexcept { impl_->stop(); }

const std::string& AdminServer::host() const noexcept { return impl_->host(); }

int AdminServer::port() const noexcept { return impl_->port(); }

const std::string& AdminServer::node_id() const noexcept { return impl_->node_id(); }

}  // namespace cronwheel::admin
