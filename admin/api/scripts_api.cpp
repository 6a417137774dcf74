// The script source of GLUE_* jobs: save a new version, list versions, restore one (routes:
// add_script_routes in resource_routes.h). The store keeps the newest
// ScriptStore::kVersionsKept versions.

#include <string>

#include "admin/api/api_errors.h"
#include "admin/api/field_checks.h"
#include "admin/api/job_validation.h"
#include "admin/api/json_body.h"
#include "admin/api/resource_access.h"
#include "admin/api/resource_routes.h"
#include "admin/model/record_json.h"

namespace cronwheel::admin {

namespace {

// Script source belongs to GLUE_* jobs; a BEAN job runs a handler compiled into its executor.
void require_script_job(const Job& job) {
  if (job.glue_type == GlueType::kBean) {
    throw conflict("job " + std::to_string(job.id) + " is a BEAN job; only GLUE_* jobs have script source",
                   "glueType");
  }
}

}  // namespace

void add_script_routes(ApiRouter& router, Stores stores, const ResourceOptions&) {
  router.add("GET", "jobs/{id}/script/versions", Access::kUser,
             [stores](ApiRouter::RouteContext& ctx, const common::http::Request& req) {
               auto job = visible_job(stores.jobs, ctx.request.who(), ctx.path_int("id"));
               auto page = page_query(req);
               auto versions = stores.scripts.versions(job.id);  // newest first, at most 30
               return ApiResponse{200,
                                  sliced_page_json(versions, page, [](const ScriptVersion& v) { return to_json(v); })};
             },
             paged({}));

  router.add("POST", "jobs/{id}/script", Access::kUser, [stores](ApiRouter::RouteContext& ctx, const common::http::Request& req) {
    auto job = visible_job(stores.jobs, ctx.request.who(), ctx.path_int("id"));
    JsonBody body(req.body);
    auto source = checked_glue_source(body.required_string("glueSource"));
    auto remark = trimmed(body.required_string("glueRemark"));
    body.finish();
    check_text("glueRemark", remark, kMaxGlueRemark, true);
    require_script_job(job);
    return ApiResponse{200, to_json(stores.scripts.save_version(job.id, source, remark, ctx.request.actor))};
  }, {}, common::http::RouteOptions{.max_body_bytes = kMaxJobBodyBytes});

  router.add("POST", "jobs/{id}/script/versions/{versionId}/restore", Access::kUser,
             [stores](ApiRouter::RouteContext& ctx, const common::http::Request& req) {
               auto job = visible_job(stores.jobs, ctx.request.who(), ctx.path_int("id"));
               const auto version_id = ctx.path_int("versionId");
               JsonBody(req.body).finish();
               auto version = stores.scripts.get_version(version_id);
               if (!version || version->job_id != job.id) {
                 throw not_found("no such script version: " + std::to_string(version_id));
               }
               require_script_job(job);
               if (version->glue_type != job.glue_type) {
                 throw conflict("version " + std::to_string(version_id) + " is " + std::string(to_string(version->glue_type)) +
                                    " source and job " + std::to_string(job.id) + " is now " + std::string(to_string(job.glue_type)),
                                "glueType");
               }
               // Restoring saves the old source as the newest version, so the history shows it.
               auto remark = truncate_chars("restored version " + std::to_string(version_id) + ": " + version->glue_remark,
                                       kMaxGlueRemark);
               return ApiResponse{200, to_json(stores.scripts.save_version(job.id, version->glue_source, remark,
                                                                            ctx.request.actor))};
             });
}

}  // namespace cronwheel::admin
