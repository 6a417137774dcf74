#pragma once

// An in-memory CalendarStore with the semantics of PgCalendarStore (admin/pg/pg_calendar_store.h),
// both held to tests/support/calendar_contract_tests.h:
//  - calendars live in a FakeStores' data, beside the jobs that name them (a job naming a calendar
//    that does not exist is refused there, as job_info's foreign key refuses it), and changes
//    are audited in its AuditStore;
//  - which dates are stored is calendar_dates.h's rule, as in PostgreSQL; the schema's CHECK and
//    UNIQUE rules of sql/0019_calendars.sql are Conflicts naming the same fields, in the order
//    the database meets them;
//  - a calendar is removed only while no job names it, nor a workflow of the WorkflowStore given
//    (asked just before, outside the stores' lock: a workflow made to name the calendar at that
//    moment is not seen, where PostgreSQL's row lock would see it);
//  - lengths of text values are not checked: the API bounds them before any store sees them.
//
// Thread-safe: the FakeStores' mutex.

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "admin/model/calendar_dates.h"
#include "admin/model/calendar_json.h"
#include "admin/model/calendar_store.h"
#include "admin/model/workflow_store.h"
#include "tests/support/fake_stores.h"

namespace cronwheel::testing {

class FakeCalendarStore final : public admin::CalendarStore {
 public:
  explicit FakeCalendarStore(FakeStores& stores, admin::WorkflowStore* workflows = nullptr)
      : stores_(stores), workflows_(workflows) {}

  admin::Page<admin::Calendar> list(const Filter& f) override {
    return stores_.with_state([&](State& s) {
      std::vector<admin::Calendar> all;
      for (const auto& [id, c] : s.calendars) {
        if (fake_stores_detail::contains(c.name, f.text) || fake_stores_detail::contains(c.description, f.text)) {
          all.push_back(c);
        }
      }
      std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
      return fake_stores_detail::page_of(std::move(all), f.page);
    });
  }
  std::optional<admin::Calendar> get(std::int64_t id) override {
    return stores_.with_state([&](State& s) -> std::optional<admin::Calendar> {
      auto it = s.calendars.find(id);
      if (it == s.calendars.end()) return std::nullopt;
      return it->second;
    });
  }
  std::optional<admin::Calendar> get_by_name(const std::string& name) override {
    return stores_.with_state([&](State& s) -> std::optional<admin::Calendar> {
      for (const auto& [id, c] : s.calendars) {
        if (c.name == name) return c;
      }
      return std::nullopt;
    });
  }
  std::vector<admin::Calendar> get_many(const std::vector<std::int64_t>& ids) override {
    return stores_.with_state([&](State& s) {
      std::vector<admin::Calendar> out;
      for (auto id : fake_stores_detail::sorted_unique(ids)) {
        if (auto it = s.calendars.find(id); it != s.calendars.end()) out.push_back(it->second);
      }
      return out;
    });
  }

  admin::Calendar create(const admin::Calendar& calendar, const admin::Actor& actor) override {
    auto dates = admin::stored_dates(calendar.dates);
    return stores_.with_state([&](State& s) {
      admin::Calendar c = calendar;
      c.id = s.next_calendar++;  // taken even when refused, as a sequence is
      c.dates = std::move(dates);
      check_row(s, c);
      check_days(c.dates, c.excluded_times);
      c.version = 1;
      c.created_at = c.updated_at = s.now();
      s.calendars[c.id] = c;
      s.audit_change(actor, "calendar.create", "calendar", c.id, std::nullopt, admin::to_json(c));
      return c;
    });
  }

  admin::Calendar update(const admin::Calendar& calendar, const admin::Actor& actor) override {
    return stores_.with_state([&](State& s) {
      admin::Calendar& stored = for_change(s, calendar.id, calendar.version);
      admin::Calendar c = calendar;
      c.dates = admin::stored_dates(calendar.dates);
      check_row(s, c);
      check_days(c.dates, c.excluded_times);
      const admin::Calendar before = stored;
      c.version = before.version + 1;
      c.created_at = before.created_at;
      c.updated_at = s.now();
      stored = c;
      s.audit_change(actor, "calendar.update", "calendar", c.id, admin::to_json(before), admin::to_json(c));
      return c;
    });
  }

  admin::Calendar replace_imported(std::int64_t id, const std::string& source, const std::vector<admin::CalendarDate>& dates,
                                   int version, const admin::Actor& actor) override {
    if (source.empty()) {
      throw admin::Conflict("an import needs the name of its source ('' is for dates entered by hand)", "source");
    }
    return stores_.with_state([&](State& s) {
      admin::Calendar& stored = for_change(s, id, version);
      auto merged = admin::imported_dates(stored.dates, source, dates);
      check_days(merged, stored.excluded_times);
      const admin::Calendar before = stored;
      stored.dates = std::move(merged);
      stored.version += 1;
      stored.updated_at = s.now();
      s.audit_change(actor, "calendar.import", "calendar", id, admin::to_json(before), admin::to_json(stored));
      return stored;
    });
  }

