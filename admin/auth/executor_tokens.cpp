#include "admin/auth/executor_tokens.h"

#include <utility>

namespace cronwheel::admin {

ExecutorTokens::ExecutorTokens(GroupStore& groups, LogStore& logs, std::string admin_token)
    : groups_(groups), logs_(logs), admin_token_(std::move(admin_token)) {}

std::string ExecutorTokens::for_group_id(std::int64_t group_id) { return for_group(groups_.get(group_id)); }

std::string ExecutorTokens::for_group(const std::optional<Group>& group) const {
  return executor_token(group ? group->access_token : std::nullopt, admin_token_);
}

std::string ExecutorTokens::for_app(std::string_view app_name) { return for_group(groups_.find_by_app_name(app_name)); }

std::map<std::int64_t, std::string> ExecutorTokens::for_runs(const std::vector<std::int64_t>& log_ids) {
  std::map<std::int64_t, std::string> out;
  std::map<std::int64_t, std::string> by_group;
  for (const auto& [id, group] : logs_.groups_of(log_ids)) {
    auto known = by_group.find(group);
    if (known == by_group.end()) known = by_group.emplace(group, for_group(groups_.get(group))).first;
    out.emplace(id, known->second);
  }
  return out;
}

}  // namespace cronwheel::admin
