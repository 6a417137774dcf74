#include "admin/model/calendar_dates.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include "admin/model/store_errors.h"

namespace cronwheel::admin {

namespace {

using DayKey = std::tuple<int, int, int>;  // (year, month, day)

DayKey key_of(const common::CalendarDay& d) { return {d.year, d.month, d.day}; }

// Whether two stored dates fall on one day for the purpose of "excluded and included": the same
// date, or a recurring excluded date and a date of any year on its month and day.
bool same_day(const CalendarDate& a, const CalendarDate& b) {
  if (a.day.month != b.day.month || a.day.day != b.day.day) return false;
  return a.day.year == b.day.year || a.day.year == 0 || b.day.year == 0;
}

[[noreturn]] void both_kinds(const CalendarDate& included) {
  throw Conflict(date_text(included.day) + " is both excluded and included", "dates");
}

}  // namespace

std::string date_text(const common::CalendarDay& day) {
  char out[32];
  if (day.year == 0) {
    std::snprintf(out, sizeof out, "--%02d-%02d", day.month, day.day);
  } else {
    std::snprintf(out, sizeof out, "%04d-%02d-%02d", day.year, day.month, day.day);
  }
  return out;
}

std::vector<CalendarDate> stored_dates(std::vector<CalendarDate> dates) {
  // Stable: of the entries of one day, the first listed comes first and is the one kept.
  std::stable_sort(dates.begin(), dates.end(),
                   [](const CalendarDate& a, const CalendarDate& b) { return key_of(a.day) < key_of(b.day); });
  std::vector<CalendarDate> out;
  out.reserve(dates.size());
  for (auto& d : dates) {
    if (!out.empty() && key_of(out.back().day) == key_of(d.day)) {
      if (out.back().included != d.included) both_kinds(d.included ? d : out.back());
      continue;
    }
    out.push_back(std::move(d));
  }
  // A recurring excluded date against an included one on its month and day (in any year). The
  // recurring ones are the first of the sorted list (year 0), and few.
  std::set<std::pair<int, int>> recurring;
  for (const auto& d : out) {
    if (d.day.year != 0) break;
    if (!d.included) recurring.emplace(d.day.month, d.day.day);
  }
  if (!recurring.empty()) {
    for (const auto& d : out) {
      if (d.included && recurring.count({d.day.month, d.day.day})) both_kinds(d);
    }
  }
  return out;
}

std::vector<CalendarDate> imported_dates(const std::vector<CalendarDate>& current, const std::string& source,
                                         std::vector<CalendarDate> imported) {
  std::vector<CalendarDate> kept;
  for (const auto& d : current) {
    if (d.source != source) kept.push_back(d);
  }
  // Kept dates by (month, day): what an imported date is compared with.
  std::multiset<std::pair<int, int>> kept_days;
  for (const auto& d : kept) kept_days.emplace(d.day.month, d.day.day);
  std::set<DayKey> kept_same;  // (year, month, day) of kept dates, excluded ones as -year - 1
  auto same_kind_key = [](const CalendarDate& d) {
    return DayKey{d.included ? d.day.year : -d.day.year - 1, d.day.month, d.day.day};
  };
  for (const auto& d : kept) kept_same.insert(same_kind_key(d));

  std::vector<CalendarDate> out = kept;
  out.reserve(kept.size() + imported.size());
  for (auto& d : imported) {
    d.source = source;
    if (kept_same.count(same_kind_key(d))) continue;  // the kept date of this day and kind stands
    if (kept_days.count({d.day.month, d.day.day})) {
      for (const auto& k : kept) {
        if (k.included != d.included && same_day(k, d)) {
          throw Conflict(date_text(d.day) + " is " + (d.included ? "excluded" : "included") +
                             (k.source.empty() ? " by hand" : " by the import " + k.source) + ", and the import " +
                             (d.included ? "includes" : "excludes") + " it",
                         "dates");
        }
      }
    }
    out.push_back(std::move(d));
  }
  return stored_dates(std::move(out));
}

std::vector<CalendarDate> with_stored_sources(std::vector<CalendarDate> given, const std::vector<CalendarDate>& stored) {
  std::map<std::tuple<int, int, int, bool>, const CalendarDate*> by_day;
  for (const auto& d : stored) by_day.emplace(std::tuple{d.day.year, d.day.month, d.day.day, d.included}, &d);
  for (auto& d : given) {
    auto it = by_day.find({d.day.year, d.day.month, d.day.day, d.included});
    d.source = it == by_day.end() ? std::string() : it->second->source;
    d.source_uid = it == by_day.end() ? std::string() : it->second->source_uid;
  }
  return given;
}

}  // namespace cronwheel::admin
