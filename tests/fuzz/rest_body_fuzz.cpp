// Fuzz target: the REST API's JSON request bodies (admin/api/json_body.h, job_validation.h) and
// the bounded JSON reading under them (common/protocol/json_reader.h). The input is a request
// body, read as a job (create and update) and field by field.
//
// Properties:
//  - JsonBody, read_job_body and validate_job throw nothing but HttpError 400 "invalid", whose
//    message starts with "<field>:" (an array's element: "<field>[i]:") when it names a field;
//    check_json_shape and parse_json throw nothing but ProtocolError;
//  - parse_json's bounds hold for what it accepts (depth and value count within the limits),
//    and what it accepts round-trips through dump_json;
//  - strings JsonBody hands out never hold NUL, and single-line fields no control character;
//    once every field was read, finish() accepts the body;
//  - a job that reads has its fields within their documented limits; an update never changes
//    read-only fields or the script; a job that validates with a CRON schedule parses as a
//    cron expression in its zone.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "admin/api/field_checks.h"
#include "admin/api/job_validation.h"
#include "admin/api/json_body.h"
#include "common/cron/cron_expression.h"
#include "common/http/http_error.h"
#include "common/protocol/job_enums.h"
#include "common/protocol/json_reader.h"
#include "common/protocol/protocol_error.h"
#include "common/util/utf8.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using namespace cronwheel;
using admin::JsonBody;
using common::http::HttpError;
using common::protocol::ProtocolError;

void check_http_error(const HttpError& e) {
  const auto& info = e.info();
  FUZZ_CHECK(info.status == 400 && info.code == "invalid", "body errors are 400 \"invalid\"");
  // An element of an array field is named "<field>[i]:" in the message, and the error's field
  // is either "<field>" or "<field>[i]" (JsonBody uses both).
  FUZZ_CHECK(info.field.empty() || info.message.rfind(info.field + ":", 0) == 0 ||
                 info.message.rfind(info.field + "[", 0) == 0,
             "an error naming a field starts its message with \"<field>:\" or \"<field>[i]:\"");
}

// Depth (a scalar is 0 deep, [] is 1) and number of values of a parsed document.
void measure(const nlohmann::json& value, std::size_t depth, std::size_t& max_depth, std::size_t& values) {
  ++values;
  if (!value.is_structured()) return;
  max_depth = std::max(max_depth, depth + 1);
  for (const auto& item : value) measure(item, depth + 1, max_depth, values);
}

void check_json_reading(std::string_view text) {
  constexpr auto limits = JsonBody::kLimits;
  bool shape_ok = true;
  try {
    common::protocol::check_json_shape(text, limits);
  } catch (const ProtocolError&) {
    shape_ok = false;
  }
  nlohmann::json json;
  try {
    json = common::protocol::parse_json(text, limits);
  } catch (const ProtocolError&) {
    return;
  }
  FUZZ_CHECK(shape_ok, "parse_json accepts only what check_json_shape accepts");
  std::size_t depth = 0;
  std::size_t values = 0;
  measure(json, 0, depth, values);
  FUZZ_CHECK(depth <= limits.max_depth, "parsed JSON nests no deeper than the limit");
  FUZZ_CHECK(values <= limits.max_values, "parsed JSON holds no more values than the limit");
  nlohmann::json again;
  try {
    again = common::protocol::parse_json(common::protocol::dump_json(json), limits);
  } catch (const ProtocolError&) {
    FUZZ_CHECK(false, "dump_json of accepted JSON is accepted again");
  }
  FUZZ_CHECK(again == json, "JSON round-trips through dump_json");
}

bool is_any_text_field(std::string_view field) {
  return field == "glueSource" || field == "password" || field == "currentPassword" || field == "newPassword";
}

void check_text(std::string_view field, const std::string& value) {
  FUZZ_CHECK(value.find('\0') == std::string::npos, "strings from JsonBody hold no NUL");
  if (is_any_text_field(field)) return;
  const bool multiline = field == "executorParam";
  for (std::size_t i = 0; i < value.size(); ++i) {
    const auto c = static_cast<unsigned char>(value[i]);
    if (multiline && (c == '\n' || c == '\r' || c == '\t')) continue;
    FUZZ_CHECK(c >= 0x20 && c != 0x7f, "single-line fields hold no control characters");
    FUZZ_CHECK(!(c == 0xc2 && i + 1 < value.size() && static_cast<unsigned char>(value[i + 1]) >= 0x80 &&
                 static_cast<unsigned char>(value[i + 1]) <= 0x9f),
               "single-line fields hold no C1 control characters");
  }
}

template <class Read>
void try_read(Read read) {
  try {
    read();
  } catch (const HttpError& e) {
    check_http_error(e);
  }
}

// Every field of the body through every typed reader; then finish() has nothing left to refuse.
void check_json_body(std::string_view text) {
  std::optional<JsonBody> body;
  try {
    body.emplace(text);
  } catch (const HttpError& e) {
    check_http_error(e);
    return;
  }
  FUZZ_CHECK(body->json().is_object(), "a JsonBody is an object");
  std::vector<std::string> keys;
  for (const auto& [key, value] : body->json().items()) keys.push_back(key);
  for (const auto& key : keys) {
    FUZZ_CHECK(body->has(key), "has() sees every field");
    try_read([&] {
      if (auto s = body->optional_string(key)) check_text(key, *s);
    });
    try_read([&] { body->optional_int(key); });
    try_read([&] { body->optional_bool(key); });
    try_read([&] {
      if (auto list = body->optional_string_list(key)) {
        for (const auto& s : *list) check_text(key, s);
      }
    });
    try_read([&] { body->optional_int_list(key); });
  }
  try {
    body->finish();
  } catch (const HttpError&) {
    FUZZ_CHECK(false, "finish() accepts a body whose every field was read");
  }
}

