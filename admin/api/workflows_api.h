#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "admin/api/api_router.h"
#include "admin/model/calendar_store.h"
#include "admin/model/run_end.h"
#include "admin/model/stores.h"
#include "admin/model/workflow_store.h"
#include "common/util/clock.h"

namespace cronwheel::admin {

// Workflows (docs/workflows.md, openapi.yaml tag `workflows`): GET/POST workflows,
// POST workflows/check, GET/PUT/DELETE workflows/{id}, POST workflows/{id}/start|stop|trigger;
// GET workflow-runs, GET workflow-runs/{id}, POST workflow-runs/{id}/cancel|rerun.
//
// Permissions as for jobs (admin/api/resource_access.h): a workflow belongs to a group, and a
// normal user sees and acts on the workflows of their groups only; each node's job must be one
// the user can see (400 "does not exist" otherwise). Every change is audited by the store.
struct WorkflowRoutes {
  WorkflowStore* store = nullptr;  // required
  // This node: the owner of the fires a trigger or a re-run writes.
  std::string node_id = "admin";
  // Called with the fires a change wrote, once committed, so they are sent at once.
  FiresWritten fires_written = {};
  // Where the calendar a workflow names (calendarId, calendarMode) is read: checked to exist and
  // applied to its first fire time, as for jobs (resource_routes.h ResourceOptions::calendars).
  CalendarStore* calendars = nullptr;
};

// `routes.store`, `stores` and `clock` must outlive the server.
void add_workflow_routes(ApiRouter& router, Stores stores, const WorkflowRoutes& routes, common::Clock& clock);

// The inputs a run of `workflow` gets from `given` (the request's object of parameter values;
// none: every default), as the run's params JSON text: every declared parameter, given or its
// default. A 400 naming `field` ("params", "inputs"; the message says which parameter as
// "params.NAME") when `given` is not an object, names a parameter the workflow does not declare,
// leaves out one without a default, or holds a value over 64 KiB.
std::string workflow_run_inputs(const Workflow& workflow, const nlohmann::json* given, const std::string& field);

// The workflow with `id` when it exists and `who` may see its group; HttpError 404 "no such
// workflow" otherwise, as if it did not exist (resource_access.h's rule).
Workflow visible_workflow(WorkflowStore& store, const Principal& who, std::int64_t id);

}  // namespace cronwheel::admin
