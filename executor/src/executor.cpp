#include "cronwheel/executor.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

#include "common/http/http_server.h"
#include "common/timer/hierarchical_wheel_timer.h"
#include "common/timer/recurring_task.h"
#include "common/util/clock.h"
#include "executor/src/callback_sender.h"
#include "executor/src/executor_core.h"
#include "executor/src/executor_endpoints.h"
#include "executor/src/file_io.h"
#include "executor/src/job_dispatcher.h"
#include "executor/src/lead_hold.h"
#include "executor/src/registry_client.h"
#include "executor/src/run_as.h"
#include "executor/src/run_log.h"
#include "executor/src/script_file.h"
#include "executor/src/script_runner.h"

namespace cronwheel::executor {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// Subdirectories of log_dir, as XXL-JOB's executor names them.
constexpr const char* kScriptDir = "gluesource";
constexpr const char* kCallbackSpoolDir = "callbacklog";  // also the journals' (results, lead)

// A stopped run whose handler has not returned after this long is reported anyway. Longer than
// the script runner's TERM-to-KILL grace, so a stopped script is reported once its processes are
// gone.
constexpr auto kStopReportGrace = 5s;
// The callback flush at stop() gets what is left of shutdown_timeout, and at least this.
constexpr auto kMinCallbackFlush = 1s;
constexpr auto kRetentionInterval = 24h;
// stop() waits this long past the script runner's TERM-to-KILL grace for the last process groups
// to go (a process in uninterruptible sleep ends only once its I/O returns); after that it logs
// what is left and returns.
constexpr auto kProcessGroupExtraWait = 30s;
// A run log cap below this would leave no room for a run's own opening and closing lines.
constexpr std::size_t kMinRunLogBytes = 4096;

bool is_http_url(const std::string& url) {
  for (std::string_view scheme : {"http://", "https://"}) {
    if (url.starts_with(scheme)) {
      std::string_view rest = std::string_view(url).substr(scheme.size());
      return !rest.empty() && rest.front() != '/' && rest.front() != ':';
    }
  }
  return false;
}

[[noreturn]] void invalid(const std::string& option, const std::string& problem) {
  throw std::invalid_argument("ExecutorOptions." + option + ": " + problem);
}

void validate(const ExecutorOptions& o) {
  if (o.admin_addresses.empty()) invalid("admin_addresses", "at least one admin URL is required");
  for (const auto& admin : o.admin_addresses) {
    if (!is_http_url(admin)) invalid("admin_addresses", "'" + admin + "' is not an http(s) URL");
  }
  // XXL-JOB's admin accepts app names of 4 to 64 characters; it is also part of URLs and logs.
  if (o.app_name.size() < 4 || o.app_name.size() > 64) {
    invalid("app_name", "'" + o.app_name + "' must be 4 to 64 characters long");
  }
  if (!std::all_of(o.app_name.begin(), o.app_name.end(),
                   [](char c) { return c > ' ' && c < 127; })) {
    invalid("app_name", "'" + o.app_name + "' may hold printable ASCII characters only, no spaces");
  }
  if (o.listen_host.empty()) invalid("listen_host", "is empty");
  if (o.listen_port < 0 || o.listen_port > 65535) {
    invalid("listen_port", std::to_string(o.listen_port) + " is not a port (0-65535)");
  }
  if (!o.address.empty() && !is_http_url(o.address)) {
    invalid("address", "'" + o.address + "' is not an http(s) URL");
  }
  if (o.log_dir.empty()) invalid("log_dir", "is empty");
  if (o.log_retention_days < 0) invalid("log_retention_days", "is negative");
  if (o.http_threads < 1) invalid("http_threads", "must be at least 1");
  if (o.registry_interval <= 0s) invalid("registry_interval", "must be positive");
  if (o.idle_job_thread_timeout <= 0s) invalid("idle_job_thread_timeout", "must be positive");
  if (o.callback_retry_interval <= 0ms) invalid("callback_retry_interval", "must be positive");
  if (o.shutdown_timeout < 0ms) invalid("shutdown_timeout", "is negative");
  if (o.max_undelivered_results < 1) invalid("max_undelivered_results", "must be at least 1");
  if (o.max_run_log_bytes < kMinRunLogBytes) {
    invalid("max_run_log_bytes", std::to_string(o.max_run_log_bytes) + " is below " +
                                     std::to_string(kMinRunLogBytes));
  }
  if (o.max_queued_runs_per_job < 1) invalid("max_queued_runs_per_job", "must be at least 1");
  if (o.max_job_threads < 1) invalid("max_job_threads", "must be at least 1");
  if (o.max_clock_offset <= 0ms) invalid("max_clock_offset", "must be positive");
  if (o.max_held_fires < 1) invalid("max_held_fires", "must be at least 1");
}

// Makes `log_dir` (created if missing) what ExecutorOptions::log_dir says: mode 0700, or 0710
// and `script_group` when a run_as user must reach the script directory in it. Throws
// std::system_error naming the path when it cannot.
void secure_log_dir(const fs::path& log_dir, std::optional<gid_t> script_group) {
  auto fail = [&](const std::string& what) {
    return std::system_error(errno, std::generic_category(), what + " " + log_dir.string());
  };
  if (!create_private_directory(log_dir)) throw fail("cannot create log directory");
  struct stat st {};
  if (::stat(log_dir.c_str(), &st) != 0) throw fail("cannot use log directory");
  if (st.st_uid != ::geteuid() || (st.st_mode & S_ISVTX) != 0) {
    // Not ours to change: another user's, or shared (sticky, as /tmp is). What the executor
    // creates in it is private all the same.
    if ((st.st_mode & 07) != 0) {
      spdlog::warn("executor: log directory {} has mode {:o} and is not this user's own, so it is "
                   "left so: other users can list it (what is in it stays private)",
                   log_dir.string(), st.st_mode & 07777);
    }
    return;
  }
  if (script_group && st.st_gid != *script_group &&
      ::chown(log_dir.c_str(), static_cast<uid_t>(-1), *script_group) != 0) {
    throw fail("cannot give group " + std::to_string(*script_group) + " the log directory");
  }
  const mode_t mode = script_group ? 0710 : kPrivateDirectoryMode;
  if ((st.st_mode & 07777) != mode && ::chmod(log_dir.c_str(), mode) != 0) {
    throw fail("cannot set the mode of log directory");
  }
}

// The run_as user, looked up and tried (see ExecutorOptions::run_as); null when not set.
std::shared_ptr<const RunAsUser> run_as_user(const ExecutorOptions& o) {
  if (o.run_as.empty()) return nullptr;
  RunAsUser user;
  try {
    user = find_user(o.run_as);
  } catch (const std::invalid_argument& e) {
    invalid("run_as", e.what());
  }
  if (auto problem = run_as_problem(user)) invalid("run_as", *problem);
  return std::make_shared<const RunAsUser>(std::move(user));
}

// The host part of the default advertised address.
std::string default_host(const std::string& listen_host) {
  if (listen_host == "127.0.0.1" || listen_host == "localhost") return "127.0.0.1";
  // Listening on one specific address: that is where the admin can reach us (an IPv6 literal
  // goes in brackets in a URL).
  if (listen_host != "0.0.0.0" && listen_host != "::" && listen_host != "*") {
    return listen_host.find(':') != std::string::npos ? "[" + listen_host + "]" : listen_host;
  }

  std::string found;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) == 0) {
    for (ifaddrs* entry = list; entry != nullptr; entry = entry->ifa_next) {
      if (entry->ifa_addr == nullptr || entry->ifa_addr->sa_family != AF_INET) continue;
      if ((entry->ifa_flags & IFF_LOOPBACK) != 0 || (entry->ifa_flags & IFF_UP) == 0) continue;
      char text[INET_ADDRSTRLEN] = {};
      const auto* in = reinterpret_cast<const sockaddr_in*>(entry->ifa_addr);
      if (::inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text)) != nullptr) {
        found = text;
        break;
      }
    }
    ::freeifaddrs(list);
  }
  if (found.empty()) {
    spdlog::warn("executor: no non-loopback IPv4 address found; advertising 127.0.0.1 "
                 "(set ExecutorOptions.address when the admin runs elsewhere)");
    return "127.0.0.1";
  }
  return found;
}

