#pragma once

#include <cstdint>
#include <vector>

#include "admin/model/calendar_store.h"
#include "admin/scheduler/fire_decision.h"

namespace cronwheel::admin {

// The calendars a scan decides with (decide_fires' ScanCalendars), kept between scans and
// loaded when a scan names them in ScanDecision::calendars_wanted: after a calendar changes,
// the jobs that name it wait one scan (about a second) for the new version, and are never
// decided with an older one than the pre-read saw. Holds one entry per calendar a scan has
// wanted, at most as many as there are calendars.
//
// Not thread-safe: it belongs to the thread that scans.
class CalendarCache {
 public:
  explicit CalendarCache(CalendarStore& store) : store_(store) {}

  const ScanCalendars& calendars() const noexcept { return calendars_; }

  // Reads `ids` as they are now, in one read: each one's rules checked (BusinessCalendar::make),
  // one that does not exist any more dropped. Throws what the store throws (StoreUnavailable);
  // then nothing changed.
  void load(const std::vector<std::int64_t>& ids);

 private:
  CalendarStore& store_;
  ScanCalendars calendars_;
};

}  // namespace cronwheel::admin
