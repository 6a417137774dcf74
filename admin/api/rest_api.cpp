#include "admin/api/rest_api.h"

#include "admin/api/audit_api.h"
#include "admin/api/tokens_api.h"
#include "admin/api/users_api.h"

namespace cronwheel::admin {

RestApi::RestApi(common::http::HttpServer& server, Stores stores, common::Clock& clock, Options options)
    : stores_(stores),
      options_(std::move(options)),
      passwords_(options_.passwords),
      login_limiter_(clock, options_.login_limits),
      authenticator_(stores_.sessions, stores_.tokens, clock, options_.sessions),
      router_(server, authenticator_, options_.lanes),
      services_{stores_, authenticator_, passwords_, login_limiter_, clock} {
  if (CalendarStore* calendars = options_.calendars.store) {
    if (options_.resources.calendars == nullptr) options_.resources.calendars = calendars;
    if (options_.workflows.calendars == nullptr) options_.workflows.calendars = calendars;
    if (options_.calendars.workflows == nullptr) options_.calendars.workflows = options_.workflows.store;
    if (options_.backfills.calendars == nullptr) options_.backfills.calendars = calendars;
  }
  if (options_.backfills.workflows == nullptr) options_.backfills.workflows = options_.workflows.store;
  add_auth_routes(router_, services_);
  add_users_routes(router_, services_);
  add_tokens_routes(router_, services_);
  add_audit_routes(router_, stores_.audit);
  add_resource_routes(router_, stores_, clock, options_.resources);
  if (options_.alarm_channels.store != nullptr) add_alarm_channel_routes(router_, options_.alarm_channels, clock);
  if (options_.jobs_files.store != nullptr) add_jobs_file_routes(router_, options_.jobs_files, clock);
  if (options_.workflows.store != nullptr) add_workflow_routes(router_, stores_, options_.workflows, clock);
  if (options_.calendars.store != nullptr) add_calendar_routes(router_, stores_, options_.calendars, clock);
  if (options_.backfills.store != nullptr) add_backfill_routes(router_, stores_, options_.backfills, clock);
}

RestApi::~RestApi() = default;

}  // namespace cronwheel::admin
