// The calendars endpoints (admin/api/calendars_api.h) on a real HttpServer over FakeStores and a
// FakeCalendarStore: what each refuses and why, permissions, versions, .ics import and export, the
// year view, and running jobs and workflows re-timed when a calendar's rules change. Jobs' and
// workflows' own calendar fields: calendar_use_api_test.cpp.

#include "admin/api/calendars_api.h"

#include <gtest/gtest.h>

#include <chrono>

#include "common/cron/business_calendar.h"
#include "tests/unit/admin/api/calendar_api_fixture.h"

namespace cronwheel::admin {
namespace {

using nlohmann::json;

// The midnight after the fixture's start, 2023-11-14T22:13:20Z (a Tuesday).
constexpr std::int64_t kNov15Midnight = 1'700'006'400'000;  // 2023-11-15T00:00:00Z

// An .ics file of all-day events (date, UID, summary), and one timed event when asked.
std::string ics(const std::vector<std::tuple<std::string, std::string, std::string>>& events, bool timed = false) {
  std::string out = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//cronwheel tests//EN\r\n";
  for (const auto& [date, uid, summary] : events) {
    out += "BEGIN:VEVENT\r\nUID:" + uid + "\r\nDTSTAMP:20231101T000000Z\r\nDTSTART;VALUE=DATE:" + date +
           "\r\nSUMMARY:" + summary + "\r\nEND:VEVENT\r\n";
  }
  if (timed) {
    out += "BEGIN:VEVENT\r\nUID:meeting\r\nDTSTAMP:20231101T000000Z\r\nDTSTART:20240102T100000Z\r\n"
           "DTEND:20240102T110000Z\r\nSUMMARY:Meeting\r\nEND:VEVENT\r\n";
  }
  return out + "END:VCALENDAR\r\n";
}

class CalendarsApiTest : public CalendarApiFixture {
 protected:
  CalendarsApiTest() : CalendarApiFixture("cal-api") {}

  void add_more_routes(ApiRouter& router) override {
    CalendarApiFixture::add_more_routes(router);
    CalendarRoutes routes;
    routes.store = &calendars_;
    routes.workflows = &workflows_;
    add_calendar_routes(router, stores_, routes, clock_);
  }

  // POST calendars with `patch` merged into a minimal body; answers its id (0 when refused).
  std::int64_t calendar(const json& patch = json::object(), const std::string& name = "cn-holidays") {
    json body = {{"name", name}, {"timeZone", "UTC"}};
    body.update(patch);
    auto created = post("calendars", body);
    EXPECT_EQ(created.status, 201) << created.text;
    return created.body.value("id", std::int64_t{0});
  }

  static std::string path(std::int64_t id, const std::string& rest = "") { return "calendars/" + std::to_string(id) + rest; }

  // POST of a body that is not JSON (an .ics file).
  Answer post_text(const std::string& target, const std::string& body, const std::string& content_type,
                   const std::string& user = "admin") {
    httplib::Client client("127.0.0.1", server_->port());
    client.set_connection_timeout(5);
    client.set_read_timeout(30);
    httplib::Headers headers{{"Authorization", "Bearer " + user}};
    auto r = client.Post(("/api/v1/" + target).c_str(), headers, body, content_type.c_str());
    Answer a;
    if (!r) {
      ADD_FAILURE() << "POST " << target << ": no answer";
      return a;
    }
    a.status = r->status;
    a.text = r->body;
    a.body = json::parse(r->body, nullptr, false);
    return a;
  }

  Answer import(std::int64_t id, const std::string& file, int version, const std::string& source = "cn") {
    return post_text(path(id, "/import?source=" + source + "&version=" + std::to_string(version)), file, "text/calendar");
  }

