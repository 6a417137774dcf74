// Fuzz target: common/ical, the .ics files an operator imports into a business calendar
// (holiday feeds downloaded from anywhere). The input is a file's text.
//
// Properties:
//  - read_ics() throws nothing but IcsError, whatever the text, within the bounds it states;
//  - what it reads is ordered by (date, UID) without a pair twice, at most kMaxIcsDates dates,
//    each a day that exists, year 0 or in the window, its name UTF-8 without control
//    characters and at most 200 bytes;
//  - BusinessCalendar::make() takes those days as excluded dates;
//  - write_ics() of those days reads back as the same days.
#include <cstddef>
#include <cstdio>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "common/cron/business_calendar.h"
#include "common/cron/civil_time.h"
#include "common/ical/ics.h"
#include "common/util/utf8.h"
#include "tests/fuzz/fuzz_check.h"

namespace ical = cronwheel::common::ical;
namespace cron_detail = cronwheel::common::cron_detail;

namespace {

using DayKey = std::tuple<int, int, int, std::string>;

DayKey key_of(const cronwheel::common::CalendarDay& day) {
  return {day.year, day.month, day.day, day.name};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  ical::IcsReadOptions options;
  options.from = {2026, 11, 29};
  options.horizon_days = 400;
  const auto first = cron_detail::days_from_civil(2026, 11, 29);
  const auto last = first + options.horizon_days - 1;

  ical::IcsReadResult result;
  try {
    result = ical::read_ics(text, options);
  } catch (const ical::IcsError&) {
    return 0;
  }

  FUZZ_CHECK(result.dates.size() <= ical::kMaxIcsDates, "more dates than the bound");
  std::set<DayKey> days;
  for (std::size_t i = 0; i < result.dates.size(); ++i) {
    const auto& date = result.dates[i];
    const auto& day = date.day;
    if (i > 0) {
      const auto& before = result.dates[i - 1];
      FUZZ_CHECK(std::tie(before.day.year, before.day.month, before.day.day, before.uid) <
                     std::tie(day.year, day.month, day.day, date.uid),
                 "dates out of order or twice");
    }
    FUZZ_CHECK(day.month >= 1 && day.month <= 12, "a month that does not exist");
    FUZZ_CHECK(day.day >= 1 &&
                   day.day <= cron_detail::days_in_month(day.year == 0 ? 2000 : day.year, day.month),
               "a day that does not exist");
    if (day.year != 0) {
      const auto number = cron_detail::days_from_civil(day.year, day.month, day.day);
      FUZZ_CHECK(number >= first && number <= last, "a date outside the window");
    }
    FUZZ_CHECK(day.name.size() <= 200, "a name over 200 bytes");
    FUZZ_CHECK(cronwheel::common::utf8::is_valid(day.name), "a name that is not UTF-8");
    for (const char c : day.name) {
      FUZZ_CHECK(static_cast<unsigned char>(c) >= 0x20 && c != 0x7F, "a control character");
    }
    FUZZ_CHECK(cronwheel::common::utf8::is_valid(date.uid), "a UID that is not UTF-8");
    days.insert(key_of(day));
  }

  std::vector<cronwheel::common::CalendarDay> to_write;
  for (const auto& date : result.dates) to_write.push_back(date.day);
  cronwheel::common::CalendarSpec spec;
  spec.excluded_dates = to_write;
  try {
    (void)cronwheel::common::BusinessCalendar::make(spec);
  } catch (const cronwheel::common::CalendarError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    FUZZ_CHECK(false, "BusinessCalendar::make refuses what read_ics read");
  }
  ical::IcsWriteOptions write_options;
  write_options.dtstamp_ms = 1'796'000'000'000;
  write_options.calendar_name = "fuzz";
  const auto written = ical::write_ics(to_write, write_options);
  ical::IcsReadResult again;
  try {
    again = ical::read_ics(written, options);
  } catch (const ical::IcsError& e) {
    std::fprintf(stderr, "%s\n---\n%s\n", e.what(), written.c_str());
    FUZZ_CHECK(false, "read_ics refuses what write_ics wrote");
  }
  std::set<DayKey> days_again;
  for (const auto& date : again.dates) days_again.insert(key_of(date.day));
  FUZZ_CHECK(days_again == days, "write_ics did not read back as the same days");
  return 0;
}
