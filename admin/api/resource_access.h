#pragma once

#include <cstdint>

#include "admin/api/api_context.h"
#include "admin/model/records.h"
#include "admin/model/stores.h"

// Who may see and act on groups, jobs and logs: the one permission rule of the resource
// endpoints.
//
//  - An admin sees and acts on everything.
//  - A normal user sees and acts on the groups listed in their user record (User::groups),
//    the jobs of those groups and the logs of those jobs, and nothing else. Changing groups
//    themselves (create, update, delete) needs the admin role (the router answers 403).
//  - Anything outside a normal user's groups is answered 404 "no such ...", exactly as if it
//    did not exist, so the ids and names of other teams' jobs do not leak. A reference to such
//    an object in a request body (jobGroup, childJobId) is a 400 "does not exist" for the same
//    reason. Lists are filtered to the user's groups (a filter naming another group finds
//    nothing).
namespace cronwheel::admin {

// The restriction to pass to a store's list: none for admins, the user's groups otherwise.
GroupScope scope_of(const Principal& who);

// The group/job/log with this id when it exists and `who` may see it; HttpError 404 otherwise.
Group visible_group(GroupStore& groups, const Principal& who, std::int64_t id);
Job visible_job(JobStore& jobs, const Principal& who, std::int64_t id);
JobLog visible_log(LogStore& logs, const Principal& who, std::int64_t id);

}  // namespace cronwheel::admin
