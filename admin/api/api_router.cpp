#include "admin/api/api_router.h"

#include <algorithm>
#include <charconv>
#include <thread>

#include <spdlog/spdlog.h>

#include "admin/api/api_errors.h"
#include "admin/api/field_checks.h"
#include "admin/api/json_body.h"
#include "admin/auth/secrets.h"
#include "admin/model/store_errors.h"
#include "admin/model/stores.h"
#include "common/util/utf8.h"

namespace cronwheel::admin {

namespace {

// What Authenticator judges: the request's Authorization and Cookie headers, as sent.
Credentials credentials_of(const common::http::Request& req) {
  Credentials credentials;
  if (req.has_header("Authorization")) credentials.authorization = req.get_header_value("Authorization");
  const auto cookies = req.get_header_value_count("Cookie");
  for (std::size_t i = 0; i < cookies; ++i) credentials.cookie_headers.push_back(req.get_header_value("Cookie", i));
  return credentials;
}

// Query values reach SQL and JSON answers: they must be UTF-8, without control characters.
void check_query_text(const std::string& name, const std::string& value) {
  if (!common::utf8::is_valid(value)) throw invalid(name, name + ": not valid UTF-8");
  for (unsigned char c : value) {
    if (c < 0x20 || c == 0x7f) throw invalid(name, name + ": must not contain control characters");
  }
}

bool changes_state(const std::string& method) { return method != "GET" && method != "HEAD"; }

void write(common::http::Response& res, const ApiResponse& response) {
  for (const auto& [name, value] : response.headers) res.set_header(name, value);
  if (!response.text_type.empty()) {
    res.status = response.status;
    res.set_content(response.text_body, response.text_type);
    return;
  }
  if (response.body.is_null()) {
    res.status = response.status;
    return;
  }
  common::http::write_json(res, response.body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                           response.status);
}

}  // namespace

std::int64_t ApiRouter::RouteContext::path_int(const std::string& name) const {
  const auto& text = path_string(name);
  try {
    std::size_t used = 0;
    auto value = std::stoll(text, &used);
    if (used == text.size()) return value;
  } catch (const std::exception&) {
  }
  throw not_found("no such " + name + ": " + text);
}

const std::string& ApiRouter::RouteContext::path_string(const std::string& name) const {
  const std::string* value = params != nullptr ? params->find(name) : nullptr;
  if (value == nullptr) throw std::logic_error("route has no path parameter " + name);
  return *value;
}

common::http::LaneOptions ApiLanes::password_lane_defaults() {
  common::http::LaneOptions lane;
  lane.threads = std::max(1u, std::thread::hardware_concurrency() / 2);
  lane.max_waiting = 8;
  lane.max_per_address = 2;
  lane.max_wait = std::chrono::seconds(5);
  lane.retry_after = std::chrono::seconds(2);
  lane.busy_message = "too many password checks are waiting; try again in a few seconds";
  return lane;
}

common::http::LaneOptions ApiLanes::executor_call_lane_defaults() {
  common::http::LaneOptions lane;
  lane.threads = 16;
  lane.max_waiting = 32;
  lane.max_per_address = 8;
  lane.max_wait = std::chrono::seconds(10);
  lane.retry_after = std::chrono::seconds(5);
  lane.busy_message = "too many calls to executors are waiting for their answers; try again in a few seconds";
  return lane;
}

ApiRouter::ApiRouter(common::http::HttpServer& server, Authenticator& authenticator, ApiLanes lanes)
    : server_(server), authenticator_(authenticator) {
  server_.add_lane(kPasswordLane, std::move(lanes.passwords));
  server_.add_lane(kExecutorCallLane, std::move(lanes.executor_calls));
}

void ApiRouter::add(const std::string& method, const std::string& path, Access access, Handler handler,
                    std::vector<std::string> query, common::http::RouteOptions route_options) {
  if (!route_options.max_body_bytes) route_options.max_body_bytes = kDefaultMaxBodyBytes;
  routes_.push_back({method, path, access, query});

  auto wrapped = [this, method, access, query, handler = std::move(handler)](
                     const common::http::Request& req, common::http::Response& res, const common::http::PathParams& params) {
    RouteContext ctx;
    ctx.params = &params;
    ctx.request.actor.remote_addr = req.remote_addr;
    try {
      if (access != Access::kPublic) {
        auto principal = authenticator_.authenticate(credentials_of(req));
        if (!principal) throw unauthorized();
        if (access == Access::kAdmin && !principal->user.is_admin()) {
          throw forbidden("this needs the admin role");
        }
        if (principal->method == Principal::Method::kSession && changes_state(method) &&
            !constant_time_equals(req.get_header_value("X-CSRF-Token"), principal->csrf_token)) {
          throw forbidden("missing or wrong X-CSRF-Token header");
        }
        ctx.request.actor.user_id = principal->user.id;
        ctx.request.actor.username = principal->user.username;
        ctx.request.principal = std::move(principal);
      }
      for (const auto& [name, value] : req.params) {
        if (std::find(query.begin(), query.end(), name) == query.end()) {
          const std::string shown = common::utf8::is_valid(name) && name.size() <= 64 ? name : std::string("(a parameter)");
          throw invalid(shown, shown + ": unknown query parameter" +
                                   (query.empty() ? std::string(" (this operation takes none)") : std::string()));
        }
        check_query_text(name, value);
      }
      write(res, handler(ctx, req));
    } catch (const NotFound& e) {
      throw not_found(e.what());
    } catch (const Conflict& e) {
      throw conflict(e.what(), e.field());
    } catch (const StoreUnavailable& e) {
      spdlog::warn("{} {}: {}", req.method, req.path, e.what());
      throw common::http::HttpError(503, kUnavailable, "the database is unavailable; try again shortly");
    }
  };

  server_.route(method, kPrefix + path, std::move(wrapped), route_options);
}

std::vector<std::string> paged(std::vector<std::string> query) {
  query.insert(query.end(), {"offset", "limit"});
  return query;
}

std::vector<std::string> keyed_paged(std::vector<std::string> query) {
  query.insert(query.end(), {"offset", "limit", "after", "before"});
  return query;
}

std::string page_cursor(const PageKey& key) { return std::to_string(key.time) + "." + std::to_string(key.id); }

PageKey parse_page_cursor(const std::string& value, const std::string& name) {
  auto bad = [&] {
    return invalid(name, name + ": not a page cursor (use nextCursor or prevCursor of a page, \"<time>.<id>\")");
  };
  if (value.size() > 41) throw bad();
  const auto dot = value.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == value.size()) throw bad();
  auto number = [&](std::string_view digits) {
    std::int64_t out = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), out);
    if (ec != std::errc() || end != digits.data() + digits.size() || out < 0) throw bad();
    return out;
  };
  const std::string_view text(value);
  return PageKey{number(text.substr(0, dot)), number(text.substr(dot + 1))};
}

