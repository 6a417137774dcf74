#include "common/cron/dst_policy.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "common/cron/civil_time.h"
#include "common/cron/next_fire_time.h"

namespace cronwheel::common::cron_detail {
namespace {

// Longer than any change of offset a zone has made (Pacific/Apia skipped a whole day in 2011):
// a change this far after the best instant found cannot add an earlier one.
constexpr std::int64_t kLongestChangeMs = 25 * kMillisPerHour;

// How many wall times of one change a note counts before it says "and more".
constexpr int kMaxCountedInNote = 10'000;

const ZoneRules& wall_clock() {
  static const std::shared_ptr<const ZoneRules> utc = ZoneRules::find("UTC");
  return *utc;
}

// The first wall time at or after `from_wall` the fields match; wall times are read as UTC
// instants, so no gap or repeat gets in the way.
std::optional<std::int64_t> first_wall_match(const CronFields& fields, std::int64_t from_wall) {
  return next_fire_time(fields, wall_clock(), from_wall - 1);
}

// Remembers the last search so that a run of changes without a matching wall time between
// them costs one search, not one per change (a yearly expression, or one that has ended).
class WallMatches {
 public:
  explicit WallMatches(const CronFields& fields) : fields_(fields) {}

  // The first matching wall time in [from, to), if any.
  std::optional<std::int64_t> first_in(std::int64_t from, std::int64_t to) {
    if (!(searched_ && from >= searched_from_ && (!match_ || from <= *match_))) {
      searched_ = true;
      searched_from_ = from;
      match_ = first_wall_match(fields_, from);
    }
    // No match in [searched_from_, match_): the first one at or after `from` is match_.
    if (match_ && *match_ < to) return match_;
    return std::nullopt;
  }

  // True once a search found no match at all from some wall time on: later changes have none.
  bool exhausted() const { return searched_ && !match_; }