// The process groups of script runs and handler commands under way. A run holds a lease from
// before its process starts until run_script/run_process returned, that is until its whole
// process group is gone (those functions return only then).
//
// Why stop() waits on this rather than on the job threads: a stopped script's group gets SIGTERM
// and, kScriptKillGrace later, SIGKILL. shutdown_timeout may be shorter than that grace, and a job
// thread abandoned at shutdown_timeout would then still be in the middle of ending its script;
// when the executor's process exits right after stop() (the standalone executor does), nothing
// would send the KILL and a script ignoring TERM would outlive the executor. After close() no
// process starts any more, so the count only goes down.
//
// Thread-safe; shared with the hooks (an abandoned job thread may finish after the executor).
class ProcessGroups {
 public:
  // Counts a group about to start; false once closed (the run must not start a process).
  bool enter() {
    std::lock_guard lock(mutex_);
    if (closed_) return false;
    ++active_;
    return true;
  }
  void leave() noexcept {
    std::lock_guard lock(mutex_);
    if (--active_ == 0) gone_.notify_all();
  }
  std::size_t active() const {
    std::lock_guard lock(mutex_);
    return active_;
  }
  // Refuses further groups and waits until none is left or `deadline`; returns how many are left.
  // The OS's steady time, not the executor's clock: what is waited for is processes dying after
  // the script runner's SIGKILL, which the OS times (as it times that grace).
  std::size_t close_and_wait(std::chrono::steady_clock::time_point deadline) {
    std::unique_lock lock(mutex_);
    closed_ = true;
    gone_.wait_until(lock, deadline, [this] { return active_ == 0; });
    return active_;
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable gone_;
  std::size_t active_ = 0;
  bool closed_ = false;
};

// Runs `start` (run_script or run_process) under a lease of `groups`.
template <typename Start>
ScriptOutcome with_lease(ProcessGroups& groups, Start&& start) {
  if (!groups.enter()) {
    return {ScriptOutcome::Kind::kStopped, 0, "not started: the executor is stopping"};
  }
  struct Leave {
    ProcessGroups& groups;
    ~Leave() { groups.leave(); }
  } leave{groups};
  return start();
}

}  // namespace

