#include "admin/api/api_router.h"

#include <algorithm>
#include <regex>

#include <spdlog/spdlog.h>

#include "admin/api/api_errors.h"
#include "admin/api/json_body.h"
#include "admin/auth/secrets.h"
#include "admin/store/database.h"
#include "admin/store/stores.h"

namespace cronwheel::admin {

namespace {

// "jobs/{id}/start" → regex "/api/v1/jobs/(\d+)/start" and the parameter names in order.
std::pair<std::string, std::vector<std::string>> compile(const std::string& path) {
  static const std::regex param(R"(\{([A-Za-z]+)\})");
  std::string pattern = ApiRouter::kPrefix;
  std::vector<std::string> names;
  auto begin = std::sregex_iterator(path.begin(), path.end(), param);
  std::size_t last = 0;
  for (auto it = begin; it != std::sregex_iterator(); ++it) {
    pattern += path.substr(last, static_cast<std::size_t>(it->position()) - last);
    std::string name = (*it)[1];
    const bool numeric = name == "id" || (name.size() > 2 && name.ends_with("Id"));
    pattern += numeric ? R"((\d+))" : R"(([^/]+))";
    names.push_back(name);
    last = static_cast<std::size_t>(it->position() + it->length());
  }
  pattern += path.substr(last);
  return {pattern, names};
}

bool changes_state(const std::string& method) { return method != "GET" && method != "HEAD"; }

void write(httplib::Response& res, const ApiResponse& response) {
  for (const auto& [name, value] : response.headers) res.set_header(name, value);
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
  auto it = path_params.find(name);
  if (it == path_params.end()) throw std::logic_error("route has no path parameter " + name);
  return it->second;
}

ApiRouter::ApiRouter(common::http::HttpServer& server, Authenticator& authenticator)
    : server_(server), authenticator_(authenticator) {}

void ApiRouter::add(const std::string& method, const std::string& path, Access access, Handler handler,
                    std::vector<std::string> query) {
  auto [pattern, names] = compile(path);
  routes_.push_back({method, path, access, query});

  auto wrapped = [this, method, access, names, query, handler = std::move(handler)](const httplib::Request& req,
                                                                                    httplib::Response& res) {
    RouteContext ctx;
    for (std::size_t i = 0; i < names.size() && i + 1 < req.matches.size(); ++i) {
      ctx.path_params[names[i]] = req.matches[i + 1];
    }
    ctx.request.actor.remote_addr = req.remote_addr;
    try {
      if (access != Access::kPublic) {
        auto principal = authenticator_.authenticate(req);
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
          throw invalid(name, name + ": unknown query parameter" +
                                  (query.empty() ? std::string(" (this operation takes none)") : std::string()));
        }
      }
      write(res, handler(ctx, req));
    } catch (const NotFound& e) {
      throw not_found(e.what());
    } catch (const Conflict& e) {
      throw conflict(e.what(), e.field());
    } catch (const DatabaseUnavailable& e) {
      spdlog::warn("{} {}: {}", req.method, req.path, e.what());
      throw common::http::HttpError(503, kUnavailable, "the database is unavailable; try again shortly");
    }
  };

  if (method == "GET") {
    server_.get(pattern, std::move(wrapped));
  } else if (method == "POST") {
    server_.post(pattern, std::move(wrapped));
  } else if (method == "PUT") {
    server_.put(pattern, std::move(wrapped));
  } else if (method == "DELETE") {
    server_.del(pattern, std::move(wrapped));
  } else {
    throw std::invalid_argument("unsupported method " + method);
  }
}

std::vector<std::string> paged(std::vector<std::string> query) {
  query.insert(query.end(), {"offset", "limit"});
  return query;
}

PageQuery page_query(const httplib::Request& request) {
  PageQuery page;
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