  // The excluded dates of a calendar as "date name source", in its order.
  std::vector<std::string> excluded(std::int64_t id) {
    std::vector<std::string> out;
    const auto calendar = get(path(id));
    for (const auto& d : calendar.body["excludedDates"]) {
      out.push_back(d["date"].get<std::string>() + " " + d["name"].get<std::string>() + " " + d["source"].get<std::string>());
    }
    return out;
  }

};

TEST_F(CalendarsApiTest, CreatesACalendarAndAnswersItWhole) {
  auto created = post("calendars", {{"name", "cn-holidays"},
                                    {"description", "Mainland China"},
                                    {"timeZone", "Asia/Shanghai"},
                                    {"businessDays", {"MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY"}},
                                    {"excludedDates", {{{"date", "2026-10-01"}, {"name", "National Day"}},
                                                       {{"date", "--01-01"}, {"name", "New Year"}}}},
                                    {"includedDates", {{{"date", "2026-10-10"}, {"name", "Make-up day"}}}},
                                    {"excludedTimes", {{{"start", "23:00"}, {"end", "01:00:00"}}}}});
  ASSERT_EQ(created.status, 201) << created.text;
  const json& c = created.body;
  EXPECT_EQ(c["version"], 1);
  EXPECT_EQ(c["timeZone"], "Asia/Shanghai");
  EXPECT_EQ(c["businessDays"], json({"MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY"}));
  // Dates of every year first, then in date order; each entered by hand (no source).
  EXPECT_EQ(c["excludedDates"], json({{{"date", "--01-01"}, {"name", "New Year"}, {"source", ""}, {"sourceUid", ""}},
                                      {{"date", "2026-10-01"}, {"name", "National Day"}, {"source", ""}, {"sourceUid", ""}}}));
  EXPECT_EQ(c["includedDates"][0]["date"], "2026-10-10");
  EXPECT_EQ(c["excludedTimes"], json({{{"start", "23:00:00"}, {"end", "01:00:00"}}}));
  const auto id = c["id"].get<std::int64_t>();
  EXPECT_EQ(get(path(id)).body, c);
  EXPECT_EQ(get("calendars").body["items"], json::array({c}));
  EXPECT_EQ(get("calendars?name=cn-holidays").body["items"], json::array({c}));
  EXPECT_EQ(get("calendars?name=nowhere").body["total"], 0);
  EXPECT_EQ(get("calendars?text=MAINLAND").body["total"], 1);
  EXPECT_EQ(get("calendars?text=europe").body["total"], 0);
  EXPECT_EQ(get("calendars/999").status, 404);
  EXPECT_EQ(last_audit().action, "calendar.create");
}

TEST_F(CalendarsApiTest, EveryUserReadsOnlyAdminsChange) {
  const auto id = calendar();
  EXPECT_EQ(get("calendars", "alice").status, 200);
  EXPECT_EQ(get(path(id), "alice").status, 200);
  EXPECT_EQ(get(path(id, "/days?year=2026"), "alice").status, 200);
  EXPECT_EQ(get(path(id, "/export"), "alice").status, 200);
  EXPECT_EQ(post("calendars", {{"name", "mine"}}, "alice").status, 403);
  EXPECT_EQ(put(path(id), {{"name", "cn-holidays"}, {"version", 1}}, "alice").status, 403);
  EXPECT_EQ(post_text(path(id, "/import?version=1"), ics({}), "text/calendar", "alice").status, 403);
  EXPECT_EQ(del(path(id), "alice").status, 403);
  EXPECT_EQ(get(path(id), "").status, 401);
  EXPECT_EQ(get(path(id)).body["version"], 1) << "nothing changed";
}

TEST_F(CalendarsApiTest, RefusesEachRuleNamingTheField) {
  struct Case {
    const char* what;
    json patch;  // merged into {"name":"cal","timeZone":"UTC"}
    std::string field;
    std::string message_part;
  };
  json too_many = json::array();
  for (int i = 0; i < 5'001; ++i) too_many.push_back({{"date", "2026-01-01"}});
  const std::vector<Case> cases = {
      {"a bad name", {{"name", "Bad Name"}}, "name", "lower-case letters"},
      {"no name", {{"name", nullptr}}, "name", "is required"},
      {"an unknown zone", {{"timeZone", "Mars/Base"}}, "timeZone", "Mars/Base"},
      {"a date that does not exist", {{"excludedDates", {{{"date", "2026-02-30"}}}}}, "excludedDates[0]", "2026-02-30"},
      {"a date in another form", {{"excludedDates", {{{"date", "2026/10/01"}}}}}, "excludedDates[0].date",
       "expected YYYY-MM-DD, or --MM-DD"},
      {"a date with a short month", {{"excludedDates", {{{"date", "2026-1-011"}}}}}, "excludedDates[0].date",
       "expected YYYY-MM-DD, or --MM-DD"},
      {"a yearly date with a sign", {{"excludedDates", {{{"date", "--+1-01"}}}}}, "excludedDates[0].date",
       "expected YYYY-MM-DD, or --MM-DD"},
      {"a year out of range", {{"excludedDates", {{{"date", "1969-12-31"}}}}}, "excludedDates[0]", "1969"},
      {"an included date of every year", {{"includedDates", {{{"date", "--10-01"}}}}}, "includedDates[0]", ""},
      {"a day both excluded and included",
       {{"excludedDates", {{{"date", "--10-01"}}}}, {"includedDates", {{{"date", "2026-10-01"}}}}}, "includedDates[0]",
       "2026-10-01"},
      {"a weekday misspelt", {{"businessDays", {"MON"}}}, "businessDays", "businessDays[0]: expected MONDAY"},
      {"a weekday twice", {{"businessDays", {"MONDAY", "MONDAY"}}}, "businessDays", "listed twice"},
      {"no business day at all", {{"businessDays", json::array()}}, "businessDays", ""},
      {"times covering the day",
       {{"excludedTimes", {{{"start", "00:00:00"}, {"end", "12:00:00"}}, {{"start", "12:00:00"}, {"end", "00:00:00"}}}}},
       "excludedTimes", ""},
      {"a time of day out of range", {{"excludedTimes", {{{"start", "25:00"}, {"end", "01:00"}}}}},
       "excludedTimes[0].start", "HH:MM:SS"},
      {"a time of day with one digit", {{"excludedTimes", {{{"start", "9:00:00"}, {"end", "10:00"}}}}},
       "excludedTimes[0].start", "HH:MM:SS"},
      {"a time of day with a seconds field that is not one", {{"excludedTimes", {{{"start", "09:00-00"}, {"end", "10:00"}}}}},
       "excludedTimes[0].start", "HH:MM:SS"},
      {"a name of 65 characters", {{"name", std::string(65, 'a')}}, "name", "lower-case letters"},
      {"a time range without its end", {{"excludedTimes", {{{"start", "01:00"}}}}}, "excludedTimes[0].end", "is required"},
      {"more excluded dates than the rules hold", {{"excludedDates", too_many}}, "excludedDates", "at most 5000"},
      {"a list that is not one", {{"excludedDates", "2026-10-01"}}, "excludedDates", "expected an array"},
      {"a date that is not an object", {{"excludedDates", {5}}}, "excludedDates[0]", "expected an object"},
      {"an unknown field", {{"colour", "red"}}, "colour", "unknown field"},
      {"an unknown field of a date", {{"excludedDates", {{{"date", "2026-10-01"}, {"colour", 1}}}}},
       "excludedDates[0].colour", "unknown field"},
      {"a read-only field", {{"id", 5}}, "id", "is read-only"},
      {"a version on create", {{"version", 1}}, "version", "is read-only"},
      {"a source made up", {{"excludedDates", {{{"date", "2026-10-01"}, {"source", "cn"}}}}}, "excludedDates[0].source",
       "is read-only"},
      {"a name that hides its direction", {{"excludedDates", {{{"date", "2026-10-01"}, {"name", "Day\u202e"}}}}},
       "excludedDates[0].name", "bidirectional"},
      {"a name too long", {{"excludedDates", {{{"date", "2026-10-01"}, {"name", std::string(201, 'n')}}}}},
       "excludedDates[0].name", "at most 200"},
      {"a description too long", {{"description", std::string(256, 'd')}}, "description", "at most 255"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    json body = {{"name", "cal"}, {"timeZone", "UTC"}};
    body.update(c.patch);
    auto refused = post("calendars", body);
    ASSERT_EQ(refused.status, 400) << refused.text.substr(0, 400);
    EXPECT_EQ(refused.field(), c.field) << refused.text;
    EXPECT_NE(refused.message().find(c.message_part), std::string::npos) << refused.message();
    EXPECT_EQ(refused.message().rfind(c.field, 0), 0u) << "the message starts with the field: " << refused.message();
  }
  EXPECT_EQ(get("calendars").body["total"], 0) << "nothing refused was saved";
}

TEST_F(CalendarsApiTest, HoldsTheMostDatesTheRulesAllowAndRefusesMoreAtImport) {
  json dates = json::array();
  using namespace std::chrono;
  sys_days day = year{1990} / January / 1;
  for (int i = 0; i < 5'000; ++i, day += days{1}) {
    const year_month_day ymd{day};
    char text[16];
    std::snprintf(text, sizeof text, "%04d-%02u-%02u", static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
                  static_cast<unsigned>(ymd.day()));
    dates.push_back({{"date", text}, {"name", "Holiday number " + std::to_string(i)}});
  }
  const auto id = calendar({{"excludedDates", dates}});
  ASSERT_NE(id, 0);
  EXPECT_EQ(get(path(id)).body["excludedDates"].size(), 5'000u);
  auto refused = import(id, ics({{"20240501", "labour", "Labour Day"}}), 1);
  ASSERT_EQ(refused.status, 400) << refused.text;
  EXPECT_EQ(refused.field(), "excludedDates");
  EXPECT_EQ(refused.message().rfind("after the import: excludedDates", 0), 0u) << refused.message();
  EXPECT_EQ(get(path(id)).body["version"], 1) << "nothing imported";
}

TEST_F(CalendarsApiTest, AChangeNamesTheVersionItRead) {
  const auto id = calendar();
  auto changed = put(path(id), {{"name", "cn-holidays"}, {"description", "v2"}, {"version", 1}});
  ASSERT_EQ(changed.status, 200) << changed.text;
  EXPECT_EQ(changed.body["version"], 2);
  EXPECT_EQ(changed.body["description"], "v2");
  EXPECT_EQ(last_audit().action, "calendar.update");
  auto stale = put(path(id), {{"name", "cn-holidays"}, {"description", "v3"}, {"version", 1}});
  EXPECT_EQ(stale.status, 409) << stale.text;
  EXPECT_EQ(stale.field(), "version");
  EXPECT_EQ(put(path(id), {{"name", "cn-holidays"}}).field(), "version") << "required";
  EXPECT_EQ(put("calendars/999", {{"name", "x"}, {"version", 1}}).status, 404);
  EXPECT_EQ(get(path(id)).body["description"], "v2");
}

TEST_F(CalendarsApiTest, ANameTakenIsAConflict) {
  calendar(json::object(), "one");
  const auto two = calendar(json::object(), "two");
  auto taken = post("calendars", {{"name", "one"}});
  EXPECT_EQ(taken.status, 409);
  EXPECT_EQ(taken.field(), "name");
  auto renamed = put(path(two), {{"name", "one"}, {"version", 1}});
  EXPECT_EQ(renamed.status, 409);
  EXPECT_EQ(renamed.field(), "name");
}

TEST_F(CalendarsApiTest, ACalendarInUseIsNotDeletedAndItsUsersAreNamed) {
  const auto id = calendar();
  const auto job = job_with(id, "0 0 9 * * ?");
  auto refused = del(path(id));
  ASSERT_EQ(refused.status, 409) << refused.text;
  EXPECT_NE(refused.message().find("job cal-api/job-" + std::to_string(job)), std::string::npos) << refused.message();
  EXPECT_EQ(get(path(id)).status, 200);
  ASSERT_EQ(put("jobs/" + std::to_string(job), {{"calendarId", nullptr}}).status, 200);
  EXPECT_EQ(del(path(id)).status, 204);
  EXPECT_EQ(get(path(id)).status, 404);
  EXPECT_EQ(last_audit().action, "calendar.delete");
  EXPECT_EQ(del(path(id)).status, 404);
}

TEST_F(CalendarsApiTest, AnImportReplacesWhatItsSourceBroughtAndKeepsDatesEnteredByHand) {
  const auto id = calendar({{"excludedDates", {{{"date", "2024-05-01"}, {"name", "Labour Day"}}}}});
  auto first = import(id, ics({{"20241001", "nd-2024", "National Day"}, {"20250101", "ny-2025", "New Year"}}, true), 1);
  ASSERT_EQ(first.status, 200) << first.text;
  EXPECT_EQ(first.body["datesImported"], 2);
  EXPECT_EQ(first.body["timedEventsIgnored"], 1);
  EXPECT_EQ(first.body["source"], "cn");
  EXPECT_EQ(first.body["calendar"]["version"], 2);
  EXPECT_EQ(first.body["calendar"]["excludedDates"][1]["sourceUid"], "nd-2024");
  EXPECT_EQ(excluded(id), (std::vector<std::string>{"2024-05-01 Labour Day ", "2024-10-01 National Day cn",
                                                     "2025-01-01 New Year cn"}));
  EXPECT_EQ(last_audit().action, "calendar.import");

  // The same source again: what the file no longer has goes; the day entered by hand stays as it
  // was entered, even when the file has it too.
  auto second = import(id, ics({{"20241002", "nd2-2024", "National Day 2"}, {"20240501", "labour", "May Day"}}), 2);
  ASSERT_EQ(second.status, 200) << second.text;
  EXPECT_EQ(second.body["datesImported"], 1);
  EXPECT_EQ(excluded(id), (std::vector<std::string>{"2024-05-01 Labour Day ", "2024-10-02 National Day 2 cn"}));

  // Another source stands beside it.
  ASSERT_EQ(import(id, ics({{"20241225", "xmas", "Christmas"}}), 3, "intl").status, 200);
  EXPECT_EQ(excluded(id).size(), 3u);
  ASSERT_EQ(import(id, ics({}), 4, "cn").status, 200);
  EXPECT_EQ(excluded(id), (std::vector<std::string>{"2024-05-01 Labour Day ", "2024-12-25 Christmas intl"}));
}

TEST_F(CalendarsApiTest, AnEditKeepsTheSourcesOfImportedDates) {
  const auto id = calendar();
  ASSERT_EQ(import(id, ics({{"20241001", "nd-2024", "National Day"}}), 1).status, 200);
  // The console sends the calendar back as read, with a date added by hand.
  json body = get(path(id)).body;
  for (const char* key : {"id", "createdAt", "updatedAt"}) body.erase(key);
  body["excludedDates"].push_back({{"date", "2024-05-01"}, {"name", "Labour Day"}});
  auto edited = put(path(id), body);
  ASSERT_EQ(edited.status, 200) << edited.text;
  EXPECT_EQ(excluded(id), (std::vector<std::string>{"2024-05-01 Labour Day ", "2024-10-01 National Day cn"}));
  // A client that leaves sources out keeps them as well; one that makes them up is refused.
  json bare = {{"name", "cn-holidays"},
               {"version", 3},
               {"excludedDates", {{{"date", "2024-10-01"}, {"name", "National Day"}}, {{"date", "2024-05-01"}}}}};
  ASSERT_EQ(put(path(id), bare).status, 200);
  EXPECT_EQ(excluded(id), (std::vector<std::string>{"2024-05-01  ", "2024-10-01 National Day cn"}));
  bare["version"] = 4;
  bare["excludedDates"][1]["source"] = "cn";
  auto forged = put(path(id), bare);
  EXPECT_EQ(forged.status, 400);
  EXPECT_EQ(forged.field(), "excludedDates[1].source");
  // The next import of the source still replaces its date.
  ASSERT_EQ(import(id, ics({{"20241003", "nd3", "Third"}}), 4).status, 200);
  EXPECT_EQ(excluded(id), (std::vector<std::string>{"2024-05-01  ", "2024-10-03 Third cn"}));
}

TEST_F(CalendarsApiTest, AnImportRefusesWhatItCannotReadSayingWhy) {
  const auto id = calendar();
  auto garbage = import(id, "<html>not a calendar</html>", 1);
  EXPECT_EQ(garbage.status, 400) << garbage.text;
  EXPECT_EQ(garbage.message().rfind("iCalendar file: ", 0), 0u) << garbage.message();
  auto bad_event = import(id, ics({{"20240230", "feb30", "Nowhere"}}), 1);
  EXPECT_EQ(bad_event.status, 400) << bad_event.text;
  auto as_json = post_text(path(id, "/import?version=1"), ics({}), "application/json");
  EXPECT_EQ(as_json.status, 415) << as_json.text;
  EXPECT_EQ(post_text(path(id, "/import"), ics({}), "text/calendar").field(), "version");
  auto stale = import(id, ics({}), 7);
  EXPECT_EQ(stale.status, 409);
  EXPECT_EQ(stale.field(), "version");
  EXPECT_EQ(import(id, ics({}), 1, "Not%20A%20Name").field(), "source");
  EXPECT_EQ(post_text(path(id, "/import?version=1&horizonDays=0"), ics({}), "text/calendar").field(), "horizonDays");
  EXPECT_EQ(post_text(path(id, "/import?version=1&colour=red"), ics({}), "text/calendar").field(), "colour");
  EXPECT_EQ(import(999, ics({}), 1).status, 404);
  // A day the file excludes that the calendar includes by hand.
  const auto made_up = calendar({{"includedDates", {{{"date", "2024-10-12"}, {"name", "Make-up day"}}}}}, "made-up");
  auto clash = import(made_up, ics({{"20241012", "x", "Holiday"}}), 1);
  EXPECT_EQ(clash.status, 409) << clash.text;
  EXPECT_EQ(clash.field(), "dates");
  EXPECT_EQ(get(path(id)).body["version"], 1) << "nothing imported";
}

TEST_F(CalendarsApiTest, AnExportImportsBackToTheSameDays) {
  const auto id = calendar({{"excludedDates", {{{"date", "2024-10-01"}, {"name", "National Day"}},
                                               {{"date", "--01-01"}, {"name", "New Year"}}}},
                            {"includedDates", {{{"date", "2024-10-12"}, {"name", "Make-up day"}}}}});
  httplib::Client client("127.0.0.1", server_->port());
  auto exported = client.Get(("/api/v1/" + path(id, "/export")).c_str(), {{"Authorization", "Bearer admin"}});
  ASSERT_TRUE(exported);
  ASSERT_EQ(exported->status, 200) << exported->body;
  EXPECT_EQ(exported->get_header_value("Content-Type").rfind("text/calendar", 0), 0u);
  EXPECT_EQ(exported->get_header_value("Content-Disposition"), "attachment; filename=\"cn-holidays.ics\"");
  EXPECT_EQ(exported->body.find("Make-up day"), std::string::npos) << "included dates are not holidays";

  const auto copy = calendar(json::object(), "copy");
  auto imported = import(copy, exported->body, 1, "from-export");
  ASSERT_EQ(imported.status, 200) << imported.text;
  EXPECT_EQ(excluded(copy), (std::vector<std::string>{"--01-01 New Year from-export", "2024-10-01 National Day from-export"}));
}

TEST_F(CalendarsApiTest, TheYearViewShowsHolidaysMakeUpDaysAndWeekends) {
  const auto id = calendar({{"timeZone", "Asia/Shanghai"},
                            {"businessDays", {"MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY"}},
                            {"excludedDates", {{{"date", "2026-10-01"}, {"name", "National Day"}},
                                               {{"date", "--01-01"}, {"name", "New Year"}}}},
                            {"includedDates", {{{"date", "2026-10-10"}, {"name", "Make-up day"}}}},
                            {"excludedTimes", {{{"start", "12:00:00"}, {"end", "12:30:00"}}}}});
  auto r = get(path(id, "/days?year=2026"));
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body["year"], 2026);
  const json& days = r.body["days"];
  ASSERT_EQ(days.size(), 365u);
  auto day = [&](int index) { return days[static_cast<std::size_t>(index)]; };
  EXPECT_EQ(day(0), json({{"date", "2026-01-01"}, {"state", "excluded"}, {"name", "New Year"}}));
  EXPECT_EQ(day(2)["state"], "weekend");    // Saturday 3 January
  EXPECT_EQ(day(4)["state"], "business");   // Monday 5 January
  EXPECT_EQ(day(273), json({{"date", "2026-10-01"}, {"state", "excluded"}, {"name", "National Day"}}));
  EXPECT_EQ(day(282), json({{"date", "2026-10-10"}, {"state", "included"}, {"name", "Make-up day"}}));  // a Saturday
  EXPECT_EQ(day(283)["state"], "weekend");  // Sunday 11 October
  EXPECT_EQ(day(364)["date"], "2026-12-31");
  EXPECT_EQ(get(path(id, "/days?year=2028")).body["days"].size(), 366u);
  EXPECT_EQ(get(path(id, "/days?year=1969")).field(), "year");
  EXPECT_EQ(get(path(id, "/days")).body["year"], 2023) << "this year in the calendar's zone";

  // The same days as the rules say: in ONLY mode, a day is let through (away from its excluded
  // times) exactly when it is a business or an included day.
  const auto rules = common::BusinessCalendar::make(to_spec(*calendars_.get(id)));
  using namespace std::chrono;
  for (const auto& d : days) {
    const auto text = d["date"].get<std::string>();
    const year_month_day ymd{year{std::stoi(text.substr(0, 4))}, month{static_cast<unsigned>(std::stoi(text.substr(5, 2)))},
                             std::chrono::day{static_cast<unsigned>(std::stoi(text.substr(8, 2)))}};
    // 09:00 in Shanghai (UTC+8).
    const std::int64_t nine = sys_days{ymd}.time_since_epoch().count() * 86'400'000LL + 3'600'000LL;
    const bool let_through = !rules.exclusion(nine, common::CalendarMode::kOnly);
    const auto state = d["state"].get<std::string>();
    EXPECT_EQ(let_through, state == "business" || state == "included") << text << " " << state;
  }
}

TEST_F(CalendarsApiTest, TakingOutAHolidayBringsARunningJobsNextTimeBackToToday) {
  const auto id = calendar({{"excludedDates", {{{"date", "2023-11-14"}, {"name", "Today"}}}}});
  const auto job = job_with(id, "*/10 * * * * ?");
  auto started = post("jobs/" + std::to_string(job) + "/start");
  ASSERT_EQ(started.status, 200) << started.text;
  ASSERT_EQ(started.body["triggerNextTime"], kNov15Midnight);

  auto changed = put(path(id), {{"name", "cn-holidays"}, {"version", 1}});
  ASSERT_EQ(changed.status, 200) << changed.text;
  auto now_running = get("jobs/" + std::to_string(job)).body;
  EXPECT_EQ(now_running["triggerNextTime"], kStartMs + 10'000) << "the first time after now + 5 s";
  EXPECT_EQ(now_running["triggerStatus"], 1);
  auto audit = last_audit();
  EXPECT_EQ(audit.action, "job.retime");
  EXPECT_EQ(audit.entity_id.value_or(0), job);

  // A change that does not touch the rules moves nothing; nor does one that only adds exclusions
  // (the scan moves a next time they exclude).
  clock_.advance(std::chrono::minutes(1));
  ASSERT_EQ(put(path(id), {{"name", "cn-holidays"}, {"description", "renamed"}, {"version", 2}}).status, 200);
  ASSERT_EQ(put(path(id), {{"name", "cn-holidays"}, {"excludedDates", {{{"date", "2023-11-20"}}}}, {"version", 3}}).status, 200);
  EXPECT_EQ(get("jobs/" + std::to_string(job)).body["triggerNextTime"], kStartMs + 10'000);
  // A stopped job is left alone.
  ASSERT_EQ(post("jobs/" + std::to_string(job) + "/stop").status, 200);
  ASSERT_EQ(put(path(id), {{"name", "cn-holidays"}, {"version", 4}}).status, 200);
  EXPECT_EQ(get("jobs/" + std::to_string(job)).body["triggerStatus"], 0);
}

TEST_F(CalendarsApiTest, TakingOutAHolidayBringsARunningWorkflowsNextTimeBackToToday) {
  const auto id = calendar({{"excludedDates", {{{"date", "2023-11-14"}, {"name", "Today"}}}}});
  const auto node_job = job_with(id, "0 0 9 * * ?");
  auto created = post("workflows", {{"jobGroup", group_.id},
                                    {"name", "etl"},
                                    {"scheduleType", "CRON"},
                                    {"scheduleConf", "*/10 * * * * ?"},
                                    {"nodes", {{{"key", "a"}, {"jobId", node_job}}}},
                                    {"calendarId", id}});
  ASSERT_EQ(created.status, 201) << created.text;
  const std::string flow = "workflows/" + created.body["id"].dump();
  auto started = post(flow + "/start");
  ASSERT_EQ(started.status, 200) << started.text;
  EXPECT_EQ(started.body["triggerNextTime"], kNov15Midnight);
  ASSERT_EQ(put(path(id), {{"name", "cn-holidays"}, {"version", 1}}).status, 200);
  EXPECT_EQ(get(flow).body["triggerNextTime"], kStartMs + 10'000);
}

}  // namespace
}  // namespace cronwheel::admin