// Lifecycle: constructed → start() → running → stop() → stopped. A failed start() leaves the
// executor as constructed. The members below are created by start() and used by the HTTP
// workers, job threads and background threads until stop() has stopped them; they are
// destroyed in reverse order of declaration, each after everything that refers to it.
struct ExecutorCore::Impl {
  Impl(ExecutorOptions o, std::shared_ptr<const RunAsUser> user, common::Clock& c)
      : options(std::move(o)), run_as(std::move(user)), clock(c) {}

  void start();
  void stop() noexcept;
  void reset() noexcept;

  const ExecutorOptions options;
  const std::shared_ptr<const RunAsUser> run_as;  // options.run_as, looked up; null when empty
  // The one clock of the executor's threads and stamps (executor_core.h says what it times).
  common::Clock& clock;
  const std::shared_ptr<HandlerRegistry> handlers = std::make_shared<HandlerRegistry>();

  std::mutex lifecycle_mutex;  // serializes start() and stop()
  enum class State { kNew, kRunning, kStopped };
  State state = State::kNew;

  // Shared with the run-log hooks: a handler abandoned at shutdown may return (and finish its
  // log) after the executor is gone.
  std::shared_ptr<RunLogStore> logs;
  std::shared_ptr<ProcessGroups> process_groups;
  // The periodic work (registration heartbeat, run log retention, the callbacks' retries) on a
  // hierarchical wheel, which does not wake while nothing is due: deadlines 30 s and a day
  // apart. The heartbeat and retention run on lanes of their own (RecurringTask), so a slow
  // admin never holds up the retention or the other way round. Declared before their users,
  // which must go first.
  std::unique_ptr<common::HierarchicalWheelTimer> periodic_timer;
  std::unique_ptr<common::RecurringTasks> periodic;
  std::unique_ptr<CallbackSender> callbacks;
  std::unique_ptr<JobDispatcher> dispatcher;
  // Lead dispatch: the fires held until their instant, on a wheel of their own with a 1 ms tick
  // (a fire starts less than a tick after its instant), whose tasks hand fires to the dispatcher.
  // Null when options.lead_dispatch is off.
  std::unique_ptr<common::HierarchicalWheelTimer> lead_timer;
  std::unique_ptr<LeadHold> lead;
  std::unique_ptr<common::http::HttpServer> server;
  std::unique_ptr<RegistryClient> registry;
  std::unique_ptr<common::RecurringTask> retention;

