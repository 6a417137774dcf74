#include "admin/api/users_api.h"

#include <algorithm>

#include "admin/api/api_errors.h"
#include "admin/api/json_body.h"
#include "admin/model/record_json.h"

namespace cronwheel::admin {

namespace {

// As app_user's CHECK constraint, so a bad name is a 400 naming the field, not a database error.
void check_username(const std::string& username) {
  if (!is_valid_username(username)) {
    throw invalid("username", "username: 1 to 64 characters of letters, digits and . _ @ -");
  }
}

std::string checked_role(const std::string& role) {
  if (role != "admin" && role != "normal") throw invalid("role", "role: must be \"admin\" or \"normal\", got \"" + role + "\"");
  return role;
}

// Sorted, without duplicates, every one an existing group.
std::vector<std::int64_t> checked_groups(GroupStore& groups, std::vector<std::int64_t> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  for (auto id : ids) {
    if (!groups.get(id)) throw invalid("groups", "groups: group " + std::to_string(id) + " does not exist");
  }
  return ids;
}

User existing_user(UserStore& users, std::int64_t id) {
  auto user = users.get(id);
  if (!user) throw not_found("user " + std::to_string(id) + " does not exist");
  return *user;
}

ApiResponse list_users(AuthServices& s, const common::http::Request& req) {
  auto page = page_query(req);
  auto result = s.stores.users.list(page);
  return {200, page_json(result.items, result.total, [](const User& u) { return to_json(u); })};
}

ApiResponse create_user(AuthServices& s, ApiRouter::RouteContext& ctx, const common::http::Request& req) {
  JsonBody body(req.body);
  User user;
  user.username = body.required_string("username");
  auto password = body.required_string("password");
  user.role = checked_role(body.optional_string("role").value_or("normal"));
  auto groups = body.optional_int_list("groups").value_or(std::vector<std::int64_t>{});
  body.finish();

  check_username(user.username);
  check_new_password("password", password);
  user.groups = checked_groups(s.stores.groups, std::move(groups));
  if (s.stores.users.find_by_username(user.username)) {
    throw conflict("username " + user.username + " is taken", "username");
  }
  user.password_hash = s.passwords.hash(password);
  return {201, to_json(s.stores.users.create(user, ctx.request.actor))};
}

ApiResponse update_user(AuthServices& s, ApiRouter::RouteContext& ctx, const common::http::Request& req) {
  const auto id = ctx.path_int("id");
  JsonBody body(req.body);
  auto username = body.optional_string("username");
  auto role = body.optional_string("role");
  auto groups = body.optional_int_list("groups");
  auto password = body.optional_string("password");
  body.finish();

  User user = existing_user(s.stores.users, id);
  if (username && *username != user.username) throw invalid("username", "username: cannot be changed");
  if (password) check_new_password("password", *password);

  bool changed = false;
  if (role && checked_role(*role) != user.role) {
    if (id == ctx.request.who().user.id) throw conflict("you cannot change your own role", "role");
    user.role = *role;
    changed = true;
  }
  if (groups) {
    user.groups = checked_groups(s.stores.groups, std::move(*groups));
    changed = true;
  }
  if (changed) {
    user.password_hash.clear();  // "keep the password": set_password below changes it, audited apart
    // The store refuses (409 on role) to demote the last admin, in the same transaction as the
    // change, so two admins demoting each other at once cannot both succeed.
    user = s.stores.users.update(user, ctx.request.actor);
  }
  if (password) {
    // Ends every session of the user and revokes their API tokens: whoever knew the old
    // password is out. An admin setting their own password here keeps the session they are
    // using.
    const auto keep = id == ctx.request.who().user.id ? CredentialAuthenticator::session_store_hash(ctx.request.who())
                                                       : std::string();
    s.stores.users.set_password(id, s.passwords.hash(*password), keep, ctx.request.actor);
    user = existing_user(s.stores.users, id);
  }
  return {200, to_json(user)};
}

ApiResponse delete_user(AuthServices& s, ApiRouter::RouteContext& ctx) {
  const auto id = ctx.path_int("id");
  if (id == ctx.request.who().user.id) throw conflict("you cannot delete your own user");
  // NotFound is a 404; the last admin is refused by the store (409 on role).
  s.stores.users.remove(id, ctx.request.actor);
  return ApiResponse(204);
}

}  // namespace

void add_users_routes(ApiRouter& router, AuthServices& services) {
  router.add("GET", "users", Access::kAdmin,
             [&services](ApiRouter::RouteContext&, const common::http::Request& req) { return list_users(services, req); },
             paged({}));
  router.add("GET", "users/{id}", Access::kAdmin, [&services](ApiRouter::RouteContext& ctx, const common::http::Request&) {
    return ApiResponse(200, to_json(existing_user(services.stores.users, ctx.path_int("id"))));
  });
  // Both may hash a password.
  router.add("POST", "users", Access::kAdmin, [&services](ApiRouter::RouteContext& ctx, const common::http::Request& req) {
    return create_user(services, ctx, req);
  }, {}, {.lane = kPasswordLane});
  router.add("PUT", "users/{id}", Access::kAdmin,
             [&services](ApiRouter::RouteContext& ctx, const common::http::Request& req) {
               return update_user(services, ctx, req);
             },
             {}, {.lane = kPasswordLane});
  router.add("DELETE", "users/{id}", Access::kAdmin,
             [&services](ApiRouter::RouteContext& ctx, const common::http::Request&) { return delete_user(services, ctx); });
}

}  // namespace cronwheel::admin
