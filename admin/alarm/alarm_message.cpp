#include "admin/alarm/alarm_message.h"

#include <algorithm>
#include <chrono>

#include <date/date.h>
#include <nlohmann/json.hpp>

namespace cronwheel::admin {

namespace {

constexpr std::size_t kMaxMessage = 1'000;

std::string utc(std::int64_t epoch_ms) {
  using namespace std::chrono;
  return date::format("%FT%TZ", sys_time<milliseconds>(milliseconds(epoch_ms)));
}

// `text` with control characters replaced by U+FFFD (line breaks and tabs kept when
// `keep_newlines`, spaces otherwise), at most about `limit` bytes (cut before a whole character,
// "…" appended).
std::string clean(std::string_view text, std::size_t limit, bool keep_newlines) {
  std::string out;
  out.reserve(std::min(text.size(), limit) + 8);
  std::size_t i = 0;
  for (; i < text.size() && out.size() < limit; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const bool spacing = c == '\n' || c == '\t' || c == '\r';
    if (keep_newlines && (c == '\n' || c == '\t')) {
      out += static_cast<char>(c);
    } else if (!keep_newlines && spacing) {
      out += ' ';
    } else if (c < 0x20 || c == 0x7f) {
      out += "\xEF\xBF\xBD";
    } else {
      out += static_cast<char>(c);
    }
  }
  if (i < text.size()) {
    while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80) out.pop_back();
    if (!out.empty() && (static_cast<unsigned char>(out.back()) & 0x80) != 0) out.pop_back();
    out += "\xE2\x80\xA6";
  }
  return out;
}

std::string one_line(std::string_view text, std::size_t limit) { return clean(text, limit, false); }

std::string indented(std::string_view text) {
  std::string body = clean(text, kMaxMessage, true);
  std::string out = "    ";
  for (char c : body) {
    out += c;
    if (c == '\n') out += "    ";
  }
  return out;
}

std::string job_name(const Job& job) {
  return "job " + std::to_string(job.id) + " \"" + one_line(job.job_desc, 100) + "\"";
}

}  // namespace

std::string_view run_outcome(const JobLog& run) {
  switch (run.state) {
    case FireState::kLost: return "result lost";
    case FireState::kCancelled: return "skipped by the misfire strategy";
    case FireState::kFailed:
      // No executor took it: the trigger's answer is all there is.
      if (!run.handle_time && run.trigger_code != 200) return "trigger failed";
      return "failed";
    default: return "ended";
  }
}

std::vector<std::string> alarm_recipients(std::string_view alarm_email) {
  std::vector<std::string> out;
  while (!alarm_email.empty()) {
    const auto comma = alarm_email.find(',');
    std::string_view item = alarm_email.substr(0, comma);
    alarm_email = comma == std::string_view::npos ? std::string_view{} : alarm_email.substr(comma + 1);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    if (item.empty() || std::find(out.begin(), out.end(), item) != out.end()) continue;
    out.emplace_back(item);
  }
  return out;
}

AlarmText render_alarm(const AlarmClaim& claim, const AlarmTextOptions& options) {
  const Job& job = claim.job;
  AlarmText text;
  const std::int64_t total = std::max<std::int64_t>(claim.runs_total, static_cast<std::int64_t>(claim.runs.size()));
  if (total == 1 && !claim.runs.empty()) {
    const JobLog& run = claim.runs.front();
    text.subject = "[cronwheel] " + job_name(job) + ": run " + std::to_string(run.id) + " " +
                   std::string(run_outcome(run));
  } else {
    text.subject = "[cronwheel] " + job_name(job) + ": " + std::to_string(total) + " runs failed or were skipped";
  }

  std::string& b = text.body;
  b += "Job " + std::to_string(job.id) + " \"" + one_line(job.job_desc, 255) + "\" (group " +
       std::to_string(job.job_group) + ", handler " + one_line(job.executor_handler, 255) + ")";
  if (total == 1) {
    b += " has a run that did not succeed.\n";
  } else {
    b += " has " + std::to_string(total) + " runs that did not succeed";
    if (claim.previous_alarm_at > 0) b += " since the last alarm, at " + utc(claim.previous_alarm_at);
    b += ".\n";
  }
  for (const JobLog& run : claim.runs) {
    b += "\nRun " + std::to_string(run.id) + ": " + std::string(run_outcome(run));
    if (run.state == FireState::kFailed && run.handle_time) b += " with code " + std::to_string(run.handle_code);
    b += "\n";
    b += "  scheduled  " + utc(run.scheduled_time) + " (" + std::string(to_string(run.trigger_type)) + ")\n";
    if (run.trigger_time) b += "  triggered  " + utc(*run.trigger_time) + "\n";
    if (run.handle_time) b += "  ended      " + utc(*run.handle_time) + "\n";
    if (!run.executor_address.empty()) b += "  executor   " + one_line(run.executor_address, 255) + "\n";
    if (run.shard_total > 1) {
      b += "  shard      " + std::to_string(run.shard_index) + " of " + std::to_string(run.shard_total) + "\n";
    }
    const std::string& message = run.handle_time ? run.handle_msg : run.trigger_msg;
    if (!message.empty()) b += "  message\n" + indented(message) + "\n";
    if (!options.console_url.empty()) b += "  " + options.console_url + "runs/" + std::to_string(run.id) + "\n";
  }
  if (total > static_cast<std::int64_t>(claim.runs.size())) {
    b += "\n… and " + std::to_string(total - static_cast<std::int64_t>(claim.runs.size())) + " more";
    if (!options.console_url.empty()) {
      b += ": " + options.console_url + "runs?jobId=" + std::to_string(job.id) + "&status=failed";
    }
    b += "\n";
  }
  b += "\nSent by cronwheel admin node " + one_line(options.node_id, 255) + " at " + utc(claim.claimed_at) + ".";
  if (total > 1 || claim.previous_alarm_at > 0) {
    b += " A job alarms at most once per quiet period; what happens meanwhile comes in the next alarm.";
  }
  b += "\n";
  return text;
}

