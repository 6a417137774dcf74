#include "cli/job_ref.h"

#include <cstdint>
#include <set>

#include "cli/api_client.h"
#include "cli/cli_error.h"
#include "cli/output.h"

namespace cronwheel::cli {

namespace {

using nlohmann::json;

constexpr std::size_t kMaxAppName = 64;
constexpr std::size_t kMaxJobName = 100;
// Pages of GET groups read at most while looking for one app name (1000 groups each).
constexpr int kMaxGroupPages = 100;
// Groups looked up one by one for a list's app names, beyond the first page of groups.
constexpr std::size_t kMaxGroupLookups = 50;

bool alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }
bool lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool punct(char c) { return c == '.' || c == '_' || c == '-'; }

// `what` is "job" or "workflow": both follow the rules of jobs files' names.
std::optional<std::string> name_problem(std::string_view text, const std::string& what) {
  if (text.empty()) return "the " + what + " name is empty";
  if (text.size() > kMaxJobName) return "a " + what + " name has at most 100 characters";
  bool ok = lower_alnum(text.front());
  for (char c : text) ok = ok && (lower_alnum(c) || punct(c));
  if (!ok) return "a " + what + " name has only a-z, 0-9, '.', '_' and '-', and starts with a letter or digit";
  return std::nullopt;
}

// JOB or WORKFLOW: an id or APP/NAME; `what` names it in the reasons.
std::variant<JobRef, std::string> parse_ref(std::string_view text, const std::string& what) {
  const auto slash = text.find('/');
  if (slash == std::string_view::npos) {
    bool digits = !text.empty();
    for (char c : text) digits = digits && c >= '0' && c <= '9';
    if (!digits) {
      return "a " + what + " is its numeric id or APP/NAME (the group's app name and the " + what + "'s name)";
    }
    auto id = parse_id(text);
    if (auto* why = std::get_if<std::string>(&id)) return *why;
    JobRef ref;
    ref.id = std::get<std::int64_t>(id);
    return ref;
  }
  const auto app = text.substr(0, slash);
  const auto name = text.substr(slash + 1);
  if (auto why = app_name_problem(app)) return *why;
  if (auto why = name_problem(name, what)) return *why;
  JobRef ref;
  ref.app_name = std::string(app);
  ref.name = std::string(name);
  return ref;
}

}  // namespace

std::string JobRef::text() const { return by_id() ? std::to_string(id) : app_name + "/" + name; }

std::variant<std::int64_t, std::string> parse_id(std::string_view text) {
  if (text.empty()) return std::string("the id is empty");
  std::uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::string("an id is a positive whole number");
    value = value * 10 + static_cast<std::uint64_t>(c - '0');
    if (value > static_cast<std::uint64_t>(INT64_MAX)) return std::string("the id is too large");
  }
  if (value == 0) return std::string("an id is a positive whole number");
  return static_cast<std::int64_t>(value);
}

std::optional<std::string> app_name_problem(std::string_view text) {
  if (text.empty()) return "the app name is empty";
  if (text.size() > kMaxAppName) return "an app name has at most 64 characters";
  bool ok = alnum(text.front());
  for (char c : text) ok = ok && (alnum(c) || punct(c));
  if (!ok) return "an app name has only letters, digits, '.', '_' and '-', and starts with a letter or digit";
  return std::nullopt;
}

std::variant<JobRef, std::string> parse_job_ref(std::string_view text) { return parse_ref(text, "job"); }

std::variant<WorkflowRef, std::string> parse_workflow_ref(std::string_view text) { return parse_ref(text, "workflow"); }

std::optional<std::string> workflow_name_problem(std::string_view text) { return name_problem(text, "workflow"); }

std::int64_t resolve_job(ApiClient& api, const JobRef& ref) {
  if (ref.by_id()) return ref.id;
  const json page = api.get("jobs" + query_string({{"appName", ref.app_name}, {"name", ref.name}, {"limit", "2"}}));
  const json& items = array_member(page, "items");
  if (items.empty()) throw operation_failed("no such job");
  if (items.size() > 1) throw unexpected_answer("two jobs named " + ref.text());
  return int_member(items.front(), "id");
}

json resolve_group(ApiClient& api, const std::string& app_name) {
  std::int64_t offset = 0;
  for (int page_number = 0; page_number < kMaxGroupPages; ++page_number) {
    const json page = api.get("groups" + query_string({{"text", app_name},
                                                       {"offset", std::to_string(offset)},
                                                       {"limit", "1000"}}));
    const json& items = array_member(page, "items");
    for (const json& group : items) {
      if (string_member(group, "appName") == app_name) {
        int_member(group, "id");  // checked here, so callers may take it
        return group;
      }
    }
    offset += static_cast<std::int64_t>(items.size());
    if (items.empty() || offset >= int_member(page, "total")) break;
  }
  throw operation_failed("no such group");
}

std::int64_t resolve_workflow(ApiClient& api, const WorkflowRef& ref) {
  if (ref.by_id()) return ref.id;
  const json group = resolve_group(api, ref.app_name);
  const json page = api.get("workflows" + query_string({{"jobGroup", std::to_string(int_member(group, "id"))},
                                                        {"name", ref.name},
                                                        {"limit", "2"}}));
  const json& items = array_member(page, "items");
  if (items.empty()) throw operation_failed("no such workflow");
  if (items.size() > 1) throw unexpected_answer("two workflows named " + ref.text());
  return int_member(items.front(), "id");
}

std::map<std::int64_t, std::string> group_app_names(ApiClient& api, const json& objects) {
  std::set<std::int64_t> wanted;
  for (const json& object : objects) wanted.insert(int_of(object, "jobGroup"));
  std::map<std::int64_t, std::string> names;
  if (wanted.empty()) return names;
  const json page = api.get("groups?limit=1000");
  for (const json& group : array_member(page, "items")) names[int_member(group, "id")] = string_member(group, "appName");
  std::size_t lookups = 0;
  for (std::int64_t id : wanted) {
    if (names.count(id) != 0 || id <= 0 || ++lookups > kMaxGroupLookups) continue;
    try {
      names[id] = string_member(api.get("groups/" + std::to_string(id)), "appName");
    } catch (const ApiError&) {
      // Gone since the object was read, or not the user's: shown by id.
    }
  }
  return names;
}

std::string app_slash_name(const json& object, const std::map<std::int64_t, std::string>& apps, const char* name_key) {
  const auto group = int_of(object, "jobGroup");
  auto app = apps.find(group);
  return (app != apps.end() ? app->second : "#" + std::to_string(group)) + "/" + text_of(object, name_key);
}

}  // namespace cronwheel::cli
