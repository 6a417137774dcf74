#include "admin/complete/completion.h"

#include "admin/model/workflow.h"
#include "common/protocol/json_reader.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <ctime>
#include <stdexcept>
#include <utility>

#include <spdlog/spdlog.h>

#include "admin/model/fire.h"
#include "common/protocol/constants.h"

namespace cronwheel::admin {

namespace {

std::string amount(std::int64_t n, const char* unit) {
  return std::to_string(n) + " " + unit + (n == 1 ? "" : "s");
}

std::string duration_text(std::chrono::milliseconds d) {
  const auto ms = d.count();
  if (ms > 0 && ms % 60'000 == 0) return amount(ms / 60'000, "minute");
  if (ms % 1000 == 0) return amount(ms / 1000, "second");
  return std::to_string(ms) + " ms";
}

}  // namespace

std::string bounded_message(std::string_view text, std::size_t max_bytes) {
  std::string out;
  out.reserve(std::min(text.size(), max_bytes));
  for (char c : text) {
    if (c != '\0') out.push_back(c);
  }
  if (out.size() <= max_bytes) return out;
  std::size_t cut = max_bytes;
  // Back up over continuation bytes (10xxxxxx) to the start of the character cut in two.
  while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
  out.resize(cut);
  return out;
}

std::string lost_message(std::string_view executor_address, std::chrono::milliseconds lost_after) {
  return "result lost: executor " + std::string(executor_address) + " has not been registered for " +
         duration_text(lost_after);
}

std::string forgotten_message(std::string_view executor_address, std::int64_t executor_start_time,
                              bool delivery_confirmed) {
  std::string since;
  if (executor_start_time > 0) {
    const std::time_t seconds = static_cast<std::time_t>(executor_start_time / 1000);
    std::tm utc{};
    char text[32] = "";
    if (::gmtime_r(&seconds, &utc) != nullptr && std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc) > 0) {
      char millis[8];
      std::snprintf(millis, sizeof millis, ".%03dZ", static_cast<int>(executor_start_time % 1000));
      since = std::string(" (running since ") + text + millis + ")";
    }
  }
  const std::string head = "result lost: executor " + std::string(executor_address) + since;
  if (!delivery_confirmed) {
    return head + " does not know the run: not queued, not running, no result to send; its delivery was never "
                  "confirmed (no answer to /run), so the run never arrived or was lost when the executor restarted";
  }
  return head + " no longer knows the run: not queued, not running, no result to send; it restarted after the run "
                "was triggered";
}

Completion::Completion(CompletionStore& store, common::Clock& clock, Options options)
    : store_(store), clock_(clock), options_(std::move(options)) {
  if (options_.node_id.empty()) throw std::invalid_argument("Completion: no node id");
}

RunResult Completion::result_of(const common::protocol::HandleCallbackParam& callback) const {
  RunResult result;
  result.log_id = callback.log_id;
  result.state = callback.handle_code == common::protocol::kSuccessCode ? FireState::kSucceeded : FireState::kFailed;
  result.handle_time = clock_.now_ms();
  result.handle_code = callback.handle_code;
  result.handle_msg = bounded_message(callback.handle_msg);
  if (callback.output) {
    // Kept only when the nodes after it could read it: bounded JSON.
    std::string why;
    if (callback.output->size() > kMaxNodeOutputBytes) {
      why = std::to_string(callback.output->size()) + " bytes, more than " + std::to_string(kMaxNodeOutputBytes);
    } else {
      try {
        (void)common::protocol::parse_json(*callback.output);
        result.output = callback.output;
      } catch (const std::exception& e) {
        why = std::string("not JSON: ") + e.what();
      }
    }
    if (!why.empty()) result.handle_msg = bounded_message(result.handle_msg + " (output dropped: " + why + ")");
  }
  return result;
}

Completion::Outcome Completion::report(const common::protocol::HandleCallbackParam& callback) {
  if (callback.not_started) return return_not_started(callback);
  return record(result_of(callback));
}

