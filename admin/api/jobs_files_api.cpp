#include "admin/api/jobs_files_api.h"

#include <algorithm>

#include "admin/api/api_errors.h"
#include "admin/api/apply_planner.h"
#include "admin/api/field_checks.h"
#include "admin/model/store_errors.h"
#include "common/jobs_file/jobs_file.h"

namespace cronwheel::admin {

namespace {

namespace jobs_file = common::jobs_file;
using json = nlohmann::json;

constexpr std::size_t kMaxExportGroups = 1000;

bool query_flag(const common::http::Request& req, const std::string& name) {
  if (!req.has_param(name)) return false;
  const auto value = req.get_param_value(name);
  if (value == "true" || value == "1") return true;
  if (value == "false" || value == "0") return false;
  throw invalid(name, name + ": expected true or false, got '" + truncate_chars(value, 40) + "'");
}

bool is_yaml(const common::http::Request& req) {
  auto type = req.get_header_value("Content-Type");
  type = type.substr(0, type.find(';'));
  std::transform(type.begin(), type.end(), type.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  type = trimmed(type);
  if (type == "application/yaml" || type == "application/x-yaml" || type == "text/yaml") return true;
  if (type.empty() || type == "application/json") return false;
  throw common::http::HttpError(415, "unsupported_media_type",
                                "Content-Type: send the jobs file as application/json or application/yaml, not " +
                                    truncate_chars(type, 60));
}

std::string where(const jobs_file::Problem& problem) {
  std::string out;
  if (problem.location.line > 0) out = "line " + std::to_string(problem.location.line) + ": ";
  if (!problem.path.empty()) out += problem.path + ": ";
  return out + problem.message;
}

// The document of the request, checked as jobs_file checks files.
jobs_file::ParsedFile read_document(const common::http::Request& req) {
  try {
    if (is_yaml(req)) return jobs_file::parse_yaml(req.body, "the uploaded file", {});
    json document;
    try {
      document = json::parse(req.body);
    } catch (const json::exception& e) {
      throw invalid("", std::string("body: not JSON: ") + e.what());
    }
    jobs_file::check_json(document);
    return {std::move(document), {}};
  } catch (const jobs_file::JobsFileError& e) {
    throw invalid(e.problem().path, where(e.problem()));
  }
}

std::vector<std::string> export_names(const common::http::Request& req) {
  std::vector<std::string> names;
  if (!req.has_param("appName")) return names;
  for (auto& name : split_list(req.get_param_value("appName"))) {
    name = trimmed(name);
    if (!name.empty()) names.push_back(name);
  }
  if (names.size() > kMaxExportGroups) {
    throw invalid("appName", "appName: at most " + std::to_string(kMaxExportGroups) + " groups at once");
  }
  return names;
}

bool wants_json_only(const common::http::Request& req) {
  const auto accept = req.get_header_value("Accept");
  return accept.find("application/json") != std::string::npos && accept.find("yaml") == std::string::npos;
}

}  // namespace

void add_jobs_file_routes(ApiRouter& router, const JobsFileRoutes& routes, common::Clock& clock) {
  ApplyStore& store = *routes.store;
  const HeldRuns held = routes.held;
  router.add("POST", "apply", Access::kUser, [&store, &clock, held](ApiRouter::RouteContext& ctx, const common::http::Request& req) {
    const bool dry_run = query_flag(req, "dryRun");
    const bool prune = query_flag(req, "prune");
    const auto parsed = read_document(req);
    const auto& who = ctx.request.who();
    const auto now = clock.now_ms();
    const LineOf line_of = [&parsed](const std::string& path) {
      const auto location = jobs_file::locate(parsed, path);
      return location ? location->line : 0;
    };
    // In an uploaded file, a problem the planner or the store found names its line too.
    auto at_line = [&](const common::http::ErrorInfo& error) -> std::optional<common::http::HttpError> {
      const int line = error.field.empty() ? 0 : line_of(error.field);
      if (line == 0) return std::nullopt;
      return common::http::HttpError(common::http::ErrorInfo{error.status, error.code,
                                                             "line " + std::to_string(line) + ": " + error.message,
                                                             error.field, error.retry_after_seconds});
    };
    ApplyOutcome outcome;
    try {
      outcome = store.apply(
          app_names_of(parsed.document),
          [&](const JobsSnapshot& snapshot) { return plan_apply(parsed.document, snapshot, who, prune, now, line_of); },
          dry_run, ctx.request.actor);
    } catch (const common::http::HttpError& e) {
      if (auto located = at_line(e.info())) throw *located;
      throw;
    } catch (const Conflict& e) {
      if (auto located = at_line(conflict(e.what(), e.field()).info())) throw *located;
      throw;
    }
    // After the commit, as the jobs routes do: the held runs of a job the file changed are sent
    // again as it is now, those of a job it stopped are cancelled as its pending fires were.
    held.take_back_jobs(outcome.changed_jobs, "job changed by " + ctx.request.actor.username, GivenBack::kSendAgain);
    held.take_back_jobs(outcome.stopped_jobs, "job stopped by " + ctx.request.actor.username, GivenBack::kCancel);
    held.take_back_runs(std::move(outcome.deleted_held_runs), "job deleted by " + ctx.request.actor.username,
                        GivenBack::kForget);
    json answer = outcome.plan.report;
    answer["dryRun"] = dry_run;
    if (outcome.audit_id) answer["auditId"] = *outcome.audit_id;
    for (auto& calendar : answer["calendars"]) {
      if (auto it = outcome.created_calendars.find(calendar["name"].get<std::string>()); it != outcome.created_calendars.end()) {
        calendar["id"] = it->second;
      }
    }
    for (auto& group : answer["groups"]) {
      if (auto it = outcome.created_groups.find(group["appName"].get<std::string>()); it != outcome.created_groups.end()) {
        group["id"] = it->second;
      }
    }
    for (auto& job : answer["jobs"]) {
      const JobRef ref{job["appName"].get<std::string>(), job["name"].get<std::string>()};
      if (auto it = outcome.created_jobs.find(ref); it != outcome.created_jobs.end()) job["id"] = it->second;
    }
    for (auto& workflow : answer["workflows"]) {
      const JobRef ref{workflow["appName"].get<std::string>(), workflow["name"].get<std::string>()};
      if (auto it = outcome.created_workflows.find(ref); it != outcome.created_workflows.end()) workflow["id"] = it->second;
    }
    return ApiResponse{200, std::move(answer)};
  }, {"dryRun", "prune"}, common::http::RouteOptions{.max_body_bytes = jobs_file::kMaxDocumentBytes});

  router.add("GET", "export", Access::kUser, [&store](ApiRouter::RouteContext& ctx, const common::http::Request& req) {
    const auto names = export_names(req);
    const auto document = export_document(store.snapshot(names), names, ctx.request.who());
    if (wants_json_only(req)) return ApiResponse{200, document};
    return ApiResponse::text(200, jobs_file::to_yaml(document), "application/yaml; charset=utf-8");
  }, {"appName"});
}

}  // namespace cronwheel::admin
