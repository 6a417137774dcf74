#pragma once

// The plan POST /api/v1/apply answers (openapi.yaml ApplyPlan), as `cronwheel apply` and
// `cronwheel import xxl-job` send a document and show what it changed.

#include <iosfwd>

#include <nlohmann/json.hpp>

#include "cli/api_client.h"

namespace cronwheel::cli {

class Context;

// POST apply?dryRun=..&prune=.. with `document` (a jobs file's JSON form); answers the plan.
// Throws ApiError for a refusal (its field is the path in the document, e.g.
// `groups[billing].jobs[nightly].scheduleConf`), CliError (status 1) for a document larger
// than the server takes, and unexpected_answer for a plan that lacks what print_plan reads.
nlohmann::json post_apply(ApiClient& api, const nlohmann::json& document, bool dry_run, bool prune);

// The plan for people: a line for each calendar, group, job, workflow and user that is not
// unchanged, in that order ("create calendar cn-holidays", "create job billing/nightly",
// "delete job billing/old", "update job billing/report" followed
// by a line per changed field, indented: `    scheduleConf: "0 0 * * * ?" → "0 30 * * * ?"`,
// values as JSON, long ones cut with "…"), then the summary: "2 to create, 1 to update,
// 7 unchanged, 0 to delete (dry run: nothing changed)", "applied: 2 created, 1 updated,
// 7 unchanged, 0 deleted", or "nothing to change: 10 unchanged". Throws unexpected_answer for
// a plan without its lists or summary.
void print_plan(std::ostream& out, const nlohmann::json& plan);

// The exit status of a plan: kExitChanges for a dry run that found changes, else kExitOk.
int plan_status(const nlohmann::json& plan, bool dry_run);

// Prints the plan in the command's output format (print_plan for tables, the plan object for
// -o json and -o yaml) and answers plan_status.
int report_plan(Context& ctx, const nlohmann::json& plan, bool dry_run);

}  // namespace cronwheel::cli
