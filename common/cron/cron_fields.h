#pragma once

#include <bit>
#include <cstdint>
#include <string_view>

namespace cronwheel::common::cron_detail {

// Explicit years an expression may name. Quartz accepts any year but documents 1970-2099;
// a year Quartz could never reach (or one before 1970) is refused here instead of silently
// never firing.
inline constexpr int kFirstYear = 1970;
inline constexpr int kLastExplicitYear = 2099;

// Quartz's CronExpression.MAX_YEAR: the year in which the process started + 100. '*' (and
// '*/n', 'a/n') in the year field run up to it, and no fire time after it is ever returned.
// Computed once per process, as Quartz computes it once per class load.
int quartz_max_year();

// A set of integers in [0, 64 * Words) with TreeSet-like "smallest member >= v" lookups,
// which is all the evaluation needs.
template <int Words>
class SmallSet {
 public:
  static constexpr int kCapacity = 64 * Words;

  void add(int v) { words_[v >> 6] |= std::uint64_t{1} << (v & 63); }

  bool contains(int v) const {
    return v >= 0 && v < kCapacity && ((words_[v >> 6] >> (v & 63)) & 1) != 0;
  }

  // The smallest member >= v, or -1 when there is none (TreeSet.tailSet(v) is empty).
  int next(int v) const {
    if (v < 0) v = 0;
    if (v >= kCapacity) return -1;
    int w = v >> 6;
    std::uint64_t bits = words_[w] & (~std::uint64_t{0} << (v & 63));
    while (true) {
      if (bits != 0) return (w << 6) + std::countr_zero(bits);
      if (++w == Words) return -1;
      bits = words_[w];
    }
  }

  // The smallest member, or -1 for an empty set.
  int first() const { return next(0); }

  bool empty() const { return first() < 0; }

  friend bool operator==(const SmallSet&, const SmallSet&) = default;

 private:
  std::uint64_t words_[Words] = {};
};

// Years are kept relative to 1970; 512 slots reach far past any MAX_YEAR of this century.
class YearSet {
 public:
  void add(int year) { set_.add(year - kFirstYear); }
  bool contains(int year) const { return set_.contains(year - kFirstYear); }
  int next(int year) const {
    int v = set_.next(year - kFirstYear);
    return v < 0 ? -1 : v + kFirstYear;
  }
  friend bool operator==(const YearSet&, const YearSet&) = default;

 private:
  SmallSet<8> set_;
};

// A parsed Quartz cron expression: the value sets and flags of Quartz's CronExpression
// (seconds, minutes, hours, daysOfMonth, months, daysOfWeek, years, lastdayOfMonth,
// lastdayOffset, nearestWeekday, lastdayOfWeek, nthdayOfWeek), with the same meaning, so
// the evaluation can follow Quartz's getTimeAfter step by step.
//
// Months are 1-12, days of week 1-7 with 1 = Sunday.
struct CronFields {
  SmallSet<1> seconds;
  SmallSet<1> minutes;
  SmallSet<1> hours;
  SmallSet<1> days_of_month;  // empty for the 'L' forms; the day for 'nW'
  SmallSet<1> months;
  SmallSet<1> days_of_week;  // the weekday for 'nL' and 'n#k'
  YearSet years;

  bool day_of_month_unspecified = false;  // '?'
  bool day_of_week_unspecified = false;   // '?'
  bool last_day_of_month = false;         // 'L', 'L-n', 'LW', 'L-nW'
  int last_day_offset = 0;                // n of 'L-n'
  bool nearest_weekday = false;           // 'nW', 'LW'
  bool last_day_of_week = false;          // 'nL'
  int nth_day_of_week = 0;                // k of 'n#k'

  friend bool operator==(const CronFields&, const CronFields&) = default;
};

// Parses the six or seven fields of a Quartz cron expression (case-insensitive).
//
// Accepts exactly the constructs Quartz 2.3.2 gives a meaning to and builds the same sets.
// Rejects, with a CronError naming the field, everything Quartz rejects, and also input
// Quartz silently half-ignores (trailing characters after a value, a step after a name
// range, 'W' or '#' inside a list, '?' inside a list, a zero step, an eighth field, ...),
// because whatever the author meant by it, Quartz does not do it. An expression longer than
// kMaxExpressionLength (a job's scheduleConf column) is refused before it is looked at.
inline constexpr std::size_t kMaxExpressionLength = 255;
CronFields parse_cron_fields(std::string_view expression);

}  // namespace cronwheel::common::cron_detail
