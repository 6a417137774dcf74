#include "admin/pg/pg_calendar_store.h"

#include <array>

#include <nlohmann/json.hpp>

#include "admin/model/calendar_dates.h"
#include "admin/model/calendar_json.h"
#include "admin/pg/pg_store_support.h"

namespace cronwheel::admin {

using namespace pg;

// A calendar read as `c`, whole: its dates as [[year, month, day, included, name, source,
// source_uid], ...] in day order and its times as [[start_s, end_s], ...] in their order, each
// list bounded (pg_calendar_store.h).
const std::string pg::kCalendarColumns =
    "c.id, c.name, c.description, c.time_zone, c.business_days, c.version, " + ms("c.created_at", "created_at") + ", " +
    ms("c.updated_at", "updated_at") +
    ", (SELECT COALESCE(json_agg(json_build_array(d.year, d.month, d.day, d.included, d.name, d.source, d.source_uid) "
    "ORDER BY d.year, d.month, d.day), '[]')::text FROM (SELECT * FROM calendar_date WHERE calendar_id = c.id "
    "ORDER BY year, month, day LIMIT " + std::to_string(PgCalendarStore::kMaxReadDates) + ") d) AS dates"
    ", (SELECT COALESCE(json_agg(json_build_array(t.start_s, t.end_s) ORDER BY t.position), '[]')::text "
    "FROM (SELECT * FROM calendar_time WHERE calendar_id = c.id ORDER BY position LIMIT " +
    std::to_string(PgCalendarStore::kMaxReadTimes) + ") t) AS times";

Calendar pg::calendar_from(const pqxx::row& r) {
  Calendar c;
  c.id = r["id"].as<std::int64_t>();
  c.name = r["name"].as<std::string>();
  c.description = r["description"].as<std::string>();
  c.time_zone = r["time_zone"].as<std::string>();
  if (!r["business_days"].is_null()) {
    const int bits = r["business_days"].as<int>();
    std::array<bool, 7> days{};
    for (std::size_t i = 0; i < days.size(); ++i) days[i] = (bits >> i) & 1;
    c.business_days = days;
  }
  for (const auto& d : nlohmann::json::parse(r["dates"].as<std::string>())) {
    CalendarDate date;
    date.day.year = d.at(0).get<int>();
    date.day.month = d.at(1).get<int>();
    date.day.day = d.at(2).get<int>();
    date.included = d.at(3).get<bool>();
    date.day.name = d.at(4).get<std::string>();
    date.source = d.at(5).get<std::string>();
    date.source_uid = d.at(6).get<std::string>();
    c.dates.push_back(std::move(date));
  }
  for (const auto& t : nlohmann::json::parse(r["times"].as<std::string>())) {
    c.excluded_times.push_back({t.at(0).get<int>(), t.at(1).get<int>()});
  }
  c.version = r["version"].as<int>();
  c.created_at = r["created_at"].as<std::int64_t>();
  c.updated_at = r["updated_at"].as<std::int64_t>();
  return c;
}

std::optional<int> pg::business_days_bits(const std::optional<std::array<bool, 7>>& days) {
  if (!days) return std::nullopt;
  int bits = 0;
  for (std::size_t i = 0; i < days->size(); ++i) {
    if ((*days)[i]) bits |= 1 << i;
  }
  return bits;
}

namespace {

std::string boolean_array(const std::vector<bool>& values) {
  std::string out = "{";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    out += values[i] ? 't' : 'f';
  }
  return out + "}";
}

}  // namespace

void pg::write_calendar_days(pqxx::work& tx, std::int64_t id, const std::vector<CalendarDate>& dates,
                             const std::vector<common::TimeOfDayRange>& times) {
  tx.exec_prepared("cal_dates_clear", id);
  if (!dates.empty()) {
    std::vector<std::int64_t> years, months, days;
    std::vector<bool> included;
    std::vector<std::string> names, sources, uids;
    for (const auto& d : dates) {
      years.push_back(d.day.year);
      months.push_back(d.day.month);
      days.push_back(d.day.day);
      included.push_back(d.included);
      names.push_back(d.day.name);
      sources.push_back(d.source);
      uids.push_back(d.source_uid);
    }
    tx.exec_prepared("cal_dates_insert", id, bigint_array(years), bigint_array(months), bigint_array(days),
                     boolean_array(included), text_array(names), text_array(sources), text_array(uids));
  }
  tx.exec_prepared("cal_times_clear", id);
  if (!times.empty()) {
    std::vector<std::int64_t> starts, ends;
    for (const auto& t : times) {
      starts.push_back(t.start_s);
      ends.push_back(t.end_s);
    }
    tx.exec_prepared("cal_times_insert", id, bigint_array(starts), bigint_array(ends));
  }
}