  void remove(std::int64_t id, const admin::Actor& actor) override {
    // The workflows are asked before the stores' lock is taken: FakeWorkflowStore takes the
    // stores' lock under its own (it reads jobs), so the other order could deadlock.
    std::vector<admin::Workflow> workflows;
    if (workflows_ != nullptr) {
      admin::WorkflowStore::Filter f;
      f.page = admin::PageRequest(0, std::numeric_limits<std::int32_t>::max());
      for (auto& w : workflows_->list(f).items) {
        if (w.calendar.calendar_id == id) workflows.push_back(std::move(w));
      }
    }
    stores_.with_state([&](State& s) {
      auto it = s.calendars.find(id);
      if (it == s.calendars.end()) not_found(id);
      std::vector<std::string> users;  // "kind group/name", ordered as the store orders them
      auto label = [&](std::int64_t group, const std::string& name) {
        auto g = s.groups.find(group);
        return (g == s.groups.end() ? std::string() : g->second.app_name) + "/" + name;
      };
      std::vector<std::string> jobs, flows;
      for (const auto& [job_id, j] : s.jobs) {
        if (j.calendar.calendar_id == id) jobs.push_back(label(j.job_group, j.name));
      }
      for (const auto& w : workflows) flows.push_back(label(w.job_group, w.name));
      std::sort(jobs.begin(), jobs.end());
      std::sort(flows.begin(), flows.end());
      for (const auto& j : jobs) users.push_back("job " + j);
      for (const auto& w : flows) users.push_back("workflow " + w);
      if (!users.empty()) {
        std::string named;
        const std::size_t shown = std::min<std::size_t>(users.size(), kUsersNamed);
        for (std::size_t i = 0; i < shown; ++i) named += (i == 0 ? "" : ", ") + users[i];
        if (users.size() > shown) named += " and " + std::to_string(users.size() - shown) + " more";
        throw admin::Conflict("calendar " + it->second.name + " is in use by " + named +
                                  ": give them another calendar or none first",
                              "id");
      }
      const admin::Calendar before = it->second;
      s.calendars.erase(it);
      s.audit_change(actor, "calendar.delete", "calendar", id, admin::to_json(before), std::nullopt);
    });
  }

 private:
  using State = fake_stores_detail::State;
  static constexpr std::size_t kUsersNamed = 3;  // as PgCalendarStore names them

  [[noreturn]] static void not_found(std::int64_t id) {
    throw admin::NotFound("calendar " + std::to_string(id) + " does not exist");
  }

  // The calendar a change names, at the version it names.
  static admin::Calendar& for_change(State& s, std::int64_t id, int version) {
    auto it = s.calendars.find(id);
    if (it == s.calendars.end()) not_found(id);
    if (it->second.version != version) {
      throw admin::Conflict("calendar " + it->second.name + " was changed meanwhile (version " +
                                std::to_string(it->second.version) + ", not " + std::to_string(version) +
                                "): read it again",
                            "version");
    }
    return it->second;
  }

  // The calendar row's rules: calendar_name_format, calendar_name_key.
  static void check_row(const State& s, const admin::Calendar& c) {
    static const std::regex format("[a-z0-9][a-z0-9._-]{0,63}");
    if (!std::regex_match(c.name, format)) {
      throw admin::Conflict(
          "name must be 1-64 lower-case letters, digits, '.', '_' or '-', starting with a letter or digit", "name");
    }
    for (const auto& [id, other] : s.calendars) {
      if (id != c.id && other.name == c.name) throw admin::Conflict("name is taken by another calendar", "name");
    }
  }

  // The rules of calendar_date and calendar_time, row by row, each row's by constraint name.
  static void check_days(const std::vector<admin::CalendarDate>& dates, const std::vector<common::TimeOfDayRange>& times) {
    for (const auto& d : dates) {
      if (d.day.day < 1 || d.day.day > 31) throw admin::Conflict("a date's day must be 1-31", "dates");
      if (d.included && d.day.year == 0) throw admin::Conflict("an included date needs its year", "dates");
      if (d.day.month < 1 || d.day.month > 12) throw admin::Conflict("a date's month must be 1-12", "dates");
      if (d.day.year != 0 && (d.day.year < 1970 || d.day.year > 2999)) {
        throw admin::Conflict("a date's year must be 0 (every year) or 1970-2999", "dates");
      }
    }
    for (const auto& t : times) {
      if (t.end_s < 0 || t.end_s > 86399) throw admin::Conflict("a time range must end within the day", "excludedTimes");
      if (t.start_s < 0 || t.start_s > 86399) {
        throw admin::Conflict("a time range must start within the day", "excludedTimes");
      }
    }
  }

  FakeStores& stores_;
  admin::WorkflowStore* workflows_;
};

}  // namespace cronwheel::testing
