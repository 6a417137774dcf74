#include "cli/job_ref.h"

#include <cstdint>

#include "cli/api_client.h"
#include "cli/cli_error.h"

namespace cronwheel::cli {

namespace {

using nlohmann::json;

constexpr std::size_t kMaxAppName = 64;
constexpr std::size_t kMaxJobName = 100;
// Pages of GET groups read at most while looking for one app name (1000 groups each).
constexpr int kMaxGroupPages = 100;

bool alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }
bool lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool punct(char c) { return c == '.' || c == '_' || c == '-'; }

std::optional<std::string> job_name_problem(std::string_view text) {
  if (text.empty()) return "the job name is empty";
  if (text.size() > kMaxJobName) return "a job name has at most 100 characters";
  bool ok = lower_alnum(text.front());
  for (char c : text) ok = ok && (lower_alnum(c) || punct(c));
  if (!ok) return "a job name has only a-z, 0-9, '.', '_' and '-', and starts with a letter or digit";
  return std::nullopt;
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

std::variant<JobRef, std::string> parse_job_ref(std::string_view text) {
  const auto slash = text.find('/');
  if (slash == std::string_view::npos) {
    bool digits = !text.empty();
    for (char c : text) digits = digits && c >= '0' && c <= '9';
    if (!digits) return std::string("a job is its numeric id or APP/NAME (the group's app name and the job's name)");
    auto id = parse_id(text);
    if (auto* why = std::get_if<std::string>(&id)) return *why;
    JobRef ref;
    ref.id = std::get<std::int64_t>(id);
    return ref;
  }
  const auto app = text.substr(0, slash);
  const auto name = text.substr(slash + 1);
  if (auto why = app_name_problem(app)) return *why;
  if (auto why = job_name_problem(name)) return *why;
  JobRef ref;
  ref.app_name = std::string(app);
  ref.name = std::string(name);
  return ref;
}

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

}  // namespace cronwheel::cli