Completion::Outcome Completion::return_not_started(const common::protocol::HandleCallbackParam& callback) {
  const std::string note = bounded_message("Not started: " + *callback.not_started + "; back to pending on " +
                                           options_.node_id + ", to be sent again or to follow its misfire strategy");
  if (callback.log_id > 0 && store_.return_not_started(callback.log_id, options_.node_id, note)) {
    not_started_.fetch_add(1, std::memory_order_relaxed);
    spdlog::info("run {} was not started by its executor ({}): back to pending", callback.log_id,
                 *callback.not_started);
    return Outcome::kRecorded;
  }
  not_running_.fetch_add(1, std::memory_order_relaxed);
  return Outcome::kNotRunning;
}

std::vector<Completion::Outcome> Completion::report_all(
    const std::vector<common::protocol::HandleCallbackParam>& callbacks) {
  std::vector<Outcome> out(callbacks.size(), Outcome::kUnknownLog);
  std::vector<RunResult> results;
  std::vector<std::size_t> positions;  // of each result among the callbacks
  for (std::size_t i = 0; i < callbacks.size(); ++i) {
    if (callbacks[i].log_id <= 0) continue;  // kUnknownLog, counted below
    if (callbacks[i].not_started) {
      // No result: its own short transaction, before the results' (a batch sent again after a
      // failure finds it pending already, and changes nothing).
      out[i] = return_not_started(callbacks[i]);
      continue;
    }
    results.push_back(result_of(callbacks[i]));
    positions.push_back(i);
  }
  const std::int64_t now = clock_.now_ms();
  std::vector<CompletionStore::Recorded> recorded;
  if (!results.empty()) {
    recorded = store_.record_all(results, [&](const JobLog& run, const Job& job, const std::vector<Job>& children) {
      return plan(run, job, children, now);
    });
  }
  bool next_time_set = false;
  std::vector<JobLog> fires;
  for (std::size_t k = 0; k < results.size(); ++k) {
    out[positions[k]] = count(results[k], recorded[k]);
    next_time_set = next_time_set || recorded[k].next_time_set;
    fires.insert(fires.end(), recorded[k].fires.begin(), recorded[k].fires.end());
  }
  if (!fires.empty() && options_.fires_written) options_.fires_written(fires);
  for (std::size_t i = 0; i < callbacks.size(); ++i) {
    if (callbacks[i].log_id > 0) continue;
    unknown_.fetch_add(1, std::memory_order_relaxed);
    spdlog::warn("result for log id {} ignored: no such run", callbacks[i].log_id);
  }
  if (next_time_set && options_.next_time_set) options_.next_time_set();
  return out;
}

RunResult Completion::lost_result(const JobLog& run, std::int64_t triggered_before, std::string_view message) const {
  RunResult result;
  result.log_id = run.id;
  result.state = FireState::kLost;
  result.handle_time = clock_.now_ms();
  result.handle_code = common::protocol::kFailCode;
  result.handle_msg = bounded_message(message);
  result.lost_triggered_before = triggered_before;
  return result;
}

Completion::Outcome Completion::mark_lost(const JobLog& run, std::int64_t triggered_before, std::int64_t dead_after_ms,
                                          std::chrono::milliseconds lost_after) {
  RunResult result = lost_result(run, triggered_before, lost_message(run.executor_address, lost_after));
  result.lost_dead_after_ms = dead_after_ms;
  return record(result);
}

Completion::Outcome Completion::mark_forgotten(const JobLog& run, std::int64_t triggered_before,
                                               std::int64_t executor_start_time) {
  RunResult result = lost_result(run, triggered_before, forgotten_message(run.executor_address, executor_start_time, run.trigger_code == common::protocol::kSuccessCode));
  result.lost_forgotten = true;
  return record(result);
}

Completion::Outcome Completion::mark_killed(std::int64_t run_id, std::string message) {
  return end_by_operator(run_id, FireState::kFailed, std::move(message));
}

Completion::Outcome Completion::mark_cancelled(std::int64_t run_id, std::string message) {
  return end_by_operator(run_id, FireState::kCancelled, std::move(message));
}

