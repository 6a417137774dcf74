#include "admin/api/resource_access.h"

#include <string>

#include "admin/api/api_errors.h"

namespace cronwheel::admin {

GroupScope scope_of(const Principal& who) {
  if (who.user.is_admin()) return std::nullopt;
  return who.user.groups;
}

Group visible_group(GroupStore& groups, const Principal& who, std::int64_t id) {
  auto group = groups.get(id);
  if (!group || !who.may_access_group(group->id)) throw not_found("no such group: " + std::to_string(id));
  return std::move(*group);
}

Job visible_job(JobStore& jobs, const Principal& who, std::int64_t id) {
  auto job = jobs.get(id);
  if (!job || !who.may_access_group(job->job_group)) throw not_found("no such job: " + std::to_string(id));
  return std::move(*job);
}

JobLog visible_log(LogStore& logs, const Principal& who, std::int64_t id) {
  auto log = logs.get(id);
  if (!log || !who.may_access_group(log->job_group)) throw not_found("no such run: " + std::to_string(id));
  return std::move(*log);
}

}  // namespace cronwheel::admin
