// Fuzz target: common/http/route_table.h, HttpServer's routing of a decoded path.
//
// Input: lines. The first is "METHOD PATH", the request to route; each further line is
// "METHOD PATTERN", a route added after the admin's and executor's own routes (below).
//
// Properties:
//  - add() throws nothing but std::invalid_argument (documented for bad patterns);
//  - match() agrees with the routes taken one by one: it matches exactly when a route of the
//    method (HEAD: GET) matches alone; no other such route is more specific than the winner;
//    otherwise allowed_methods lists, once each, the other methods whose routes match;
//  - the winner's parameters are non-empty single segments, one per {name}, and putting them
//    back into the pattern gives the path (around the ** when there is one).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "common/http/route_table.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using cronwheel::common::http::RouteTable;

// The admin's REST API and executor endpoints, as they are registered, and the console's
// fallback.
constexpr std::string_view kRoutes[] = {
    "GET /healthz", "GET /metrics", "GET /**",
    "POST /api/v1/auth/login", "POST /api/v1/auth/logout", "PUT /api/v1/auth/password", "GET /api/v1/auth/me",
    "GET /api/v1/tokens", "POST /api/v1/tokens", "DELETE /api/v1/tokens/{id}",
    "GET /api/v1/users", "POST /api/v1/users", "GET /api/v1/users/{id}", "PUT /api/v1/users/{id}",
    "DELETE /api/v1/users/{id}", "GET /api/v1/audit",
    "GET /api/v1/groups", "POST /api/v1/groups", "GET /api/v1/groups/{id}", "PUT /api/v1/groups/{id}",
    "DELETE /api/v1/groups/{id}",
    "GET /api/v1/jobs", "POST /api/v1/jobs", "GET /api/v1/jobs/{id}", "PUT /api/v1/jobs/{id}",
    "DELETE /api/v1/jobs/{id}", "POST /api/v1/jobs/{id}/copy", "POST /api/v1/jobs/{id}/start",
    "POST /api/v1/jobs/{id}/stop", "POST /api/v1/jobs/{id}/trigger", "GET /api/v1/jobs/{id}/next-fires",
    "POST /api/v1/jobs/{id}/script", "GET /api/v1/jobs/{id}/script/versions",
    "POST /api/v1/jobs/{id}/script/versions/{versionId}/restore",
    "GET /api/v1/logs", "POST /api/v1/logs/clear", "GET /api/v1/logs/{id}", "DELETE /api/v1/logs/{id}",
    "GET /api/v1/logs/{id}/content", "POST /api/v1/logs/{id}/kill", "GET /api/v1/cron/next",
    "GET /api/v1/dashboard", "GET /api/v1/nodes",
    "POST /**/api/registry", "POST /**/api/registryRemove", "POST /**/api/callback",
    "POST /beat", "POST /idleBeat", "POST /run", "POST /kill", "POST /log",
};

struct Line {
  std::string method;
  std::string rest;
};

Line split_line(std::string_view line) {
  const auto space = line.find(' ');
  if (space == std::string_view::npos) return {std::string(line), std::string()};
  return {std::string(line.substr(0, space)), std::string(line.substr(space + 1))};
}

std::vector<std::string_view> segments(std::string_view path) {
  std::vector<std::string_view> out;
  if (!path.empty() && path.front() == '/') path.remove_prefix(1);
  while (true) {
    const auto slash = path.find('/');
    out.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) return out;
    path.remove_prefix(slash + 1);
  }
}

enum class Kind { kLiteral, kParam, kRest };

Kind kind_of(std::string_view segment) {
  if (segment == "**") return Kind::kRest;
  if (segment.size() > 2 && segment.front() == '{' && segment.back() == '}') return Kind::kParam;
  return Kind::kLiteral;
}

int rank(Kind kind) { return kind == Kind::kLiteral ? 2 : kind == Kind::kParam ? 1 : 0; }

// -1, 0 or 1 as `a` is less, as much or more specific than `b` at the first segment whose
// kind differs (the documented order; ties on every common segment compare equal here).
int compare_specificity(std::string_view a, std::string_view b) {
  const auto sa = segments(a);
  const auto sb = segments(b);
  for (std::size_t i = 0; i < sa.size() && i < sb.size(); ++i) {
    const int ra = rank(kind_of(sa[i]));
    const int rb = rank(kind_of(sb[i]));
    if (ra != rb) return ra > rb ? 1 : -1;
  }
  return 0;
}

