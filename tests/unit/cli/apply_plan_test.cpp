// The plan of POST /api/v1/apply as `cronwheel apply` prints it for people, and the exit status
// it gives.

#include "cli/apply_plan.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "cli/cli_error.h"

namespace cronwheel::cli {
namespace {

using nlohmann::json;

json change(const std::string& field, json from, json to) {
  json c{{"field", field}};
  if (!from.is_null()) c["from"] = std::move(from);
  if (!to.is_null()) c["to"] = std::move(to);
  return c;
}

json plan_of(json groups, json jobs, bool dry_run, bool changed, json summary) {
  return {{"dryRun", dry_run}, {"changed", changed}, {"groups", std::move(groups)}, {"jobs", std::move(jobs)},
          {"users", json::array()}, {"summary", std::move(summary)}};
}

json summary_of(int create, int update, int unchanged, int remove) {
  return {{"create", create}, {"update", update}, {"unchanged", unchanged}, {"delete", remove}};
}

json job(const std::string& app, const std::string& name, const std::string& action, json changes = json::array()) {
  return {{"appName", app}, {"name", name}, {"action", action}, {"changes", std::move(changes)}};
}

std::string printed(const json& plan) {
  std::ostringstream out;
  print_plan(out, plan);
  return out.str();
}

TEST(ApplyPlanTest, PrintsWorkflowsAfterJobsAndWhyAPlanIsRefused) {
  json plan = plan_of(json::array(), json::array(), true, true, summary_of(0, 1, 0, 1));
  plan["workflows"] = json::array({job("billing", "etl", "update", json::array({change("timeout", 0, 600)})),
                                   job("billing", "gone", "delete")});
  plan["workflows"][1]["blocked"] = "run 4 of it is running: cancel it first";
  plan["refused"] = "workflow billing/gone has a run going on";
  EXPECT_EQ(printed(plan),
            "update workflow billing/etl\n"
            "    timeout: 0 \u2192 600\n"
            "delete workflow billing/gone\n"
            "  blocked: billing/gone: run 4 of it is running: cancel it first\n"
            "refused: workflow billing/gone has a run going on\n"
            "0 to create, 1 to update, 0 unchanged, 1 to delete (dry run: nothing changed)\n");
}

TEST(ApplyPlanTest, PrintsCalendarsFirstAsTheyAreWrittenFirst) {
  json plan = plan_of(json::array(), json::array({job("billing", "nightly", "create")}), true, true, summary_of(2, 1, 1, 1));
  plan["calendars"] = json::array(
      {{{"name", "cn-holidays"}, {"action", "create"},
        {"changes", json::array({change("timezone", nullptr, "Asia/Shanghai"), change("excludedDates", nullptr, 3)})}},
       {{"name", "us-holidays"}, {"id", 7}, {"action", "update"},
        {"changes", json::array({change("excludedDates[2026-07-03]", nullptr, "Independence Day (observed)"),
                                 change("excludedDates[2026-07-04]", "Independence Day", nullptr)})}},
       {{"name", "same"}, {"id", 8}, {"action", "unchanged"}, {"changes", json::array()}},
       {{"name", "dropped"}, {"id", 9}, {"action", "delete"}, {"changes", json::array()}}});
  EXPECT_EQ(printed(plan),
            "create calendar cn-holidays\n"
            "update calendar us-holidays\n"
            "    excludedDates[2026-07-03]: (none) \u2192 \"Independence Day (observed)\"\n"
            "    excludedDates[2026-07-04]: \"Independence Day\" \u2192 (none)\n"
            "delete calendar dropped\n"
            "create job billing/nightly\n"
            "2 to create, 1 to update, 1 unchanged, 1 to delete (dry run: nothing changed)\n");
  plan["calendars"][0].erase("name");
  EXPECT_THROW(printed(plan), CliError) << "a calendar without its name is malformed";
}

TEST(ApplyPlanTest, PrintsALineForEachChangedGroupAndJobWithTheFieldsOfUpdates) {
  const json plan = plan_of(
      json::array({{{"appName", "billing"}, {"action", "unchanged"}, {"changes", json::array()}},
                   {{"appName", "reports"}, {"action", "create"}, {"changes", json::array({change("title", nullptr, "R")})}}}),
      json::array({job("billing", "nightly", "create", json::array({change("jobDesc", nullptr, "Nightly")})),
                   job("billing", "report", "update",
                       json::array({change("scheduleConf", "0 0 * * * ?", "0 30 * * * ?"),
                                    change("executorTimeout", 0, 60)})),
                   job("billing", "same", "unchanged"), job("billing", "old", "delete")}),
      true, true, summary_of(2, 1, 2, 1));
  EXPECT_EQ(printed(plan),
            "create group reports\n"
            "create job billing/nightly\n"
            "update job billing/report\n"
            "    scheduleConf: \"0 0 * * * ?\" \u2192 \"0 30 * * * ?\"\n"
            "    executorTimeout: 0 \u2192 60\n"
            "delete job billing/old\n"
            "2 to create, 1 to update, 2 unchanged, 1 to delete (dry run: nothing changed)\n");
}

TEST(ApplyPlanTest, AppliedPlanSaysWhatWasDone) {
  const json plan = plan_of(json::array(), json::array({job("billing", "nightly", "create")}), false, true,
                            summary_of(1, 0, 7, 0));
  EXPECT_EQ(printed(plan), "create job billing/nightly\napplied: 1 created, 0 updated, 7 unchanged, 0 deleted\n");
}

TEST(ApplyPlanTest, APlanWithoutChangesSaysSo) {
  const json plan = plan_of(json::array({{{"appName", "billing"}, {"action", "unchanged"}, {"changes", json::array()}}}),
                            json::array({job("billing", "nightly", "unchanged")}), true, false, summary_of(0, 0, 2, 0));
  EXPECT_EQ(printed(plan), "nothing to change: 2 unchanged\n");
}

TEST(ApplyPlanTest, UsersAndGroupsShowTheirChangedFields) {
  json plan = plan_of(json::array({{{"appName", "billing"},
                                    {"action", "update"},
                                    {"changes", json::array({change("addressList", json::array({"http://a:1"}),
                                                                    json::array({"http://a:1", "http://b:1"}))})}}}),
                      json::array(), false, true, summary_of(1, 2, 0, 0));
  plan["users"] = json::array({{{"username", "alice"}, {"action", "create"}, {"changes", json::array()}},
                               {{"username", "bob"},
                                {"action", "update"},
                                {"changes", json::array({change("role", "normal", "admin")})}}});
  EXPECT_EQ(printed(plan),
            "update group billing\n"
            "    addressList: [\"http://a:1\"] \u2192 [\"http://a:1\",\"http://b:1\"]\n"
            "create user alice\n"
            "update user bob\n"
            "    role: \"normal\" \u2192 \"admin\"\n"
            "applied: 1 created, 2 updated, 0 unchanged, 0 deleted\n");
}

TEST(ApplyPlanTest, AValueTheServerLeftOutIsShownAsNone) {
  const json plan = plan_of(json::array(), json::array({job("b-app", "j", "update", json::array({change("alarmChannels", nullptr, json::array({"hook"}))}))}),
                            true, true, summary_of(0, 1, 0, 0));
  EXPECT_NE(printed(plan).find("    alarmChannels: (none) \u2192 [\"hook\"]\n"), std::string::npos) << printed(plan);
}

TEST(ApplyPlanTest, LongValuesAreCutToOneShortLine) {
  const std::string script = "#!/bin/sh\n" + std::string(5000, 'x') + "\n";
  const json plan = plan_of(json::array(), json::array({job("b-app", "j", "update", json::array({change("glueSource", "", script)}))}),
                            true, true, summary_of(0, 1, 0, 0));
  const std::string out = printed(plan);
  const auto line_start = out.find("    glueSource: \"\" \u2192 \"#!/bin/sh\\n");
  ASSERT_NE(line_start, std::string::npos) << out;
  const std::string line = out.substr(line_start, out.find('\n', line_start) - line_start);
  EXPECT_LT(line.size(), 160u) << line;
  EXPECT_EQ(line.substr(line.size() - 3), "\u2026");
}

TEST(ApplyPlanTest, ControlCharactersFromTheServerNeverReachTheTerminal) {
  const json plan = plan_of(json::array(), json::array({job("b-app\x1b[2J", "j\rk", "create")}), true, true,
                            summary_of(1, 0, 0, 0));
  const std::string out = printed(plan);
  EXPECT_EQ(out.find('\x1b'), std::string::npos);
  EXPECT_EQ(out.find('\r'), std::string::npos);
  EXPECT_NE(out.find("create job b-app [2J/j k\n"), std::string::npos) << out;
}

TEST(ApplyPlanTest, AMalformedPlanPrintsNothingAndIsAnUnexpectedAnswer) {
  const json plan = plan_of(json::array(), json::array({job("b-app", "a", "create"), job("b-app", "b", "rename")}), true,
                            true, summary_of(1, 0, 0, 0));
  std::ostringstream out;
  try {
    print_plan(out, plan);
    ADD_FAILURE() << "printed";
  } catch (const CliError& e) {
    EXPECT_EQ(std::string(e.what()), "unexpected answer from the server: plan: unknown action 'rename'");
  }
  EXPECT_EQ(out.str(), "");
  json without_summary = plan;
  without_summary.erase("summary");
  without_summary["jobs"] = json::array();
  EXPECT_THROW(print_plan(out, without_summary), CliError);
  EXPECT_EQ(out.str(), "");
}

TEST(ApplyPlanTest, OnlyADryRunThatFindsChangesExitsThree) {
  const json changed = plan_of(json::array(), json::array({job("b-app", "a", "create")}), true, true, summary_of(1, 0, 0, 0));
  json unchanged = changed;
  unchanged["changed"] = false;
  EXPECT_EQ(plan_status(changed, /*dry_run=*/true), kExitChanges);
  EXPECT_EQ(plan_status(unchanged, /*dry_run=*/true), kExitOk);
  EXPECT_EQ(plan_status(changed, /*dry_run=*/false), kExitOk);
}

}  // namespace
}  // namespace cronwheel::cli
