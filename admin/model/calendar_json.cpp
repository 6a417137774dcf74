#include "admin/model/calendar_json.h"

#include <array>
#include <cstdio>

#include "admin/model/calendar_dates.h"

namespace cronwheel::admin {

const char* weekday_name(int index) noexcept {
  static constexpr std::array<const char*, 7> kNames = {"MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY",
                                                        "FRIDAY", "SATURDAY", "SUNDAY"};
  return index >= 0 && index < 7 ? kNames[static_cast<std::size_t>(index)] : "";
}

std::string time_of_day_text(int seconds) {
  char out[16];
  std::snprintf(out, sizeof out, "%02d:%02d:%02d", seconds / 3600 % 100, seconds / 60 % 60, seconds % 60);
  return out;
}

nlohmann::json to_json(const Calendar& c) {
  nlohmann::json business_days = nullptr;
  if (c.business_days) {
    business_days = nlohmann::json::array();
    for (int i = 0; i < 7; ++i) {
      if ((*c.business_days)[static_cast<std::size_t>(i)]) business_days.push_back(weekday_name(i));
    }
  }
  nlohmann::json excluded = nlohmann::json::array();
  nlohmann::json included = nlohmann::json::array();
  for (const auto& d : c.dates) {
    (d.included ? included : excluded)
        .push_back({{"date", date_text(d.day)}, {"name", d.day.name}, {"source", d.source}, {"sourceUid", d.source_uid}});
  }
  nlohmann::json times = nlohmann::json::array();
  for (const auto& t : c.excluded_times) {
    times.push_back({{"start", time_of_day_text(t.start_s)}, {"end", time_of_day_text(t.end_s)}});
  }
  return {
      {"id", c.id},
      {"name", c.name},
      {"description", c.description},
      {"timeZone", c.time_zone},
      {"businessDays", std::move(business_days)},
      {"excludedDates", std::move(excluded)},
      {"includedDates", std::move(included)},
      {"excludedTimes", std::move(times)},
      {"version", c.version},
      {"createdAt", c.created_at},
      {"updatedAt", c.updated_at},
  };
}

}  // namespace cronwheel::admin