PageRequest keyed_page_query(const common::http::Request& request) {
  PageRequest page = page_query(request);
  if (page.offset > kMaxListOffset) {
    throw invalid("offset", "offset: at most " + std::to_string(kMaxListOffset) +
                                "; page further with after (the nextCursor of a page)");
  }
  const auto after = request.get_param_value("after");
  const auto before = request.get_param_value("before");
  if (!after.empty() && !before.empty()) throw invalid("before", "before: give after or before, not both");
  if ((!after.empty() || !before.empty()) && page.offset > 0) {
    throw invalid("offset", std::string("offset: not with ") + (after.empty() ? "before" : "after"));
  }
  if (!after.empty()) page.after = parse_page_cursor(after, "after");
  if (!before.empty()) page.before = parse_page_cursor(before, "before");
  return page;
}

PageRequest page_query(const common::http::Request& request) {
  PageRequest page;
  if (auto offset = query_int(request.get_param_value("offset"), "offset")) {
    if (*offset < 0) throw invalid("offset", "offset: must be 0 or more");
    page.offset = *offset;
  }
  if (auto limit = query_int(request.get_param_value("limit"), "limit")) {
    if (*limit < 1 || *limit > 1000) throw invalid("limit", "limit: must be between 1 and 1000");
    page.limit = *limit;
  }
  return page;
}

}  // namespace cronwheel::admin