// A named value of E (its wire name reads back as itself), not an integer cast into it.
template <class E>
bool known(E value) {
  return common::protocol::parse_enum<E>(common::protocol::to_string(value)) == value;
}

void check_job(const admin::Job& job) {
  namespace protocol = common::protocol;
  FUZZ_CHECK(!job.job_desc.empty() && common::utf8::char_count(job.job_desc) <= admin::kMaxJobDesc,
             "jobDesc is 1-255 characters");
  FUZZ_CHECK(admin::trimmed(job.job_desc) == job.job_desc, "jobDesc is trimmed");
  FUZZ_CHECK(common::utf8::char_count(job.author) <= admin::kMaxAuthor, "author is at most 64 characters");
  FUZZ_CHECK(common::utf8::char_count(job.alarm_email) <= admin::kMaxAlarmEmail, "alarmEmail is at most 255 characters");
  for (const auto& address : admin::split_list(job.alarm_email)) {
    FUZZ_CHECK(admin::is_email_address(address), "alarmEmail holds email addresses only");
  }
  FUZZ_CHECK(!job.timezone.empty() && common::utf8::char_count(job.timezone) <= admin::kMaxTimezone,
             "timezone is 1-64 characters");
  FUZZ_CHECK(known<protocol::ScheduleType>(job.schedule_type), "scheduleType is known");
  FUZZ_CHECK(known<protocol::MisfireStrategy>(job.misfire_strategy), "misfireStrategy is known");
  FUZZ_CHECK(known<protocol::RouteStrategy>(job.executor_route_strategy), "executorRouteStrategy is known");
  FUZZ_CHECK(known<protocol::BlockStrategy>(job.executor_block_strategy), "executorBlockStrategy is known");
  FUZZ_CHECK(known<protocol::GlueType>(job.glue_type), "glueType is known");
  FUZZ_CHECK(job.executor_timeout >= 0, "executorTimeout is not negative");
  FUZZ_CHECK(job.executor_fail_retry_count >= 0 && job.executor_fail_retry_count <= admin::kMaxFailRetryCount,
             "executorFailRetryCount is 0-100");
  FUZZ_CHECK(job.retry_interval >= 0, "retryInterval is not negative");
  FUZZ_CHECK(job.executor_param.size() <= admin::kMaxExecutorParamBytes, "executorParam is at most 64 KiB");
  FUZZ_CHECK(job.glue_source.size() <= admin::kMaxGlueSourceBytes, "glueSource is at most 1 MiB");
  FUZZ_CHECK(common::utf8::char_count(job.glue_remark) <= admin::kMaxGlueRemark, "glueRemark is at most 128 characters");
  std::vector<std::int64_t> ids = job.child_job_ids;
  std::sort(ids.begin(), ids.end());
  FUZZ_CHECK(std::adjacent_find(ids.begin(), ids.end()) == ids.end(), "childJobId lists each job once");
  FUZZ_CHECK(ids.empty() || ids.front() > 0, "childJobId holds job ids only");

  try {
    admin::validate_job(job);
  } catch (const HttpError& e) {
    check_http_error(e);
    return;
  }
  if (job.schedule_type == admin::ScheduleType::kCron) {
    try {
      common::CronExpression::parse(job.schedule_conf, job.timezone);
    } catch (const common::CronError&) {
      FUZZ_CHECK(false, "a validated CRON job's scheduleConf parses in its timezone");
    }
  }
  if (job.glue_type == admin::GlueType::kBean) FUZZ_CHECK(!job.executor_handler.empty(), "a validated BEAN job names its handler");
}

admin::Job stored_job() {
  admin::Job job;
  job.id = 17;
  job.job_group = 3;
  job.job_desc = "nightly report";
  job.schedule_type = admin::ScheduleType::kCron;
  job.schedule_conf = "0 0 2 * * ?";
  job.timezone = "Europe/Paris";
  job.executor_handler = "reportHandler";
  job.glue_source = "echo stored";
  job.glue_remark = "v1";
  job.glue_updated_at = 1'700'000'000'000;
  job.trigger_status = 1;
  job.trigger_last_time = 1'700'000'100'000;
  job.trigger_next_time = 1'700'000'200'000;
  job.created_at = 1'600'000'000'000;
  job.updated_at = 1'650'000'000'000;
  return job;
}

void check_job_bodies(std::string_view text) {
  try {
    check_job(admin::read_job_body(text, admin::Job{}, admin::JobBodyKind::kCreate));
  } catch (const HttpError& e) {
    check_http_error(e);
  }
  static const admin::Job base = stored_job();
  try {
    const admin::Job updated = admin::read_job_body(text, base, admin::JobBodyKind::kUpdate);
    FUZZ_CHECK(updated.id == base.id && updated.trigger_status == base.trigger_status &&
                   updated.trigger_last_time == base.trigger_last_time &&
                   updated.trigger_next_time == base.trigger_next_time && updated.created_at == base.created_at &&
                   updated.updated_at == base.updated_at && updated.glue_updated_at == base.glue_updated_at,
               "an update leaves read-only fields alone");
    FUZZ_CHECK(updated.glue_source == base.glue_source && updated.glue_remark == base.glue_remark,
               "an update leaves the script to POST jobs/{id}/script");
    check_job(updated);
  } catch (const HttpError& e) {
    check_http_error(e);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  check_json_reading(text);
  check_json_body(text);
  check_job_bodies(text);
  return 0;
}