  // What the lead hold asks for the clock estimate: the registry client once it exists. /lead may
  // be called before (the server starts first) and while reset() destroys it.
  std::mutex lead_estimate_mutex;
  RegistryClient* registry_for_lead = nullptr;

  std::atomic<int> port{0};
  std::string address;  // written by start() only
};

void ExecutorCore::Impl::start() {
  const fs::path log_dir(options.log_dir);
  const bool scripts_as_another_user = options.allow_scripts && run_as && !run_as->is_this_process;
  secure_log_dir(log_dir, scripts_as_another_user ? std::optional<gid_t>(run_as->gid) : std::nullopt);
  if (options.allow_scripts) {
    prepare_script_directory(log_dir / kScriptDir, run_as.get());
    remove_leftover_output_files(log_dir / kScriptDir);  // of runs an earlier process was in
  } else if (std::error_code ec; fs::is_directory(fs::symlink_status(log_dir / kScriptDir, ec))) {
    make_private(log_dir / kScriptDir, kPrivateDirectoryMode);  // scripts of an earlier start
  }
  if (options.allow_scripts && run_as) {
    // Found now rather than at a script's first run: the user must reach its script files.
    if (auto problem = run_as_problem(*run_as, log_dir / kScriptDir)) {
      throw std::system_error(std::make_error_code(std::errc::permission_denied), *problem);
    }
  }
  logs = std::make_shared<RunLogStore>(log_dir, options.log_retention_days, options.max_run_log_bytes);
  logs->make_day_directories_private();

  common::HierarchicalWheelOptions wheel;
  wheel.tick = std::chrono::milliseconds(100);  // 100 ms late is nothing at these periods
  common::TimerOptions timer_options;
  timer_options.on_error = common::logging_timer_errors("executor periodic timer");
  periodic_timer = std::make_unique<common::HierarchicalWheelTimer>(clock, wheel, std::move(timer_options));
  periodic = std::make_unique<common::RecurringTasks>(*periodic_timer, clock);

  CallbackSender::Options callback_options;
  callback_options.admin_addresses = options.admin_addresses;
  callback_options.access_token = options.access_token;
  callback_options.spool_dir = log_dir / kCallbackSpoolDir;
  callback_options.retry_interval = options.callback_retry_interval;
  callbacks = std::make_unique<CallbackSender>(std::move(callback_options), *periodic_timer, clock);
  callbacks->start();  // re-sends what an earlier process left in the spool

  DispatcherOptions dispatcher_options;
  dispatcher_options.allow_scripts = options.allow_scripts;
  dispatcher_options.script_dir = log_dir / kScriptDir;
  dispatcher_options.run_as = run_as;
  dispatcher_options.idle_timeout = options.idle_job_thread_timeout;
  dispatcher_options.stop_report_grace = kStopReportGrace;
  dispatcher_options.max_queued_runs_per_job = options.max_queued_runs_per_job;
  dispatcher_options.max_job_threads = options.max_job_threads;
  DispatcherHooks hooks;
  hooks.open_log = [store = logs](const common::protocol::TriggerParam& t) {
    return store->open(t.log_date_time, t.log_id);
  };
  hooks.finish_log = [store = logs](const common::protocol::TriggerParam& t) {
    store->mark_finished(t.log_date_time, t.log_id);
  };
  hooks.report = [sender = callbacks.get()](common::protocol::HandleCallbackParam result) {
    sender->push(std::move(result));
  };
  process_groups = std::make_shared<ProcessGroups>();
  hooks.run_script = [groups = process_groups](const ScriptSpec& spec, RunLogWriter& log,
                                               std::stop_token stop) {
    return with_lease(*groups, [&] { return run_script(spec, log, std::move(stop)); });
  };
  hooks.run_command = [groups = process_groups, user = run_as](
                         const std::vector<std::string>& argv, RunLogWriter& log, std::stop_token stop,
                         const std::vector<std::string>& environment) {
    return with_lease(*groups, [&] {
      return run_process(argv, log, std::move(stop), kScriptKillGrace, {}, user.get(), environment);
    });
  };
  auto report = hooks.report;
  dispatcher = std::make_unique<JobDispatcher>(std::move(dispatcher_options), std::move(hooks),
                                               handlers, clock);
  // Whether a run's result is held for an admin: part of "received already" (ended_here).
  const std::function<bool(std::int64_t)> result_pending = [sender = callbacks.get()](std::int64_t log_id) {
    return sender->has_result(log_id);
  };

  if (options.lead_dispatch) {
    common::HierarchicalWheelOptions lead_wheel;
    lead_wheel.tick = std::chrono::milliseconds(1);
    common::TimerOptions lead_timer_options;
    lead_timer_options.on_error = common::logging_timer_errors("executor lead timer");
    lead_timer = std::make_unique<common::HierarchicalWheelTimer>(clock, lead_wheel, std::move(lead_timer_options));
    LeadHoldOptions lead_options;
    lead_options.journal_dir = log_dir / kCallbackSpoolDir;
    lead_options.max_clock_offset = options.max_clock_offset;
    lead_options.max_held_fires = options.max_held_fires;
    LeadHoldHooks lead_hooks;
    // Set once the registry client exists; unknown until then.
    lead_hooks.clock_estimate = [this]() -> std::optional<ClockSample> {
      std::lock_guard lock(lead_estimate_mutex);
      return registry_for_lead != nullptr ? registry_for_lead->clock_estimate() : std::nullopt;
    };
    lead_hooks.check = [d = dispatcher.get()](const common::protocol::TriggerParam& t) { return d->check(t); };
    lead_hooks.received = [d = dispatcher.get(), pending = result_pending,
                           store = logs.get()](const common::protocol::TriggerParam& t) {
      return d->is_active(t.log_id) || ended_here(*store, pending, t);
    };
    lead_hooks.run = [d = dispatcher.get()](const std::vector<common::protocol::TriggerParam>& t) {
      return d->run_all(t);
    };
    lead_hooks.report = report;
    lead = std::make_unique<LeadHold>(std::move(lead_options), std::move(lead_hooks), *lead_timer, clock);
    if (std::size_t reported = lead->recover(); reported > 0) {
      spdlog::info("executor: {} fire(s) an earlier process held were reported not started", reported);
    }
  }

  common::http::HttpServerOptions server_options;
  server_options.host = options.listen_host;
  server_options.port = options.listen_port;
  server_options.worker_threads = options.http_threads;
  server_options.error_formatter = executor_error;
  server_options.name = "executor";
  // Admins call from few addresses over many kept-alive connections (a trigger pool's threads
  // each keep one), so the per-address cap is well above an admin's pool size.
  server_options.max_connections_per_address = 1024;
  server = std::make_unique<common::http::HttpServer>(server_options);
  EndpointHooks endpoint_hooks;
  endpoint_hooks.started_at_ms = clock.now_ms();
  endpoint_hooks.now_ms = [&clock = clock] { return clock.now_ms(); };
  endpoint_hooks.result_pending = result_pending;
  endpoint_hooks.refuse_runs = [sender = callbacks.get(),
                                limit = options.max_undelivered_results]() -> std::optional<std::string> {
    const std::size_t backlog = sender->backlog();
    if (backlog < limit) return std::nullopt;
    return "executor has " + std::to_string(backlog) + " results no admin has accepted yet (limit " +
           std::to_string(limit) + "): no new runs until they are delivered";
  };
  endpoint_hooks.lead = lead.get();
  add_executor_endpoints(*server, *dispatcher, *logs, options.access_token, std::move(endpoint_hooks));
  server->start();
  port = server->port();
  address = !options.address.empty()
                ? options.address
                : "http://" + default_host(options.listen_host) + ":" + std::to_string(port) + "/";

  RegistryClient::Options registry_options;
  registry_options.admin_addresses = options.admin_addresses;
  registry_options.access_token = options.access_token;
  registry_options.app_name = options.app_name;
  registry_options.address = address;
  registry_options.interval = options.registry_interval;
  registry_options.clock = &clock;
  registry_options.handler_names = [handlers = handlers] { return handlers->names(); };
  registry_options.lead_dispatch = options.lead_dispatch;
  registry_options.max_clock_offset = options.max_clock_offset;
  registry = std::make_unique<RegistryClient>(std::move(registry_options), *periodic);
  {
    std::lock_guard lock(lead_estimate_mutex);
    registry_for_lead = registry.get();
  }
  registry->start();

  retention = std::make_unique<common::RecurringTask>(
      *periodic, common::RecurringTask::Options{.name = "run log retention", .interval = kRetentionInterval},
      [store = logs.get(), &clock = clock](std::stop_token) {
        try {
          if (int removed = store->remove_expired(clock.now_ms()); removed > 0) {
            spdlog::info("executor: removed {} expired run log day director{}", removed,
                         removed == 1 ? "y" : "ies");
          }
        } catch (const std::exception& e) {
          spdlog::error("executor: run log retention failed: {}", e.what());
        }
      });
  retention->start();

  spdlog::info("executor: app {} serving on port {}, advertised as {}", options.app_name,
               port.load(), address);
  if (run_as) {
    spdlog::info("executor: script jobs and handler commands run as user {} (uid {}, gid {})",
                 run_as->name, run_as->uid, run_as->gid);
  }
  if (options.allow_scripts && ::geteuid() == 0 && (!run_as || run_as->is_this_process)) {
    spdlog::warn("executor: script jobs and handler commands run as root: they can read this "
                 "executor's secrets (its access token, memory and files) and do anything on "
                 "this machine; set --run-as (ExecutorOptions.run_as) to run them as an "
                 "unprivileged user");
  } else if (options.allow_scripts && (!run_as || run_as->is_this_process)) {
    spdlog::warn("executor: script jobs and handler commands run as this executor's own user: "
                 "they can read its files (run logs, results waiting for an admin, an access "
                 "token file) and signal it; set --run-as (ExecutorOptions.run_as) to run them "
                 "as another, unprivileged user");
  }
}

