#pragma once

// A calendar as JSON: the API's and the audit log's spelling of it (one function, so responses
// and audit entries never disagree; the API reads its input field by field, with the errors it
// answers). Names follow business_calendar.h's error fields (excludedDates[i], includedDates[i],
// businessDays, excludedTimes[i], timeZone), so an error's index points into these lists.

#include <nlohmann/json.hpp>

#include "admin/model/calendar.h"

namespace cronwheel::admin {

// {"id","name","description","timeZone",
//  "businessDays": null (every day) | ["MONDAY", ..., "SUNDAY"] (the business weekdays),
//  "excludedDates":[{"date","name","source","sourceUid"}], "includedDates":[...] (each in the
//  calendar's order; "date" as date_text(): "2026-10-01", or "--10-01" for every year),
//  "excludedTimes":[{"start":"23:00:00","end":"01:00:00"}],"version","createdAt","updatedAt"}
nlohmann::json to_json(const Calendar& calendar);

// "MONDAY" ... "SUNDAY" for 0 ... 6, the index of Calendar::business_days.
const char* weekday_name(int index) noexcept;

// "HH:MM:SS" for seconds since midnight (0-86399).
std::string time_of_day_text(int seconds);

}  // namespace cronwheel::admin
