#include "admin/api/apply_planner.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "admin/api/api_errors.h"
#include "admin/api/auth_api.h"
#include "admin/api/field_checks.h"
#include "admin/api/job_validation.h"
#include "admin/model/calendar_dates.h"
#include "admin/model/calendar_json.h"
#include "admin/model/child_jobs.h"
#include "admin/model/record_json.h"
#include "admin/model/scan.h"
#include "admin/model/schedule.h"
#include "admin/model/slots.h"
#include "admin/model/workflow_graph.h"
#include "admin/model/workflow_json.h"

namespace cronwheel::admin {

namespace {

using json = nlohmann::json;

// The job fields a file sets, in the API's names, compared one by one.
const std::vector<std::string>& compared_fields() {
  static const std::vector<std::string> fields{
      "jobDesc",         "author",        "alarmEmail",            "scheduleType",          "scheduleConf",
      "timezone",        "misfireStrategy", "executorRouteStrategy", "executorHandler",     "executorParam",
      "executorBlockStrategy", "executorTimeout", "executorFailRetryCount", "retryInterval", "retryBackoff",
      "retryMultiplier", "retryMaxInterval", "retryJitter", "maxConcurrent", "priority", "glueType",
      "glueSource",      "glueRemark"};
  return fields;
}

// Every key of the comparable form, in the order changes are reported: the schedule's DST
// policy and calendar after its zone.
const std::vector<std::string>& report_order() {
  static const std::vector<std::string> keys = [] {
    auto all = compared_fields();
    all.insert(std::find(all.begin(), all.end(), "timezone") + 1, {"dstGap", "dstRepeat", "calendar", "calendarMode"});
    all.insert(all.end(), {"childJobs", "alarmChannels", "running"});
    return all;
  }();
  return keys;
}

// Keys of a file's job that are not fields of POST jobs (a calendar is by name there, by id in
// the API).
const std::set<std::string>& file_only_keys() {
  static const std::set<std::string> keys{"glueHistory", "childJobs", "alarmChannels", "running", "calendar",
                                          "calendarMode"};
  return keys;
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

std::string upper(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return text;
}

// A job's or workflow's calendarMode as files write it ("skip", "only"), and back.
std::string mode_in_file(common::CalendarMode mode) { return lower(std::string(to_string(mode))); }
common::CalendarMode mode_of(const json& entry) {
  return entry.value("calendarMode", std::string("skip")) == "only" ? common::CalendarMode::kOnly
                                                                     : common::CalendarMode::kSkip;
}

constexpr std::size_t kMaxGroupTitle = 64;
constexpr std::size_t kMaxAddresses = 1000;

std::string ref_text(const JobRef& ref) { return ref.app_name + "/" + ref.name; }

// The ref as a file writes it, seen from a job of `app_name`.
std::string ref_in_file(const JobRef& ref, const std::string& app_name) {
  return ref.app_name == app_name ? ref.name : ref_text(ref);
}

JobRef parse_ref(const std::string& text, const std::string& app_name) {
  const auto slash = text.find('/');
  if (slash == std::string::npos) return {app_name, text};
  return {text.substr(0, slash), text.substr(slash + 1)};
}

// Rethrows an API error of one job's or group's field under its path in the file.
[[noreturn]] void rethrow_at(const std::string& path, const common::http::HttpError& e) {
  const auto& error = e.info();
  std::string field = error.field.empty() ? path : path + "." + error.field;
  throw common::http::HttpError(
      common::http::ErrorInfo{error.status, error.code, path + "." + error.message, field, error.retry_after_seconds});
}

json change(const std::string& field, const json& from, const json& to) {
  json c{{"field", field}};
  if (!from.is_null()) c["from"] = from;
  if (!to.is_null()) c["to"] = to;
  return c;
}

struct Index {
  std::map<std::string, const Group*> groups_by_app;
  std::map<std::int64_t, const Group*> groups_by_id;
  std::map<std::int64_t, const JobIdentity*> identities;
  std::map<JobRef, const JobIdentity*> by_ref;
  std::map<std::int64_t, const Job*> jobs;  // the whole jobs the snapshot has
  std::map<std::int64_t, std::vector<std::string>> channels_of_job;  // job id → channel names, sorted
  std::map<std::string, const AlarmChannel*> channels_by_name;
  std::map<std::string, const Calendar*> calendars_by_name;
  std::map<std::int64_t, const Calendar*> calendars_by_id;

  explicit Index(const JobsSnapshot& s) {
    for (const auto& g : s.groups) {
      groups_by_app[g.app_name] = &g;
      groups_by_id[g.id] = &g;
    }
    for (const auto& i : s.identities) {
      identities[i.id] = &i;
      if (auto g = groups_by_id.find(i.job_group); g != groups_by_id.end()) by_ref[{g->second->app_name, i.name}] = &i;
    }
    for (const auto& j : s.jobs) jobs[j.id] = &j;
    for (const auto& c : s.channels) {
      channels_by_name[c.name] = &c;
      for (auto id : c.jobs) channels_of_job[id].push_back(c.name);
    }
    for (auto& [id, names] : channels_of_job) std::sort(names.begin(), names.end());
    for (const auto& c : s.calendars) {
      calendars_by_name[c.name] = &c;
      calendars_by_id[c.id] = &c;
    }
  }

  // The name a file gives the calendar `id` names (null for none).
  json calendar_name(std::int64_t id) const {
    if (id == 0) return nullptr;
    auto it = calendars_by_id.find(id);
    if (it == calendars_by_id.end()) throw std::logic_error("snapshot without calendar " + std::to_string(id));
    return it->second->name;
  }

  std::optional<JobRef> ref_of(std::int64_t id) const {
    auto i = identities.find(id);
    if (i == identities.end()) return std::nullopt;
    auto g = groups_by_id.find(i->second->job_group);
    if (g == groups_by_id.end()) return std::nullopt;
    return JobRef{g->second->app_name, i->second->name};
  }

  // A job's children as the file would name them (ids that no longer exist left out).
  json children_in_file(const Job& job, const std::string& app_name) const {
    json out = json::array();
    for (auto id : job.child_job_ids) {
      if (auto ref = ref_of(id)) out.push_back(ref_in_file(*ref, app_name));
    }
    return out;
  }

  json channels_in_file(std::int64_t job_id) const {
    auto it = channels_of_job.find(job_id);
    return it == channels_of_job.end() ? json::array() : json(it->second);
  }
};

// A file's job as the Job POST jobs would create (group and name set), checked.
Job read_file_job(const json& entry, const std::string& name, std::int64_t group_id, const std::string& path) {
  json body = json::object();
  for (const auto& [key, value] : entry.items()) {
    if (file_only_keys().contains(key)) continue;
    // The DST policy and the back-off in the API's spelling: "fire_after" is FIRE_AFTER.
    const bool spelled_lower = key == "dstGap" || key == "dstRepeat" || key == "retryBackoff";
    body[key] = spelled_lower && value.is_string() ? json(upper(value.get<std::string>())) : value;
  }
  body["jobGroup"] = group_id;
  body["name"] = name;
  try {
    Job job = read_job_body(body.dump(), Job{}, JobBodyKind::kCreate);
    validate_job(job);
    job.calendar.mode = mode_of(entry);
    return job;
  } catch (const common::http::HttpError& e) {
    rethrow_at(path, e);
  }
}

// A retry multiplier as files write it: a whole one as an integer (3, not 3.0).
json multiplier_in_file(double multiplier) {
  if (multiplier == std::floor(multiplier) && multiplier >= 1 && multiplier <= 10) return static_cast<std::int64_t>(multiplier);
  return multiplier;
}

// The file's view of a job, to compare: the compared fields, its DST policy, its calendar (by
// name, null for none) and mode, children, channels, running. Under a fixed back-off a job has no
// multiplier or ceiling (null): what the store keeps of them for when it is exponential again (the
// console keeps them so) is not the file's to compare, nor to write.
json comparable(const Job& job, const json& children, const json& channels, const json& calendar) {
  const json all = to_json(job);
  json out = json::object();
  for (const auto& field : compared_fields()) out[field] = all.at(field);
  out["retryBackoff"] = lower(std::string(to_string(job.retry.backoff)));
  if (job.retry.backoff == RetryBackoff::kExponential) {
    out["retryMultiplier"] = multiplier_in_file(job.retry.multiplier);
  } else {
    out["retryMultiplier"] = nullptr;
    out["retryMaxInterval"] = nullptr;
  }
  out["dstGap"] = lower(std::string(common::dst_gap_name(job.dst.gap)));
  out["dstRepeat"] = lower(std::string(common::dst_repeat_name(job.dst.repeat)));
  out["calendar"] = calendar;
  out["calendarMode"] = mode_in_file(job.calendar.mode);
  out["childJobs"] = children;
  json sorted = channels;
  std::sort(sorted.begin(), sorted.end());
  out["alarmChannels"] = sorted;
  out["running"] = job.trigger_status == 1;
  return out;
}

const json& defaults() {
  static const json d = comparable(Job{}, json::array(), json::array(), nullptr);
  return d;
}

// Whether a comparable job's `field` is what a file leaving it out says: a new job's, or, under an
// exponential back-off, its default multiplier (2) and ceiling (none).
bool is_default(const std::string& field, const json& value) {
  if (value == defaults().at(field)) return true;
  return (field == "retryMultiplier" && value == 2) || (field == "retryMaxInterval" && value == 0);
}

// The users of the file (admins only), onto `plan`; answers their report.
template <class Count>
json plan_users(const json& document, const JobsSnapshot& snapshot, const Index& index, const Principal& who,
                ApplyPlan& plan, Count& count) {
  json report = json::array();
  if (!document.contains("users")) return report;
  if (!who.user.is_admin()) throw forbidden("users: creating and changing users needs the admin role");
  std::set<std::string> file_groups;
  for (const auto& group : document.at("groups")) file_groups.insert(group.at("appName").get<std::string>());
  std::map<std::string, const User*> by_name;
  for (const auto& user : snapshot.users) by_name[lower(user.username)] = &user;
  std::map<std::int64_t, std::string> roles;  // after the plan
  for (const auto& user : snapshot.users) roles[user.id] = user.role;

  for (const auto& entry : document.at("users")) {
    const auto username = entry.at("username").get<std::string>();
    const std::string path = "users[" + username + "]";
    if (!is_valid_username(username)) {
      throw invalid(path + ".username", path + ".username: 1 to 64 characters of letters, digits and . _ @ -");
    }
    PlannedUser planned;
    planned.user.role = entry.value("role", std::string("normal"));
    auto names = entry.value("groups", std::vector<std::string>{});
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (!index.groups_by_app.contains(names[i]) && !file_groups.contains(names[i])) {
        throw invalid(path + ".groups", path + ".groups: no group is named '" + truncate_chars(names[i], 80) + "'");
      }
    }
    planned.group_names = names;
    json user_report{{"username", username}, {"changes", json::array()}};
    auto found = by_name.find(lower(username));
    if (found == by_name.end()) {
      planned.user.username = username;
      user_report["action"] = "create";
      user_report["changes"].push_back(change("role", nullptr, planned.user.role));
      user_report["changes"].push_back(change("groups", nullptr, names));
      user_report["changes"].push_back(change("password", nullptr, "not set: cannot log in until an admin sets one"));
      count("create");
    } else {
      const User& current = *found->second;
      planned.user = current;
      planned.user.role = entry.value("role", std::string("normal"));
      std::vector<std::string> current_names;
      for (auto id : current.groups) {
        if (auto g = index.groups_by_id.find(id); g != index.groups_by_id.end()) current_names.push_back(g->second->app_name);
      }
      std::sort(current_names.begin(), current_names.end());
      user_report["id"] = current.id;
      if (planned.user.role != current.role) {
        if (current.id == who.user.id) {
          throw invalid(path + ".role", path + ".role: you cannot change your own role; another admin can");
        }
        user_report["changes"].push_back(change("role", current.role, planned.user.role));
        roles[current.id] = planned.user.role;
      }
      if (names != current_names) user_report["changes"].push_back(change("groups", current_names, names));
      user_report["action"] = user_report["changes"].empty() ? "unchanged" : "update";
      count(user_report["action"].get<std::string>());
      if (user_report["changes"].empty()) {
        report.push_back(std::move(user_report));
        continue;
      }
    }
    plan.users.push_back(std::move(planned));
    report.push_back(std::move(user_report));
  }
  const bool new_admin = std::any_of(plan.users.begin(), plan.users.end(),
                                     [](const PlannedUser& u) { return u.user.id == 0 && u.user.role == "admin"; });
  const bool an_admin_left =
      new_admin || std::any_of(roles.begin(), roles.end(), [](const auto& r) { return r.second == "admin"; });
  if (!an_admin_left) throw conflict("users: the file would leave no admin", "users");
  return report;
}

// ---- calendars ---------------------------------------------------------------------------

// As the calendars API takes them (admin/api/calendars_api.cpp; the columns' widths).
constexpr std::size_t kMaxFileCalendarDescription = 255;
constexpr std::size_t kMaxFileCalendarZone = 64;
constexpr std::size_t kMaxFileDateName = 200;

// A date as files write it (YYYY-MM-DD, or --MM-DD for every year; its shape checked by
// common::jobs_file) as a day; whether it exists is BusinessCalendar::make's to say.
common::CalendarDay day_of(const std::string& text) {
  if (text.starts_with("--")) return {0, std::stoi(text.substr(2, 2)), std::stoi(text.substr(5, 2)), ""};
  return {std::stoi(text.substr(0, 4)), std::stoi(text.substr(5, 2)), std::stoi(text.substr(8, 2)), ""};
}

// HH:MM or HH:MM:SS (checked by common::jobs_file) as seconds since midnight.
int seconds_of(const std::string& text) {
  return std::stoi(text.substr(0, 2)) * 3600 + std::stoi(text.substr(3, 2)) * 60 +
         (text.size() == 8 ? std::stoi(text.substr(6, 2)) : 0);
}

// A file's calendar as the Calendar the API would read: its texts checked as the API checks
// them, its dates in the file's order (excluded, then included, so the index in a CalendarError
// is the index in the file's list), without sources. Its rules are BusinessCalendar::make's.
Calendar read_file_calendar(const json& entry, const std::string& path) {
  Calendar c;
  c.name = entry.at("name").get<std::string>();
  try {
    c.description = trimmed(entry.value("description", std::string()));
    check_text("description", c.description, kMaxFileCalendarDescription, false);
    c.time_zone = trimmed(entry.value("timezone", std::string("UTC")));
    check_text("timezone", c.time_zone, kMaxFileCalendarZone, true);
    if (auto days = entry.find("businessDays"); days != entry.end()) {
      std::array<bool, 7> business{};
      for (const auto& day : *days) {
        for (int i = 0; i < 7; ++i) {
          if (day == weekday_name(i)) business[static_cast<std::size_t>(i)] = true;
        }
      }
      c.business_days = business;
    }
    for (const char* list : {"excludedDates", "includedDates"}) {
      const json dates = entry.value(list, json::array());
      for (std::size_t i = 0; i < dates.size(); ++i) {
        CalendarDate date;
        date.included = std::string_view(list) == "includedDates";
        date.day = day_of(dates[i].at("date").get<std::string>());
        date.day.name = trimmed(dates[i].value("name", std::string()));
        check_text(std::string(list) + "[" + std::to_string(i) + "].name", date.day.name, kMaxFileDateName, false);
        c.dates.push_back(std::move(date));
      }
    }
    for (const auto& range : entry.value("excludedTimes", json::array())) {
      c.excluded_times.push_back({seconds_of(range.at("start").get<std::string>()), seconds_of(range.at("end").get<std::string>())});
    }
  } catch (const common::http::HttpError& e) {
    rethrow_at(path, e);
  }
  return c;
}

// A calendar whole, as a file would write it: every key, its dates in the stored order without
// their sources, its times as HH:MM:SS. What a plan compares (so a time given as HH:MM is the
// same as HH:MM:00, and the order dates are listed in does not matter).
json calendar_whole(const Calendar& c) {
  json business = nullptr;
  if (c.business_days) {
    business = json::array();
    for (int i = 0; i < 7; ++i) {
      if ((*c.business_days)[static_cast<std::size_t>(i)]) business.push_back(weekday_name(i));
    }
  }
  json excluded = json::array();
  json included = json::array();
  for (const auto& d : c.dates) (d.included ? included : excluded).push_back(json{{"date", date_text(d.day)}, {"name", d.day.name}});
  json times = json::array();
  for (const auto& t : c.excluded_times) {
    times.push_back(json{{"start", time_of_day_text(t.start_s)}, {"end", time_of_day_text(t.end_s)}});
  }
  return json{{"name", c.name},           {"description", c.description},  {"timezone", c.time_zone},
              {"businessDays", business}, {"excludedDates", excluded},     {"includedDates", included},
              {"excludedTimes", times}};
}

// What an export writes of a whole calendar: the keys that are not their defaults.
json calendar_in_file(const json& whole) {
  json out{{"name", whole.at("name")}};
  if (whole.at("description") != "") out["description"] = whole.at("description");
  if (whole.at("timezone") != "UTC") out["timezone"] = whole.at("timezone");
  if (!whole.at("businessDays").is_null()) out["businessDays"] = whole.at("businessDays");
  for (const char* list : {"excludedDates", "includedDates"}) {
    if (whole.at(list).empty()) continue;
    json dates = json::array();
    for (const auto& d : whole.at(list)) {
      json date{{"date", d.at("date")}};
      if (d.at("name") != "") date["name"] = d.at("name");
      dates.push_back(std::move(date));
    }
    out[list] = std::move(dates);
  }
  if (!whole.at("excludedTimes").empty()) out["excludedTimes"] = whole.at("excludedTimes");
  return out;
}

// Whether two whole calendars decide fires alike: the zone, the weekdays, the days (names aside)
// and the times.
bool same_rules(const json& a, const json& b) {
  auto days = [](const json& whole, const char* list) {
    std::vector<std::string> out;
    for (const auto& d : whole.at(list)) out.push_back(d.at("date").get<std::string>());
    return out;
  };
  return a.at("timezone") == b.at("timezone") && a.at("businessDays") == b.at("businessDays") &&
         days(a, "excludedDates") == days(b, "excludedDates") && days(a, "includedDates") == days(b, "includedDates") &&
         a.at("excludedTimes") == b.at("excludedTimes");
}

std::string range_text(const json& range) {
  return range.at("start").get<std::string>() + "-" + range.at("end").get<std::string>();
}

// The changes from `have` to `want` (whole calendars; `have` null for one created): for a new
// calendar its fields and how many dates it has, for a changed one each field and each date that
// differs, as `excludedDates[2026-10-01]` from its name to its name (absent where there is none).
json calendar_changes(const json& have, const json& want) {
  json changes = json::array();
  auto weekdays = [](const json& days) { return days.is_null() ? json("every day") : days; };
  auto times = [](const json& whole) {
    json out = json::array();
    for (const auto& t : whole.at("excludedTimes")) out.push_back(range_text(t));
    return out;
  };
  if (have.is_null()) {
    if (want.at("description") != "") changes.push_back(change("description", nullptr, want.at("description")));
    changes.push_back(change("timezone", nullptr, want.at("timezone")));
    changes.push_back(change("businessDays", nullptr, weekdays(want.at("businessDays"))));
    for (const char* list : {"excludedDates", "includedDates"}) {
      if (!want.at(list).empty()) changes.push_back(change(list, nullptr, want.at(list).size()));
    }
    if (!want.at("excludedTimes").empty()) changes.push_back(change("excludedTimes", nullptr, times(want)));
    return changes;
  }
  for (const char* field : {"description", "timezone"}) {
    if (have.at(field) != want.at(field)) changes.push_back(change(field, have.at(field), want.at(field)));
  }
  if (have.at("businessDays") != want.at("businessDays")) {
    changes.push_back(change("businessDays", weekdays(have.at("businessDays")), weekdays(want.at("businessDays"))));
  }
  for (const char* list : {"excludedDates", "includedDates"}) {
    std::map<std::string, std::pair<json, json>> days;  // date → (have's name, want's name)
    for (const auto& d : have.at(list)) days[d.at("date").get<std::string>()].first = d.at("name");
    for (const auto& d : want.at(list)) days[d.at("date").get<std::string>()].second = d.at("name");
    for (const auto& [date, names] : days) {
      if (names.first != names.second) changes.push_back(change(std::string(list) + "[" + date + "]", names.first, names.second));
    }
  }
  if (times(have) != times(want)) changes.push_back(change("excludedTimes", times(have), times(want)));
  return changes;
}

// The calendars as the plan leaves them: the file's (as it gives them, their rules made) and the
// server's others, by name. What first fire times go by.
class CalendarsAfterPlan {
 public:
  explicit CalendarsAfterPlan(const Index& index) : index_(index) {}

