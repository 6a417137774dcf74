#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "admin/api/api_context.h"
#include "admin/model/authenticator.h"
#include "admin/model/stores.h"
#include "common/http/http_server.h"

namespace cronwheel::admin {

// What a handler answers: a status, a JSON body (null: no body) and extra headers
// (Set-Cookie, ...).
struct ApiResponse {
  ApiResponse(int status_code = 200, nlohmann::json json_body = nullptr)
      : status(status_code), body(std::move(json_body)) {}

  // A body that is not JSON (a YAML export): answered as is when `text_type` is set.
  static ApiResponse text(int status_code, std::string content, std::string content_type) {
    ApiResponse response(status_code);
    response.text_body = std::move(content);
    response.text_type = std::move(content_type);
    return response;
  }

  int status;
  nlohmann::json body;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string text_body;
  std::string text_type;
};

// The lanes (common/http/http_server.h LaneOptions) that ApiRouter declares on its server, for
// routes whose handlers wait long: they run on threads of their own, bounded, and answer
// 503 + Retry-After beyond their bounds, so the workers that answer /healthz, executors and
// everyone else are never held by them.
inline constexpr const char* kPasswordLane = "passwords";           // hash or verify a password
inline constexpr const char* kExecutorCallLane = "executor-calls";  // wait on an executor or alarm receiver

struct ApiLanes {
  // argon2id costs tens of milliseconds of a core and 64 MiB per check: half the cores at most
  // (at least one), so that a burst of anonymous logins leaves CPU for everything else and
  // memory bounded; a few may wait, for at most 5 s, two from any one address.
  common::http::LaneOptions passwords = password_lane_defaults();
  // Executors answer within their client's timeouts (seconds); a slow one holds a lane thread
  // that long. How many one group may hold is bounded separately (ExecutorCallLimiter).
  common::http::LaneOptions executor_calls = executor_call_lane_defaults();

  static common::http::LaneOptions password_lane_defaults();
  static common::http::LaneOptions executor_call_lane_defaults();
};

// Who may call a route.
enum class Access {
  kPublic,  // anyone (login)
  kUser,    // any authenticated user; the handler checks group permissions
  kAdmin,   // users with the admin role
};

// The REST API's routes under /api/v1, and everything every route does the same way:
//  - authentication (401 without valid credentials) and the role check (403);
//  - CSRF: a request authenticated by the session cookie that is not GET must carry
//    X-CSRF-Token equal to the session's token (403 otherwise); bearer tokens need none;
//  - path parameters: a route is written as in openapi.yaml ("jobs/{id}/start"); each `{name}`
//    matches one path segment; handlers read them with path_int() (404 unless an integer) or
//    path_string();
//  - query parameters: a route names those it reads; any other is a 400 naming it, checked
//    after authentication, so a misspelt filter ("state" for "status") is an error rather
//    than silently ignored;
//  - errors, from one place: HttpError as thrown; NotFound → 404; Conflict → 409 (with its
//    field); StoreUnavailable → 503; anything else → 500 without details (logged).
//    Every error body is {"error":{"code","message","field"?}}.
//
// Register every route before the server starts. Thread-safe afterwards (handlers run
// concurrently on the HTTP workers).
class ApiRouter {
 public:
  struct RouteContext {
    RequestContext request;
    const common::http::PathParams* params = nullptr;  // the route's {name} segments

    // A path parameter as an integer (404 when it does not fit an int64).
    std::int64_t path_int(const std::string& name) const;
    const std::string& path_string(const std::string& name) const;
  };
  using Handler = std::function<ApiResponse(RouteContext&, const common::http::Request&)>;

  struct Route {
    std::string method;  // GET, POST, PUT, DELETE
    std::string path;    // as documented, relative to /api/v1: "jobs/{id}/start"
    Access access;
    std::vector<std::string> query;  // the query parameters it reads
  };

  // Declares `lanes` on `server` (kPasswordLane, kExecutorCallLane), for the routes to name.
  ApiRouter(common::http::HttpServer& server, Authenticator& authenticator, ApiLanes lanes = {});

  // `route_options.max_body_bytes` defaults to kDefaultMaxBodyBytes: most of the API takes a few
  // fields; routes that carry script sources raise it. `route_options.lane`: kPasswordLane or
  // kExecutorCallLane for the routes that wait long (above), empty for the others.
  void add(const std::string& method, const std::string& path, Access access, Handler handler,
           std::vector<std::string> query = {}, common::http::RouteOptions route_options = {});

  // Every route registered, for the OpenAPI document check.
  const std::vector<Route>& routes() const noexcept { return routes_; }

  static constexpr const char* kPrefix = "/api/v1/";
  static constexpr std::size_t kDefaultMaxBodyBytes = 64 * 1024;

 private:
  common::http::HttpServer& server_;
  Authenticator& authenticator_;
  std::vector<Route> routes_;
};

// The query parameters page_query() reads, for a route's list; keyed_paged() for the lists
// that also page by key (keyed_page_query()).
std::vector<std::string> paged(std::vector<std::string> query);
std::vector<std::string> keyed_paged(std::vector<std::string> query);

// Reads `offset`/`limit` query parameters: offset >= 0 (default 0), limit 1..1000 (default
// 20); 400 naming the parameter otherwise.
PageRequest page_query(const common::http::Request& request);

// The deepest offset a keyed list accepts; further pages are read by key.
inline constexpr std::int64_t kMaxListOffset = 10'000;

// page_query() plus `after`/`before`: a page key as a list answered it in nextCursor or
// prevCursor, one of them at most and not with an offset; offset at most kMaxListOffset.
PageRequest keyed_page_query(const common::http::Request& request);

// A page key as the API writes it ("<time>.<id>") and reads it back; 400 naming `name` for
// anything else.
std::string page_cursor(const PageKey& key);
PageKey parse_page_cursor(const std::string& value, const std::string& name);

// {"items":[...],"total":N}
template <class T, class ToJson>
nlohmann::json page_json(const std::vector<T>& items, std::int64_t total, ToJson to_json) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& item : items) list.push_back(to_json(item));
  return {{"items", std::move(list)}, {"total", total}};
}

// page_json() for a list read whole into memory: the items of `all` from page.offset, at most
// page.limit of them (none past the end), and total all.size(). page.offset and page.limit
// as page_query() checked them.
template <class T, class ToJson>
nlohmann::json sliced_page_json(const std::vector<T>& all, const PageRequest& page, ToJson to_json) {
  const auto total = static_cast<std::int64_t>(all.size());
  const auto begin = std::min(page.offset, total);
  const auto end = std::min(begin + page.limit, total);
  nlohmann::json list = nlohmann::json::array();
  for (auto i = begin; i < end; ++i) list.push_back(to_json(all[static_cast<std::size_t>(i)]));
  return {{"items", std::move(list)}, {"total", total}};
}

// A keyed list's page: {"items", "total", "totalExact", "nextCursor", "prevCursor"}; total is a
// lower bound when totalExact is false, a cursor null at that end of the list.
template <class T, class ToJson>
nlohmann::json keyed_page_json(const Page<T>& page, ToJson to_json) {
  auto out = page_json(page.items, page.total, to_json);
  out["totalExact"] = page.total_exact;
  out["nextCursor"] = page.next ? nlohmann::json(page_cursor(*page.next)) : nlohmann::json(nullptr);
  out["prevCursor"] = page.prev ? nlohmann::json(page_cursor(*page.prev)) : nlohmann::json(nullptr);
  return out;
}

}  // namespace cronwheel::admin
