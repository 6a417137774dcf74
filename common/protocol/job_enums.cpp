#include "common/protocol/job_enums.h"

#include <array>
#include <ostream>
#include <utility>

#include "common/protocol/protocol_error.h"

namespace cronwheel::common::protocol {
namespace {

template <class E>
struct Names;  // Names<E>::kTable: every value with its wire name, in declaration order

template <>
struct Names<BlockStrategy> {
  static constexpr std::array<std::pair<BlockStrategy, std::string_view>, 3> kTable{{
      {BlockStrategy::kSerialExecution, "SERIAL_EXECUTION"},
      {BlockStrategy::kDiscardLater, "DISCARD_LATER"},
      {BlockStrategy::kCoverEarly, "COVER_EARLY"},
  }};
};

template <>
struct Names<GlueType> {
  static constexpr std::array<std::pair<GlueType, std::string_view>, 7> kTable{{
      {GlueType::kBean, "BEAN"},
      {GlueType::kGlueGroovy, "GLUE_GROOVY"},
      {GlueType::kGlueShell, "GLUE_SHELL"},
      {GlueType::kGluePython, "GLUE_PYTHON"},
      {GlueType::kGluePhp, "GLUE_PHP"},
      {GlueType::kGlueNodejs, "GLUE_NODEJS"},
      {GlueType::kGluePowershell, "GLUE_POWERSHELL"},
  }};
};

template <>
struct Names<RouteStrategy> {
  static constexpr std::array<std::pair<RouteStrategy, std::string_view>, 10> kTable{{
      {RouteStrategy::kFirst, "FIRST"},
      {RouteStrategy::kLast, "LAST"},
      {RouteStrategy::kRound, "ROUND"},
      {RouteStrategy::kRandom, "RANDOM"},
      {RouteStrategy::kConsistentHash, "CONSISTENT_HASH"},
      {RouteStrategy::kLeastFrequentlyUsed, "LEAST_FREQUENTLY_USED"},
      {RouteStrategy::kLeastRecentlyUsed, "LEAST_RECENTLY_USED"},
      {RouteStrategy::kFailover, "FAILOVER"},
      {RouteStrategy::kBusyover, "BUSYOVER"},
      {RouteStrategy::kShardingBroadcast, "SHARDING_BROADCAST"},
  }};
};

template <>
struct Names<MisfireStrategy> {
  static constexpr std::array<std::pair<MisfireStrategy, std::string_view>, 2> kTable{{
      {MisfireStrategy::kDoNothing, "DO_NOTHING"},
      {MisfireStrategy::kFireOnceNow, "FIRE_ONCE_NOW"},
  }};
};

template <>
struct Names<ScheduleType> {
  static constexpr std::array<std::pair<ScheduleType, std::string_view>, 4> kTable{{
      {ScheduleType::kNone, "NONE"},
      {ScheduleType::kCron, "CRON"},
      {ScheduleType::kFixRate, "FIX_RATE"},
      {ScheduleType::kFixDelay, "FIX_DELAY"},
  }};
};

template <class E>
std::string_view name_of(E value) noexcept {
  for (const auto& [v, name] : Names<E>::kTable) {
    if (v == value) return name;
  }
  return "UNKNOWN";  // only reachable by casting an out-of-range integer to E
}

}  // namespace

std::ostream& operator<<(std::ostream& out, BlockStrategy value) { return out << to_string(value); }
std::ostream& operator<<(std::ostream& out, GlueType value) { return out << to_string(value); }
std::ostream& operator<<(std::ostream& out, RouteStrategy value) { return out << to_string(value); }
std::ostream& operator<<(std::ostream& out, MisfireStrategy value) { return out << to_string(value); }
std::ostream& operator<<(std::ostream& out, ScheduleType value) { return out << to_string(value); }

std::string_view to_string(BlockStrategy value) noexcept { return name_of(value); }
std::string_view to_string(GlueType value) noexcept { return name_of(value); }
std::string_view to_string(RouteStrategy value) noexcept { return name_of(value); }
std::string_view to_string(MisfireStrategy value) noexcept { return name_of(value); }
std::string_view to_string(ScheduleType value) noexcept { return name_of(value); }

template <class E>
std::optional<E> parse_enum(std::string_view text) noexcept {
  for (const auto& [value, name] : Names<E>::kTable) {
    if (name == text) return value;
  }
  return std::nullopt;
}

template <class E>
std::string enum_choices() {
  std::string out;
  for (const auto& entry : Names<E>::kTable) {
    if (!out.empty()) out += ", ";
    out += entry.second;
  }
  return out;
}

template <class E>
E parse_enum_or_throw(std::string_view text, std::string_view field) {
  if (auto value = parse_enum<E>(text)) return *value;
  throw ProtocolError(std::string(field), "unknown value '" + std::string(text) +
                                              "', expected one of " + enum_choices<E>());
}

bool is_script(GlueType value) noexcept {
  return value != GlueType::kBean && value != GlueType::kGlueGroovy;
}

#define CRONWHEEL_INSTANTIATE_ENUM(E)                                              \
  template std::optional<E> parse_enum<E>(std::string_view) noexcept;              \
  template std::string enum_choices<E>();                                          \
  template E parse_enum_or_throw<E>(std::string_view, std::string_view);

CRONWHEEL_INSTANTIATE_ENUM(BlockStrategy)
CRONWHEEL_INSTANTIATE_ENUM(GlueType)
CRONWHEEL_INSTANTIATE_ENUM(RouteStrategy)
CRONWHEEL_INSTANTIATE_ENUM(MisfireStrategy)
CRONWHEEL_INSTANTIATE_ENUM(ScheduleType)

#undef CRONWHEEL_INSTANTIATE_ENUM

}  // namespace cronwheel::common::protocol
