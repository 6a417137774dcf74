#include "admin/api/resource_routes.h"

namespace cronwheel::admin {

void add_resource_routes(ApiRouter& router, Stores stores, common::Clock& clock, const ResourceOptions& options) {
  add_group_routes(router, stores, options);
  add_job_routes(router, stores, clock, options);
  add_script_routes(router, stores, options);
  add_log_routes(router, stores, clock, options);
  add_cron_routes(router, clock, options);
  add_overview_routes(router, stores, clock, options);
}

}  // namespace cronwheel::admin
