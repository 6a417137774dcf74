// The calendars resource (routes: add_calendar_routes in calendars_api.h).

#include "admin/api/calendars_api.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <climits>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "admin/api/api_errors.h"
#include "admin/api/field_checks.h"
#include "admin/api/job_validation.h"
#include "admin/api/json_body.h"
#include "admin/model/calendar_dates.h"
#include "admin/model/calendar_json.h"
#include "admin/model/store_errors.h"
#include "common/cron/cron_expression.h"
#include "common/ical/ics.h"
#include "common/jobs_file/jobs_file.h"
#include "common/protocol/json_reader.h"
#include "common/protocol/protocol_error.h"

namespace cronwheel::admin {

namespace {

using json = nlohmann::json;

// A full calendar is about 6,000 dates of four fields each: room for that, nothing nested deeper
// than a date's object in its list.
constexpr common::protocol::JsonLimits kCalendarJsonLimits{4, 40'000, true};
constexpr std::size_t kMaxExcludedDates = 5'000;  // business_calendar.h's bounds
constexpr std::size_t kMaxIncludedDates = 1'000;
constexpr std::size_t kMaxExcludedTimes = 24;
constexpr std::size_t kMaxCalendarDescription = 255;  // the columns' widths (calendar.h)
constexpr std::size_t kMaxCalendarZone = 64;
constexpr std::size_t kMaxDateName = 200;
constexpr int kFirstCalendarYear = 1970;
constexpr int kLastCalendarYear = 2999;
constexpr const char* kDefaultImportSource = "ics";

// The `count` characters of `text` from `pos` as a number, when they are all digits.
std::optional<int> digits_at(const std::string& text, std::size_t pos, std::size_t count) {
  if (pos + count > text.size()) return std::nullopt;
  int value = 0;
  for (std::size_t i = pos; i < pos + count; ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

std::string quoted_text(const std::string& text) { return "'" + truncate_chars(text, 40) + "'"; }

// Runs `read` on an item of a list; its errors name the item ("excludedDates[3].date: ...").
template <class F>
auto calendar_item(const std::string& prefix, F&& read) {
  try {
    return read();
  } catch (const common::http::HttpError& e) {
    common::http::ErrorInfo info = e.info();
    info.field = prefix + (info.field.empty() ? "" : "." + info.field);
    info.message = prefix + (info.field == prefix ? ": " : ".") + info.message;
    throw common::http::HttpError(info);
  }
}

// A list field of the body: absent or null is empty; at most `max_items`, checked before any
// item is read.
const json& calendar_list(const json& body, const char* field, std::size_t max_items) {
  static const json kEmpty = json::array();
  auto it = body.find(field);
  if (it == body.end() || it->is_null()) return kEmpty;
  if (!it->is_array()) throw invalid(field, std::string(field) + ": expected an array");
  if (it->size() > max_items) {
    throw invalid(field, std::string(field) + ": at most " + std::to_string(max_items) + " items, got " +
                             std::to_string(it->size()));
  }
  return *it;
}

JsonBody calendar_item_body(const json& item) {
  if (!item.is_object()) throw invalid("", "expected an object");
  return JsonBody(item.dump());
}

// "2026-10-01", or "--10-01" for every year (date_text()'s forms). Whether the day exists is
// BusinessCalendar::make's to say.
common::CalendarDay parse_calendar_date(const std::string& text) {
  common::CalendarDay day;
  if (text.size() == 10 && text[4] == '-' && text[7] == '-') {
    const auto year = digits_at(text, 0, 4), month = digits_at(text, 5, 2), d = digits_at(text, 8, 2);
    if (year && month && d) {
      day.year = *year;
      day.month = *month;
      day.day = *d;
      return day;
    }
  }
  if (text.size() == 7 && text.starts_with("--") && text[4] == '-') {
    const auto month = digits_at(text, 2, 2), d = digits_at(text, 5, 2);
    if (month && d) {
      day.month = *month;
      day.day = *d;
      return day;
    }
  }
  throw invalid("date", "date: expected YYYY-MM-DD, or --MM-DD for a date of every year, got " + quoted_text(text));
}

// "HH:MM:SS" or "HH:MM" → seconds since midnight.
int parse_time_of_day(const char* field, const std::string& text) {
  const bool shaped = (text.size() == 5 || (text.size() == 8 && text[5] == ':')) && text[2] == ':';
  const auto hours = shaped ? digits_at(text, 0, 2) : std::nullopt;
  const auto minutes = shaped ? digits_at(text, 3, 2) : std::nullopt;
  const auto seconds = text.size() == 8 ? digits_at(text, 6, 2) : std::optional<int>(0);
  if (!hours || !minutes || !seconds || *hours > 23 || *minutes > 59 || *seconds > 59) {
    throw invalid(field, std::string(field) + ": expected a time of day HH:MM:SS (00:00:00 to 23:59:59), got " +
                             quoted_text(text));
  }
  return *hours * 3600 + *minutes * 60 + *seconds;
}

using DayKind = std::tuple<int, int, int, bool>;  // (year, month, day, included)
DayKind kind_of(const CalendarDate& d) { return {d.day.year, d.day.month, d.day.day, d.included}; }

// What an item of a date list said of its source, which is read-only: it may only repeat what
// the stored date of its day and kind has (with_stored_sources, calendar_dates.h).
struct GivenSource {
  std::string item;  // "excludedDates[3]", for the error
  std::optional<std::string> source;
  std::optional<std::string> source_uid;
};

// The dates of one list of the body (excludedDates or includedDates), without their sources,
// and what each item said of its source.
void read_calendar_dates(const json& body, const char* field, std::size_t max_items, bool included,
                         std::vector<CalendarDate>& out, std::vector<GivenSource>& given) {
  const json& list = calendar_list(body, field, max_items);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string item_name = std::string(field) + "[" + std::to_string(i) + "]";
    out.push_back(calendar_item(item_name, [&] {
      JsonBody item = calendar_item_body(list[i]);
      CalendarDate date;
      date.included = included;
      date.day = parse_calendar_date(item.required_string("date"));
      date.day.name = trimmed(item.optional_string("name").value_or(""));
      check_text("name", date.day.name, kMaxDateName, false);
      given.push_back({item_name, item.optional_string("source"), item.optional_string("sourceUid")});
      item.finish();
      return date;
    }));
  }
}

// Each date keeps the source of the stored date of its day and kind (calendars_api.h); an item
// that names another source is refused.
void keep_stored_sources(std::vector<CalendarDate>& dates, const std::vector<GivenSource>& given,
                         const Calendar* stored) {
  dates = with_stored_sources(std::move(dates), stored != nullptr ? stored->dates : std::vector<CalendarDate>{});
  for (std::size_t i = 0; i < dates.size(); ++i) {
    calendar_item(given[i].item, [&] {
      for (auto [key, said, kept] : {std::tuple{"source", &given[i].source, &dates[i].source},
                                     std::tuple{"sourceUid", &given[i].source_uid, &dates[i].source_uid}}) {
        if (*said && **said != *kept) {
          throw invalid(key, std::string(key) + ": is read-only: the import that brought a date sets it" +
                                 (kept->empty() ? " (this one was entered by hand)" : ""));
        }
      }
      return 0;
    });
  }
}

std::optional<std::array<bool, 7>> read_business_days(JsonBody& body) {
  const json* value = body.optional_value("businessDays");
  if (value == nullptr) return std::nullopt;
  if (!value->is_array()) {
    throw invalid("businessDays", "businessDays: expected an array of weekdays (MONDAY ... SUNDAY), or null for every day");
  }
  if (value->size() > 7) throw invalid("businessDays", "businessDays: at most the 7 days of the week");
  std::array<bool, 7> days{};
  for (std::size_t i = 0; i < value->size(); ++i) {
    const std::string field = "businessDays[" + std::to_string(i) + "]";
    const json& item = (*value)[i];
    int index = -1;
    for (int d = 0; d < 7 && item.is_string(); ++d) {
      if (item.get_ref<const std::string&>() == weekday_name(d)) index = d;
    }
    if (index < 0) {
      throw invalid("businessDays", field + ": expected MONDAY, TUESDAY, WEDNESDAY, THURSDAY, FRIDAY, SATURDAY or SUNDAY, got " +
                                        (item.is_string() ? quoted_text(item.get<std::string>()) : item.dump().substr(0, 40)));
    }
    if (days[static_cast<std::size_t>(index)]) throw invalid("businessDays", field + ": " + weekday_name(index) + " is listed twice");
    days[static_cast<std::size_t>(index)] = true;
  }
  return days;
}

enum class CalendarBodyKind { kCreate, kUpdate };

// A create or update body, whole (an update replaces everything but id and created_at). `stored`
// is the calendar an update changes (whose dates' sources its dates keep), null on create.
Calendar read_calendar_body(const std::string& text, CalendarBodyKind kind, const Calendar* stored) {
  json document;
  try {
    document = text.find_first_not_of(" \t\r\n") == std::string::npos ? json::object()
                                                                       : common::protocol::parse_json(text, kCalendarJsonLimits);
  } catch (const common::protocol::ProtocolError& e) {
    throw invalid(e.field(), e.field().empty() ? e.problem() : e.field() + ": " + e.problem());
  }
  if (!document.is_object()) throw invalid("", "the body must be a JSON object");
  // The lists are read item by item below; the other fields through JsonBody, with its checks.
  json lists = json::object();
  for (const char* field : {"excludedDates", "includedDates", "excludedTimes"}) {
    if (auto it = document.find(field); it != document.end()) {
      lists[field] = std::move(*it);
      document.erase(field);
    }
  }
  JsonBody body(document.dump());
  static const json answered = to_json(Calendar{});
  if (kind == CalendarBodyKind::kCreate) {
    refuse_read_only(body, answered, {"name", "description", "timeZone", "businessDays"});
  } else {
    refuse_read_only(body, answered, {"name", "description", "timeZone", "businessDays", "version"});
  }

  Calendar c;
  c.name = body.required_string("name");
  if (!common::jobs_file::is_calendar_name(c.name)) {
    throw invalid("name", "name: must be 1-64 lower-case letters, digits, '.', '_' or '-', starting with a letter or "
                          "digit, got " + quoted_text(c.name));
  }
  c.description = trimmed(body.optional_string("description").value_or(""));
  check_text("description", c.description, kMaxCalendarDescription, false);
  c.time_zone = trimmed(body.optional_string("timeZone").value_or("UTC"));
  check_text("timeZone", c.time_zone, kMaxCalendarZone, true);
  c.business_days = read_business_days(body);
  if (kind == CalendarBodyKind::kUpdate) {
    c.version = check_int_range("version", body.required_int("version"), 1, INT_MAX);
  }
  body.finish();

  // Excluded dates first, then included ones, each in the body's order: to_spec() keeps that
  // order, so the index in a CalendarError is the index in the body's list.
  std::vector<GivenSource> given;
  read_calendar_dates(lists, "excludedDates", kMaxExcludedDates, false, c.dates, given);
  read_calendar_dates(lists, "includedDates", kMaxIncludedDates, true, c.dates, given);
  keep_stored_sources(c.dates, given, stored);
  const json& times = calendar_list(lists, "excludedTimes", kMaxExcludedTimes);
  for (std::size_t i = 0; i < times.size(); ++i) {
    c.excluded_times.push_back(calendar_item("excludedTimes[" + std::to_string(i) + "]", [&] {
      JsonBody item = calendar_item_body(times[i]);
      common::TimeOfDayRange range;
      range.start_s = parse_time_of_day("start", item.required_string("start"));
      range.end_s = parse_time_of_day("end", item.required_string("end"));
      item.finish();
      return range;
    }));
  }
  return c;
}

// Holds `c` to the rules; a refusal names the field as the body spells it, prefixed with
// `context` ("after the import: ").
void check_calendar_rules(const Calendar& c, const std::string& context = "") {
  try {
    common::BusinessCalendar::make(to_spec(c));
  } catch (const common::CalendarError& e) {
    throw invalid(e.field(), context + e.what());
  }
}

// Whether what decides fire times differs: the zone, the weekly rule, the days or the times.
bool rules_changed(const Calendar& before, const Calendar& after) {
  auto days = [](const Calendar& c) {
    std::vector<DayKind> out;
    for (const auto& d : c.dates) out.push_back(kind_of(d));
    return out;
  };
  auto times = [](const Calendar& c) {
    std::vector<std::pair<int, int>> out;
    for (const auto& t : c.excluded_times) out.emplace_back(t.start_s, t.end_s);
    return out;
  };
  return before.time_zone != after.time_zone || before.business_days != after.business_days ||
         days(before) != days(after) || times(before) != times(after);
}

Calendar existing_calendar(CalendarStore& store, std::int64_t id) {
  auto c = store.get(id);
  if (!c) throw not_found("no such calendar " + std::to_string(id));
  return *c;
}

// The date of `epoch_ms` in `zone` (a zone the calendar's rules accepted).
std::chrono::year_month_day local_date(std::int64_t epoch_ms, const std::string& zone) {
  const std::string text = common::format_iso8601(epoch_ms, zone);  // "2026-10-01T..."
  return std::chrono::year_month_day{std::chrono::year{std::stoi(text.substr(0, 4))},
                                     std::chrono::month{static_cast<unsigned>(std::stoi(text.substr(5, 2)))},
                                     std::chrono::day{static_cast<unsigned>(std::stoi(text.substr(8, 2)))}};
}

// Each day of `year` as the console's year view shows it (calendars_api.h, GET days): one rule,
// in the order business_calendar.h applies it: an included date is a business day; an excluded
// date, of that year or of every year, is not (named as BusinessCalendar names it: a date of that
// year before a recurring one); else a day of a weekday the weekly rule leaves out is "weekend";
// else "business". Excluded time ranges apply within days and do not change a day's state.
json year_days(const Calendar& c, int year) {
  std::map<std::tuple<int, int, int>, const CalendarDate*> dated;
  std::map<std::pair<int, int>, const CalendarDate*> every_year;
  for (const auto& d : c.dates) {
    if (d.day.year == 0) {
      every_year.emplace(std::pair{d.day.month, d.day.day}, &d);
    } else if (d.day.year == year) {
      dated.emplace(std::tuple{d.day.year, d.day.month, d.day.day}, &d);
    }
  }
  json days = json::array();
  using namespace std::chrono;
  const sys_days first{std::chrono::year{year} / January / 1};
  const sys_days end{std::chrono::year{year + 1} / January / 1};
  for (sys_days day = first; day < end; day += std::chrono::days{1}) {
    const year_month_day ymd{day};
    const int m = static_cast<int>(static_cast<unsigned>(ymd.month()));
    const int d = static_cast<int>(static_cast<unsigned>(ymd.day()));
    const int weekday = static_cast<int>(std::chrono::weekday{day}.iso_encoding()) - 1;  // Monday 0
    const char* state = "business";
    std::string name;
    const CalendarDate* date = nullptr;
    if (auto it = dated.find({year, m, d}); it != dated.end()) {
      date = it->second;
    } else if (auto r = every_year.find({m, d}); r != every_year.end()) {
      date = r->second;
    }
    if (date != nullptr) {
      state = date->included ? "included" : "excluded";
      name = date->day.name;
    } else if (c.business_days && !(*c.business_days)[static_cast<std::size_t>(weekday)]) {
      state = "weekend";
    }
    days.push_back({{"date", date_text({year, m, d, ""})}, {"state", state}, {"name", name}});
  }
  return days;
}

// The Content-Type of an import: text/calendar (parameters such as charset aside), else 415.
void require_text_calendar(const common::http::Request& req) {
  auto type = req.get_header_value("Content-Type");
  type = type.substr(0, type.find(';'));
  std::transform(type.begin(), type.end(), type.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  type = trimmed(type);
  if (type != "text/calendar") {
    throw common::http::HttpError(415, "unsupported_media_type",
                                  "Content-Type: send the iCalendar file as text/calendar, not " +
                                      (type.empty() ? std::string("nothing") : truncate_chars(type, 60)));
  }
}

// What an import's read of the file refuses, as the API answers it.
[[noreturn]] void refuse_ics(const common::ical::IcsError& e) {
  if (e.kind() == common::ical::IcsError::Kind::kTooLarge) {
    throw common::http::HttpError(413, kTooLarge, std::string("iCalendar file: ") + e.what());
  }
  throw invalid("", std::string("iCalendar file: ") + e.what());
}

// Moves the next fire time of the running jobs (and workflows) naming `calendar` sooner where
// its rules now let a sooner one through (calendars_api.h). Best effort per job: one whose
// schedule or calendar is refused is left to the scan.
void retime_users(const Calendar& calendar, Stores& stores, const CalendarRoutes& routes, std::int64_t now,
                  const Actor& actor) {
  JobStore::Filter filter;
  filter.trigger_status = 1;
  filter.page.limit = 500;
  for (;;) {
    auto page = stores.jobs.list(filter);
    for (const auto& job : page.items) {
      if (job.calendar.calendar_id != calendar.id) continue;
      std::int64_t next = 0;
      try {
        next = first_fire_time(job, now, routes.store);
      } catch (const common::http::HttpError&) {
        continue;  // no time within ten years: the scan stops it, saying so
      }
      if (next >= job.trigger_next_time) continue;
      // Read again just before: a job stopped or changed meanwhile is left as it is.
      auto fresh = stores.jobs.get(job.id);
      if (!fresh || fresh->trigger_status != 1 || fresh->trigger_next_time != job.trigger_next_time ||
          schedule_changed(*fresh, job)) {
        continue;
      }
      stores.jobs.set_trigger_status(job.id, 1, next, "job.retime", actor);
    }
    if (!page.next) break;
    filter.page.after = page.next;
  }
  if (routes.workflows == nullptr) return;
  WorkflowStore::Filter flows;
  flows.page.limit = 500;
  for (;;) {
    auto page = routes.workflows->list(flows);
    for (const auto& w : page.items) {
      if (w.trigger_status != 1 || w.calendar.calendar_id != calendar.id) continue;
      Job as_job;
      as_job.id = w.id;
      as_job.schedule_type = w.schedule_type;
      as_job.schedule_conf = w.schedule_conf;
      as_job.timezone = w.timezone;
      as_job.calendar = w.calendar;
      try {
        const auto next = first_fire_time(as_job, now, routes.store);
        // Guarded by the workflow's version: one changed meanwhile is left as it is.
        if (next < w.trigger_next_time) routes.workflows->update(w, 1, next, actor);
      } catch (const common::http::HttpError&) {
      } catch (const Conflict&) {
      }
    }
    flows.page.offset += static_cast<std::int64_t>(page.items.size());
    if (page.items.empty() || flows.page.offset >= page.total) break;
  }
}

}  // namespace

void add_calendar_routes(ApiRouter& router, Stores stores, const CalendarRoutes& routes, common::Clock& clock) {
  CalendarStore& store = *routes.store;
  const common::http::RouteOptions calendar_body{.max_body_bytes = kMaxCalendarBodyBytes};

  router.add("GET", "calendars", Access::kUser, [&store](ApiRouter::RouteContext&, const common::http::Request& req) {
    CalendarStore::Filter filter;
    filter.text = req.get_param_value("text");
    check_text("text", filter.text, 100, false);
    filter.page = page_query(req);
    if (req.has_param("name")) {
      // The one calendar of this name (what a jobs file or a script knows it by), or none.
      std::vector<Calendar> found;
      const std::string name = req.get_param_value("name");
      check_text("name", name, 64, false);
      if (auto c = store.get_by_name(name)) {
        const auto has = [&](const std::string& field) {
          auto lower = [](std::string s) {
            std::transform(s.begin(), s.end(), s.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
            return s;
          };
          return lower(field).find(lower(filter.text)) != std::string::npos;
        };
        if (has(c->name) || has(c->description)) found.push_back(std::move(*c));
      }
      return ApiResponse{200, sliced_page_json(found, filter.page, [](const Calendar& c) { return to_json(c); })};
    }
    auto page = store.list(filter);
    return ApiResponse{200, page_json(page.items, page.total, [](const Calendar& c) { return to_json(c); })};
  }, paged({"text", "name"}));

  router.add("POST", "calendars", Access::kAdmin, [&store](ApiRouter::RouteContext& ctx, const common::http::Request& req) {
    Calendar c = read_calendar_body(req.body, CalendarBodyKind::kCreate, nullptr);
    check_calendar_rules(c);
    return ApiResponse{201, to_json(store.create(c, ctx.request.actor))};
  }, {}, calendar_body);

  router.add("GET", "calendars/{id}", Access::kUser, [&store](ApiRouter::RouteContext& ctx, const common::http::Request&) {
    return ApiResponse{200, to_json(existing_calendar(store, ctx.path_int("id")))};
  });

  router.add("PUT", "calendars/{id}", Access::kAdmin,
             [&store, stores, routes, &clock](ApiRouter::RouteContext& ctx, const common::http::Request& req) mutable {
               const Calendar before = existing_calendar(store, ctx.path_int("id"));
               Calendar c = read_calendar_body(req.body, CalendarBodyKind::kUpdate, &before);
               c.id = before.id;
               check_calendar_rules(c);
               Calendar after = store.update(c, ctx.request.actor);
               if (rules_changed(before, after)) retime_users(after, stores, routes, clock.now_ms(), ctx.request.actor);
               return ApiResponse{200, to_json(after)};
             }, {}, calendar_body);

  router.add("DELETE", "calendars/{id}", Access::kAdmin, [&store](ApiRouter::RouteContext& ctx, const common::http::Request&) {
    const Calendar c = existing_calendar(store, ctx.path_int("id"));
    store.remove(c.id, ctx.request.actor);  // 409 naming the jobs and workflows that name it
    return ApiResponse{204, nullptr};
  });

  // An .ics file's all-day events as the excluded dates of `source`, replacing what its previous
  // import brought (calendars_api.h).
  router.add("POST", "calendars/{id}/import", Access::kAdmin,
             [&store, stores, routes, &clock](ApiRouter::RouteContext& ctx, const common::http::Request& req) mutable {
               const Calendar before = existing_calendar(store, ctx.path_int("id"));
               const std::string source =
                   req.has_param("source") ? req.get_param_value("source") : std::string(kDefaultImportSource);
               if (!common::jobs_file::is_calendar_name(source)) {
                 throw invalid("source", "source: the import's name must be 1-64 lower-case letters, digits, '.', '_' "
                                         "or '-', starting with a letter or digit, got " + quoted_text(source));
               }
               const auto version = query_int(req.get_param_value("version"), "version");
               if (!version) throw invalid("version", "version: is required (the calendar's version as read)");
               check_int_range("version", *version, 1, INT_MAX);
               const int horizon = check_int_range(
                   "horizonDays",
                   query_int(req.get_param_value("horizonDays"), "horizonDays").value_or(common::ical::kDefaultHorizonDays),
                   1, common::ical::kMaxHorizonDays);
               require_text_calendar(req);
               if (before.version != *version) {
                 throw conflict("calendar " + before.name + " was changed meanwhile (version " +
                                    std::to_string(before.version) + ", not " + std::to_string(*version) + "): read it again",
                                "version");
               }
               const auto now = clock.now_ms();
               const auto today = local_date(now, before.time_zone);
               common::ical::IcsReadOptions options;
               options.from = {static_cast<int>(today.year()), static_cast<int>(static_cast<unsigned>(today.month())),
                               static_cast<int>(static_cast<unsigned>(today.day()))};
               options.horizon_days = horizon;
               common::ical::IcsReadResult read;
               try {
                 read = common::ical::read_ics(req.body, options);
               } catch (const common::ical::IcsError& e) {
                 refuse_ics(e);
               }
               std::vector<CalendarDate> dates;
               dates.reserve(read.dates.size());
               for (auto& d : read.dates) {
                 CalendarDate date;
                 date.day = std::move(d.day);
                 date.source = source;
                 date.source_uid = std::move(d.uid);
                 dates.push_back(std::move(date));
               }
               // The calendar the import would make, held to the rules first (a file with too many
               // dates for what the calendar already holds is a 400, not a half import).
               Calendar merged = before;
               merged.dates = imported_dates(before.dates, source, dates);
               check_calendar_rules(merged, "after the import: ");
               Calendar after = store.replace_imported(before.id, source, dates, before.version, ctx.request.actor);
               if (rules_changed(before, after)) retime_users(after, stores, routes, now, ctx.request.actor);
               const auto imported = std::count_if(after.dates.begin(), after.dates.end(),
                                                   [&](const CalendarDate& d) { return d.source == source; });
               return ApiResponse{200, {{"calendar", to_json(after)},
                                        {"source", source},
                                        {"datesImported", imported},
                                        {"timedEventsIgnored", read.timed_events_ignored},
                                        {"datesOutsideWindow", read.dates_outside_window}}};
             },
             {"source", "horizonDays", "version"}, {.max_body_bytes = common::ical::kMaxIcsBytes});

  router.add("GET", "calendars/{id}/export", Access::kUser,
             [&store, &clock](ApiRouter::RouteContext& ctx, const common::http::Request&) {
               const Calendar c = existing_calendar(store, ctx.path_int("id"));
               std::vector<common::CalendarDay> days;
               for (const auto& d : c.dates) {
                 if (!d.included) days.push_back(d.day);
               }
               std::string text;
               try {
                 text = common::ical::write_ics(days, {clock.now_ms(), c.name});
               } catch (const std::invalid_argument& e) {
                 // Only reachable for a calendar written around the API.
                 throw conflict("calendar " + c.name + " holds a date that cannot be exported: " + e.what(), "id");
               }
               auto response = ApiResponse::text(200, std::move(text), "text/calendar; charset=utf-8");
               // The name is [a-z0-9._-] only: safe in the header as it is.
               response.headers.emplace_back("Content-Disposition", "attachment; filename=\"" + c.name + ".ics\"");
               return response;
             });

  router.add("GET", "calendars/{id}/days", Access::kUser,
             [&store, &clock](ApiRouter::RouteContext& ctx, const common::http::Request& req) {
               const Calendar c = existing_calendar(store, ctx.path_int("id"));
               int year = 0;
               if (auto given = query_int(req.get_param_value("year"), "year")) {
                 year = check_int_range("year", *given, kFirstCalendarYear, kLastCalendarYear);
               } else {
                 year = static_cast<int>(local_date(clock.now_ms(), c.time_zone).year());
               }
               return ApiResponse{200, {{"year", year}, {"timeZone", c.time_zone}, {"days", year_days(c, year)}}};
             },
             {"year"});
}

}  // namespace cronwheel::admin
