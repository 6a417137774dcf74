#pragma once

#include <cstddef>
#include <cstdint>

#include "common/cron/civil_time.h"
#include "common/cron/zone_rules.h"

namespace cronwheel::common::cron_detail {

// The part of java.util.GregorianCalendar (lenient, one time zone) that Quartz's
// CronExpression.getTimeAfter relies on, reproduced closely enough that the same sequence of
// set/get/add calls lands on the same instants, including around daylight-saving changes.
//
// The model, as in Java:
//  - the calendar holds an instant and the local fields (year, month, day, hour, minute,
//    second, millisecond) computed from it;
//  - set(field, v) only stores v (any int: a minute of 60 or a day of 0 is fine) and marks the
//    instant stale;
//  - the next get() or time() recomputes the instant from the stored fields: the overflowing
//    fields are carried (minute 60 is the next hour, day 32 of January is February 1st), the
//    resulting local wall time is resolved to an instant with ZoneRules::offset_for_wall, and
//    all fields are recomputed from that instant. So a wall time inside a gap comes back an
//    hour later, and re-reading a wall time that occurs twice moves to its second occurrence
//    even if the calendar was on the first.
//  - add_year(n) is Calendar.add(YEAR, n): recompute, add, then pin the day to the month's
//    length (Feb 29 + 1 year = Feb 28).
//
// Only the fields Quartz uses exist. Months are 0-based (Calendar.MONTH); days of week are
// 1 = Sunday ... 7 = Saturday (Calendar.DAY_OF_WEEK).
//
// A calendar is a small value on the stack: no allocation, and no shared state except the
// immutable ZoneRules, so concurrent evaluations need no locking.
class LenientCalendar {
 public:
  enum Field { kYear, kMonth, kDayOfMonth, kHourOfDay, kMinute, kSecond, kMillisecond, kFieldCount };

  explicit LenientCalendar(const ZoneRules& zone) : zone_(zone) {}

  // Calendar.setTime: the instant and its local fields.
  void set_time(std::int64_t utc_ms) {
    date_stale_ = true;
    compute_fields(utc_ms);
  }

  // Stores all fields at once, as a freshly created calendar followed by set() of each.
  void set_fields(int year, int month, int day, int hour, int minute, int second, int millis) {
    fields_[kYear] = year;
    fields_[kMonth] = month;
    fields_[kDayOfMonth] = day;
    fields_[kHourOfDay] = hour;
    fields_[kMinute] = minute;
    fields_[kSecond] = second;
    fields_[kMillisecond] = millis;
    stale_ = true;
    date_stale_ = true;
  }

  void set(Field field, int value) {
    // Storing the value a field already holds changes nothing, unless the current instant is
    // one its own wall time does not resolve back to (the first pass through a repeated hour):
    // Java moves such an instant on the next get(), so that set must count.
    if (fields_[field] == value && (stale_ || round_trips_)) return;
    fields_[field] = value;
    stale_ = true;
    if (field <= kDayOfMonth) date_stale_ = true;
  }

  // set(kMillisecond, 0) right after set_time(), without a second normalization when the
  // result is known: dropping the milliseconds cannot cross a transition (those fall on whole
  // seconds), so an instant that resolves back to itself simply loses them.
  void clear_millis() {
    if (!stale_ && round_trips_) {
      time_ -= fields_[kMillisecond];
      fields_[kMillisecond] = 0;
      return;
    }
    set(kMillisecond, 0);
  }

  int get(Field field) {
    if (stale_) normalize();
    return fields_[field];
  }

  int day_of_week() {
    if (stale_) normalize();
    return day_of_week_;
  }

  // Calendar.getTimeInMillis.
  std::int64_t time() {
    if (stale_) normalize();
    return time_;
  }

  // Calendar.add(YEAR, amount).
  void add_year(int amount) {
    if (stale_) normalize();
    fields_[kYear] += amount;
    const int length = days_in_month(fields_[kYear], fields_[kMonth] + 1);
    if (fields_[kDayOfMonth] > length) fields_[kDayOfMonth] = length;
    stale_ = true;
    date_stale_ = true;
  }

 private:
  // GregorianCalendar.computeTime followed by computeFields.
  void normalize() {
    std::int64_t days = day_number_;
    if (date_stale_) {
      const std::int64_t year = fields_[kYear] + floor_div(fields_[kMonth], 12);
      const int month = static_cast<int>(floor_mod(fields_[kMonth], 12)) + 1;
      days = days_from_civil(year, month, 1) + fields_[kDayOfMonth] - 1;
    }
    const std::int64_t wall = days * kMillisPerDay + fields_[kHourOfDay] * kMillisPerHour +
                              fields_[kMinute] * kMillisPerMinute +
                              fields_[kSecond] * kMillisPerSecond + fields_[kMillisecond];
    compute_fields(wall - zone_.offset_for_wall(wall, hint_));
  }

  void compute_fields(std::int64_t utc_ms) {
    time_ = utc_ms;
    const std::int64_t wall = utc_ms + zone_.offset_at(utc_ms, hint_, round_trips_);
    const std::int64_t days = floor_div(wall, kMillisPerDay);
    if (date_stale_ || days != day_number_) {
      const CivilDate date = civil_from_days(days);
      fields_[kYear] = date.year;
      fields_[kMonth] = date.month - 1;
      fields_[kDayOfMonth] = date.day;
      day_of_week_ = cron_detail::day_of_week(days);
      day_number_ = days;
    }
    // The time of day fits 32 bits, where division by a constant is cheapest.
    auto rest = static_cast<std::uint32_t>(wall - days * kMillisPerDay);
    fields_[kHourOfDay] = static_cast<int>(rest / 3'600'000u);
    rest %= 3'600'000u;
    fields_[kMinute] = static_cast<int>(rest / 60'000u);
    rest %= 60'000u;
    fields_[kSecond] = static_cast<int>(rest / 1000u);
    fields_[kMillisecond] = static_cast<int>(rest % 1000u);
    stale_ = false;
    date_stale_ = false;
  }

  const ZoneRules& zone_;
  std::size_t hint_ = 0;
  int fields_[kFieldCount] = {};
  int day_of_week_ = 0;
  std::int64_t day_number_ = 0;  // days since the epoch of the (normalized) local date
  std::int64_t time_ = 0;
  bool stale_ = true;          // fields were changed since the instant was computed
  bool date_stale_ = true;     // ... and among them year, month or day
  bool round_trips_ = false;   // offset_for_wall(wall time of time_) gives time_ back
};

}  // namespace cronwheel::common::cron_detail
