#include "admin/api/job_validation.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <set>
#include <string>

#include "admin/api/api_errors.h"
#include "admin/api/field_checks.h"
#include "admin/api/json_body.h"
#include "admin/model/child_jobs.h"
#include "admin/model/schedule.h"
#include "admin/model/slots.h"
#include "admin/scheduler/fire_decision.h"
#include "common/cron/cron_expression.h"
#include "admin/model/record_json.h"
#include "common/jobs_file/jobs_file.h"
#include "common/protocol/job_enums.h"

namespace cronwheel::admin {

namespace {

namespace protocol = common::protocol;

// The fields a request may write; every other field of the job's JSON form is read-only.
const std::set<std::string, std::less<>>& writable_fields() {
  static const std::set<std::string, std::less<>> fields{
      "jobGroup",        "name",             "jobDesc",          "author",
      "alarmEmail",      "scheduleType",     "scheduleConf",
      "timezone",        "misfireStrategy",  "executorRouteStrategy",
      "executorHandler", "executorParam",    "executorBlockStrategy",
      "executorTimeout", "executorFailRetryCount", "retryInterval",
      "glueType",        "glueSource",       "glueRemark",
      "childJobId",      "calendarId",       "calendarMode",
      "dstGap",          "dstRepeat",        "retryBackoff",     "retryMultiplier",
      "retryMaxInterval", "retryJitter",      "maxConcurrent",    "priority"};
  return fields;
}

// Refuses fields of the job's JSON form that the API computes, with a hint where there is one.
void refuse_read_only(const JsonBody& body) {
  static const nlohmann::json answered = to_json(Job{});
  for (const auto& [key, value] : body.json().items()) {
    if (!answered.contains(key) || writable_fields().contains(key)) continue;
    std::string message = key + ": is read-only";
    if (key == "triggerStatus" || key == "triggerNextTime") message += "; use POST jobs/{id}/start or /stop";
    throw invalid(key, message);
  }
}

template <class E>
E checked_enum(std::string_view field, const std::string& value) {
  auto parsed = protocol::parse_enum<E>(value);
  if (!parsed) {
    throw invalid(field, std::string(field) + ": unknown value '" + value + "', expected one of " +
                             protocol::enum_choices<E>());
  }
  return *parsed;
}

// A job's name: 1-100 lower-case letters, digits, '.', '_' or '-', starting with a letter or a
// digit (the schema's job_info_name_format).
const std::string& checked_job_name(const std::string& name) {
  if (!common::jobs_file::is_job_name(name)) {
    const bool printable = std::all_of(name.begin(), name.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
    throw invalid("name", "name: must be 1-100 lower-case letters, digits, '.', '_' or '-', starting with a letter or "
                          "digit" + (printable ? ", got '" + truncate_chars(name, 120) + "'" : std::string()));
  }
  return name;
}

std::int64_t child_id_from_text(const std::string& item) {
  std::int64_t id = 0;
  auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), id);
  if (ec != std::errc() || end != item.data() + item.size() || id <= 0) {
    throw invalid("childJobId", "childJobId: expected job ids separated by commas, got '" + item + "'");
  }
  return id;
}

std::vector<std::int64_t> read_child_ids(JsonBody& body) {
  std::vector<std::int64_t> ids;
  const auto& json = body.json();
  if (auto it = json.find("childJobId"); it != json.end() && it->is_string()) {
    // XXL-JOB's form: "1,2". Blank means none. As XXL-JOB reads it (Java's split), trailing
    // commas are nothing, and an empty item between two ids ("1,,2") is a mistake.
    const auto text = *body.optional_string("childJobId");
    auto items = split_list(text, /*keep_empty=*/true);
    while (!items.empty() && items.back().empty()) items.pop_back();
    {
      for (const auto& item : items) {
        if (item.empty()) {
          throw invalid("childJobId", "childJobId: an empty item in '" + truncate_chars(text, 60) +
                                          "'; expected job ids separated by single commas");
        }
        ids.push_back(child_id_from_text(item));
      }
    }
  } else {
    ids = body.optional_int_list("childJobId").value_or(std::vector<std::int64_t>{});
  }
  std::set<std::int64_t> seen;
  for (auto id : ids) {
    if (id <= 0) throw invalid("childJobId", "childJobId: " + std::to_string(id) + " is not a job id");
    if (!seen.insert(id).second) {
      throw invalid("childJobId", "childJobId: job " + std::to_string(id) + " is listed twice");
    }
  }
  return ids;
}

}  // namespace

const std::string& checked_glue_source(const std::string& source) {
  if (source.size() > kMaxGlueSourceBytes) {
    throw invalid("glueSource", "glueSource: at most " + std::to_string(kMaxGlueSourceBytes) + " bytes, got " +
                                    std::to_string(source.size()));
  }
  return source;
}

