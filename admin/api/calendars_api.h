#pragma once

#include "admin/api/api_router.h"
#include "admin/model/calendar_store.h"
#include "admin/model/stores.h"
#include "admin/model/workflow_store.h"
#include "common/util/clock.h"

namespace cronwheel::admin {

// Business calendars (docs/scheduling.md, "Calendars"; openapi.yaml tag `calendars`):
// GET/POST calendars, GET/PUT/DELETE calendars/{id}, POST calendars/{id}/import (an .ics file),
// GET calendars/{id}/export (.ics), GET calendars/{id}/days?year=YYYY (the console's year view).
//
//  - Calendars are shared by the jobs of every group: every logged-in user reads them; creating,
//    changing, importing into and deleting them needs the admin role (403 otherwise).
//  - Objects are calendar_json.h's to_json() (what the audit log holds too); a body is read field
//    by field in the same spelling and held to BusinessCalendar::make before a store sees it, so
//    a refusal is a 400 naming the body's field as business_calendar.h names it
//    ("excludedDates[3]: ..."). A body is bounded before it is parsed: kMaxCalendarBodyBytes,
//    and the rules' bounds on each list before its items are read.
//  - A date's `source` and `sourceUid` are the import's: a date given again on the same day and
//    of the same kind keeps them (an edit in the console does not turn imported holidays into
//    hand-entered ones, which a re-import would then leave behind); any other value is refused.
//  - Changes name the `version` they change (409 when it changed meanwhile); deleting a calendar
//    that jobs or workflows name is a 409 naming them. The store audits every change
//    (calendar.create, calendar.update, calendar.import, calendar.delete).
//  - After a change of a calendar's rules (its zone, days or times), each running job (and, with
//    `workflows`, workflow) naming it whose next fire time comes later than the first time the
//    new rules let through gets that sooner time ("job.retime" in the audit log): a holiday
//    taken out fires today, not at the next time the old rules allowed. A next time the new rules
//    exclude is the scan's to move (decide_fires). This reads every running job, page by page.
struct CalendarRoutes {
  CalendarStore* store = nullptr;      // required
  WorkflowStore* workflows = nullptr;  // optional: workflows naming a changed calendar are re-timed too
};

// What a create or update body may hold at most (about 6,000 dates with long names and sources).
inline constexpr std::size_t kMaxCalendarBodyBytes = 4 * 1024 * 1024;

// `routes.store`, `stores` and `clock` must outlive the server.
void add_calendar_routes(ApiRouter& router, Stores stores, const CalendarRoutes& routes, common::Clock& clock);

}  // namespace cronwheel::admin