  // A calendar of the file, its rules made; `rules_change` when the server has it with other rules.
  void add(const std::string& name, common::BusinessCalendar made, bool rules_change) {
    made_.insert_or_assign(name, std::move(made));
    if (rules_change) changed_.insert(name);
  }

  bool exists(const std::string& name) const { return made_.contains(name) || index_.calendars_by_name.contains(name); }

  // The calendar a file's job or workflow (`entry`, at `path`) names, "" for none: one of the
  // file's or the server's (else a 400 at its `calendar`), added to `named`.
  std::string named_by(const json& entry, const std::string& path, std::set<std::string>& named) const {
    std::string name = entry.value("calendar", std::string());
    if (name.empty()) return name;
    if (!exists(name)) {
      throw invalid(path + ".calendar", path + ".calendar: no calendar is named '" + name +
                                            "' (neither among the file's calendars nor on the server)");
    }
    named.insert(name);
    return name;
  }
  // Whether the plan changes what the calendar decides.
  bool rules_change(const std::string& name) const { return changed_.contains(name); }

  // What a schedule going by the calendar `name` (one that exists) in `mode` takes; none for "".
  std::optional<ScheduleCalendar> schedule_calendar(const std::string& name, common::CalendarMode mode,
                                                    const std::string& path) const {
    if (name.empty()) return std::nullopt;
    auto made = made_.find(name);
    if (made == made_.end()) {
      const Calendar& stored = *index_.calendars_by_name.at(name);
      try {
        made = made_.emplace(name, common::BusinessCalendar::make(to_spec(stored))).first;
      } catch (const common::CalendarError& e) {
        // Only reachable for a calendar written around the API: report it, do not guess.
        throw conflict(path + ".calendar: calendar " + name + " is invalid: " + e.what(), path + ".calendar");
      }
    }
    return ScheduleCalendar{name, made->second, mode};
  }