Completion::Outcome Completion::end_by_operator(std::int64_t run_id, FireState state, std::string message) {
  RunResult result;
  result.log_id = run_id;
  result.state = state;
  result.handle_time = clock_.now_ms();
  result.handle_code = common::protocol::kFailCode;
  result.handle_msg = bounded_message(message);
  result.killed = true;
  return record(result);
}

FollowUps Completion::plan(const JobLog& run, const Job& job, const std::vector<Job>& children,
                           std::int64_t now, bool killed) const {
  const RunEnd end = run.state == FireState::kSucceeded ? RunEnd::kSucceeded
                     : run.state == FireState::kLost      ? RunEnd::kLost
                     : run.state == FireState::kCancelled ? RunEnd::kCancelled
                     : killed                             ? RunEnd::kKilled
                                                          : RunEnd::kFailed;
  return plan_follow_ups(end, run, job, children, now, options_.node_id);
}

Completion::Outcome Completion::record(const RunResult& result) {
  if (result.log_id <= 0) {
    unknown_.fetch_add(1, std::memory_order_relaxed);
    spdlog::warn("result for log id {} ignored: no such run", result.log_id);
    return Outcome::kUnknownLog;
  }
  auto recorded = store_.record(result, [&](const JobLog& run, const Job& job, const std::vector<Job>& children) {
    return plan(run, job, children, result.handle_time, result.killed);
  });
  const Outcome outcome = count(result, recorded);
  if (!recorded.fires.empty() && options_.fires_written) options_.fires_written(recorded.fires);
  if (recorded.next_time_set && options_.next_time_set) options_.next_time_set();
  return outcome;
}

Completion::Outcome Completion::count(const RunResult& result, const CompletionStore::Recorded& recorded) {
  switch (recorded.status) {
    case CompletionStore::Status::kRecorded: {
      recorded_.fetch_add(1, std::memory_order_relaxed);
      if (result.state == FireState::kLost) lost_.fetch_add(1, std::memory_order_relaxed);
      if (options_.finished_runs != nullptr && recorded.run) {
        options_.finished_runs->add(recorded.run->job_group, recorded.run->state);
      }
      std::int64_t children = 0, retries = 0;
      for (const auto& fire : recorded.fires) (fire.trigger_type == TriggerType::kRetry ? retries : children) += 1;
      child_fires_.fetch_add(children, std::memory_order_relaxed);
      retry_fires_.fetch_add(retries, std::memory_order_relaxed);
      if (result.state == FireState::kLost) {
        spdlog::warn("log {}: {}", result.log_id, result.handle_msg);
      }
      return Outcome::kRecorded;
    }
    case CompletionStore::Status::kAlreadyFinal:
      duplicates_.fetch_add(1, std::memory_order_relaxed);
      spdlog::debug("log {}: repeated result ignored (already {})", result.log_id,
                    recorded.run ? to_string(recorded.run->state) : std::string_view("final"));
      return Outcome::kDuplicate;
    case CompletionStore::Status::kNotRunning:
      not_running_.fetch_add(1, std::memory_order_relaxed);
      if (result.state != FireState::kLost) {
        spdlog::warn("log {}: result ignored: the run is {}, not running", result.log_id,
                     recorded.run ? to_string(recorded.run->state) : std::string_view("not running"));
      }
      return Outcome::kNotRunning;
    case CompletionStore::Status::kUnknownLog:
      break;
  }
  unknown_.fetch_add(1, std::memory_order_relaxed);
  spdlog::warn("result for log id {} ignored: no such run", result.log_id);
  return Outcome::kUnknownLog;
}

Completion::Counters Completion::counters() const noexcept {
  Counters c;
  c.recorded = recorded_.load(std::memory_order_relaxed);
  c.duplicates = duplicates_.load(std::memory_order_relaxed);
  c.not_running = not_running_.load(std::memory_order_relaxed);
  c.unknown = unknown_.load(std::memory_order_relaxed);
  c.lost = lost_.load(std::memory_order_relaxed);
  c.child_fires = child_fires_.load(std::memory_order_relaxed);
  c.retry_fires = retry_fires_.load(std::memory_order_relaxed);
  c.not_started = not_started_.load(std::memory_order_relaxed);
  return c;
}

}  // namespace cronwheel::admin