void ExecutorCore::Impl::stop() noexcept {
  const auto started = clock.steady_now();
  // Stop accepting calls first (running calls finish), then leave the admin's address list.
  if (server) server->stop();
  if (registry) registry->stop();
  // Held fires are reported not started (they go to the sender, like the results below), and no
  // fire starts any more; then their wheel stops.
  if (lead) lead->stop();
  if (lead_timer) lead_timer->stop();
  // Every run's result is now pushed to the sender: executing runs were asked to stop and are
  // reported (as they return, or at the bound), queued runs are reported as not executed.
  if (dispatcher) dispatcher->stop(options.shutdown_timeout);
  // Every run was asked to stop; script process groups are being ended. Not bounded by
  // shutdown_timeout: see ProcessGroups.
  if (process_groups) {
    if (std::size_t active = process_groups->active(); active > 0) {
      spdlog::info("executor: waiting for {} script process group(s) to end", active);
    }
    const auto deadline = std::chrono::steady_clock::now() + kScriptKillGrace + kProcessGroupExtraWait;
    if (std::size_t left = process_groups->close_and_wait(deadline); left > 0) {
      spdlog::error("executor: {} script process group(s) still running {} s after SIGKILL; "
                    "stopping without them",
                    left, std::chrono::duration_cast<std::chrono::seconds>(kProcessGroupExtraWait).count());
    }
  }
  if (callbacks) {
    const auto spent = std::chrono::duration_cast<std::chrono::milliseconds>(clock.steady_now() - started);
    const auto flush =
        std::max<std::chrono::milliseconds>(options.shutdown_timeout - spent, kMinCallbackFlush);
    callbacks->stop(flush);
  }
  if (retention) retention->stop();
  if (periodic_timer) periodic_timer->stop();  // every recurring task has stopped
}