namespace {

std::string dumped(const nlohmann::json& json) {
  return json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

nlohmann::json optional_ms(const std::optional<std::int64_t>& ms) { return ms ? nlohmann::json(*ms) : nullptr; }

}  // namespace

AlarmText render_workflow_alarm(const WorkflowStore::Alarm& alarm, const AlarmTextOptions& options) {
  const WorkflowRun& run = alarm.run.run;
  const std::string ended = run.state == WorkflowRunState::kTimedOut ? "timed out" : "failed";
  AlarmText text;
  text.subject = "[cronwheel] workflow " + one_line(alarm.workflow.name, 100) + ": run " + std::to_string(run.id) + " " + ended;
  std::string& b = text.body;
  b += "Workflow " + std::to_string(alarm.workflow.id) + " \"" + one_line(alarm.workflow.name, 100) + "\" (group " +
       std::to_string(run.job_group) + "): run " + std::to_string(run.id) + " " + ended + ".\n";
  if (!run.reason.empty()) b += "  reason     " + one_line(run.reason, kMaxMessage) + "\n";
  b += "  scheduled  " + utc(run.scheduled_time) + " (" + std::string(to_string(run.trigger_type)) + ")\n";
  if (run.started_at) b += "  started    " + utc(*run.started_at) + "\n";
  if (run.ended_at) b += "  ended      " + utc(*run.ended_at) + "\n";
  if (!options.console_url.empty()) b += "  " + options.console_url + "workflow-runs/" + std::to_string(run.id) + "\n";
  for (const WorkflowRunNode& n : alarm.run.nodes) {
    if (n.state == NodeState::kSucceeded || n.state == NodeState::kWaiting) continue;
    b += "\nNode " + one_line(n.key, 64) + ": " + std::string(to_string(n.state));
    if (n.log_id) b += ", run " + std::to_string(*n.log_id);
    b += "\n";
    if (!n.message.empty()) b += "  message\n" + indented(n.message) + "\n";
    if (n.log_id && !options.console_url.empty()) b += "  " + options.console_url + "runs/" + std::to_string(*n.log_id) + "\n";
  }
  b += "\nSent by cronwheel admin node " + one_line(options.node_id, 255) + " at " + utc(alarm.claimed_at) + ".\n";
  return text;
}

std::string alarm_webhook_body(const AlarmClaim& claim, const AlarmText& text, const AlarmTextOptions& options) {
  const Job& job = claim.job;
  nlohmann::json runs = nlohmann::json::array();
  for (const JobLog& run : claim.runs) {
    runs.push_back({
        {"id", run.id},
        {"state", to_string(run.state)},
        {"outcome", run_outcome(run)},
        {"triggerType", to_string(run.trigger_type)},
        {"scheduledTime", run.scheduled_time},
        {"triggerTime", optional_ms(run.trigger_time)},
        {"handleTime", optional_ms(run.handle_time)},
        {"triggerCode", run.trigger_code},
        {"triggerMsg", clean(run.trigger_msg, kMaxMessage, true)},
        {"handleCode", run.handle_code},
        {"handleMsg", clean(run.handle_msg, kMaxMessage, true)},
        {"executorAddress", one_line(run.executor_address, 255)},
        {"shardIndex", run.shard_index},
        {"shardTotal", run.shard_total},
        {"url", options.console_url.empty() ? nlohmann::json(nullptr)
                                            : nlohmann::json(options.console_url + "runs/" + std::to_string(run.id))},
    });
  }
  return dumped({
      {"event", "alarm"},
      {"subject", text.subject},
      {"text", text.body},
      {"job",
       {{"id", job.id},
        {"jobGroup", job.job_group},
        {"jobDesc", one_line(job.job_desc, 255)},
        {"executorHandler", one_line(job.executor_handler, 255)}}},
      {"runsTotal", std::max<std::int64_t>(claim.runs_total, static_cast<std::int64_t>(claim.runs.size()))},
      {"runs", std::move(runs)},
      {"previousAlarmAt", claim.previous_alarm_at},
      {"node", options.node_id},
      {"sentAt", claim.claimed_at},
  });
}

AlarmText render_clock_alarm(const ClockAlarmClaim& claim, std::int64_t bound_ms, const AlarmTextOptions& options) {
  const std::string app = one_line(claim.app_name, 255);
  const std::string address = one_line(claim.address, 255);
  const std::string off = std::to_string(claim.offset_ms < 0 ? -claim.offset_ms : claim.offset_ms) + " ms " +
                          (claim.offset_ms > 0 ? "behind" : "ahead of") + " the admin's";
  AlarmText text;
  text.subject = "[cronwheel] executor " + app + " at " + address + ": its clock is " + off;
  std::string& b = text.body;
  b += "The clock of executor " + address + " (app " + app + ") is " + off + ", more than " +
       std::to_string(bound_ms) + " ms. The executor measured it over a round trip of " +
       std::to_string(claim.delay_ms) + " ms.\n";
  b += "\nAn executor this far off refuses fires handed over ahead of their instant (lead dispatch) "
       "unless its --max-clock-offset-ms allows it, so that none starts early; they are sent to it by "
       "/run at their instant instead, later and at more cost. Times in its run logs are off by as much.\n";
  b += "\nSynchronise the clock of its host (NTP). This alarm comes again only after the clock has been "
       "back within " + std::to_string(bound_ms) + " ms and drifted off again, or the executor registered anew.\n";
  if (!options.console_url.empty()) b += "\nConsole: " + options.console_url + "groups\n";
  b += "\nSent by cronwheel admin node " + one_line(options.node_id, 255) + " at " + utc(claim.claimed_at) + ".\n";
  return text;
}

std::string clock_alarm_webhook_body(const ClockAlarmClaim& claim, std::int64_t bound_ms, const AlarmText& text,
                                     const AlarmTextOptions& options) {
  return dumped({
      {"event", "executor_clock"},
      {"subject", text.subject},
      {"text", text.body},
      {"executor", {{"appName", one_line(claim.app_name, 255)}, {"address", one_line(claim.address, 255)}}},
      {"offsetMs", claim.offset_ms},
      {"delayMs", claim.delay_ms},
      {"boundMs", bound_ms},
      {"node", options.node_id},
      {"sentAt", claim.claimed_at},
  });
}

AlarmText render_test_alarm(std::string_view channel_name, const AlarmTextOptions& options, std::int64_t now) {
  AlarmText text;
  const std::string name = one_line(channel_name, 100);
  text.subject = "[cronwheel] test alarm of channel \"" + name + "\"";
  text.body = "This is a test of the alarm channel \"" + name + "\", asked for by an operator. No job failed.\n";
  if (!options.console_url.empty()) text.body += "\nConsole: " + options.console_url + "\n";
  text.body += "\nSent by cronwheel admin node " + one_line(options.node_id, 255) + " at " + utc(now) + ".\n";
  return text;
}

std::string test_webhook_body(std::string_view channel_name, const AlarmText& text, const AlarmTextOptions& options,
                              std::int64_t now) {
  return dumped({
      {"event", "test"},
      {"subject", text.subject},
      {"text", text.body},
      {"channel", one_line(channel_name, 100)},
      {"node", options.node_id},
      {"sentAt", now},
  });
}

std::string workflow_alarm_webhook_body(const WorkflowStore::Alarm& alarm, const AlarmText& text,
                                        const AlarmTextOptions& options) {
  const WorkflowRun& run = alarm.run.run;
  nlohmann::json nodes = nlohmann::json::array();
  for (const WorkflowRunNode& n : alarm.run.nodes) {
    if (n.state == NodeState::kSucceeded || n.state == NodeState::kWaiting) continue;
    nodes.push_back({{"key", n.key},
                     {"state", to_string(n.state)},
                     {"runId", optional_ms(n.log_id)},
                     {"message", clean(n.message, kMaxMessage, true)}});
  }
  const nlohmann::json body = {
      {"event", "workflow_alarm"},
      {"subject", text.subject},
      {"text", text.body},
      {"workflow", {{"id", alarm.workflow.id}, {"name", alarm.workflow.name}, {"jobGroup", alarm.workflow.job_group}}},
      {"run",
       {{"id", run.id},
        {"state", to_string(run.state)},
        {"reason", clean(run.reason, kMaxMessage, true)},
        {"triggerType", to_string(run.trigger_type)},
        {"scheduledTime", run.scheduled_time},
        {"startedAt", optional_ms(run.started_at)},
        {"endedAt", optional_ms(run.ended_at)},
        {"url", options.console_url.empty() ? nlohmann::json(nullptr)
                                            : nlohmann::json(options.console_url + "workflow-runs/" + std::to_string(run.id))},
        {"nodes", std::move(nodes)}}},
      {"node", options.node_id},
      {"sentAt", alarm.claimed_at},
  };
  return dumped(body);
}

}  // namespace cronwheel::admin
