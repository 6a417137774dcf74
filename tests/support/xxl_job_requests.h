#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

// Request bodies byte for byte as an XXL-JOB 2.4 admin sends them to an executor (Gson's field
// order and escaping), for tests and benchmarks that drive an executor the way a real admin does.
namespace cronwheel::testing {

// A JSON string as Gson writes it by default (XXL-JOB's GsonTool): quotes, backslashes and
// control characters escaped, and the HTML-sensitive characters < > & = ' as \u00XX.
inline std::string gson_string(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '<': out += "\\u003c"; break;
      case '>': out += "\\u003e"; break;
      case '&': out += "\\u0026"; break;
      case '=': out += "\\u003d"; break;
      case '\'': out += "\\u0027"; break;
      default:
        if (u < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", u);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

inline std::int64_t now_epoch_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// POST /run, field for field as XXL-JOB 2.4's admin serializes TriggerParam.
struct TriggerBody {
  int job_id = 1;
  std::string handler = "echo";
  std::string params;
  std::string strategy = "SERIAL_EXECUTION";
  int timeout = 0;
  std::int64_t log_id = 1;
  // Now by default: a log date older than the executor's log retention would be cleaned up.
  std::int64_t log_date_time = now_epoch_ms();
  std::string glue_type = "BEAN";
  std::string glue_source;
  std::int64_t glue_updatetime = 0;
  int broadcast_index = 0;
  int broadcast_total = 1;

  std::string body() const {
    return "{\"jobId\":" + std::to_string(job_id) +
           ",\"executorHandler\":" + gson_string(handler) +
           ",\"executorParams\":" + gson_string(params) +
           ",\"executorBlockStrategy\":" + gson_string(strategy) +
           ",\"executorTimeout\":" + std::to_string(timeout) +
           ",\"logId\":" + std::to_string(log_id) +
           ",\"logDateTime\":" + std::to_string(log_date_time) +
           ",\"glueType\":" + gson_string(glue_type) +
           ",\"glueSource\":" + gson_string(glue_source) +
           ",\"glueUpdatetime\":" + std::to_string(glue_updatetime) +
           ",\"broadcastIndex\":" + std::to_string(broadcast_index) +
           ",\"broadcastTotal\":" + std::to_string(broadcast_total) + "}";
  }
};

// POST /kill and /idleBeat.
inline std::string job_id_body(int job_id) { return "{\"jobId\":" + std::to_string(job_id) + "}"; }

// POST /log, with XXL-JOB 2.4's spelling "logDateTim".
inline std::string log_body(std::int64_t log_date_time, std::int64_t log_id, int from_line) {
  return "{\"logDateTim\":" + std::to_string(log_date_time) + ",\"logId\":" +
         std::to_string(log_id) + ",\"fromLineNum\":" + std::to_string(from_line) + "}";
}

}  // namespace cronwheel::testing
