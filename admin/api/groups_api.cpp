#include "admin/api/groups_api.h"

#include <set>
#include <string>

#include "admin/api/api_errors.h"
#include "admin/api/field_checks.h"
#include "admin/api/json_body.h"
#include "admin/api/resource_access.h"
#include "admin/api/resource_routes.h"
#include "admin/model/record_json.h"
#include "admin/model/slots.h"
#include "common/jobs_file/jobs_file.h"
#include "common/util/utf8.h"

namespace cronwheel::admin {

namespace {

constexpr std::size_t kMinAppName = 4;
constexpr std::size_t kMaxAppName = 64;
constexpr std::size_t kMaxTitle = 64;
constexpr std::size_t kMaxAccessToken = 255;
constexpr std::size_t kMaxAddresses = 1000;

void check_app_name(const std::string& name) {
  if (name.size() < kMinAppName || name.size() > kMaxAppName) {
    throw invalid("appName", "appName: " + std::to_string(kMinAppName) + " to " + std::to_string(kMaxAppName) +
                                 " characters, got " + std::to_string(common::utf8::char_count(name)));
  }
  if (!common::jobs_file::is_app_name(name)) {
    throw invalid("appName", "appName: letters, digits, '.', '_' and '-' only, starting with a letter or digit, got '" +
                                 name + "'");
  }
}

std::vector<std::string> read_addresses(JsonBody& body) {
  const auto& json = body.json();
  std::vector<std::string> list;
  if (auto it = json.find("addressList"); it != json.end() && it->is_string()) {
    list = split_list(*body.optional_string("addressList"));
  } else {
    list = body.optional_string_list("addressList").value_or(std::vector<std::string>{});
    for (auto& address : list) address = trimmed(address);
  }
  if (list.size() > kMaxAddresses) {
    throw invalid("addressList", "addressList: at most " + std::to_string(kMaxAddresses) + " addresses");
  }
  check_http_urls("addressList", list);
  std::set<std::string> seen;
  for (const auto& address : list) {
    if (!seen.insert(address).second) throw invalid("addressList", "addressList: '" + address + "' is listed twice");
  }
  return list;
}

}  // namespace

Group read_group_body(std::string_view body_text, Group group, GroupBodyKind kind) {
  JsonBody body(body_text);
  static const nlohmann::json answered = to_json(Group{});
  refuse_read_only(body, answered, {"appName", "title", "addressType", "addressList", "maxRunning"});

  if (kind == GroupBodyKind::kCreate) {
    group.app_name = body.required_string("appName");
    check_app_name(group.app_name);
  } else if (auto name = body.optional_string("appName"); name && *name != group.app_name) {
    throw invalid("appName", "appName: cannot be changed (jobs and executors know the group by it)");
  }
  if (kind == GroupBodyKind::kCreate || body.has("title")) {
    group.title = trimmed(body.required_string("title"));
    check_text("title", group.title, kMaxTitle, true);
  }
  if (auto type = body.optional_int("addressType")) {
    if (*type != 0 && *type != 1) {
      throw invalid("addressType",
                    "addressType: expected 0 (from executor registrations) or 1 (entered by hand), got " +
                        std::to_string(*type));
    }
    if (group.address_type == 1 && *type == 0) group.address_list.clear();  // registrations refill it
    group.address_type = static_cast<int>(*type);
  }
  if (body.has("addressList")) {
    auto list = read_addresses(body);
    if (group.address_type == 0 && !list.empty()) {
      throw invalid("addressList",
                    "addressList: only for addressType 1; a group with addressType 0 takes its addresses from "
                    "executor registrations");
    }
    if (group.address_type == 1) group.address_list = std::move(list);
  }
  if (group.address_type == 1 && group.address_list.empty()) {
    throw invalid("addressList", "addressList: a group with addressType 1 needs at least one executor address");
  }
  if (auto token = body.optional_string("accessToken")) {
    check_text("accessToken", *token, kMaxAccessToken, false);
    group.access_token = token->empty() ? std::nullopt : std::optional<std::string>(*token);
  }
  if (auto limit = body.optional_int("maxRunning")) {
    group.max_running = check_int_range("maxRunning", *limit, 0, kMaxGroupRunning);
  }
  body.finish();
  return group;
}

void add_group_routes(ApiRouter& router, Stores stores, const ResourceOptions& options) {
  // Copied into the handlers: they outlive this call.
  auto changed = [hook = options.automatic_group_changed](const Group& group) {
    if (hook && group.address_type == 0) hook();
  };

  router.add("GET", "groups", Access::kUser, [stores](ApiRouter::RouteContext& ctx, const common::http::Request& req) {
    auto page = page_query(req);
    GroupStore::Filter filter;
    filter.scope = scope_of(ctx.request.who());
    filter.text = req.get_param_value("text");
    filter.page = page;
    auto result = stores.groups.list(filter);
    return ApiResponse{200, page_json(result.items, result.total, [](const Group& g) { return to_json(g); })};
  }, paged({"text"}));

  router.add("POST", "groups", Access::kAdmin, [stores, changed](ApiRouter::RouteContext& ctx, const common::http::Request& req) {
    auto group = read_group_body(req.body, Group{}, GroupBodyKind::kCreate);
    if (stores.groups.find_by_app_name(group.app_name)) {
      throw conflict("appName: a group named '" + group.app_name + "' already exists", "appName");
    }
    auto created = stores.groups.create(group, ctx.request.actor);
    changed(created);
    return ApiResponse{201, to_json(created)};
  });

  router.add("GET", "groups/{id}", Access::kUser, [stores](ApiRouter::RouteContext& ctx, const common::http::Request&) {
    return ApiResponse{200, to_json(visible_group(stores.groups, ctx.request.who(), ctx.path_int("id")))};
  });

  router.add("PUT", "groups/{id}", Access::kAdmin, [stores, changed](ApiRouter::RouteContext& ctx, const common::http::Request& req) {
    auto current = visible_group(stores.groups, ctx.request.who(), ctx.path_int("id"));
    auto group = read_group_body(req.body, current, GroupBodyKind::kUpdate);
    auto updated = stores.groups.update(group, ctx.request.actor);
    changed(updated);
    return ApiResponse{200, to_json(updated)};
  });

  router.add("DELETE", "groups/{id}", Access::kAdmin, [stores](ApiRouter::RouteContext& ctx, const common::http::Request&) {
    auto group = visible_group(stores.groups, ctx.request.who(), ctx.path_int("id"));
    // The store refuses (Conflict → 409) while jobs still belong to the group.
    stores.groups.remove(group.id, ctx.request.actor);
    return ApiResponse{204, nullptr};
  });
}

}  // namespace cronwheel::admin
