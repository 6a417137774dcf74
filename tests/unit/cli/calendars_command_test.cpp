// `cronwheel calendars` against a scripted API: arguments refused before anything is sent, a
// calendar found by name (or by id when no calendar has that name), what is sent (a file's body
// without what the server keeps, the version just read, an .ics file as text/calendar), what is
// printed (tables, the year view, the API's objects), and apply's create, update or nothing.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/temp_dir.h"
#include "tests/unit/cli/cli_harness.h"

namespace cronwheel::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::CliResult;
using testing::page_of;

// A calendar as the API answers it: China's holidays of 2026, working Monday to Friday.
json cn_json(int version = 3) {
  return {{"id", 7},
          {"name", "cn-holidays"},
          {"description", "Mainland China"},
          {"timeZone", "Asia/Shanghai"},
          {"businessDays", json::array({"MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY"})},
          {"excludedDates",
           json::array({{{"date", "--01-01"}, {"name", "New Year"}, {"source", ""}, {"sourceUid", ""}},
                        {{"date", "2026-10-01"}, {"name", "National Day"}, {"source", "gov-cn"}, {"sourceUid", "nd-2026"}},
                        {{"date", "2026-10-02"}, {"name", "National Day"}, {"source", "gov-cn"}, {"sourceUid", "nd-2026"}}})},
          {"includedDates", json::array({{{"date", "2026-09-27"}, {"name", "Make-up day"}, {"source", ""}, {"sourceUid", ""}}})},
          {"excludedTimes", json::array({{{"start", "12:00:00"}, {"end", "13:00:00"}}})},
          {"version", version},
          {"createdAt", 1767139200000},
          {"updatedAt", 1767225600000}};
}

const char* const kByName = "GET api/v1/calendars?name=cn-holidays&limit=2";

class CalendarsCommandTest : public testing::CliCommandTest {
 protected:
  void name_cn(int version = 3) { cli_.api.answer(kByName, 200, page_of(json::array({cn_json(version)}))); }

  std::string write(const std::string& name, const std::string& text) {
    const fs::path path = dir_.path() / name;
    std::ofstream(path, std::ios::binary) << text;
    return path.string();
  }

