#pragma once

// The calendar store's contract (admin/model/calendar_store.h) as one typed GoogleTest suite, run
// against FakeCalendarStore (tests/unit/admin/model/fake_calendar_store_test.cpp, label unit) and
// PgCalendarStore (tests/integration/calendar_contract_pgtest.cpp, label db).
//
//   struct F {
//     F();                                   // fresh, empty stores; the clock at kNow
//     admin::CalendarStore& calendars();
//     admin::Stores stores();                // the groups, jobs and audit log beside them
//     admin::WorkflowStore& workflows();     // whose workflows may name calendars too
//     FakeClock& clock();                    // the clock the stores stamp changes with
//   };
//   INSTANTIATE_TYPED_TEST_SUITE_P(Fake, CalendarContract, F);
//
// Calendars are compared as JSON (admin/model/calendar_json.h), which holds every field.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "admin/model/calendar_dates.h"
#include "admin/model/calendar_json.h"
#include "admin/model/calendar_store.h"
#include "admin/model/stores.h"
#include "admin/model/workflow_store.h"
#include "tests/support/fake_clock.h"

namespace cronwheel::testing {

namespace calendar_contract {

using namespace cronwheel::admin;
using namespace std::chrono_literals;
using nlohmann::json;

constexpr std::int64_t kNow = 1'767'225'600'000;  // 2026-01-01T00:00:00Z
inline const Actor kOperator{std::nullopt, "operator", "192.0.2.9"};

inline CalendarDate excluded(int year, int month, int day, const std::string& name = "", const std::string& source = "",
                             const std::string& uid = "") {
  CalendarDate d;
  d.day = {year, month, day, name};
  d.source = source;
  d.source_uid = uid;
  return d;
}
inline CalendarDate included(int year, int month, int day, const std::string& name = "", const std::string& source = "") {
  CalendarDate d = excluded(year, month, day, name, source);
  d.included = true;
  return d;
}

// The days of a calendar as "2026-10-01 x" (excluded) / "2026-09-28 +" (included), in its order,
// each with its source after a slash when it has one.
inline std::vector<std::string> days_of(const Calendar& c) {
  std::vector<std::string> out;
  for (const auto& d : c.dates) {
    out.push_back(date_text(d.day) + (d.included ? " +" : " x") + (d.source.empty() ? "" : " /" + d.source));
  }
  return out;
}

inline std::vector<std::string> names_of(const std::vector<Calendar>& calendars) {
  std::vector<std::string> out;
  for (const auto& c : calendars) out.push_back(c.name);
  return out;
}

template <class F>
class CalendarContract : public ::testing::Test {
 protected:
  CalendarStore& store() { return f_.calendars(); }
  FakeClock& clock() { return f_.clock(); }

  // China's 2026 National Day week as an operator would enter it: holidays, a make-up working
  // Saturday, New Year's Day every year, and no fires around midnight.
  Calendar cn(const std::string& name = "cn-holidays") {
    Calendar c;
    c.name = name;
    c.description = "Mainland China public holidays";
    c.time_zone = "Asia/Shanghai";
    c.business_days = std::array<bool, 7>{true, true, true, true, true, false, false};
    c.dates = {excluded(2026, 10, 2, "National Day"), included(2026, 9, 26, "Make-up day"),
               excluded(2026, 10, 1, "National Day"), excluded(0, 1, 1, "New Year's Day")};
    c.excluded_times = {{23 * 3600, 3600}, {12 * 3600, 12 * 3600 + 1800}};
    return c;
  }
  Calendar create(const Calendar& c) { return store().create(c, kOperator); }