 private:
  const Index& index_;
  mutable std::map<std::string, common::BusinessCalendar> made_;  // the server's made when first asked for
  std::set<std::string> changed_;
};

// The first fire time of a job (or a workflow as one) started at `now_ms`, first_fire_time()'s,
// going by `calendar` when it has one (the calendar as the plan leaves it). A calendar that lets
// no fire through within ten years is a 400 naming `calendar`.
std::int64_t first_time_with(const Job& job, std::int64_t now_ms, const std::optional<ScheduleCalendar>& calendar) {
  Job plain = job;
  plain.calendar = {};
  const auto first = first_fire_time(plain, now_ms);
  if (!calendar) return first;
  const Schedule schedule =
      Schedule::parse(job.schedule_type, job.schedule_conf, job.timezone, job.dst).with_calendar(*calendar);
  const auto after = now_ms + kPreReadWindowMs;
  if (auto next = schedule.next_after(after)) return *next;
  throw invalid("calendar", "calendar: " + schedule.end_reason(after) + " after " +
                                common::format_iso8601(now_ms, job.timezone) + " for schedule '" + job.schedule_conf +
                                "' (" + mode_in_file(calendar->mode) + ")");
}

// The file's calendars onto `plan` (created, or updated field by field), each checked as the
// calendars API checks one; answers their report. Writing calendars is for admins.
template <class Count>
json plan_calendars(const json& document, const Index& index, const Principal& who, CalendarsAfterPlan& after,
                    ApplyPlan& plan, Count& count) {
  json report = json::array();
  for (const auto& entry : document.value("calendars", json::array())) {
    const auto name = entry.at("name").get<std::string>();
    const std::string path = "calendars[" + name + "]";
    Calendar c = read_file_calendar(entry, path);
    common::BusinessCalendar made = [&] {
      try {
        return common::BusinessCalendar::make(to_spec(c));
      } catch (const common::CalendarError& e) {
        const std::string field = e.field() == "timeZone" ? "timezone" : e.field();
        throw invalid(path + "." + field, path + "." + field + ": " + e.reason());
      }
    }();
    c.dates = stored_dates(std::move(c.dates));  // make() refused a day both excluded and included
    const json want = calendar_whole(c);
    json calendar_report{{"name", name}};
    auto stored = index.calendars_by_name.find(name);
    if (stored == index.calendars_by_name.end()) {
      if (!who.user.is_admin()) throw forbidden(path + ": creating a calendar needs the admin role");
      calendar_report["action"] = "create";
      calendar_report["changes"] = calendar_changes(nullptr, want);
      after.add(name, std::move(made), false);
      plan.create_calendars.push_back(std::move(c));
      count("create");
    } else {
      const Calendar& current = *stored->second;
      const json have = calendar_whole(current);
      calendar_report["id"] = current.id;
      calendar_report["changes"] = calendar_changes(have, want);
      after.add(name, std::move(made), !same_rules(have, want));
      if (calendar_report["changes"].empty()) {
        calendar_report["action"] = "unchanged";
        count("unchanged");
      } else {
        if (!who.user.is_admin()) throw forbidden(path + ": changing a calendar needs the admin role");
        c.id = current.id;
        c.version = current.version;
        c.created_at = current.created_at;
        c.dates = with_stored_sources(std::move(c.dates), current.dates);
        calendar_report["action"] = "update";
        plan.update_calendars.push_back(std::move(c));
        count("update");
      }
    }
    report.push_back(std::move(calendar_report));
  }
  return report;
}

// What names calendars once the plan is applied, for --prune's calendars: the names the file's
// jobs and workflows give, and the stored jobs and workflows the plan describes (named, changed
// or deleted: what they named before does not count).
struct CalendarNames {
  std::set<std::string> named;
  std::set<std::int64_t> described_jobs;
  std::set<std::int64_t> described_workflows;
};

// --prune's calendars onto `plan`: one the file does not list, that a job or workflow of the
// file's groups named, and that nothing names once the plan is applied, is deleted (by an admin;
// a normal user's plan leaves calendars as they are). Answers their report.
template <class Count>
json prune_calendars(const json& document, const JobsSnapshot& snapshot, const Index& index, const Principal& who,
                     const CalendarNames& names, ApplyPlan& plan, Count& count) {
  json report = json::array();
  if (!who.user.is_admin()) return report;
  std::set<std::string> listed;
  for (const auto& entry : document.value("calendars", json::array())) listed.insert(entry.at("name").get<std::string>());
  std::set<std::int64_t> groups;  // the file's, that the server has
  for (const auto& app : app_names_of(document)) {
    if (auto it = index.groups_by_app.find(app); it != index.groups_by_app.end()) groups.insert(it->second->id);
  }
  std::set<std::int64_t> used;  // by the file's groups before the plan
  for (const auto& j : snapshot.jobs) {
    if (groups.contains(j.job_group)) used.insert(j.calendar.calendar_id);
  }
  for (const auto& w : snapshot.workflows) {
    if (groups.contains(w.job_group)) used.insert(w.calendar.calendar_id);
  }
  std::set<std::int64_t> named;  // after the plan
  for (const auto& name : names.named) {
    if (auto it = index.calendars_by_name.find(name); it != index.calendars_by_name.end()) named.insert(it->second->id);
  }
  for (const auto& i : snapshot.identities) {
    if (!names.described_jobs.contains(i.id)) named.insert(i.calendar_id);
  }
  for (const auto& w : snapshot.workflow_identities) {
    if (!names.described_workflows.contains(w.id)) named.insert(w.calendar_id);
  }
  for (auto id : used) {
    if (id == 0 || named.contains(id)) continue;
    const Calendar* c = index.calendars_by_id.at(id);
    if (listed.contains(c->name)) continue;
    plan.delete_calendars.push_back(id);
    report.push_back(json{{"name", c->name}, {"id", id}, {"action", "delete"}, {"changes", json::array()}});
    count("delete");
  }
  return report;
}

// ---- workflows ----------------------------------------------------------------------------

// As the workflows API takes them (admin/api/workflows_api.cpp).
constexpr std::size_t kMaxParamValueBytes = 64 * 1024;
constexpr std::size_t kMaxParamDescription = 255;
constexpr std::int64_t kMaxWorkflowTimeoutSeconds = 7LL * 24 * 3600;

// A file's workflow's own fields (not its nodes) as the Workflow the API would read, checked.
Workflow read_file_workflow(const json& entry, const std::string& name, const std::string& path) {
  Workflow w;
  w.name = name;
  try {
    w.description = entry.value("description", std::string());
    check_text("description", w.description, kMaxJobDesc, false);
    w.author = entry.value("author", std::string());
    check_text("author", w.author, kMaxAuthor, false);
    w.alarm_email = checked_email_list("alarmEmail", entry.value("alarmEmail", std::string()), kMaxAlarmEmail);
    w.schedule_type = common::protocol::parse_enum<ScheduleType>(entry.value("scheduleType", std::string("NONE")))
                          .value_or(ScheduleType::kNone);
    w.schedule_conf = entry.value("scheduleConf", std::string());
    w.timezone = entry.value("timezone", std::string("UTC"));
    check_text("timezone", w.timezone, kMaxTimezone, true);
    try {
      validate_schedule(w.schedule_type, w.schedule_conf, w.timezone);
    } catch (const ScheduleError& e) {
      throw invalid(e.field(), e.what());
    }
    w.misfire_strategy = common::protocol::parse_enum<MisfireStrategy>(entry.value("misfireStrategy", std::string("DO_NOTHING")))
                             .value_or(MisfireStrategy::kDoNothing);
    w.overlap = parse_overlap_policy(entry.value("overlap", std::string("WAIT"))).value_or(OverlapPolicy::kWait);
    w.max_parallel = check_int_range("maxParallel", entry.value("maxParallel", std::int64_t{1}), 1, 100);
    w.timeout_seconds = check_int_range("timeout", entry.value("timeout", std::int64_t{0}), 0, kMaxWorkflowTimeoutSeconds);
    w.graph.on_failure_running =
        parse_running_on_failure(entry.value("onFailureRunning", std::string("FINISH"))).value_or(RunningOnFailure::kFinish);
    const json params = entry.value("params", json::array());
    if (params.size() > kMaxWorkflowParams) {
      throw invalid("params", "params: at most " + std::to_string(kMaxWorkflowParams) + " parameters");
    }
    for (std::size_t i = 0; i < params.size(); ++i) {
      const std::string at = "params[" + std::to_string(i) + "]";
      WorkflowParam param;
      param.name = params[i].at("name").get<std::string>();
      if (auto d = params[i].find("default"); d != params[i].end()) {
        param.default_value = d->get<std::string>();
        param.has_default = true;
        if (param.default_value.size() > kMaxParamValueBytes) throw invalid(at + ".default", at + ".default: at most 65536 bytes");
      }
      param.description = params[i].value("description", std::string());
      check_text(at + ".description", param.description, kMaxParamDescription, false);
      w.params.push_back(std::move(param));
    }
    w.calendar.mode = mode_of(entry);
  } catch (const common::http::HttpError& e) {
    rethrow_at(path, e);
  }
  return w;
}

// The file's view of a workflow, to compare and to export: its fields, its calendar (by name, null
// for none) and mode, its parameters, its nodes by key ({job, after (sorted), params when set,
// onFailure}) and whether it runs. `jobs[i]` is the file's name of node i's job.
json comparable_workflow(const Workflow& w, const std::vector<std::string>& jobs, bool running, const json& calendar) {
  json nodes = json::object();
  for (std::size_t i = 0; i < w.graph.nodes.size(); ++i) {
    const auto& n = w.graph.nodes[i];
    auto after = parents_of(w.graph, n.key);
    std::sort(after.begin(), after.end());
    json node{{"job", jobs.at(i)}, {"after", after}, {"onFailure", to_string(n.on_failure)}};
    if (n.params_set) node["params"] = n.params;
    nodes[n.key] = std::move(node);
  }
  return json{{"description", w.description},
              {"author", w.author},
              {"alarmEmail", w.alarm_email},
              {"scheduleType", to_string(w.schedule_type)},
              {"scheduleConf", w.schedule_conf},
              {"timezone", w.timezone},
              {"calendar", calendar},
              {"calendarMode", mode_in_file(w.calendar.mode)},
              {"misfireStrategy", to_string(w.misfire_strategy)},
              {"overlap", to_string(w.overlap)},
              {"maxParallel", w.max_parallel},
              {"timeout", w.timeout_seconds},
              {"onFailureRunning", to_string(w.graph.on_failure_running)},
              {"params", params_json(w.params)},
              {"nodes", std::move(nodes)},
              {"running", running}};
}

const json& workflow_defaults() {
  static const json d = comparable_workflow(Workflow{}, {}, false, nullptr);
  return d;
}

// The keys of the comparable form in the order the file and the plan's changes list them.
const std::vector<std::string>& workflow_report_order() {
  static const std::vector<std::string> keys{"description",      "author",       "alarmEmail", "scheduleType",
                                             "scheduleConf",     "timezone",     "calendar",   "calendarMode",
                                             "misfireStrategy",  "overlap",      "maxParallel", "timeout",
                                             "onFailureRunning", "params",       "nodes",      "running"};
  return keys;
}

// What a file writes of a comparable workflow: the fields that are not their defaults.
json workflow_in_file(const json& comparable) {
  json out = json::object();
  for (const auto& key : workflow_report_order()) {
    const json& value = comparable.at(key);
    if (key == "nodes") {
      json nodes = json::object();
      for (const auto& [node_key, node] : value.items()) {
        json n{{"job", node.at("job")}};
        if (!node.at("after").empty()) n["after"] = node.at("after");
        if (node.contains("params")) n["params"] = node.at("params");
        if (node.at("onFailure") != "FAIL") n["onFailure"] = node.at("onFailure");
        nodes[node_key] = std::move(n);
      }
      out["nodes"] = std::move(nodes);
    } else if (key == "params") {
      if (value.empty()) continue;
      json params = json::array();
      for (const auto& p : value) {
        json param{{"name", p.at("name")}};
        if (p.contains("default")) param["default"] = p.at("default");
        if (!p.value("description", std::string()).empty()) param["description"] = p.at("description");
        params.push_back(std::move(param));
      }
      out["params"] = std::move(params);
    } else if (value != workflow_defaults().at(key)) {
      out[key] = value;
    }
  }
  return out;
}

// The changes from `have` to `want` (comparable forms; null: nothing), nodes one by one.
json workflow_changes(const json& have, const json& want) {
  json changes = json::array();
  for (const auto& key : workflow_report_order()) {
    if (key == "nodes") {
      std::set<std::string> keys;
      for (const json* side : {&have, &want}) {
        if (side->is_null()) continue;
        for (const auto& [node_key, node] : side->at("nodes").items()) keys.insert(node_key);
      }
      for (const auto& node_key : keys) {
        const json before = have.is_null() ? json() : have.at("nodes").value(node_key, json());
        const json after = want.is_null() ? json() : want.at("nodes").value(node_key, json());
        if (before != after) changes.push_back(change("nodes[" + node_key + "]", before, after));
      }
      continue;
    }
    const json& before = have.is_null() ? workflow_defaults().at(key) : have.at(key);
    const json& after = want.is_null() ? workflow_defaults().at(key) : want.at(key);
    if (before != after) {
      changes.push_back(change(key, have.is_null() ? json() : before, want.is_null() ? json() : after));
    }
  }
  return changes;
}

// Where in the file a problem check_workflow_graph found lies. `edge_paths[j]` is the `after`
// entry that made edge j; the graph's nodes are the file's, in key order.
struct GraphPaths {
  std::string workflow;                 // groups[billing].workflows[etl]
  std::vector<std::string> node_paths;  // per node
  std::vector<std::string> edge_paths;  // per edge
};

std::string file_path_of(const GraphPaths& paths, const std::string& field) {
  auto index_in = [&](std::string_view prefix) -> std::optional<std::pair<std::size_t, std::string>> {
    if (!field.starts_with(prefix)) return std::nullopt;
    const auto close = field.find(']', prefix.size());
    if (close == std::string::npos) return std::nullopt;
    try {
      return std::pair{static_cast<std::size_t>(std::stoul(field.substr(prefix.size(), close - prefix.size()))),
                       field.substr(close + 1)};
    } catch (const std::exception&) {
      return std::nullopt;
    }
  };
  if (auto node = index_in("nodes["); node && node->first < paths.node_paths.size()) {
    const std::string& at = paths.node_paths[node->first];
    if (node->second == ".jobId") return at + ".job";
    if (node->second == ".params") return at + ".params";
    return at;  // .key: the node's key is its place in the map
  }
  if (auto edge = index_in("edges["); edge && edge->first < paths.edge_paths.size()) return paths.edge_paths[edge->first];
  return paths.workflow + ".nodes";
}

// check_workflow_graph's first problem as the file's: at its path, a cycle told by the `after`
// entries that close it (with their lines when `line_of` knows them).
[[noreturn]] void refuse_graph(const std::vector<GraphProblem>& problems, const WorkflowGraph& graph,
                               const GraphPaths& paths, const LineOf& line_of) {
  const auto& first = problems.front();
  std::string field = file_path_of(paths, first.field);
  std::string message = first.message;
  static constexpr std::string_view kCycle = "the edges form a cycle: ";
  if (first.field == "edges" && message.starts_with(kCycle)) {
    // Node keys hold no spaces, so the cycle's text splits back into its keys.
    std::vector<std::string> keys;
    const std::string_view arrow = " \u2192 ";
    std::string_view rest = std::string_view(message).substr(kCycle.size());
    for (auto at = rest.find(arrow); at != std::string_view::npos; at = rest.find(arrow)) {
      keys.emplace_back(rest.substr(0, at));
      rest.remove_prefix(at + arrow.size());
    }
    keys.emplace_back(rest);
    std::string told;
    std::string first_edge;
    for (std::size_t i = 0; i + 1 < keys.size(); ++i) {
      for (std::size_t j = 0; j < graph.edges.size(); ++j) {
        if (graph.edges[j].from != keys[i] || graph.edges[j].to != keys[i + 1]) continue;
        if (first_edge.empty()) first_edge = paths.edge_paths[j];
        told += (told.empty() ? "" : ", ") + keys[i + 1] + " after " + keys[i];
        if (const int line = line_of ? line_of(paths.edge_paths[j]) : 0; line > 0) told += " (line " + std::to_string(line) + ")";
      }
    }
    if (!first_edge.empty()) {
      field = first_edge;
      message = "the nodes' after lists form a cycle: " + std::string(std::string_view(message).substr(kCycle.size())) +
                ": " + told;
    }
  }
  if (problems.size() > 1) message += " (and " + std::to_string(problems.size() - 1) + " more)";
  throw invalid(field, field + ": " + message);
}

// What the plan knows of the jobs while it plans workflows.
struct JobsAfterPlan {
  const std::set<JobRef>& in_file;                  // every job the file names
  const std::map<JobRef, bool>& file_broadcast;     // whether each is SHARDING_BROADCAST in the file
  const std::set<std::int64_t>& deleted;            // jobs the plan deletes
};

// The workflows of the file's groups onto `plan`; answers their report. After the jobs: nodes
// may run jobs the same file creates, and none may run a job the plan deletes.
json plan_workflows(const json& document, const JobsSnapshot& snapshot, const Index& index, const Principal& who,
                    bool prune, std::int64_t now_ms, const JobsAfterPlan& jobs, const CalendarsAfterPlan& calendars,
                    const LineOf& line_of, ApplyPlan& plan, CalendarNames& names,
                    const std::function<void(const std::string&)>& count) {
  json report = json::array();
  std::map<std::pair<std::int64_t, std::string>, const Workflow*> stored_by_name;
  for (const auto& w : snapshot.workflows) stored_by_name[{w.job_group, w.name}] = &w;
  std::set<std::int64_t> described;  // stored workflows the plan describes whole (kept, changed or deleted)

  for (const auto& entry : document.at("groups")) {
    const auto app = entry.at("appName").get<std::string>();
    const std::string group_path = "groups[" + app + "]";
    auto found = index.groups_by_app.find(app);
    const Group* current = found == index.groups_by_app.end() ? nullptr : found->second;
    const json workflows = entry.value("workflows", json::object());
    for (const auto& [name, wf_entry] : workflows.items()) {
      const std::string path = group_path + ".workflows[" + name + "]";
      const Workflow* stored = nullptr;
      if (current) {
        if (auto it = stored_by_name.find({current->id, name}); it != stored_by_name.end()) stored = it->second;
      }
      Workflow w = read_file_workflow(wf_entry, name, path);

      // Nodes in key order, each one's job by name; edges from each node's `after`.
      GraphPaths paths{path, {}, {}};
      std::vector<JobRef> node_jobs;
      std::vector<std::string> jobs_in_file;
      for (const auto& [key, node_entry] : wf_entry.at("nodes").items()) {
        const std::string node_path = path + ".nodes[" + key + "]";
        const JobRef ref = parse_ref(node_entry.at("job").get<std::string>(), app);
        WorkflowNode node;
        node.key = key;
        const JobIdentity* identity = nullptr;
        if (auto it = index.by_ref.find(ref); it != index.by_ref.end()) identity = it->second;
        bool broadcast = false;
        if (jobs.in_file.contains(ref)) {
          broadcast = jobs.file_broadcast.at(ref);
        } else if (identity == nullptr || !who.may_access_group(identity->job_group)) {
          throw invalid(node_path + ".job", node_path + ".job: job " + ref_text(ref) + " does not exist (nor is it in the file)");
        } else if (jobs.deleted.contains(identity->id)) {
          throw invalid(node_path + ".job", node_path + ".job: job " + ref_text(ref) +
                                                " is not in the file, so --prune deletes it; a node cannot run it");
        } else {
          broadcast = identity->broadcast;
        }
        if (broadcast) {
          throw invalid(node_path + ".job", node_path + ".job: job " + ref_text(ref) +
                                                " is a SHARDING_BROADCAST job; a workflow node runs on one executor");
        }
        node.job_id = identity ? identity->id : 0;
        if (auto p = node_entry.find("params"); p != node_entry.end()) {
          node.params = p->get<std::string>();
          node.params_set = true;
          if (node.params.size() > kMaxTemplateBytes) {
            throw invalid(node_path + ".params", node_path + ".params: at most " + std::to_string(kMaxTemplateBytes) + " bytes");
          }
        }
        node.on_failure = parse_node_failure_policy(node_entry.value("onFailure", std::string("FAIL"))).value_or(NodeFailurePolicy::kFail);
        const auto after = node_entry.value("after", std::vector<std::string>{});
        for (std::size_t i = 0; i < after.size(); ++i) {
          w.graph.edges.push_back({after[i], key});
          paths.edge_paths.push_back(node_path + ".after[" + std::to_string(i) + "]");
        }
        w.graph.nodes.push_back(std::move(node));
        paths.node_paths.push_back(node_path);
        node_jobs.push_back(ref);
        jobs_in_file.push_back(ref_in_file(ref, app));
      }
      // The graph as check_workflow_graph sees it: every node's job exists (checked above), new
      // ones included, which have no id yet.
      WorkflowGraph checked = w.graph;
      for (auto& n : checked.nodes) n.job_id = std::max<std::int64_t>(n.job_id, 1);
      if (auto problems = check_workflow_graph(checked, w.params); !problems.empty()) {
        refuse_graph(problems, w.graph, paths, line_of);
      }
      if (w.schedule_type != ScheduleType::kNone) {
        for (std::size_t i = 0; i < w.params.size(); ++i) {
          if (w.params[i].has_default) continue;
          const std::string at = path + ".params[" + std::to_string(i) + "]";
          throw invalid(at, at + ": parameter " + w.params[i].name + " needs a default: a scheduled run has no one to give it");
        }
      }
      const bool running = wf_entry.value("running", false);
      if (running && w.schedule_type == ScheduleType::kNone) {
        throw invalid(path + ".running", path + ".running: a workflow without a schedule (scheduleType NONE) runs when "
                                                "triggered, not by itself: leave running out, or give it a schedule");
      }
      const std::string calendar = calendars.named_by(wf_entry, path, names.named);
      const json calendar_json = calendar.empty() ? json() : json(calendar);
      auto first_time_now = [&] {
        Job as_job;
        as_job.schedule_type = w.schedule_type;
        as_job.schedule_conf = w.schedule_conf;
        as_job.timezone = w.timezone;
        try {
          return first_time_with(as_job, now_ms, calendars.schedule_calendar(calendar, w.calendar.mode, path));
        } catch (const common::http::HttpError& e) {
          rethrow_at(path, e);
        }
      };

      const json want = comparable_workflow(w, jobs_in_file, running, calendar_json);
      json wf_report{{"appName", app}, {"name", name}, {"changes", json::array()}};
      PlannedWorkflow planned{w, app, calendar, node_jobs, true};
      if (!stored) {
        planned.workflow.job_group = current ? current->id : 0;
        if (running) {
          planned.workflow.trigger_status = 1;
          planned.workflow.trigger_next_time = first_time_now();
        }
        wf_report["action"] = "create";
        wf_report["changes"] = workflow_changes(nullptr, want);
        plan.create_workflows.push_back(std::move(planned));
        count("create");
      } else {
        described.insert(stored->id);
        wf_report["id"] = stored->id;
        std::vector<std::string> stored_jobs;
        for (const auto& n : stored->graph.nodes) {
          auto ref = index.ref_of(n.job_id);
          stored_jobs.push_back(ref ? ref_in_file(*ref, app) : "job " + std::to_string(n.job_id));
        }
        const json stored_calendar = index.calendar_name(stored->calendar.calendar_id);
        const json have = comparable_workflow(*stored, stored_jobs, stored->trigger_status == 1, stored_calendar);
        wf_report["changes"] = workflow_changes(have, want);
        // A running one whose calendar's rules the plan changes may fire sooner (as a change of the
        // calendar through the API brings its users' next times).
        const bool retimed = running && stored->trigger_status == 1 && !calendar.empty() &&
                             calendars.rules_change(calendar) && first_time_now() < stored->trigger_next_time;
        if (wf_report["changes"].empty() && !retimed) {
          wf_report["action"] = "unchanged";
          count("unchanged");
        } else {
          Workflow& u = planned.workflow;
          u.id = stored->id;
          u.job_group = stored->job_group;
          u.version = stored->version;
          u.trigger_last_time = stored->trigger_last_time;
          u.created_at = stored->created_at;
          planned.fields_changed = std::any_of(wf_report["changes"].begin(), wf_report["changes"].end(),
                                               [](const json& c) { return c["field"] != "running"; });
          if (running) {
            const bool started = stored->trigger_status != 1;
            const bool rescheduled = w.schedule_type != stored->schedule_type || w.schedule_conf != stored->schedule_conf ||
                                     w.timezone != stored->timezone || calendar_json != stored_calendar ||
                                     w.calendar.mode != stored->calendar.mode;
            u.trigger_status = 1;
            u.trigger_next_time = (started || rescheduled || retimed) ? first_time_now() : stored->trigger_next_time;
          } else {
            u.trigger_status = 0;
            u.trigger_next_time = 0;
          }
          if (wf_report["changes"].empty()) {
            // Its own fields stay: only its next time moves, under the version it has.
            wf_report["action"] = "unchanged";
            count("unchanged");
          } else {
            wf_report["action"] = "update";
            count("update");
          }
          plan.update_workflows.push_back(std::move(planned));
        }
      }
      report.push_back(std::move(wf_report));
    }

    // Workflows of the group the file does not name.
    if (current && prune) {
      for (const auto& w : snapshot.workflows) {
        if (w.job_group != current->id || workflows.contains(w.name)) continue;
        described.insert(w.id);
        plan.delete_workflows.push_back(w.id);
        json wf_report{{"appName", app}, {"name", w.name}, {"id", w.id}, {"action", "delete"}, {"changes", json::array()}};
        if (auto run = snapshot.active_runs.find(w.id); run != snapshot.active_runs.end()) {
          const std::string why = "its run " + std::to_string(run->second) + " is waiting or running: cancel it first, or keep "
                                  "the workflow in the file";
          wf_report["blocked"] = why;
          if (!plan.refusal) {
            plan.refusal = PlanRefusal{group_path + ": --prune would delete workflow " + app + "/" + w.name + ", but " + why,
                                       group_path};
          }
        }
        report.push_back(std::move(wf_report));
        count("delete");
      }
    }
  }

  names.described_workflows = described;

  // A job the plan deletes must not stay in a workflow the plan leaves as it is.
  if (!jobs.deleted.empty()) {
    for (const auto& w : snapshot.workflow_identities) {
      if (described.contains(w.id)) continue;
      for (auto job_id : w.job_ids) {
        if (!jobs.deleted.contains(job_id)) continue;
        const auto job = index.ref_of(job_id);
        const auto group = index.groups_by_id.find(w.job_group);
        const std::string group_path = "groups[" + (job ? job->app_name : std::string("?")) + "]";
        throw conflict(group_path + ": --prune would delete job " + (job ? ref_text(*job) : std::to_string(job_id)) +
                           ", which workflow " + (group == index.groups_by_id.end() ? std::string("?") : group->second->app_name) +
                           "/" + w.name + " runs: take it out of the workflow first, or keep the job in the file",
                       group_path);
      }
    }
  }
  return report;
}

}  // namespace

std::vector<std::string> app_names_of(const json& document) {
  std::vector<std::string> names;
  for (const auto& group : document.value("groups", json::array())) names.push_back(group.at("appName").get<std::string>());
  return names;
}

ApplyPlan plan_apply(const json& document, const JobsSnapshot& snapshot, const Principal& who, bool prune,
                     std::int64_t now_ms, const LineOf& line_of) {
  const Index index(snapshot);
  const bool admin = who.user.is_admin();
  ApplyPlan plan;
  json report_groups = json::array();
  json report_jobs = json::array();
  json summary{{"create", 0}, {"update", 0}, {"unchanged", 0}, {"delete", 0}};
  auto count = [&](const std::string& action) { summary[action] = summary[action].get<int>() + 1; };

  // Calendars first: the file's jobs and workflows go by them as the plan leaves them.
  CalendarsAfterPlan calendars(index);
  json report_calendars = plan_calendars(document, index, who, calendars, plan, count);
  CalendarNames calendar_names;

  // Every job the file names, to resolve children that the same file creates.
  std::set<JobRef> in_file;
  for (const auto& group : document.at("groups")) {
    const auto app = group.at("appName").get<std::string>();
    const json jobs = group.value("jobs", json::object());
    for (const auto& [name, entry] : jobs.items()) in_file.insert({app, name});
  }

  // The final child graph over synthetic ids: existing jobs keep theirs, new ones count down
  // from -1. Every job outside the file keeps its stored children.
  std::map<JobRef, std::int64_t> graph_id;
  std::map<std::int64_t, JobRef> graph_ref;
  std::int64_t next_new_id = -1;
  for (const auto& [ref, identity] : index.by_ref) {
    graph_id[ref] = identity->id;
    graph_ref[identity->id] = ref;
  }
  for (const auto& ref : in_file) {
    if (!graph_id.contains(ref)) {
      graph_id[ref] = next_new_id;
      graph_ref[next_new_id--] = ref;
    }
  }
  std::map<std::int64_t, std::vector<std::int64_t>> graph;
  for (const auto& identity : snapshot.identities) graph[identity.id] = identity.children;

  struct FileJob {
    std::string path;
    JobRef ref;
    std::int64_t graph_id;
  };
  std::vector<FileJob> file_jobs;
  std::set<std::int64_t> deleted;
  // Channel memberships the file asks for, by channel name: the file's jobs.
  std::map<std::string, std::vector<JobRef>> channel_members;
  std::set<std::int64_t> file_job_ids;  // existing jobs the file names
  bool channels_change = false;

  for (std::size_t gi = 0; gi < document.at("groups").size(); ++gi) {
    const json& entry = document.at("groups")[gi];
    const auto app = entry.at("appName").get<std::string>();
    const std::string group_path = "groups[" + app + "]";
    auto found = index.groups_by_app.find(app);
    const Group* current = found == index.groups_by_app.end() ? nullptr : found->second;
    if (!admin && (current == nullptr || !who.may_access_group(current->id))) {
      throw forbidden(group_path + ": " + app + " is not one of your groups; a file may name only yours");
    }

    // The group itself.
    Group desired = current ? *current : Group{};
    desired.app_name = app;
    desired.title = entry.value("title", app);
    desired.address_type = entry.value("addressType", std::string("automatic")) == "manual" ? 1 : 0;
    try {
      check_text("title", desired.title, kMaxGroupTitle, true);
      const auto max_running = entry.find("maxRunning");
      if (max_running != entry.end() && !max_running->is_number_integer()) {
        throw invalid("maxRunning", "maxRunning: must be a whole number from 0 to " + std::to_string(kMaxGroupRunning));
      }
      desired.max_running =
          max_running == entry.end() ? 0 : check_int_range("maxRunning", max_running->get<std::int64_t>(), 0, kMaxGroupRunning);
    } catch (const common::http::HttpError& e) {
      rethrow_at(group_path, e);
    }
    std::vector<std::string> addresses = entry.value("addressList", std::vector<std::string>{});
    if (desired.address_type == 0 && !addresses.empty()) {
      throw invalid(group_path + ".addressList", group_path + ".addressList: only for addressType manual; an automatic "
                                                              "group's addresses are its executors' registrations");
    }
    if (desired.address_type == 1) {
      if (addresses.size() > kMaxAddresses) {
        throw invalid(group_path + ".addressList", group_path + ".addressList: at most " + std::to_string(kMaxAddresses));
      }
      for (auto& a : addresses) a = trimmed(a);
      try {
        check_http_urls("addressList", addresses);
      } catch (const common::http::HttpError& e) {
        rethrow_at(group_path, e);
      }
      std::set<std::string> seen;
      for (const auto& a : addresses) {
        if (!seen.insert(a).second) throw invalid(group_path + ".addressList", group_path + ".addressList: '" + a + "' is listed twice");
      }
      desired.address_list = addresses;
    } else if (!current) {
      desired.address_list.clear();
    }
    json group_report{{"appName", app}, {"changes", json::array()}};
    if (!current) {
      if (!admin) throw forbidden(group_path + ": creating a group needs the admin role");
      group_report["action"] = "create";
      group_report["changes"].push_back(change("title", nullptr, desired.title));
      group_report["changes"].push_back(change("addressType", nullptr, desired.address_type == 1 ? "manual" : "automatic"));
      if (desired.address_type == 1) group_report["changes"].push_back(change("addressList", nullptr, desired.address_list));
      if (desired.max_running != 0) group_report["changes"].push_back(change("maxRunning", nullptr, desired.max_running));
      plan.create_groups.push_back(desired);
      count("create");
    } else {
      group_report["id"] = current->id;
      if (desired.title != current->title) group_report["changes"].push_back(change("title", current->title, desired.title));
      if (desired.address_type != current->address_type) {
        group_report["changes"].push_back(change("addressType", current->address_type == 1 ? "manual" : "automatic",
                                                  desired.address_type == 1 ? "manual" : "automatic"));
      }
      if (desired.address_type == 1 && desired.address_list != current->address_list) {
        group_report["changes"].push_back(change("addressList", current->address_list, desired.address_list));
      }
      if (desired.max_running != current->max_running) {
        group_report["changes"].push_back(change("maxRunning", current->max_running, desired.max_running));
      }
      if (!group_report["changes"].empty()) {
        if (!admin) throw forbidden(group_path + ": changing a group needs the admin role");
        group_report["action"] = "update";
        plan.update_groups.push_back(desired);
        count("update");
      } else {
        group_report["action"] = "unchanged";
        count("unchanged");
      }
    }
    report_groups.push_back(std::move(group_report));

    // Its jobs.
    const json jobs = entry.value("jobs", json::object());
    std::set<std::string> named;
    for (const auto& [name, job_entry] : jobs.items()) {
      named.insert(name);
      const std::string path = group_path + ".jobs[" + name + "]";
      const JobRef ref{app, name};
      const JobIdentity* identity = nullptr;
      if (auto it = index.by_ref.find(ref); it != index.by_ref.end()) identity = it->second;
      const Job* stored = nullptr;
      if (identity) {
        auto it = index.jobs.find(identity->id);
        if (it == index.jobs.end()) throw std::logic_error("apply snapshot without the job " + ref_text(ref));
        stored = it->second;
      }
      Job job = read_file_job(job_entry, name, current ? current->id : 1, path);
      if (!current) job.job_group = 0;

      // Children, by name.
      std::vector<JobRef> children;
      json children_json = json::array();
      const auto child_refs = job_entry.value("childJobs", std::vector<std::string>{});
      for (std::size_t ci = 0; ci < child_refs.size(); ++ci) {
        const std::string child_path = path + ".childJobs[" + std::to_string(ci) + "]";
        const JobRef child = parse_ref(child_refs[ci], app);
        if (child == ref) throw invalid(child_path, child_path + ": a job cannot be its own child");
        bool visible = in_file.contains(child);
        if (!visible) {
          auto it = index.by_ref.find(child);
          visible = it != index.by_ref.end() && who.may_access_group(it->second->job_group);
        }
        if (!visible) {
          throw invalid(child_path, child_path + ": job " + ref_text(child) + " does not exist (nor is it in the file)");
        }
        children.push_back(child);
        children_json.push_back(ref_in_file(child, app));
      }

      // Alarm channels, by name.
      json channels_json = json::array();
      for (const auto& channel : job_entry.value("alarmChannels", std::vector<std::string>{})) {
        if (!index.channels_by_name.contains(channel)) {
          throw invalid(path + ".alarmChannels", path + ".alarmChannels: no alarm channel is named '" + channel + "'");
        }
        channels_json.push_back(channel);
        channel_members[channel].push_back(ref);
      }

      // Its calendar, by name: one of the file's, or the server's.
      const std::string calendar = calendars.named_by(job_entry, path, calendar_names.named);
      const json calendar_json = calendar.empty() ? json() : json(calendar);
      auto first_time_now = [&] {
        try {
          return first_time_with(job, now_ms, calendars.schedule_calendar(calendar, job.calendar.mode, path));
        } catch (const common::http::HttpError& e) {
          rethrow_at(path, e);
        }
      };

      const bool running = job_entry.value("running", false);
      json want = comparable(job, children_json, channels_json, calendar_json);
      want["running"] = running;
      PlannedJob planned{job, app, calendar, children, {}, false};
      json job_report{{"appName", app}, {"name", name}, {"changes", json::array()}};
      if (!stored) {
        if (running) {
          planned.job.trigger_next_time = first_time_now();
          planned.job.trigger_status = 1;
        }
        for (const auto& version : job_entry.value("glueHistory", json::array())) {
          ScriptVersion v;
          v.glue_type = job.glue_type;
          v.glue_source = version.at("glueSource").get<std::string>();
          v.glue_remark = version.value("glueRemark", std::string());
          v.created_at = version.value("createdAt", now_ms);
          planned.history.push_back(std::move(v));
        }
        job_report["action"] = "create";
        for (const auto& field : report_order()) {
          if (!is_default(field, want.at(field))) job_report["changes"].push_back(change(field, nullptr, want.at(field)));
        }
        if (!planned.history.empty()) {
          job_report["changes"].push_back(change("glueHistory", nullptr, static_cast<int>(planned.history.size())));
        }
        const auto id = graph_id.at(ref);
        graph[id].clear();
        for (const auto& c : children) graph[id].push_back(graph_id.at(c));
        file_jobs.push_back({path, ref, id});
        plan.create_jobs.push_back(std::move(planned));
        count("create");
        if (!channels_json.empty()) channels_change = true;
      } else {
        file_job_ids.insert(stored->id);
        job_report["id"] = stored->id;
        const json stored_calendar = index.calendar_name(stored->calendar.calendar_id);
        const json have = comparable(*stored, index.children_in_file(*stored, app), index.channels_in_file(stored->id),
                                     stored_calendar);
        std::sort(want["alarmChannels"].begin(), want["alarmChannels"].end());
        for (const auto& field : report_order()) {
          if (want.at(field) != have.at(field)) job_report["changes"].push_back(change(field, have.at(field), want.at(field)));
        }
        if (want["alarmChannels"] != have["alarmChannels"]) {
          if (!admin) throw forbidden(path + ".alarmChannels: which alarm channels take a job is for admins to change");
          channels_change = true;
        }
        const bool fields_change = std::any_of(job_report["changes"].begin(), job_report["changes"].end(),
                                               [](const json& c) { return c["field"] != "alarmChannels"; });
        planned.job.id = stored->id;
        planned.job.job_group = stored->job_group;
        if (job.retry.backoff == RetryBackoff::kFixed) {
          // Not the file's (comparable()): kept as stored.
          planned.job.retry.multiplier = stored->retry.multiplier;
          planned.job.retry.max_interval = stored->retry.max_interval;
        }
        planned.job.paused_with_group = stored->paused_with_group;
        planned.job.trigger_last_time = stored->trigger_last_time;
        planned.job.glue_updated_at = stored->glue_updated_at;
        planned.job.created_at = stored->created_at;
        planned.script_changed = job.glue_source != stored->glue_source || job.glue_remark != stored->glue_remark;
        // A running job whose calendar's rules the plan changes may fire sooner (as a change of the
        // calendar through the API brings its users' next times); a later time the scan skips to.
        const bool retimed = running && stored->trigger_status == 1 && !calendar.empty() &&
                             calendars.rules_change(calendar) && first_time_now() < stored->trigger_next_time;
        if (running) {
          planned.job.trigger_status = 1;
          const bool started = stored->trigger_status != 1;
          const bool rescheduled = job.schedule_type != stored->schedule_type || job.schedule_conf != stored->schedule_conf ||
                                   job.timezone != stored->timezone || job.dst != stored->dst ||
                                   calendar_json != stored_calendar || job.calendar.mode != stored->calendar.mode;
          planned.job.trigger_next_time = (started || rescheduled || retimed) ? first_time_now() : stored->trigger_next_time;
        } else {
          planned.job.trigger_status = 0;
          planned.job.trigger_next_time = 0;
        }
        const auto id = stored->id;
        graph[id].clear();
        for (const auto& c : children) graph[id].push_back(graph_id.at(c));
        file_jobs.push_back({path, ref, id});
        // Retimed alone, its own fields stay (unchanged): only its next time moves.
        if (fields_change || retimed) plan.update_jobs.push_back(std::move(planned));
        job_report["action"] = job_report["changes"].empty() ? "unchanged" : "update";
        count(job_report["changes"].empty() ? "unchanged" : "update");
      }
      report_jobs.push_back(std::move(job_report));
    }

    // Jobs of the group the file does not name.
    if (current && prune) {
      for (const auto& identity : snapshot.identities) {
        if (identity.job_group != current->id || named.contains(identity.name)) continue;
        deleted.insert(identity.id);
        plan.delete_jobs.push_back(identity.id);
        report_jobs.push_back(json{{"appName", app}, {"name", identity.name}, {"id", identity.id}, {"action", "delete"},
                                   {"changes", json::array()}});
        count("delete");
        graph.erase(identity.id);
        if (index.channels_of_job.contains(identity.id)) channels_change = true;
      }
    }
  }

  // A cycle of children through a job of the file fires forever: refuse it, naming it.
  const ChildrenOf children_of = [&](const std::vector<std::int64_t>& ids) {
    std::map<std::int64_t, std::vector<std::int64_t>> out;
    for (auto id : ids) {
      if (deleted.contains(id)) continue;
      if (auto it = graph.find(id); it != graph.end()) {
        for (auto child : it->second) {
          if (!deleted.contains(child)) out[id].push_back(child);
        }
      }
    }
    return out;
  };
  for (const auto& file_job : file_jobs) {
    const auto cycle = find_child_cycle(file_job.graph_id, graph[file_job.graph_id], children_of);
    if (cycle.empty()) continue;
    std::string described;
    for (auto id : cycle) {
      if (!described.empty()) described += " → ";
      auto ref = graph_ref.find(id);
      described += ref == graph_ref.end() ? "job " + std::to_string(id) : ref_text(ref->second);
    }
    throw invalid(file_job.path + ".childJobs", file_job.path + ".childJobs: would make a cycle of child jobs: " + described +
                                                    " (each one's success would fire the next, forever)");
  }

  // Channels: each takes exactly the file's jobs that name it among the file's groups' jobs.
  if (channels_change) {
    std::set<std::int64_t> managed = file_job_ids;
    managed.insert(deleted.begin(), deleted.end());
    for (const auto& channel : snapshot.channels) {
      PlannedChannelJobs planned{channel.id, {}, {}};
      for (auto id : channel.jobs) {
        if (!managed.contains(id)) planned.kept.push_back(id);
      }
      if (auto it = channel_members.find(channel.name); it != channel_members.end()) planned.named = it->second;
      // Unchanged when the file's jobs that name it are exactly those that were on it.
      std::set<std::int64_t> before(channel.jobs.begin(), channel.jobs.end());
      std::set<std::int64_t> after(planned.kept.begin(), planned.kept.end());
      bool has_new = false;
      for (const auto& ref : planned.named) {
        auto it = index.by_ref.find(ref);
        if (it == index.by_ref.end()) {
          has_new = true;
        } else {
          after.insert(it->second->id);
        }
      }
      if (has_new || before != after) plan.channel_jobs.push_back(std::move(planned));
    }
  }

  std::map<JobRef, bool> file_broadcast;
  for (const auto& group : document.at("groups")) {
    const auto app = group.at("appName").get<std::string>();
    const json jobs = group.value("jobs", json::object());
    for (const auto& [name, job] : jobs.items()) {
      file_broadcast[{app, name}] = job.value("executorRouteStrategy", std::string()) == "SHARDING_BROADCAST";
    }
  }
  json report_workflows =
      plan_workflows(document, snapshot, index, who, prune, now_ms, JobsAfterPlan{in_file, file_broadcast, deleted},
                     calendars, line_of, plan, calendar_names, count);

  if (prune) {
    calendar_names.described_jobs = file_job_ids;
    calendar_names.described_jobs.insert(deleted.begin(), deleted.end());
    for (auto& deletion : prune_calendars(document, snapshot, index, who, calendar_names, plan, count)) {
      report_calendars.push_back(std::move(deletion));
    }
  }

  json report_users = plan_users(document, snapshot, index, who, plan, count);

  const bool changed = !plan.empty();
  plan.report = json{{"changed", changed},
                     {"calendars", std::move(report_calendars)},
                     {"groups", std::move(report_groups)},
                     {"jobs", std::move(report_jobs)},
                     {"workflows", std::move(report_workflows)},
                     {"users", std::move(report_users)},
                     {"summary", std::move(summary)}};
  if (plan.refusal) plan.report["refused"] = plan.refusal->message;
  return plan;
}

json export_document(const JobsSnapshot& snapshot, const std::vector<std::string>& app_names, const Principal& who) {
  const Index index(snapshot);
  std::vector<const Group*> groups;
  if (app_names.empty()) {
    for (const auto& [app, group] : index.groups_by_app) {
      if (who.may_access_group(group->id)) groups.push_back(group);
    }
  } else {
    for (const auto& app : app_names) {
      auto it = index.groups_by_app.find(app);
      if (it == index.groups_by_app.end() || !who.may_access_group(it->second->id)) {
        throw invalid("appName", "appName: no group is named '" + truncate_chars(app, 80) + "'");
      }
      groups.push_back(it->second);
    }
  }
  json out{{"apiVersion", "cronwheel/v1"}, {"groups", json::array()}};
  std::set<std::int64_t> calendars_named;
  for (const auto* group : groups) {
    json g{{"appName", group->app_name}};
    if (group->title != group->app_name) g["title"] = group->title;
    if (group->address_type == 1) {
      g["addressType"] = "manual";
      g["addressList"] = group->address_list;
    }
    if (group->max_running != 0) g["maxRunning"] = group->max_running;
    json jobs = json::object();
    for (const auto& job : snapshot.jobs) {
      if (job.job_group != group->id) continue;
      const json have = comparable(job, index.children_in_file(job, group->app_name), index.channels_in_file(job.id),
                                   index.calendar_name(job.calendar.calendar_id));
      calendars_named.insert(job.calendar.calendar_id);
      json entry = json::object();
      for (const auto& [field, value] : have.items()) {
        if (field == "jobDesc" || !is_default(field, value)) entry[field] = value;
      }
      jobs[job.name] = std::move(entry);
    }
    if (!jobs.empty()) g["jobs"] = std::move(jobs);
    json workflows = json::object();
    for (const auto& w : snapshot.workflows) {
      if (w.job_group != group->id) continue;
      std::vector<std::string> node_jobs;
      for (const auto& n : w.graph.nodes) {
        auto ref = index.ref_of(n.job_id);
        if (!ref) throw std::logic_error("export snapshot without job " + std::to_string(n.job_id) + " of workflow " + w.name);
        node_jobs.push_back(ref_in_file(*ref, group->app_name));
      }
      workflows[w.name] =
          workflow_in_file(comparable_workflow(w, node_jobs, w.trigger_status == 1, index.calendar_name(w.calendar.calendar_id)));
      calendars_named.insert(w.calendar.calendar_id);
    }
    if (!workflows.empty()) g["workflows"] = std::move(workflows);
    out["groups"].push_back(std::move(g));
  }
  // The calendars they name, whole, by name: the file applies on a server that lacks them.
  json calendars = json::array();
  for (const auto& [name, calendar] : index.calendars_by_name) {
    if (calendars_named.contains(calendar->id)) calendars.push_back(calendar_in_file(calendar_whole(*calendar)));
  }
  if (!calendars.empty()) out["calendars"] = std::move(calendars);
  return out;
}

}  // namespace cronwheel::admin
