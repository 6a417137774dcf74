#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cronwheel::common::cron_detail {

// The UTC offsets of one IANA time zone as a flat table of transitions, built once per zone
// from date/tz (the system tzdata) and shared, immutable, by every expression in that zone.
//
// It answers the two questions the evaluation asks without calling into date/tz:
//  - offset_at(utc): the offset in force at an instant;
//  - offset_for_wall(local): the offset java.util.GregorianCalendar gives a local wall time
//    (sun.util.calendar.ZoneInfo.getOffsetsByWall): the offset of the latest transition whose
//    own wall time (its instant plus its new offset) is <= the wall time. So a wall time in a
//    gap takes the offset from before the gap (02:30 on a spring-forward night in New York is
//    read as 02:30 EST, which is 03:30 EDT), and a wall time that occurs twice takes the offset
//    from after the transition (01:30 on a fall-back night is 01:30 EST, the second one).
//
// The table covers every transition up to January of Quartz's MAX_YEAR + 2; later instants
// keep the last offset. The tzdata files list transitions explicitly only up to 2037; later
// ones come from the POSIX TZ rule at the end of each file, which is also how Java continues
// a zone's daylight-saving rules past its own table.
class ZoneRules {
 public:
  // The rules of an IANA zone name. Throws CronError (field "timezone") for an unknown name.
  // Thread-safe and cached: only the first call for a name pays for date::locate_zone and
  // for building the table.
  static std::shared_ptr<const ZoneRules> find(std::string_view name);

  const std::string& name() const { return name_; }

  // True for a zone with a single offset (UTC, Etc/GMT+5, ...).
  bool fixed() const { return transitions_.size() == 1; }

  // Offsets are in milliseconds east of UTC. `hint` is the caller's cursor into the table
  // (start it at 0): lookups at or just after the previous answer cost O(1), so a caller
  // moving forward in time almost never binary-searches. The table itself is never written.
  std::int64_t offset_at(std::int64_t utc_ms, std::size_t& hint) const {
    if (fixed()) return transitions_[0].offset_ms;
    hint = locate<&Transition::utc_ms>(utc_ms, hint);
    return transitions_[hint].offset_ms;
  }

  // offset_at(), also telling whether offset_for_wall(utc_ms + offset) would give the same
  // offset back, i.e. whether the instant's wall time resolves to the instant itself. It does
  // not for the first pass through a repeated hour.
  std::int64_t offset_at(std::int64_t utc_ms, std::size_t& hint, bool& round_trips) const {
    if (fixed()) {
      round_trips = true;
      return transitions_[0].offset_ms;
    }
    hint = locate<&Transition::utc_ms>(utc_ms, hint);
    const Transition& t = transitions_[hint];
    // utc_ms >= t.utc_ms, so the wall time is >= t.wall_ms; only the next threshold matters.
    round_trips = hint + 1 == transitions_.size() ||
                  utc_ms + t.offset_ms < transitions_[hint + 1].wall_ms;
    return t.offset_ms;
  }

  std::int64_t offset_for_wall(std::int64_t wall_ms, std::size_t& hint) const {
    if (fixed()) return transitions_[0].offset_ms;
    hint = locate<&Transition::wall_ms>(wall_ms, hint);
    return transitions_[hint].offset_ms;
  }

  // A change of the zone's total offset: clocks go forward (a gap: wall times from
  // utc_ms + before_ms up to utc_ms + after_ms do not exist) or back (a repeat: wall times from
  // utc_ms + after_ms up to utc_ms + before_ms happen twice).
  struct Change {
    std::int64_t utc_ms = 0;
    std::int64_t before_ms = 0;  // the offset until utc_ms
    std::int64_t after_ms = 0;   // the offset from utc_ms on
  };

  // The first change strictly after `utc_ms` whose offset differs from the one before it (a
  // table entry that renames the zone's time but keeps its offset is no change); nullopt past
  // the table's end. `hint` as for offset_at.
  std::optional<Change> next_change(std::int64_t utc_ms, std::size_t& hint) const {
    if (fixed()) return std::nullopt;
    hint = locate<&Transition::utc_ms>(utc_ms, hint);
    for (std::size_t i = hint + 1; i < transitions_.size(); ++i) {
      if (transitions_[i].offset_ms != transitions_[i - 1].offset_ms) {
        return Change{transitions_[i].utc_ms, transitions_[i - 1].offset_ms, transitions_[i].offset_ms};
      }
    }
    return std::nullopt;
  }

  // Transitions in the table, for tests: the instant (UTC ms) and the offset from then on.
  std::vector<std::pair<std::int64_t, std::int64_t>> transitions() const;

  explicit ZoneRules(std::string name) : name_(std::move(name)) {}

 private:
  struct Transition {
    std::int64_t utc_ms;     // first instant of this offset; the first entry is INT64_MIN
    std::int64_t wall_ms;    // utc_ms + offset_ms: where wall times start to take this offset
    std::int64_t offset_ms;  // total offset (standard + daylight saving)
  };

  // The index of the last transition whose key is <= x.
  template <std::int64_t Transition::*Key>
  std::size_t locate(std::int64_t x, std::size_t hint) const {
    const std::size_t n = transitions_.size();
    if (hint < n && transitions_[hint].*Key <= x) {
      if (hint + 1 == n || x < transitions_[hint + 1].*Key) return hint;
      if (hint + 2 == n || x < transitions_[hint + 2].*Key) return hint + 1;
    }
    // Start from the last transition before the ~1-year bucket of x (for wall times, of x
    // minus the largest offset, so that start's wall time is <= x too) and walk forward.
    const std::int64_t probe = Key == &Transition::wall_ms ? x - kMaxOffsetMs : x;
    std::size_t i = 0;
    if (probe >= kBucketBaseMs) {
      const auto b = static_cast<std::size_t>((probe - kBucketBaseMs) >> kBucketShift);
      i = bucket_first_[b < bucket_first_.size() ? b : bucket_first_.size() - 1];
    }
    while (i + 1 < n && transitions_[i + 1].*Key <= x) ++i;
    return i;
  }

  // Buckets of 2^35 ms (about 1.09 years) from 1900, each holding the index of the last
  // transition at or before its start, so a lookup without a useful hint walks a few entries.
  static constexpr std::int64_t kBucketBaseMs = -2'208'988'800'000;  // 1900-01-01T00:00:00Z
  static constexpr int kBucketShift = 35;
  // Larger than any UTC offset ever used (+15:13 local mean time in Asia/Manila).
  static constexpr std::int64_t kMaxOffsetMs = 16 * 3'600'000;

  void append(std::int64_t utc_ms, std::int64_t offset_ms);
  void build();
  void index();

  std::string name_;
  std::vector<Transition> transitions_;
  std::vector<std::uint32_t> bucket_first_;
};

}  // namespace cronwheel::common::cron_detail
