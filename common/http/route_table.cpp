#include "common/http/route_table.h"

#include <algorithm>
#include <stdexcept>

namespace cronwheel::common::http {
namespace {

// "/a/b" → {"a", "b"}; "/" → {""}. The leading '/' is the caller's to check.
std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> out;
  if (!path.empty() && path.front() == '/') path.remove_prefix(1);
  for (;;) {
    auto slash = path.find('/');
    out.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) return out;
    path.remove_prefix(slash + 1);
  }
}

}  // namespace

const std::string* PathParams::find(std::string_view name) const noexcept {
  for (const auto& [key, value] : values_) {
    if (key == name) return &value;
  }
  return nullptr;
}

std::size_t RouteTable::add(std::string method, std::string_view pattern) {
  if (pattern.empty() || pattern.front() != '/') {
    throw std::invalid_argument("route pattern must start with '/': " + std::string(pattern));
  }
  Route route{std::move(method), {}};
  bool has_rest = false;
  for (auto segment : split_path(pattern)) {
    if (segment == "**") {
      if (has_rest) throw std::invalid_argument("route pattern has more than one **: " + std::string(pattern));
      has_rest = true;
      route.segments.push_back({Kind::kRest, {}});
    } else if (segment.size() >= 2 && segment.front() == '{' && segment.back() == '}') {
      if (segment.size() == 2) throw std::invalid_argument("route pattern has an empty {}: " + std::string(pattern));
      route.segments.push_back({Kind::kParam, std::string(segment.substr(1, segment.size() - 2))});
    } else {
      route.segments.push_back({Kind::kLiteral, std::string(segment)});
    }
  }
  routes_.push_back(std::move(route));
  return routes_.size() - 1;
}

bool RouteTable::matches(const Route& route, const std::vector<std::string_view>& path, PathParams* params) {
  const auto& segments = route.segments;
  auto rest = std::find_if(segments.begin(), segments.end(), [](const Segment& s) { return s.kind == Kind::kRest; });
  const std::size_t before = static_cast<std::size_t>(rest - segments.begin());
  const std::size_t after = rest == segments.end() ? 0 : static_cast<std::size_t>(segments.end() - rest - 1);
  if (rest == segments.end() ? path.size() != segments.size() : path.size() < before + after) return false;

  auto one = [&](const Segment& s, std::string_view value) {
    switch (s.kind) {
      case Kind::kLiteral:
        return value == s.text;
      case Kind::kParam:
        if (value.empty()) return false;
        if (params != nullptr) params->add(s.text, std::string(value));
        return true;
      case Kind::kRest:
        break;
    }
    return false;
  };
  for (std::size_t i = 0; i < before; ++i) {
    if (!one(segments[i], path[i])) return false;
  }
  for (std::size_t i = 0; i < after; ++i) {
    if (!one(segments[before + 1 + i], path[path.size() - after + i])) return false;
  }
  return true;
}

bool RouteTable::more_specific(const Route& a, const Route& b) {
  auto rank = [](Kind kind) { return kind == Kind::kLiteral ? 2 : kind == Kind::kParam ? 1 : 0; };
  const std::size_t common = std::min(a.segments.size(), b.segments.size());
  for (std::size_t i = 0; i < common; ++i) {
    int ra = rank(a.segments[i].kind);
    int rb = rank(b.segments[i].kind);
    if (ra != rb) return ra > rb;
  }
  return a.segments.size() > b.segments.size();
}

RouteTable::Result RouteTable::match(std::string_view method, std::string_view path) const {
  Result result;
  if (path.empty() || path.front() != '/') return result;
  const auto segments = split_path(path);
  const std::string_view wanted = method == "HEAD" ? std::string_view("GET") : method;
  const Route* best = nullptr;
  std::size_t best_index = 0;
  for (std::size_t i = 0; i < routes_.size(); ++i) {
    const auto& route = routes_[i];
    if (!matches(route, segments, nullptr)) continue;
    if (route.method != wanted) {
      if (std::find(result.allowed_methods.begin(), result.allowed_methods.end(), route.method) ==
          result.allowed_methods.end()) {
        result.allowed_methods.push_back(route.method);
      }
      continue;
    }
    if (best == nullptr || more_specific(route, *best)) {
      best = &route;
      best_index = i;
    }
  }
  if (best == nullptr) return result;
  Match match;
  match.route = best_index;
  matches(*best, segments, &match.params);
  result.match = std::move(match);
  result.allowed_methods.clear();
  return result;
}

}  // namespace cronwheel::common::http
