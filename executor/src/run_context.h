#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "common/protocol/constants.h"
#include "common/protocol/messages.h"
#include "common/util/clock.h"
#include "cronwheel/executor.h"
#include "executor/src/run_log.h"
#include "executor/src/script_runner.h"

namespace cronwheel::executor {

// How a run ended, as the admin is told: handleCode (kSuccessCode, kFailCode, kTimeoutCode) and
// handleMsg.
struct RunResult {
  RunResult() = default;
  RunResult(int code_, std::string msg_, std::optional<std::string> output_ = std::nullopt)
      : code(code_), msg(std::move(msg_)), output(std::move(output_)) {}

  int code = common::protocol::kSuccessCode;
  std::string msg;
  std::optional<std::string> output;  // JobContext::set_output's, when it was called

  friend bool operator==(const RunResult&, const RunResult&) = default;
};

// Why `json` cannot be a run's output (JobContext::set_output's rule, which script jobs'
// CRONWHEEL_OUTPUT_FILE follows too): "70000 bytes, more than 65536" beyond
// JobContext::kMaxOutputBytes, "not JSON: <the parser's reason>" for text that is not one JSON
// value within the bounds the admin reads it with; nullopt when it can.
std::optional<std::string> output_problem(std::string_view json);

// A handleMsg longer than this is cut (at a UTF-8 character boundary) and ends in "...": XXL-JOB's
// executor does the same, so a handler returning a huge message cannot bloat callbacks and the
// admin's log table.
inline constexpr std::size_t kMaxHandleMsgBytes = 50'000;
std::string truncate_handle_msg(std::string msg);

// One run-log line: "yyyy-MM-dd HH:mm:ss.SSS <message>", stamped with `now_ms` (epoch
// milliseconds, the executor's clock) in local time.
std::string log_line(std::int64_t now_ms, std::string_view message);

// Runs a command as a supervised process group of a run (run_process: output to `log`, ended by
// `stop`, `environment` added to its environment), on behalf of the executor, which counts the
// groups it starts so that its stop() can wait until they are gone.
using CommandRunner = std::function<ScriptOutcome(const std::vector<std::string>& argv, RunLogWriter& log,
                                                  std::stop_token stop, const std::vector<std::string>& environment)>;

// The JobContext a BEAN handler receives for one run.
//
// Lives on the job thread's stack for the duration of the handler call. log(), succeed() and
// fail() are thread-safe (the handler may call them from threads of its own until it returns);
// the accessors return data fixed at construction.
class RunContext final : public JobContext {
 public:
  // `trigger`, `log` and `clock` (which stamps log()'s lines) must outlive the context.
  // `commands` is what run_command() uses (empty: run_command() fails to start anything).
  RunContext(const common::protocol::TriggerParam& trigger, RunLogWriter& log,
             const common::Clock& clock, std::stop_token stop, CommandRunner commands = {});

  std::int64_t job_id() const override { return trigger_.job_id; }
  std::int64_t log_id() const override { return trigger_.log_id; }
  const std::string& params() const override { return trigger_.executor_params; }
  int shard_index() const override { return trigger_.broadcast_index; }
  int shard_total() const override { return shard_total_; }
  std::int64_t log_date_time() const override { return trigger_.log_date_time; }
  std::stop_token stop_token() const override { return stop_; }

  void log(std::string_view message) override;
  void succeed(std::string_view message = {}) override;
  void fail(std::string_view message) override;
  void set_output(std::string_view json) override;

  // What the handler set; success with an empty message when it set nothing.
  RunResult result() const;

  // Runs `argv` as a process group supervised like a script job: its output goes to this run's
  // log as written (no timestamps added), a stop of the run ends the whole group (TERM, then
  // KILL), and the executor's stop() waits until the group is gone. Its environment has the
  // run's variables, as a script job's (run_variables, script_runner.h). Blocking; call it on the
  // handler's thread. Not part of JobContext: the executor's own handlers (the standalone
  // executor's `shell`) reach it by casting their JobContext to RunContext.
  ScriptOutcome run_command(const std::vector<std::string>& argv);

 private:
  const common::protocol::TriggerParam& trigger_;
  const int shard_total_;
  RunLogWriter& log_;
  const common::Clock& clock_;
  const std::stop_token stop_;
  const CommandRunner commands_;

  mutable std::mutex mutex_;
  RunResult result_;
};

// Calls `handler` with a RunContext and returns the result it set. An exception escaping the
// handler is a failure carrying its message (what(), or "unknown exception" for one that is not
// a std::exception), also written to the run log. Never throws. `clock` and `commands` are handed
// to the RunContext.
RunResult run_handler(const Handler& handler, const common::protocol::TriggerParam& trigger,
                      RunLogWriter& log, const common::Clock& clock, std::stop_token stop,
                      const CommandRunner& commands = {}) noexcept;

}  // namespace cronwheel::executor
