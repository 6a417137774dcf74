#include "common/protocol/messages.h"

#include <cstddef>
#include <string>

namespace cronwheel::common::protocol {

void to_json(nlohmann::json& out, const TriggerParam& value) {
  out = {
      {"jobId", value.job_id},
      {"executorHandler", value.executor_handler},
      {"executorParams", value.executor_params},
      {"executorBlockStrategy", value.executor_block_strategy},
      {"executorTimeout", value.executor_timeout},
      {"logId", value.log_id},
      {"logDateTime", value.log_date_time},
      {"glueType", value.glue_type},
      {"glueSource", value.glue_source},
      {"glueUpdatetime", value.glue_updatetime},
      {"broadcastIndex", value.broadcast_index},
      {"broadcastTotal", value.broadcast_total},
  };
}

void from_json(const nlohmann::json& in, TriggerParam& out) {
  ObjectReader reader(in);
  TriggerParam result;
  result.job_id = reader.get_int32("jobId");
  result.executor_handler = reader.get_string("executorHandler");
  result.executor_params = reader.get_string("executorParams");
  result.executor_block_strategy = reader.get_string("executorBlockStrategy");
  result.executor_timeout = reader.get_int32("executorTimeout");
  result.log_id = reader.get_int64("logId");
  result.log_date_time = reader.get_int64({"logDateTime", "logDateTim"});
  result.glue_type = reader.get_string("glueType");
  result.glue_source = reader.get_string("glueSource");
  result.glue_updatetime = reader.get_int64("glueUpdatetime");
  result.broadcast_index = reader.get_int32("broadcastIndex");
  result.broadcast_total = reader.get_int32("broadcastTotal");
  out = std::move(result);
}

void to_json(nlohmann::json& out, const IdleBeatParam& value) {
  out = {{"jobId", value.job_id}};
}

void from_json(const nlohmann::json& in, IdleBeatParam& out) {
  out.job_id = ObjectReader(in).get_int32("jobId");
}

void to_json(nlohmann::json& out, const KillParam& value) { out = {{"jobId", value.job_id}}; }

void from_json(const nlohmann::json& in, KillParam& out) {
  out.job_id = ObjectReader(in).get_int32("jobId");
}

void to_json(nlohmann::json& out, const LogParam& value) {
  out = {
      {"logDateTim", value.log_date_time},
      {"logId", value.log_id},
      {"fromLineNum", value.from_line_num},
  };
}

void from_json(const nlohmann::json& in, LogParam& out) {
  ObjectReader reader(in);
  LogParam result;
  result.log_date_time = reader.get_int64({"logDateTim", "logDateTime"});
  result.log_id = reader.get_int64("logId");
  result.from_line_num = reader.get_int32("fromLineNum");
  out = result;
}

void to_json(nlohmann::json& out, const LogResult& value) {
  out = {
      {"fromLineNum", value.from_line_num},
      {"toLineNum", value.to_line_num},
      {"logContent", value.log_content},
      {"isEnd", value.is_end},
  };
  if (!value.run_state.empty()) out["runState"] = value.run_state;
  if (value.executor_start_time != 0) out["executorStartTime"] = value.executor_start_time;
}

void from_json(const nlohmann::json& in, LogResult& out) {
  ObjectReader reader(in);
  LogResult result;
  result.from_line_num = reader.get_int32("fromLineNum");
  result.to_line_num = reader.get_int32("toLineNum");
  result.log_content = reader.get_string("logContent");
  result.is_end = reader.get_bool({"isEnd", "end"});
  result.run_state = reader.get_string("runState");
  result.executor_start_time = reader.get_int64("executorStartTime");
  out = std::move(result);
}

void to_json(nlohmann::json& out, const HandleCallbackParam& value) {
  out = {
      {"logId", value.log_id},
      {"logDateTim", value.log_date_time},
      {"handleCode", value.handle_code},
      {"handleMsg", value.handle_msg},
  };
  if (value.output) out["output"] = *value.output;
  if (value.not_started) out["notStarted"] = *value.not_started;
}

void from_json(const nlohmann::json& in, HandleCallbackParam& out) {
  ObjectReader reader(in);
  HandleCallbackParam result;
  result.log_id = reader.get_int64("logId");
  result.log_date_time = reader.get_int64({"logDateTim", "logDateTime"});
  result.handle_code = reader.get_int32("handleCode");
  result.handle_msg = reader.get_string("handleMsg");
  if (auto it = in.find("output"); it != in.end() && !it->is_null()) result.output = reader.get_string("output");
  if (reader.find("notStarted").value != nullptr) result.not_started = reader.get_string("notStarted");
  out = std::move(result);
}

void to_json(nlohmann::json& out, const CallbackBatch& value) {
  out = nlohmann::json::array();
  for (const auto& callback : value.callbacks) out.push_back(callback);
}

void from_json(const nlohmann::json& in, CallbackBatch& out) {
  // The path prefix of element errors: "[2].logId" for a bare array,
  // "callbackList[2].logId" for the wrapped form.
  std::string_view parent;
  const nlohmann::json* list = &in;
  if (in.is_object()) {
    auto found = ObjectReader(in).find("callbackList");
    if (found.value == nullptr) {
      if (!in.contains("callbackList")) {
        throw ProtocolError("", "expected a JSON array of callbacks or {\"callbackList\":[...]}");
      }
      out.callbacks.clear();  // {"callbackList":null}: nothing to report
      return;
    }
    list = found.value;
    parent = "callbackList";
  }
  if (!list->is_array()) {
    auto error = ProtocolError("", std::string("expected a JSON array of callbacks, got ") +
                                       list->type_name());
    throw parent.empty() ? error : error.nested_in(parent);
  }
  CallbackBatch result;
  result.callbacks.reserve(list->size());
  for (std::size_t i = 0; i < list->size(); ++i) {
    try {
      result.callbacks.push_back((*list)[i].get<HandleCallbackParam>());
    } catch (const ProtocolError& e) {
      throw e.nested_in("[" + std::to_string(i) + "]").nested_in(parent);
    }
  }
  out = std::move(result);
}

void to_json(nlohmann::json& out, const RegistryParam& value) {
  out = {
      {"registryGroup", value.registry_group},
      {"registryKey", value.registry_key},
      {"registryValue", value.registry_value},
  };
  if (!value.handlers.empty()) out["handlers"] = value.handlers;
  if (value.clock_offset_ms) out["clockOffsetMs"] = *value.clock_offset_ms;
  if (value.clock_delay_ms) out["clockDelayMs"] = *value.clock_delay_ms;
  if (value.lead_dispatch) out["leadDispatch"] = true;
}

void from_json(const nlohmann::json& in, RegistryParam& out) {
  ObjectReader reader(in);
  RegistryParam result;
  result.registry_group = reader.get_string("registryGroup");
  result.registry_key = reader.get_string("registryKey");
  result.registry_value = reader.get_string("registryValue");
  if (auto handlers = reader.find("handlers"); handlers.value != nullptr) {
    if (!handlers.value->is_array()) throw ProtocolError("handlers", "expected an array of strings");
    if (handlers.value->size() > kMaxRegistryHandlers) {
      throw ProtocolError("handlers", "at most " + std::to_string(kMaxRegistryHandlers) + " names");
    }
    for (std::size_t i = 0; i < handlers.value->size(); ++i) {
      const auto& name = (*handlers.value)[i];
      if (!name.is_string()) throw ProtocolError("handlers[" + std::to_string(i) + "]", "expected a string");
      result.handlers.push_back(name.get<std::string>());
    }
  }
  auto bounded = [&reader](std::string_view name, std::int64_t low) -> std::optional<std::int64_t> {
    if (reader.find(name).value == nullptr) return std::nullopt;
    const std::int64_t value = reader.get_int64(name);
    if (value < low || value > kMaxClockOffsetMs) {
      throw ProtocolError(std::string(name), "must be between " + std::to_string(low) + " and " +
                                                 std::to_string(kMaxClockOffsetMs) + " (a day, in ms)");
    }
    return value;
  };
  result.clock_offset_ms = bounded("clockOffsetMs", -kMaxClockOffsetMs);
  result.clock_delay_ms = bounded("clockDelayMs", 0);
  result.lead_dispatch = reader.get_bool("leadDispatch");
  out = std::move(result);
}

namespace {

// The elements of the array `name` of `in` (absent or null: none), each read by `read`, at most
// `max` of them; errors name the element ("fires[3].fireAt").
template <class T, class Read>
std::vector<T> read_array(const ObjectReader& reader, std::string_view name, std::size_t max, Read read) {
  std::vector<T> result;
  auto found = reader.find(name);
  if (found.value == nullptr) return result;
  if (!found.value->is_array()) throw ProtocolError(std::string(name), "expected an array");
  if (found.value->size() > max) {
    throw ProtocolError(std::string(name), "at most " + std::to_string(max) + " entries");
  }
  result.reserve(found.value->size());
  for (std::size_t i = 0; i < found.value->size(); ++i) {
    try {
      result.push_back(read((*found.value)[i]));
    } catch (const ProtocolError& e) {
      throw e.nested_in("[" + std::to_string(i) + "]").nested_in(name);
    }
  }
  return result;
}

std::int64_t read_log_id(const nlohmann::json& value) {
  if (!value.is_number_integer()) throw ProtocolError("", "expected an integer log id");
  return value.get<std::int64_t>();
}

}  // namespace

void to_json(nlohmann::json& out, const LeadFire& value) {
  out = {{"fireAt", value.fire_at}, {"trigger", value.trigger}};
}

void from_json(const nlohmann::json& in, LeadFire& out) {
  ObjectReader reader(in);
  LeadFire result;
  result.fire_at = reader.get_int64("fireAt");
  auto trigger = reader.find("trigger");
  if (trigger.value == nullptr) throw ProtocolError("trigger", "required");
  try {
    result.trigger = trigger.value->get<TriggerParam>();
  } catch (const ProtocolError& e) {
    throw e.nested_in("trigger");
  }
  out = std::move(result);
}

void to_json(nlohmann::json& out, const LeadRequest& value) {
  out = {{"adminTime", value.admin_time}, {"fires", value.fires}};
}

void from_json(const nlohmann::json& in, LeadRequest& out) {
  ObjectReader reader(in);
  LeadRequest result;
  result.admin_time = reader.get_int64("adminTime");
  result.fires = read_array<LeadFire>(reader, "fires", kMaxLeadFires,
                                      [](const nlohmann::json& fire) { return fire.get<LeadFire>(); });
  out = std::move(result);
}

void to_json(nlohmann::json& out, const LeadRefusal& value) {
  out = {{"logId", value.log_id}, {"msg", value.msg}};
}

void from_json(const nlohmann::json& in, LeadRefusal& out) {
  ObjectReader reader(in);
  out.log_id = reader.get_int64("logId");
  out.msg = reader.get_string("msg");
}

void to_json(nlohmann::json& out, const LeadAnswer& value) {
  out = {{"accepted", value.accepted}, {"refused", value.refused}};
}

void from_json(const nlohmann::json& in, LeadAnswer& out) {
  ObjectReader reader(in);
  LeadAnswer result;
  result.accepted = read_array<std::int64_t>(reader, "accepted", kMaxLeadFires, read_log_id);
  result.refused = read_array<LeadRefusal>(reader, "refused", kMaxLeadFires,
                                           [](const nlohmann::json& refusal) { return refusal.get<LeadRefusal>(); });
  out = std::move(result);
}

void to_json(nlohmann::json& out, const LeadCancelParam& value) {
  out = {{"logIds", value.log_ids}, {"reason", value.reason}};
}

void from_json(const nlohmann::json& in, LeadCancelParam& out) {
  ObjectReader reader(in);
  LeadCancelParam result;
  result.log_ids = read_array<std::int64_t>(reader, "logIds", kMaxLeadFires, read_log_id);
  result.reason = reader.get_string("reason");
  out = std::move(result);
}

void to_json(nlohmann::json& out, const LeadCancelAnswer& value) {
  out = {{"cancelled", value.cancelled}, {"started", value.started}, {"unknown", value.unknown}};
}

void from_json(const nlohmann::json& in, LeadCancelAnswer& out) {
  ObjectReader reader(in);
  LeadCancelAnswer result;
  result.cancelled = read_array<std::int64_t>(reader, "cancelled", kMaxLeadFires, read_log_id);
  result.started = read_array<std::int64_t>(reader, "started", kMaxLeadFires, read_log_id);
  result.unknown = read_array<std::int64_t>(reader, "unknown", kMaxLeadFires, read_log_id);
  out = std::move(result);
}

}  // namespace cronwheel::common::protocol