// The winner's parameters put back into its pattern must give the path.
void check_params(std::string_view pattern, std::string_view path, const RouteTable::Match& match) {
  const auto pat = segments(pattern);
  const auto got = segments(path);
  std::size_t rest = pat.size();
  for (std::size_t i = 0; i < pat.size(); ++i) {
    if (kind_of(pat[i]) == Kind::kRest) rest = i;
  }
  const std::size_t after = rest == pat.size() ? 0 : pat.size() - rest - 1;
  const std::size_t before = rest == pat.size() ? pat.size() : rest;
  FUZZ_CHECK(rest == pat.size() ? got.size() == pat.size() : got.size() >= before + after,
             "the path has as many segments as the pattern (at least, around **)");
  std::size_t params = 0;
  auto check_segment = [&](std::string_view p, std::string_view g) {
    if (kind_of(p) == Kind::kLiteral) {
      FUZZ_CHECK(p == g, "a literal segment matches itself");
      return;
    }
    const std::string name(p.substr(1, p.size() - 2));
    const std::string* value = match.params.find(name);
    FUZZ_CHECK(value != nullptr, "every {name} has a value");
    ++params;
    // With a repeated name, find() answers the first; the segment is checked when it is that.
    FUZZ_CHECK(!value->empty() && value->find('/') == std::string::npos, "a parameter is one non-empty segment");
  };
  for (std::size_t i = 0; i < before; ++i) check_segment(pat[i], got[i]);
  for (std::size_t i = 0; i < after; ++i) check_segment(pat[rest + 1 + i], got[got.size() - after + i]);
  FUZZ_CHECK(match.params.size() == params, "one parameter per {name}");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  auto next_line = [&input] {
    const auto end = input.find('\n');
    const std::string_view line = input.substr(0, end);
    input = end == std::string_view::npos ? std::string_view() : input.substr(end + 1);
    return line;
  };
  const Line request = split_line(next_line());

  std::vector<Line> routes;
  for (auto route : kRoutes) routes.push_back(split_line(route));
  while (!input.empty() && routes.size() < 200) routes.push_back(split_line(next_line()));

  RouteTable table;
  std::vector<Line> added;  // by route index
  for (const auto& route : routes) {
    try {
      const std::size_t index = table.add(route.method, route.rest);
      FUZZ_CHECK(index == added.size(), "add() numbers routes in order");
      added.push_back(route);
    } catch (const std::invalid_argument&) {
      // A pattern add() refuses, as documented.
    }
  }

  const auto result = table.match(request.method, request.rest);
  const std::string wanted = request.method == "HEAD" ? "GET" : request.method;

  // Each route alone (the fixed routes' tables are built once). A route matches the path when
  // its table matches or names its method as allowed: a route added for HEAD never matches
  // (HEAD requests look for GET routes; HttpServer takes GET, POST, PUT and DELETE only).
  static const std::vector<RouteTable> kAlone = [] {
    std::vector<RouteTable> tables;
    for (auto route : kRoutes) {
      const Line line = split_line(route);
      tables.emplace_back().add(line.method, line.rest);
    }
    return tables;
  }();
  std::vector<std::size_t> same_method;
  std::vector<std::string> other_methods;
  for (std::size_t i = 0; i < added.size(); ++i) {
    bool matches = false;
    auto route_matches = [&](const RouteTable& alone) {
      const auto r = alone.match(added[i].method, request.rest);
      return r.match.has_value() || !r.allowed_methods.empty();
    };
    if (i < kAlone.size()) {
      matches = route_matches(kAlone[i]);
    } else {
      RouteTable alone;
      alone.add(added[i].method, added[i].rest);
      matches = route_matches(alone);
    }
    if (!matches) continue;
    if (added[i].method == wanted) {
      same_method.push_back(i);
    } else if (std::find(other_methods.begin(), other_methods.end(), added[i].method) == other_methods.end()) {
      other_methods.push_back(added[i].method);
    }
  }

  FUZZ_CHECK(result.match.has_value() == !same_method.empty(), "match() matches exactly when a route alone does");
  if (result.match) {
    const std::size_t winner = result.match->route;
    FUZZ_CHECK(winner < added.size(), "the winner is a route that was added");
    FUZZ_CHECK(added[winner].method == wanted, "the winner has the request's method (HEAD: GET)");
    FUZZ_CHECK(std::find(same_method.begin(), same_method.end(), winner) != same_method.end(),
               "the winner matches the path alone");
    for (std::size_t i : same_method) {
      FUZZ_CHECK(compare_specificity(added[i].rest, added[winner].rest) <= 0,
                 "no matching route is more specific than the winner");
    }
    FUZZ_CHECK(result.allowed_methods.empty(), "a match lists no other methods");
    check_params(added[winner].rest, request.rest, *result.match);
  } else {
    FUZZ_CHECK(result.allowed_methods == other_methods, "a miss lists the other methods that match, once each");
  }
  return 0;
}
