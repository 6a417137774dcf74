// write_ics: the days as libical components, written by libical (escaping, folding, CRLF).

#include <algorithm>
#include <cstdio>
#include <set>
#include <stdexcept>
#include <tuple>

#include "common/cron/civil_time.h"
#include "common/ical/ics.h"
#include "common/ical/libical_session.h"
#include "common/util/floor_division.h"

namespace cronwheel::common::ical {

namespace {

struct DayToWrite {
  int year;
  int month;
  int day;
  std::string name;

  auto key() const { return std::tie(year, month, day, name); }
};

void check_day(const CalendarDay& day, std::size_t index) {
  const bool every_year = day.year == 0;
  const bool exists = (every_year || (day.year >= 1970 && day.year <= 2999)) && day.month >= 1 &&
                      day.month <= 12 && day.day >= 1 &&
                      day.day <= cron_detail::days_in_month(every_year ? 2000 : day.year, day.month);
  if (!exists) {
    char text[96];
    std::snprintf(text, sizeof text, "days[%zu]: %04d-%02d-%02d is not a date from 1970 to 2999",
                  index, day.year, day.month, day.day);
    throw std::invalid_argument(text);
  }
}

icaltimetype date_of(int year, int month, int day) {
  icaltimetype date{};  // icaltime_null_date()'s time fields are -1
  date.year = year;
  date.month = month;
  date.day = day;
  date.is_date = 1;
  return date;
}

icaltimetype day_after(const icaltimetype& date) {
  const auto next = cron_detail::civil_from_days(
      cron_detail::days_from_civil(date.year, date.month, date.day) + 1);
  return date_of(next.year, next.month, next.day);
}

// "20261001-<hash>@cronwheel", "yearly-1001-<hash>@cronwheel": the date, and a hash of the
// calendar's name and the day's name; "-2", "-3"... in the unlikely case two hashes meet.
std::string uid_for(const DayToWrite& day, const std::string& calendar_name,
                    std::set<std::string>& taken) {
  const auto hash = detail::fnv1a64(calendar_name + '\0' + day.name);
  char base[64];
  if (day.year == 0) {
    std::snprintf(base, sizeof base, "yearly-%02d%02d-%016llx", day.month, day.day,
                  static_cast<unsigned long long>(hash));
  } else {
    std::snprintf(base, sizeof base, "%04d%02d%02d-%016llx", day.year, day.month, day.day,
                  static_cast<unsigned long long>(hash));
  }
  std::string uid = std::string(base) + "@cronwheel";
  for (int n = 2; !taken.insert(uid).second; ++n) {
    uid = std::string(base) + "-" + std::to_string(n) + "@cronwheel";
  }
  return uid;
}

}  // namespace

std::string write_ics(const std::vector<CalendarDay>& days, const IcsWriteOptions& options) {
  std::vector<DayToWrite> to_write;
  to_write.reserve(days.size());
  for (std::size_t i = 0; i < days.size(); ++i) {
    check_day(days[i], i);
    to_write.push_back({days[i].year, days[i].month, days[i].day,
                        detail::clean_text(days[i].name, std::string::npos)});
  }
  std::sort(to_write.begin(), to_write.end(),
            [](const DayToWrite& a, const DayToWrite& b) { return a.key() < b.key(); });
  to_write.erase(std::unique(to_write.begin(), to_write.end(),
                             [](const DayToWrite& a, const DayToWrite& b) {
                               return a.key() == b.key();
                             }),
                 to_write.end());

  const std::string calendar_name = detail::clean_text(options.calendar_name, std::string::npos);
  const auto stamp_seconds = cronwheel::util::floor_div(options.dtstamp_ms, std::int64_t{1000});

  detail::LibicalSession session;
  detail::ComponentPtr calendar(icalcomponent_new(ICAL_VCALENDAR_COMPONENT));
  icalcomponent_add_property(calendar.get(), icalproperty_new_prodid("-//cronwheel//calendar//EN"));
  icalcomponent_add_property(calendar.get(), icalproperty_new_version("2.0"));
  icalcomponent_add_property(calendar.get(), icalproperty_new_calscale("GREGORIAN"));
  if (!calendar_name.empty()) {
    icalproperty* name = icalproperty_new_x(calendar_name.c_str());
    icalproperty_set_x_name(name, "X-WR-CALNAME");
    icalcomponent_add_property(calendar.get(), name);
  }
  const icaltimetype stamp = icaltime_from_timet_with_zone(
      static_cast<time_t>(stamp_seconds), 0, icaltimezone_get_utc_timezone());

  std::set<std::string> uids;
  for (const auto& day : to_write) {
    icalcomponent* event = icalcomponent_new(ICAL_VEVENT_COMPONENT);
    icalcomponent_add_component(calendar.get(), event);  // the calendar owns it from here
    const auto uid = uid_for(day, calendar_name, uids);
    icalcomponent_add_property(event, icalproperty_new_uid(uid.c_str()));
    icalcomponent_add_property(event, icalproperty_new_dtstamp(stamp));
    // A year-0 date starts in 1970, or 1972 for 02-29, so that it falls in leap years only.
    const int year = day.year != 0 ? day.year : (day.month == 2 && day.day == 29 ? 1972 : 1970);
    const icaltimetype start = date_of(year, day.month, day.day);
    icalcomponent_add_property(event, icalproperty_new_dtstart(start));
    icalcomponent_add_property(event, icalproperty_new_dtend(day_after(start)));
    if (day.year == 0) {
      icalrecurrencetype yearly;
      icalrecurrencetype_clear(&yearly);
      yearly.freq = ICAL_YEARLY_RECURRENCE;
      icalcomponent_add_property(event, icalproperty_new_rrule(yearly));
    }
    if (!day.name.empty()) {
      icalcomponent_add_property(event, icalproperty_new_summary(day.name.c_str()));
    }
    // A day off does not make anyone busy (what published holiday calendars say too).
    icalcomponent_add_property(event, icalproperty_new_transp(ICAL_TRANSP_TRANSPARENT));
  }

  char* text = icalcomponent_as_ical_string_r(calendar.get());
  if (!text) throw std::runtime_error("libical could not write the calendar");
  std::string out(text);
  icalmemory_free_buffer(text);
  return out;
}

}  // namespace cronwheel::common::ical
