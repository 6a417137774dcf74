#pragma once

// CalendarStore (admin/model/calendar_store.h) over PostgreSQL (sql/0019_calendars.sql).
//
// - A calendar is read whole in one statement: its row with its dates and times aggregated,
//   for one calendar, a list's page or get_many's ids alike. A read takes at most
//   kMaxReadDates dates and kMaxReadTimes times of a calendar, the rules' bounds
//   (business_calendar.h: 5,000 excluded and 1,000 included dates, 24 ranges), which the API
//   holds a calendar to before writing it: no stored row makes a read grow past them.
// - Each change is one transaction with its audit entry. It locks the calendar's row first, so
//   two changes of one calendar wait for each other and the second sees the first's version;
//   a job or workflow naming the calendar locks the same row (its foreign key), so none can
//   name it between remove's check and its delete.
// - Which dates are stored is calendar_dates.h's rule (the fake applies the same one).
// - The list pages by offset (ordered by name, the total exact): calendars are few, and a name
//   is no PageKey; `after`/`before` are not read.
//
// Statements are prepared on each new connection: call PgCalendarStore::prepare from the
// Database's Preparer, after PgStores::prepare (it uses the audit's). Thread-safe.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "admin/model/calendar_store.h"
#include "admin/pg/database.h"
#include "common/util/clock.h"

namespace cronwheel::admin {

class PgCalendarStore final : public CalendarStore {
 public:
  static constexpr int kMaxReadDates = 6'000;
  static constexpr int kMaxReadTimes = 24;

  // `clock` stamps changes and their audit entries.
  PgCalendarStore(Database& db, common::Clock& clock) : db_(db), clock_(clock) {}

  static void prepare(pqxx::connection& connection);

  Page<Calendar> list(const Filter& filter) override;
  std::optional<Calendar> get(std::int64_t id) override;
  std::optional<Calendar> get_by_name(const std::string& name) override;
  std::vector<Calendar> get_many(const std::vector<std::int64_t>& ids) override;
  Calendar create(const Calendar& calendar, const Actor& actor) override;
  Calendar update(const Calendar& calendar, const Actor& actor) override;
  Calendar replace_imported(std::int64_t id, const std::string& source, const std::vector<CalendarDate>& dates,
                            int version, const Actor& actor) override;
  void remove(std::int64_t id, const Actor& actor) override;

 private:
  Database& db_;
  common::Clock& clock_;
};

}  // namespace cronwheel::admin
