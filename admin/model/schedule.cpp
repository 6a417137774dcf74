#include "admin/model/schedule.h"

#include <charconv>

namespace cronwheel::admin {

namespace {


constexpr std::int64_t kMillisPerSecond = 1000;
constexpr std::size_t kMaxConfLength = 255;  // job_info.schedule_conf is varchar(255)

// Quotes user input for a message, cut short so an error line stays one readable line.
std::string quoted(std::string_view text) {
  constexpr std::size_t kShown = 40;
  std::string out = "'";
  out += text.size() > kShown ? std::string(text.substr(0, kShown)) + "..." : std::string(text);
  out += "'";
  return out;
}

// FIX_RATE/FIX_DELAY: digits only, no sign, no leading zero (job_info's CHECK constraint is
// '^[1-9][0-9]{0,9}$'), at most kMaxFixedSeconds.
std::int64_t parse_fixed_seconds(ScheduleType type, std::string_view conf) {
  auto refuse = [&] {
    return ScheduleError("scheduleConf", "scheduleConf: " + std::string(common::protocol::to_string(type)) +
                                             " needs a whole number of seconds from 1 to " +
                                             std::to_string(Schedule::kMaxFixedSeconds) + ", got " +
                                             quoted(conf));
  };
  if (conf.empty() || conf.front() < '1' || conf.front() > '9') throw refuse();
  std::int64_t seconds = 0;
  auto [end, ec] = std::from_chars(conf.data(), conf.data() + conf.size(), seconds);
  if (ec != std::errc() || end != conf.data() + conf.size() || seconds > Schedule::kMaxFixedSeconds) {
    throw refuse();
  }
  return seconds;
}

}  // namespace

Schedule Schedule::parse(ScheduleType type, std::string_view conf, std::string_view time_zone,
                         common::DstPolicy dst) {
  if (!common::is_valid_time_zone(time_zone)) {
    throw ScheduleError("timezone", "timezone: unknown time zone " + quoted(time_zone));
  }
  if (conf.size() > kMaxConfLength) {
    throw ScheduleError("scheduleConf",
                        "scheduleConf: at most " + std::to_string(kMaxConfLength) + " characters");
  }
  switch (type) {
    case ScheduleType::kNone:
      if (!conf.empty()) {
        throw ScheduleError("scheduleConf", "scheduleConf: must be empty for scheduleType NONE, got " + quoted(conf));
      }
      return Schedule(type, 0, std::nullopt);
    case ScheduleType::kCron:
      if (conf.find_first_not_of(" \t") == std::string_view::npos) {
        throw ScheduleError("scheduleConf", "scheduleConf: a cron expression is required for scheduleType CRON");
      }
      try {
        return Schedule(type, 0, common::CronExpression::parse(conf, time_zone).with_dst_policy(dst));
      } catch (const common::CronError& e) {
        if (e.field() == "timezone") throw ScheduleError("timezone", e.what());
        throw ScheduleError("scheduleConf", std::string("scheduleConf: ") + e.what());
      }
    case ScheduleType::kFixRate:
    case ScheduleType::kFixDelay:
      return Schedule(type, parse_fixed_seconds(type, conf), std::nullopt);
  }
  throw ScheduleError("scheduleType", "scheduleType: unknown value " +
                                          std::to_string(static_cast<int>(type)));  // a cast out of range
}

std::optional<std::int64_t> Schedule::raw_next_after(std::int64_t after_ms) const {
  switch (type_) {
    case ScheduleType::kCron:
      return cron_->next_after(after_ms);
    case ScheduleType::kFixRate:
    case ScheduleType::kFixDelay:
      return after_ms + fixed_seconds_ * kMillisPerSecond;
    case ScheduleType::kNone:
      break;
  }
  return std::nullopt;
}

Schedule Schedule::with_calendar(ScheduleCalendar calendar) const {
  Schedule out = *this;
  out.calendar_ = std::move(calendar);
  return out;
}

// The schedule's instants after `after_ms` as next_fire_in_calendar asks for them: the first one
// strictly after any later instant. A cron expression's instants are fixed; a fixed rate's are
// the grid `after_ms` + k intervals, so that passing over an excluded stretch keeps the rate's
// phase (every hour at :30 stays at :30) instead of starting again from the stretch's end.
common::NextInstant Schedule::instants_after(std::int64_t after_ms) const {
  if (type_ == ScheduleType::kFixRate || type_ == ScheduleType::kFixDelay) {
    const std::int64_t step = fixed_seconds_ * kMillisPerSecond;
    return [after_ms, step](std::int64_t t) -> std::optional<std::int64_t> {
      if (t < after_ms) return after_ms + step;
      return after_ms + ((t - after_ms) / step + 1) * step;
    };
  }
  return [this](std::int64_t t) { return raw_next_after(t); };
}

std::optional<std::int64_t> Schedule::next_after(std::int64_t after_ms) const {
  if (!calendar_) return raw_next_after(after_ms);
  return common::next_fire_in_calendar(instants_after(after_ms), after_ms, calendar_->calendar, calendar_->mode).at_ms;
}

std::optional<std::string> Schedule::excluded(std::int64_t at_ms) const {
  if (!calendar_) return std::nullopt;
  auto exclusion = calendar_->calendar.exclusion(at_ms, calendar_->mode);
  if (!exclusion) return std::nullopt;
  return "excluded by calendar " + calendar_->name + ": " + exclusion->reason;
}

std::string Schedule::end_reason(std::int64_t after_ms) const {
  if (!raw_next_after(after_ms)) return "the schedule has no further fire time";
  if (!calendar_) return {};
  const auto found =
      common::next_fire_in_calendar(instants_after(after_ms), after_ms, calendar_->calendar, calendar_->mode);
  if (found.at_ms) return {};
  if (found.blocked) return "calendar " + calendar_->name + " lets no fire through within ten years";
  return "the schedule has no further fire time";
}

Schedule::Preview Schedule::preview(std::int64_t after_ms, int count, int max_skipped) const {
  Preview out;
  const std::int64_t from = after_ms;
  for (int i = 0; i < count; ++i) {
    std::optional<std::int64_t> next;
    if (!calendar_) {
      next = raw_next_after(after_ms);
    } else {
      const std::size_t room = max_skipped > static_cast<int>(out.skipped.size())
                                   ? static_cast<std::size_t>(max_skipped) - out.skipped.size()
                                   : 0;
      auto found =
          common::next_fire_in_calendar(instants_after(after_ms), after_ms, calendar_->calendar, calendar_->mode, room);
      for (auto& s : found.skipped) {
        out.skipped.push_back({s.at_ms, "excluded by calendar " + calendar_->name + ": " + std::move(s.reason)});
      }
      next = found.at_ms;
    }
    if (!next) {
      out.end = end_reason(after_ms);
      break;
    }
    out.times.push_back(*next);
    after_ms = *next;
  }
  if (max_skipped > 0 && (!out.times.empty() || !out.end.empty())) {
    // A schedule that ends (or never fires) may end because of a clock change: its notes look a
    // year further, so "0 30 2 ? 3 1#2" in New York, whose every time falls in the gap, says so.
    constexpr std::int64_t kYearMs = 366LL * 24 * 3600 * 1000;
    const std::int64_t until = (out.times.empty() ? from : out.times.back()) + (out.end.empty() ? 0 : kYearMs);
    out.dst = dst_notes(from, until, static_cast<std::size_t>(max_skipped));
  }
  return out;
}

std::vector<common::DstNote> Schedule::dst_notes(std::int64_t after_ms, std::int64_t until_ms, std::size_t max) const {
  if (!cron_) return {};
  return cron_->dst_notes(after_ms, until_ms, max);
}

std::vector<std::int64_t> Schedule::next_times(std::int64_t after_ms, int count) const {
  if (type_ == ScheduleType::kCron && !calendar_) return cron_->next_times(after_ms, count);
  std::vector<std::int64_t> times;
  for (int i = 0; i < count; ++i) {
    auto next = next_after(after_ms);
    if (!next) break;
    times.push_back(*next);
    after_ms = *next;
  }
  return times;
}

void check_dst_policy(ScheduleType type, common::DstPolicy dst) {
  if (type == ScheduleType::kCron) return;
  if (dst.gap != common::DstGap::kSkip) {
    throw ScheduleError("dstGap", "dstGap: applies to CRON schedules only; give SKIP for scheduleType " +
                                      std::string(common::protocol::to_string(type)));
  }
  if (dst.repeat != common::DstRepeat::kOnce) {
    throw ScheduleError("dstRepeat", "dstRepeat: applies to CRON schedules only; give ONCE for scheduleType " +
                                         std::string(common::protocol::to_string(type)));
  }
}

void validate_schedule(ScheduleType type, std::string_view conf, std::string_view time_zone) {
  (void)Schedule::parse(type, conf, time_zone);
}

std::optional<std::int64_t> next_fire_time(ScheduleType type, std::string_view conf,
                                           std::string_view time_zone, std::int64_t after_ms) {
  return Schedule::parse(type, conf, time_zone).next_after(after_ms);
}

}  // namespace cronwheel::admin