Job read_job_body(std::string_view body_text, Job job, JobBodyKind kind) {
  JsonBody body(body_text);
  refuse_read_only(body);

  if (kind == JobBodyKind::kCreate) {
    job.job_group = body.required_int("jobGroup");
  } else if (auto group = body.optional_int("jobGroup")) {
    job.job_group = *group;
  }
  // Optional: a new job given none is named "job-<id>"; an edit without one keeps the name.
  if (auto name = body.optional_string("name")) job.name = checked_job_name(*name);
  if (kind == JobBodyKind::kCreate || body.has("jobDesc")) {
    job.job_desc = trimmed(body.required_string("jobDesc"));
    check_text("jobDesc", job.job_desc, kMaxJobDesc, true);
  }
  if (auto author = body.optional_string("author")) {
    job.author = trimmed(*author);
    check_text("author", job.author, kMaxAuthor, false);
  }
  if (auto email = body.optional_string("alarmEmail")) job.alarm_email = checked_email_list("alarmEmail", *email, kMaxAlarmEmail);

  auto type = body.optional_string("scheduleType");
  auto conf = body.optional_string("scheduleConf");
  if (type) {
    job.schedule_type = checked_enum<protocol::ScheduleType>("scheduleType", *type);
    job.schedule_conf = "";
  }
  if (conf) job.schedule_conf = trimmed(*conf);
  if (auto zone = body.optional_string("timezone")) {
    job.timezone = trimmed(*zone);
    check_text("timezone", job.timezone, kMaxTimezone, true);
  }
  if (auto misfire = body.optional_string("misfireStrategy")) {
    job.misfire_strategy = checked_enum<protocol::MisfireStrategy>("misfireStrategy", *misfire);
  }
  if (auto route = body.optional_string("executorRouteStrategy")) {
    job.executor_route_strategy = checked_enum<protocol::RouteStrategy>("executorRouteStrategy", *route);
  }
  if (auto handler = body.optional_string("executorHandler")) {
    job.executor_handler = trimmed(*handler);
    check_text("executorHandler", job.executor_handler, kMaxExecutorHandler, false);
  }
  if (auto param = body.optional_string("executorParam")) {
    if (param->size() > kMaxExecutorParamBytes) {
      throw invalid("executorParam", "executorParam: at most " + std::to_string(kMaxExecutorParamBytes) + " bytes");
    }
    job.executor_param = *param;
  }
  if (auto block = body.optional_string("executorBlockStrategy")) {
    job.executor_block_strategy = checked_enum<protocol::BlockStrategy>("executorBlockStrategy", *block);
  }
  if (auto timeout = body.optional_int("executorTimeout")) {
    job.executor_timeout = check_int_range("executorTimeout", *timeout, 0, INT_MAX);
  }
  if (auto retries = body.optional_int("executorFailRetryCount")) {
    job.executor_fail_retry_count = check_int_range("executorFailRetryCount", *retries, 0, kMaxFailRetryCount);
  }
  if (auto interval = body.optional_int("retryInterval")) {
    job.retry_interval = check_int_range("retryInterval", *interval, 0, static_cast<int>(kMaxRetryDelaySeconds));
  }
  job.retry = read_retry_policy(body, job.retry);
  if (auto limit = body.optional_int("maxConcurrent")) {
    job.max_concurrent = check_int_range("maxConcurrent", *limit, 0, kMaxJobConcurrent);
  }
  if (auto priority = body.optional_int("priority")) {
    job.priority = check_int_range("priority", *priority, kMinPriority, kMaxPriority);
  }
  if (auto glue = body.optional_string("glueType")) {
    job.glue_type = checked_enum<protocol::GlueType>("glueType", *glue);
  }
  if (kind == JobBodyKind::kCreate) {
    if (auto source = body.optional_string("glueSource")) job.glue_source = checked_glue_source(*source);
    if (auto remark = body.optional_string("glueRemark")) {
      job.glue_remark = trimmed(*remark);
      check_text("glueRemark", job.glue_remark, kMaxGlueRemark, false);
    }
  } else {
    for (const char* field : {"glueSource", "glueRemark"}) {
      if (body.has(field)) {
        throw invalid(field, std::string(field) +
                                 ": script source changes through POST jobs/{id}/script, which keeps its history");
      }
    }
  }
  if (body.has("childJobId")) job.child_job_ids = read_child_ids(body);
  job.calendar = read_calendar_use(body, job.calendar);
  job.dst = read_dst_policy(body, job.dst);
  body.finish();
  return job;
}