  std::optional<AuditEntry> last_audit(std::int64_t calendar_id) {
    AuditStore::Filter filter;
    filter.entity_type = "calendar";
    filter.entity_id = calendar_id;
    filter.page.limit = 1;
    auto page = f_.stores().audit.list(filter);
    if (page.items.empty()) return std::nullopt;
    return page.items.front();
  }
  std::int64_t audit_count() {
    AuditStore::Filter filter;
    filter.entity_type = "calendar";
    return f_.stores().audit.list(filter).total;
  }
  static json parsed(const std::optional<std::string>& text) { return text ? json::parse(*text) : json(nullptr); }
  // The audit entry the last change of the calendar wrote, checked for who, what and when.
  void expect_audit(std::int64_t calendar_id, const std::string& action, const json& before, const json& after) {
    auto e = last_audit(calendar_id);
    ASSERT_TRUE(e.has_value()) << action;
    EXPECT_EQ(e->action, action);
    EXPECT_EQ(e->username, kOperator.username);
    EXPECT_EQ(e->remote_addr, kOperator.remote_addr);
    EXPECT_EQ(e->at, clock().now_ms());
    EXPECT_EQ(parsed(e->before), before) << action;
    EXPECT_EQ(parsed(e->after), after) << action;
  }

  // A job of group `app` (made when missing) named `name`, naming `calendar` in `mode`.
  Job job_naming(std::int64_t calendar, const std::string& app, const std::string& name,
                 common::CalendarMode mode = common::CalendarMode::kSkip) {
    Job j;
    j.job_group = group(app);
    j.name = name;
    j.job_desc = name;
    j.executor_handler = "echo";
    j.calendar = {calendar, mode};
    return f_.stores().jobs.create(j, kOperator);
  }
  std::int64_t group(const std::string& app) {
    if (auto g = f_.stores().groups.find_by_app_name(app)) return g->id;
    Group g;
    g.app_name = app;
    g.title = app;
    return f_.stores().groups.create(g, kOperator).id;
  }
  Workflow workflow_naming(std::int64_t calendar, const std::string& app, const std::string& name) {
    Workflow w;
    w.job_group = group(app);
    w.name = name;
    WorkflowNode node;
    node.key = "a";
    node.job_id = job_naming(0, app, name + "-a").id;
    w.graph.nodes.push_back(node);
    w.calendar = {calendar, common::CalendarMode::kOnly};
    return f_.workflows().create(w, kOperator);
  }

  template <class Fn>
  static void expect_conflict(Fn&& fn, const std::string& field, const std::string& says = "") {
    try {
      fn();
      ADD_FAILURE() << "no Conflict on " << field;
    } catch (const Conflict& e) {
      EXPECT_EQ(e.field(), field) << e.what();
      if (!says.empty()) {
        EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
      }
    }
  }

