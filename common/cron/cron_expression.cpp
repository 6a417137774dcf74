#include "common/cron/cron_expression.h"

#include <cstdio>

#include "common/cron/civil_time.h"
#include "common/cron/cron_fields.h"
#include "common/cron/dst_policy.h"
#include "common/cron/next_fire_time.h"
#include "common/cron/zone_rules.h"

namespace cronwheel::common {

struct CronExpression::State {
  std::string expression;
  std::string time_zone;
  cron_detail::CronFields fields;
  std::shared_ptr<const cron_detail::ZoneRules> zone;
  DstPolicy dst_policy;
};

CronExpression CronExpression::parse(std::string_view expression, std::string_view time_zone) {
  auto state = std::make_shared<State>();
  state->expression = std::string(expression);
  state->time_zone = std::string(time_zone);
  state->fields = cron_detail::parse_cron_fields(expression);
  state->zone = cron_detail::ZoneRules::find(time_zone);
  return CronExpression(std::move(state));
}

std::optional<std::int64_t> CronExpression::next_after(std::int64_t epoch_ms) const {
  const auto quartz = cron_detail::next_fire_time(state_->fields, *state_->zone, epoch_ms);
  if (state_->dst_policy == DstPolicy{}) return quartz;
  return cron_detail::next_with_dst_policy(state_->fields, *state_->zone, state_->dst_policy, epoch_ms, quartz);
}

CronExpression CronExpression::with_dst_policy(DstPolicy policy) const {
  auto state = std::make_shared<State>(*state_);
  state->dst_policy = policy;
  return CronExpression(std::move(state));
}

const DstPolicy& CronExpression::dst_policy() const { return state_->dst_policy; }

std::vector<DstNote> CronExpression::dst_notes(std::int64_t after_ms, std::int64_t until_ms, std::size_t max) const {
  return cron_detail::dst_notes(state_->fields, *state_->zone, state_->dst_policy, after_ms, until_ms, max);
}

std::vector<std::int64_t> CronExpression::next_times(std::int64_t after_ms, int count) const {
  std::vector<std::int64_t> times;
  if (count <= 0) return times;
  times.reserve(static_cast<std::size_t>(count));
  std::int64_t from = after_ms;
  for (int i = 0; i < count; ++i) {
    const std::optional<std::int64_t> next = next_after(from);
    if (!next) break;
    times.push_back(*next);
    from = *next;
  }
  return times;
}

const std::string& CronExpression::expression() const { return state_->expression; }

const std::string& CronExpression::time_zone() const { return state_->time_zone; }

std::string_view dst_gap_name(DstGap gap) { return gap == DstGap::kFireAfter ? "FIRE_AFTER" : "SKIP"; }

std::string_view dst_repeat_name(DstRepeat repeat) { return repeat == DstRepeat::kBoth ? "BOTH" : "ONCE"; }

std::optional<DstGap> parse_dst_gap(std::string_view name) {
  if (name == "SKIP") return DstGap::kSkip;
  if (name == "FIRE_AFTER") return DstGap::kFireAfter;
  return std::nullopt;
}

std::optional<DstRepeat> parse_dst_repeat(std::string_view name) {
  if (name == "ONCE") return DstRepeat::kOnce;
  if (name == "BOTH") return DstRepeat::kBoth;
  return std::nullopt;
}

bool is_valid_time_zone(std::string_view time_zone) {
  try {
    cron_detail::ZoneRules::find(time_zone);
    return true;
  } catch (const CronError&) {
    return false;
  }
}

std::string format_iso8601(std::int64_t epoch_ms, std::string_view time_zone) {
  using namespace cron_detail;
  const auto zone = ZoneRules::find(time_zone);
  std::size_t hint = 0;
  const std::int64_t seconds = floor_div(epoch_ms, kMillisPerSecond);
  const std::int64_t offset_seconds = zone->offset_at(seconds * kMillisPerSecond, hint) / 1000;
  const std::int64_t local = seconds + offset_seconds;
  const std::int64_t days = floor_div(local, 86400);
  const std::int64_t in_day = local - days * 86400;
  const CivilDate date = civil_from_days(days);

  const std::int64_t abs_offset = offset_seconds < 0 ? -offset_seconds : offset_seconds;
  char buffer[64];
  int n = std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02dT%02d:%02d:%02d%c%02d:%02d", date.year,
                        date.month, date.day, static_cast<int>(in_day / 3600),
                        static_cast<int>(in_day / 60 % 60), static_cast<int>(in_day % 60),
                        offset_seconds < 0 ? '-' : '+', static_cast<int>(abs_offset / 3600),
                        static_cast<int>(abs_offset / 60 % 60));
  if (abs_offset % 60 != 0 && n > 0 && n < static_cast<int>(sizeof buffer) - 4) {
    // Local mean time offsets have seconds (e.g. -04:56:02).
    std::snprintf(buffer + n, sizeof buffer - static_cast<std::size_t>(n), ":%02d",
                  static_cast<int>(abs_offset % 60));
  }
  return buffer;
}

}  // namespace cronwheel::common
