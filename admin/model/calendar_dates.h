#pragma once

// What a CalendarStore (calendar_store.h) makes of the dates it is given: one rule for
// PgCalendarStore and the fake, so the two cannot keep different days. The rules of what the
// dates mean are common/cron/business_calendar.h's; these only decide which rows are stored.

#include <string>
#include <vector>

#include "admin/model/calendar.h"

namespace cronwheel::admin {

// "2026-10-01"; "--10-01" for a date of every year (year 0, ISO 8601's month-day).
std::string date_text(const common::CalendarDay& day);

// `dates` as a calendar stores them: ordered by (year, month, day); a day listed more than once
// as the same kind kept once, as first listed (the entry business_calendar.h names the day by).
// Throws Conflict("<day> is both excluded and included", "dates") for a day that is both: the
// same (year, month, day), or a recurring excluded date and an included one on its month and day.
std::vector<CalendarDate> stored_dates(std::vector<CalendarDate> dates);

// The dates of a calendar that holds `current` once an import of `source` brought `imported`:
// the dates of `current` from `source` go, every other one stays; each of `imported` comes with
// that source, unless a kept date is the same day of the same kind (the kept one stands, a date
// entered by hand or another import's); then stored_dates(). Conflict("...", "dates") when an
// imported date is the same day as a kept one of the other kind, naming the day.
std::vector<CalendarDate> imported_dates(const std::vector<CalendarDate>& current, const std::string& source,
                                         std::vector<CalendarDate> imported);

// `given` (a calendar's dates as an edit states them, sources aside) with the source and source
// UID of the date of `stored` on the same day (year, month, day) and of the same kind: an edit
// that repeats an imported date does not make it one entered by hand, so a later import of its
// source still replaces it. A date without such a stored one is entered by hand (no source).
std::vector<CalendarDate> with_stored_sources(std::vector<CalendarDate> given, const std::vector<CalendarDate>& stored);

}  // namespace cronwheel::admin
