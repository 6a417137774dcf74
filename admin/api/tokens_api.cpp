#include "admin/api/tokens_api.h"

#include "admin/api/api_errors.h"
#include "admin/api/field_checks.h"
#include "admin/api/json_body.h"
#include "admin/model/record_json.h"

namespace cronwheel::admin {

namespace {

constexpr std::size_t kMaxTokenName = 64;
constexpr std::int64_t kMsPerDay = 24LL * 3600 * 1000;

std::string checked_name(const std::string& name) {
  const bool blank = name.find_first_not_of(" \t\r\n") == std::string::npos;
  std::size_t characters = 0;
  for (unsigned char c : name) characters += (c & 0xC0) != 0x80 ? 1 : 0;
  if (blank || characters > kMaxTokenName) {
    throw invalid("name", "name: 1 to " + std::to_string(kMaxTokenName) + " characters, not only spaces");
  }
  if (auto character = deceptive_character(name)) throw invalid("name", "name: must not contain " + *character);
  return name;
}

ApiResponse create_token(AuthServices& s, ApiRouter::RouteContext& ctx, const common::http::Request& req) {
  JsonBody body(req.body);
  auto name = checked_name(body.required_string("name"));
  auto days = body.optional_int("expiresInDays");
  body.finish();
  std::optional<std::int64_t> expires_at;
  if (days) {
    check_int_range("expiresInDays", *days, 1, kMaxTokenLifetimeDays);
    expires_at = s.clock.now_ms() + *days * kMsPerDay;
  }
  const auto& user = ctx.request.who().user;
  auto secret = CredentialAuthenticator::new_token();
  auto token = s.stores.tokens.create(user.id, name, secret.hash, expires_at, ctx.request.actor);
  auto json = to_json(token);
  json["token"] = secret.secret;
  ApiResponse response(201, std::move(json));
  response.headers.emplace_back("Cache-Control", "no-store");
  return response;
}

ApiResponse list_tokens(AuthServices& s, ApiRouter::RouteContext& ctx, const common::http::Request& req) {
  auto page = page_query(req);
  auto all = s.stores.tokens.list(ctx.request.who().user.id);
  return {200, sliced_page_json(all, page, [](const ApiToken& t) { return to_json(t); })};
}

ApiResponse revoke_token(AuthServices& s, ApiRouter::RouteContext& ctx) {
  const auto id = ctx.path_int("id");
  if (!s.stores.tokens.revoke(ctx.request.who().user.id, id, ctx.request.actor)) {
    throw not_found("token " + std::to_string(id) + " does not exist");
  }
  return ApiResponse(204);
}

}  // namespace

void add_tokens_routes(ApiRouter& router, AuthServices& services) {
  router.add("POST", "tokens", Access::kUser, [&services](ApiRouter::RouteContext& ctx, const common::http::Request& req) {
    return create_token(services, ctx, req);
  });
  router.add(
      "GET", "tokens", Access::kUser,
      [&services](ApiRouter::RouteContext& ctx, const common::http::Request& req) { return list_tokens(services, ctx, req); },
      paged({}));
  router.add("DELETE", "tokens/{id}", Access::kUser,
             [&services](ApiRouter::RouteContext& ctx, const common::http::Request&) { return revoke_token(services, ctx); });
}

}  // namespace cronwheel::admin
