#pragma once

// Port: business calendars (calendar.h). Implemented by PgCalendarStore (admin/pg) and by the
// fake in tests/support, both held to tests/support/calendar_contract_tests.h.
//
// A calendar is written whole: its row, its dates and its excluded times change together in one
// transaction, and every change adds 1 to its version. Changes that name a version are refused
// with Conflict("...", "version") when the stored one differs, so two operators editing one
// calendar cannot overwrite each other silently. Every change is audited ("calendar.create",
// "calendar.update", "calendar.import", "calendar.delete").
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
    PageRequest page;
  };
  // Ordered by name. Items carry their dates and times whole.
  virtual Page<Calendar> list(const Filter& filter) = 0;
  virtual std::optional<Calendar> get(std::int64_t id) = 0;
  virtual std::optional<Calendar> get_by_name(const std::string& name) = 0;
  // Each of `ids` that exists, whole, in one read (the scheduler's calendars for a scan).
  virtual std::vector<Calendar> get_many(const std::vector<std::int64_t>& ids) = 0;

  // Version 1, id and times assigned. Conflict("...", "name") for a name taken.
  virtual Calendar create(const Calendar& calendar, const Actor& actor) = 0;
  // Replaces everything but id and created_at, guarded by `calendar.version`; version + 1.
  // Conflict("...", "name") for a name another calendar has; NotFound when it does not exist.
  virtual Calendar update(const Calendar& calendar, const Actor& actor) = 0;
  // Replaces the dates whose source is `source` with `dates` (each given that source), keeping
  // every other date, the rules and the times; guarded by `version`; version + 1. What a
  // re-import of the same .ics source does: a holiday the new file no longer has goes, a date
  // entered by hand stays. Conflict("...", "dates") when a new date is the same day as a kept one
  // of the other kind (excluded against included).
  virtual Calendar replace_imported(std::int64_t id, const std::string& source, const std::vector<CalendarDate>& dates,
                                    int version, const Actor& actor) = 0;
  // Conflict("...", "id") while a job or workflow names it (the message names some of them);
  // NotFound when it does not exist.
  virtual void remove(std::int64_t id, const Actor& actor) = 0;
};

}  // namespace cronwheel::admin
