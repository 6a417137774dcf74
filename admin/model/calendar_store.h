#pragma once

// Port: business calendars (calendar.h). Implemented by PgCalendarStore (admin/pg) and by the
// fake in tests/support, both held to tests/support/calendar_contract_tests.h.
//
// A calendar is written whole: its row, its dates and its excluded times change together in one
// transaction, and every change adds 1 to its version. Changes that name a version are refused
// with Conflict("...", "version") when the stored one differs, so two operators editing one
// calendar cannot overwrite each other silently. Every change is audited ("calendar.create",
// "calendar.update", "calendar.import", "calendar.delete"; before and after as calendar_json.h
// writes them).
//
// Which dates are stored is calendar_dates.h's rule, the same for every implementation: a day
// listed twice as the same kind is kept once, as first listed; a day both excluded and included
// (a recurring excluded date counts on its month and day of every year) is Conflict("...",
// "dates") naming the day. The schema's ranges are Conflicts naming their field too: a date's
// year (0 or 1970-2999), month and day (1-31), an included date of year 0 ("dates"); a time
// out of 0-86399 ("excludedTimes"); a malformed name ("name").
//
// The store does not check the rest of the rules (business_calendar.h: zone, days that exist,
// the lists' bounds): the API holds a calendar to BusinessCalendar::make before writing it, and
// for an import to make() of imported_dates() of the calendar it read, at the version it names.
// Reads take at most the rules' bounds of dates and times of a calendar.
//
// Thread-safe; StoreUnavailable when the database cannot be reached (then nothing was written).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "admin/model/calendar.h"
#include "admin/model/records.h"
#include "admin/model/store_errors.h"
#include "admin/model/stores.h"

namespace cronwheel::admin {

class CalendarStore {
 public:
  virtual ~CalendarStore() = default;

  struct Filter {
    std::string text;  // substring of name or description, case-insensitive
    PageRequest page;  // by offset and limit; `after`/`before` are not read
  };
  // Ordered by name (byte order). Items carry their dates and times whole; the total is exact.
  virtual Page<Calendar> list(const Filter& filter) = 0;
  virtual std::optional<Calendar> get(std::int64_t id) = 0;
  virtual std::optional<Calendar> get_by_name(const std::string& name) = 0;
  // Each of `ids` that exists, whole, in one read (the scheduler's calendars for a scan); once
  // each, in id order.
  virtual std::vector<Calendar> get_many(const std::vector<std::int64_t>& ids) = 0;

  // Version 1, id and times assigned. Conflict("...", "name") for a name taken.
  virtual Calendar create(const Calendar& calendar, const Actor& actor) = 0;
  // Replaces everything but id and created_at, guarded by `calendar.version`; version + 1.
  // Conflict("...", "name") for a name another calendar has; NotFound when it does not exist.
  virtual Calendar update(const Calendar& calendar, const Actor& actor) = 0;
  // Replaces the dates whose source is `source` with `dates` (each given that source), keeping
  // every other date, the rules and the times; guarded by `version`; version + 1. What a
  // re-import of the same .ics source does: a holiday the new file no longer has goes, a date
  // entered by hand stays. A new date on the same day and of the same kind as a kept one is not
  // stored (the kept one stands, with its name and source). Conflict("...", "dates") when a new
  // date is the same day as a kept one of the other kind (excluded against included);
  // Conflict("...", "source") for an empty source (that is the hand-entered dates'); NotFound
  // when the calendar does not exist.
  virtual Calendar replace_imported(std::int64_t id, const std::string& source, const std::vector<CalendarDate>& dates,
                                    int version, const Actor& actor) = 0;
  // Its dates and times go with it. Conflict("...", "id") while a job or workflow names it: the
  // message names the first three, jobs then workflows, as "job <app name>/<name>", and how many
  // more there are. NotFound when it does not exist.
  virtual void remove(std::int64_t id, const Actor& actor) = 0;
};

}  // namespace cronwheel::admin
