#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/protocol/json_reader.h"
#include "common/protocol/return_t.h"

// The request and response bodies of XXL-JOB 2.4's admin/executor calls (DESIGN.md, "Wire
// protocol"). Field comments give the wire name and Java type. Times are epoch milliseconds.
//
// Every type has to_json/from_json found by ADL, so nlohmann::json(param) and
// json.get<TriggerParam>() work. To read a body use parse<T>(text), which turns malformed JSON
// into a ProtocolError too; to write one use to_json_string(value). All readers follow the rules
// in json_reader.h: missing or null fields take defaults, wrong types throw ProtocolError naming
// the field.
namespace cronwheel::common::protocol {

// POST /run, admin → executor.
struct TriggerParam {
  std::int32_t job_id = 0;               // jobId (int)
  std::string executor_handler;          // executorHandler: the BEAN handler name
  std::string executor_params;           // executorParams
  std::string executor_block_strategy;   // executorBlockStrategy: a BlockStrategy wire name
  std::int32_t executor_timeout = 0;     // executorTimeout (int): seconds, 0 = none
  std::int64_t log_id = 0;               // logId (long)
  std::int64_t log_date_time = 0;        // logDateTime (long); "logDateTim" accepted on input
  std::string glue_type;                 // glueType: a GlueType wire name
  std::string glue_source;               // glueSource: the script for GLUE_* types
  std::int64_t glue_updatetime = 0;      // glueUpdatetime (long): version of glue_source
  std::int32_t broadcast_index = 0;      // broadcastIndex (int): this executor's shard index
  std::int32_t broadcast_total = 0;      // broadcastTotal (int): number of shards

  friend bool operator==(const TriggerParam&, const TriggerParam&) = default;
};

// POST /idleBeat, admin → executor: is the job's thread idle (used by BUSYOVER routing)?
struct IdleBeatParam {
  std::int32_t job_id = 0;  // jobId (int)

  friend bool operator==(const IdleBeatParam&, const IdleBeatParam&) = default;
};

// POST /kill, admin → executor.
struct KillParam {
  std::int32_t job_id = 0;  // jobId (int)

  friend bool operator==(const KillParam&, const KillParam&) = default;
};

// POST /log, admin → executor: read a run's log from a line on. Answered by ReturnT<LogResult>.
struct LogParam {
  std::int64_t log_date_time = 0;  // logDateTim (long), so spelled by XXL-JOB; "logDateTime" too
  std::int64_t log_id = 0;         // logId (long)
  std::int32_t from_line_num = 0;  // fromLineNum (int): first line wanted, 1-based

  friend bool operator==(const LogParam&, const LogParam&) = default;
};

// The content of the /log answer.
struct LogResult {
  std::int32_t from_line_num = 0;  // fromLineNum (int)
  std::int32_t to_line_num = 0;    // toLineNum (int): last line returned
  std::string log_content;         // logContent
  bool is_end = false;             // isEnd (boolean): the run is over and this is the last line;
                                   // "end" (Jackson's spelling of the getter) accepted on input

  // cronwheel executors only (optional: XXL-JOB's executors do not send them, its admin ignores
  // them): what the answering executor process knows of the run, whatever its log file says.
  // Written only when set.
  std::string run_state = {};            // runState: one of kRunState*, "" when not told
  std::int64_t executor_start_time = 0;  // executorStartTime: when the answering process
                                         // started (epoch ms), 0 when not told

