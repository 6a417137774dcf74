#include "common/cron/next_fire_time.h"

#include "common/cron/civil_time.h"
#include "common/cron/lenient_calendar.h"

namespace cronwheel::common::cron_detail {
namespace {

using Cal = LenientCalendar;

constexpr int kSaturday = 7;
constexpr int kSunday = 1;
constexpr long kMaxSteps = 1'000'000;
constexpr long kMaxStepsWithoutProgress = 10'000;

// Quartz's setCalendarHour: set the hour and, when a daylight-saving gap moved the calendar
// off it, set the hour after it.
void set_calendar_hour(Cal& cal, int hour) {
  cal.set(Cal::kHourOfDay, hour);
  if (cal.get(Cal::kHourOfDay) != hour && hour != 24) cal.set(Cal::kHourOfDay, hour + 1);
}

// Moves `day` of month `mon` (1-based) of `year` to the nearest weekday, as Quartz's 'W' does
// (never across the month's first or last day), then reports whether that candidate at
// hr:min:sec lies before the start instant, in which case Quartz moves on to the next month.
// `day` may be outside the month (L-30 in February): the calendar carries it, as Java's does.
bool nearest_weekday_is_before_start(const ZoneRules& zone, int year, int mon, int& day, int hr,
                                     int min, int sec, std::int64_t start_ms) {
  const int millis = static_cast<int>(floor_mod(start_ms, kMillisPerSecond));
  Cal probe(zone);
  probe.set_fields(year, mon - 1, day, 0, 0, 0, millis);
  const int last_day = days_in_month(year, mon);
  const int dow = probe.day_of_week();
  if (dow == kSaturday && day == 1) {
    day += 2;
  } else if (dow == kSaturday) {
    day -= 1;
  } else if (dow == kSunday && day == last_day) {
    day -= 2;
  } else if (dow == kSunday) {
    day += 1;
  }
  probe.set(Cal::kSecond, sec);
  probe.set(Cal::kMinute, min);
  probe.set(Cal::kHourOfDay, hr);
  probe.set(Cal::kDayOfMonth, day);
  probe.set(Cal::kMonth, mon - 1);
  return probe.time() < start_ms;
}

// The start of a day, month or year the search jumps to.
void reset_to_day(Cal& cal, int day, int month0) {
  cal.set(Cal::kSecond, 0);
  cal.set(Cal::kMinute, 0);
  cal.set(Cal::kHourOfDay, 0);
  cal.set(Cal::kDayOfMonth, day);
  cal.set(Cal::kMonth, month0);
}

}  // namespace

std::optional<std::int64_t> next_fire_time(const CronFields& f, const ZoneRules& zone,
                                           std::int64_t after_ms) {
  if (after_ms >= kLatestStartMs) return std::nullopt;
  if (after_ms < kEarliestStartMs) after_ms = kEarliestStartMs;
  const int max_year = quartz_max_year();

  // "move ahead one second, since we're computing the time *after* the given time"
  const std::int64_t start_ms = after_ms + kMillisPerSecond;
  Cal cl(zone);
  cl.set_time(start_ms);
  cl.clear_millis();

  const bool day_of_month_rule = !f.day_of_month_unspecified;  // else day-of-week rule

  std::int64_t furthest = cl.time();
  long since_furthest = 0;
  for (long step = 0; step < kMaxSteps; ++step) {
    if (cl.get(Cal::kYear) > 2999) return std::nullopt;
    // A search that has stopped moving forward is caught in one of the cycles Quartz never
    // leaves (e.g. "0 0 0 L-28W 2 ?" bounces between January 31st and February 1st).
    if (cl.time() > furthest) {
      furthest = cl.time();
      since_furthest = 0;
    } else if (++since_furthest > kMaxStepsWithoutProgress) {
      return std::nullopt;
    }

    // Second.
    int sec = cl.get(Cal::kSecond);
    int min = cl.get(Cal::kMinute);
    if (int s = f.seconds.next(sec); s >= 0) {
      sec = s;
    } else {
      sec = f.seconds.first();
      ++min;
      cl.set(Cal::kMinute, min);
    }
    cl.set(Cal::kSecond, sec);

    // Minute.
    min = cl.get(Cal::kMinute);
    int hr = cl.get(Cal::kHourOfDay);
    int t = -1;
    if (int m = f.minutes.next(min); m >= 0) {
      t = min;
      min = m;
    } else {
      min = f.minutes.first();
      ++hr;
    }
    if (min != t) {
      cl.set(Cal::kSecond, 0);
      cl.set(Cal::kMinute, min);
      set_calendar_hour(cl, hr);
      continue;
    }
    cl.set(Cal::kMinute, min);

    // Hour.
    hr = cl.get(Cal::kHourOfDay);
    int day = cl.get(Cal::kDayOfMonth);
    t = -1;
    if (int h = f.hours.next(hr); h >= 0) {
      t = hr;
      hr = h;
    } else {
      hr = f.hours.first();
      ++day;
    }
    if (hr != t) {
      cl.set(Cal::kSecond, 0);
      cl.set(Cal::kMinute, 0);
      cl.set(Cal::kDayOfMonth, day);
      set_calendar_hour(cl, hr);
      continue;
    }
    cl.set(Cal::kHourOfDay, hr);

    // Day.
    day = cl.get(Cal::kDayOfMonth);
    int mon = cl.get(Cal::kMonth) + 1;
    t = -1;
    int tmon = mon;
    if (day_of_month_rule) {
      const int next_day = f.days_of_month.next(day);
      if (f.last_day_of_month) {
        t = day;
        day = days_in_month(cl.get(Cal::kYear), mon) - f.last_day_offset;
        if (!f.nearest_weekday) {
          if (t > day) {
            ++mon;
            if (mon > 12) {
              mon = 1;
              tmon = 3333;  // makes the "moved" test below succeed
              cl.add_year(1);
            }
            day = 1;
          }
        } else if (nearest_weekday_is_before_start(zone, cl.get(Cal::kYear), mon, day, hr, min,
                                                   sec, start_ms)) {
          day = 1;
          ++mon;
        }
      } else if (f.nearest_weekday) {
        t = day;
        day = f.days_of_month.first();
        if (nearest_weekday_is_before_start(zone, cl.get(Cal::kYear), mon, day, hr, min, sec,
                                            start_ms)) {
          day = f.days_of_month.first();
          ++mon;
        }
      } else if (next_day >= 0) {
        t = day;
        day = next_day;
        if (day > days_in_month(cl.get(Cal::kYear), mon)) {
          day = f.days_of_month.first();
          ++mon;
        }
      } else {
        day = f.days_of_month.first();
        ++mon;
      }
      if (day != t || mon != tmon) {
        reset_to_day(cl, day, mon - 1);
        continue;
      }
    } else if (f.last_day_of_week) {
      // The last given weekday of the month.
      const int dow = f.days_of_week.first();
      const int c_dow = cl.day_of_week();
      int days_to_add = 0;
      if (c_dow < dow) days_to_add = dow - c_dow;
      if (c_dow > dow) days_to_add = dow + (7 - c_dow);
      const int last_day = days_in_month(cl.get(Cal::kYear), mon);
      if (day + days_to_add > last_day) {
        reset_to_day(cl, 1, mon);  // the next month
        continue;
      }
      while (day + days_to_add + 7 <= last_day) days_to_add += 7;
      day += days_to_add;
      if (days_to_add > 0) {
        reset_to_day(cl, day, mon - 1);
        continue;
      }
    } else if (f.nth_day_of_week != 0) {
      // The nth given weekday of the month.
      const int dow = f.days_of_week.first();
      const int c_dow = cl.day_of_week();
      int days_to_add = 0;
      if (c_dow < dow) {
        days_to_add = dow - c_dow;
      } else if (c_dow > dow) {
        days_to_add = dow + (7 - c_dow);
      }
      const bool day_shifted = days_to_add > 0;
      day += days_to_add;
      int week_of_month = day / 7;
      if (day % 7 > 0) ++week_of_month;
      days_to_add = (f.nth_day_of_week - week_of_month) * 7;
      day += days_to_add;
      if (days_to_add < 0 || day > days_in_month(cl.get(Cal::kYear), mon)) {
        reset_to_day(cl, 1, mon);  // the next month
        continue;
      }
      if (days_to_add > 0 || day_shifted) {
        reset_to_day(cl, day, mon - 1);
        continue;
      }
    } else {
      const int c_dow = cl.day_of_week();
      int dow = f.days_of_week.next(c_dow);
      if (dow < 0) dow = f.days_of_week.first();
      int days_to_add = 0;
      if (c_dow < dow) days_to_add = dow - c_dow;
      if (c_dow > dow) days_to_add = dow + (7 - c_dow);
      const int last_day = days_in_month(cl.get(Cal::kYear), mon);
      if (day + days_to_add > last_day) {
        reset_to_day(cl, 1, mon);  // the next month
        continue;
      }
      if (days_to_add > 0) {
        reset_to_day(cl, day + days_to_add, mon - 1);
        continue;
      }
    }
    cl.set(Cal::kDayOfMonth, day);

    // Month.
    mon = cl.get(Cal::kMonth) + 1;
    int year = cl.get(Cal::kYear);
    t = -1;
    if (year > max_year) return std::nullopt;
    if (int m = f.months.next(mon); m >= 0) {
      t = mon;
      mon = m;
    } else {
      mon = f.months.first();
      ++year;
    }
    if (mon != t) {
      reset_to_day(cl, 1, mon - 1);
      cl.set(Cal::kYear, year);
      continue;
    }
    cl.set(Cal::kMonth, mon - 1);

    // Year.
    year = cl.get(Cal::kYear);
    t = -1;
    if (int y = f.years.next(year); y >= 0) {
      t = year;
      year = y;
    } else {
      return std::nullopt;  // ran out of years
    }
    if (year != t) {
      reset_to_day(cl, 1, 0);
      cl.set(Cal::kYear, year);
      continue;
    }
    cl.set(Cal::kYear, year);
    return cl.time();
  }
  return std::nullopt;
}

}  // namespace cronwheel::common::cron_detail
