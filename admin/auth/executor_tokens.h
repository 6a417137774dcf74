#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "admin/model/stores.h"

namespace cronwheel::admin {

// Which XXL-JOB-ACCESS-TOKEN an executor must send to the admin's executor endpoints, so that an
// executor host holds the key to its own group and nothing more (as XXL-JOB 3.5 does):
//  - a group with its own access token accepts only that token, for registrations under its
//    appName and for results of its runs;
//  - any other group, and an appName no group has yet, accepts the admin's token
//    (--access-token);
//  - with neither set, no token is needed.
// The admin sends the same token to the group's executors (trigger_service.cpp), so one setting
// per group serves both directions.
//
// Reads the stores on every call (registrations come every 30 s per executor, results in
// batches); not cached, so a token changed on any node holds on every node at once.
// Thread-safe as the stores are.
class ExecutorTokens {
 public:
  ExecutorTokens(GroupStore& groups, LogStore& logs, std::string admin_token);

  // The token a registration (or removal) of `app_name` needs; empty: none.
  std::string for_app(std::string_view app_name);

  // The token each run's result needs, by run id; runs that do not exist are left out (their
  // results are ignored anyway).
  std::map<std::int64_t, std::string> for_runs(const std::vector<std::int64_t>& log_ids);

  // The token the executors of group `group_id` accept, which the admin sends them: the group's
  // own, or the admin's (a group that does not exist: the admin's); empty: none.
  std::string for_group_id(std::int64_t group_id);

 private:
  std::string for_group(const std::optional<Group>& group) const;

  GroupStore& groups_;
  LogStore& logs_;
  const std::string admin_token_;
};

}  // namespace cronwheel::admin