  friend bool operator==(const LogResult&, const LogResult&) = default;
};

// LogResult::run_state values. A run the executor process holds (queued or running), one whose
// result it keeps until an admin accepts it, and one it has no trace of: not queued, not running
// and no result to send, so no result for it will ever come from this process.
inline constexpr std::string_view kRunStateActive = "active";
inline constexpr std::string_view kRunStateResultPending = "result-pending";
inline constexpr std::string_view kRunStateUnknown = "unknown";

// One finished run, executor → admin.
struct HandleCallbackParam {
  std::int64_t log_id = 0;         // logId (long)
  std::int64_t log_date_time = 0;  // logDateTim (long); "logDateTime" accepted on input
  std::int32_t handle_code = 0;    // handleCode (int): kSuccessCode, kFailCode, kTimeoutCode
  std::string handle_msg;          // handleMsg
  // cronwheel only (XXL-JOB ignores it): the run's structured output, JSON text sent as a JSON
  // string, what a workflow's later nodes read (docs/workflows.md). Absent: none.
  std::optional<std::string> output;  // output
  // notStarted: cronwheel only, and only for a run handed over by lead dispatch (LeadRequest): the
  // executor never started it and never will (it restarted or stopped before the instant), with
  // why. Not a result: the admin sends the fire again or applies its misfire strategy. handleCode
  // and handleMsg are then kFailCode and the same reason, so that an admin that does not know the
  // field still ends the run rather than leaving it running.
  std::optional<std::string> not_started;  // notStarted

  friend bool operator==(const HandleCallbackParam&, const HandleCallbackParam&) = default;
};

// POST {admin}/api/callback: a batch of finished runs. XXL-JOB 2.4 sends a bare JSON array, 3.5
// sends {"callbackList":[...]}; both are read, the bare array is written.
struct CallbackBatch {
  std::vector<HandleCallbackParam> callbacks;

  friend bool operator==(const CallbackBatch&, const CallbackBatch&) = default;
};

// POST {admin}/api/registry and api/registryRemove, executor → admin.
inline constexpr std::size_t kMaxRegistryHandlers = 256;
inline constexpr std::int64_t kMaxClockOffsetMs = 24LL * 60 * 60 * 1000;  // a day
struct RegistryParam {
  std::string registry_group;  // registryGroup: kRegistryGroupExecutor
  std::string registry_key;    // registryKey: the executor's appName
  std::string registry_value;  // registryValue: the executor's address, "http://ip:port/"
  // handlers: cronwheel's own: the names of the BEAN handlers the executor runs, so the console
  // can suggest them. Written only when not empty; XXL-JOB's admins (Gson) ignore it, and its
  // executors never send it. At most kMaxRegistryHandlers names are read.
  std::vector<std::string> handlers = {};
  // clockOffsetMs, clockDelayMs (long): cronwheel's own, absent until the executor has measured
  // one registration's exchange: its estimate of the admins' clock minus its own, and the round
  // trip of the exchange that estimate comes from (docs/operations.md, "Clock offset"). Written
  // only when set. Read within ±kMaxClockOffsetMs and [0, kMaxClockOffsetMs]; a value beyond is
  // refused (ProtocolError naming the field), so an executor cannot make the admin store or
  // export absurd numbers.
  std::optional<std::int64_t> clock_offset_ms = std::nullopt;
  std::optional<std::int64_t> clock_delay_ms = std::nullopt;
  // leadDispatch (boolean): cronwheel's own: the executor takes POST /lead now (it knows the
  // admins' clock well enough to start a fire at its instant, never before it). Written only when
  // true; XXL-JOB's admins ignore it and its executors never send it.
  bool lead_dispatch = false;

  friend bool operator==(const RegistryParam&, const RegistryParam&) = default;
};

// Lead dispatch (cronwheel only; docs/scheduling.md "Lead dispatch"): the admin hands an executor
// the fires of a coming second in one POST /lead, ahead of their instant; the executor holds them
// on its timing wheel and starts each at its instant.
inline constexpr std::size_t kMaxLeadFires = 1'000;       // fires in one /lead, ids in one /leadCancel
inline constexpr std::int64_t kMaxLeadAheadMs = 60'000;   // how far ahead a fire may be handed over

// One fire of a LeadRequest: what /run would carry, and its instant on the admin's clock.
struct LeadFire {
  std::int64_t fire_at = 0;  // fireAt (long): epoch ms, the admin's clock
  TriggerParam trigger;      // trigger: the /run body

  friend bool operator==(const LeadFire&, const LeadFire&) = default;
};

// POST /lead, admin → executor. At most kMaxLeadFires fires (more is a ProtocolError on "fires").
struct LeadRequest {
  std::int64_t admin_time = 0;  // adminTime (long): the admin's clock as it sent the request
  std::vector<LeadFire> fires;  // fires

