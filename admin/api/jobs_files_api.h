#pragma once

#include "admin/api/api_router.h"
#include "admin/api/held_runs.h"
#include "admin/model/apply_store.h"
#include "common/util/clock.h"

namespace cronwheel::admin {

// Jobs files (docs/jobs-as-code.md, openapi.yaml): POST apply?dryRun=&prune= takes a document
// as JSON or, with Content-Type application/yaml, as the YAML file itself, and answers the plan
// (admin/api/apply_planner.h), applied in one transaction unless dryRun; GET export?appName=a,b
// answers the groups' jobs file as YAML, or as JSON to a request that accepts only JSON.
// Problems in an uploaded YAML file name its line as well as the path.
struct JobsFileRoutes {
  ApplyStore* store = nullptr;  // required
  // Lead dispatch: the held runs of the jobs an apply changed are taken back and sent again as
  // they are now, those of the jobs it stopped are cancelled (as PUT jobs/{id} and POST
  // jobs/{id}/stop do). Unwired, nothing is.
  HeldRuns held;
};

// `routes.store` and `clock` must outlive the server.
void add_jobs_file_routes(ApiRouter& router, const JobsFileRoutes& routes, common::Clock& clock);

}  // namespace cronwheel::admin