RetryPolicy read_retry_policy(JsonBody& body, RetryPolicy retry) {
  if (auto backoff = body.optional_string("retryBackoff")) {
    auto parsed = parse_retry_backoff(*backoff);
    if (!parsed) {
      throw invalid("retryBackoff", "retryBackoff: unknown value '" + truncate_chars(*backoff, 40) +
                                        "', expected FIXED (every retry waits retryInterval) or EXPONENTIAL (each "
                                        "retry waits retryMultiplier times longer than the one before)");
    }
    retry.backoff = *parsed;
  }
  if (const auto* multiplier = body.optional_value("retryMultiplier")) {
    if (!multiplier->is_number() || !(multiplier->get<double>() >= kMinRetryMultiplier &&
                                      multiplier->get<double>() <= kMaxRetryMultiplier)) {
      throw invalid("retryMultiplier", "retryMultiplier: must be a number from 1 to 10, got " +
                                           truncate_chars(multiplier->dump(), 40));
    }
    retry.multiplier = multiplier->get<double>();
  }
  if (auto ceiling = body.optional_int("retryMaxInterval")) {
    retry.max_interval =
        check_int_range("retryMaxInterval", *ceiling, 0, static_cast<int>(kMaxRetryDelaySeconds));
  }
  if (auto jitter = body.optional_int("retryJitter")) {
    retry.jitter_percent = check_int_range("retryJitter", *jitter, 0, 100);
  }
  return retry;
}

common::DstPolicy read_dst_policy(JsonBody& body, common::DstPolicy dst) {
  if (auto gap = body.optional_string("dstGap")) {
    auto parsed = common::parse_dst_gap(*gap);
    if (!parsed) {
      throw invalid("dstGap", "dstGap: unknown value '" + truncate_chars(*gap, 40) +
                                  "', expected SKIP (a time the clocks jump over does not fire that day) or "
                                  "FIRE_AFTER (it fires at the first instant after the gap)");
    }
    dst.gap = *parsed;
  }
  if (auto repeat = body.optional_string("dstRepeat")) {
    auto parsed = common::parse_dst_repeat(*repeat);
    if (!parsed) {
      throw invalid("dstRepeat", "dstRepeat: unknown value '" + truncate_chars(*repeat, 40) +
                                     "', expected ONCE (a time that happens twice fires at the second) or BOTH "
                                     "(it fires at both)");
    }
    dst.repeat = *parsed;
  }
  return dst;
}

CalendarUse read_calendar_use(JsonBody& body, CalendarUse use) {
  if (body.has("calendarId")) {
    // null clears it; optional_int answers nullopt for null.
    const auto id = body.optional_int("calendarId");
    if (id && *id <= 0) {
      throw invalid("calendarId", "calendarId: " + std::to_string(*id) + " is not a calendar id (null for none)");
    }
    use.calendar_id = id.value_or(0);
    if (!id) use.mode = common::CalendarMode::kSkip;
  }
  if (auto mode = body.optional_string("calendarMode")) {
    auto parsed = parse_calendar_mode(*mode);
    if (!parsed) {
      throw invalid("calendarMode", "calendarMode: unknown value '" + truncate_chars(*mode, 40) +
                                        "', expected SKIP (skip the calendar's excluded days and times) or ONLY "
                                        "(fire on its business days only)");
    }
    use.mode = *parsed;
  }
  if (use.calendar_id == 0 && use.mode != common::CalendarMode::kSkip) {
    throw invalid("calendarMode", "calendarMode: ONLY needs a calendar: give calendarId");
  }
  return use;
}

void check_calendar_use(const CalendarUse& use, CalendarStore* calendars) {
  if (use.calendar_id == 0 || calendars == nullptr) return;
  if (!calendars->get(use.calendar_id)) {
    throw invalid("calendarId", "calendarId: calendar " + std::to_string(use.calendar_id) + " does not exist");
  }
}

bool schedule_changed(const Job& before, const Job& after) {
  return before.schedule_type != after.schedule_type || before.schedule_conf != after.schedule_conf ||
         before.timezone != after.timezone || before.calendar != after.calendar || before.dst != after.dst;
}

Schedule with_calendar_of(Schedule schedule, const CalendarUse& use, CalendarStore* calendars, const std::string& what) {
  if (use.calendar_id == 0 || calendars == nullptr) return schedule;
  auto calendar = calendars->get(use.calendar_id);
  if (!calendar) {
    // A calendar named by a job or workflow cannot be deleted; a draft's was checked just before.
    throw conflict(what + ": its calendar " + std::to_string(use.calendar_id) + " does not exist", "calendarId");
  }
  try {
    return schedule.with_calendar(
        ScheduleCalendar{calendar->name, common::BusinessCalendar::make(to_spec(*calendar)), use.mode});
  } catch (const common::CalendarError& e) {
    // Only reachable for a calendar written around the API: report it, do not guess.
    throw conflict(what + ": calendar " + calendar->name + " is invalid: " + e.what(), "calendarId");
  }
}

