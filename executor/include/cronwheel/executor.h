#pragma once

// The cronwheel executor library: embed it in a service, register handlers by name, and the
// cronwheel admin (or an XXL-JOB 2.4 admin) runs them on schedule.
//
//   cronwheel::executor::ExecutorOptions options;
//   options.admin_addresses = {"http://admin-1:8080/", "http://admin-2:8080/"};
//   options.app_name = "orders";
//   cronwheel::executor::Executor executor(options);
//   executor.handle("expireUnpaidOrders", [](cronwheel::executor::JobContext& ctx) {
//     ctx.log("checking orders older than " + ctx.params());
//     for (auto& order : unpaid_orders()) {
//       if (ctx.stop_requested()) return;   // killed, timed out or replaced: stop soon
//       expire(order);
//     }
//   });
//   executor.start();
//   ...
//   executor.stop();
//
// Guarantees:
//  - Runs of one job id execute one at a time, in arrival order, on that job's own thread;
//    runs of different jobs run concurrently. Runs of a job never overlap, not even after a
//    kill, a timeout or a replacement: the next run starts once the stopped handler returned.
//  - A handler that returns without calling fail() succeeded; an exception escaping it is a
//    failure carrying the exception's message ("unknown exception" for one that is not a
//    std::exception). Nothing a handler throws crashes the executor.
//  - Every accepted trigger gets exactly one result at the admin, including triggers that were
//    queued and then killed, replaced or dropped at shutdown ("... [job not executed, in the job
//    queue, killed.]"): results are batched, retried, and kept on disk while no admin answers,
//    across restarts of the executor. A result is on disk (a journal appended without fsync) before
//    it is queued for the admin, so it also survives the executor being killed (SIGKILL, a crash)
//    at any moment after its run ended; the next start with the same log_dir sends it.
//  - C++ cannot interrupt a thread: a killed or timed-out handler is asked to stop through its
//    stop token and must return on its own. Its result (killed, or code 502 for a timeout) is
//    reported when it returns, or 5 s after the stop if it has not returned by then; the job's
//    next run still waits for it. Script jobs are processes and are really ended (their whole
//    process group: TERM, then KILL).
//
// Threading: handle() may be called from any thread at any time; start() and stop() from any
// thread (they serialize); handlers run on their job's thread.
//
// This header needs only the standard library; the executor's dependencies stay private.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

namespace cronwheel::executor {

struct ExecutorOptions {
  // Admin base URLs ("http://host:port/" with an optional path prefix). Registration goes to
  // the first that answers; results to the first that accepts them.
  std::vector<std::string> admin_addresses;
  // The executor group's app name (registryKey), 4-64 characters.
  std::string app_name;
  // Shared secret: required from the admin on every call when set, and sent to it.
  std::string access_token;

  std::string listen_host = "0.0.0.0";
  int listen_port = 9999;  // 0: the OS picks a free port (port() says which)
  // The URL the admin calls this executor at. Default: http://<this host's first non-loopback
  // IPv4 address>:<port>/ (http://127.0.0.1:<port>/ when listening on 127.0.0.1).
  std::string address;

  // Run logs ({log_dir}/yyyy-MM-dd/{logId}.log), script files and undelivered results live here.
  // They are this process's user's alone: files of mode 0600 in directories of mode 0700, made so
  // at start() where an earlier version left them open. The one exception is the script
  // directory, which a run_as user reads through its group: log_dir then has mode 0710 and that
  // user's primary group. A log_dir that is not this user's, or is sticky (a shared directory
  // such as /tmp), keeps its mode.
  // A run's logDateTime names its day directory: /run and /log refuse times before 2000-01-01 or
  // more than a day past this machine's clock, naming the field.
  std::string log_dir = "cronwheel-logs";
  int log_retention_days = 30;  // day directories older than this are removed; 0 keeps all
  // A run's log stops growing at this size: one line says it was truncated and at what size,
  // the rest of the run's output is dropped (the run goes on) and its result (handleMsg) starts
  // with "log truncated at N bytes (max-run-log-bytes)". At least 4096.
  std::size_t max_run_log_bytes = std::size_t{16} << 20;

