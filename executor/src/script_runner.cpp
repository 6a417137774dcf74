#include "executor/src/script_runner.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <system_error>
#include <utility>
#include <vector>

#include "common/util/utf8.h"
#include "executor/src/file_io.h"
#include "executor/src/process_group.h"
#include "executor/src/run_context.h"
#include "executor/src/script_file.h"

namespace cronwheel::executor {
namespace {

namespace fs = std::filesystem;
using common::protocol::GlueType;

// Used when this process has no PATH at all (what execvp assumes too).
constexpr const char* kDefaultPath = "/usr/local/bin:/usr/bin:/bin";

ScriptOutcome failed_to_start(std::string message) {
  return {ScriptOutcome::Kind::kFailedToStart, 0, std::move(message)};
}

std::string signal_name(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  return abbrev != nullptr ? "SIG" + std::string(abbrev) : "signal " + std::to_string(sig);
}

// A reason in the run's log is cut to this: a parser's message may quote the script's text.
constexpr std::size_t kMaxReasonBytes = 512;

std::string note(std::string_view what) { return "[cronwheel] " + std::string(what); }

// What a finished script left in its output file: the output, or why there is none that can be.
struct TakenOutput {
  std::optional<std::string> json;
  std::optional<std::string> refusal;  // "CRONWHEEL_OUTPUT_FILE: not JSON: ..."
};

// The output a finished script left in `file`, following run_script's rules.
TakenOutput take_output(const OutputFile& file) {
  const std::string variable(kOutputFileVariable);
  const auto content = file.read(JobContext::kMaxOutputBytes);
  switch (content.state) {
    case OutputFile::Content::State::kReplaced:
      return {std::nullopt, "the script removed or replaced " + variable +
                                " (write into the file it names)"};
    case OutputFile::Content::State::kUnreadable:
      return {std::nullopt, "cannot read " + variable + ": " + errno_text(content.error)};
    case OutputFile::Content::State::kRead:
      break;
  }
  if (content.bytes.size() > JobContext::kMaxOutputBytes) {
    return {std::nullopt, variable + " holds more than " +
                              std::to_string(JobContext::kMaxOutputBytes) + " bytes"};
  }
  constexpr std::string_view kWhitespace = " \t\r\n";  // JSON's
  std::string_view json(content.bytes);
  const auto first = json.find_first_not_of(kWhitespace);
  if (first == std::string_view::npos) return {};  // nothing written
  json = json.substr(first, json.find_last_not_of(kWhitespace) + 1 - first);
  if (auto problem = output_problem(json)) {
    std::string_view reason(*problem);
    reason = reason.substr(0, common::utf8::prefix_length(reason, kMaxReasonBytes));
    return {std::nullopt, variable + ": " + std::string(reason)};
  }
  return {std::string(json), std::nullopt};
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// GroupEnding

GroupEnding::Step GroupEnding::next(const Look& look) {
  if (!ending_) {
    if (!look.leader_done && look.stop_requested) {
      stopped_ = true;
      begin(look.now);
      return Step::kTerminateStopped;
    }
    if (!look.leader_done) return Step::kWait;
    if (look.group == Group::kGone) return Step::kDone;
    begin(look.now);
    return Step::kTerminateLeftovers;
  }
  if (look.leader_done) {
    if (look.group == Group::kGone) return Step::kDone;
    if (look.group == Group::kUnsignalable && killed_) {
      unsignalable_left_ = true;
      return Step::kDone;
    }
  }
  if (!killed_ && look.now >= kill_at_) {
    killed_ = true;
    return Step::kKillAfterGrace;
  }
  return killed_ ? Step::kKill : Step::kWait;
}

void GroupEnding::begin(Time now) {
  ending_ = true;
  kill_at_ = now + grace_;
}

ScriptOutcome GroupEnding::outcome(int wait_status, bool status_lost) const {
  ScriptOutcome result;
  if (stopped_) {
    result.kind = ScriptOutcome::Kind::kStopped;
    result.message = killed_ ? "stopped: the process group was killed (SIGKILL) after not "
                               "ending within " + std::to_string(grace_.count()) +
                                   " ms of SIGTERM"
                             : "stopped: the process group ended on SIGTERM";
  } else if (status_lost) {
    result.kind = ScriptOutcome::Kind::kExited;
    result.exit_code = -1;
    result.message = "exit status unknown: the interpreter was reaped elsewhere (is SIGCHLD "
                     "ignored in this process?)";
  } else if (WIFSIGNALED(wait_status)) {
    result.kind = ScriptOutcome::Kind::kSignaled;
    result.exit_code = WTERMSIG(wait_status);
    result.message = "killed by " + signal_name(result.exit_code);
  } else {
    result.kind = ScriptOutcome::Kind::kExited;
    result.exit_code = WEXITSTATUS(wait_status);
    result.message = "exit code " + std::to_string(result.exit_code);
  }
  if (unsignalable_left_) {
    result.message += "; processes of its group that this executor may not signal are still "
                      "running";
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// Scripts and commands

std::optional<Interpreter> interpreter_for(GlueType type) {
  switch (type) {
    case GlueType::kGlueShell:
      return Interpreter{"bash", ".sh"};
    case GlueType::kGluePython:
      return Interpreter{"python3", ".py"};
    case GlueType::kGlueNodejs:
      return Interpreter{"node", ".js"};
    case GlueType::kGluePhp:
      return Interpreter{"php", ".php"};
    case GlueType::kGluePowershell:
      return Interpreter{"pwsh", ".ps1"};
    case GlueType::kBean:
    case GlueType::kGlueGroovy:
      return std::nullopt;
  }
  return std::nullopt;
}

std::optional<std::filesystem::path> find_executable(const std::string& command,
                                                     const std::string& search_path) {
  auto usable = [](const fs::path& candidate) {
    struct stat st {};
    return ::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
           ::access(candidate.c_str(), X_OK) == 0;
  };
  if (command.empty()) return std::nullopt;
  if (command.find('/') != std::string::npos) {
    if (usable(command)) return fs::path(command);
    return std::nullopt;
  }
  std::size_t start = 0;
  for (;;) {
    std::size_t colon = search_path.find(':', start);
    std::string dir = search_path.substr(start, colon == std::string::npos ? std::string::npos
                                                                          : colon - start);
    fs::path candidate = (dir.empty() ? fs::path(".") : fs::path(dir)) / command;
    if (usable(candidate)) return fs::absolute(candidate);
    if (colon == std::string::npos) return std::nullopt;
    start = colon + 1;
  }
}

ScriptOutcome run_script(const ScriptSpec& spec, RunLogWriter& log, std::stop_token stop,
                         std::chrono::milliseconds grace) {
  std::string glue(common::protocol::to_string(spec.glue_type));
  auto interpreter = interpreter_for(spec.glue_type);
  if (!interpreter) {
    if (spec.glue_type == GlueType::kGlueGroovy) {
      return failed_to_start("glue type GLUE_GROOVY is not supported by this executor (it runs "
                             "on the JVM only)");
    }
    return failed_to_start("glue type " + glue + " is not a script");
  }
  if (stop.stop_requested()) {
    return {ScriptOutcome::Kind::kStopped, 0, "stopped before the script started"};
  }

  std::string search_path = spec.search_path;
  if (search_path.empty()) {
    const char* path = std::getenv("PATH");
    search_path = path != nullptr ? path : kDefaultPath;
  }
  auto program = find_executable(interpreter->command, search_path);
  if (!program) {
    return failed_to_start("interpreter " + interpreter->command + " for " + glue +
                           " not found on PATH");
  }

  // One file per job and version of its source: a job's runs share it.
  const std::string name = std::to_string(spec.job_id) + "_" +
                           std::to_string(spec.glue_updatetime) + interpreter->extension;
  fs::path script;
  try {
    script = write_script_file(spec.script_dir, name, spec.source, spec.run_as.get());
  } catch (const std::system_error& e) {
    return failed_to_start(std::string("cannot write the script file: ") + e.what());
  }

  // The run's variables (run_script's contract names them all).
  std::vector<std::string> environment =
      run_variables(spec.job_id, spec.log_id, spec.log_date_time, spec.shard_index, spec.shard_total);
  // Created after the script file, in the directory that made ready.
  std::optional<OutputFile> output_file;
  try {
    output_file.emplace(spec.script_dir, spec.job_id, spec.run_as.get());
    environment.push_back(std::string(kOutputFileVariable) + "=" + output_file->path().string());
  } catch (const std::system_error& e) {
    log.append(note("no " + std::string(kOutputFileVariable) + " for this run: " + e.what()));
  }

  std::vector<std::string> argv = {program->string(), script.string(), spec.params,
                                   std::to_string(spec.shard_index),
                                   std::to_string(spec.shard_total)};
  ScriptOutcome outcome = run_in_process_group(*program, std::move(argv), log, std::move(stop),
                                               grace, spec.run_as.get(), environment);
  // A stopped run is reported with its stop's result, and one that did not start wrote nothing.
  if (output_file && (outcome.kind == ScriptOutcome::Kind::kExited ||
                      outcome.kind == ScriptOutcome::Kind::kSignaled)) {
    auto taken = take_output(*output_file);
    outcome.output = std::move(taken.json);
    if (taken.refusal) {
      log.append(note("output refused: " + *taken.refusal));
      outcome.output_refused = true;
      outcome.message += "; output refused: " + *taken.refusal;
    }
  }
  return outcome;
}

std::vector<std::string> run_variables(std::int64_t job_id, std::int64_t log_id, std::int64_t log_date_time,
                                       int shard_index, int shard_total) {
  return {
      std::string(kJobIdVariable) + "=" + std::to_string(job_id),
      std::string(kLogIdVariable) + "=" + std::to_string(log_id),
      std::string(kLogDateTimeVariable) + "=" + std::to_string(log_date_time),
      std::string(kShardIndexVariable) + "=" + std::to_string(shard_index),
      std::string(kShardTotalVariable) + "=" + std::to_string(shard_total),
  };
}

ScriptOutcome run_process(const std::vector<std::string>& argv, RunLogWriter& log,
                          std::stop_token stop, std::chrono::milliseconds grace,
                          const std::string& search_path, const RunAsUser* run_as,
                          const std::vector<std::string>& environment) {
  if (argv.empty() || argv.front().empty()) return failed_to_start("no command to run");
  if (stop.stop_requested()) {
    return {ScriptOutcome::Kind::kStopped, 0, "stopped before the command started"};
  }
  std::string path = search_path;
  if (path.empty()) {
    const char* env_path = std::getenv("PATH");
    path = env_path != nullptr ? env_path : kDefaultPath;
  }
  auto program = find_executable(argv.front(), path);
  if (!program) return failed_to_start("command " + argv.front() + " not found on PATH");
  return run_in_process_group(*program, argv, log, std::move(stop), grace, run_as, environment);
}

}  // namespace cronwheel::executor
