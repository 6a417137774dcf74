#pragma once

// How the command line names jobs, workflows, groups and runs, and how those names become the
// API's ids.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include <nlohmann/json.hpp>

namespace cronwheel::cli {

class ApiClient;

// A job as the command line names it: its numeric id ("42"), or its group's app name and its
// own name ("billing/nightly-invoices"), the identity jobs files use. A workflow is named the
// same way (its name follows the rules of job names, unique in its group).
struct JobRef {
  std::int64_t id = 0;   // > 0 for an id
  std::string app_name;  // with name, for APP/NAME
  std::string name;

  bool by_id() const noexcept { return id > 0; }
  std::string text() const;  // as written: "42" or "billing/nightly-invoices"
};

// Parses `text`, or says why not in a phrase for a usage error:
//   - an id: decimal digits, 1 to 2^63-1;
//   - APP/NAME: APP as app names are (1-64 of A-Z a-z 0-9 . _ -, starting with a letter or
//     digit), NAME as job names are (1-100 of a-z 0-9 . _ -, starting with a letter or digit).
std::variant<JobRef, std::string> parse_job_ref(std::string_view text);

using WorkflowRef = JobRef;

// As parse_job_ref, for a workflow: the same forms, the reasons saying "workflow".
std::variant<WorkflowRef, std::string> parse_workflow_ref(std::string_view text);

// Whether `text` is a workflow's name (as job names are); why not otherwise.
std::optional<std::string> workflow_name_problem(std::string_view text);

// A run's or other object's numeric id: 1 to 2^63-1, or why not.
std::variant<std::int64_t, std::string> parse_id(std::string_view text);

// Whether `text` is an app name as above; why not otherwise.
std::optional<std::string> app_name_problem(std::string_view text);

// The job's id: `ref.id`, or the id of the job GET jobs?appName=APP&name=NAME finds. Throws
// CliError "no such job" (status 1) when there is none, and what ApiClient throws.
std::int64_t resolve_job(ApiClient& api, const JobRef& ref);

// The workflow's id: `ref.id`, or the id of the workflow named NAME in the group APP (the group
// found as resolve_group does, then GET workflows?jobGroup=ID&name=NAME). Throws CliError "no
// such group" or "no such workflow" (status 1), and what ApiClient throws.
std::int64_t resolve_workflow(ApiClient& api, const WorkflowRef& ref);

// The group whose appName is exactly `app_name` (as GET groups/{id} answers it), found through
// GET groups?text=..., page by page. Throws CliError "no such group" (status 1) when there is none.
nlohmann::json resolve_group(ApiClient& api, const std::string& app_name);

// App names of the groups `objects` (jobs, workflows, workflow runs: each with a `jobGroup`) are
// in, by group id: the first page of groups, then each group still missing, one by one (50 at
// most). A group not found (gone, or not the user's) is left out.
std::map<std::int64_t, std::string> group_app_names(ApiClient& api, const nlohmann::json& objects);

// "APP/NAME" for an object of `group_app_names`' list, whose name is under `name_key`; "#ID/NAME"
// when its group's app name is not known.
std::string app_slash_name(const nlohmann::json& object, const std::map<std::int64_t, std::string>& apps,
                           const char* name_key = "name");

}  // namespace cronwheel::cli
