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
//
// The pieces in namespace pg below write and read calendars as this store does, for a
// transaction of another store that writes calendars too (PgApplyStore); they use the
// statements PgCalendarStore::prepare registers.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "admin/model/calendar_store.h"
#include "admin/pg/database.h"
#include "common/util/clock.h"

namespace cronwheel::admin {

namespace pg {

// The SELECT list of a calendar read whole from `calendar c` (its dates and times aggregated,
// bounded at PgCalendarStore::kMaxReadDates and kMaxReadTimes); calendar_from reads such a row.
extern const std::string kCalendarColumns;
Calendar calendar_from(const pqxx::row& row);
// Calendar::business_days as its column holds it: bit i for [i] (Monday bit 0); none: NULL.
std::optional<int> business_days_bits(const std::optional<std::array<bool, 7>>& days);
// Replaces the calendar's dates and times with these (dates as stored_dates() made them).
void write_calendar_days(pqxx::work& tx, std::int64_t id, const std::vector<CalendarDate>& dates,
                         const std::vector<common::TimeOfDayRange>& times);
// Locks the calendar's row for a change and answers it whole; NotFound when it does not exist,
// Conflict("...", "version") when its version is not `version`.
Calendar lock_calendar_for_change(pqxx::work& tx, std::int64_t id, int version);

}  // namespace pg

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
