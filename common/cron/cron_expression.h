#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/cron/cron_error.h"

namespace cronwheel::common {

// What a cron schedule does on the days its zone's clocks change. The default is Quartz's
// (CronExpression::next_after below); docs/scheduling.md, "Daylight saving time", has examples.
enum class DstGap {
  kSkip,       // "SKIP": a wall time the clocks jump over does not fire that day
  kFireAfter,  // "FIRE_AFTER": it fires at the first instant after the gap (03:00 for 02:30
               // when the clocks go from 02:00 to 03:00), once however many wall times it held
};
enum class DstRepeat {
  kOnce,  // "ONCE": a wall time that happens twice fires once, at its second occurrence
  kBoth,  // "BOTH": it fires at both occurrences
};
struct DstPolicy {
  DstGap gap = DstGap::kSkip;
  DstRepeat repeat = DstRepeat::kOnce;
  friend bool operator==(const DstPolicy&, const DstPolicy&) = default;
};

// The wire names above, and back (nullopt for anything else; exact, upper case).
std::string_view dst_gap_name(DstGap gap);
std::string_view dst_repeat_name(DstRepeat repeat);
std::optional<DstGap> parse_dst_gap(std::string_view name);
std::optional<DstRepeat> parse_dst_repeat(std::string_view name);

// A day on which the clocks change over wall times the expression fires at, and what the policy
// does then, as an operator reads it: "2026-03-08: the clocks in America/New_York go forward
// from 02:00 to 03:00, so 02:30 does not happen: it fires at 03:00, the first instant after the
// gap".
struct DstNote {
  std::int64_t at_ms = 0;  // the instant the clocks change
  std::string text;
};

// A Quartz cron expression bound to an IANA time zone: when a cron job fires.
//
// The dialect is Quartz 2.3.2's CronExpression, the one XXL-JOB uses:
//
//   seconds minutes hours day-of-month month day-of-week [year]
//
//   seconds, minutes  0-59            , - * /
//   hours             0-23            , - * /
//   day-of-month      1-31            , - * / ? L W    (L, L-n, LW, L-nW, nW)
//   month             1-12, JAN-DEC   , - * /
//   day-of-week       1-7, SUN-SAT    , - * / ? L #    (1 = Sunday; nL, n#k, L = 7)
//   year (optional)   1970-2099       , - * /
//
// Exactly one of day-of-month and day-of-week is '?'. Ranges may wrap (22-2, FRI-MON),
// "a/n" starts at a, names are case-insensitive. Everything Quartz refuses is refused, and so
// is input Quartz would silently half-ignore (see cron_fields.h).
//
// next_after() gives the same instants as Quartz's getTimeAfter() with setTimeZone(zone),
// daylight-saving behaviour included (the default DstPolicy; with_dst_policy changes it):
//  - a fire time whose wall time falls into a spring-forward gap does not happen that day
//    ("0 30 2 * * ?" in New York skips the night the clocks jump from 02:00 to 03:00), while
//    expressions that step through the gap continue at the first wall time after it
//    ("0 */20 * * * ?" goes 01:40 EST, 03:00 EDT);
//  - a wall time that occurs twice fires once, at its second occurrence (standard time):
//    "0 30 1 * * ?" fires at 01:30 EST on a fall-back night, and "0 0 * * * ?" goes from
//    00:00 EDT to 01:00 EST, skipping 01:00 EDT.
//
// An immutable value: copies are cheap (shared state) and every method is const and safe to
// call from many threads at once. A moved-from CronExpression may only be assigned to or
// destroyed.
class CronExpression {
 public:
  // Parses `expression` for evaluation in `time_zone` (an IANA name such as
  // "America/New_York"). Throws CronError naming the wrong field, or field "timezone" for an
  // unknown zone.
  static CronExpression parse(std::string_view expression, std::string_view time_zone = "UTC");

  // The first fire time strictly after `epoch_ms` (milliseconds since the Unix epoch), or
  // nullopt when there is none: Quartz searches up to its MAX_YEAR (this year + 100), so an
  // expression whose years have passed, or that can never match ("0 0 0 30 2 ?"), has none.
  // Fire times are whole seconds. Does not allocate; typically well under a microsecond.
  std::optional<std::int64_t> next_after(std::int64_t epoch_ms) const;

  // Up to `count` consecutive fire times after `after_ms`; fewer when the schedule ends.
  std::vector<std::int64_t> next_times(std::int64_t after_ms, int count) const;

  // This expression going by `policy` on the days the clocks change: next_after() and
  // next_times() then also give the instants the policy adds (the first instant after a gap
  // that held a wall time of the expression; the first occurrence of a repeated one), and a
  // preview can say which days it acts on (dst_notes). The default policy gives Quartz's times.
  CronExpression with_dst_policy(DstPolicy policy) const;
  const DstPolicy& dst_policy() const;

  // The clock changes from just after `after_ms` up to `until_ms` that fall on wall times this
  // expression fires at, each with what the policy does then; at most `max` of them, oldest
  // first. Computed from the zone's table, never by stepping through fire times one by one.
  std::vector<DstNote> dst_notes(std::int64_t after_ms, std::int64_t until_ms, std::size_t max) const;

  // The expression and zone exactly as given to parse().
  const std::string& expression() const;
  const std::string& time_zone() const;

 private:
  struct State;
  explicit CronExpression(std::shared_ptr<const State> state) : state_(std::move(state)) {}

  std::shared_ptr<const State> state_;
};

// True when `time_zone` is an IANA zone name known to the system's tz database.
bool is_valid_time_zone(std::string_view time_zone);

// `epoch_ms` as local time in `time_zone`, to the second, with its numeric offset:
// "2026-11-27T10:15:00-05:00", "2026-06-01T08:00:00+00:00" for UTC. Throws CronError
// (field "timezone") for an unknown zone.
std::string format_iso8601(std::int64_t epoch_ms, std::string_view time_zone);

}  // namespace cronwheel::common
