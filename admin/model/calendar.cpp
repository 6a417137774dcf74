#include "admin/model/calendar.h"

namespace cronwheel::admin {

common::CalendarSpec to_spec(const Calendar& calendar) {
  common::CalendarSpec spec;
  spec.time_zone = calendar.time_zone;
  spec.business_days = calendar.business_days;
  spec.excluded_times = calendar.excluded_times;
  for (const auto& date : calendar.dates) {
    (date.included ? spec.included_dates : spec.excluded_dates).push_back(date.day);
  }
  return spec;
}

std::string_view to_string(common::CalendarMode mode) noexcept {
  switch (mode) {
    case common::CalendarMode::kSkip:
      return "SKIP";
    case common::CalendarMode::kOnly:
      return "ONLY";
  }
  return "SKIP";
}

std::optional<common::CalendarMode> parse_calendar_mode(std::string_view text) noexcept {
  if (text == "SKIP") return common::CalendarMode::kSkip;
  if (text == "ONLY") return common::CalendarMode::kOnly;
  return std::nullopt;
}

}  // namespace cronwheel::admin
