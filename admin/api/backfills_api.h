#pragma once

#include <functional>
#include <string>

#include "admin/api/api_router.h"
#include "admin/model/backfill_store.h"
#include "admin/model/calendar_store.h"
#include "admin/model/finished_runs.h"
#include "admin/model/stores.h"
#include "admin/model/workflow_store.h"
#include "common/util/clock.h"

namespace cronwheel::admin {

// Backfills (docs/scheduling.md, "Backfill"; docs/workflows.md, "Backfill"; openapi.yaml tag
// `backfills`): POST jobs/{id}/backfill and POST workflows/{id}/backfill (or a dry run of
// either), GET backfills, GET backfills/{id}, POST backfills/{id}/cancel.
//
//  - Permissions as for triggering the job or workflow (admin/api/resource_access.h): a normal
//    user backfills and sees the backfills of their groups' jobs and workflows only; anything
//    else is a 404.
//  - A request is checked field by field before anything is counted, each refusal a 400 naming
//    its field: `from` at or after kMinBackfillTime and before `to`, `to` not after now,
//    `onExisting` SKIP or RERUN, `maxConcurrent` 1-100, a workflow's `inputs` as a trigger's
//    params (workflow_run_inputs: every declared parameter given or defaulted); then the job or
//    workflow (backfill_schedule: CRON or FIX_RATE, its calendar usable) and the range, whose
//    instants are counted with the schedule up to kMaxBackfillInstants + 1 (one more is a 400
//    naming `to` and the instant to split at).
//  - A dry run writes nothing and answers the instants, those that have a run already, and how
//    many would run. A backfill is made running (409 while kMaxRunningBackfills are running) and
//    the node's pump is woken (`created`); it is audited by the store (backfill.create), and so
//    is a cancel (backfill.cancel: the backfill cancelled with its pending runs; 409 when it had
//    ended already).
struct BackfillRoutes {
  BackfillStore* store = nullptr;  // required
  // Where the calendar a job or workflow names is read (its backfill skips what the calendar
  // excludes); without it, one naming a calendar cannot be backfilled (400 on calendarId).
  CalendarStore* calendars = nullptr;
  // Where a workflow is read; without it POST workflows/{id}/backfill is not routed.
  WorkflowStore* workflows = nullptr;
  // This node: the owner of the follow-ups of the runs a cancel ends.
  std::string node_id = "admin";
  // Called once a backfill was made: the node's pump steps it at once instead of within a second.
  std::function<void()> created;
  // When set, the runs a cancel ends are counted there, by group.
  FinishedRuns* finished_runs = nullptr;
};

// `routes.store`, `stores` and `clock` must outlive the server.
void add_backfill_routes(ApiRouter& router, Stores stores, const BackfillRoutes& routes, common::Clock& clock);

}  // namespace cronwheel::admin