void ExecutorCore::Impl::reset() noexcept {
  stop();
  retention.reset();
  {
    std::lock_guard lock(lead_estimate_mutex);
    registry_for_lead = nullptr;
  }
  registry.reset();
  server.reset();
  lead.reset();
  lead_timer.reset();
  dispatcher.reset();
  process_groups.reset();
  callbacks.reset();
  periodic.reset();
  periodic_timer.reset();
  logs.reset();
  port = 0;
  address.clear();
}

ExecutorCore::ExecutorCore(ExecutorOptions options, common::Clock& clock) {
  validate(options);
  auto user = run_as_user(options);
  impl_ = std::make_unique<Impl>(std::move(options), std::move(user), clock);
}

ExecutorCore::~ExecutorCore() { stop(); }

void ExecutorCore::handle(std::string name, Handler handler) {
  if (name.empty()) throw std::invalid_argument("Executor::handle: the handler name is empty");
  if (!handler) throw std::invalid_argument("Executor::handle: the handler for '" + name + "' is empty");
  impl_->handlers->set(std::move(name), std::move(handler));
}

void ExecutorCore::start() {
  std::lock_guard lock(impl_->lifecycle_mutex);
  if (impl_->state == Impl::State::kRunning) {
    throw std::logic_error("Executor::start: already started");
  }
  if (impl_->state == Impl::State::kStopped) {
    throw std::logic_error("Executor::start: a stopped executor cannot be started again");
  }
  try {
    impl_->start();
  } catch (...) {
    impl_->reset();  // back to "constructed": start() may be tried again
    throw;
  }
  impl_->state = Impl::State::kRunning;
}