  static std::string read(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  // The body of the last request sent, as JSON.
  json last_body() const {
    const auto& requests = cli_.api.requests();
    return requests.empty() || !requests.back().body ? json() : json::parse(*requests.back().body);
  }

  testing::TempDir dir_{"cronwheel-calendars-test"};
};

// ---- arguments and names

TEST_F(CalendarsCommandTest, BadArgumentsAreBadUsageBeforeAnythingIsSent) {
  expect_usage_error({"calendars", "get"}, "cronwheel: calendars get: CAL is required");
  expect_usage_error({"calendars", "get", "CN Holidays"},
                     "cronwheel: calendars get: CAL: 'CN Holidays': a calendar is its name (1-64 of a-z, 0-9, '.', '_' and "
                     "'-', starting with a letter or digit) or its numeric id");
  expect_usage_error({"calendars", "import", "cn-holidays"}, "cronwheel: calendars import: --ics is required");
  expect_usage_error({"calendars", "import", "cn-holidays", "--ics", "x.ics", "--source", "Gov"},
                     "cronwheel: calendars import: --source: 'Gov': a source is 1-64 of a-z, 0-9, '.', '_' and '-', "
                     "starting with a letter or digit");
  expect_usage_error({"calendars", "import", "cn-holidays", "--ics", "x.ics", "--horizon-days", "0"},
                     "cronwheel: calendars import: --horizon-days: Value 0 not in range 1 to 7305");
  expect_usage_error({"calendars", "days", "cn-holidays", "--year", "1969"},
                     "cronwheel: calendars days: --year: Value 1969 not in range 1970 to 2999");
  expect_usage_error({"calendars", "create"}, "cronwheel: calendars create: --file is required");
  expect_usage_error({"calendars"},
                     "cronwheel: calendars: a command is required: list, get, create, apply, delete, import, export, days "
                     "(see cronwheel calendars --help)");
}

TEST_F(CalendarsCommandTest, ANameIsLookedUpAndAnIdUsedWhenNoCalendarHasThatName) {
  name_cn();
  CliResult r = cli_.run({"calendars", "get", "cn-holidays", "-o", "json"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(json::parse(r.out), cn_json());
  EXPECT_EQ(cli_.api.calls(), (std::vector<std::string>{kByName}));

  cli_.api.answer("GET api/v1/calendars?name=7&limit=2", 200, page_of(json::array()));
  cli_.api.answer("GET api/v1/calendars/7", 200, cn_json());
  r = cli_.run({"calendars", "get", "7", "-o", "yaml"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\nname: cn-holidays\n"), std::string::npos) << r.out;

  // A calendar named with digits is that one, not the calendar of that id.
  json named_2026 = cn_json();
  named_2026["id"] = 9;
  named_2026["name"] = "2026";
  cli_.api.answer("GET api/v1/calendars?name=2026&limit=2", 200, page_of(json::array({named_2026})));
  r = cli_.run({"calendars", "get", "2026", "-o", "json"});
  EXPECT_EQ(json::parse(r.out)["id"], 9);
  EXPECT_EQ(cli_.api.calls().back(), "GET api/v1/calendars?name=2026&limit=2");
}

TEST_F(CalendarsCommandTest, AnUnknownCalendarSaysSoInOneLine) {
  cli_.api.answer("GET api/v1/calendars?name=gone&limit=2", 200, page_of(json::array()));
  CliResult r = cli_.run({"calendars", "days", "gone"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "cronwheel: calendars days gone: no such calendar\n");
  EXPECT_EQ(r.out, "");

  cli_.api.answer("GET api/v1/calendars?name=42&limit=2", 200, page_of(json::array()));
  cli_.api.error("GET api/v1/calendars/42", 404, "not_found", "no such calendar 42");
  r = cli_.run({"calendars", "get", "42"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "cronwheel: calendars get 42: no such calendar\n");

  cli_.api.answer(kByName, 200, page_of(json::array({cn_json(), cn_json()})));
  r = cli_.run({"calendars", "get", "cn-holidays"});
  EXPECT_EQ(r.err, "cronwheel: calendars get cn-holidays: unexpected answer from the server: two calendars named cn-holidays\n");
}

// ---- list and get

TEST_F(CalendarsCommandTest, ListPrintsATableAndSaysWhenThePageIsPartial) {
  json every_day{{"id", 8},
                 {"name", "maintenance"},
                 {"description", ""},
                 {"timeZone", "UTC"},
                 {"businessDays", nullptr},
                 {"excludedDates", json::array()},
                 {"includedDates", json::array()},
                 {"excludedTimes", json::array({{{"start", "23:00:00"}, {"end", "01:30:15"}}})}};
  json weekends = every_day;
  weekends["id"] = 9;
  weekends["name"] = "weekends";
  weekends["businessDays"] = json::array({"MONDAY", "WEDNESDAY", "SATURDAY"});
  weekends["excludedTimes"] = json::array();
  json page = page_of(json::array({cn_json(), every_day, weekends}));
  page["total"] = 5;
  cli_.api.answer("GET api/v1/calendars?text=a&limit=3", 200, page);
  const CliResult r = cli_.run({"calendars", "list", "--search", "a", "--limit", "3"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "ID  NAME         ZONE           BUSINESS DAYS  EXCLUDED  INCLUDED  EXCLUDED TIMES  DESCRIPTION\n"
            "7   cn-holidays  Asia/Shanghai  Mon-Fri        3         1         12:00-13:00     Mainland China\n"
            "8   maintenance  UTC            every day      0         0         23:00-01:30:15\n"
            "9   weekends     UTC            Mon, Wed, Sat  0         0         -\n");
  EXPECT_EQ(r.err, "(3 of 5 calendars shown; --limit shows up to 1000)\n");
}

TEST_F(CalendarsCommandTest, GetPrintsTheSettingsThenTheDatesWithTheirSources) {
  name_cn();
  const CliResult r = cli_.run({"calendars", "get", "cn-holidays"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "ID:              7\n"
            "Name:            cn-holidays\n"
            "Description:     Mainland China\n"
            "Time zone:       Asia/Shanghai\n"
            "Business days:   Mon-Fri\n"
            "Excluded times:  12:00-13:00 (every day)\n"
            "Version:         3\n"
            "Updated:         2026-01-01T00:00:00+00:00\n"
            "\n"
            "EXCLUDED    NAME          SOURCE\n"
            "--01-01     New Year      -\n"
            "2026-10-01  National Day  gov-cn\n"
            "2026-10-02  National Day  gov-cn\n"
            "\n"
            "INCLUDED    NAME         SOURCE\n"
            "2026-09-27  Make-up day  -\n");
}

// ---- create and apply

TEST_F(CalendarsCommandTest, CreateSendsTheFileLessWhatTheServerKeeps) {
  const auto file = write("cn.json", cn_json().dump(2));
  cli_.api.answer("POST api/v1/calendars", 201, cn_json(1));
  const CliResult r = cli_.run({"calendars", "create", "-f", file});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "calendar cn-holidays created (id 7)\n");
  const json sent = last_body();
  for (const char* kept : {"id", "version", "createdAt", "updatedAt"}) EXPECT_FALSE(sent.contains(kept)) << kept;
  EXPECT_EQ(sent["excludedDates"][1], json({{"date", "2026-10-01"}, {"name", "National Day"}}));
  EXPECT_EQ(sent["timeZone"], "Asia/Shanghai");
}

TEST_F(CalendarsCommandTest, AFileThatIsNotACalendarIsSaidWithItsPlaceAndNothingIsSent) {
  const auto broken = write("broken.json", "{\n  \"name\": \"cn\",\n  \"timeZone\" \"UTC\"\n}\n");
  CliResult r = cli_.run({"calendars", "apply", "-f", broken});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err.rfind("cronwheel: calendars apply: " + broken + ":3:18: not JSON: syntax error", 0), 0u) << r.err;
  const auto nameless = write("nameless.json", R"({"timeZone": "UTC"})");
  r = cli_.run({"calendars", "create", "-f", nameless});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("a calendar is one JSON object with its name"), std::string::npos) << r.err;
  r = cli_.run({"calendars", "create", "-f", (dir_.path() / "missing.json").string()});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("missing.json: no such file"), std::string::npos) << r.err;
  const auto deep = write("deep.json", std::string(100, '[') + std::string(100, ']'));
  r = cli_.run({"calendars", "create", "-f", deep});
  EXPECT_NE(r.err.find("JSON nested deeper than 8"), std::string::npos) << r.err;
  EXPECT_TRUE(cli_.api.calls().empty());
}

TEST_F(CalendarsCommandTest, ApplyCreatesACalendarTheServerLacks) {
  cli_.api.answer(kByName, 200, page_of(json::array()));
  cli_.api.answer("POST api/v1/calendars", 201, cn_json(1));
  const CliResult r = cli_.run({"calendars", "apply", "-f", write("cn.json", cn_json().dump())});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "calendar cn-holidays created (id 7)\n");
  EXPECT_EQ(cli_.api.calls(), (std::vector<std::string>{kByName, "POST api/v1/calendars"}));
}

TEST_F(CalendarsCommandTest, ApplyOfWhatTheServerHasChangesNothing) {
  // Written another way: times without seconds, dates in another order and without their
  // sources, names with spaces around, the zone and the weekly rule as the server has them.
  json file{{"name", "cn-holidays"},
            {"description", " Mainland China "},
            {"timeZone", "Asia/Shanghai"},
            {"businessDays", json::array({"FRIDAY", "MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY"})},
            {"excludedDates", json::array({{{"date", "2026-10-02"}, {"name", "National Day"}},
                                           {{"date", "2026-10-01"}, {"name", "National Day "}},
                                           {{"date", "--01-01"}, {"name", "New Year"}}})},
            {"includedDates", json::array({{{"date", "2026-09-27"}, {"name", "Make-up day"}}})},
            {"excludedTimes", json::array({{{"start", "12:00"}, {"end", "13:00"}}})}};
  name_cn();
  CliResult r = cli_.run({"calendars", "apply", "-f", write("cn.json", file.dump())});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "calendar cn-holidays unchanged (version 3)\n");
  EXPECT_EQ(cli_.api.calls(), (std::vector<std::string>{kByName}));

  // What `get -o json` printed applies back as no change.
  r = cli_.run({"calendars", "apply", "-f", write("got.json", cn_json().dump())});
  EXPECT_EQ(r.out, "calendar cn-holidays unchanged (version 3)\n");
}

TEST_F(CalendarsCommandTest, ApplyUpdatesWithTheVersionItReadAndSaysWhatChanged) {
  json file = cn_json();
  file["excludedDates"].push_back({{"date", "2026-10-03"}, {"name", "National Day"}});
  file["timeZone"] = "Asia/Hong_Kong";
  name_cn();
  cli_.api.answer("PUT api/v1/calendars/7", 200, cn_json(4));
  // The second apply finds the calendar changed meanwhile.
  cli_.api.error("PUT api/v1/calendars/7", 409, "conflict", "calendar cn-holidays was changed meanwhile (version 5, not 3)");
  CliResult r = cli_.run({"calendars", "apply", "-f", write("cn.json", file.dump())});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "calendar cn-holidays updated (version 3 \u2192 4): timeZone, excludedDates\n");
  const json sent = last_body();
  EXPECT_EQ(sent["version"], 3);
  EXPECT_EQ(sent["excludedDates"].size(), 4u);
  EXPECT_FALSE(sent["excludedDates"][1].contains("source")) << "an import's dates keep their source on the server";

  // Changed meanwhile: the server's refusal, in one line.
  r = cli_.run({"calendars", "apply", "-f", write("cn.json", file.dump())});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err,
            "cronwheel: calendars apply cn-holidays: calendar cn-holidays was changed meanwhile (version 5, not 3) (HTTP 409)\n");
}

// ---- delete

TEST_F(CalendarsCommandTest, DeleteTriesEveryCalendarAndFailsIfAnyFailed) {
  name_cn();
  json other = cn_json();
  other["id"] = 8;
  other["name"] = "old";
  cli_.api.answer("GET api/v1/calendars?name=old&limit=2", 200, page_of(json::array({other})));
  cli_.api.error("DELETE api/v1/calendars/7", 409, "conflict", "calendar cn-holidays is named by job billing/nightly");
  cli_.api.answer("DELETE api/v1/calendars/8", 204, nullptr);
  const CliResult r = cli_.run({"calendars", "delete", "cn-holidays", "old"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "calendar old (8) deleted\n");
  EXPECT_EQ(r.err, "cronwheel: calendars delete cn-holidays: calendar cn-holidays is named by job billing/nightly (HTTP 409)\n");
}

// ---- import, export

TEST_F(CalendarsCommandTest, ImportSendsTheIcsFileWithTheVersionItRead) {
  const std::string ics = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nEND:VCALENDAR\r\n";
  const auto file = write("cn.ics", ics);
  name_cn();
  const char* target = "POST api/v1/calendars/7/import?source=gov-cn&horizonDays=400&version=3";
  cli_.api.answer(target, 200, {{"calendar", cn_json(4)}, {"source", "gov-cn"}, {"datesImported", 2},
                                {"timedEventsIgnored", 1}, {"datesOutsideWindow", 3}});
  const CliResult r = cli_.run({"calendars", "import", "cn-holidays", "--ics", file, "--source", "gov-cn", "--horizon-days", "400"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "calendar cn-holidays: 2 dates from source gov-cn (version 4)\n"
            "  1 event with a time of day ignored (a calendar holds days)\n"
            "  3 dates outside the window not imported (--horizon-days widens it)\n");
  const auto& sent = cli_.api.requests().back();
  EXPECT_EQ(sent.content_type, "text/calendar");
  EXPECT_EQ(*sent.body, ics);
}

TEST_F(CalendarsCommandTest, ImportOfAFileTheServerRefusesSaysWhy) {
  const auto file = write("bad.ics", "not a calendar");
  name_cn();
  cli_.api.error("POST api/v1/calendars/7/import?version=3", 400, "invalid", "iCalendar file: line 1: not iCalendar");
  const CliResult r = cli_.run({"calendars", "import", "cn-holidays", "--ics", file});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "cronwheel: calendars import cn-holidays: iCalendar file: line 1: not iCalendar (HTTP 400)\n");
}

TEST_F(CalendarsCommandTest, ExportWritesTheIcsFileToStdoutOrReplacesAFile) {
  const std::string ics = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nEND:VCALENDAR\r\n";
  name_cn();
  cli_.api.answer_text("GET api/v1/calendars/7/export", 200, ics);
  cli_.api.answer_text("GET api/v1/calendars/7/export", 200, ics);
  cli_.api.answer_text("GET api/v1/calendars/7/export", 200, "<html>login</html>");
  CliResult r = cli_.run({"calendars", "export", "cn-holidays"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, ics);
  EXPECT_EQ(cli_.api.requests().back().accept, "text/calendar");

  const fs::path out = dir_.path() / "cn.ics";
  r = cli_.run({"calendars", "export", "cn-holidays", "-o", out.string()});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read(out), ics);
  EXPECT_EQ(r.err, "exported calendar cn-holidays (3 excluded dates) to " + out.string() + "\n");

  r = cli_.run({"calendars", "export", "cn-holidays", "-o", out.string()});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(read(out), ics) << "the file is left as it was";
  EXPECT_NE(r.err.find("unexpected answer from the server: not an iCalendar file"), std::string::npos) << r.err;
}

// ---- days

// The days of 2026 as GET calendars/7/days answers them for cn_json(): weekends, New Year, the
// National Day holidays from 1 to 7 October, the make-up Sunday 27 September.
json days_2026() {
  using namespace std::chrono;
  json days = json::array();
  for (sys_days day = sys_days{2026y / January / 1}; day < sys_days{2027y / January / 1}; day += std::chrono::days{1}) {
    const year_month_day ymd{day};
    const unsigned m = static_cast<unsigned>(ymd.month()), d = static_cast<unsigned>(ymd.day());
    char date[16];
    std::snprintf(date, sizeof date, "2026-%02u-%02u", m, d);
    const unsigned iso_weekday = weekday{day}.iso_encoding();
    std::string state = iso_weekday >= 6 ? "weekend" : "business", name;
    if (m == 1 && d == 1) state = "excluded", name = "New Year";
    if (m == 10 && d <= 7) state = "excluded", name = "National Day";
    if (m == 9 && d == 27) state = "included", name = "Make-up day";
    days.push_back({{"date", date}, {"state", state}, {"name", name}});
  }
  return {{"year", 2026}, {"timeZone", "Asia/Shanghai"}, {"days", days}};
}

TEST_F(CalendarsCommandTest, DaysPrintsAMonthALineAndTheNamedDays) {
  name_cn();
  cli_.api.answer("GET api/v1/calendars/7/days?year=2026", 200, days_2026());
  const CliResult r = cli_.run({"calendars", "days", "cn-holidays", "--year", "2026"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "calendar cn-holidays, 2026, days in Asia/Shanghai\n"
            "              1111111111222222222233\n"
            "     1234567890123456789012345678901\n"
            "Jan  x.--.....--.....--.....--.....-\n"
            "Feb  -.....--.....--.....--.....-\n"
            "Mar  -.....--.....--.....--.....--..\n"
            "Apr  ...--.....--.....--.....--....\n"
            "May  .--.....--.....--.....--.....--\n"
            "Jun  .....--.....--.....--.....--..\n"
            "Jul  ...--.....--.....--.....--.....\n"
            "Aug  --.....--.....--.....--.....--.\n"
            "Sep  ....--.....--.....--.....-+...\n"
            "Oct  xxxxxxx..--.....--.....--.....-\n"
            "Nov  -.....--.....--.....--.....--.\n"
            "Dec  ....--.....--.....--.....--....\n"
            "     x excluded  + included (a make-up day)  - not a business weekday  . business day\n"
            "     and every day no fire in 12:00-13:00\n"
            "\n"
            "DAYS                       NAME\n"
            "2026-01-01              x  New Year\n"
            "2026-09-27              +  Make-up day\n"
            "2026-10-01..2026-10-07  x  National Day\n");
}

TEST_F(CalendarsCommandTest, DaysAsJsonIsTheAnswerAndAMalformedAnswerIsUnexpected) {
  name_cn();
  json other_year = days_2026();
  other_year["days"][40]["date"] = "2025-02-10";
  json unknown_state = days_2026();
  unknown_state["days"][3]["state"] = "holiday";
  for (const json& answer : {days_2026(), other_year, unknown_state}) cli_.api.answer("GET api/v1/calendars/7/days", 200, answer);
  CliResult r = cli_.run({"calendars", "days", "cn-holidays", "-o", "json"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(json::parse(r.out), days_2026());

  r = cli_.run({"calendars", "days", "cn-holidays"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("unexpected answer from the server: a day '2025-02-10' not of 2026"), std::string::npos) << r.err;

  r = cli_.run({"calendars", "days", "cn-holidays"});
  EXPECT_NE(r.err.find("unknown day state 'holiday'"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace cronwheel::cli
