#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "common/ical/ics.h"

namespace cronwheel::common::ical {
namespace {

using Kind = IcsError::Kind;
using namespace std::string_literals;

std::string testdata(const std::string& name) {
  std::ifstream in(std::string(CRONWHEEL_SOURCE_DIR) + "/tests/unit/common/ical/testdata/" + name,
                   std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  EXPECT_FALSE(text.str().empty()) << name;
  return text.str();
}

IcsReadOptions window(int year, int month, int day, int horizon_days = kDefaultHorizonDays) {
  IcsReadOptions options;
  options.from = {year, month, day};
  options.horizon_days = horizon_days;
  return options;
}

// "2027-01-01 New Year's Day <uid>", "every 12-25 Christmas Day <uid>".
std::string describe(const IcsDate& date) {
  char day[32];
  if (date.day.year == 0) {
    std::snprintf(day, sizeof day, "every %02d-%02d", date.day.month, date.day.day);
  } else {
    std::snprintf(day, sizeof day, "%04d-%02d-%02d", date.day.year, date.day.month, date.day.day);
  }
  return std::string(day) + " " + date.day.name + " <" + date.uid + ">";
}

std::vector<std::string> describe(const IcsReadResult& result) {
  std::vector<std::string> lines;
  for (const auto& date : result.dates) lines.push_back(describe(date));
  return lines;
}

// A VCALENDAR around `events` (lines joined with LF).
std::string calendar(const std::string& events) {
  return "BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//test//EN\n" + events + "END:VCALENDAR\n";
}

std::string all_day(const std::string& uid, const std::string& start, const std::string& more = "") {
  return "BEGIN:VEVENT\nUID:" + uid + "\nDTSTART;VALUE=DATE:" + start + "\n" + more +
         "END:VEVENT\n";
}

// What read_ics refuses `text` as; fails the test when it reads it.
IcsError refusal(const std::string& text, const IcsReadOptions& options = window(2026, 12, 1)) {
  try {
    const auto result = read_ics(text, options);
    ADD_FAILURE() << "read " << result.dates.size() << " dates instead of refusing:\n" << text;
  } catch (const IcsError& e) {
    return e;
  }
  return IcsError(Kind::kInvalidEvent, "none");
}

TEST(ReadIcs, ReadsAPublishedHolidayFeed) {
  const auto result = read_ics(testdata("holidays_de.ics"), window(2026, 12, 1, 366));
  EXPECT_EQ(describe(result), (std::vector<std::string>{
      "every 12-25 Christmas Day <christmas-day@example.org>",
      "2027-01-01 New Year's Day <20270101_60o30dr46oo30c1g60o30dr4ck@google.com>",
      "2027-01-01 Company day <company-day@example.org>",
      "2027-02-05 Company day <company-day@example.org>",
      "2027-03-26 Easter (Good Friday to Easter Monday) <easter-2027@example.org>",
      "2027-03-27 Easter (Good Friday to Easter Monday) <easter-2027@example.org>",
      "2027-03-28 Easter (Good Friday to Easter Monday) <easter-2027@example.org>",
      "2027-03-29 Easter (Good Friday to Easter Monday) <easter-2027@example.org>",
      "2027-04-09 Company day (moved) <company-day@example.org>",
      "2027-05-01 Tag der Arbeit \\ Labour Day, May Day; offices closed <labour-day@example.org>",
      "2027-05-07 Company day <company-day@example.org>",
      "2027-05-14 Bridge day <bridge-days@example.org>",
      "2027-05-28 Bridge day <bridge-days@example.org>",
      "2027-06-04 Company day <company-day@example.org>",
      "2027-10-04 Bridge day <bridge-days@example.org>",
      "2027-11-17 Bu\u00df- und Bettag <repentance-day@example.org>",
  }));
  EXPECT_EQ(result.timed_events_ignored, 2u);  // the planning meeting and the weekly stand-up
  EXPECT_EQ(result.dates_outside_window, 2u);  // 2026-10-03 and 2028-01-01

  // What is read is what a business calendar takes.
  CalendarSpec spec;
  spec.time_zone = "Europe/Berlin";
  for (const auto& date : result.dates) spec.excluded_dates.push_back(date.day);
  EXPECT_NO_THROW(BusinessCalendar::make(spec));
}

TEST(ReadIcs, ReadsAnOutlookExportWithCrlfLinesAndYearlyRules) {
  const auto result = read_ics(testdata("outlook_export.ics"), window(2026, 11, 1));
  const std::string uid = "040000008200E00074C5B7101A82E00800000000B0E4A5C6D17ED90100000000000000001"
                          "00000004E8B1C2D3A4F5E6D7C8B9A0F1E2D3C0";
  EXPECT_EQ(describe(result), (std::vector<std::string>{
      // BYMONTH and BYMONTHDAY restate DTSTART's: a plain yearly date.
      "every 01-01 New Year's Day <" + uid + "1>",
      // The fourth Thursday of November, in the three years of the window.
      "2026-11-26 Thanksgiving Day <" + uid + "2>",
      // Three days a year, up to UNTIL.
      "2026-12-24 Christmas break <" + uid + "3>",
      "2026-12-25 Christmas break <" + uid + "3>",
      "2026-12-26 Christmas break <" + uid + "3>",
      "2027-11-25 Thanksgiving Day <" + uid + "2>",
      "2027-12-24 Christmas break <" + uid + "3>",
      "2027-12-25 Christmas break <" + uid + "3>",
      "2027-12-26 Christmas break <" + uid + "3>",
      "2028-11-23 Thanksgiving Day <" + uid + "2>",
      "2028-12-24 Christmas break <" + uid + "3>",
      "2028-12-25 Christmas break <" + uid + "3>",
      "2028-12-26 Christmas break <" + uid + "3>",
  }));
  EXPECT_EQ(result.timed_events_ignored, 1u);
}

TEST(ReadIcs, LineEndsAndFoldsDoNotChangeWhatIsRead) {
  const auto lf = testdata("holidays_de.ics");
  std::string crlf, cr, folded_tabs;
  for (const char c : lf) {
    crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
    cr += c == '\n' ? '\r' : c;
  }
  // A fold may start with a tab as well as a space.
  for (std::size_t i = 0; i < lf.size(); ++i) {
    folded_tabs += lf[i];
    if (lf.compare(i + 1, 9, "SUMMARY:C") == 0) folded_tabs += "SUMMARY:C\n\t";  // split the name
    if (lf.compare(i + 1, 9, "SUMMARY:C") == 0) i += 9;
  }
  const auto options = window(2026, 12, 1, 366);
  const auto expected = describe(read_ics(lf, options));
  EXPECT_EQ(describe(read_ics(crlf, options)), expected);
  EXPECT_EQ(describe(read_ics(cr, options)), expected);
  EXPECT_EQ(describe(read_ics("\xEF\xBB\xBF" + crlf, options)), expected);  // a byte-order mark
  EXPECT_EQ(describe(read_ics(folded_tabs, options)), expected);
}

TEST(ReadIcs, UnescapesTextAndJoinsFoldedLinesInNames) {
  const auto result = read_ics(
      calendar(all_day("a", "20270101",
                       "SUMMARY:One\\, two\\; three \\\\ four\\nfive\r\n  six\r\n\tseven\n")),
      window(2026, 12, 1));
  ASSERT_EQ(result.dates.size(), 1u);
  // The escaped newline is a control character: a space in a name.
  EXPECT_EQ(result.dates[0].day.name, "One, two; three \\ four five sixseven");
}

TEST(ReadIcs, TimedEventsAreIgnoredAndCounted) {
  const auto result = read_ics(calendar(
      "BEGIN:VEVENT\nUID:t1\nDTSTART:20270105T100000Z\nDTEND:20270105T110000Z\nEND:VEVENT\n"
      "BEGIN:VEVENT\nUID:t2\nDTSTART;TZID=Europe/Paris:20270106T100000\n"
      "RRULE:FREQ=DAILY\nEND:VEVENT\n" +
      all_day("d1", "20270107")), window(2026, 12, 1));
  EXPECT_EQ(describe(result), (std::vector<std::string>{"2027-01-07  <d1>"}));
  EXPECT_EQ(result.timed_events_ignored, 2u);
}

TEST(ReadIcs, AnEmptyCalendarHasNoDates) {
  const auto result = read_ics("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//x//EN\r\nEND:VCALENDAR\r\n",
                               window(2026, 12, 1));
  EXPECT_TRUE(result.dates.empty());
  EXPECT_EQ(result.timed_events_ignored, 0u);
  EXPECT_EQ(result.dates_outside_window, 0u);
}

TEST(ReadIcs, RefusesWhatIsNotICalendar) {
  for (const auto& text : {
           std::string(""),
           std::string("\n\r\n  \n"),
           std::string("<!DOCTYPE html>\n<html><body>Not found</body></html>\n"),
           std::string("{\"events\": []}"),
           "BEGIN:VCALENDAR\nVERSION:2.0\n\0\nEND:VCALENDAR\n"s,
           std::string("\x89PNG\r\n\x1a\n"),
       }) {
    const auto error = refusal(text);
    EXPECT_EQ(error.kind(), Kind::kNotICalendar) << text << ": " << error.what();
    EXPECT_NE(std::string(error.what()).find("not an iCalendar file"), std::string::npos);
  }
}

TEST(ReadIcs, RefusesAFileCutShort) {
  const auto full = testdata("holidays_de.ics");
  const auto error = refusal(full.substr(0, full.find("END:VCALENDAR")));
  EXPECT_EQ(error.kind(), Kind::kNotICalendar);
  EXPECT_STREQ(error.what(),
               "not an iCalendar file: it ends inside a component (a BEGIN without its END), as a "
               "file cut short does");
}

TEST(ReadIcs, RefusesICalendarLinesWithoutACalendar) {
  const auto error = refusal(all_day("a", "20270101"));
  EXPECT_EQ(error.kind(), Kind::kNoCalendar);
  EXPECT_STREQ(error.what(), "the file has no calendar (BEGIN:VCALENDAR)");
  EXPECT_EQ(to_string(error.kind()), "no_calendar");
}

TEST(ReadIcs, RefusesComponentsNestedTooDeep) {
  std::string text = "BEGIN:VCALENDAR\n";
  for (int i = 0; i < 100'000; ++i) text += "BEGIN:VEVENT\n";
  const auto error = refusal(text);
  EXPECT_EQ(error.kind(), Kind::kNotICalendar);
  EXPECT_NE(std::string(error.what()).find("nest deeper than 8"), std::string::npos);
}

TEST(ReadIcs, RefusesAFileOverFourMebibytesBeforeParsingIt) {
  std::string text = calendar(all_day("a", "20270101", "DESCRIPTION:" + std::string(kMaxIcsBytes, 'x') + "\n"));
  const auto error = refusal(text);
  EXPECT_EQ(error.kind(), Kind::kTooLarge);
  EXPECT_NE(std::string(error.what()).find("at most 4,194,304 are read"), std::string::npos);
}

TEST(ReadIcs, RefusesTooManyLinesOrListValues) {
  std::string lines;
  for (std::size_t i = 0; i < kMaxIcsLines; ++i) lines += "X-A:1\n";
  EXPECT_EQ(refusal(calendar(lines)).kind(), Kind::kTooLarge);
  // One line, but a list of values libical makes one property each.
  std::string exdates = "EXDATE;VALUE=DATE:20270101";
  for (std::size_t i = 0; i < kMaxIcsLines; ++i) exdates += ",20270102";
  const auto error = refusal(calendar(all_day("a", "20270101", exdates + "\n")));
  EXPECT_EQ(error.kind(), Kind::kTooLarge);
  EXPECT_NE(std::string(error.what()).find("more than 200,000 lines"), std::string::npos);
}

TEST(ReadIcs, RefusesMoreThanTenThousandEvents) {
  std::string events;
  for (std::size_t i = 0; i <= kMaxIcsEvents; ++i) events += "BEGIN:VEVENT\nEND:VEVENT\n";
  const auto error = refusal(calendar(events));
  EXPECT_EQ(error.kind(), Kind::kTooManyEvents);
  EXPECT_STREQ(error.what(), "the file has more than 10,000 events (VEVENT)");
}

TEST(ReadIcs, AnUnboundedDailyRuleOverTwentyYearsIsTooManyDates) {
  const auto error = refusal(calendar(all_day("daily", "20000101", "RRULE:FREQ=DAILY\n")),
                             window(2026, 12, 1, kMaxHorizonDays));
  EXPECT_EQ(error.kind(), Kind::kTooManyDates);
  EXPECT_STREQ(error.what(),
               "the file has more than 5,000 dates from 2026-12-01 to 2046-11-30: shorten the "
               "horizon, or split the file");
}

TEST(ReadIcs, ADailyRuleWithinTheWindowGivesEachDay) {
  const auto result = read_ics(calendar(all_day("daily", "20000101", "RRULE:FREQ=DAILY\n")),
                               window(2026, 12, 1, 5000));
  ASSERT_EQ(result.dates.size(), 5000u);
  EXPECT_EQ(describe(result.dates.front()), "2026-12-01  <daily>");
  EXPECT_EQ(describe(result.dates.back()), "2040-08-08  <daily>");
}

TEST(ReadIcs, ARuleWithCountIsCountedFromDtstart) {
  const auto result = read_ics(
      calendar(all_day("y", "20250301", "RRULE:FREQ=YEARLY;COUNT=3\nSUMMARY:Three times\n") +
               all_day("w", "20261119", "RRULE:FREQ=WEEKLY;COUNT=4;INTERVAL=2\n")),
      window(2026, 12, 1));
  EXPECT_EQ(describe(result), (std::vector<std::string>{
                                  "2026-12-03  <w>",
                                  "2026-12-17  <w>",
                                  "2026-12-31  <w>",
                                  "2027-03-01 Three times <y>",
                              }));
}

TEST(ReadIcs, UntilEndsARule) {
  const auto result = read_ics(
      calendar(all_day("m", "20261215", "RRULE:FREQ=MONTHLY;UNTIL=20270315\n") +
               all_day("t", "20261215", "RRULE:FREQ=MONTHLY;UNTIL=20270215T235959Z\n")),
      window(2026, 12, 1));
  EXPECT_EQ(describe(result), (std::vector<std::string>{
                                  "2026-12-15  <m>", "2026-12-15  <t>", "2027-01-15  <m>",
                                  "2027-01-15  <t>", "2027-02-15  <m>", "2027-02-15  <t>",
                                  "2027-03-15  <m>",
                              }));
}

TEST(ReadIcs, APlainYearlyEventIsEveryYear) {
  const auto result = read_ics(
      calendar(all_day("leap", "20240229", "RRULE:FREQ=YEARLY\nSUMMARY:Leap day\n") +
               all_day("old", "19500704", "RRULE:FREQ=YEARLY;INTERVAL=1\n")),
      window(2026, 12, 1));
  EXPECT_EQ(describe(result), (std::vector<std::string>{
                                  "every 02-29 Leap day <leap>",
                                  "every 07-04  <old>",
                              }));
}

TEST(ReadIcs, AYearlyEventWithExceptionsOrAFutureStartIsExpanded) {
  const auto result = read_ics(
      calendar(all_day("ex", "20201225", "RRULE:FREQ=YEARLY\nEXDATE;VALUE=DATE:20271225\n") +
               // Its first date comes after the window's first 05-01: year 0 would add 2027-05-01.
               all_day("late", "20280501", "RRULE:FREQ=YEARLY\n") +
               all_day("two", "20261231", "RRULE:FREQ=YEARLY;INTERVAL=2\n")),
      window(2026, 12, 1, 3 * 365));
  EXPECT_EQ(describe(result), (std::vector<std::string>{
                                  "2026-12-25  <ex>",
                                  "2026-12-31  <two>",
                                  "2028-05-01  <late>",
                                  "2028-12-25  <ex>",
                                  "2028-12-31  <two>",
                                  "2029-05-01  <late>",
                              }));
}

TEST(ReadIcs, AMultiDayEventGivesItsDaysInTheWindowAndCountsTheOthers) {
  const auto result = read_ics(
      calendar(all_day("long", "20261129", "DTEND;VALUE=DATE:20261204\n") +
               all_day("week", "20261229", "DURATION:P1W\n") +
               // DTEND on DTSTART, as some exports write a one-day event.
               all_day("same", "20270110", "DTEND;VALUE=DATE:20270110\n")),
      window(2026, 12, 1, 33));
  EXPECT_EQ(describe(result), (std::vector<std::string>{
                                  "2026-12-01  <long>", "2026-12-02  <long>", "2026-12-03  <long>",
                                  "2026-12-29  <week>", "2026-12-30  <week>", "2026-12-31  <week>",
                                  "2027-01-01  <week>", "2027-01-02  <week>",
                              }));
  // Two days of "long" before the window, two of "week" after it, and "same" after it.
  EXPECT_EQ(result.dates_outside_window, 5u);
}

TEST(ReadIcs, ARecurringMultiDayEventStartingBeforeTheWindowTouchesIt) {
  const auto result = read_ics(
      calendar(all_day("r", "20251130", "DTEND;VALUE=DATE:20251203\nRRULE:FREQ=YEARLY\n")),
      window(2026, 12, 1, 30));
  EXPECT_EQ(describe(result),
            (std::vector<std::string>{"2026-12-01  <r>", "2026-12-02  <r>"}));
}

TEST(ReadIcs, CancelledEventsAndOccurrencesGiveNothing) {
  const auto result = read_ics(
      calendar(all_day("c", "20270105", "STATUS:CANCELLED\n") +
               all_day("w", "20270104", "RRULE:FREQ=WEEKLY;COUNT=3\n") +
               all_day("w", "20270111", "RECURRENCE-ID;VALUE=DATE:20270111\nSTATUS:CANCELLED\n") +
               // An occurrence moved to a time of day leaves its date, and is a timed event.
               "BEGIN:VEVENT\nUID:w\nRECURRENCE-ID;VALUE=DATE:20270118\n"
               "DTSTART:20270118T090000Z\nEND:VEVENT\n"),
      window(2026, 12, 1));
  EXPECT_EQ(describe(result), (std::vector<std::string>{"2027-01-04  <w>"}));
  EXPECT_EQ(result.timed_events_ignored, 1u);
}

TEST(ReadIcs, EachDateOfAnEventIsReadOnce) {
  const auto result = read_ics(
      calendar(all_day("d", "20270105", "SUMMARY:First\n") +
               all_day("d", "20270105", "SUMMARY:Again\n") +
               all_day("e", "20270105", "RDATE;VALUE=DATE:20270105,20270106\n"
                                        "RRULE:FREQ=DAILY;COUNT=2\n")),
      window(2026, 12, 1));
  EXPECT_EQ(describe(result), (std::vector<std::string>{
                                  "2027-01-05 First <d>", "2027-01-05  <e>", "2027-01-06  <e>"}));
}

TEST(ReadIcs, AnEventWithoutUidGetsOneMadeFromItsContent) {
  const std::string text = calendar(
      "BEGIN:VEVENT\nDTSTART;VALUE=DATE:20270105\nSUMMARY:A\nEND:VEVENT\n"
      "BEGIN:VEVENT\nDTSTART;VALUE=DATE:20270106\nSUMMARY:A\nEND:VEVENT\n");
  const auto first = read_ics(text, window(2026, 12, 1));
  const auto again = read_ics(text, window(2026, 12, 1));
  ASSERT_EQ(first.dates.size(), 2u);
  EXPECT_EQ(first.dates[0].uid.rfind("no-uid-", 0), 0u) << first.dates[0].uid;
  EXPECT_NE(first.dates[0].uid, first.dates[1].uid);
  EXPECT_EQ(describe(again), describe(first));
}

TEST(ReadIcs, NamesAreCleanedAndCutOnACharacterBoundary) {
  std::string long_name;
  for (int i = 0; i < 100; ++i) long_name += "\u00e9";  // 2 bytes each
  const auto result = read_ics(
      calendar(all_day("long", "20270105", "SUMMARY:x" + long_name + "\n") +
               all_day("bad", "20270106", "SUMMARY:a\xff" "b\x01" "c\n")),
      window(2026, 12, 1));
  ASSERT_EQ(result.dates.size(), 2u);
  EXPECT_EQ(result.dates[0].day.name, "x" + long_name.substr(0, 198));  // 199 bytes: no half é
  EXPECT_EQ(result.dates[1].day.name, "a\uFFFD" "b c");
}

TEST(ReadIcs, RefusesAnEventWhoseDatesCannotBeRead) {
  struct Case {
    std::string event;
    std::string message;
  };
  for (const auto& [event, message] : std::vector<Case>{
           {all_day("a", "20270230"), "VEVENT 1 (UID a): DTSTART 2027-02-30 is not a date"},
           {"BEGIN:VEVENT\nUID:b\nSUMMARY:x\nEND:VEVENT\n", "VEVENT 1 (UID b): no DTSTART"},
           {all_day("c", "20270101", "RRULE:FREQ=HOURLY\n"),
            "VEVENT 1 (UID c): RRULE FREQ=HOURLY repeats an all-day event within a day"},
           {all_day("d", "20270101", "RRULE:FREQ=SOMETIMES\n"), "VEVENT 1 (UID d): RRULE not understood"},
           {all_day("e", "20270101", "EXDATE;VALUE=DATE:next-week\n"), "VEVENT 1 (UID e): EXDATE not understood"},
           {all_day("f", "20270101", "DTEND;VALUE=DATE:20271301\n"), "VEVENT 1 (UID f): DTEND 2027-13-01 is not a date"},
           {"BEGIN:VEVENT\nUID:g\nDTSTART;VALUE=DATE:garbage\nEND:VEVENT\n", "VEVENT 1 (UID g): DTSTART not understood"},
           {all_day("h", "18991231", "RRULE:FREQ=YEARLY;COUNT=200\n"),
            "VEVENT 1 (UID h): RRULE with COUNT from before 1900: not expanded"},
       }) {
    const auto error = refusal(calendar(all_day("ok", "20270101") + event));
    EXPECT_EQ(error.kind(), Kind::kInvalidEvent) << event;
    // The second VEVENT of the file.
    auto expected = message;
    expected.replace(expected.find("VEVENT 1"), 8, "VEVENT 2");
    EXPECT_EQ(std::string(error.what()).rfind(expected, 0), 0u) << error.what();
  }
}

TEST(ReadIcs, RecurrencesThatNeverOccurAreBoundedNotSlow) {
  // Rules that match no day: libical steps through every day of the window for each (from
  // DTSTART for a rule with COUNT), about 26 s of CPU in all, until the time limit ends the read.
  std::string events;
  for (int i = 0; i < 2'000; ++i) {
    events += i % 2 == 0 ? all_day("n" + std::to_string(i), "20000101",
                                   "RRULE:FREQ=DAILY;BYMONTH=4;BYMONTHDAY=31\n")
                         : all_day("n" + std::to_string(i), "19500101",
                                   "RRULE:FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30;COUNT=5\n");
  }
  const auto error = refusal(calendar(events), window(2026, 12, 1, kMaxHorizonDays));
  EXPECT_EQ(error.kind(), Kind::kTooComplex);
  EXPECT_NE(std::string(error.what()).find("the events took more than 1,000 ms of CPU time to expand"),
            std::string::npos)
      << error.what();
  // libical searches a yearly or monthly rule's periods for a first date, and fails one that
  // has none: the event is refused.
  const auto never = refusal(
      calendar(all_day("never", "20260101", "RRULE:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30\n")));
  EXPECT_EQ(never.kind(), Kind::kInvalidEvent);
  EXPECT_EQ(std::string(never.what()).rfind("VEVENT 1 (UID never): RRULE FREQ=YEARLY cannot be expanded", 0), 0u)
      << never.what();
}

TEST(ReadIcs, RefusesOptionsOutOfRange) {
  const auto text = calendar("");
  EXPECT_THROW(read_ics(text, window(1969, 12, 31)), std::invalid_argument);
  EXPECT_THROW(read_ics(text, window(2026, 2, 29)), std::invalid_argument);
  EXPECT_THROW(read_ics(text, window(2026, 12, 1, 0)), std::invalid_argument);
  EXPECT_THROW(read_ics(text, window(2026, 12, 1, kMaxHorizonDays + 1)), std::invalid_argument);
  // The window ends at 2999-12-31; recurrences end after 2582, where libical's do.
  const auto result = read_ics(
      calendar(all_day("d", "29991231", "DTEND;VALUE=DATE:30000102\n") +
               all_day("r", "29991230", "RRULE:FREQ=DAILY\n") +
               all_day("late", "25821230", "RRULE:FREQ=DAILY\n")),
      window(2999, 12, 1, kMaxHorizonDays));
  EXPECT_EQ(describe(result), (std::vector<std::string>{"2999-12-30  <r>", "2999-12-31  <d>"}));
  EXPECT_EQ(result.dates_outside_window, 1u);
  const auto last = read_ics(calendar(all_day("late", "25821230", "RRULE:FREQ=DAILY\n")),
                             window(2582, 12, 1, 60));
  EXPECT_EQ(describe(last), (std::vector<std::string>{"2582-12-30  <late>", "2582-12-31  <late>"}));
}

// ---- write_ics ------------------------------------------------------------------------------

IcsWriteOptions export_options() {
  IcsWriteOptions options;
  options.dtstamp_ms = 1'796'000'000'123;  // 2026-11-30T00:53:20.123Z
  options.calendar_name = "holidays-de";
  return options;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (auto end = text.find("\r\n"); end != std::string::npos; end = text.find("\r\n", start)) {
    lines.push_back(text.substr(start, end - start));
    start = end + 2;
  }
  EXPECT_EQ(start, text.size()) << "text after the last CRLF";
  return lines;
}

TEST(WriteIcs, WritesOneAllDayEventPerDate) {
  const auto text = write_ics({{2027, 1, 1, "New Year's Day"}, {0, 12, 25, "Christmas Day"}},
                              export_options());
  const auto lines = lines_of(text);
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(lines.front(), "BEGIN:VCALENDAR");
  EXPECT_EQ(lines.back(), "END:VCALENDAR");
  const std::set<std::string> set(lines.begin(), lines.end());
  for (const std::string line : {
           "PRODID:-//cronwheel//calendar//EN", "VERSION:2.0", "X-WR-CALNAME:holidays-de",
           "DTSTAMP:20261130T005320Z", "DTSTART;VALUE=DATE:20270101", "DTEND;VALUE=DATE:20270102",
           "SUMMARY:New Year's Day", "DTSTART;VALUE=DATE:19701225", "DTEND;VALUE=DATE:19701226",
           "RRULE:FREQ=YEARLY", "SUMMARY:Christmas Day", "TRANSP:TRANSPARENT"}) {
    EXPECT_EQ(set.count(line), 1u) << line << " in\n" << text;
  }
  EXPECT_EQ(std::count(lines.begin(), lines.end(), "BEGIN:VEVENT"), 2);
}

TEST(WriteIcs, IsDeterministicWithStableUids) {
  const std::vector<CalendarDay> days = {{2027, 5, 1, "Labour Day"}, {2027, 1, 1, "New Year"}};
  const auto text = write_ics(days, export_options());
  EXPECT_EQ(write_ics({days[1], days[0]}, export_options()), text);
  const auto uids = [](const std::string& ics) {
    std::vector<std::string> found;
    for (const auto& line : lines_of(ics)) {
      if (line.rfind("UID:", 0) == 0) found.push_back(line);
    }
    return found;
  };
  // A date's UID depends on it alone, not on the other dates.
  const auto one = uids(write_ics({days[0]}, export_options()));
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(uids(text)[1], one[0]);
  EXPECT_EQ(one[0].rfind("UID:20270501-", 0), 0u) << one[0];
  // Another calendar's export of the same date does not collide with it.
  auto other = export_options();
  other.calendar_name = "holidays-fr";
  EXPECT_NE(uids(write_ics({days[0]}, other)), one);
}

TEST(WriteIcs, EscapesTextAndFoldsLongLines) {
  std::string long_name;
  for (int i = 0; i < 60; ++i) long_name += "\u00e9";
  const auto text = write_ics({{2027, 1, 1, "A, B; C \\ D"}, {2027, 1, 2, long_name}},
                              export_options());
  const auto lines = lines_of(text);
  EXPECT_NE(std::find(lines.begin(), lines.end(), "SUMMARY:A\\, B\\; C \\\\ D"), lines.end())
      << text;
  for (const auto& line : lines) {
    EXPECT_LE(line.size(), 75u) << line;
  }
}

TEST(WriteIcs, RefusesADateThatDoesNotExist) {
  try {
    write_ics({{2027, 1, 1, ""}, {2027, 2, 29, ""}}, export_options());
    ADD_FAILURE() << "wrote 2027-02-29";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "days[1]: 2027-02-29 is not a date from 1970 to 2999");
  }
  EXPECT_THROW(write_ics({{0, 2, 30, ""}}, export_options()), std::invalid_argument);
  EXPECT_THROW(write_ics({{1969, 12, 31, ""}}, export_options()), std::invalid_argument);
  EXPECT_NO_THROW(write_ics({{0, 2, 29, "Leap day"}}, export_options()));
}

TEST(IcsRoundTrip, ReadingWhatWasWrittenGivesTheSameDays) {
  std::string long_name;
  for (int i = 0; i < 40; ++i) long_name += "\u4e2d\u6587";  // 240 bytes: cut to 198 on reading
  const std::vector<CalendarDay> days = {
      {0, 1, 1, "New Year's Day"},
      {0, 2, 29, "Leap day"},
      {0, 12, 25, ""},
      {2026, 12, 24, "Christmas Eve, half day; \\ office closed"},
      {2027, 5, 1, "Labour Day"},
      {2027, 5, 1, "Second name, same day"},
      {2027, 10, 3, "Tag der Deutschen Einheit \u2013 \u00e9t\u00e9"},
      {2027, 11, 17, long_name},
  };
  const auto text = write_ics(days, export_options());
  const auto result = read_ics(text, window(2026, 12, 1));
  std::vector<CalendarDay> read;
  std::set<std::string> uids;
  for (const auto& date : result.dates) {
    read.push_back(date.day);
    uids.insert(date.uid);
  }
  auto expected = days;
  expected.back().name = long_name.substr(0, 198);
  auto key = [](const CalendarDay& d) { return std::tie(d.year, d.month, d.day, d.name); };
  std::sort(expected.begin(), expected.end(),
            [&](const auto& a, const auto& b) { return key(a) < key(b); });
  std::sort(read.begin(), read.end(), [&](const auto& a, const auto& b) { return key(a) < key(b); });
  ASSERT_EQ(read.size(), expected.size()) << text;
  for (std::size_t i = 0; i < read.size(); ++i) {
    EXPECT_EQ(key(read[i]), key(expected[i])) << i;
  }
  EXPECT_EQ(uids.size(), days.size());  // one event, one UID per date
  EXPECT_EQ(result.timed_events_ignored, 0u);
  EXPECT_EQ(result.dates_outside_window, 0u);
}

}  // namespace
}  // namespace cronwheel::common::ical
