#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/protocol/job_enums.h"
#include "executor/src/run_as.h"
#include "executor/src/run_log.h"

// Running scripts and commands, the policy: which interpreter runs a glue type, where it is
// found, which file a script goes to, and when a run's process group is ended (GroupEnding). The
// system calls are elsewhere: process_group.h starts and supervises the processes, script_file.h
// writes the files.

namespace cronwheel::executor {

// How a glue type's script is run.
struct Interpreter {
  std::string command;    // looked up on PATH: "bash", "python3", "node", "php", "pwsh"
  std::string extension;  // of the script file: ".sh", ".py", ".js", ".php", ".ps1"
};

// The interpreter for a script glue type; std::nullopt for BEAN and GLUE_GROOVY.
std::optional<Interpreter> interpreter_for(common::protocol::GlueType type);

// The executable `command` resolves to in `search_path` (PATH syntax: directories separated by
// ':'; an empty entry is the current directory, as for execvp); nullopt when none of them holds
// an executable regular file of that name. A command containing '/' is taken as a path.
std::optional<std::filesystem::path> find_executable(const std::string& command,
                                                     const std::string& search_path);

// How long a stopped script's process group has between SIGTERM and SIGKILL. The executor's
// stop() waits for groups being ended this way even past its shutdown_timeout (see executor.h).
inline constexpr std::chrono::milliseconds kScriptKillGrace{3'000};

struct ScriptSpec {
  common::protocol::GlueType glue_type = common::protocol::GlueType::kGlueShell;
  std::string source;
  std::int64_t job_id = 0;
  std::int64_t glue_updatetime = 0;  // the source's version: part of the file name
  // The run's: its log id and logical time (TriggerParam::log_date_time), parameters and shard,
  // which the script gets as its arguments and variables (run_script).
  std::int64_t log_id = 0;
  std::int64_t log_date_time = 0;
  std::string params;
  int shard_index = 0;
  int shard_total = 1;
  std::filesystem::path script_dir;  // where script files are written
  // Where the interpreter is looked up (PATH syntax); empty: this process's PATH. The script
  // itself inherits this process's environment either way.
  std::string search_path;
  // The user the script runs as; null: this process's user (see run_script).
  std::shared_ptr<const RunAsUser> run_as;
};

struct ScriptOutcome {
  enum class Kind {
    kExited,         // the interpreter exited by itself; exit_code says how
    kSignaled,       // it died of a signal nobody here sent (exit_code = the signal)
    kStopped,        // the stop token ended it: the whole process group is gone
    kFailedToStart,  // no interpreter, script file not writable, fork failed: see message
  };
  ScriptOutcome() = default;
  ScriptOutcome(Kind kind_, int exit_code_, std::string message_,
                std::optional<std::string> output_ = std::nullopt, bool output_refused_ = false)
      : kind(kind_),
        exit_code(exit_code_),
        message(std::move(message_)),
        output(std::move(output_)),
        output_refused(output_refused_) {}

  Kind kind = Kind::kExited;
  int exit_code = 0;
  std::string message;  // for the run's result: "exit code 3", "interpreter python3 not found on PATH", ...
  // The run's output: the JSON the script left in its CRONWHEEL_OUTPUT_FILE (run_script).
  std::optional<std::string> output;
  // What the script left in its CRONWHEEL_OUTPUT_FILE could not be its output: the run fails
  // whatever its exit code, and `message` ends in "; output refused: <why>" (run_script).
  bool output_refused = false;
};

// The variables a script run gets (run_script): what a handler's JobContext holds of its run.
inline constexpr std::string_view kJobIdVariable = "CRONWHEEL_JOB_ID";
inline constexpr std::string_view kLogIdVariable = "CRONWHEEL_LOG_ID";
inline constexpr std::string_view kLogDateTimeVariable = "CRONWHEEL_LOG_DATE_TIME";
inline constexpr std::string_view kShardIndexVariable = "CRONWHEEL_SHARD_INDEX";
inline constexpr std::string_view kShardTotalVariable = "CRONWHEEL_SHARD_TOTAL";
inline constexpr std::string_view kOutputFileVariable = "CRONWHEEL_OUTPUT_FILE";

// The run's variables, NAME=value in decimal, in the order above (without the output file): what
// a script job and a command the `shell` handler runs get of their run.
std::vector<std::string> run_variables(std::int64_t job_id, std::int64_t log_id, std::int64_t log_date_time,
                                       int shard_index, int shard_total);

// When the process group of a run is ended, and how the run's end is described: run_script's
// rules as decisions on what its supervisor saw, without a system call, so that they are tested
// with fixed times. The supervisor (process_group.cpp) looks after every event, at least every
// few milliseconds while the group is being ended, and does what next() says:
//  - a stop requested while the leader (the interpreter) runs: SIGTERM (and SIGCONT) to the
//    group, once;
//  - the leader exited and its group has processes left: the same, after a line in the log;
//  - `grace` after that SIGTERM, with anything left: SIGKILL to the group, and again at every
//    later look, so a fork racing the first kill is caught by the next;
//  - done once the leader is reaped and nothing of its group is left, or only processes this
//    executor may not signal, after the SIGKILL.
class GroupEnding {
 public:
  using Time = std::chrono::steady_clock::time_point;

  enum class Group { kGone, kAlive, kUnsignalable };
  struct Look {
    bool leader_done = false;     // the leader exited and was reaped (or reaped elsewhere)
    bool stop_requested = false;  // the run's stop token
    Group group = Group::kAlive;  // looked at only once leader_done
    Time now{};
  };
  enum class Step {
    kWait,                // nothing to do before the next event
    kTerminateStopped,    // SIGTERM and SIGCONT to the group: the run was stopped
    kTerminateLeftovers,  // the same: the leader exited, processes of its group did not
    kKillAfterGrace,      // SIGKILL to the group, the first time: `grace` passed after SIGTERM
    kKill,                // SIGKILL to the group again
    kDone,                // the run is over: outcome() says how
  };

  explicit GroupEnding(std::chrono::milliseconds grace) : grace_(grace) {}

  Step next(const Look& look);

  // The run's outcome once next() said kDone. `wait_status` is the leader's waitpid status;
  // `status_lost` says it was reaped elsewhere.
  ScriptOutcome outcome(int wait_status, bool status_lost) const;

  bool ending() const noexcept { return ending_; }  // SIGTERM was sent
  bool killed() const noexcept { return killed_; }  // SIGKILL was sent
  Time kill_at() const noexcept { return kill_at_; }  // when ending(): when SIGKILL is due
  std::chrono::milliseconds grace() const noexcept { return grace_; }

 private:
  void begin(Time now);

  std::chrono::milliseconds grace_;
  bool ending_ = false;
  bool stopped_ = false;  // ending because of a stop request
  bool killed_ = false;
  bool unsignalable_left_ = false;
  Time kill_at_{};
};

// Runs a script job to completion.
//
// The source is written to {script_dir}/{job_id}_{glue_updatetime}{extension} (the directory
// prepared by prepare_script_directory, script_file.h), atomically (a temporary file renamed
// over it), and only when the file is missing or differs in content, owner, group or mode, so a
// job's runs share one file per version. The file may hold credentials: it has mode 0600, or, for a script
// run as another user, mode 0640 and that user's primary group (owner: this process's user, so
// the script cannot change its own file). It is started as
// `interpreter file params shard_index shard_total`, as described at the end of this comment.
//
// The run is over when the interpreter exits. Processes it leaves in its group (`cmd &`
// without `wait`) are then ended like a stopped script's (TERM, then KILL after `grace`), so
// nothing of a run outlives it; a script that means to leave a daemon behind starts it with
// setsid. Output of a process that escaped the group is not waited for.
//
// When `stop` is requested the process group gets SIGTERM (and SIGCONT, so a stopped process
// sees it) and, if anything in it is still alive after `grace`, SIGKILL; run_script returns
// only once no process of the group is left, so a kill or a timeout leaves nothing running (a
// process that moves itself to another session or group escapes, as with any process-group
// based supervisor). A group member that exited but is waiting to be reaped by a parent other
// than this process counts as gone.
//
// The run in the script's environment: CRONWHEEL_JOB_ID, CRONWHEEL_LOG_ID,
// CRONWHEEL_LOG_DATE_TIME (epoch ms), CRONWHEEL_SHARD_INDEX and CRONWHEEL_SHARD_TOTAL, in
// decimal, from `spec`; none of them secret, and, with CRONWHEEL_OUTPUT_FILE, the only
// CRONWHEEL_* variables it has (see the environment below).
//
// The script's output: CRONWHEEL_OUTPUT_FILE is the path of a file created empty for this run
// (OutputFile, script_file.h: writable by the run's user alone, removed when run_script
// returns). Once the interpreter exited or died of a signal (not when stopped) and its group is
// gone, at most JobContext::kMaxOutputBytes + 1 bytes of the file are read: empty or only
// whitespace, no output (the outcome's output is nullopt); one JSON value within set_output's
// rules (output_problem, run_context.h), without its surrounding whitespace, the outcome's
// output. A longer file, text that is not JSON, a file the script removed or replaced, or one
// that cannot be read gives no output, output_refused, "; output refused: <why>" after the
// outcome's message (which names the exit code or signal as before), and a line in `log` saying
// why. When the file cannot be created (the user cannot be given it), the script runs without
// the variable, after a line in `log` saying why.
//
// Blocking; call it from the job's own thread. Thread-safe: runs of different jobs may go on
// concurrently. Reaps only its own interpreter (waitpid on that pid), and, after it, children
// of this process still in that group (which happens only when this process is PID 1 or a
// subreaper and inherited them).
//
// How the interpreter (and run_process's command) starts: forked and exec'd (posix_spawn
// cannot change the user), in a new process group whose id is its pid, with stdin from
// /dev/null, every signal at its default disposition and unblocked, no descriptor of this
// process other than 0-2, and this process's environment minus every CRONWHEEL_* variable (a
// script then gets its run's CRONWHEEL_* variables, see above). Its stdout and stderr share one
// pipe whose output goes to `log` line by line as it arrives (lines longer than
// kMaxOutputLineBytes are split; a last line without '\n' is written when the
// script ends). With `run_as` it starts in that user's home directory ("/" when that cannot be
// entered) with HOME, USER and LOGNAME naming the user, and, unless that user is this process's
// own, it gets the user's supplementary groups, group and user (real, effective and saved)
// before exec. Exec resets the dumpable flag, so a script is an ordinary process of its user
// even when this process is not dumpable. A failure before exec (no such file, not permitted)
// is kFailedToStart naming the step.
ScriptOutcome run_script(const ScriptSpec& spec, RunLogWriter& log, std::stop_token stop,
                         std::chrono::milliseconds grace = kScriptKillGrace);

// A command run the way run_script runs a script's interpreter: `argv[0]` is looked up on
// `search_path` (empty: this process's PATH; a name holding '/' is taken as a path) and started
// with `argv` in a process group of its own, as `run_as` when given, with the same environment,
// descriptors, output handling and ending (TERM, then KILL after `grace`) as a script, and
// run_process returns only once no process of that group is left; `environment` (NAME=value)
// is added to that environment, as a script's run variables are. An empty argv or a command
// that cannot be found is kFailedToStart. Blocking and thread-safe like run_script.
ScriptOutcome run_process(const std::vector<std::string>& argv, RunLogWriter& log,
                          std::stop_token stop, std::chrono::milliseconds grace = kScriptKillGrace,
                          const std::string& search_path = {},
                          const RunAsUser* run_as = nullptr,
                          const std::vector<std::string>& environment = {});

}  // namespace cronwheel::executor
