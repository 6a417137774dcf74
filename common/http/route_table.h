#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cronwheel::common::http {

// Values of a route's `{name}` segments, in the order the pattern names them.
class PathParams {
 public:
  void add(std::string name, std::string value) { values_.emplace_back(std::move(name), std::move(value)); }
  // The value of `name`; nullptr when the route has no such parameter.
  const std::string* find(std::string_view name) const noexcept;
  std::size_t size() const noexcept { return values_.size(); }

 private:
  std::vector<std::pair<std::string, std::string>> values_;
};

// HttpServer's routes: a method and a path pattern each, matched segment by segment, in time
// linear in the path's length (no regular expressions: the path is the client's).
//
// A pattern is a path of '/'-separated segments, each one of:
//   literal   matches itself exactly ("jobs");
//   {name}    matches any one non-empty segment and records it under `name`;
//   **        matches any number of segments, none included; at most one per pattern
//             ("**/api/registry" matches "/api/registry" and "/xxl-job-admin/api/registry").
// When several patterns match a path, the most specific wins: compared segment by segment from
// the left, a literal beats {name}, which beats **; a path that only patterns of other methods
// match is reported as such (405). A GET route also answers HEAD.
//
// Not thread-safe to add(); match() is const and may run concurrently once adding is done.
class RouteTable {
 public:
  struct Match {
    std::size_t route = 0;  // the index add() returned
    PathParams params;
  };
  struct Result {
    std::optional<Match> match;
    // When nothing matched: the methods whose patterns match the path, or empty for none.
    std::vector<std::string> allowed_methods;
  };

  // Returns the route's index (0, 1, 2... in the order of adding). Throws std::invalid_argument
  // for a pattern that does not start with '/', has more than one **, or an empty {}.
  std::size_t add(std::string method, std::string_view pattern);

  // `path` is decoded (RequestHead::path), without the query.
  Result match(std::string_view method, std::string_view path) const;

  std::size_t size() const noexcept { return routes_.size(); }

 private:
  enum class Kind { kLiteral, kParam, kRest };
  struct Segment {
    Kind kind;
    std::string text;  // the literal, or the parameter's name
  };
  struct Route {
    std::string method;
    std::vector<Segment> segments;
  };

  static bool matches(const Route& route, const std::vector<std::string_view>& path, PathParams* params);
  // True when `a` is more specific than `b` (see above).
  static bool more_specific(const Route& a, const Route& b);

  std::vector<Route> routes_;
};

}  // namespace cronwheel::common::http
