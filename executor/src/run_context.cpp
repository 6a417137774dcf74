#include "executor/src/run_context.h"

#include <stdexcept>

#include "common/protocol/json_reader.h"

#include <time.h>

#include <array>
#include <cstdio>
#include <ctime>
#include <exception>
#include <utility>

#include <spdlog/spdlog.h>

namespace cronwheel::executor {

using common::protocol::kFailCode;
using common::protocol::kSuccessCode;

std::string truncate_handle_msg(std::string msg) {
  if (msg.size() <= kMaxHandleMsgBytes) return msg;
  std::size_t cut = kMaxHandleMsgBytes;
  // Back up to the first byte of a UTF-8 character (continuation bytes are 10xxxxxx).
  while (cut > 0 && (static_cast<unsigned char>(msg[cut]) & 0xC0) == 0x80) --cut;
  msg.resize(cut);
  msg += "...";
  return msg;
}

std::string log_line(std::int64_t now_ms, std::string_view message) {
  // Floored, so a time before 1970 still gets milliseconds in [0, 999].
  std::int64_t millis = now_ms % 1000;
  if (millis < 0) millis += 1000;
  const auto seconds = static_cast<std::time_t>((now_ms - millis) / 1000);
  std::tm local{};
  ::localtime_r(&seconds, &local);
  std::array<char, 32> stamp{};
  std::size_t n = std::strftime(stamp.data(), stamp.size(), "%Y-%m-%d %H:%M:%S", &local);
  std::array<char, 8> ms{};
  std::snprintf(ms.data(), ms.size(), ".%03d ", static_cast<int>(millis));
  std::string line;
  line.reserve(n + 5 + message.size());
  line.append(stamp.data(), n).append(ms.data()).append(message);
  return line;
}

RunContext::RunContext(const common::protocol::TriggerParam& trigger, RunLogWriter& log,
                       const common::Clock& clock, std::stop_token stop, CommandRunner commands)
    : trigger_(trigger),
      // XXL-JOB sends broadcastTotal 1 for a job that is not broadcast; an admin leaving it out
      // still means one shard.
      shard_total_(trigger.broadcast_total > 0 ? trigger.broadcast_total : 1),
      log_(log),
      clock_(clock),
      stop_(std::move(stop)),
      commands_(std::move(commands)) {}

void RunContext::log(std::string_view message) { log_.append(log_line(clock_.now_ms(), message)); }

void RunContext::succeed(std::string_view message) {
  std::lock_guard lock(mutex_);
  result_.code = kSuccessCode;
  result_.msg = std::string(message);
}

void RunContext::fail(std::string_view message) {
  std::lock_guard lock(mutex_);
  result_.code = kFailCode;
  result_.msg = std::string(message);
}

std::optional<std::string> output_problem(std::string_view json) {
  if (json.size() > JobContext::kMaxOutputBytes) {
    return std::to_string(json.size()) + " bytes, more than " +
           std::to_string(JobContext::kMaxOutputBytes);
  }
  try {
    // Bounded as the admin bounds it, so what is accepted here is read there.
    (void)common::protocol::parse_json(json);
  } catch (const std::exception& e) {
    return std::string("not JSON: ") + e.what();
  }
  return std::nullopt;
}

void RunContext::set_output(std::string_view json) {
  if (auto problem = output_problem(json)) throw std::invalid_argument("output: " + *problem);
  std::lock_guard lock(mutex_);
  result_.output = std::string(json);
}

RunResult RunContext::result() const {
  std::lock_guard lock(mutex_);
  return result_;
}

ScriptOutcome RunContext::run_command(const std::vector<std::string>& argv) {
  if (!commands_) {
    return {ScriptOutcome::Kind::kFailedToStart, 0, "this executor cannot run commands"};
  }
  return commands_(argv, log_, stop_,
                   run_variables(job_id(), log_id(), log_date_time(), shard_index(), shard_total()));
}

RunResult run_handler(const Handler& handler, const common::protocol::TriggerParam& trigger,
                      RunLogWriter& log, const common::Clock& clock, std::stop_token stop,
                      const CommandRunner& commands) noexcept {
  std::string error;
  try {
    RunContext context(trigger, log, clock, std::move(stop), commands);
    try {
      handler(context);
      return context.result();
    } catch (const std::exception& e) {
      error = e.what();
      if (error.empty()) error = "exception without a message";
    } catch (...) {
      error = "unknown exception";
    }
    log.append(log_line(clock.now_ms(), "----------- handler exception: " + error));
  } catch (...) {
    // Only reachable when the run log itself throws (it should not) or memory runs out.
    if (error.empty()) error = "unknown exception";
  }
  return {kFailCode, std::move(error)};
}

}  // namespace cronwheel::executor
