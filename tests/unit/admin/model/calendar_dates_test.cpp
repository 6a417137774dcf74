#include "admin/model/calendar_dates.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "admin/model/calendar_json.h"
#include "admin/model/store_errors.h"

namespace cronwheel::admin {
namespace {

CalendarDate date_of(int year, int month, int day, bool included = false, const std::string& name = "",
                     const std::string& source = "") {
  CalendarDate d;
  d.day = {year, month, day, name};
  d.included = included;
  d.source = source;
  return d;
}

// "2026-10-01 x Name /source" for each date, in order ("+" for an included one).
std::vector<std::string> described(const std::vector<CalendarDate>& dates) {
  std::vector<std::string> out;
  for (const auto& d : dates) {
    out.push_back(date_text(d.day) + (d.included ? " +" : " x") + (d.day.name.empty() ? "" : " " + d.day.name) +
                  (d.source.empty() ? "" : " /" + d.source));
  }
  return out;
}

std::string conflict_of(const std::vector<CalendarDate>& dates) {
  try {
    stored_dates(dates);
  } catch (const Conflict& e) {
    EXPECT_EQ(e.field(), "dates");
    return e.what();
  }
  return "";
}

TEST(CalendarDates, DateTextIsIsoWithMonthAndDayAloneForEveryYear) {
  EXPECT_EQ(date_text({2026, 10, 1, ""}), "2026-10-01");
  EXPECT_EQ(date_text({1970, 1, 31, ""}), "1970-01-31");
  EXPECT_EQ(date_text({0, 2, 29, ""}), "--02-29");
}

TEST(CalendarDates, StoredDatesAreInDayOrderWithEveryYearFirstAndEachDayOnceAsFirstListed) {
  const auto stored = stored_dates({date_of(2026, 10, 2, false, "b"), date_of(2026, 9, 26, true, "make-up"),
                                    date_of(2026, 10, 2, false, "second b"), date_of(0, 12, 25, false, "Christmas"),
                                    date_of(2025, 12, 31), date_of(2026, 12, 25, false, "also Christmas")});
  EXPECT_EQ(described(stored), (std::vector<std::string>{"--12-25 x Christmas", "2025-12-31 x", "2026-09-26 + make-up",
                                                          "2026-10-02 x b", "2026-12-25 x also Christmas"}));
  EXPECT_TRUE(stored_dates({}).empty());
}

TEST(CalendarDates, ADayBothExcludedAndIncludedIsAConflictNamingIt) {
  struct Case {
    std::vector<CalendarDate> dates;
    std::string names;
  };
  const std::vector<Case> cases = {
      {{date_of(2026, 10, 10), date_of(2026, 10, 10, true)}, "2026-10-10"},
      {{date_of(2026, 10, 10, true), date_of(2026, 10, 10)}, "2026-10-10"},
      {{date_of(0, 10, 10), date_of(2030, 10, 10, true)}, "2030-10-10"},
      {{date_of(2031, 5, 1, true), date_of(0, 5, 1)}, "2031-05-01"},
  };
  for (const auto& c : cases) {
    const auto message = conflict_of(c.dates);
    EXPECT_NE(message.find(c.names), std::string::npos) << message;
    EXPECT_NE(message.find("both excluded and included"), std::string::npos) << message;
  }
  EXPECT_EQ(conflict_of({date_of(0, 10, 10), date_of(2030, 10, 11, true), date_of(2030, 10, 10)}), "")
      << "another day, or the same day excluded twice";
}

TEST(CalendarDates, AnImportReplacesItsOwnDatesAndLeavesTheKeptOnesOfItsDays) {
  const std::vector<CalendarDate> current = {date_of(2026, 5, 1, false, "by hand"), date_of(2026, 4, 5, false, "old", "cn.ics"),
                                             date_of(2026, 6, 19, false, "other", "hk.ics"),
                                             date_of(2026, 9, 26, true, "make-up")};
  const auto after = imported_dates(current, "cn.ics",
                                    {date_of(2026, 5, 1, false, "Labour Day", "ignored.ics"), date_of(2026, 10, 1, false, "National Day"),
                                     date_of(2026, 10, 1, false, "listed again")});
  EXPECT_EQ(described(after), (std::vector<std::string>{"2026-05-01 x by hand", "2026-06-19 x other /hk.ics",
                                                         "2026-09-26 + make-up", "2026-10-01 x National Day /cn.ics"}));
  EXPECT_EQ(described(imported_dates(current, "hk.ics", {})),
            (std::vector<std::string>{"2026-04-05 x old /cn.ics", "2026-05-01 x by hand", "2026-09-26 + make-up"}));
}

TEST(CalendarDates, AnImportOfADayOfTheOtherKindThanAKeptOneIsAConflictSayingWhoKeepsIt) {
  const std::vector<CalendarDate> current = {date_of(2026, 9, 26, true, "make-up"), date_of(0, 12, 25, false, "Xmas", "uk.ics")};
  auto message = [&](const std::string& source, const CalendarDate& d) {
    try {
      imported_dates(current, source, {d});
    } catch (const Conflict& e) {
      EXPECT_EQ(e.field(), "dates");
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(message("cn.ics", date_of(2026, 9, 26)), "2026-09-26 is included by hand, and the import excludes it");
  EXPECT_EQ(message("cn.ics", date_of(2027, 12, 25, true)),
            "2027-12-25 is excluded by the import uk.ics, and the import includes it");
  EXPECT_EQ(message("uk.ics", date_of(2027, 12, 25, true)), "") << "its own dates go first";
}

TEST(CalendarDates, AnEditKeepsTheSourceOfTheStoredDateOfTheSameDayAndKind) {
  const std::vector<CalendarDate> stored{date_of(2026, 10, 1, false, "National Day", "ics"),
                                         date_of(2026, 10, 2, false, "", "ics"), date_of(2026, 9, 27, true, "", "gov")};
  auto given = with_stored_sources({date_of(2026, 10, 1, false, "Renamed"), date_of(2026, 10, 2, true),
                                    date_of(0, 10, 1), date_of(2026, 9, 27, true, "", "forged")},
                                   stored);
  EXPECT_EQ(described(given), (std::vector<std::string>{"2026-10-01 x Renamed /ics", "2026-10-02 +", "--10-01 x",
                                                        "2026-09-27 + /gov"}))
      << "the same day of the other kind, or of every year, is a date entered by hand";
}

TEST(CalendarJson, SpellsEveryFieldAsTheApiDoes) {
  Calendar c;
  c.id = 7;
  c.name = "cn-holidays";
  c.description = "d";
  c.time_zone = "Asia/Shanghai";
  c.business_days = std::array<bool, 7>{true, false, false, false, true, false, true};
  c.dates = {date_of(0, 1, 1, false, "New Year", ""), date_of(2026, 9, 26, true, "make-up", "cn.ics")};
  c.dates[1].source_uid = "uid-1";
  c.excluded_times = {{23 * 3600, 3600 + 61}, {0, 86'399}};
  c.version = 3;
  c.created_at = 10;
  c.updated_at = 20;
  EXPECT_EQ(to_json(c), nlohmann::json::parse(R"({
    "id": 7, "name": "cn-holidays", "description": "d", "timeZone": "Asia/Shanghai",
    "businessDays": ["MONDAY", "FRIDAY", "SUNDAY"],
    "excludedDates": [{"date": "--01-01", "name": "New Year", "source": "", "sourceUid": ""}],
    "includedDates": [{"date": "2026-09-26", "name": "make-up", "source": "cn.ics", "sourceUid": "uid-1"}],
    "excludedTimes": [{"start": "23:00:00", "end": "01:01:01"}, {"start": "00:00:00", "end": "23:59:59"}],
    "version": 3, "createdAt": 10, "updatedAt": 20})"));
  c.business_days.reset();
  EXPECT_TRUE(to_json(c)["businessDays"].is_null()) << "every day";
  c.business_days = std::array<bool, 7>{};
  EXPECT_EQ(to_json(c)["businessDays"], nlohmann::json::array()) << "no weekday, only included dates";
}

}  // namespace
}  // namespace cronwheel::admin
