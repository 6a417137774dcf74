#include "admin/model/record_json.h"

namespace cronwheel::admin {

namespace {

template <class T>
nlohmann::json optional_json(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

// An audit entry's stored object; text that is not JSON (never written by the stores) is kept
// as a string rather than failing the whole listing.
nlohmann::json stored_object(const std::optional<std::string>& text) {
  if (!text) return nullptr;
  auto parsed = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  return parsed.is_discarded() ? nlohmann::json(*text) : parsed;
}

}  // namespace

nlohmann::json to_json(const Group& group) {
  return {
      {"id", group.id},
      {"appName", group.app_name},
      {"title", group.title},
      {"addressType", group.address_type},
      {"addressList", group.address_list},
      {"accessTokenSet", group.access_token.has_value()},
      {"maxRunning", group.max_running},
      {"createdAt", group.created_at},
      {"updatedAt", group.updated_at},
  };
}

nlohmann::json to_json(const Job& job) {
  return {
      {"id", job.id},
      {"jobGroup", job.job_group},
      {"name", job.name},
      {"jobDesc", job.job_desc},
      {"author", job.author},
      {"alarmEmail", job.alarm_email},
      {"scheduleType", to_string(job.schedule_type)},
      {"scheduleConf", job.schedule_conf},
      {"timezone", job.timezone},
      {"misfireStrategy", to_string(job.misfire_strategy)},
      {"executorRouteStrategy", to_string(job.executor_route_strategy)},
      {"executorHandler", job.executor_handler},
      {"executorParam", job.executor_param},
      {"executorBlockStrategy", to_string(job.executor_block_strategy)},
      {"executorTimeout", job.executor_timeout},
      {"executorFailRetryCount", job.executor_fail_retry_count},
      {"retryInterval", job.retry_interval},
      {"retryBackoff", std::string(to_string(job.retry.backoff))},
      {"retryMultiplier", job.retry.multiplier},
      {"retryMaxInterval", job.retry.max_interval},
      {"retryJitter", job.retry.jitter_percent},
      {"maxConcurrent", job.max_concurrent},
      {"priority", job.priority},
      {"glueType", to_string(job.glue_type)},
      {"glueSource", job.glue_source},
      {"glueRemark", job.glue_remark},
      {"glueUpdatedAt", job.glue_updated_at},
      {"childJobId", job.child_job_ids},
      {"triggerStatus", job.trigger_status},
      {"triggerLastTime", job.trigger_last_time},
      {"triggerNextTime", job.trigger_next_time},
      {"pausedWithGroup", job.paused_with_group},
      {"calendarId", job.calendar.calendar_id == 0 ? nlohmann::json(nullptr) : nlohmann::json(job.calendar.calendar_id)},
      {"calendarMode", std::string(to_string(job.calendar.mode))},
      {"dstGap", std::string(common::dst_gap_name(job.dst.gap))},
      {"dstRepeat", std::string(common::dst_repeat_name(job.dst.repeat))},
      {"createdAt", job.created_at},
      {"updatedAt", job.updated_at},
  };
}

nlohmann::json to_json(const JobLog& log) {
  return {
      {"id", log.id},
      {"jobGroup", log.job_group},
      {"jobId", log.job_id},
      {"state", to_string(log.state)},
      {"triggerType", to_string(log.trigger_type)},
      {"scheduledTime", log.scheduled_time},
      {"adminNode", optional_json(log.admin_node)},
      {"executorAddress", log.executor_address},
      {"executorHandler", log.executor_handler},
      {"executorParam", log.executor_param},
      {"shardIndex", log.shard_index},
      {"shardTotal", log.shard_total},
      {"executorFailRetryCount", log.executor_fail_retry_count},
      {"parentLogId", optional_json(log.parent_log_id)},
      {"triggerTime", optional_json(log.trigger_time)},
      {"triggerCode", log.trigger_code},
      {"triggerMsg", log.trigger_msg},
      {"handleTime", optional_json(log.handle_time)},
      {"handleCode", log.handle_code},
      {"handleMsg", log.handle_msg},
      {"alarmStatus", log.alarm_status},
      {"workflowRunId", optional_json(log.workflow_run_id)},
      {"workflowNode", log.workflow_node.empty() ? nlohmann::json(nullptr) : nlohmann::json(log.workflow_node)},
      {"output", optional_json(log.output)},
      {"backfillId", optional_json(log.backfill_id)},
      {"logDateTime", log_date_time(log)},
      {"waitingForSlot", log.waiting_slot},
  };
}

nlohmann::json to_json(const ScriptVersion& version) {
  return {
      {"id", version.id},
      {"jobId", version.job_id},
      {"glueType", to_string(version.glue_type)},
      {"glueSource", version.glue_source},
      {"glueRemark", version.glue_remark},
      {"createdAt", version.created_at},
  };
}

nlohmann::json to_json(const RegistryEntry& entry) {
  return {
      {"id", entry.id},
      {"registryGroup", entry.registry_group},
      {"registryKey", entry.registry_key},
      {"registryValue", entry.registry_value},
      {"updatedAt", entry.updated_at},
  };
}

nlohmann::json to_json(const User& user) {
  return {
      {"id", user.id},
      {"username", user.username},
      {"role", user.role},
      {"groups", user.groups},
      {"passwordSet", !user.password_hash.empty()},
      {"createdAt", user.created_at},
      {"updatedAt", user.updated_at},
  };
}

nlohmann::json to_json(const ApiToken& token) {
  return {
      {"id", token.id},
      {"userId", token.user_id},
      {"name", token.name},
      {"createdAt", token.created_at},
      {"lastUsedAt", optional_json(token.last_used_at)},
      {"revokedAt", optional_json(token.revoked_at)},
      {"expiresAt", optional_json(token.expires_at)},
  };
}

nlohmann::json to_json(const AuditEntry& entry) {
  return {
      {"id", entry.id},
      {"at", entry.at},
      {"userId", optional_json(entry.user_id)},
      {"username", entry.username},
      {"action", entry.action},
      {"entityType", entry.entity_type},
      {"entityId", optional_json(entry.entity_id)},
      {"before", stored_object(entry.before)},
      {"after", stored_object(entry.after)},
      {"remoteAddr", entry.remote_addr},
  };
}

nlohmann::json to_json(const AdminNode& node) {
  return {
      {"nodeId", node.node_id},
      {"address", node.address},
      {"version", node.version},
      {"startedAt", node.started_at},
      {"heartbeatAt", node.heartbeat_at},
      {"leaseUntil", node.lease_until},
  };
}

nlohmann::json to_json(const NodeStatus& status) {
  auto json = to_json(status.node);
  json["alive"] = status.alive;
  return json;
}

nlohmann::json to_json(const ScanMark& mark) { return {{"nodeId", mark.node_id}, {"at", mark.at}}; }

nlohmann::json to_json(const AlarmChannel& channel) {
  return {
      {"id", channel.id},
      {"name", channel.name},
      {"kind", to_string(channel.kind)},
      {"target", channel.target},
      {"secretSet", !channel.secret.empty()},
      {"groups", channel.groups},
      {"jobs", channel.jobs},
      {"createdAt", channel.created_at},
      {"updatedAt", channel.updated_at},
  };
}

}  // namespace cronwheel::admin
