#pragma once

#include <cstdint>

#include "common/util/floor_division.h"

// Proleptic Gregorian calendar arithmetic on plain integers (H. Hinnant's algorithms), used
// on the evaluation path where date/tz's checked types would cost more than they give.
namespace cronwheel::common::cron_detail {

inline constexpr std::int64_t kMillisPerSecond = 1000;
inline constexpr std::int64_t kMillisPerMinute = 60 * kMillisPerSecond;
inline constexpr std::int64_t kMillisPerHour = 60 * kMillisPerMinute;
inline constexpr std::int64_t kMillisPerDay = 24 * kMillisPerHour;

using util::floor_div;
using util::floor_mod;

// Days since 1970-01-01 of year/month/day, month 1-12, day 1-31.
constexpr std::int64_t days_from_civil(std::int64_t y, int m, int d) {
  y -= m <= 2 ? 1 : 0;
  const std::int64_t era = floor_div(y, 400);
  const std::int64_t yoe = y - era * 400;                                    // [0, 399]
  const std::int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;  // [0, 365]
  const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;            // [0, 146096]
  return era * 146097 + doe - 719468;
}

struct CivilDate {
  int year;
  int month;  // 1-12
  int day;    // 1-31
};

constexpr CivilDate civil_from_days(std::int64_t z) {
  z += 719468;
  const std::int64_t era = floor_div(z, 146097);
  const std::int64_t doe = z - era * 146097;                                   // [0, 146096]
  const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;  // [0, 399]
  const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);            // [0, 365]
  const std::int64_t mp = (5 * doy + 2) / 153;                                 // [0, 11]
  const int d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  const int m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  return {static_cast<int>(yoe + era * 400 + (m <= 2 ? 1 : 0)), m, d};
}

// java.util.Calendar's DAY_OF_WEEK of a day since the epoch: 1 = Sunday ... 7 = Saturday.
constexpr int day_of_week(std::int64_t days) {
  return static_cast<int>(floor_mod(days + 4, 7)) + 1;  // 1970-01-01 was a Thursday (5)
}

constexpr bool is_leap_year(std::int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

// Days in `month` (1-12) of `year`.
constexpr int days_in_month(std::int64_t year, int month) {
  constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && is_leap_year(year) ? 29 : kDays[month - 1];
}

}  // namespace cronwheel::common::cron_detail