  // What one admin, or a user of it, can make this executor hold at once. At the limits /run is
  // refused with the reason as its msg, which the admin records as the trigger's result; a
  // refused run leaves nothing behind. Runs waiting for their job's thread (not counting the one
  // executing): "job 7 has 64 runs queued already (max-queued-runs-per-job); run refused".
  std::size_t max_queued_runs_per_job = 64;
  // Job threads (one per job with a run executing or queued) alive at once. At the limit an
  // idle job thread is ended to make room; without one, the first run of another job is refused
  // ("512 jobs have runs executing or queued on this executor already (max-job-threads); run of
  // job 7 refused"). XXL-JOB's executors have no such limit, and an executor serving a few
  // hundred jobs a second keeps a few hundred of them busy at once on a loaded machine: the
  // default leaves room for that, and bounds the rest.
  std::size_t max_job_threads = 512;

  // Lead dispatch (docs/scheduling.md "Lead dispatch"): a cronwheel admin may hand this executor
  // the fires of a coming second ahead of time (POST /lead); it holds them and starts each at its
  // instant on the admin's clock, as the admin's /run would have, never before it. Offered to the
  // admin (registration's leadDispatch) only while this executor has measured the admin's clock
  // and finds it at most max_clock_offset from its own; /lead is refused otherwise. Held fires
  // are journalled under log_dir: fires a stop or a crash leaves unstarted are reported to the
  // admin as not started (it sends them again), never a fire that was started.
  bool lead_dispatch = true;
  std::chrono::milliseconds max_clock_offset{1000};  // positive
  // Fires held at once; beyond, a fire of /lead is refused ("... (max-held-fires)") and the
  // admin sends it by /run at its instant. At least 1.
  std::size_t max_held_fires = 100'000;

  // Whether GLUE_SHELL/PYTHON/NODEJS/PHP/POWERSHELL jobs may run. Off by default in the
  // library: a script job runs arbitrary code sent by the admin.
  //
  // What a script job gets of its run: `params shard_index shard_total` as its arguments (as
  // XXL-JOB passes them), and these variables, set after this process's CRONWHEEL_* ones are
  // removed, naming nothing secret, and a script's only CRONWHEEL_* variables:
  //   CRONWHEEL_JOB_ID, CRONWHEEL_LOG_ID             JobContext::job_id(), log_id()
  //   CRONWHEEL_LOG_DATE_TIME                        JobContext::log_date_time() (epoch ms)
  //   CRONWHEEL_SHARD_INDEX, CRONWHEEL_SHARD_TOTAL   JobContext::shard_index(), shard_total()
  //   CRONWHEEL_OUTPUT_FILE   a file made empty for this run, writable by the script's user
  //     alone and removed after the run, where the script may leave its run's output: one JSON
  //     value under JobContext::set_output's rules, surrounding whitespace aside. It is read
  //     once the script ended (not when it was killed or timed out); left empty, the run has no
  //     output. More than kMaxOutputBytes, text that is not JSON, or a file the script removed
  //     or replaced (write into it, do not move another file over it) fails the run whatever
  //     its exit code, with a message saying why ("exit code 0; output refused:
  //     CRONWHEEL_OUTPUT_FILE: not JSON: ..."), as a handler fails that lets set_output's
  //     exception escape.
  bool allow_scripts = false;
  // The user script jobs and commands of handlers (the standalone executor's `shell`) run as: a
  // user name, or a numeric uid the user database knows. They get its uid, gid and
  // supplementary groups, start in its home directory, and HOME, USER and LOGNAME name it;
  // script files are readable by its primary group (mode 0640) and nobody else. Needs root, or
  // CAP_SETUID, CAP_SETGID and CAP_KILL; the constructor checks that it works. Empty: they run
  // as this process's user, and can then read what it can: its files and, unless this process
  // made itself non-dumpable (prctl(PR_SET_DUMPABLE, 0), as the standalone executor does), its
  // memory and /proc/<pid>/environ, and start() logs a warning for scripts. Scripts never get
  // a CRONWHEEL_* variable of this process in their environment either way (not the access
  // token, nor the file it was read from), but only another user keeps them from reading such a
  // file itself.
  std::string run_as;

