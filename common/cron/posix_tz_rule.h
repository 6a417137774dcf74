#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace cronwheel::common::cron_detail {

// A POSIX TZ rule as found at the end of every version 2+ TZif file (RFC 8536, section 3.3),
// e.g. "EST5EDT,M3.2.0,M11.1.0" or "<+1030>-10:30<+11>-11,M10.1.0,M4.1.0": a zone's
// standard and daylight-saving offsets and the yearly rule switching between them. It gives
// the transitions after the file's last explicit one (those stop in 2037).
//
// Parsed here rather than with date/ptz.h, whose Debian 12 version does not compile as
// C++20 (its hh_mm_ss clashes with std::chrono::hh_mm_ss).
class PosixTzRule {
 public:
  // nullopt for a string that is not a valid rule.
  static std::optional<PosixTzRule> parse(std::string_view text);

  // The transitions in (from_s, to_s), seconds since the epoch, in order: each is the instant
  // it happens and the total UTC offset (seconds east) from then on. Empty for a zone without
  // daylight saving.
  std::vector<std::pair<std::int64_t, std::int64_t>> transitions(std::int64_t from_s,
                                                                 std::int64_t to_s) const;

  std::int64_t standard_offset() const { return std_offset_; }

 private:
  // A transition date: Jn (1-365, February 29 never counted), n (0-365) or Mm.w.d.
  struct Date {
    enum class Kind { kJulianNoLeap, kJulianZeroBased, kMonthWeekDay } kind = Kind::kMonthWeekDay;
    int n = 0;
    int month = 0;
    int week = 0;  // 1-5, 5 = last
    int weekday = 0;  // 0 = Sunday
    std::int64_t time = 2 * 3600;  // local time of day in seconds, may be negative or > 24h
  };

  static std::int64_t local_seconds(const Date& date, int year);

  std::int64_t std_offset_ = 0;  // seconds east of UTC
  std::int64_t dst_offset_ = 0;
  bool has_dst_ = false;
  Date start_;  // into daylight saving, in local standard time
  Date end_;    // out of daylight saving, in local daylight time
};

}  // namespace cronwheel::common::cron_detail
