#include "common/jobs_file/jobs_file.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <system_error>

#include "common/protocol/job_enums.h"
#include "common/util/utf8.h"

namespace cronwheel::common::jobs_file {

namespace {

using json = nlohmann::json;
namespace protocol = common::protocol;

// ---- the format ------------------------------------------------------------------------

enum class Kind {
  kText,         // a string
  kNonNegative,  // an integer >= 0 that fits 32 bits
  kRange,        // an integer from Field::min to Field::max
  kMultiplier,   // a number from 1 to 10: an integer, or a decimal fraction (1.5)
  kTime,         // an integer >= 0 (epoch ms)
  kFlag,         // true or false
  kTextList,     // a list of strings
  kChoice,       // one of a set of strings
  kJobRefs,      // a list of job references: name, or appName/name
  kScriptFile,   // a path the CLI reads into glueSource
  kHistory,      // a list of earlier script versions
  kJobRef,       // one job reference: name, or appName/name
  kNodeKeys,     // a list of a workflow's node keys (a node's `after`)
  kParams,       // a workflow's list of input parameters
  kNodes,        // a workflow's map of node keys to nodes
  kWorkflows,    // a group's map of workflow names to workflows
  kCalendarRef,  // a calendar's name (a job's or workflow's `calendar`)
  kWeekdays,     // a calendar's business weekdays: MONDAY ... SUNDAY, each once
  kDates,        // a calendar's list of dates: {date, name}
  kTimes,        // a calendar's list of excluded time ranges: {start, end}
};

struct Field {
  std::string_view key;
  Kind kind;
  bool (*allowed)(std::string_view) = nullptr;  // kChoice
  std::string (*choices)() = nullptr;           // kChoice: for the message
  std::int64_t min = 0;                         // kRange
  std::int64_t max = 0;
};

template <class E>
bool is_enum(std::string_view text) {
  return protocol::parse_enum<E>(text).has_value();
}
template <class E>
std::string enum_list() {
  return protocol::enum_choices<E>();
}
bool is_api_version(std::string_view text) { return text == kApiVersion; }
std::string api_versions() { return std::string(kApiVersion); }
bool is_address_type(std::string_view text) { return text == "automatic" || text == "manual"; }
std::string address_types() { return "automatic, manual"; }
bool is_role(std::string_view text) { return text == "admin" || text == "normal"; }
std::string roles() { return "admin, normal"; }
// A workflow runs on a schedule, or only when triggered; FIX_DELAY is a job's alone.
bool is_workflow_schedule(std::string_view text) { return text == "NONE" || text == "CRON" || text == "FIX_RATE"; }
std::string workflow_schedules() { return "NONE, CRON, FIX_RATE"; }
bool is_overlap(std::string_view text) { return text == "WAIT" || text == "SKIP" || text == "PARALLEL"; }
std::string overlaps() { return "WAIT, SKIP, PARALLEL"; }
bool is_running_on_failure(std::string_view text) { return text == "FINISH" || text == "KILL"; }
std::string running_on_failures() { return "FINISH, KILL"; }
bool is_node_failure(std::string_view text) { return text == "FAIL" || text == "CONTINUE"; }
std::string node_failures() { return "FAIL, CONTINUE"; }
// A job's or workflow's calendar mode, as the API's SKIP and ONLY (docs/scheduling.md, "Calendars").
bool is_calendar_mode(std::string_view text) { return text == "skip" || text == "only"; }
std::string calendar_modes() { return "skip, only"; }
// A CRON job's DST policy, as the API's dstGap and dstRepeat in lower case (common::DstPolicy);
// the first of each is the default.
bool is_dst_gap(std::string_view text) { return text == "skip" || text == "fire_after"; }
std::string dst_gaps() { return "skip, fire_after"; }
bool is_dst_repeat(std::string_view text) { return text == "once" || text == "both"; }
std::string dst_repeats() { return "once, both"; }
// A job's retry back-off, as the API's retryBackoff in lower case (admin/model/retry_backoff.h);
// fixed is the default.
bool is_retry_backoff(std::string_view text) { return text == "fixed" || text == "exponential"; }
std::string retry_backoffs() { return "fixed, exponential"; }

// The bounds of the API's fields (openapi.yaml: Job, Group; the tables' CHECKs).
constexpr std::int64_t kMaxRetrySeconds = 30LL * 24 * 3600;  // retryMaxInterval: 30 days
constexpr std::int64_t kMaxJitterPercent = 100;
constexpr std::int64_t kMaxJobConcurrent = 1000;
constexpr std::int64_t kMaxPriority = 1000;
constexpr std::int64_t kMaxGroupRunning = 10000;
constexpr double kMinMultiplier = 1.0;
constexpr double kMaxMultiplier = 10.0;
// A multiplier written as text: digits, a point and digits, no more than this.
constexpr std::size_t kMaxMultiplierText = 24;

constexpr std::array<std::string_view, 7> kWeekdayNames{"MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY",
                                                        "FRIDAY", "SATURDAY", "SUNDAY"};

// `count` decimal digits at `pos` as a number, or -1.
int digits_at(std::string_view text, std::size_t pos, std::size_t count) {
  if (pos + count > text.size()) return -1;
  int value = 0;
  for (std::size_t i = pos; i < pos + count; ++i) {
    if (text[i] < '0' || text[i] > '9') return -1;
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

// A calendar's date as files and the API write it: YYYY-MM-DD, or --MM-DD for every year, with
// a month 01-12 and a day 01-31. Whether the day exists (30 February), and the years the rules
// take, are the admin's to say.
bool is_calendar_date(std::string_view text) {
  std::size_t at = 0;
  if (text.size() == 10 && text[4] == '-' && text[7] == '-' && digits_at(text, 0, 4) >= 0) {
    at = 5;
  } else if (text.size() == 7 && text.starts_with("--") && text[4] == '-') {
    at = 2;
  } else {
    return false;
  }
  const int month = digits_at(text, at, 2), day = digits_at(text, at + 3, 2);
  return month >= 1 && month <= 12 && day >= 1 && day <= 31;
}

// A time of day: HH:MM or HH:MM:SS, 00:00:00 to 23:59:59.
bool is_time_of_day(std::string_view text) {
  if ((text.size() != 5 && text.size() != 8) || text[2] != ':' || (text.size() == 8 && text[5] != ':')) return false;
  const int hours = digits_at(text, 0, 2), minutes = digits_at(text, 3, 2);
  const int seconds = text.size() == 8 ? digits_at(text, 6, 2) : 0;
  return hours >= 0 && hours <= 23 && minutes >= 0 && minutes <= 59 && seconds >= 0 && seconds <= 59;
}

// Each object's keys, in the order to_yaml writes them.
const std::vector<Field> kTopFields{
    {"apiVersion", Kind::kChoice, is_api_version, api_versions},
    {"calendars", Kind::kText},  // checked by calendars()
    {"groups", Kind::kText},  // checked by check_groups
    {"users", Kind::kText},   // checked by check_users
};
const std::vector<Field> kGroupFields{
    {"appName", Kind::kText},
    {"title", Kind::kText},
    {"addressType", Kind::kChoice, is_address_type, address_types},
    {"addressList", Kind::kTextList},
    {"maxRunning", Kind::kRange, nullptr, nullptr, 0, kMaxGroupRunning},
    {"jobs", Kind::kText},  // checked by jobs()
    {"workflows", Kind::kWorkflows},
};
const std::vector<Field> kJobFields{
    {"jobDesc", Kind::kText},
    {"author", Kind::kText},
    {"alarmEmail", Kind::kText},
    {"scheduleType", Kind::kChoice, is_enum<protocol::ScheduleType>, enum_list<protocol::ScheduleType>},
    {"scheduleConf", Kind::kText},
    {"timezone", Kind::kText},
    {"dstGap", Kind::kChoice, is_dst_gap, dst_gaps},
    {"dstRepeat", Kind::kChoice, is_dst_repeat, dst_repeats},
    {"calendar", Kind::kCalendarRef},
    {"calendarMode", Kind::kChoice, is_calendar_mode, calendar_modes},
    {"misfireStrategy", Kind::kChoice, is_enum<protocol::MisfireStrategy>, enum_list<protocol::MisfireStrategy>},
    {"executorRouteStrategy", Kind::kChoice, is_enum<protocol::RouteStrategy>, enum_list<protocol::RouteStrategy>},
    {"executorHandler", Kind::kText},
    {"executorParam", Kind::kText},
    {"executorBlockStrategy", Kind::kChoice, is_enum<protocol::BlockStrategy>, enum_list<protocol::BlockStrategy>},
    {"executorTimeout", Kind::kNonNegative},
    {"executorFailRetryCount", Kind::kNonNegative},
    {"retryInterval", Kind::kNonNegative},
    {"retryBackoff", Kind::kChoice, is_retry_backoff, retry_backoffs},
    {"retryMultiplier", Kind::kMultiplier},
    {"retryMaxInterval", Kind::kRange, nullptr, nullptr, 0, kMaxRetrySeconds},
    {"retryJitter", Kind::kRange, nullptr, nullptr, 0, kMaxJitterPercent},
    {"maxConcurrent", Kind::kRange, nullptr, nullptr, 0, kMaxJobConcurrent},
    {"priority", Kind::kRange, nullptr, nullptr, -kMaxPriority, kMaxPriority},
    {"glueType", Kind::kChoice, is_enum<protocol::GlueType>, enum_list<protocol::GlueType>},
    {"glueSource", Kind::kText},
    {"scriptFile", Kind::kScriptFile},
    {"glueRemark", Kind::kText},
    {"glueHistory", Kind::kHistory},
    {"childJobs", Kind::kJobRefs},
    {"alarmChannels", Kind::kTextList},
    {"running", Kind::kFlag},
};
const std::vector<Field> kHistoryFields{
    {"createdAt", Kind::kTime},
    {"glueRemark", Kind::kText},
    {"glueSource", Kind::kText},
};
const std::vector<Field> kWorkflowFields{
    {"description", Kind::kText},
    {"author", Kind::kText},
    {"alarmEmail", Kind::kText},
    {"scheduleType", Kind::kChoice, is_workflow_schedule, workflow_schedules},
    {"scheduleConf", Kind::kText},
    {"timezone", Kind::kText},
    {"calendar", Kind::kCalendarRef},
    {"calendarMode", Kind::kChoice, is_calendar_mode, calendar_modes},
    {"misfireStrategy", Kind::kChoice, is_enum<protocol::MisfireStrategy>, enum_list<protocol::MisfireStrategy>},
    {"overlap", Kind::kChoice, is_overlap, overlaps},
    {"maxParallel", Kind::kNonNegative},
    {"timeout", Kind::kNonNegative},
    {"onFailureRunning", Kind::kChoice, is_running_on_failure, running_on_failures},
    {"params", Kind::kParams},
    {"nodes", Kind::kNodes},
    {"running", Kind::kFlag},
};
const std::vector<Field> kParamFields{
    {"name", Kind::kText},
    {"default", Kind::kText},
    {"description", Kind::kText},
};
const std::vector<Field> kNodeFields{
    {"job", Kind::kJobRef},
    {"after", Kind::kNodeKeys},
    {"params", Kind::kText},
    {"onFailure", Kind::kChoice, is_node_failure, node_failures},
};
const std::vector<Field> kCalendarFields{
    {"name", Kind::kText},
    {"description", Kind::kText},
    {"timezone", Kind::kText},
    {"businessDays", Kind::kWeekdays},
    {"excludedDates", Kind::kDates},
    {"includedDates", Kind::kDates},
    {"excludedTimes", Kind::kTimes},
};
const std::vector<Field> kCalendarDateFields{
    {"date", Kind::kText},
    {"name", Kind::kText},
};
const std::vector<Field> kCalendarTimeFields{
    {"start", Kind::kText},
    {"end", Kind::kText},
};
const std::vector<Field> kUserFields{
    {"username", Kind::kText},
    {"role", Kind::kChoice, is_role, roles},
    {"groups", Kind::kTextList},
};

// A workflow node's key or a parameter's name (admin/model/workflow_graph.h's is_node_key): an
// ASCII letter, then letters, digits, '_' or '-', at most 64.
bool is_node_key(std::string_view key) {
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  if (key.empty() || key.size() > 64 || !letter(key.front())) return false;
  return std::all_of(key.begin(), key.end(),
                     [&](char c) { return letter(c) || (c >= '0' && c <= '9') || c == '_' || c == '-'; });
}

const Field* find_field(const std::vector<Field>& fields, std::string_view key) {
  auto it = std::find_if(fields.begin(), fields.end(), [&](const Field& f) { return f.key == key; });
  return it == fields.end() ? nullptr : &*it;
}

std::string key_list(const std::vector<Field>& fields) {
  std::string out;
  for (const auto& f : fields) {
    if (!out.empty()) out += ", ";
    out += f.key;
  }
  return out;
}

std::string pointer_token(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

// A key or value quoted for a message: printable ASCII as is, at most 80 characters.
std::string shown(std::string_view text) {
  std::string out = "'";
  for (char c : text.substr(0, 80)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  if (text.size() > 80) out += "...";
  return out + "'";
}

// ---- checking ------------------------------------------------------------------------

// Where a node is while checking: its JSON pointer (the YAML reader's locations are by pointer)
// and its path (what problems and the admin's errors name).
struct At {
  std::string pointer;
  std::string path;

  At key(std::string_view k) const {
    return {pointer + "/" + pointer_token(k), path.empty() ? std::string(k) : path + "." + std::string(k)};
  }
  At item(std::size_t index, std::string_view label) const {
    return {pointer + "/" + std::to_string(index), path + "[" + std::string(label) + "]"};
  }
};

class Checker {
 public:
  Checker(std::string file, const std::map<std::string, Location>* by_pointer, bool lenient,
          const ScriptReader* read_script)
      : file_(std::move(file)), by_pointer_(by_pointer), lenient_(lenient), read_script_(read_script) {}

  json document(const json& in) {
    const At at{"", ""};
    note(at);
    if (!in.is_object()) fail(at, "expected a map with the key groups (docs/jobs-as-code.md)");
    json out = json::object();
    for (const auto& [key, value] : in.items()) {
      const auto* field = find_field(kTopFields, key);
      const At here = at.key(key);
      if (field == nullptr) fail(here, "unknown key; expected one of " + key_list(kTopFields));
      if (value.is_null()) continue;
      note(here);
      if (key == "groups") {
        out[key] = groups(value, here);
      } else if (key == "calendars") {
        out[key] = calendars(value, here);
      } else if (key == "users") {
        out[key] = users(value, here);
      } else {
        out[key] = scalar(*field, value, here);
      }
    }
    if (!out.contains("groups")) fail(at, "groups: missing (a list of groups; it may be empty)");
    return out;
  }

  std::map<std::string, Location> take_locations() { return std::move(locations_); }

 private:
  [[noreturn]] void fail(const At& at, const std::string& message) {
    Problem problem{location_of(at), at.path, message};
    problem.location.file = file_;
    throw JobsFileError(std::move(problem));
  }

  Location location_of(const At& at) const {
    if (by_pointer_ == nullptr) return {};
    // The node's own, else the nearest enclosing node's.
    std::string pointer = at.pointer;
    while (true) {
      if (auto it = by_pointer_->find(pointer); it != by_pointer_->end()) return it->second;
      if (pointer.empty()) return {};
      pointer.erase(pointer.rfind('/'));
    }
  }

  void note(const At& at) {
    if (by_pointer_ == nullptr) return;
    if (auto it = by_pointer_->find(at.pointer); it != by_pointer_->end()) locations_[at.path] = it->second;
  }

  // The text of a string field: a string, or in a YAML file any scalar as written.
  std::string text(const json& value, const At& at) {
    if (value.is_string()) return value.get<std::string>();
    if (lenient_ && value.is_number_integer()) return std::to_string(value.get<std::int64_t>());
    if (lenient_ && value.is_boolean()) return value.get<bool>() ? "true" : "false";
    fail(at, std::string("expected a string, got ") + type_name(value));
  }

  static const char* type_name(const json& value) {
    if (value.is_object()) return "a map";
    if (value.is_array()) return "a list";
    if (value.is_boolean()) return "true/false";
    if (value.is_number()) return "a number";
    return value.type_name();
  }

  json scalar(const Field& field, const json& value, const At& at) {
    switch (field.kind) {
      case Kind::kText:
        return text(value, at);
      case Kind::kNonNegative:
      case Kind::kTime: {
        const auto max = field.kind == Kind::kTime ? std::numeric_limits<std::int64_t>::max()
                                                   : std::int64_t{std::numeric_limits<std::int32_t>::max()};
        if (!value.is_number_integer()) fail(at, std::string("expected a whole number, got ") + type_name(value));
        const bool fits = value.is_number_unsigned() ? value.get<std::uint64_t>() <= static_cast<std::uint64_t>(max)
                                                     : value.get<std::int64_t>() >= 0 && value.get<std::int64_t>() <= max;
        if (!fits) fail(at, "expected a whole number from 0 to " + std::to_string(max));
        return value.get<std::int64_t>();
      }
      case Kind::kRange: {
        if (!value.is_number_integer()) fail(at, std::string("expected a whole number, got ") + type_name(value));
        // An unsigned value beyond int64 is beyond every bound; any other is compared as int64.
        const bool fits = (!value.is_number_unsigned() ||
                           value.get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) &&
                          value.get<std::int64_t>() >= field.min && value.get<std::int64_t>() <= field.max;
        if (!fits) {
          fail(at, "expected a whole number from " + std::to_string(field.min) + " to " + std::to_string(field.max) + ", got " +
                       value.dump());
        }
        return value.get<std::int64_t>();
      }
      case Kind::kMultiplier:
        return multiplier(value, at);
      case Kind::kFlag:
        if (!value.is_boolean()) fail(at, std::string("expected true or false, got ") + type_name(value));
        return value;
      case Kind::kChoice: {
        auto chosen = text(value, at);
        if (!field.allowed(chosen)) fail(at, "unknown value " + shown(chosen) + ", expected one of " + field.choices());
        return chosen;
      }
      case Kind::kTextList: {
        json out = json::array();
        for (std::size_t i = 0; i < list(value, at).size(); ++i) {
          const At item = at.item(i, std::to_string(i));
          note(item);
          out.push_back(text(value[i], item));
        }
        return out;
      }
      case Kind::kJobRefs: {
        json out = json::array();
        std::set<std::string> seen;
        for (std::size_t i = 0; i < list(value, at).size(); ++i) {
          const At item = at.item(i, std::to_string(i));
          note(item);
          auto ref = job_ref(value[i], item);
          if (!seen.insert(ref).second) fail(item, shown(ref) + " is listed twice");
          out.push_back(ref);
        }
        return out;
      }
      case Kind::kJobRef:
        return job_ref(value, at);
      case Kind::kCalendarRef: {
        auto name = text(value, at);
        if (!is_calendar_name(name)) fail(at, "expected a calendar's name (of this file's calendars, or the server's), got " + shown(name));
        return name;
      }
      case Kind::kWeekdays: {
        json out = json::array();
        std::set<std::string> seen;
        for (std::size_t i = 0; i < list(value, at).size(); ++i) {
          const At item = at.item(i, std::to_string(i));
          note(item);
          auto day = text(value[i], item);
          if (std::find(kWeekdayNames.begin(), kWeekdayNames.end(), day) == kWeekdayNames.end()) {
            fail(item, "unknown weekday " + shown(day) + ", expected one of MONDAY, TUESDAY, WEDNESDAY, THURSDAY, FRIDAY, "
                       "SATURDAY, SUNDAY");
          }
          if (!seen.insert(day).second) fail(item, shown(day) + " is listed twice");
          out.push_back(day);
        }
        return out;
      }
      case Kind::kNodeKeys: {
        json out = json::array();
        std::set<std::string> seen;
        for (std::size_t i = 0; i < list(value, at).size(); ++i) {
          const At item = at.item(i, std::to_string(i));
          note(item);
          auto key = text(value[i], item);
          if (!is_node_key(key)) fail(item, "expected a node key of this workflow, got " + shown(key));
          if (!seen.insert(key).second) fail(item, shown(key) + " is listed twice");
          out.push_back(key);
        }
        return out;
      }
      case Kind::kScriptFile:
      case Kind::kHistory:
      case Kind::kParams:
      case Kind::kNodes:
      case Kind::kWorkflows:
      case Kind::kDates:
      case Kind::kTimes:
        break;
    }
    fail(at, "internal: unexpected field kind");
  }

  // A job named by a file: `name` in the same group, `appName/name` in another.
  std::string job_ref(const json& value, const At& at) {
    auto ref = text(value, at);
    const auto slash = ref.find('/');
    const bool ok = slash == std::string::npos ? is_job_name(ref)
                                               : is_app_name(std::string_view(ref).substr(0, slash)) &&
                                                     is_job_name(std::string_view(ref).substr(slash + 1));
    if (!ok) fail(at, "expected a job name, or appName/name for a job of another group, got " + shown(ref));
    return ref;
  }

  // A retry multiplier: a number from 1 to 10; in a YAML file also a decimal written plain (1.5),
  // which the reader keeps as text. A whole one is kept as an integer, so that it reads back alike
  // however it was written (3, 3.0).
  json multiplier(const json& value, const At& at) {
    double number = 0;
    if (value.is_number()) {
      number = value.get<double>();
    } else if (lenient_ && value.is_string()) {
      const auto& text = value.get_ref<const std::string&>();
      // DIGITS or DIGITS.DIGITS: no sign, exponent, hexadecimal, inf or nan.
      const bool digits = !text.empty() && text.size() <= kMaxMultiplierText && text.front() != '.' &&
                          text.back() != '.' && std::count(text.begin(), text.end(), '.') <= 1 &&
                          std::all_of(text.begin(), text.end(), [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
      const auto parsed = digits ? std::from_chars(text.data(), text.data() + text.size(), number) : std::from_chars_result{};
      if (!digits || parsed.ec != std::errc() || parsed.ptr != text.data() + text.size()) {
        fail(at, "expected a number from 1 to 10 (such as 2 or 1.5), got " + shown(text));
      }
    } else {
      fail(at, std::string("expected a number from 1 to 10, got ") + type_name(value));
    }
    if (!(number >= kMinMultiplier && number <= kMaxMultiplier)) {
      fail(at, "expected a number from 1 to 10, got " + shown(value.is_string() ? value.get<std::string>() : value.dump()));
    }
    if (number == std::floor(number)) return static_cast<std::int64_t>(number);
    return number;
  }

  const json& list(const json& value, const At& at) {
    if (!value.is_array()) fail(at, std::string("expected a list, got ") + type_name(value));
    return value;
  }

  // Reads an object's keys against `fields`, calling `special` for the fields of kinds scalar()
  // does not take; null values count as left out.
  template <class Special>
  json object(const json& value, const At& at, const std::vector<Field>& fields, const char* what, Special special) {
    if (!value.is_object()) fail(at, std::string("expected ") + what + " (a map), got " + type_name(value));
    json out = json::object();
    for (const auto& [key, item] : value.items()) {
      const At here = at.key(key);
      const auto* field = find_field(fields, key);
      if (field == nullptr) fail(here, "unknown key " + shown(key) + "; expected one of " + key_list(fields));
      if (item.is_null()) continue;
      note(here);
      if (!special(*field, item, here, out)) out[key] = scalar(*field, item, here);
    }
    return out;
  }

  json groups(const json& value, const At& at) {
    json out = json::array();
    std::set<std::string> app_names;
    for (std::size_t i = 0; i < list(value, at).size(); ++i) {
      const json& group = value[i];
      const At numbered = at.item(i, std::to_string(i));
      std::string label = std::to_string(i);
      if (group.is_object() && group.contains("appName") && group["appName"].is_string() &&
          is_app_name(group["appName"].get<std::string>())) {
        label = group["appName"].get<std::string>();
      }
      const At here{numbered.pointer, at.path + "[" + label + "]"};
      note(here);
      json checked = object(group, here, kGroupFields, "a group", [&](const Field& f, const json& item, const At& a, json& o) {
        if (f.key == "jobs") {
          o["jobs"] = jobs(item, a, label);
          return true;
        }
        if (f.kind == Kind::kWorkflows) {
          o["workflows"] = workflows(item, a);
          return true;
        }
        return false;
      });
      if (!checked.contains("appName")) fail(here, "appName: missing");
      const auto app_name = checked["appName"].get<std::string>();
      if (!is_app_name(app_name)) {
        fail(here.key("appName"), "expected 4-64 letters, digits, '.', '_' or '-', starting with a letter or digit, got " +
                                      shown(app_name));
      }
      if (!app_names.insert(app_name).second) fail(here.key("appName"), shown(app_name) + " is listed twice");
      out.push_back(std::move(checked));
    }
    return out;
  }

  json jobs(const json& value, const At& at, const std::string& /*app_name*/) {
    if (!value.is_object()) fail(at, std::string("expected a map of job names to jobs, got ") + type_name(value));
    json out = json::object();
    for (const auto& [name, job] : value.items()) {
      const At here{at.pointer + "/" + pointer_token(name), at.path + "[" + name + "]"};
      if (!is_job_name(name)) {
        fail(here, "a job's name is 1-100 lower-case letters, digits, '.', '_' or '-', starting with a letter or digit, got " +
                       shown(name));
      }
      note(here);
      out[name] = this->job(job, here);
    }
    return out;
  }

  json workflows(const json& value, const At& at) {
    if (!value.is_object()) fail(at, std::string("expected a map of workflow names to workflows, got ") + type_name(value));
    json out = json::object();
    for (const auto& [name, workflow] : value.items()) {
      const At here{at.pointer + "/" + pointer_token(name), at.path + "[" + name + "]"};
      if (!is_workflow_name(name)) {
        fail(here, "a workflow's name is 1-64 lower-case letters, digits, '.', '_' or '-', starting with a letter or digit, "
                   "got " + shown(name));
      }
      note(here);
      out[name] = this->workflow(workflow, here);
    }
    return out;
  }

  json workflow(const json& value, const At& at) {
    json out = object(value, at, kWorkflowFields, "a workflow", [&](const Field& f, const json& item, const At& a, json& o) {
      if (f.kind == Kind::kParams) {
        o["params"] = workflow_params(item, a);
        return true;
      }
      if (f.kind == Kind::kNodes) {
        o["nodes"] = nodes(item, a);
        return true;
      }
      return false;
    });
    if (!out.contains("nodes")) fail(at, "nodes: missing (the jobs the workflow runs, by node key)");
    calendar_use(out, at);
    // Each `after` names another node of the same workflow: the edges come from nothing else.
    const At nodes_at = at.key("nodes");
    for (const auto& [key, node] : out["nodes"].items()) {
      const At node_at{nodes_at.pointer + "/" + pointer_token(key), nodes_at.path + "[" + key + "]"};
      const auto after = node.find("after");
      if (after == node.end()) continue;
      for (std::size_t i = 0; i < after->size(); ++i) {
        const At item = node_at.key("after").item(i, std::to_string(i));
        const auto parent = (*after)[i].get<std::string>();
        if (parent == key) fail(item, "a node cannot run after itself");
        if (!out["nodes"].contains(parent)) fail(item, "no node " + shown(parent) + " in this workflow's nodes");
      }
    }
    return out;
  }

  json workflow_params(const json& value, const At& at) {
    json out = json::array();
    std::set<std::string> names;
    for (std::size_t i = 0; i < list(value, at).size(); ++i) {
      const At here = at.item(i, std::to_string(i));
      note(here);
      json param = object(value[i], here, kParamFields, "a parameter",
                          [](const Field&, const json&, const At&, json&) { return false; });
      if (!param.contains("name")) fail(here, "name: missing");
      const auto name = param["name"].get<std::string>();
      if (!is_node_key(name)) {
        fail(here.key("name"), "a parameter's name is a letter, then letters, digits, '_' or '-', at most 64, got " + shown(name));
      }
      if (!names.insert(name).second) fail(here.key("name"), shown(name) + " is declared twice");
      out.push_back(std::move(param));
    }
    return out;
  }

  json nodes(const json& value, const At& at) {
    if (!value.is_object()) fail(at, std::string("expected a map of node keys to nodes, got ") + type_name(value));
    if (value.empty()) fail(at, "a workflow runs at least one node");
    json out = json::object();
    for (const auto& [key, node] : value.items()) {
      const At here{at.pointer + "/" + pointer_token(key), at.path + "[" + key + "]"};
      if (!is_node_key(key)) fail(here, "a node's key is a letter, then letters, digits, '_' or '-', at most 64, got " + shown(key));
      note(here);
      json checked = object(node, here, kNodeFields, "a node", [](const Field&, const json&, const At&, json&) { return false; });
      if (!checked.contains("job")) fail(here, "job: missing (the job the node runs: name, or appName/name)");
      out[key] = std::move(checked);
    }
    return out;
  }

  json job(const json& value, const At& at) {
    std::optional<At> script_file_at;
    json out = object(value, at, kJobFields, "a job", [&](const Field& f, const json& item, const At& a, json& o) {
      if (f.kind == Kind::kHistory) {
        o[std::string(f.key)] = history(item, a);
        return true;
      }
      if (f.kind != Kind::kScriptFile) return false;
      if (read_script_ == nullptr || !*read_script_) {
        fail(a, "only the cronwheel command reads script files; put the script in glueSource");
      }
      o["scriptFile"] = text(item, a);
      script_file_at = a;
      return true;
    });
    if (!out.contains("jobDesc")) fail(at, "jobDesc: missing (every job has a description)");
    calendar_use(out, at);
    dst_policy(out, at);
    retry_policy(out, at);
    if (script_file_at) {
      if (out.contains("glueSource")) fail(*script_file_at, "give the script either inline (glueSource) or as scriptFile, not both");
      const auto path = out["scriptFile"].get<std::string>();
      std::string source;
      try {
        source = (*read_script_)(path);
      } catch (const std::exception& e) {
        fail(*script_file_at, "cannot read " + shown(path) + ": " + e.what());
      }
      script_bytes_ += source.size();
      if (script_bytes_ > kMaxDocumentBytes) {
        fail(*script_file_at, "the scripts come to more than " + std::to_string(kMaxDocumentBytes / (1024 * 1024)) + " MiB");
      }
      if (!utf8::is_valid(source)) fail(*script_file_at, shown(path) + " is not UTF-8 text");
      out.erase("scriptFile");
      out["glueSource"] = std::move(source);
      // Problems the admin finds in the source point at the scriptFile line.
      if (by_pointer_ != nullptr) locations_[at.key("glueSource").path] = location_of(*script_file_at);
    }
    return out;
  }

  json history(const json& value, const At& at) {
    json out = json::array();
    for (std::size_t i = 0; i < list(value, at).size(); ++i) {
      const At here = at.item(i, std::to_string(i));
      note(here);
      json version = object(value[i], here, kHistoryFields, "a script version",
                            [](const Field&, const json&, const At&, json&) { return false; });
      if (!version.contains("glueSource")) fail(here, "glueSource: missing");
      out.push_back(std::move(version));
    }
    return out;
  }

  // A job's or workflow's mode says how it goes by its calendar: none, no mode.
  void calendar_use(const json& checked, const At& at) {
    if (checked.contains("calendarMode") && !checked.contains("calendar")) {
      fail(at.key("calendarMode"), "goes with calendar (the calendar whose days it is about); without one, leave it out");
    }
  }

  // A DST policy other than the default is a CRON job's: only wall times can fall in a gap the
  // clocks jump over or happen twice when they go back.
  void dst_policy(const json& checked, const At& at) {
    const std::string type = checked.value("scheduleType", std::string("NONE"));
    if (type == "CRON") return;
    for (const auto& [key, default_value] : {std::pair<const char*, const char*>{"dstGap", "skip"}, {"dstRepeat", "once"}}) {
      if (!checked.contains(key) || checked.at(key) == default_value) continue;
      fail(at.key(key), "only for scheduleType CRON: a " + type + " schedule has no wall times for the clocks to skip or "
                        "repeat; leave it out");
    }
  }

  // A multiplier and a ceiling other than their defaults (2, none) are an exponential back-off's:
  // a fixed one waits retryInterval every time, so a file saying otherwise says what never happens.
  void retry_policy(const json& checked, const At& at) {
    if (checked.value("retryBackoff", std::string("fixed")) == "exponential") return;
    for (const auto& [key, default_value] : {std::pair<const char*, int>{"retryMultiplier", 2}, {"retryMaxInterval", 0}}) {
      if (!checked.contains(key) || checked.at(key) == default_value) continue;
      fail(at.key(key), "only with retryBackoff exponential: a fixed back-off waits retryInterval before every retry; "
                        "leave it out, or say retryBackoff: exponential");
    }
  }

  // The file's calendars (docs/jobs-as-code.md): a list, each named once, its dates and times
  // checked in shape (days that exist, the zone and the lists' bounds are the admin's).
  json calendars(const json& value, const At& at) {
    json out = json::array();
    std::set<std::string> names;
    for (std::size_t i = 0; i < list(value, at).size(); ++i) {
      const json& entry = value[i];
      std::string label = std::to_string(i);
      if (entry.is_object() && entry.contains("name") && entry["name"].is_string() &&
          is_calendar_name(entry["name"].get<std::string>())) {
        label = entry["name"].get<std::string>();
      }
      const At here{at.item(i, label).pointer, at.path + "[" + label + "]"};
      note(here);
      json checked = object(entry, here, kCalendarFields, "a calendar", [&](const Field& f, const json& item, const At& a, json& o) {
        if (f.kind == Kind::kDates) {
          o[std::string(f.key)] = calendar_dates(item, a);
          return true;
        }
        if (f.kind == Kind::kTimes) {
          o[std::string(f.key)] = calendar_times(item, a);
          return true;
        }
        return false;
      });
      if (!checked.contains("name")) fail(here, "name: missing (what jobs name the calendar by)");
      const auto name = checked["name"].get<std::string>();
      if (!is_calendar_name(name)) {
        fail(here.key("name"), "a calendar's name is 1-64 lower-case letters, digits, '.', '_' or '-', starting with a letter "
                               "or digit, got " + shown(name));
      }
      if (!names.insert(name).second) fail(here.key("name"), shown(name) + " is listed twice");
      // A day both excluded and included is one the rules cannot decide.
      if (checked.contains("excludedDates") && checked.contains("includedDates")) {
        std::set<std::string> excluded;
        for (const auto& d : checked["excludedDates"]) excluded.insert(d["date"].get<std::string>());
        const At included = here.key("includedDates");
        for (std::size_t d = 0; d < checked["includedDates"].size(); ++d) {
          const auto date = checked["includedDates"][d]["date"].get<std::string>();
          if (excluded.contains(date)) {
            fail(included.item(d, std::to_string(d)).key("date"), shown(date) + " is in excludedDates too; a day is one or the other");
          }
        }
      }
      out.push_back(std::move(checked));
    }
    return out;
  }

  json calendar_dates(const json& value, const At& at) {
    json out = json::array();
    std::set<std::string> seen;
    for (std::size_t i = 0; i < list(value, at).size(); ++i) {
      const At here = at.item(i, std::to_string(i));
      note(here);
      json date = object(value[i], here, kCalendarDateFields, "a date ({date, name})",
                         [](const Field&, const json&, const At&, json&) { return false; });
      if (!date.contains("date")) fail(here, "date: missing (YYYY-MM-DD, or --MM-DD for every year)");
      const auto text = date["date"].get<std::string>();
      if (!is_calendar_date(text)) {
        fail(here.key("date"), "expected YYYY-MM-DD, or --MM-DD for a date of every year, got " + shown(text));
      }
      if (!seen.insert(text).second) fail(here.key("date"), shown(text) + " is listed twice");
      out.push_back(std::move(date));
    }
    return out;
  }

  json calendar_times(const json& value, const At& at) {
    json out = json::array();
    for (std::size_t i = 0; i < list(value, at).size(); ++i) {
      const At here = at.item(i, std::to_string(i));
      note(here);
      json range = object(value[i], here, kCalendarTimeFields, "a time range ({start, end})",
                          [](const Field&, const json&, const At&, json&) { return false; });
      for (const char* end : {"start", "end"}) {
        if (!range.contains(end)) fail(here, std::string(end) + ": missing (HH:MM or HH:MM:SS)");
        const auto text = range[end].get<std::string>();
        if (!is_time_of_day(text)) {
          fail(here.key(end), "expected a time of day HH:MM or HH:MM:SS (00:00 to 23:59:59), got " + shown(text));
        }
      }
      out.push_back(std::move(range));
    }
    return out;
  }

  json users(const json& value, const At& at) {
    json out = json::array();
    std::set<std::string> names;
    for (std::size_t i = 0; i < list(value, at).size(); ++i) {
      const json& user = value[i];
      std::string label = std::to_string(i);
      if (user.is_object() && user.contains("username") && user["username"].is_string()) {
        label = user["username"].get<std::string>();
      }
      const At here{at.item(i, label).pointer, at.path + "[" + label + "]"};
      note(here);
      json checked = object(user, here, kUserFields, "a user", [](const Field&, const json&, const At&, json&) { return false; });
      if (!checked.contains("username") || checked["username"].get<std::string>().empty()) fail(here, "username: missing");
      if (!names.insert(checked["username"].get<std::string>()).second) {
        fail(here.key("username"), shown(checked["username"].get<std::string>()) + " is listed twice");
      }
      out.push_back(std::move(checked));
    }
    return out;
  }

  std::string file_;
  const std::map<std::string, Location>* by_pointer_;
  bool lenient_;
  const ScriptReader* read_script_;
  std::size_t script_bytes_ = 0;
  std::map<std::string, Location> locations_;
};

// ---- YAML to JSON ----------------------------------------------------------------------

bool is_plain_integer(const std::string& text) {
  std::size_t i = text.starts_with('-') ? 1 : 0;
  if (i >= text.size() || text.size() - i > 18) return false;
  if (text[i] == '0' && text.size() - i > 1) return false;  // 007 is text
  return std::all_of(text.begin() + static_cast<std::ptrdiff_t>(i), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

Location location_of(const YAML::Mark& mark, const std::string& file) {
  if (mark.is_null()) return {file, 0, 0};
  return {file, mark.line + 1, mark.column + 1};
}

// Reads a YAML document into JSON, generically (the checker knows the format): plain integers
// and true/false as such, every other scalar as a string, recording each node's location by
// its JSON pointer. Bounded in nodes and depth, so aliases cannot expand without bound.
class YamlReader {
 public:
  explicit YamlReader(std::string file) : file_(std::move(file)) {}

  json read(const YAML::Node& node, const std::string& pointer, const YAML::Mark& mark, int depth) {
    if (++nodes_ > kMaxNodes) fail(mark, pointer, "more than " + std::to_string(kMaxNodes) + " values");
    // What the document becomes in memory, aliases expanded: its texts and each node's path.
    count_bytes(pointer.size() + (node.IsScalar() ? node.Scalar().size() : 0), mark);
    if (depth > kMaxDepth) fail(mark, pointer, "nested more than " + std::to_string(kMaxDepth) + " levels deep");
    by_pointer_.emplace(pointer, location_of(mark, file_));
    switch (node.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        return nullptr;
      case YAML::NodeType::Scalar: {
        const auto& text = node.Scalar();
        if (!utf8::is_valid(text)) fail(node.Mark(), pointer, "not valid UTF-8");
        if (node.Tag() == "?") {  // plain: may be a number or a flag
          if (text == "true") return true;
          if (text == "false") return false;
          if (is_plain_integer(text)) return std::stoll(text);
        }
        return text;
      }
      case YAML::NodeType::Sequence: {
        json out = json::array();
        std::size_t index = 0;
        for (const auto& item : node) {
          out.push_back(read(item, pointer + "/" + std::to_string(index++), item.Mark(), depth + 1));
        }
        return out;
      }
      case YAML::NodeType::Map: {
        json out = json::object();
        for (const auto& entry : node) {
          const YAML::Node& key = entry.first;
          if (!key.IsScalar()) fail(key.Mark(), pointer, "a key must be plain text");
          const auto& name = key.Scalar();
          if (!utf8::is_valid(name)) fail(key.Mark(), pointer, "a key is not valid UTF-8");
          if (name.size() > kMaxKeyBytes) fail(key.Mark(), pointer, "a key longer than " + std::to_string(kMaxKeyBytes) + " bytes");
          const std::string child = pointer + "/" + pointer_token(name);
          if (out.contains(name)) fail(key.Mark(), child, "the key " + shown(name) + " appears twice");
          out[name] = read(entry.second, child, key.Mark(), depth + 1);
        }
        return out;
      }
    }
    return nullptr;
  }

  std::map<std::string, Location> take_locations() { return std::move(by_pointer_); }

 private:
  [[noreturn]] void fail(const YAML::Mark& mark, const std::string& pointer, const std::string& message) {
    (void)pointer;
    throw JobsFileError(Problem{location_of(mark, file_), "", message});
  }

  void count_bytes(std::size_t n, const YAML::Mark& mark) {
    bytes_ += n;
    if (bytes_ > kMaxExpandedBytes) {
      fail(mark, "", "more than " + std::to_string(kMaxExpandedBytes / (1024 * 1024)) + " MiB once its aliases are expanded");
    }
  }

  std::string file_;
  std::size_t nodes_ = 0;
  std::size_t bytes_ = 0;
  std::map<std::string, Location> by_pointer_;
};

// ---- JSON to YAML ----------------------------------------------------------------------

// A string that reads back as the same string when written plain: no YAML indicator, no word
// YAML reads as something else, nothing a number could be.
bool plain_safe(const std::string& text) {
  if (text.empty() || text.size() > 200) return false;
  const char first = text.front();
  const bool first_ok = (first >= 'a' && first <= 'z') || (first >= 'A' && first <= 'Z') || first == '_' || first == '/';
  if (!first_ok) return false;
  // Single spaces between words are plain text too (no ": " or " #" can form without ':' or '#').
  const bool rest_ok = std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
           c == '.' || c == '/' || c == '@' || c == ' ';
  });
  if (!rest_ok || text.back() == ' ' || text.find("  ") != std::string::npos) return false;
  std::string lower = text;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](char c) { return static_cast<char>(std::tolower(c)); });
  static const std::set<std::string> words{"true", "false", "null", "yes", "no", "on", "off", "y", "n", ".nan", ".inf"};
  return !words.contains(lower);
}

std::string double_quoted(const std::string& text) {
  static const char* hex = "0123456789ABCDEF";
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          out += "\\x";
          out += hex[c >> 4];
          out += hex[c & 0xf];
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

// Whether a multi-line text can be a literal block: printable (tabs allowed), no carriage
// returns, no line that is only blanks or ends in blanks beyond what the block keeps exactly.
bool literal_safe(const std::string& text) {
  if (text.find('\n') == std::string::npos) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) return false;
  }
  // A tab or a space starting the text would need more care than it is worth.
  if (text.front() == ' ' || text.front() == '\t') return false;
  // Unicode line breaks other than \n and a byte order mark read back differently.
  for (std::string_view odd : {"\xc2\x85", "\xe2\x80\xa8", "\xe2\x80\xa9", "\xef\xbb\xbf"}) {
    if (text.find(odd) != std::string::npos) return false;
  }
  return true;
}

class YamlWriter {
 public:
  // Writes a field itself when it wants to (answering true), as a group's jobs.
  using Special = std::function<bool(const Field&, const json&, int)>;

  std::string take() { return std::move(out_); }

  void document(const json& d) {
    if (d.contains("apiVersion")) out_ += "apiVersion: " + scalar(d["apiVersion"]) + "\n";
    if (d.contains("calendars")) {
      out_ += "calendars:";
      if (d["calendars"].empty()) {
        out_ += " []\n";
      } else {
        out_ += "\n";
        for (const auto& calendar : d["calendars"]) list_item(calendar, kCalendarFields, 2, kNothingSpecial);
      }
    }
    out_ += "groups:";
    if (d["groups"].empty()) {
      out_ += " []\n";
    } else {
      out_ += "\n";
      for (const auto& group : d["groups"]) {
        list_item(group, kGroupFields, 2, [&](const Field& f, const json& value, int indent) {
          if (f.key == "jobs") {
            jobs(value, indent);
            return true;
          }
          if (f.kind == Kind::kWorkflows) {
            workflows(value, indent);
            return true;
          }
          return false;
        });
      }
    }
    if (d.contains("users")) {
      out_ += "users:";
      if (d["users"].empty()) {
        out_ += " []\n";
      } else {
        out_ += "\n";
        for (const auto& user : d["users"]) list_item(user, kUserFields, 2, kNothingSpecial);
      }
    }
  }

 private:
  static std::string scalar(const json& value) {
    if (value.is_string()) {
      const auto& text = value.get_ref<const std::string&>();
      return plain_safe(text) ? text : double_quoted(text);
    }
    return value.dump();
  }

  // `key: value` at `indent`, as the value's shape wants.
  void entry(const Field& field, const json& value, int indent, const Special& special) {
    const std::string pad(static_cast<std::size_t>(indent), ' ');
    out_ += pad + std::string(field.key) + ":";
    if (special(field, value, indent)) return;
    if (value.is_array() && (field.kind == Kind::kHistory || field.kind == Kind::kParams)) {
      if (value.empty()) {
        out_ += " []\n";
        return;
      }
      out_ += "\n";
      for (const auto& item : value) {
        list_item(item, field.kind == Kind::kHistory ? kHistoryFields : kParamFields, indent + 2, kNothingSpecial);
      }
      return;
    }
    if (value.is_array() && (field.kind == Kind::kDates || field.kind == Kind::kTimes)) {
      // A calendar's dates and times: one flow map a line, as a holiday list reads.
      if (value.empty()) {
        out_ += " []\n";
        return;
      }
      out_ += "\n";
      const auto& fields = field.kind == Kind::kDates ? kCalendarDateFields : kCalendarTimeFields;
      for (const auto& item : value) {
        out_ += std::string(static_cast<std::size_t>(indent + 2), ' ') + "- {";
        bool first = true;
        for (const auto& f : fields) {
          auto it = item.find(std::string(f.key));
          if (it == item.end()) continue;
          out_ += (first ? "" : ", ") + std::string(f.key) + ": " + scalar(*it);
          first = false;
        }
        out_ += "}\n";
      }
      return;
    }
    if (value.is_array()) {
      out_ += " [";
      for (std::size_t i = 0; i < value.size(); ++i) out_ += (i ? ", " : "") + scalar(value[i]);
      out_ += "]\n";
      return;
    }
    if (value.is_string() && literal_safe(value.get_ref<const std::string&>())) {
      literal(value.get_ref<const std::string&>(), indent + 2);
      return;
    }
    out_ += " " + scalar(value) + "\n";
  }

  // A literal block: explicit indentation, and the chomping that keeps the text's last line
  // breaks exactly (strip: none, clip: one, keep: more).
  void literal(const std::string& text, int indent) {
    std::size_t trailing = 0;
    while (trailing < text.size() && text[text.size() - 1 - trailing] == '\n') ++trailing;
    out_ += " |2";
    out_ += trailing == 0 ? "-" : trailing == 1 ? "" : "+";
    out_ += "\n";
    const std::string pad(static_cast<std::size_t>(indent), ' ');
    std::size_t start = 0;
    const std::size_t body_end = text.size() - trailing;
    while (start < body_end) {
      auto end = text.find('\n', start);
      if (end == std::string::npos || end > body_end) end = body_end;
      const auto line = text.substr(start, end - start);
      out_ += line.empty() ? "\n" : pad + line + "\n";
      start = end + 1;
    }
    for (std::size_t i = 1; i < trailing; ++i) out_ += "\n";
  }

  void list_item(const json& object, const std::vector<Field>& fields, int indent, const Special& special) {
    bool first = true;
    for (const auto& field : fields) {
      auto it = object.find(std::string(field.key));
      if (it == object.end()) continue;
      if (first) {
        out_ += std::string(static_cast<std::size_t>(indent), ' ') + "- ";
        // The first entry follows the dash; the rest line up with it.
        const auto before = out_.size();
        entry(field, *it, indent + 2, special);
        out_.erase(before, static_cast<std::size_t>(indent) + 2);
        first = false;
      } else {
        entry(field, *it, indent + 2, special);
      }
    }
    if (first) out_ += std::string(static_cast<std::size_t>(indent), ' ') + "- {}\n";
  }

  // A map of names to objects of `fields`, one entry a line block (`special` as in entry()).
  void named_map(const json& value, int indent, const std::vector<Field>& fields, const Special& special) {
    if (value.empty()) {
      out_ += " {}\n";
      return;
    }
    out_ += "\n";
    const std::string pad(static_cast<std::size_t>(indent + 2), ' ');
    for (const auto& [name, object] : value.items()) {
      out_ += pad + scalar(json(name)) + ":";
      if (object.empty()) {
        out_ += " {}\n";
        continue;
      }
      out_ += "\n";
      for (const auto& field : fields) {
        if (auto it = object.find(std::string(field.key)); it != object.end()) {
          entry(field, *it, indent + 4, special);
        }
      }
    }
  }

  void jobs(const json& value, int indent) { named_map(value, indent, kJobFields, kNothingSpecial); }

  void workflows(const json& value, int indent) {
    named_map(value, indent, kWorkflowFields, [&](const Field& f, const json& nodes, int at) {
      if (f.kind != Kind::kNodes) return false;
      named_map(nodes, at, kNodeFields, kNothingSpecial);
      return true;
    });
  }

  static inline const Special kNothingSpecial = [](const Field&, const json&, int) { return false; };
  std::string out_;
};

}  // namespace

std::string to_string(const Problem& problem) {
  std::string out;
  if (!problem.location.file.empty()) out += problem.location.file + ":";
  if (problem.location.line > 0) {
    out += std::to_string(problem.location.line) + ":";
    if (problem.location.column > 0) out += std::to_string(problem.location.column) + ":";
  }
  if (!out.empty()) out += " ";
  if (!problem.path.empty()) out += problem.path + ": ";
  return out + problem.message;
}

JobsFileError::JobsFileError(Problem problem) : std::runtime_error(to_string(problem)), problem_(std::move(problem)) {}

ParsedFile parse_yaml(std::string_view text, const std::string& file, const ScriptReader& read_script) {
  if (text.size() > kMaxDocumentBytes) {
    throw JobsFileError(Problem{{file, 0, 0}, "", "larger than " + std::to_string(kMaxDocumentBytes / (1024 * 1024)) + " MiB"});
  }
  // One document: a marker (--- or ...) after the first document's content starts another.
  // Looked for in the text, not with YAML::LoadAll, which loops without end on some malformed
  // texts (",0](").
  {
    bool content = false;
    int line_number = 0;
    std::size_t start = 0;
    while (start <= text.size()) {
      auto end = text.find('\n', start);
      if (end == std::string_view::npos) end = text.size();
      const auto line = text.substr(start, end - start);
      ++line_number;
      const bool marker = (line.starts_with("---") || line.starts_with("...")) &&
                          (line.size() == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '\r');
      if (marker && content) {
        throw JobsFileError(Problem{{file, line_number, 1}, "", "one document per file (remove this --- or ... and what follows)"});
      }
      const auto first = line.find_first_not_of(" \t\r");
      if (!marker && first != std::string_view::npos && line[first] != '#' && line[first] != '%') content = true;
      start = end + 1;
    }
  }
  YAML::Node document;
  try {
    document = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    throw JobsFileError(Problem{location_of(e.mark, file), "", e.msg});
  }
  YamlReader reader(file);
  const json raw = reader.read(document, "", YAML::Mark(), 0);
  const auto by_pointer = reader.take_locations();
  Checker checker(file, &by_pointer, /*lenient=*/true, &read_script);
  ParsedFile parsed;
  parsed.document = checker.document(raw);
  parsed.locations = checker.take_locations();
  return parsed;
}

void check_json(const nlohmann::json& document) {
  Checker checker("", nullptr, /*lenient=*/false, nullptr);
  (void)checker.document(document);
}

ParsedFile merge(const std::vector<ParsedFile>& files) {
  ParsedFile merged;
  merged.document = json{{"groups", json::array()}};
  std::map<std::string, std::string> group_files;
  std::map<std::string, std::string> user_files;
  // A calendar by name: the file that gave it first, and its description there.
  std::map<std::string, std::pair<std::string, const json*>> calendar_files;
  auto file_of = [](const ParsedFile& f, const std::string& path) {
    auto it = f.locations.find(path);
    return it == f.locations.end() ? Location{} : it->second;
  };
  for (const auto& file : files) {
    const auto& d = file.document;
    if (d.contains("apiVersion")) merged.document["apiVersion"] = d["apiVersion"];
    for (const auto& group : d.value("groups", json::array())) {
      const auto app_name = group["appName"].get<std::string>();
      const std::string path = "groups[" + app_name + "]";
      const auto where = file_of(file, path);
      if (auto [it, fresh] = group_files.emplace(app_name, where.file); !fresh) {
        throw JobsFileError(Problem{where, path, "the group is in " + it->second + " too; a group belongs in one file"});
      }
      merged.document["groups"].push_back(group);
    }
    // Files of several groups may each carry the calendars their jobs name (as `export --group`
    // writes them): the same calendar twice is one; two different ones of one name are a conflict.
    if (const auto calendars = d.find("calendars"); calendars != d.end()) {
      if (!merged.document.contains("calendars")) merged.document["calendars"] = json::array();
      for (const auto& calendar : *calendars) {
        const auto name = calendar["name"].get<std::string>();
        const std::string path = "calendars[" + name + "]";
        const auto where = file_of(file, path);
        auto [it, fresh] = calendar_files.emplace(name, std::pair{where.file, &calendar});
        if (fresh) {
          merged.document["calendars"].push_back(calendar);
        } else if (*it->second.second != calendar) {
          throw JobsFileError(Problem{where, path, "the calendar is in " + it->second.first +
                                                       " too, described otherwise; give it once, or the same in both"});
        }
      }
    }
    for (const auto& user : d.value("users", json::array())) {
      const auto username = user["username"].get<std::string>();
      const std::string path = "users[" + username + "]";
      const auto where = file_of(file, path);
      if (auto [it, fresh] = user_files.emplace(username, where.file); !fresh) {
        throw JobsFileError(Problem{where, path, "the user is in " + it->second + " too; a user belongs in one file"});
      }
      merged.document["users"].push_back(user);
    }
    merged.locations.insert(file.locations.begin(), file.locations.end());
  }
  return merged;
}

std::optional<Location> locate(const ParsedFile& file, std::string_view path) {
  // Keys never hold '.', '[' or ']', names in brackets may hold '.': strip the last segment.
  std::string at(path);
  while (true) {
    if (auto it = file.locations.find(at); it != file.locations.end()) return it->second;
    if (at.empty()) return std::nullopt;
    if (at.back() == ']' && at.rfind('[') != std::string::npos) {
      at.erase(at.rfind('['));
    } else if (auto dot = at.rfind('.'); dot != std::string::npos) {
      at.erase(dot);
    } else {
      at.clear();
    }
  }
}

std::string to_yaml(const nlohmann::json& document) {
  YamlWriter writer;
  writer.document(document);
  return writer.take();
}

bool is_job_name(std::string_view name) noexcept {
  if (name.empty() || name.size() > 100) return false;
  auto lower_or_digit = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  return lower_or_digit(name.front()) &&
         std::all_of(name.begin(), name.end(), [&](char c) { return lower_or_digit(c) || c == '.' || c == '_' || c == '-'; });
}

bool is_workflow_name(std::string_view name) noexcept { return name.size() <= 64 && is_job_name(name); }

bool is_calendar_name(std::string_view name) noexcept { return is_workflow_name(name); }

bool is_app_name(std::string_view name) noexcept {
  if (name.size() < 4 || name.size() > 64) return false;
  auto alnum = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  return alnum(name.front()) &&
         std::all_of(name.begin(), name.end(), [&](char c) { return alnum(c) || c == '.' || c == '_' || c == '-'; });
}

}  // namespace cronwheel::common::jobs_file