  std::size_t http_threads = 16;
  std::chrono::seconds registry_interval{30};
  // While no admin accepts results they are kept on disk and offered again this often.
  std::chrono::milliseconds callback_retry_interval{30'000};
  // At most this many results wait for an admin (in memory and on disk): at the limit /run is
  // refused (the admin records a failed trigger and retries it like one) until results are
  // delivered again. Runs already accepted still report theirs, so the backlog exceeds the limit
  // by at most the runs queued or running at that moment.
  std::size_t max_undelivered_results = 100'000;
  // A job thread with nothing to do for this long ends (the next trigger starts a new one).
  std::chrono::seconds idle_job_thread_timeout{90};
  // stop() waits this long for running handlers after asking them to stop; a handler still
  // running then is reported as killed and left to finish on its own (detached) thread. What is
  // left of this bound (at least 1 s) then goes to delivering the results.
  // Script jobs are the exception: stop() never returns while a process of a script run is
  // alive, so it can take up to the script's TERM-to-KILL grace (3 s) longer than this bound.
  std::chrono::milliseconds shutdown_timeout{10'000};
};

// What a handler sees of its run. Valid only during the handler call; not copyable. log(),
// succeed() and fail() may be called from any thread the handler starts, until it returns.
class JobContext {
 public:
  virtual ~JobContext() = default;

  virtual std::int64_t job_id() const = 0;
  virtual std::int64_t log_id() const = 0;
  virtual const std::string& params() const = 0;
  // SHARDING_BROADCAST routing: this executor's shard and the number of shards (0 and 1
  // otherwise).
  virtual int shard_index() const = 0;
  virtual int shard_total() const = 0;
  // The run's logical time, epoch milliseconds: the logDateTime the admin sent with the run,
  // which is the instant the run stands for, not when it was sent or started. For a scheduled
  // fire it is the time the fire was due (a late fire keeps it); for a backfill's run, the
  // historical instant it runs for (docs/scheduling.md, "Backfill"); for a manual trigger or a
  // retry, when it was asked for or due. An XXL-JOB admin sends its trigger time. A handler
  // computing "yesterday's report" reads the day from here, so that a backfill or a late run
  // does the work of its own instant. Between 2000-01-01 and a day past this machine's clock
  // (/run refuses others, see ExecutorOptions::log_dir).
  virtual std::int64_t log_date_time() const = 0;

  // Requested when the run is killed, times out, is replaced (COVER_EARLY, another handler or
  // glue version) or the executor stops. Handlers doing long work check it and return soon
  // after. A std::stop_callback registered on it runs on the thread that stops the run (an HTTP
  // worker or the executor's timeout thread): keep it short.
  virtual std::stop_token stop_token() const = 0;
  bool stop_requested() const { return stop_token().stop_requested(); }

  // Appends a line (a timestamp is prefixed) to this run's log, readable from the console.
  virtual void log(std::string_view message) = 0;

  // The run's result; the last call wins. Not calling either means success.
  virtual void succeed(std::string_view message = {}) = 0;
  virtual void fail(std::string_view message) = 0;

  // The run's structured output, sent with its result: what the nodes after this one in a
  // workflow read as ${nodes.KEY.output...} (docs/workflows.md). `json` is a JSON text (an
  // object, an array, a string, a number, ...) of at most kMaxOutputBytes; the last call wins.
  // Throws std::invalid_argument, and keeps the output it had, for text that is not such JSON.
  // An XXL-JOB admin ignores it. A script job sets it through its CRONWHEEL_OUTPUT_FILE (see
  // ExecutorOptions::allow_scripts).
  static constexpr std::size_t kMaxOutputBytes = 64 * 1024;
  virtual void set_output(std::string_view json) = 0;
};

using Handler = std::function<void(JobContext&)>;

class Executor {
 public:
  // Throws std::invalid_argument naming the option when the options cannot work (no admin,
  // bad app name, bad URL, a run_as user that does not exist or this process cannot run as).
  explicit Executor(ExecutorOptions options);
  ~Executor();  // stop()

  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Registers `handler` under `name` (the job's executorHandler). Registering a name again
  // replaces the handler for later runs (the job's next trigger stops its runs of the old one,
  // as a changed executorHandler does). May be called before or after start(). Throws
  // std::invalid_argument for an empty name or handler.
  void handle(std::string name, Handler handler);

  // Starts serving the admin's calls, registering with the admin, and delivering results
  // (including results kept on disk by an earlier run). Throws std::system_error when the
  // listen address cannot be bound, the log directory cannot be created, or the run_as user
  // cannot open the script directory (the executor is then as constructed, and start() may be
  // tried again), std::logic_error when already started or stopped: a stopped executor cannot
  // be started again (create a new one).
  void start();

  // Stops accepting calls, removes this executor's registration, asks running jobs to stop
  // and waits for them up to shutdown_timeout (queued runs are reported as not executed) and
  // for every process group of a script run to be gone (see shutdown_timeout), then delivers or
  // stores every result. Idempotent; does nothing before start().
  void stop();

  // The port listened on and the URL advertised to the admin; meaningful once start() returned
  // (before it: 0, and options.address).
  int port() const;
  const std::string& address() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cronwheel::executor