namespace {

[[noreturn]] void no_calendar(std::int64_t id) { throw NotFound("calendar " + std::to_string(id) + " does not exist"); }

}  // namespace

Calendar pg::lock_calendar_for_change(pqxx::work& tx, std::int64_t id, int version) {
  if (tx.exec_prepared("cal_lock", id).empty()) no_calendar(id);
  Calendar before = calendar_from(tx.exec_prepared1("cal_get", id));
  if (before.version != version) {
    throw Conflict("calendar " + before.name + " was changed meanwhile (version " + std::to_string(before.version) +
                       ", not " + std::to_string(version) + "): read it again",
                   "version");
  }
  return before;
}

namespace {

// How many of a calendar's users remove's refusal names.
constexpr int kUsersNamed = 3;

}  // namespace

void PgCalendarStore::prepare(pqxx::connection& c) {
  c.prepare("cal_get", "SELECT " + kCalendarColumns + " FROM calendar c WHERE c.id = $1");
  c.prepare("cal_by_name", "SELECT " + kCalendarColumns + " FROM calendar c WHERE c.name = $1");
  c.prepare("cal_many", "SELECT " + kCalendarColumns + " FROM calendar c WHERE c.id = ANY ($1::bigint[]) ORDER BY c.id");
  // The page's ids first (LIMIT stops the scan; the total counted beside them), then those
  // calendars whole: the dates of calendars before the offset are never read.
  const std::string matches = " FROM calendar WHERE name ILIKE $1 OR description ILIKE $1";
  c.prepare("cal_list", "SELECT " + kCalendarColumns + ", page.total FROM (SELECT id, name, count(*) OVER () AS total" +
                            matches + " ORDER BY name COLLATE \"C\" LIMIT $2 OFFSET $3) page "
                            "JOIN calendar c ON c.id = page.id ORDER BY page.name COLLATE \"C\"");
  c.prepare("cal_count", "SELECT count(*)" + matches);
  c.prepare("cal_lock", "SELECT id FROM calendar WHERE id = $1 FOR UPDATE");
  c.prepare("cal_insert", "INSERT INTO calendar (name, description, time_zone, business_days, created_at, updated_at) "
                          "VALUES ($1, $2, $3, $4, " + ts("$5") + ", " + ts("$5") + ") RETURNING id");
  c.prepare("cal_update", "UPDATE calendar SET name = $2, description = $3, time_zone = $4, business_days = $5, "
                          "version = version + 1, updated_at = " + ts("$6") + " WHERE id = $1");
  c.prepare("cal_touch", "UPDATE calendar SET version = version + 1, updated_at = " + ts("$2") + " WHERE id = $1");
  c.prepare("cal_delete", "DELETE FROM calendar WHERE id = $1");
  c.prepare("cal_dates_clear", "DELETE FROM calendar_date WHERE calendar_id = $1");
  c.prepare("cal_dates_insert",
            "INSERT INTO calendar_date (calendar_id, year, month, day, included, name, source, source_uid) "
            "SELECT $1, y, m, d, i, n, s, u FROM unnest($2::integer[], $3::integer[], $4::integer[], $5::boolean[], "
            "$6::text[], $7::text[], $8::text[]) AS t(y, m, d, i, n, s, u)");
  c.prepare("cal_times_clear", "DELETE FROM calendar_time WHERE calendar_id = $1");
  c.prepare("cal_times_insert", "INSERT INTO calendar_time (calendar_id, position, start_s, end_s) "
                                "SELECT $1, n - 1, s, e FROM unnest($2::integer[], $3::integer[]) "
                                "WITH ORDINALITY AS t(s, e, n)");
  // The jobs and workflows that name a calendar, the first few by kind and group/name, and how
  // many in all.
  c.prepare("cal_users",
            "SELECT kind, label, count(*) OVER () AS total FROM ("
            "SELECT 'job' AS kind, g.app_name || '/' || j.name AS label FROM job_info j "
            "JOIN job_group g ON g.id = j.job_group WHERE j.calendar_id = $1 "
            "UNION ALL SELECT 'workflow', g.app_name || '/' || w.name FROM workflow w "
            "JOIN job_group g ON g.id = w.job_group WHERE w.calendar_id = $1) named "
            "ORDER BY kind, label COLLATE \"C\" LIMIT $2");
}

Page<Calendar> PgCalendarStore::list(const Filter& f) {
  const auto pattern = contains_pattern(f.text);
  return db_.read([&](pqxx::read_transaction& tx) {
    auto rows = tx.exec_prepared("cal_list", pattern, f.page.limit, f.page.offset);
    Page<Calendar> page;
    page.items = all_of<Calendar>(rows, calendar_from);
    page.total = page_total(rows, [&] { return tx.exec_prepared1("cal_count", pattern)[0].as<std::int64_t>(); });
    return page;
  });
}