  F f_;
};

TYPED_TEST_SUITE_P(CalendarContract);

TYPED_TEST_P(CalendarContract, CreateKeepsEveryFieldWithTheDatesInDayOrderAndIsAudited) {
  const Calendar c = this->cn();
  const Calendar created = this->create(c);
  EXPECT_GT(created.id, 0);
  EXPECT_EQ(created.version, 1);
  EXPECT_EQ(created.created_at, kNow);
  EXPECT_EQ(created.updated_at, kNow);
  EXPECT_EQ(days_of(created), (std::vector<std::string>{"--01-01 x", "2026-09-26 +", "2026-10-01 x", "2026-10-02 x"}));
  EXPECT_EQ(created.dates[0].day.name, "New Year's Day");
  ASSERT_EQ(created.excluded_times.size(), 2u);
  EXPECT_EQ(created.excluded_times[0].start_s, 23 * 3600) << "times keep the order they were given";
  EXPECT_EQ(created.excluded_times[1].end_s, 12 * 3600 + 1800);

  Calendar expected = c;
  expected.id = created.id;
  expected.dates = {c.dates[3], c.dates[1], c.dates[2], c.dates[0]};
  expected.version = 1;
  expected.created_at = expected.updated_at = kNow;
  EXPECT_EQ(to_json(created), to_json(expected));
  EXPECT_EQ(to_json(*this->store().get(created.id)), to_json(expected));
  EXPECT_EQ(to_json(*this->store().get_by_name("cn-holidays")), to_json(expected));
  this->expect_audit(created.id, "calendar.create", nullptr, to_json(expected));
}

TYPED_TEST_P(CalendarContract, ACalendarWithoutRulesKeepsNoneAndAnEmptyWeekIsNotNone) {
  Calendar bare;
  bare.name = "bare";
  const Calendar created = this->create(bare);
  EXPECT_FALSE(created.business_days.has_value());
  EXPECT_TRUE(created.dates.empty());
  EXPECT_TRUE(created.excluded_times.empty());
  EXPECT_EQ(created.time_zone, "UTC");

  Calendar only_dates;
  only_dates.name = "only-make-up-days";
  only_dates.business_days = std::array<bool, 7>{};
  only_dates.dates = {included(2026, 2, 14)};
  const Calendar stored = *this->store().get(this->create(only_dates).id);
  ASSERT_TRUE(stored.business_days.has_value());
  EXPECT_EQ(*stored.business_days, (std::array<bool, 7>{}));
}

TYPED_TEST_P(CalendarContract, MissingCalendarsReadAsNothingAndGetManyAnswersTheOnesThatExist) {
  EXPECT_EQ(this->store().get(424242), std::nullopt);
  EXPECT_EQ(this->store().get_by_name("nope"), std::nullopt);
  EXPECT_TRUE(this->store().get_many({}).empty());
  const Calendar a = this->create(this->cn("a"));
  const Calendar b = this->create(this->cn("b"));
  this->create(this->cn("c"));
  const auto many = this->store().get_many({b.id, 424242, a.id, b.id});
  ASSERT_EQ(names_of(many), (std::vector<std::string>{"a", "b"})) << "each once, in id order";
  EXPECT_EQ(to_json(many[0]), to_json(a));
  EXPECT_EQ(to_json(many[1]), to_json(b)) << "whole, with its dates and times";
}

TYPED_TEST_P(CalendarContract, ListOrdersByNameFiltersByNameOrDescriptionAndPagesByOffset) {
  for (const std::string name : {"zeta", "alpha", "mid-year", "beta"}) {
    Calendar c = this->cn(name);
    c.description = name == "beta" ? "Bank HOLIDAYS of Hong Kong" : "plain";
    this->create(c);
  }
  CalendarStore::Filter all;
  auto page = this->store().list(all);
  EXPECT_EQ(names_of(page.items), (std::vector<std::string>{"alpha", "beta", "mid-year", "zeta"}));
  EXPECT_EQ(page.total, 4);
  EXPECT_EQ(days_of(page.items[0]).size(), 4u) << "items carry their dates";
  EXPECT_EQ(page.items[0].excluded_times.size(), 2u) << "and their times";

  CalendarStore::Filter paged;
  paged.page = PageRequest(1, 2);
  page = this->store().list(paged);
  EXPECT_EQ(names_of(page.items), (std::vector<std::string>{"beta", "mid-year"}));
  EXPECT_EQ(page.total, 4);
  paged.page = PageRequest(10, 2);
  page = this->store().list(paged);
  EXPECT_TRUE(page.items.empty());
  EXPECT_EQ(page.total, 4) << "a page past the end still counts the matches";

  CalendarStore::Filter text;
  text.text = "holidays";
  EXPECT_EQ(names_of(this->store().list(text).items), std::vector<std::string>{"beta"}) << "description, any case";
  text.text = "ET";
  EXPECT_EQ(names_of(this->store().list(text).items), (std::vector<std::string>{"beta", "zeta"})) << "name, any case";
  text.text = "%";
  EXPECT_TRUE(this->store().list(text).items.empty()) << "the text is taken literally";
}

TYPED_TEST_P(CalendarContract, CreateRefusesATakenOrMalformedNameWithoutAuditing) {
  this->create(this->cn());
  const auto audited = this->audit_count();
  this->expect_conflict([&] { this->create(this->cn()); }, "name");
  for (const auto& bad : std::vector<std::string>{"", "CN", "-cn", "cn holidays", std::string(65, 'a')}) {
    this->expect_conflict([&] { this->create(this->cn(bad)); }, "name");
  }
  this->create(this->cn(std::string(64, 'a')));
  EXPECT_EQ(this->audit_count(), audited + 1);
  EXPECT_EQ(this->store().list({}).total, 2);
}

TYPED_TEST_P(CalendarContract, UpdateReplacesEverythingButIdAndCreatedAtAndAddsOneToTheVersion) {
  const Calendar before = this->create(this->cn());
  this->clock().advance(1min);
  Calendar change = before;
  change.name = "cn-2026";
  change.description = "edited";
  change.time_zone = "Asia/Hong_Kong";
  change.business_days.reset();
  change.dates = {excluded(2026, 12, 25, "Christmas"), excluded(2026, 10, 1, "National Day")};
  change.excluded_times = {{0, 59}};
  change.created_at = 1;
  change.updated_at = 2;
  const Calendar after = this->store().update(change, kOperator);

  Calendar expected = change;
  expected.dates = {change.dates[1], change.dates[0]};
  expected.version = 2;
  expected.created_at = before.created_at;
  expected.updated_at = this->clock().now_ms();
  EXPECT_EQ(to_json(after), to_json(expected));
  EXPECT_EQ(to_json(*this->store().get(before.id)), to_json(expected));
  EXPECT_EQ(this->store().get_by_name("cn-holidays"), std::nullopt) << "renamed";
  this->expect_audit(before.id, "calendar.update", to_json(before), to_json(expected));

  change = after;
  change.dates.clear();
  change.excluded_times.clear();
  const Calendar emptied = this->store().update(change, kOperator);
  EXPECT_EQ(emptied.version, 3);
  EXPECT_TRUE(this->store().get(before.id)->dates.empty());
  EXPECT_TRUE(this->store().get(before.id)->excluded_times.empty());
}

TYPED_TEST_P(CalendarContract, AChangeNamingAnOldVersionIsAConflictAndChangesNothing) {
  const Calendar created = this->create(this->cn());
  Calendar first = created;
  first.description = "first edit";
  this->store().update(first, kOperator);
  const auto audited = this->audit_count();

  Calendar stale = created;  // still version 1
  stale.description = "a stale edit";
  this->expect_conflict([&] { this->store().update(stale, kOperator); }, "version", "version 2, not 1");
  this->expect_conflict([&] { this->store().replace_imported(created.id, "cn.ics", {excluded(2026, 5, 1)}, 1, kOperator); },
                        "version");
  const Calendar now = *this->store().get(created.id);
  EXPECT_EQ(now.description, "first edit");
  EXPECT_EQ(now.version, 2);
  EXPECT_EQ(days_of(now), days_of(created));
  EXPECT_EQ(this->audit_count(), audited);
}

TYPED_TEST_P(CalendarContract, UpdateToAnotherCalendarsNameIsAConflictOnName) {
  this->create(this->cn("hk"));
  Calendar c = this->create(this->cn());
  c.name = "hk";
  this->expect_conflict([&] { this->store().update(c, kOperator); }, "name");
  c.name = "Not Valid";
  this->expect_conflict([&] { this->store().update(c, kOperator); }, "name");
  EXPECT_EQ(this->store().get(c.id)->name, "cn-holidays");
  EXPECT_EQ(this->store().get(c.id)->version, 1);
}

TYPED_TEST_P(CalendarContract, ChangesOfACalendarThatDoesNotExistAreNotFound) {
  Calendar ghost = this->cn();
  ghost.id = 424242;
  EXPECT_THROW(this->store().update(ghost, kOperator), NotFound);
  EXPECT_THROW(this->store().replace_imported(424242, "cn.ics", {}, 1, kOperator), NotFound);
  EXPECT_THROW(this->store().remove(424242, kOperator), NotFound);
  EXPECT_EQ(this->audit_count(), 0);
}

TYPED_TEST_P(CalendarContract, ADayListedTwiceIsStoredOnceAsFirstListedAndOneBothExcludedAndIncludedIsRefused) {
  Calendar c = this->cn();
  c.dates = {excluded(2026, 10, 1, "National Day"), excluded(2026, 10, 1, "Mid-Autumn Festival")};
  const Calendar created = this->create(c);
  ASSERT_EQ(days_of(created), std::vector<std::string>{"2026-10-01 x"});
  EXPECT_EQ(created.dates[0].day.name, "National Day");

  Calendar both = this->cn("both");
  both.dates = {excluded(2026, 10, 10), included(2026, 10, 10)};
  this->expect_conflict([&] { this->create(both); }, "dates", "2026-10-10");
  both.dates = {excluded(0, 10, 10, "every year"), included(2027, 10, 10)};
  this->expect_conflict([&] { this->create(both); }, "dates", "2027-10-10");
  EXPECT_EQ(this->store().get_by_name("both"), std::nullopt);

  Calendar edit = created;
  edit.dates = {included(2026, 10, 1), excluded(2026, 10, 1)};
  this->expect_conflict([&] { this->store().update(edit, kOperator); }, "dates");
  EXPECT_EQ(this->store().get(created.id)->version, 1);
}

TYPED_TEST_P(CalendarContract, DatesAndTimesOutsideTheirRangesAreConflictsNamingTheField) {
  auto with_dates = [&](std::vector<CalendarDate> dates) {
    Calendar c = this->cn("ranges");
    c.dates = std::move(dates);
    return c;
  };
  this->expect_conflict([&] { this->create(with_dates({excluded(1969, 12, 31)})); }, "dates");
  this->expect_conflict([&] { this->create(with_dates({excluded(3000, 1, 1)})); }, "dates");
  this->expect_conflict([&] { this->create(with_dates({excluded(2026, 13, 1)})); }, "dates");
  this->expect_conflict([&] { this->create(with_dates({excluded(2026, 1, 0)})); }, "dates");
  this->expect_conflict([&] { this->create(with_dates({excluded(2026, 1, 32)})); }, "dates");
  this->expect_conflict([&] { this->create(with_dates({included(0, 1, 2)})); }, "dates");
  for (const common::TimeOfDayRange bad : {common::TimeOfDayRange{-1, 10}, common::TimeOfDayRange{10, 86'400}}) {
    Calendar c = this->cn("ranges");
    c.excluded_times = {bad};
    this->expect_conflict([&] { this->create(c); }, "excludedTimes");
  }
  EXPECT_EQ(this->store().get_by_name("ranges"), std::nullopt) << "nothing of a refused calendar is kept";
  Calendar edges = with_dates({excluded(1970, 1, 1), excluded(2999, 12, 31), excluded(0, 2, 29)});
  edges.excluded_times = {{0, 86'399}};
  EXPECT_EQ(days_of(this->create(edges)), (std::vector<std::string>{"--02-29 x", "1970-01-01 x", "2999-12-31 x"}));
}

TYPED_TEST_P(CalendarContract, AReImportReplacesItsSourcesDatesAndKeepsEveryOtherDateAndTheRules) {
  Calendar c = this->cn();
  c.dates = {excluded(2026, 5, 1, "Labour Day (by hand)"), included(2026, 9, 26, "Make-up day"),
             excluded(2026, 6, 19, "Dragon Boat", "hk.ics"), excluded(2026, 4, 5, "Qingming", "cn.ics", "uid-qm"),
             excluded(2026, 10, 1, "National Day", "cn.ics", "uid-nd")};
  const Calendar before = this->create(c);
  this->clock().advance(1min);

  // The new file no longer has Qingming, still has National Day, adds Labour Day (entered by
  // hand already: the hand-entered one stands) and New Year, and lists New Year twice.
  const Calendar after = this->store().replace_imported(
      before.id, "cn.ics",
      {excluded(2026, 10, 1, "National Day", "", "uid-nd"), excluded(2026, 5, 1, "Labour Day", "", "uid-ld"),
       excluded(2026, 1, 1, "New Year", "elsewhere.ics", "uid-ny"), excluded(2026, 1, 1, "New Year again")},
      before.version, kOperator);
  EXPECT_EQ(days_of(after), (std::vector<std::string>{"2026-01-01 x /cn.ics", "2026-05-01 x", "2026-06-19 x /hk.ics",
                                                      "2026-09-26 +", "2026-10-01 x /cn.ics"}));
  EXPECT_EQ(after.dates[0].day.name, "New Year") << "the first listed of a day";
  EXPECT_EQ(after.dates[0].source_uid, "uid-ny");
  EXPECT_EQ(after.dates[1].day.name, "Labour Day (by hand)");
  EXPECT_EQ(after.version, before.version + 1);
  EXPECT_EQ(after.updated_at, this->clock().now_ms());
  EXPECT_EQ(after.created_at, before.created_at);
  EXPECT_EQ(after.business_days, before.business_days);
  EXPECT_EQ(after.time_zone, before.time_zone);
  EXPECT_EQ(after.excluded_times.size(), before.excluded_times.size());
  EXPECT_EQ(to_json(*this->store().get(before.id)), to_json(after));
  this->expect_audit(before.id, "calendar.import", to_json(before), to_json(after));

  // An import that brings nothing takes its source's dates away, and only those.
  const Calendar emptied = this->store().replace_imported(before.id, "cn.ics", {}, after.version, kOperator);
  EXPECT_EQ(days_of(emptied), (std::vector<std::string>{"2026-05-01 x", "2026-06-19 x /hk.ics", "2026-09-26 +"}));
  EXPECT_EQ(emptied.version, before.version + 2);
}

TYPED_TEST_P(CalendarContract, AReImportRefusesADayOfTheOtherKindThanAKeptOneAndANamelessSource) {
  Calendar c = this->cn();
  c.dates = {included(2026, 9, 26, "Make-up day"), excluded(0, 12, 25, "Christmas", "uk.ics")};
  const Calendar before = this->create(c);
  const auto audited = this->audit_count();
  this->expect_conflict(
      [&] { this->store().replace_imported(before.id, "cn.ics", {excluded(2026, 9, 26, "Holiday")}, 1, kOperator); },
      "dates", "2026-09-26");
  this->expect_conflict(
      [&] { this->store().replace_imported(before.id, "cn.ics", {included(2026, 12, 25, "Work")}, 1, kOperator); },
      "dates", "2026-12-25");
  this->expect_conflict([&] { this->store().replace_imported(before.id, "", {excluded(2026, 3, 3)}, 1, kOperator); },
                        "source");
  // The import that brought a kept date may bring its day as the other kind: its own dates go
  // first.
  const Calendar swapped =
      this->store().replace_imported(before.id, "uk.ics", {included(2026, 12, 25, "Christmas worked")}, 1, kOperator);
  EXPECT_EQ(days_of(swapped), (std::vector<std::string>{"2026-09-26 +", "2026-12-25 + /uk.ics"}));
  EXPECT_EQ(this->audit_count(), audited + 1);
}

TYPED_TEST_P(CalendarContract, RemoveDeletesTheCalendarWithItsDaysAndIsAudited) {
  const Calendar c = this->create(this->cn());
  this->clock().advance(1min);
  this->store().remove(c.id, kOperator);
  EXPECT_EQ(this->store().get(c.id), std::nullopt);
  EXPECT_EQ(this->store().get_by_name(c.name), std::nullopt);
  EXPECT_TRUE(this->store().get_many({c.id}).empty());
  this->expect_audit(c.id, "calendar.delete", to_json(c), nullptr);
  EXPECT_EQ(this->create(this->cn()).dates.size(), c.dates.size()) << "the name is free again";
}

TYPED_TEST_P(CalendarContract, ACalendarAJobOrAWorkflowNamesIsNotRemovedAndTheRefusalNamesThem) {
  const Calendar c = this->create(this->cn());
  const Calendar other = this->create(this->cn("other"));
  Job nightly = this->job_naming(c.id, "billing", "nightly");
  this->job_naming(other.id, "billing", "unrelated");
  const auto audited = this->audit_count();
  this->expect_conflict([&] { this->store().remove(c.id, kOperator); }, "id", "job billing/nightly");
  EXPECT_TRUE(this->store().get(c.id).has_value());

  this->workflow_naming(c.id, "etl-app", "daily");
  nightly.calendar = {};
  this->f_.stores().jobs.update(nightly, kOperator);
  this->expect_conflict([&] { this->store().remove(c.id, kOperator); }, "id", "workflow etl-app/daily");

  this->workflow_naming(c.id, "etl-app", "hourly");
  for (const std::string name : {"b1", "b2", "b3"}) this->job_naming(c.id, "billing", name);
  this->expect_conflict([&] { this->store().remove(c.id, kOperator); }, "id",
                        "job billing/b1, job billing/b2, job billing/b3 and 2 more");
  EXPECT_EQ(this->audit_count(), audited);

  const auto jobs = this->f_.stores().jobs.list({});
  for (const auto& job : jobs.items) {
    if (job.calendar.calendar_id == c.id) this->f_.stores().jobs.remove(job.id, kOperator);
  }
  const auto workflows = this->f_.workflows().list({});
  for (const auto& w : workflows.items) this->f_.workflows().remove(w.id, kOperator);
  this->store().remove(c.id, kOperator);
  EXPECT_EQ(this->store().get(c.id), std::nullopt);
  EXPECT_EQ(this->f_.stores().jobs.list({}).total, 4) << "the other jobs, and the workflows' node jobs, stay";
}

TYPED_TEST_P(CalendarContract, AJobNamingACalendarKeepsItsUseAndOneThatDoesNotExistIsAConflict) {
  const Calendar c = this->create(this->cn());
  Job j = this->job_naming(c.id, "billing", "nightly", common::CalendarMode::kOnly);
  EXPECT_EQ(j.calendar, (CalendarUse{c.id, common::CalendarMode::kOnly}));
  EXPECT_EQ(this->f_.stores().jobs.get(j.id)->calendar, j.calendar);
  j.calendar.calendar_id = 424242;
  this->expect_conflict([&] { this->f_.stores().jobs.update(j, kOperator); }, "calendarId");
  this->expect_conflict([&] { this->job_naming(424242, "billing", "dangling"); }, "calendarId");
  EXPECT_EQ(this->f_.stores().jobs.get(j.id)->calendar.calendar_id, c.id);
}

REGISTER_TYPED_TEST_SUITE_P(CalendarContract, CreateKeepsEveryFieldWithTheDatesInDayOrderAndIsAudited,
                            ACalendarWithoutRulesKeepsNoneAndAnEmptyWeekIsNotNone,
                            MissingCalendarsReadAsNothingAndGetManyAnswersTheOnesThatExist,
                            ListOrdersByNameFiltersByNameOrDescriptionAndPagesByOffset,
                            CreateRefusesATakenOrMalformedNameWithoutAuditing,
                            UpdateReplacesEverythingButIdAndCreatedAtAndAddsOneToTheVersion,
                            AChangeNamingAnOldVersionIsAConflictAndChangesNothing,
                            UpdateToAnotherCalendarsNameIsAConflictOnName,
                            ChangesOfACalendarThatDoesNotExistAreNotFound,
                            ADayListedTwiceIsStoredOnceAsFirstListedAndOneBothExcludedAndIncludedIsRefused,
                            DatesAndTimesOutsideTheirRangesAreConflictsNamingTheField,
                            AReImportReplacesItsSourcesDatesAndKeepsEveryOtherDateAndTheRules,
                            AReImportRefusesADayOfTheOtherKindThanAKeptOneAndANamelessSource,
                            RemoveDeletesTheCalendarWithItsDaysAndIsAudited,
                            ACalendarAJobOrAWorkflowNamesIsNotRemovedAndTheRefusalNamesThem,
                            AJobNamingACalendarKeepsItsUseAndOneThatDoesNotExistIsAConflict);

}  // namespace calendar_contract
}  // namespace cronwheel::testing