  friend bool operator==(const LeadRequest&, const LeadRequest&) = default;
};

struct LeadRefusal {
  std::int64_t log_id = 0;  // logId
  std::string msg;          // msg: why, as /run would have said

  friend bool operator==(const LeadRefusal&, const LeadRefusal&) = default;
};

// The content of a successful /lead answer: every fire of the request is in exactly one list. An
// accepted fire is the executor's: it starts it at its instant, or reports it notStarted. A
// request refused as a whole (the executor does not know the admin's clock well enough, it is
// stopping, ...) is a ReturnT with code kFailCode and no content: none of its fires is held.
struct LeadAnswer {
  std::vector<std::int64_t> accepted;  // accepted: log ids
  std::vector<LeadRefusal> refused;    // refused

  friend bool operator==(const LeadAnswer&, const LeadAnswer&) = default;
};

// POST /leadCancel, admin → executor: take back held fires (their job was stopped, edited or
// deleted, or an operator killed the run). At most kMaxLeadFires ids.
struct LeadCancelParam {
  std::vector<std::int64_t> log_ids;  // logIds
  std::string reason;                 // reason: written to the executor's log

  friend bool operator==(const LeadCancelParam&, const LeadCancelParam&) = default;
};

// The content of the /leadCancel answer: each id of the request in one list. Cancelled fires will
// never start and no result or notStarted comes for them; started ones are runs like any other (a
// /kill ends them); unknown ones were never held by this process, or ended already.
struct LeadCancelAnswer {
  std::vector<std::int64_t> cancelled;  // cancelled
  std::vector<std::int64_t> started;    // started
  std::vector<std::int64_t> unknown;    // unknown

  friend bool operator==(const LeadCancelAnswer&, const LeadCancelAnswer&) = default;
};

void to_json(nlohmann::json& out, const TriggerParam& value);
void from_json(const nlohmann::json& in, TriggerParam& out);
void to_json(nlohmann::json& out, const IdleBeatParam& value);
void from_json(const nlohmann::json& in, IdleBeatParam& out);
void to_json(nlohmann::json& out, const KillParam& value);
void from_json(const nlohmann::json& in, KillParam& out);
void to_json(nlohmann::json& out, const LogParam& value);
void from_json(const nlohmann::json& in, LogParam& out);
void to_json(nlohmann::json& out, const LogResult& value);
void from_json(const nlohmann::json& in, LogResult& out);
void to_json(nlohmann::json& out, const HandleCallbackParam& value);
void from_json(const nlohmann::json& in, HandleCallbackParam& out);
void to_json(nlohmann::json& out, const CallbackBatch& value);
void from_json(const nlohmann::json& in, CallbackBatch& out);
void to_json(nlohmann::json& out, const RegistryParam& value);
void from_json(const nlohmann::json& in, RegistryParam& out);
void to_json(nlohmann::json& out, const LeadFire& value);
void from_json(const nlohmann::json& in, LeadFire& out);
void to_json(nlohmann::json& out, const LeadRequest& value);
void from_json(const nlohmann::json& in, LeadRequest& out);
void to_json(nlohmann::json& out, const LeadRefusal& value);
void from_json(const nlohmann::json& in, LeadRefusal& out);
void to_json(nlohmann::json& out, const LeadAnswer& value);
void from_json(const nlohmann::json& in, LeadAnswer& out);
void to_json(nlohmann::json& out, const LeadCancelParam& value);
void from_json(const nlohmann::json& in, LeadCancelParam& out);
void to_json(nlohmann::json& out, const LeadCancelAnswer& value);
void from_json(const nlohmann::json& in, LeadCancelAnswer& out);

// Reads a message body: parse<TriggerParam>(request.body), parse<ReturnT<LogResult>>(body).
// Throws ProtocolError for malformed JSON and for invalid fields.
template <class T>
T parse(std::string_view text) {
  T value{};
  from_json(parse_json(text), value);
  return value;
}

// Writes a message body (compact JSON, never throws on odd bytes in strings).
template <class T>
std::string to_json_string(const T& value) {
  return dump_json(nlohmann::json(value));
}

}  // namespace cronwheel::common::protocol
