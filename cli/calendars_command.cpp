// cronwheel calendars list|get|create|apply|delete|import|export|days

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "cli/api_client.h"
#include "cli/arguments.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/job_ref.h"
#include "cli/jobs_files.h"
#include "cli/json_file.h"
#include "cli/list_page.h"
#include "cli/output.h"

namespace cronwheel::cli {

namespace {

using nlohmann::json;

// What the admin takes at most: a calendar's body (kMaxCalendarBodyBytes) and an .ics file
// (common/ical's kMaxIcsBytes), both 4 MiB.
constexpr std::size_t kMaxCalendarFileBytes = 4 * 1024 * 1024;
constexpr std::size_t kMaxIcsFileBytes = 4 * 1024 * 1024;
// Deeper than a calendar: a date is an object in a list in the calendar.
constexpr int kMaxCalendarFileDepth = 8;
// The import's horizon in days: 1 to 20 years (the API's horizonDays).
constexpr int kMaxHorizonDays = 7305;
constexpr std::size_t kDescriptionWidth = 48;
constexpr std::size_t kTimesWidth = 40;

constexpr std::array<const char*, 7> kWeekdays{"MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY", "SUNDAY"};
constexpr std::array<const char*, 7> kWeekdayShort{"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
constexpr std::array<const char*, 12> kMonthShort{"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                  "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

// ---- naming and finding a calendar

// The calendar NAME names (as GET calendars?name= finds it), or, when no calendar has that name
// and NAME is a positive whole number, the calendar with that id. Checked to have its id and name.
json resolve_calendar(ApiClient& api, const std::string& text) {
  const json page = api.get("calendars" + query_string({{"name", text}, {"limit", "2"}}));
  const json& items = array_member(page, "items");
  if (items.size() > 1) throw unexpected_answer("two calendars named " + text);
  json calendar;
  if (!items.empty()) {
    calendar = items.front();
  } else {
    auto id = parse_id(text);
    if (!std::holds_alternative<std::int64_t>(id)) throw operation_failed("no such calendar");
    try {
      calendar = api.get("calendars/" + std::to_string(std::get<std::int64_t>(id)));
    } catch (const ApiError& e) {
      if (e.http_status() == 404) throw operation_failed("no such calendar");
      throw;
    }
  }
  int_member(calendar, "id");
  string_member(calendar, "name");
  return calendar;
}

std::string calendar_path(const json& calendar) { return "calendars/" + std::to_string(int_member(calendar, "id")); }

// ---- how a calendar reads in a table

// "every day" (no weekly rule), "none", "Mon-Fri", or "Mon, Wed, Fri".
std::string business_days_text(const json& calendar) {
  const auto it = calendar.find("businessDays");
  if (it == calendar.end() || it->is_null()) return "every day";
  if (!it->is_array()) throw unexpected_answer("'businessDays' is not a list");
  std::array<bool, 7> on{};
  for (const json& day : *it) {
    const auto found = std::find(kWeekdays.begin(), kWeekdays.end(), day.is_string() ? day.get<std::string>() : "");
    if (found == kWeekdays.end()) throw unexpected_answer("unknown weekday in 'businessDays'");
    on[static_cast<std::size_t>(found - kWeekdays.begin())] = true;
  }
  std::vector<std::size_t> days;
  for (std::size_t d = 0; d < 7; ++d) {
    if (on[d]) days.push_back(d);
  }
  if (days.empty()) return "none";
  if (days.size() == 7) return "every day";
  if (days.size() >= 3 && days.back() - days.front() + 1 == days.size()) {
    return std::string(kWeekdayShort[days.front()]) + "-" + kWeekdayShort[days.back()];
  }
  std::string text;
  for (auto d : days) text += (text.empty() ? "" : ", ") + std::string(kWeekdayShort[d]);
  return text;
}

// A time of day without its seconds when they are 00: "12:00", "23:59:30".
std::string short_time(const std::string& text) {
  return text.size() == 8 && text.compare(5, 3, ":00") == 0 ? text.substr(0, 5) : text;
}

// "12:00-13:00, 23:00-01:00", or "" for none.
std::string times_text(const json& calendar) {
  std::string text;
  const auto it = calendar.find("excludedTimes");
  if (it == calendar.end() || !it->is_array()) return text;
  for (const json& range : *it) {
    text += (text.empty() ? "" : ", ") + short_time(text_of(range, "start")) + "-" + short_time(text_of(range, "end"));
  }
  return text;
}

std::size_t count_of(const json& calendar, const char* key) {
  const auto it = calendar.find(key);
  return it != calendar.end() && it->is_array() ? it->size() : 0;
}

// ---- calendars list

struct ListOptions {
  std::string search;
  int limit = kDefaultListLimit;
};

int list_calendars(Context& ctx, const ListOptions& options) {
  QueryParameters filters;
  if (!options.search.empty()) filters.emplace_back("text", options.search);
  ListTable table;
  table.plural = "calendars";
  table.headers = {"NAME", "ZONE", "BUSINESS DAYS", "EXCLUDED", "INCLUDED", "EXCLUDED TIMES", "DESCRIPTION"};
  table.row = [](const json& calendar, const AppNames&) -> std::vector<std::string> {
    return {cell_text(text_of(calendar, "name")),
            cell_text(text_of(calendar, "timeZone")),
            business_days_text(calendar),
            std::to_string(count_of(calendar, "excludedDates")),
            std::to_string(count_of(calendar, "includedDates")),
            cell_text(times_text(calendar).empty() ? "-" : times_text(calendar), kTimesWidth),
            cell_text(text_of(calendar, "description"), kDescriptionWidth)};
  };
  return print_list_page(ctx, "calendars", std::move(filters), options.limit, table);
}

// ---- calendars get

void print_dates(std::ostream& out, const json& calendar, const char* key, const char* title) {
  const json& dates = array_member(calendar, key);
  if (dates.empty()) return;
  Table table({title, "NAME", "SOURCE"});
  for (const json& date : dates) {
    const std::string source = text_of(date, "source");
    table.add_row({cell_text(text_of(date, "date")), cell_text(text_of(date, "name")),
                   source.empty() ? "-" : cell_text(source)});
  }
  out << "\n";
  table.print(out);
}

int get_calendar(Context& ctx, const std::string& text) {
  return ctx.about(text, [&] {
    const json calendar = resolve_calendar(ctx.api(), text);
    if (ctx.format() != OutputFormat::kTable) {
      print_document(ctx.out(), ctx.format(), calendar);
      return kExitOk;
    }
    const std::string times = times_text(calendar);
    print_fields(ctx.out(), {
                                {"ID", std::to_string(int_member(calendar, "id"))},
                                {"Name", string_member(calendar, "name")},
                                {"Description", text_of(calendar, "description")},
                                {"Time zone", text_of(calendar, "timeZone")},
                                {"Business days", business_days_text(calendar)},
                                {"Excluded times", times.empty() ? "none" : times + " (every day)"},
                                {"Version", text_of(calendar, "version")},
                                {"Updated", local_time(int_of(calendar, "updatedAt"))},
                            });
    print_dates(ctx.out(), calendar, "excludedDates", "EXCLUDED");
    print_dates(ctx.out(), calendar, "includedDates", "INCLUDED");
    return kExitOk;
  });
}

// ---- calendars create|apply -f FILE

// The body to send for a calendar file: the JSON object it holds (what `calendars get NAME -o
// json` prints), less what the server keeps for itself (id, version, times) and the dates'
// sources (an import's, which the server keeps for a date given again on its day). Throws
// CliError naming the file.
json calendar_file_body(const std::string& file) {
  std::string text;
  try {
    text = read_regular_file(file, kMaxCalendarFileBytes);
  } catch (const std::runtime_error& e) {
    throw operation_failed(one_line(file, 400) + ": " + e.what());
  }
  auto parsed = parse_json_file(text, kMaxCalendarFileDepth);
  if (auto* why = std::get_if<std::string>(&parsed)) throw operation_failed(one_line(file, 400) + ":" + one_line(*why, 1024));
  json body = std::move(std::get<json>(parsed));
  if (!body.is_object() || !body.contains("name") || !body["name"].is_string()) {
    throw operation_failed(one_line(file, 400) + ": a calendar is one JSON object with its name (as `cronwheel calendars get "
                                                 "NAME -o json` prints)");
  }
  for (const char* kept_by_the_server : {"id", "version", "createdAt", "updatedAt"}) body.erase(kept_by_the_server);
  for (const char* list : {"excludedDates", "includedDates"}) {
    auto it = body.find(list);
    if (it == body.end() || !it->is_array()) continue;
    for (json& date : *it) {
      if (!date.is_object()) continue;
      date.erase("source");
      date.erase("sourceUid");
    }
  }
  return body;
}

std::string trimmed_text(const json& object, const char* key, const std::string& fallback = "") {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return fallback;
  if (!it->is_string()) return it->dump();
  const std::string& text = it->get_ref<const std::string&>();
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

// A calendar as the server stores it, to compare a file with it (calendars_api.h): texts
// trimmed, the zone UTC when left out, the weekly rule in weekday order, each list of dates
// once a day (the first kept) in date order, times as HH:MM:SS. Whatever it cannot read it
// keeps as it is, for the server to refuse.
json comparable_calendar(const json& calendar) {
  json out{{"name", trimmed_text(calendar, "name")},
           {"description", trimmed_text(calendar, "description")},
           {"timeZone", trimmed_text(calendar, "timeZone", "UTC")}};
  const auto days = calendar.find("businessDays");
  if (days == calendar.end() || days->is_null() || !days->is_array()) {
    out["businessDays"] = days == calendar.end() ? json(nullptr) : *days;
  } else {
    json ordered = json::array();
    for (const char* day : kWeekdays) {
      if (std::find(days->begin(), days->end(), json(day)) != days->end()) ordered.push_back(day);
    }
    out["businessDays"] = ordered.size() == days->size() ? ordered : *days;
  }
  for (const char* key : {"excludedDates", "includedDates"}) {
    const auto it = calendar.find(key);
    if (it == calendar.end() || it->is_null()) {
      out[key] = json::array();
      continue;
    }
    if (!it->is_array()) {
      out[key] = *it;
      continue;
    }
    std::map<std::string, json> by_date;
    for (const json& date : *it) {
      const std::string day = date.is_object() ? text_of(date, "date") : date.dump();
      by_date.emplace(day, json{{"date", day}, {"name", date.is_object() ? trimmed_text(date, "name") : ""}});
    }
    json sorted = json::array();
    for (auto& [day, date] : by_date) sorted.push_back(std::move(date));
    out[key] = std::move(sorted);
  }
  json times = json::array();
  const auto it = calendar.find("excludedTimes");
  if (it != calendar.end() && it->is_array()) {
    for (const json& range : *it) {
      auto full = [&](const char* end) {
        const std::string text = text_of(range, end);
        return text.size() == 5 ? text + ":00" : text;
      };
      times.push_back({{"start", full("start")}, {"end", full("end")}});
    }
  } else if (it != calendar.end() && !it->is_null()) {
    times = *it;
  }
  out["excludedTimes"] = std::move(times);
  return out;
}

// The fields in which `file` differs from `stored`, in the API's names.
std::vector<std::string> calendar_changes(const json& stored, const json& file) {
  const json have = comparable_calendar(stored);
  const json want = comparable_calendar(file);
  std::vector<std::string> changed;
  for (const char* key : {"description", "timeZone", "businessDays", "excludedDates", "includedDates", "excludedTimes"}) {
    if (have.at(key) != want.at(key)) changed.push_back(key);
  }
  return changed;
}

int create_calendar(Context& ctx, const std::string& file) {
  const json body = calendar_file_body(file);
  const std::string name = body["name"].get<std::string>();
  return ctx.about(name, [&] {
    const json created = ctx.api().post("calendars", body);
    if (ctx.format() != OutputFormat::kTable) {
      print_document(ctx.out(), ctx.format(), created);
    } else {
      ctx.out() << "calendar " << cell_text(name) << " created (id " << int_member(created, "id") << ")\n";
    }
    return kExitOk;
  });
}

int apply_calendar(Context& ctx, const std::string& file) {
  json body = calendar_file_body(file);
  const std::string name = body["name"].get<std::string>();
  return ctx.about(name, [&] {
    ApiClient& api = ctx.api();
    const json page = api.get("calendars" + query_string({{"name", name}, {"limit", "2"}}));
    const json& items = array_member(page, "items");
    if (items.size() > 1) throw unexpected_answer("two calendars named " + name);
    json result;
    std::string line;
    if (items.empty()) {
      result = api.post("calendars", body);
      line = "calendar " + cell_text(name) + " created (id " + std::to_string(int_member(result, "id")) + ")";
    } else {
      const json& stored = items.front();
      const auto version = int_member(stored, "version");
      const auto changed = calendar_changes(stored, body);
      if (changed.empty()) {
        result = stored;
        line = "calendar " + cell_text(name) + " unchanged (version " + std::to_string(version) + ")";
      } else {
        // Guarded by the version just read: a change made meanwhile is a 409, not overwritten.
        body["version"] = version;
        result = api.put(calendar_path(stored), body);
        std::string fields;
        for (const auto& f : changed) fields += (fields.empty() ? "" : ", ") + f;
        line = "calendar " + cell_text(name) + " updated (version " + std::to_string(version) + " \u2192 " +
               std::to_string(int_member(result, "version")) + "): " + fields;
      }
    }
    if (ctx.format() != OutputFormat::kTable) {
      print_document(ctx.out(), ctx.format(), result);
    } else {
      ctx.out() << line << "\n";
    }
    return kExitOk;
  });
}

// ---- calendars delete NAME...

int delete_calendars(Context& ctx, const std::vector<std::string>& texts) {
  ApiClient& api = ctx.api();
  json answers = json::array();
  int failures = 0;
  for (const std::string& text : texts) {
    try {
      const json calendar = resolve_calendar(api, text);
      api.remove(calendar_path(calendar));
      const auto id = int_member(calendar, "id");
      if (ctx.format() == OutputFormat::kTable) {
        ctx.out() << "calendar " << cell_text(string_member(calendar, "name")) << " (" << id << ") deleted\n";
      }
      answers.push_back({{"id", id}, {"name", string_member(calendar, "name")}});
    } catch (const CliError& e) {
      ctx.report(text, e);
      ++failures;
      if (e.names_its_subject()) break;  // no answer from the server: the next would say the same
    }
  }
  print_document(ctx.out(), ctx.format(), answers);
  return failures == 0 ? kExitOk : kExitFailed;
}

// ---- calendars import NAME --ics FILE

struct ImportOptions {
  std::string calendar;
  std::string file;
  std::string source;  // empty: the server's default ("ics")
  int horizon_days = 0;  // 0: the server's default
};

int import_calendar(Context& ctx, const ImportOptions& options) {
  std::string text;
  try {
    text = read_regular_file(options.file, kMaxIcsFileBytes);
  } catch (const std::runtime_error& e) {
    throw operation_failed(one_line(options.file, 400) + ": " + e.what());
  }
  return ctx.about(options.calendar, [&] {
    ApiClient& api = ctx.api();
    const json calendar = resolve_calendar(api, options.calendar);
    QueryParameters query;
    if (!options.source.empty()) query.emplace_back("source", options.source);
    if (options.horizon_days > 0) query.emplace_back("horizonDays", std::to_string(options.horizon_days));
    // The version just read: an import over a change made meanwhile is a 409.
    query.emplace_back("version", std::to_string(int_member(calendar, "version")));
    ApiRequest request;
    request.method = "POST";
    request.target = calendar_path(calendar) + "/import" + query_string(query);
    request.body = std::move(text);
    request.content_type = "text/calendar";
    const ApiAnswer answer = api.request(std::move(request));
    auto parsed = parse_json_file(answer.body, 64);
    if (!std::holds_alternative<json>(parsed)) throw unexpected_answer("not JSON");
    const json result = std::move(std::get<json>(parsed));
    const json& saved = member(result, "calendar");
    const auto imported = int_member(result, "datesImported");
    const auto timed = int_member(result, "timedEventsIgnored");
    const auto outside = int_member(result, "datesOutsideWindow");
    if (ctx.format() != OutputFormat::kTable) {
      print_document(ctx.out(), ctx.format(), result);
      return kExitOk;
    }
    ctx.out() << "calendar " << cell_text(string_member(saved, "name")) << ": " << imported
              << (imported == 1 ? " date" : " dates") << " from source " << cell_text(string_member(result, "source"))
              << " (version " << int_member(saved, "version") << ")\n";
    if (timed > 0) {
      ctx.out() << "  " << timed << (timed == 1 ? " event" : " events") << " with a time of day ignored (a calendar holds days)\n";
    }
    if (outside > 0) {
      ctx.out() << "  " << outside << (outside == 1 ? " date" : " dates")
                << " outside the window not imported (--horizon-days widens it)\n";
    }
    return kExitOk;
  });
}

// ---- calendars export NAME [-o FILE]

struct ExportOptions {
  std::string calendar;
  std::string file;
};

int export_calendar(Context& ctx, const ExportOptions& options) {
  return ctx.about(options.calendar, [&] {
    ApiClient& api = ctx.api();
    const json calendar = resolve_calendar(api, options.calendar);
    ApiRequest request;
    request.target = calendar_path(calendar) + "/export";
    request.accept = "text/calendar";
    const ApiAnswer answer = api.request(std::move(request));
    // Only an iCalendar file is written (not a proxy's page).
    if (answer.body.rfind("BEGIN:VCALENDAR", 0) != 0) throw unexpected_answer("not an iCalendar file");
    if (options.file.empty()) {
      ctx.out() << answer.body;
      return kExitOk;
    }
    write_file_atomically(options.file, answer.body);
    ctx.err() << "exported calendar " << cell_text(string_member(calendar, "name")) << " ("
              << count_of(calendar, "excludedDates") << " excluded dates) to " << one_line(options.file, 400) << "\n";
    return kExitOk;
  });
}

// ---- calendars days NAME [--year Y]

struct DaysOptions {
  std::string calendar;
  int year = 0;  // 0: this year in the calendar's zone
};

// One day of the year view: its mark and its name.
struct DayCell {
  char mark = ' ';  // ' ': no such day in the month
  std::string state;
  std::string name;
};

char mark_of(const std::string& state) {
  if (state == "business") return '.';
  if (state == "weekend") return '-';
  if (state == "excluded") return 'x';
  if (state == "included") return '+';
  throw unexpected_answer("unknown day state '" + one_line(state, 40) + "'");
}

// The year view: a row a month, a column a day of the month, each a mark; then the excluded and
// included days with their names, a run of days of one name on one line.
void print_year(std::ostream& out, const json& calendar, const json& answer) {
  const auto year = int_member(answer, "year");
  const json& days = array_member(answer, "days");
  if (days.size() > 366) throw unexpected_answer("more than 366 days in a year");
  // Twelve months of 31 cells, on the heap: clang 14 (the sanitizer build's compiler) crashes
  // value-initialising a nested std::array of this struct.
  std::vector<std::vector<DayCell>> grid(12, std::vector<DayCell>(31));
  for (const json& day : days) {
    const std::string date = string_member(day, "date");
    const bool shaped = date.size() == 10 && date[4] == '-' && date[7] == '-' &&
                        std::all_of(date.begin(), date.end(), [](char c) { return c == '-' || (c >= '0' && c <= '9'); });
    const int month = shaped ? std::stoi(date.substr(5, 2)) : 0;
    const int d = shaped ? std::stoi(date.substr(8, 2)) : 0;
    if (!shaped || std::stoi(date.substr(0, 4)) != year || month < 1 || month > 12 || d < 1 || d > 31) {
      throw unexpected_answer("a day '" + one_line(date, 40) + "' not of " + std::to_string(year));
    }
    DayCell& cell = grid[static_cast<std::size_t>(month - 1)][static_cast<std::size_t>(d - 1)];
    cell.state = string_member(day, "state");
    cell.mark = mark_of(cell.state);
    cell.name = text_of(day, "name");
  }

  out << "calendar " << cell_text(string_member(calendar, "name")) << ", " << year << ", days in "
      << cell_text(text_of(answer, "timeZone")) << "\n";
  std::string tens = "     ", units = "     ";
  for (int d = 1; d <= 31; ++d) {
    tens += d < 10 ? ' ' : static_cast<char>('0' + d / 10);
    units += static_cast<char>('0' + d % 10);
  }
  out << tens << "\n" << units << "\n";
  for (std::size_t m = 0; m < 12; ++m) {
    std::string row = std::string(kMonthShort[m]) + "  ";
    for (const DayCell& cell : grid[m]) row += cell.mark;
    while (!row.empty() && row.back() == ' ') row.pop_back();
    out << row << "\n";
  }
  out << "     x excluded  + included (a make-up day)  - not a business weekday  . business day\n";
  const std::string times = times_text(calendar);
  if (!times.empty()) out << "     and every day no fire in " << times << "\n";

  // The named days, consecutive ones of one state and name as one line.
  Table table({"DAYS", "", "NAME"});
  auto date_text = [&](std::size_t m, std::size_t d) {
    char text[16];
    std::snprintf(text, sizeof text, "%04d-%02zu-%02zu", static_cast<int>(year % 10000), m + 1, d + 1);
    return std::string(text);
  };
  std::optional<std::pair<std::size_t, std::size_t>> first, last;
  const DayCell* run = nullptr;
  auto flush = [&] {
    if (run == nullptr) return;
    std::string days_text = date_text(first->first, first->second);
    if (*last != *first) days_text += ".." + date_text(last->first, last->second);
    table.add_row({days_text, std::string(1, run->mark), cell_text(run->name.empty() ? "-" : run->name)});
    run = nullptr;
  };
  for (std::size_t m = 0; m < 12; ++m) {
    for (std::size_t d = 0; d < 31; ++d) {
      const DayCell& cell = grid[m][d];
      if (cell.mark == ' ') continue;  // no such day: the month goes on into the next
      if (cell.state != "excluded" && cell.state != "included") {
        flush();
        continue;
      }
      if (run != nullptr && run->state == cell.state && run->name == cell.name) {
        last = {m, d};
        continue;
      }
      flush();
      run = &cell;
      first = last = std::pair{m, d};
    }
  }
  flush();
  if (table.rows() > 0) {
    out << "\n";
    table.print(out);
  }
}

int calendar_days(Context& ctx, const DaysOptions& options) {
  return ctx.about(options.calendar, [&] {
    ApiClient& api = ctx.api();
    const json calendar = resolve_calendar(api, options.calendar);
    QueryParameters query;
    if (options.year > 0) query.emplace_back("year", std::to_string(options.year));
    const json answer = api.get(calendar_path(calendar) + "/days" + query_string(query));
    if (ctx.format() != OutputFormat::kTable) {
      print_document(ctx.out(), ctx.format(), answer);
      return kExitOk;
    }
    print_year(ctx.out(), calendar, answer);
    return kExitOk;
  });
}

constexpr const char* kCalendarArgument =
    "  CAL  the calendar's name, or its numeric id (a name is looked up first)\n\n";

}  // namespace

void add_calendars_commands(CommandLine& command_line) {
  CLI::App* calendars = command_line.add_group(
      "calendars", "List, show, create, apply, delete, import and export business calendars");

  {
    auto options = std::make_shared<ListOptions>();
    CLI::App* list = command_line.add_command(
        *calendars, "list", "List business calendars, by name",
        "Lists the calendars (every user may read them; jobs and workflows of every group name\n"
        "them): id, name, time zone, business weekdays, how many excluded and included dates,\n"
        "the excluded times of every day and the description. -o json and -o yaml print the\n"
        "API's page as answered, every calendar whole.\n\n"
        "EXAMPLES\n"
        "  cronwheel calendars list\n"
        "  cronwheel calendars list --search holidays -o json\n",
        [options](Context& ctx) { return list_calendars(ctx, *options); });
    list->add_option("--search", options->search, "Text in the name or description")
        ->type_name("TEXT")
        ->check(bounded_text_check());
    add_limit_option(*list, options->limit, "calendars");
  }

  {
    auto calendar = std::make_shared<std::string>();
    CLI::App* get = command_line.add_command(
        *calendars, "get", "Show one calendar with its dates",
        "Shows the calendar's settings, then its excluded and included dates, each with its name\n"
        "and the import that brought it (- for a date entered by hand). -o json prints the\n"
        "calendar as the API answers it, which `cronwheel calendars apply -f` takes back.\n\n"
        "ARGUMENTS\n" +
            std::string(kCalendarArgument) +
            "EXAMPLES\n"
            "  cronwheel calendars get cn-holidays\n"
            "  cronwheel calendars get cn-holidays -o json > cn-holidays.json\n",
        [calendar](Context& ctx) { return get_calendar(ctx, *calendar); });
    get->add_option("CAL", *calendar, "The calendar: its name or id")->required()->check(calendar_ref_check());
  }

  {
    auto file = std::make_shared<std::string>();
    CLI::App* create = command_line.add_command(
        *calendars, "create", "Create a calendar from a file",
        "Creates the calendar in FILE: JSON, the body POST /api/v1/calendars takes (name,\n"
        "description, timeZone, businessDays, excludedDates, includedDates, excludedTimes; see\n"
        "docs/scheduling.md, Calendars), or what `cronwheel calendars get CAL -o json` printed, whose\n"
        "id, version, times and dates' sources are left out. A name that is taken is refused:\n"
        "`calendars apply` creates or updates. Needs the admin role. FILE is at most 4 MiB.\n\n"
        "ARGUMENTS\n"
        "  -f FILE  the calendar, as JSON\n\n"
        "EXAMPLES\n"
        "  cronwheel calendars create -f cn-holidays.json\n",
        [file](Context& ctx) { return create_calendar(ctx, *file); });
    create->add_option("-f,--file", *file, "The calendar file (JSON)")->type_name("FILE")->required()->check(bounded_text_check());
  }

  {
    auto file = std::make_shared<std::string>();
    CLI::App* apply = command_line.add_command(
        *calendars, "apply", "Create a calendar, or make it match a file",
        "Makes the calendar named in FILE (JSON, as `calendars create` takes it) match the file: it\n"
        "is created when no calendar has its name, updated when it differs (the whole calendar is\n"
        "replaced, guarded by the version just read, so a change made meanwhile is refused, not\n"
        "overwritten), and left alone when it matches. Prints which, with the fields that\n"
        "changed. Dates given again keep the import they came from, so a later `calendars import`\n"
        "of that source still replaces them. Running jobs and workflows naming a calendar whose\n"
        "rules changed are re-timed by the server. Needs the admin role to create or update.\n\n"
        "ARGUMENTS\n"
        "  -f FILE  the calendar, as JSON\n\n"
        "EXAMPLES\n"
        "  cronwheel calendars apply -f cn-holidays.json\n"
        "  cronwheel calendars get cn-holidays -o json > cn.json   # edit cn.json, then:\n"
        "  cronwheel calendars apply -f cn.json\n",
        [file](Context& ctx) { return apply_calendar(ctx, *file); });
    apply->add_option("-f,--file", *file, "The calendar file (JSON)")->type_name("FILE")->required()->check(bounded_text_check());
  }

  {
    auto texts = std::make_shared<std::vector<std::string>>();
    CLI::App* remove = command_line.add_command(
        *calendars, "delete", "Delete calendars with their dates and times",
        "Deletes each calendar; this cannot be undone. A calendar that a job or workflow names is\n"
        "not deleted: the server says which name it (give them another calendar, or none, first).\n"
        "Each calendar is its own call; a line is printed for each, and the calendars after a\n"
        "failed one are still deleted. Needs the admin role.\n\n"
        "ARGUMENTS\n"
        "  CAL...  calendars, each its name or numeric id\n\n"
        "EXAMPLES\n"
        "  cronwheel calendars delete old-holidays\n\n"
        "A calendar that could not be deleted makes the exit status 1, after every one was tried.\n",
        [texts](Context& ctx) { return delete_calendars(ctx, *texts); });
    remove->add_option("CAL", *texts, "Calendars: names or ids")->required()->check(calendar_ref_check());
  }

  {
    auto options = std::make_shared<ImportOptions>();
    CLI::App* import = command_line.add_command(
        *calendars, "import", "Import an iCalendar file's all-day events as excluded dates",
        "Sends the .ics file (RFC 5545, at most 4 MiB) to the calendar: every all-day event gives\n"
        "its days as excluded dates named by its summary; recurring events are expanded over\n"
        "--horizon-days from today (default 1096, about 3 years), a plain yearly event becomes a\n"
        "date of every year; events with a time of day are ignored and counted. The dates replace\n"
        "those the previous import of the same --source brought (default ics); dates entered by\n"
        "hand and other sources' stay. Guarded by the calendar's version just read. Prints how\n"
        "many dates the source now gives. Needs the admin role.\n\n"
        "ARGUMENTS\n" +
            std::string(kCalendarArgument) +
            "  --ics FILE  the iCalendar file\n\n"
            "EXAMPLES\n"
            "  cronwheel calendars import cn-holidays --ics china-holidays.ics --source gov-cn\n"
            "  cronwheel calendars days cn-holidays\n",
        [options](Context& ctx) { return import_calendar(ctx, *options); });
    import->add_option("CAL", options->calendar, "The calendar: its name or id")->required()->check(calendar_ref_check());
    import->add_option("--ics", options->file, "The iCalendar (.ics) file")->type_name("FILE")->required()->check(bounded_text_check());
    import->add_option("--source", options->source, "The import's name, which a later import of it replaces (default ics)")
        ->type_name("S")
        ->check(import_source_check());
    import->add_option("--horizon-days", options->horizon_days, "Days from today recurring events are expanded over")
        ->type_name("N")
        ->check(CLI::Range(1, kMaxHorizonDays));
  }

  {
    auto options = std::make_shared<ExportOptions>();
    CLI::App* exported = command_line.add_command(
        *calendars, "export", "Write a calendar's excluded dates as an iCalendar file",
        "Writes the calendar's excluded dates as an .ics file (one all-day event a date, a date of\n"
        "every year as a yearly event, with stable UIDs: importing it back gives the same days),\n"
        "to stdout or to FILE, which is replaced whole (written beside it, then renamed). Included\n"
        "dates, the weekly rule and the excluded times are not in it: iCalendar has no place for\n"
        "them (`calendars get CAL -o json` has everything).\n\n"
        "ARGUMENTS\n" +
            std::string(kCalendarArgument) +
            "EXAMPLES\n"
            "  cronwheel calendars export cn-holidays -o cn-holidays.ics\n",
        [options](Context& ctx) { return export_calendar(ctx, *options); });
    exported->add_option("CAL", options->calendar, "The calendar: its name or id")->required()->check(calendar_ref_check());
    exported->add_option("-o,--output", options->file, "Write the file here instead of stdout")
        ->type_name("FILE")
        ->check(bounded_text_check());
  }

  {
    auto options = std::make_shared<DaysOptions>();
    CLI::App* days = command_line.add_command(
        *calendars, "days", "Show a year of a calendar, a month a line",
        "Shows every day of the year as the calendar makes it, in the calendar's time zone: a row a\n"
        "month, a column a day of the month, marked x (an excluded date), + (an included date: a\n"
        "make-up working day), - (a weekday the weekly rule leaves out) or . (a business day);\n"
        "then the excluded and included days with their names, a run of days of one name on one\n"
        "line. Excluded times apply within every day and are said below the months. -o json and\n"
        "-o yaml print the API's answer (every day with its state and name).\n\n"
        "ARGUMENTS\n" +
            std::string(kCalendarArgument) +
            "EXAMPLES\n"
            "  cronwheel calendars days cn-holidays\n"
            "  cronwheel calendars days cn-holidays --year 2027\n",
        [options](Context& ctx) { return calendar_days(ctx, *options); });
    days->add_option("CAL", options->calendar, "The calendar: its name or id")->required()->check(calendar_ref_check());
    days->add_option("--year", options->year, "The year (default: this year in the calendar's zone)")
        ->type_name("Y")
        ->check(CLI::Range(1970, 2999));
  }
}

}  // namespace cronwheel::cli