void ExecutorCore::stop() {
  std::lock_guard lock(impl_->lifecycle_mutex);
  if (impl_->state != Impl::State::kRunning) return;  // never started, or stopped already
  spdlog::info("executor: stopping");
  impl_->stop();
  impl_->state = Impl::State::kStopped;
  spdlog::info("executor: stopped");
}

void ExecutorCore::wait_idle() const {
  // Under the lifecycle mutex, so stop() cannot tear them down meanwhile; neither takes it.
  std::lock_guard lock(impl_->lifecycle_mutex);
  if (impl_->state != Impl::State::kRunning) return;
  impl_->periodic->wait_idle();
  impl_->callbacks->wait_idle();
}

int ExecutorCore::port() const { return impl_->port.load(); }

const std::string& ExecutorCore::address() const {
  return impl_->address.empty() ? impl_->options.address : impl_->address;
}

// ---------------------------------------------------------------------------------------------
// Executor: an ExecutorCore on the system's clock.

struct Executor::Impl {
  explicit Impl(ExecutorOptions options) : core(std::move(options), common::SystemClock::instance()) {}
  ExecutorCore core;
};

Executor::Executor(ExecutorOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}

Executor::~Executor() = default;  // ExecutorCore's destructor stops

void Executor::handle(std::string name, Handler handler) {
  impl_->core.handle(std::move(name), std::move(handler));
}

void Executor::start() { impl_->core.start(); }

void Executor::stop() { impl_->core.stop(); }

int Executor::port() const { return impl_->core.port(); }

const std::string& Executor::address() const { return impl_->core.address(); }

}  // namespace cronwheel::executor