 private:
  const CronFields& fields_;
  bool searched_ = false;
  std::int64_t searched_from_ = 0;
  std::optional<std::int64_t> match_;
};

void keep_earliest(std::optional<std::int64_t>& best, std::int64_t candidate) {
  if (!best || candidate < *best) best = candidate;
}

std::string two_digits(std::int64_t n) {
  char buffer[8];
  std::snprintf(buffer, sizeof buffer, "%02d", static_cast<int>(n));
  return buffer;
}

// "02:30", or "02:30:15" when the seconds are not zero.
std::string wall_time_label(std::int64_t wall_ms) {
  const std::int64_t in_day = floor_mod(floor_div(wall_ms, kMillisPerSecond), 86400);
  std::string label = two_digits(in_day / 3600) + ":" + two_digits(in_day / 60 % 60);
  if (in_day % 60 != 0) label += ":" + two_digits(in_day % 60);
  return label;
}

std::string date_label(std::int64_t wall_ms) {
  const CivilDate d = civil_from_days(floor_div(wall_ms, kMillisPerDay));
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02d", d.year, d.month, d.day);
  return buffer;
}

// "-05:00", "+05:45".
std::string offset_label(std::int64_t offset_ms) {
  const std::int64_t minutes = (offset_ms < 0 ? -offset_ms : offset_ms) / kMillisPerMinute;
  return std::string(offset_ms < 0 ? "-" : "+") + two_digits(minutes / 60) + ":" + two_digits(minutes % 60);
}

std::string with_thousands(std::int64_t n) {
  std::string digits = std::to_string(n);
  for (auto i = static_cast<std::ptrdiff_t>(digits.size()) - 3; i > 0; i -= 3) {
    digits.insert(static_cast<std::size_t>(i), ",");
  }
  return digits;
}

// The wall times in [from, to) the fields match, as a sentence's subject: "02:30", "02:00,
// 02:20 and 02:40", "01:00, 01:00:01, 01:00:02 and 3,597 more"; `count` gets how many.
std::string matched_wall_times(const CronFields& fields, std::int64_t from, std::int64_t to, int& count) {
  std::vector<std::int64_t> shown;
  count = 0;
  bool more_than_counted = false;
  for (auto m = first_wall_match(fields, from); m && *m < to; m = first_wall_match(fields, *m + 1)) {
    if (count == kMaxCountedInNote) {
      more_than_counted = true;
      break;
    }
    if (shown.size() < 3) shown.push_back(*m);
    ++count;
  }
  std::string text;
  const int rest = count - static_cast<int>(shown.size());
  for (std::size_t i = 0; i < shown.size(); ++i) {
    if (i > 0) text += (i + 1 == shown.size() && rest == 0) ? " and " : ", ";
    text += wall_time_label(shown[i]);
  }
  if (rest > 0) text += " and " + std::string(more_than_counted ? "over " : "") + with_thousands(rest) + " more";
  return text;
}

}  // namespace

std::optional<std::int64_t> next_with_dst_policy(const CronFields& fields, const ZoneRules& zone,
                                                 DstPolicy policy, std::int64_t after_ms,
                                                 std::optional<std::int64_t> quartz_next) {
  if (policy == DstPolicy{} || zone.fixed()) return quartz_next;
  std::optional<std::int64_t> best = quartz_next;
  WallMatches matches(fields);
  std::size_t hint = 0;
  // Every instant a change adds lies within a day of it and after `after_ms`, so only changes
  // after `after_ms` and before the best instant (plus that day) can add an earlier one.
  for (auto change = zone.next_change(after_ms, hint); change; change = zone.next_change(change->utc_ms, hint)) {
    const std::int64_t x = change->utc_ms;
    if (best && x - kLongestChangeMs >= *best) break;
    if (matches.exhausted()) break;
    if (change->after_ms > change->before_ms) {
      // A gap: wall times [x + before, x + after) do not exist. FIRE_AFTER fires at x itself,
      // the first instant after it, once for all of them.
      if (policy.gap == DstGap::kFireAfter && matches.first_in(x + change->before_ms, x + change->after_ms)) {
        keep_earliest(best, x);
      }
    } else if (policy.repeat == DstRepeat::kBoth) {
      // A repeat: wall times [x + after, x + before) happen first at w - before, then at
      // w - after. Quartz gives the second occurrences, except those it steps past when it
      // starts inside the first; BOTH asks for every occurrence after `after_ms`.
      const std::int64_t from = x + change->after_ms;
      const std::int64_t to = x + change->before_ms;
      if (auto w = matches.first_in(std::max(from, after_ms + change->before_ms + 1), to)) {
        keep_earliest(best, *w - change->before_ms);
      }
      if (auto w = matches.first_in(std::max(from, after_ms + change->after_ms + 1), to)) {
        keep_earliest(best, *w - change->after_ms);
      }
    }
  }
  return best;
}

std::vector<DstNote> dst_notes(const CronFields& fields, const ZoneRules& zone, DstPolicy policy,
                               std::int64_t after_ms, std::int64_t until_ms, std::size_t max) {
  std::vector<DstNote> notes;
  if (zone.fixed() || max == 0) return notes;
  std::size_t hint = 0;
  for (auto change = zone.next_change(after_ms, hint); change && notes.size() < max;
       change = zone.next_change(change->utc_ms, hint)) {
    const std::int64_t x = change->utc_ms;
    const bool gap = change->after_ms > change->before_ms;
    // The first instant the change touches: the gap itself, or a repeat's first occurrences.
    const std::int64_t first_touched = gap ? x : x - (change->before_ms - change->after_ms);
    if (first_touched > until_ms) break;
    const std::int64_t from = x + std::min(change->before_ms, change->after_ms);
    const std::int64_t to = x + std::max(change->before_ms, change->after_ms);
    int count = 0;
    const std::string times = matched_wall_times(fields, from, to, count);
    if (count == 0) continue;
    const bool one = count == 1;
    std::string text = date_label(x + change->before_ms) + ": the clocks in " + zone.name() + " go " +
                       (gap ? "forward" : "back") + " from " + wall_time_label(x + change->before_ms) + " to " +
                       wall_time_label(x + change->after_ms) + ", so " + times + " " +
                       (gap ? (one ? "does not happen: " : "do not happen: ") : (one ? "happens twice: " : "happen twice: "));
    if (gap) {
      text += policy.gap == DstGap::kFireAfter
                  ? std::string(one ? "it fires" : "they fire once") + " at " + wall_time_label(x + change->after_ms) +
                        ", the first instant after the gap"
                  : std::string("no fire for ") + (one ? "it" : "them") + " that day";
    } else {
      const std::string first = offset_label(change->before_ms);
      const std::string second = offset_label(change->after_ms);
      text += policy.repeat == DstRepeat::kBoth
                  ? std::string(one ? "it fires" : "each fires") + " at both (" + first + " and " + second + ")"
                  : std::string(one ? "it fires" : "each fires") + " once, at the second (" + second + ")";
    }
    notes.push_back(DstNote{x, std::move(text)});
  }
  return notes;
}

}  // namespace cronwheel::common::cron_detail
