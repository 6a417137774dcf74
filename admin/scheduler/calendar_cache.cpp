#include "admin/scheduler/calendar_cache.h"

#include <set>
#include <utility>

namespace cronwheel::admin {

void CalendarCache::load(const std::vector<std::int64_t>& ids) {
  if (ids.empty()) return;
  const auto found = store_.get_many(ids);
  std::set<std::int64_t> present;
  for (const auto& c : found) {
    present.insert(c.id);
    ScanCalendar entry;
    entry.version = c.version;
    entry.name = c.name;
    try {
      entry.calendar = common::BusinessCalendar::make(to_spec(c));
    } catch (const common::CalendarError& e) {
      entry.error = e.what();
    }
    calendars_[c.id] = std::move(entry);
  }
  for (auto id : ids) {
    if (!present.contains(id)) calendars_.erase(id);
  }
}

}  // namespace cronwheel::admin
