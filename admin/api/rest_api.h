#pragma once

#include <memory>

#include "admin/api/alarm_channels_api.h"
#include "admin/api/api_router.h"
#include "admin/api/auth_api.h"
#include "admin/api/backfills_api.h"
#include "admin/api/calendars_api.h"
#include "admin/api/jobs_files_api.h"
#include "admin/api/workflows_api.h"
#include "admin/api/resource_routes.h"
#include "admin/auth/credential_authenticator.h"
#include "admin/auth/login_rate_limiter.h"
#include "admin/auth/password_hasher.h"
#include "admin/model/stores.h"
#include "common/http/http_server.h"

namespace cronwheel::admin {

// The REST API under /api/v1, assembled on the admin's HTTP server: the credential checks
// (session cookie, bearer token), the login rate limiter, and every route module
// (auth, users, tokens, audit, alarm channels, and the resources: groups, jobs, scripts, logs,
// cron, workflows, calendars, backfills).
//
// Construct it before the server starts (routes are registered in the constructor); it must
// outlive the server's handlers, i.e. be destroyed after the server stopped.
class RestApi {
 public:
  struct Options {
    CredentialAuthenticator::Options sessions;
    PasswordHasher::Options passwords;
    LoginRateLimiter::Options login_limits;
    ApiLanes lanes;
    ResourceOptions resources;
    // alarm-channels, when its store is set (admin/api/alarm_channels_api.h).
    AlarmChannelRoutes alarm_channels;
    // apply and export, when its store is set (admin/api/jobs_files_api.h).
    JobsFileRoutes jobs_files;
    // workflows and workflow-runs, when its store is set (admin/api/workflows_api.h).
    WorkflowRoutes workflows;
    // calendars, when its store is set (admin/api/calendars_api.h). Its store is then also the
    // one jobs, workflows and cron/next read the calendars they name from (set here, unless
    // `resources.calendars` or `workflows.calendars` is set already), and the workflows' store
    // the one it re-times workflows in.
    CalendarRoutes calendars;
    // backfills, when its store is set (admin/api/backfills_api.h); the calendars' store is the
    // one it reads the calendars jobs and workflows name from, and the workflows' store the one
    // it reads workflows from, unless `backfills.calendars` or `backfills.workflows` is set
    // already.
    BackfillRoutes backfills;
  };

  // `clock` is the API's time for everything (sessions, login limits, audit, fires); it must
  // outlive the object.
  RestApi(common::http::HttpServer& server, Stores stores, common::Clock& clock, Options options);
  ~RestApi();

  RestApi(const RestApi&) = delete;
  RestApi& operator=(const RestApi&) = delete;

  const ApiRouter& router() const noexcept { return router_; }
  const PasswordHasher& passwords() const noexcept { return passwords_; }
  CredentialAuthenticator& authenticator() noexcept { return authenticator_; }

 private:
  Stores stores_;
  Options options_;
  PasswordHasher passwords_;
  LoginRateLimiter login_limiter_;
  CredentialAuthenticator authenticator_;
  ApiRouter router_;
  AuthServices services_;
};

}  // namespace cronwheel::admin