Schedule schedule_of(const Job& job, CalendarStore* calendars) {
  const std::string what = "job " + std::to_string(job.id);
  try {
    return with_calendar_of(Schedule::parse(job.schedule_type, job.schedule_conf, job.timezone, job.dst),
                            job.calendar, calendars, what);
  } catch (const ScheduleError& e) {
    // Only reachable for a row written around the API: report it, do not guess.
    throw conflict(what + " has an invalid schedule: " + e.what(), e.field());
  }
}

std::int64_t first_fire_time(const Job& job, std::int64_t now, CalendarStore* calendars) {
  if (job.schedule_type == ScheduleType::kNone) {
    throw invalid("scheduleType",
                  "scheduleType: NONE never fires by itself; give the job a schedule, or trigger it by hand");
  }
  const auto schedule = schedule_of(job, calendars);
  const auto after = now + kPreReadWindowMs;
  auto next = schedule.next_after(after);
  if (!next) {
    if (schedule.calendar() && schedule_of(job).next_after(after)) {
      throw invalid("calendarId", "calendarId: " + schedule.end_reason(after) + " after " +
                                      common::format_iso8601(now, job.timezone) + " for schedule '" +
                                      job.schedule_conf + "' (" + std::string(to_string(job.calendar.mode)) + ")");
    }
    throw invalid("scheduleConf", "scheduleConf: '" + job.schedule_conf + "' has no fire time after " +
                                      common::format_iso8601(now, job.timezone));
  }
  return *next;
}

nlohmann::json preview_json(const Schedule::Preview& preview) {
  nlohmann::json skipped = nlohmann::json::array();
  for (const auto& s : preview.skipped) skipped.push_back({{"time", s.at_ms}, {"reason", s.reason}});
  nlohmann::json dst = nlohmann::json::array();
  for (const auto& n : preview.dst) dst.push_back({{"time", n.at_ms}, {"note", n.text}});
  return {{"times", preview.times},
          {"skipped", std::move(skipped)},
          {"dst", std::move(dst)},
          {"end", preview.end.empty() ? nlohmann::json(nullptr) : nlohmann::json(preview.end)}};
}

void validate_job(const Job& job) {
  try {
    validate_schedule(job.schedule_type, job.schedule_conf, job.timezone);
    check_dst_policy(job.schedule_type, job.dst);
  } catch (const ScheduleError& e) {
    throw invalid(e.field(), e.what());
  }
  if (job.glue_type == GlueType::kBean && job.executor_handler.empty()) {
    throw invalid("executorHandler", "executorHandler: is required for glueType BEAN (the handler's registered name)");
  }
}

void check_child_cycle(const Job& job, std::int64_t self_id, JobStore& jobs, const Principal& who) {
  const auto cycle =
      find_child_cycle(self_id, job.child_job_ids, [&jobs](const std::vector<std::int64_t>& ids) { return jobs.children_of(ids); });
  if (cycle.empty()) return;
  const std::string consequence = " (each one's success would fire the next, forever)";
  // A cycle through jobs the caller cannot see is refused all the same, without naming them.
  for (auto id : cycle) {
    if (who.user.is_admin()) break;
    auto on_it = jobs.get(id);
    if (id != self_id && (!on_it || !who.may_access_group(on_it->job_group))) {
      throw invalid("childJobId", "childJobId: would make a cycle of child jobs through jobs of other groups" + consequence);
    }
  }
  throw invalid("childJobId", "childJobId: would make a cycle of child jobs: " + describe_child_cycle(cycle) + consequence);
}

void check_job_references(const Job& job, std::optional<std::int64_t> self_id, GroupStore& groups,
                          JobStore& jobs, const Principal& who) {
  auto group = groups.get(job.job_group);
  if (!group || !who.may_access_group(group->id)) {
    throw invalid("jobGroup", "jobGroup: group " + std::to_string(job.job_group) + " does not exist");
  }
  if (job.child_job_ids.empty()) return;
  for (auto id : job.child_job_ids) {
    if (self_id && id == *self_id) {
      throw invalid("childJobId", "childJobId: job " + std::to_string(id) + " cannot be its own child");
    }
  }
  auto missing = [](std::int64_t id) {
    return invalid("childJobId", "childJobId: job " + std::to_string(id) + " does not exist");
  };
  if (who.user.is_admin()) {
    auto existing = jobs.existing(job.child_job_ids);
    for (auto id : job.child_job_ids) {
      if (std::find(existing.begin(), existing.end(), id) == existing.end()) throw missing(id);
    }
  } else {
    for (auto id : job.child_job_ids) {
      auto child = jobs.get(id);
      if (!child || !who.may_access_group(child->job_group)) throw missing(id);
    }
  }
  // A new job closes no cycle: no job names it as a child yet.
  if (self_id) check_child_cycle(job, *self_id, jobs, who);
}


}  // namespace cronwheel::admin