std::optional<Calendar> PgCalendarStore::get(std::int64_t id) {
  return db_.read([&](pqxx::read_transaction& tx) { return first_of<Calendar>(tx.exec_prepared("cal_get", id), calendar_from); });
}

std::optional<Calendar> PgCalendarStore::get_by_name(const std::string& name) {
  return db_.read(
      [&](pqxx::read_transaction& tx) { return first_of<Calendar>(tx.exec_prepared("cal_by_name", name), calendar_from); });
}

std::vector<Calendar> PgCalendarStore::get_many(const std::vector<std::int64_t>& ids) {
  if (ids.empty()) return {};
  return db_.read(
      [&](pqxx::read_transaction& tx) { return all_of<Calendar>(tx.exec_prepared("cal_many", bigint_array(ids)), calendar_from); });
}

Calendar PgCalendarStore::create(const Calendar& calendar, const Actor& actor) {
  const auto now = clock_.now_ms();
  const auto dates = stored_dates(calendar.dates);
  return mapped([&] {
    return db_.transact([&](pqxx::work& tx) {
      const auto id = tx.exec_prepared1("cal_insert", calendar.name, calendar.description, calendar.time_zone,
                                        business_days_bits(calendar.business_days), now)[0]
                          .as<std::int64_t>();
      write_calendar_days(tx, id, dates, calendar.excluded_times);
      Calendar created = calendar_from(tx.exec_prepared1("cal_get", id));
      write_audit(tx, now, actor, "calendar.create", "calendar", id, std::nullopt, to_json(created));
      return created;
    });
  });
}

Calendar PgCalendarStore::update(const Calendar& calendar, const Actor& actor) {
  const auto now = clock_.now_ms();
  return mapped([&] {
    return db_.transact([&](pqxx::work& tx) {
      const Calendar before = lock_calendar_for_change(tx, calendar.id, calendar.version);
      const auto dates = stored_dates(calendar.dates);
      tx.exec_prepared("cal_update", calendar.id, calendar.name, calendar.description, calendar.time_zone,
                       business_days_bits(calendar.business_days), now);
      write_calendar_days(tx, calendar.id, dates, calendar.excluded_times);
      Calendar after = calendar_from(tx.exec_prepared1("cal_get", calendar.id));
      write_audit(tx, now, actor, "calendar.update", "calendar", calendar.id, to_json(before), to_json(after));
      return after;
    });
  });
}

Calendar PgCalendarStore::replace_imported(std::int64_t id, const std::string& source,
                                           const std::vector<CalendarDate>& dates, int version, const Actor& actor) {
  if (source.empty()) throw Conflict("an import needs the name of its source ('' is for dates entered by hand)", "source");
  const auto now = clock_.now_ms();
  return mapped([&] {
    return db_.transact([&](pqxx::work& tx) {
      const Calendar before = lock_calendar_for_change(tx, id, version);
      const auto merged = imported_dates(before.dates, source, dates);
      tx.exec_prepared("cal_touch", id, now);
      write_calendar_days(tx, id, merged, before.excluded_times);
      Calendar after = calendar_from(tx.exec_prepared1("cal_get", id));
      write_audit(tx, now, actor, "calendar.import", "calendar", id, to_json(before), to_json(after));
      return after;
    });
  });
}

void PgCalendarStore::remove(std::int64_t id, const Actor& actor) {
  const auto now = clock_.now_ms();
  mapped([&] {
    db_.transact([&](pqxx::work& tx) {
      if (tx.exec_prepared("cal_lock", id).empty()) no_calendar(id);
      const Calendar before = calendar_from(tx.exec_prepared1("cal_get", id));
      const auto users = tx.exec_prepared("cal_users", id, kUsersNamed);
      if (!users.empty()) {
        std::string named;
        for (const auto& row : users) {
          named += (named.empty() ? "" : ", ") + row["kind"].as<std::string>() + " " + row["label"].as<std::string>();
        }
        const auto total = users[0]["total"].as<std::int64_t>();
        if (total > static_cast<std::int64_t>(users.size())) {
          named += " and " + std::to_string(total - static_cast<std::int64_t>(users.size())) + " more";
        }
        throw Conflict("calendar " + before.name + " is in use by " + named + ": give them another calendar or none first",
                       "id");
      }
      tx.exec_prepared("cal_delete", id);
      write_audit(tx, now, actor, "calendar.delete", "calendar", id, to_json(before), std::nullopt);
    });
  });
}

}  // namespace cronwheel::admin
